#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The interactive flame graph in a real browser (headless chromium).

  browser.py FG.SVG FOLDED TOTAL PNG

FG.SVG is `bperf script --flamegraph` of a recording, FOLDED its
`bperf script --folded` (the same stacks as text), TOTAL the sampling points
mkblocked.py put into the recording.  The expected numbers come from the
folded lines: the share of the points whose stack has a frame matching a
search, and a frame's points and class split (a blocked stack ends in a
"[class...]" leaf).  Checks search (substring and a /regex/ matching a frame
and its ancestor: every point counted once), hover (the tooltip's numbers),
click to zoom (positions and widths from the DOM) and reset.  Saves a
screenshot to PNG.  Prints "ok<TAB>name", "not ok<TAB>name" and
"#<TAB>detail" lines for run-host-tests.sh to turn into TAP.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../scripts"))
import headless_chromium  # noqa: E402

CLASSES = ["on-cpu", "io", "lock", "sched", "other"]
WIDTH, PAD = 1200, 10
fails = 0


def result(good, name):
    global fails
    if not good:
        fails += 1
    print("%s\t%s" % ("ok" if good else "not ok", name), flush=True)
    return good


def diag(text):
    for line in str(text).splitlines():
        print("#\t" + line, flush=True)


def read_folded(path):
    stacks = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        path_, n = line.rsplit(" ", 1)
        stacks.append((path_.split(";"), int(n)))
    return stacks


def leaf_class(frames):
    m = re.match(r"^\[(io|lock|sched|other)[\]:]", frames[-1])
    return m.group(1) if m else "on-cpu"


def main():
    svg_path, folded, total, png = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    stacks = read_folded(folded)
    ftotal = sum(n for _, n in stacks)
    result(ftotal == total, "folded stacks hold the recording's %d points (%d)" % (total, ftotal))
    text = open(svg_path).read()
    ext = re.findall(r'(?:href|src)\s*=|url\(|@import|https?://(?!www\.w3\.org/)', text)
    result(not ext and "<script" in text,
           "flame graph: inline script, no external reference (%d found)" % len(ext))

    try:
        drv = headless_chromium.start()
    except headless_chromium.BrowserMissing as e:
        result(False, "headless chromium runs: %s" % e)
        return 1
    try:
        return run(drv, svg_path, stacks, total, png)
    finally:
        drv.quit()


def run(drv, svg_path, stacks, total, png):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    drv.get("file://" + os.path.abspath(svg_path))
    ready = headless_chromium.wait_for(drv, "return document.documentElement.getAttribute('data-ready')")
    if not result(ready == "1", "chromium loads the SVG and its script runs"):
        diag(drv.get_log("browser") if hasattr(drv, "get_log") else "")
        return 1
    root_v = drv.execute_script("return +document.querySelector('g.fr[data-d=\"0\"]').getAttribute('data-v')")
    result(root_v == total, "root frame: %d points (%s)" % (total, root_v))

    def frames():
        return drv.execute_script("""
            return Array.prototype.map.call(document.querySelectorAll('g.fr'), function (g, i) {
                var r = g.querySelector('rect');
                return {i: i, n: g.getAttribute('data-n'), v: +g.getAttribute('data-v'),
                        s: +g.getAttribute('data-s'), d: +g.getAttribute('data-d'),
                        x: +r.getAttribute('x'), w: +r.getAttribute('width'),
                        shown: g.style.display !== 'none',
                        hit: g.getAttribute('class').indexOf('hit') >= 0,
                        label: g.querySelector('text').textContent};
            });""")

    from selenium.webdriver.common.keys import Keys
    box = drv.find_element(By.ID, "search")
    # Ctrl-F (the browser's find) focuses the search box instead
    ActionChains(drv).key_down(Keys.CONTROL).send_keys("f").key_up(Keys.CONTROL).perform()
    focus = drv.execute_script("return document.activeElement && document.activeElement.id")
    result(focus == "search", "Ctrl-F focuses the search box (focus: %s)" % focus)

    def search(term):
        # WebElement.send_keys does not reach an input inside an SVG's
        # foreignObject; a pointer click then keys, as a user types, does
        ActionChains(drv).click(box).key_down(Keys.CONTROL).send_keys("a") \
            .key_up(Keys.CONTROL).send_keys(Keys.BACKSPACE).send_keys(term).perform()
        txt = headless_chromium.wait_for(drv, "var m = document.getElementById('matched').textContent;"
                       "return m.indexOf('Matched') === 0 ? m : null;")
        return txt or ""

    def matched(pred):
        return sum(n for fr, n in stacks if any(pred(f) for f in fr))

    # 1. a symbol of the workload
    sym = "spin"
    want = matched(lambda f: sym in f)
    txt = search(sym)
    m = re.match(r"Matched: ([0-9.]+)% \((\d+) points, (\d+) frames\)", txt)
    got_pts, got_pct = (int(m.group(2)), float(m.group(1))) if m else (-1, -1.0)
    result(got_pts == want and abs(got_pct - 100.0 * want / total) < 0.0051,
           "search '%s': %d points = %.2f%% of %d (browser: %s)" % (sym, want, 100.0 * want / total, total, txt))
    hits = [f for f in frames() if f["hit"]]
    result(hits and all(sym in f["n"] for f in hits),
           "search '%s': the %d highlighted frames all match" % (sym, len(hits)))

    # 2. a regex matching frames and their callers: no double counting
    # (spin, and the io leaves: most lie on spin's stacks, some elsewhere)
    term = r"/^(spin|\[io[:\]].*)$/"
    want2 = matched(lambda f: re.match(r"^(spin|\[io[:\]].*)$", f) is not None)
    txt = search(term)
    m = re.match(r"Matched: ([0-9.]+)% \((\d+) points", txt)
    naive = sum(f["v"] for f in frames() if f["hit"])
    result(m and int(m.group(2)) == want2 and abs(float(m.group(1)) - 100.0 * want2 / total) < 0.0051,
           "search %s: %d points, each once (%.2f%%; a sum over frames would say %d) (browser: %s)"
           % (term, want2, 100.0 * want2 / total, naive, txt))
    result(naive > want2, "the regex matches nested frames (%d > %d), so the check means something"
           % (naive, want2))
    search(sym)
    drv.save_screenshot(png)

    # 3. hover the widest spin frame: name, points, shares, class split
    groups = {}
    for fr, n in stacks:
        if sym in fr:
            k = tuple(fr[:fr.index(sym) + 1])
            g = groups.setdefault(k, {c: 0 for c in CLASSES})
            g[leaf_class(fr)] += n
    key = max(groups, key=lambda k: sum(groups[k].values()))
    split = groups[key]
    pts = sum(split.values())
    fs = frames()
    cand = sorted((f for f in fs if f["n"] == sym), key=lambda f: -f["v"])
    f = cand[0]
    result(f["v"] == pts, "widest '%s' frame (%s): %d points as in the folded stacks (%d)"
           % (sym, ";".join(key), pts, f["v"]))
    el = drv.find_elements(By.CSS_SELECTOR, "g.fr")[f["i"]]
    ActionChains(drv).move_to_element(el.find_element(By.TAG_NAME, "rect")).perform()
    tip = headless_chromium.wait_for(drv, "var t = document.getElementById('tip');"
                   "return t.style.display !== 'none' ? Array.prototype.map.call("
                   "t.querySelectorAll('text'), function (e) { return e.textContent; }) : null;")
    diag("tooltip: %s" % tip)
    ok = bool(tip) and tip[0] == sym
    m = re.match(r"(\d+) points, ([0-9.]+)% of all", tip[1]) if tip else None
    ok = ok and m and int(m.group(1)) == pts and abs(float(m.group(2)) - 100.0 * pts / total) < 0.0051
    shown = dict(re.findall(r"([a-z-]+) ([0-9.]+)%", tip[2])) if tip else {}
    want_split = {c: 100.0 * v / pts for c, v in split.items() if v}
    ok = ok and set(shown) == set(want_split) and \
        all(abs(float(shown[c]) - want_split[c]) < 0.0051 for c in want_split)
    result(ok, "hover '%s': %d points, %.2f%% of all, split %s"
           % (sym, pts, 100.0 * pts / total,
              " ".join("%s %.2f%%" % (c, v) for c, v in sorted(want_split.items()))))
    result(len(want_split) >= 2, "the hovered frame mixes classes (%d), so the split is tested"
           % len(want_split))

    # 4. click: the frame spans the width, its subtree scales, the rest hides
    el.click()
    headless_chromium.wait_for(drv, "return document.getElementById('reset').style.display !== 'none'")
    after = frames()
    z = after[f["i"]]
    sc = (WIDTH - 2 * PAD) / f["v"]
    bad = []
    n_desc = n_anc = 0
    for a in after:
        inside = a["d"] > f["d"] and a["s"] >= f["s"] and a["s"] + a["v"] <= f["s"] + f["v"]
        anc = a["d"] < f["d"] and a["s"] <= f["s"] and a["s"] + a["v"] >= f["s"] + f["v"]
        if inside and a["v"] * sc >= 0.1:
            n_desc += 1
            wx, ww = PAD + (a["s"] - f["s"]) * sc, a["v"] * sc
            if not a["shown"] or abs(a["x"] - wx) > 0.11 or abs(a["w"] - ww) > 0.11:
                bad.append(("desc", a["n"], a["x"], wx, a["w"], ww))
        elif anc:
            n_anc += 1
            if not a["shown"] or a["x"] != PAD or abs(a["w"] - (WIDTH - 2 * PAD)) > 0.11:
                bad.append(("anc", a["n"], a["x"], a["w"]))
        elif a["i"] != f["i"] and a["shown"]:
            bad.append(("other shown", a["n"]))
    result(z["x"] == PAD and abs(z["w"] - (WIDTH - 2 * PAD)) < 0.11 and not bad and n_anc == f["d"],
           "click '%s': spans x=%d..%d, %d descendants scaled by %.3f, %d ancestors full width, rest hidden"
           % (sym, PAD, WIDTH - PAD, n_desc, sc, n_anc))
    if bad:
        diag("wrong after zoom: %s" % bad[:5])
    drv.save_screenshot(png.replace(".png", "-zoom.png"))
    drv.find_element(By.ID, "reset").click()
    back = frames()
    result(all(abs(b["w"] - a["w"]) < 0.11 and b["shown"] for a, b in zip(fs, back)) and
           back[f["i"]]["w"] == f["w"],
           "reset zoom: every frame back to its width (%s: %.1f px)" % (sym, back[f["i"]]["w"]))
    with open(png, "rb") as fp:
        head = fp.read(8)
    result(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 5000,
           "screenshot saved: %s (%d bytes)" % (png, os.path.getsize(png)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
