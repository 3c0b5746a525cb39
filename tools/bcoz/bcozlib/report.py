# SPDX-License-Identifier: GPL-2.0
"""The text report and the HTML page of `bcoz plot`."""
import math

from .analysis import MIN_DELTA


def short(sel, width=48):
    return sel if len(sel) <= width else "..." + sel[-(width - 3):]


def text_report(results, samples, runs, nexp, out):
    out.write("bcoz profile: %d run(s), %d experiments, %d (selected, point) pairs "
              "with >= 2 speedup levels\n" % (runs, nexp, len(results)))
    if not results:
        out.write("no prediction yet: every selected line needs experiments at >= 2 "
                  "speedup levels with >= %d progress visits each; run longer or "
                  "append more runs\n" % MIN_DELTA)
    for r in results:
        out.write("\n%s  (%s point %s)  max %+.1f%%  slope %.2f\n"
                  % (r["selected"], r["kind"], r["point"], r["max"], r["slope"]))
        if 0 not in r["speedups"]:
            out.write("  no experiment at 0 %%: the baseline is the %d %% level, so each row "
                      "is a speedup over that level, not over the unchanged program\n"
                      % min(r["speedups"]))
        se = r.get("se", {})
        out.write("  %12s %12s %6s %10s %7s\n"
                  % ("line speedup", "program", "+-se", "fit", "visits"))
        for s in sorted(r["speedups"]):
            out.write("  %11d%% %+11.1f%% %6s %+9.1f%% %7d\n"
                      % (s, r["speedups"][s], "%.1f" % se[s] if s in se else "-",
                         r["fit"][s], r["visits"][s]))
    if samples:
        out.write("\nsamples (weighted, on- and off-CPU):\n")
        tot = sum(samples.values()) or 1
        for loc, c in sorted(samples.items(), key=lambda kv: -kv[1])[:15]:
            out.write("  %6.2f%%  %8d  %s\n" % (100.0 * c / tot, c, loc))


def _escape(text):
    import html     # only plots need it; `bcoz run` starts faster without
    return html.escape(text)


def svg_chart(r, w=360, h=240):
    pad_l, pad_b, pad_t, pad_r = 44, 34, 24, 10
    se = {x: e for x, e in r.get("se", {}).items() if x in r["speedups"]}
    ys = list(r["speedups"].values()) + list(r["fit"].values())
    ys += [r["speedups"][x] + d * e for x, e in se.items() for d in (-1, 1)]
    ymin = min(-10.0, math.floor(min(ys) / 10) * 10)
    ymax = max(10.0, math.ceil(max(ys) / 10) * 10)
    pw, ph = w - pad_l - pad_r, h - pad_t - pad_b

    def X(x):
        return pad_l + pw * x / 100.0

    def Y(y):
        return pad_t + ph * (ymax - y) / (ymax - ymin)
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d">' % (w, h, w, h),
         '<title>%s</title>' % _escape(r["selected"])]
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#999"/>'
             % (pad_l, pad_t, pw, ph))
    step = 10 if ymax - ymin <= 60 else 20
    y = ymin
    while y <= ymax + 1e-9:
        o.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>'
                 % (pad_l, pad_l + pw, Y(y), Y(y), "#555" if y == 0 else "#e3e3e3"))
        o.append('<text x="%.1f" y="%.1f" font-size="10" text-anchor="end">%d%%</text>'
                 % (pad_l - 4, Y(y) + 3, y))
        y += step
    for x in range(0, 101, 25):
        o.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%d%%</text>'
                 % (X(x), pad_t + ph + 13, x))
    o.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">line speedup</text>'
             % (pad_l + pw / 2, h - 4))
    o.append('<text x="12" y="%.1f" font-size="11" text-anchor="middle" '
             'transform="rotate(-90 12 %.1f)">program speedup</text>'
             % (pad_t + ph / 2, pad_t + ph / 2))
    fx = sorted(r["fit"])
    o.append('<polyline fill="none" stroke="#c0392b" stroke-width="2" points="%s"/>'
             % " ".join("%.1f,%.1f" % (X(x), Y(r["fit"][x])) for x in fx))
    for x, yv in sorted(r["speedups"].items()):
        err = ""
        if x in se:
            # one standard error either side (analysis.standard_errors)
            o.append('<path class="se" d="M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6" '
                     'stroke="#7f8c8d" fill="none"/>'
                     % (X(x), Y(yv - se[x]), Y(yv + se[x]), X(x) - 3, Y(yv - se[x]),
                        X(x) - 3, Y(yv + se[x])))
            err = " &#177; %.1f" % se[x]
        o.append('<circle cx="%.1f" cy="%.1f" r="4" fill="#2c3e50" data-tip="line %d%% &#8594; '
                 'program %+.1f%%%s (fit %+.1f%%, %d visits)"><title>%d%% -> %+.1f%%%s '
                 '(%d visits)</title></circle>'
                 % (X(x), Y(yv), x, yv, err, r["fit"][x], r["visits"][x], x, yv, err,
                    r["visits"][x]))
    o.append('<text x="%d" y="14" font-size="11">%s</text>'
             % (pad_l, _escape(short(r["selected"], 54))))
    o.append('</svg>')
    return "\n".join(o)


