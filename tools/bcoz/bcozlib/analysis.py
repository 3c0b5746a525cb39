# SPDX-License-Identifier: GPL-2.0
"""From experiments to predictions: program speedup per line speedup."""
import math
import random

from .classes import class_of_selected

MIN_DELTA = 5          # visits needed in one (line, point, speedup) bucket
E2E_POINT = "end-to-end"


def _share(e, p, local):
    """What one experiment adds to its point's bucket (see aggregate())."""
    b = [e["duration"], 0, 0, 0, 0.0, 0.0, 0]
    if p["kind"] == "throughput":
        b[1] = p["delta"]
        if local and "base" in p and e["duration"] > 0:
            b[4] = p["base"]
            b[5] = p["delta"] / e["duration"]
            b[6] = p["delta"]
    else:
        b[1] = p["arrivals"]
        b[2] = p["difference"] * e["duration"]
        b[3] = p["departures"]
    return b


def _add(levels, speedup, share):
    b = levels.setdefault(speedup, [0, 0, 0, 0, 0.0, 0.0, 0])
    for i, v in enumerate(share):
        b[i] += v


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
            _add(out.setdefault(key, {}), e["speedup"], _share(e, p, local))
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


def program_speedups(levels, kind, name=None, local_used=None):
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
    then 0 by definition).  LOCAL_USED, a set, receives the levels whose
    value came from their local baselines.
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
        local = base_s == 0 and s and kind == "throughput" and b[6] >= MIN_DELTA and b[5] > 0
        if local:
            # against the 0 % rate of the same moments (local_baselines)
            v = (1.0 - b[4] / b[5]) * 100.0
        if -100.0 <= v <= 200.0:
            res[s] = v
            if local and local_used is not None:
                local_used.add(s)
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


# A standard error is a bootstrap of this many resamples; it is believed
# over whole runs from MIN_RUNS runs on (standard_errors()).
BOOTSTRAP_REPS = 300
MIN_RUNS = 3
# analyse() gives a level's error only when it and the 0 % level have this
# many experiments each: a level of one experiment resamples to itself and
# would read an error of 0.  Skipping the rest keeps `bcoz plot` quick on a
# long run's profile, where most lines were chosen a few times.
MIN_EXPERIMENTS_FOR_ERROR = 3


def _spread(vals, reps):
    """Population standard deviation of VALS, or None if fewer than half of
    the REPS resamples gave a value."""
    if len(vals) < max(reps // 2, 1):
        return None
    m = sum(vals) / len(vals)
    return math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))


def baseline_errors(experiments, point):
    """{line speedup %: standard error, in points} of the predictions that
    compare a level's experiments with their local baselines (throughput
    POINT; profile.local_baselines), by linearising
    speedup = 1 - sum(base) / sum(rate).

    A bootstrap of the experiments keeps each one's baseline as it is, and
    neighbouring experiments share the 0 % experiments their baselines came
    from: it sees a third to a half of the baselines' noise (synthetic runs
    with a known truth, tests/unit_tests.py: the prediction was within one
    bootstrap error of the truth in 40 % of them, where one standard error
    should hold 68 %).  Here, with k = sum(rate) / sum(base) and
    d_i = rate_i - k * base_i, the error of sum(d) is the spread of the d_i
    (each experiment's own noise and its baseline's) plus, for each 0 %
    experiment j with weight c_j in the sum of baselines (a_ij: 1/2 from
    each of an experiment's two neighbours), the covariance it adds between
    the experiments that share it: k^2 * var(z_j) * (c_j^2 - sum_i a_ij^2),
    var(z_j) from how much each 0 % rate of the run differs from the mean of
    its two neighbours (profile.local_baselines); the speedup's error is
    that over k * sum(rate).  On the same synthetic runs, 62-72 % within
    one error and 94-98 % within two."""
    by_level = {}
    for e in experiments:
        if e["speedup"] == 0 or e["duration"] <= 0:
            continue
        for p in e["points"]:
            if p["name"] == point and p["kind"] == "throughput" and "base_from" in p:
                by_level.setdefault(e["speedup"], []).append(
                    (p["base"], p["delta"] / e["duration"], p["base_from"], p["base_noise"]))
                break
    out = {}
    for s, items in by_level.items():
        n = len(items)
        bsum = sum(b for b, _, _, _ in items)
        rsum = sum(r for _, r, _, _ in items)
        if n < 2 or bsum <= 0 or rsum <= 0:
            continue
        k = rsum / bsum
        var = sum((r - k * b) ** 2 for b, r, _, _ in items) * n / (n - 1)
        c, a2, z = {}, {}, {}
        for _, _, near, noise in items:
            for run, j, rate in near:
                c[run, j] = c.get((run, j), 0.0) + 1.0 / len(near)
                a2[run, j] = a2.get((run, j), 0.0) + 1.0 / len(near) ** 2
                z[run, j] = noise * rate * rate
        var += k * k * sum(z[j] * (c[j] ** 2 - a2[j]) for j in c)
        out[s] = 100.0 * math.sqrt(max(var, 0.0)) / (k * rsum)
    return out


