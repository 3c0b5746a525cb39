# SPDX-License-Identifier: GPL-2.0
"""From experiments to predictions: program speedup per line speedup."""
from .classes import class_of_selected

MIN_DELTA = 5          # visits needed in one (line, point, speedup) bucket
E2E_POINT = "end-to-end"


def aggregate(experiments, local=True):
    """Sum per (selected, point, speedup).

    Throughput bucket: [sum duration, sum delta, 0, 0, and over the points
    with a local baseline (profile.local_baselines): sum of the baseline
    rates, sum of the rates, sum delta].
    Latency bucket: [sum duration, sum arrivals, sum difference*duration, sum departures].
    """
    out = {}
    for e in experiments:
        for p in e["points"]:
            key = (e["selected"], p["name"], p["kind"])
            lv = out.setdefault(key, {})
            b = lv.setdefault(e["speedup"], [0, 0, 0, 0, 0.0, 0.0, 0])
            b[0] += e["duration"]
            if p["kind"] == "throughput":
                b[1] += p["delta"]
                if local and "base" in p and e["duration"] > 0:
                    b[4] += p["base"]
                    b[5] += p["delta"] / e["duration"]
                    b[6] += p["delta"]
            else:
                b[1] += p["arrivals"]
                b[2] += p["difference"] * e["duration"]
                b[3] += p["departures"]
    return out


def metric(kind, b, name=None):
    """Lower-is-better metric of one bucket, or None if too little data.

    throughput: period = sum(duration) / sum(visits)            (ns per visit)
    latency:    W = L / lambda (Little's law), L = duration-weighted mean of
                the in-flight count, lambda = arrivals / duration  (ns)
    """
    dur, n = b[0], b[1]
    need = 1 if name == E2E_POINT else MIN_DELTA
    if dur <= 0 or n < need:
        return None
    if kind == "throughput":
        return dur / n
    if kind == "latency":
        if b[3] < need:
            return None
        inflight = b[2] / dur
        lam = n / dur
        if inflight <= 0:
            return None
        return inflight / lam
    raise ValueError(kind)


def program_speedups(levels, kind, name=None):
    """{line speedup %: predicted program speedup %} relative to speedup 0.

    speedup(s) = (M(0) - M(s)) / M(0) * 100 for the lower-is-better metric M,
    so positive always means "the program gets faster" (throughput and latency
    alike).  For a throughput point whose experiments have local baselines,
    M(s) / M(0) is the mean of their baselines over the mean of their rates:
    each experiment is one slice of the run's time, as each 0 % one is.
    Summing the level's durations instead (COZ) weighs its experiments by
    their duration less the delay, shorter where the program ran fast, so a
    speed that drifts reads as a slowdown of every sped-up line.  Without a
    0 % bucket the lowest measured level is the baseline (its own value is
    then 0 by definition).
    """
    vals = {}
    for s, b in levels.items():
        m = metric(kind, b, name)
        if m is not None:
            vals[s] = m
    if not vals:
        return {}
    base_s = 0 if 0 in vals else min(vals)
    base = vals[base_s]
    res = {}
    for s, m in sorted(vals.items()):
        if s < base_s:
            continue
        v = (base - m) / base * 100.0
        b = levels[s]
        if base_s == 0 and s and kind == "throughput" and b[6] >= MIN_DELTA and b[5] > 0:
            # against the 0 % rate of the same moments (local_baselines)
            v = (1.0 - b[4] / b[5]) * 100.0
        if -100.0 <= v <= 200.0:
            res[s] = v
    return res


def local_fit(pts, bandwidth=0.4):
    """Local linear regression (tricube weights) evaluated at each level.

    pts: {x: y}.  Window half-width = bandwidth * 100 percentage points,
    but always wide enough to hold 3 levels.  Returns {x: fitted y}.
    """
    xs = sorted(pts)
    if len(xs) < 3:
        return dict(pts)
    fit = {}
    for x0 in xs:
        dists = sorted(abs(x - x0) for x in xs)
        h = max(bandwidth * 100.0, dists[min(2, len(dists) - 1)] + 1e-9)
        sw = swx = swy = swxx = swxy = 0.0
        for x in xs:
            d = abs(x - x0) / h
            if d >= 1:
                continue
            w = (1 - d ** 3) ** 3
            y = pts[x]
            sw += w
            swx += w * x
            swy += w * y
            swxx += w * x * x
            swxy += w * x * y
        den = sw * swxx - swx * swx
        if sw <= 0:
            fit[x0] = pts[x0]
        elif abs(den) < 1e-12:
            fit[x0] = swy / sw
        else:
            b = (sw * swxy - swx * swy) / den
            a = (swy - b * swx) / sw
            fit[x0] = a + b * x0
    return fit


def slope_through_origin(pts):
    num = sum(x * y for x, y in pts.items())
    den = sum(x * x for x in pts)
    return num / den if den else 0.0


def analyse(experiments, local=True):
    """List of result dicts, one per (selected, point) with >= 2 levels.
    LOCAL=False ignores the local baselines (COZ's sums per level)."""
    results = []
    for (sel, name, kind), levels in aggregate(experiments, local).items():
        sp = program_speedups(levels, kind, name)
        if len(sp) < 2:
            continue
        fit = local_fit(sp)
        counts = {s: levels[s][1] for s in sp}
        results.append({"selected": sel, "class": class_of_selected(sel),
                        "point": name, "kind": kind, "speedups": sp,
                        "fit": fit, "visits": counts,
                        "max": max(fit.values()), "slope": slope_through_origin(sp)})
    results.sort(key=lambda r: (-r["max"], r["selected"], r["point"]))
    return results