def html_report(results, samples, runs, nexp, src):
    o = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>bcoz profile</title>',
         '<style>body{font-family:sans-serif;margin:20px}.g{display:flex;flex-wrap:wrap;'
         'gap:12px}.c{border:1px solid #ddd;padding:6px}td,th{padding:2px 8px;'
         'text-align:right}td.l{text-align:left}.bar{margin:8px 0}#tip{position:absolute;'
         'display:none;background:#ffffe8;border:1px solid #888;padding:3px 6px;'
         'font-size:12px;pointer-events:none}circle:hover{fill:#c0392b}</style></head><body>',
         '<h1>bcoz causal profile</h1>',
         '<p>%s: %d run(s), %d experiments. Each chart: predicted program speedup '
         '(y) if the selected line or off-CPU subclass were sped up by x. Dots: '
         'measured per speedup level, with a bar of one standard error either side '
         'where the level has enough experiments; line: local linear fit.</p>'
         % (_escape(src), runs, nexp)]
    if not results:
        o.append('<p><b>No prediction yet</b>: need &ge; 2 speedup levels with &ge; %d '
                 'progress visits each per selected line.</p>' % MIN_DELTA)
    if results:
        o.append('<div class="bar"><label>filter <input id="filter" placeholder="name '
                 'substring" size="30"></label> <label>sort by <select id="sort">'
                 '<option value="max">max speedup</option><option value="slope">slope'
                 '</option><option value="name">name</option></select></label> '
                 '<span id="count">%d of %d shown</span></div>' % (len(results), len(results)))
    o.append('<div class="g" id="charts">')
    for i, r in enumerate(results):
        o.append('<div class="c" data-name="%s" data-max="%.6f" data-slope="%.6f" data-order="%d">'
                 '%s<div style="font-size:11px">%s point %s &middot; max %+.1f%% &middot; '
                 'slope %.2f</div></div>'
                 % (_escape(r["selected"]), r["max"], r["slope"], i, svg_chart(r), r["kind"],
                    _escape(r["point"]), r["max"], r["slope"]))
    o.append('</div><div id="tip"></div>')
    if samples:
        tot = sum(samples.values()) or 1
        o.append('<h2>Samples</h2><table><tr><th>share</th><th>count</th>'
                 '<th class="l">location</th></tr>')
        for loc, c in sorted(samples.items(), key=lambda kv: -kv[1])[:30]:
            o.append('<tr><td>%.2f%%</td><td>%d</td><td class="l">%s</td></tr>'
                     % (100.0 * c / tot, c, _escape(loc)))
        o.append('</table>')
    o.append('<script>%s</script></body></html>\n' % PLOT_SCRIPT)
    return "\n".join(o)


# Filter by name (substring, case-insensitive), sort by max speedup (the
# order analyse() gives), slope or name, and a tooltip with the measured and
# fitted values of a dot.  Inline; the page loads nothing.
PLOT_SCRIPT = r"""
(function () {
  var box = document.getElementById("charts"), tip = document.getElementById("tip");
  var filter = document.getElementById("filter"), sort = document.getElementById("sort");
  var count = document.getElementById("count");
  var charts = Array.prototype.slice.call(box.querySelectorAll("div.c"));
  function apply() {
    var q = filter ? filter.value.toLowerCase() : "", key = sort ? sort.value : "max", n = 0;
    charts.sort(function (a, b) {
      if (key === "name")
        return a.dataset.name < b.dataset.name ? -1 : a.dataset.name > b.dataset.name ? 1 : 0;
      if (key === "slope")
        return b.dataset.slope - a.dataset.slope || a.dataset.order - b.dataset.order;
      return a.dataset.order - b.dataset.order;
    });
    charts.forEach(function (c) {
      var on = c.dataset.name.toLowerCase().indexOf(q) >= 0;
      c.style.display = on ? "" : "none";
      n += on;
      box.appendChild(c);
    });
    if (count)
      count.textContent = n + " of " + charts.length + " shown";
  }
  if (filter)
    filter.addEventListener("input", apply);
  if (sort)
    sort.addEventListener("change", apply);
  Array.prototype.forEach.call(document.querySelectorAll("circle[data-tip]"), function (c) {
    var t = c.querySelector("title");
    if (t)
      c.removeChild(t);
    c.addEventListener("mousemove", function (ev) {
      tip.textContent = c.getAttribute("data-tip");
      tip.style.left = (ev.pageX + 12) + "px";
      tip.style.top = (ev.pageY + 12) + "px";
      tip.style.display = "block";
    });
    c.addEventListener("mouseout", function () { tip.style.display = "none"; });
  });
  apply();
  document.body.setAttribute("data-ready", "1");
})();
"""