def _level_sums(levels):
    """{speedup: the column sums of its shares} from (speedup, [share or
    None, ...]) pairs: what program_speedups() takes; a level whose every
    share is None is left out."""
    out = {}
    for speedup, shares in levels:
        shares = [x for x in shares if x is not None]
        if shares:
            out[speedup] = [sum(col) for col in zip(*shares)]
    return out


def standard_errors(experiments, point, kind, reps=BOOTSTRAP_REPS, seed=1, local=True):
    """{line speedup %: bootstrap standard error, in points, of the predicted
    program speedup} for POINT (of KIND) over EXPERIMENTS, those of one
    selection.  A level is left out when the whole of EXPERIMENTS gives it
    no prediction, when it is the reference (0 % or the lowest level: 0 by
    definition), or when fewer than half of the resamples give it a value.

    The largest of three.  Two are bootstraps through program_speedups():
    one resamples experiments within each speedup level, as if they were
    independent.  With experiments from at least MIN_RUNS runs (the run
    each one came from: profile.py), the other resamples whole runs, so
    what differs between runs (where the threads ran, the host's speed
    that minute) counts too; it is scaled by sqrt(n / (n - 1)), as a
    bootstrap of n values reads that much small.  Forkjoin's big worker,
    30 runs of 12 experiments on the 2-CPU host: predictions from 3 runs
    moved by 1.56 points, the experiments' bootstrap said 1.15, the
    runs' 1.48.  A local baseline stays with its experiment
    (profile.local_baselines), so a resample keeps each one's, and misses
    part of the baselines' noise: the third, for a level compared with its
    local baselines, is baseline_errors(), which counts it."""
    rnd = random.Random(seed)
    by_level, by_run = {}, {}
    for e in experiments:
        share = None
        for p in e["points"]:
            if p["name"] == point and p["kind"] == kind:
                share = _share(e, p, local)
                break
        by_level.setdefault(e["speedup"], []).append(share)
        by_run.setdefault(e.get("run", 0), {}).setdefault(e["speedup"], []).append(share)
    if len(by_level) < 2:
        return {}

    def spreads(draw):
        vals = {}
        for _ in range(reps):
            sp = program_speedups(_level_sums(draw()), kind, point)
            if len(sp) < 2:
                continue
            for s, v in sp.items():
                vals.setdefault(s, []).append(v)
        return {s: _spread(v, reps) for s, v in vals.items()}

    def experiments_drawn():
        return [(s, [rnd.choice(g) for _ in g]) for s, g in by_level.items()]

    se = spreads(experiments_drawn)
    runs = list(by_run.values())
    if len(runs) >= MIN_RUNS:
        def runs_drawn():
            merged = {}
            for _ in runs:
                for s, g in rnd.choice(runs).items():
                    merged.setdefault(s, []).extend(g)
            return merged.items()

        scale = math.sqrt(len(runs) / (len(runs) - 1))
        run_se = spreads(runs_drawn)
        se = {s: None if v is None or run_se.get(s) is None else max(v, run_se[s] * scale)
              for s, v in se.items()}
    # the levels the whole data predicts, and which of them from local
    # baselines: an error only for those, the baselines' only for these
    used = set()
    predicted = program_speedups(_level_sums(by_level.items()), kind, point, used)
    if kind == "throughput" and local:
        for s, v in baseline_errors(experiments, point).items():
            if s in used and se.get(s) is not None:
                se[s] = max(se[s], v)
    ref = min(predicted) if predicted else None     # 0 by definition
    return {s: v for s, v in se.items() if v is not None and s in predicted and s != ref}


def _errors(experiments, point, kind, local):
    """standard_errors() at the levels with enough experiments for one."""
    n = {}
    for e in experiments:
        if any(p["name"] == point and p["kind"] == kind for p in e["points"]):
            n[e["speedup"]] = n.get(e["speedup"], 0) + 1
    enough = {s for s, c in n.items() if c >= MIN_EXPERIMENTS_FOR_ERROR}
    if 0 not in enough or len(enough) < 2:
        return {}
    se = standard_errors(experiments, point, kind, local=local)
    return {s: v for s, v in se.items() if s in enough}


def analyse(experiments, local=True, errors=False):
    """List of result dicts, one per (selected, point) with >= 2 levels.
    LOCAL=False ignores the local baselines (COZ's sums per level).
    ERRORS adds "se": {level: standard error} (standard_errors())."""
    results = []
    by_sel = {}
    if errors:
        for e in experiments:
            by_sel.setdefault(e["selected"], []).append(e)
    for (sel, name, kind), levels in aggregate(experiments, local).items():
        sp = program_speedups(levels, kind, name)
        if len(sp) < 2:
            continue
        fit = local_fit(sp)
        counts = {s: levels[s][1] for s in sp}
        r = {"selected": sel, "class": class_of_selected(sel),
             "point": name, "kind": kind, "speedups": sp,
             "fit": fit, "visits": counts,
             "max": max(fit.values()), "slope": slope_through_origin(sp)}
        if errors:
            r["se"] = _errors(by_sel[sel], name, kind, local)
        results.append(r)
    results.sort(key=lambda r: (-r["max"], r["selected"], r["point"]))
    return results
