# SPDX-License-Identifier: GPL-2.0
"""`bcoz plot`'s HTML page in a real browser (headless chromium).

A synthetic profile with four lines whose throughput at each speedup level
is set by construction; the expected numbers are what `bcoz plot --text`
prints for the same profile.  Checks the default order (max speedup), sort
by name and slope, the name filter, the tooltip of a dot with its
standard error and the error bars, and saves a screenshot into the test
log directory.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
import headless_chromium  # noqa: E402
sys.path.insert(0, HERE)
import precision  # noqa: E402

# selected line -> visits of the progress point at 0, 25, 50, 100 % (1 s each)
LINES = {
    "src/zeta.c:10": (100, 118, 150, 200),   # the big one
    "src/beta.c:20": (100, 104, 110, 120),
    "src/mu.c:30": (100, 99, 95, 90),        # slows the program down
    "src/kappa.c:40": (100, 150, 125, 100),  # a peak: high max, low slope
}
LEVELS = (0, 0.25, 0.5, 1.0)


# the big line has three experiments per level (visits -6, +0, +6 around
# LINES'), enough for an error bar at each level (analysis.analyse)
SPREAD = {"src/zeta.c:10": (-6, 0, 6)}


def write_profile(path):
    s = "startup\ttime=0\n"
    for sel, visits in LINES.items():
        for sp, d in zip(LEVELS, visits):
            for dd in SPREAD.get(sel, (0,)):
                s += ("experiment\tselected=%s\tspeedup=%.2f\tduration=1000000000\t"
                      "selected-samples=0\nthroughput-point\tname=p\tdelta=%d\n"
                      % (sel, sp, d + dd))
    with open(path, "w") as f:
        f.write(s)


def parse_text(out):
    """{line: {"max": float, "slope": float,
               "rows": {level: (prog, se or "-", fit, visits)}}}"""
    res = {}
    for m in re.finditer(r"^(\S+)  \(throughput point p\)  max ([-+][0-9.]+)%  "
                         r"slope ([-0-9.]+)\n", out, re.M):
        res[m.group(1)] = {"max": float(m.group(2)), "slope": float(m.group(3)),
                           "rows": precision.plot_rows(out[m.end():])}
    return res


def run(bcoz, tmp, log_dir):
    headless_chromium.import_selenium()
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    prof, page = os.path.join(tmp, "browser.coz"), os.path.join(tmp, "browser.html")
    write_profile(prof)
    t = subprocess.run([bcoz, "plot", "-i", prof, "--text", "-o", page],
                       capture_output=True, text=True)
    assert t.returncode == 0, t.stderr
    want = parse_text(t.stdout)
    assert set(want) == set(LINES), "plot --text: %s" % sorted(want)
    html = open(page).read()
    ext = re.findall(r'(?:href|src)\s*=|url\(|@import|https?://(?!www\.w3\.org/)', html)
    assert not ext, "the page references outside resources: %s" % ext
    by_max = sorted(want, key=lambda k: -want[k]["max"])
    by_slope = sorted(want, key=lambda k: -want[k]["slope"])
    assert by_max != sorted(want) and by_max != by_slope, \
        "max, slope and name orders agree (%s, %s): the sort checks would mean nothing" % (by_max, by_slope)

    drv = headless_chromium.start()   # BrowserMissing says what to install
    try:
        drv.get("file://" + page)
        assert headless_chromium.wait_for(drv, "return document.body.getAttribute('data-ready')"), "page script did not run"

        def order():
            return drv.execute_script(
                "return Array.prototype.filter.call(document.querySelectorAll('#charts div.c'),"
                " function (c) { return c.style.display !== 'none'; })"
                ".map(function (c) { return c.dataset.name; });")
        got = order()
        assert got == by_max, "default order %s, want by max speedup %s" % (got, by_max)
        sel = Select(drv.find_element(By.ID, "sort"))
        sel.select_by_value("name")
        got = order()
        assert got == sorted(want), "sort by name: %s" % got
        sel.select_by_value("slope")
        got = order()
        assert got == by_slope, "sort by slope: %s, want %s" % (got, by_slope)
        sel.select_by_value("max")
        assert order() == by_max, "back to max speedup: %s" % order()

        f = drv.find_element(By.ID, "filter")
        f.send_keys("BETA")
        got = order()
        count = drv.find_element(By.ID, "count").text
        assert got == ["src/beta.c:20"] and count == "1 of %d shown" % len(LINES), \
            "filter 'BETA': %s, %r" % (got, count)
        f.clear()
        f.send_keys(".c:")
        assert order() == by_max, "filter '.c:': %s" % order()

        # hover the 50 % dot of the biggest line
        top = by_max[0]
        chart = drv.find_elements(By.CSS_SELECTOR, "#charts div.c")[0]
        dots = chart.find_elements(By.TAG_NAME, "circle")
        levels = sorted(want[top]["rows"])
        assert len(dots) == len(levels), "%d dots for %d levels" % (len(dots), len(levels))
        i = levels.index(50)
        ActionChains(drv).move_to_element(dots[i]).perform()
        tip = headless_chromium.wait_for(drv, "var t = document.getElementById('tip');"
                       "return t.style.display === 'block' ? t.textContent : null;")
        prog, se, fit, visits = want[top]["rows"][50]
        assert top in SPREAD and se != "-", "no error printed for %s at 50 %%" % top
        expect = "line 50%% \u2192 program %s%% \u00b1 %s (fit %s%%, %d visits)" % (
            prog, se, fit, visits)
        assert tip == expect, "tooltip %r, want %r" % (tip, expect)
        bars = chart.find_elements(By.CSS_SELECTOR, "path.se")
        assert len(bars) == len(levels) - 1, "%d error bars for %d levels" % (len(bars), len(levels))
        png = os.path.join(log_dir, "bcoz-plot.png")
        drv.save_screenshot(png)
        with open(png, "rb") as fp:
            assert fp.read(8) == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG"
    finally:
        drv.quit()
    return ("order by max %s, by slope %s, by name; filter 'BETA' -> 1 of %d; tooltip %r; "
            "screenshot %s" % (",".join(by_max), ",".join(by_slope), len(LINES), tip, png))
