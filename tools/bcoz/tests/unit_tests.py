# SPDX-License-Identifier: GPL-2.0
"""Unit tests for bcoz's profile parser and speedup math, and a parser fuzz run.

Each test_* function raises AssertionError on failure.  Imported by run_tests.py.
"""
import io
import math
import os
import random
import re
import sys
import tempfile

# bcozlib from the source tree, next to this directory
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bcozlib import analysis, report  # noqa: E402
from bcozlib import profile as cozprofile  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import precision  # noqa: E402


def exp(sel, sp, dur, points, samples=0):
    s = "experiment\tselected=%s\tspeedup=%.2f\tduration=%d\tselected-samples=%d\n" % (
        sel, sp, dur, samples)
    for p in points:
        if p[0] == "t":
            s += "throughput-point\tname=%s\tdelta=%d\n" % (p[1], p[2])
        else:
            s += "latency-point\tname=%s\tarrivals=%d\tdepartures=%d\tdifference=%d\n" % p[1:]
    return s


def near(a, b, tol=1e-6):
    return abs(a - b) <= tol


def test_throughput_math():
    text = "startup\ttime=1\n"
    text += exp("a.c:1", 0.0, 1000, [("t", "p", 10)])
    text += exp("a.c:1", 0.5, 800, [("t", "p", 10)])
    text += exp("a.c:1", 0.25, 450, [("t", "p", 5)])
    text += exp("a.c:1", 0.25, 450, [("t", "p", 5)])   # aggregated: 900 / 10
    exps, _, runs = cozprofile.parse_profile(text)
    assert runs == 1 and len(exps) == 4
    r = analysis.analyse(exps)
    assert len(r) == 1, r
    sp = r[0]["speedups"]
    # period(0)=100, period(25)=90, period(50)=80
    assert near(sp[0], 0.0) and near(sp[25], 10.0) and near(sp[50], 20.0), sp
    assert r[0]["kind"] == "throughput"


def test_appended_runs_aggregate():
    text = ""
    for run in range(3):
        text += "startup\ttime=%d\n" % run
        text += exp("x.c:9", 0.0, 1000 + 100 * run, [("t", "p", 10)])
        text += exp("x.c:9", 1.0, 500, [("t", "p", 10)])
        text += "runtime\ttime=5\nsamples\tlocation=x.c:9\tcount=3\n"
        text += "runtime\ttime=9\nsamples\tlocation=x.c:9\tcount=7\n"   # cumulative
    exps, samples, runs = cozprofile.parse_profile(text)
    assert runs == 3 and samples["x.c:9"] == 21
    sp = analysis.analyse(exps)[0]["speedups"]
    # baseline period = 3300 / 30 = 110, at 100 %: 1500 / 30 = 50
    assert near(sp[100], (110 - 50) / 110 * 100), sp


def test_drift_local_baseline():
    """A program whose speed drifts (a shared host) and a line with no
    effect: at 50 % each experiment's duration is its 500 ms less the delay,
    and the delay grows with the visits made (the selected line runs once
    per visit).  The program's rate is the same at both levels at every
    moment, so the prediction must read 0.  Summing each level's durations
    (COZ) weighs the fast moments less at 50 %: it reads negative."""
    text = "startup\ttime=1\n"
    for i in range(200):
        v = 1 + 0.3 * math.sin(i / 6.0)        # the host's speed
        rate = 400e-9 * v                       # visits per ns at either level
        if i % 2 == 0:
            dur = 500000000
        else:
            dur = 500000000 / (1 + 0.5 * 1.65e6 * rate)   # less 0.825 ms per visit
        text += exp("w.c:7", 0.0 if i % 2 == 0 else 0.5, int(dur),
                    [("t", "p", int(round(rate * dur)))])
    exps, _, _ = cozprofile.parse_profile(text)
    assert all("base" in p for e in exps for p in e["points"]), "no local baseline"
    new = analysis.analyse(exps)[0]["speedups"][50]
    old = analysis.analyse(exps, local=False)[0]["speedups"][50]
    assert abs(new) < 0.2 and old < -0.6, (new, old)
    return "no-effect line under a drifting speed: %+.2f (summed per level: %+.2f)" % (new, old)


def test_local_baselines_neighbours():
    """A baseline is the mean rate of the nearest 0 % experiments before and
    after, in the same run, never the experiment's own."""
    text = "startup\ttime=1\n"
    for sp, n in ((0.0, 10), (0.5, 99), (0.0, 30), (0.0, 50), (0.5, 99)):
        text += exp("a.c:1", sp, 1000, [("t", "p", n)])
    text += "startup\ttime=2\n"
    for sp, n in ((0.5, 99), (0.0, 70), (0.0, 90)):
        text += exp("a.c:1", sp, 1000, [("t", "p", n)])
    exps, _, runs = cozprofile.parse_profile(text)
    got = [round(e["points"][0]["base"] * 1000, 6) for e in exps]
    assert runs == 2 and got == [30, 20, 30, 30, 50, 70, 90, 70], got


def test_baseline_fallback_and_min_delta():
    text = exp("y.c:2", 0.10, 1000, [("t", "p", 10)])
    text += exp("y.c:2", 0.30, 900, [("t", "p", 10)])
    text += exp("y.c:2", 0.60, 100, [("t", "p", 3)])    # < MIN_DELTA visits: dropped
    sp = analysis.analyse(cozprofile.parse_profile(text)[0])[0]["speedups"]
    assert sorted(sp) == [10, 30], sp
    assert near(sp[10], 0.0) and near(sp[30], 10.0), sp


def test_latency_math_sign():
    # Little's law: W = L / lambda.  0 %: L = 2, lambda = 10/1000 -> W = 200;
    # 50 %: L = 1 -> W = 100.  Latency halves: the program got 50 % faster,
    # and bcoz must report +50 (COZ's viewer negates this).
    text = exp("z.c:3", 0.0, 1000, [("l", "req", 10, 10, 2)])
    text += exp("z.c:3", 0.5, 1000, [("l", "req", 10, 10, 1)])
    r = analysis.analyse(cozprofile.parse_profile(text)[0])
    assert len(r) == 1 and r[0]["kind"] == "latency", r
    assert near(r[0]["speedups"][50], 50.0), r[0]["speedups"]
    # more in flight at the same arrival rate = slower = negative
    text = exp("z.c:3", 0.0, 1000, [("l", "req", 10, 10, 2)])
    text += exp("z.c:3", 0.5, 1000, [("l", "req", 10, 10, 3)])
    r = analysis.analyse(cozprofile.parse_profile(text)[0])
    assert near(r[0]["speedups"][50], -50.0), r[0]["speedups"]


def test_latency_and_throughput_agree():
    # one transaction at a time: throughput period and latency must agree
    text = ""
    for sp, dur in ((0.0, 1000), (0.4, 700)):
        text += exp("w.c:1", sp, dur, [("t", "done", 20), ("l", "txn", 20, 20, 1)])
    r = {x["kind"]: x["speedups"][40] for x in analysis.analyse(cozprofile.parse_profile(text)[0])}
    assert near(r["throughput"], 30.0) and near(r["latency"], 30.0), r


def test_end_to_end_point():
    text = ""
    for sp, dur in ((0.0, 1000), (0.0, 1100), (0.5, 800), (0.5, 700)):
        text += exp("e.c:5", sp, dur, [("t", "end-to-end", 1)])
    sp = analysis.analyse(cozprofile.parse_profile(text)[0])[0]["speedups"]
    # baseline 2100/2 = 1050; 50 %: 750 -> +28.57 %
    assert near(sp[50], (1050 - 750) / 1050 * 100), sp


def test_subclass_selected_and_legacy_records():
    text = "startup\ttime=1\n"
    text += exp("IO", 0.0, 1000, [("t", "p", 10)])
    text += "progress-point\tname=p\ttype=source\tdelta=10\n"   # 2015 COZ variant
    text += exp("IO", 1.0, 600, [("t", "p", 10)])
    text += "shutdown\ttime=9\tsamples=3\n"
    exps, _, _ = cozprofile.parse_profile(text)
    r = analysis.analyse(exps)
    assert r[0]["selected"] == "IO"
    # first experiment carries two throughput records for p: 2000 / 20 = 100 per visit
    assert near(r[0]["speedups"][100], 40.0), r


def test_fit_and_slope():
    pts = {0: 0.0, 20: 10.0, 40: 20.0, 60: 30.0, 80: 40.0}
    fit = analysis.local_fit(pts)
    assert all(near(fit[x], pts[x], 1e-6) for x in pts), fit
    assert near(analysis.slope_through_origin(pts), 0.5)
    flat = {0: 0.0, 25: 25.0, 50: 50.0, 75: 50.0, 100: 50.0}
    f = analysis.local_fit(flat)
    assert 40 <= f[100] <= 60 and -5 <= f[0] <= 10, f


def test_parser_errors():
    bad = {
        "bogus\tx=1\n": "unknown record type",
        "experiment\tselected=a\tspeedup=0.5\n": "lacks duration",
        "experiment\tselected=a\tspeedup=0.5\tduration=abc\n": "not an integer",
        "experiment\tselected=a\tspeedup=1.5\tduration=1\n": "outside 0..1",
        "throughput-point\tname=p\tdelta=1\n": "before any experiment",
        "experiment\tselected=a\tspeedup=0.5\tduration=-4\n": "negative",
        "experiment\tselected=a\tspeedup\tduration=1\n": "not key=value",
        "samples\tlocation=a\tcount=1\tcount=2\n": "given twice",
    }
    for text, why in bad.items():
        try:
            cozprofile.parse_profile("startup\ttime=1\n" + text, "p.coz")
        except cozprofile.ProfileError as e:
            assert why in str(e) and "p.coz:2" in str(e), (text, str(e))
        else:
            raise AssertionError("accepted: %r" % text)
    with tempfile.TemporaryDirectory() as d:
        for name, data, why in (("nul", b"startup\ttime=1\x00\n", "NUL"),
                                ("latin", b"\xff\xfe\x00", "UTF-8")):
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(data)
            try:
                cozprofile.read_profile(p)
            except cozprofile.ProfileError as e:
                assert why in str(e), str(e)
            else:
                raise AssertionError("accepted " + name)
        try:
            cozprofile.read_profile(os.path.join(d, "missing.coz"))
        except cozprofile.ProfileError as e:
            assert "cannot read" in str(e)


def test_reports_render():
    text = ""
    for sp, dur in ((0.0, 1000), (0.25, 800), (0.5, 600), (0.75, 600)):
        text += exp("src/a<b>.c:7", sp, dur, [("t", "p", 10)])
    exps, samples, runs = cozprofile.parse_profile(text + "samples\tlocation=a.c:7\tcount=3\n")
    res = analysis.analyse(exps)
    out = io.StringIO()
    report.text_report(res, samples, runs, len(exps), out)
    t = out.getvalue()
    assert "+40.0%" in t and "src/a<b>.c:7" in t, t
    h = report.html_report(res, samples, runs, len(exps), "x.coz")
    assert h.count("<svg") == 1 and "a&lt;b&gt;" in h
    # one inline script (filter, sort, tooltips), nothing loaded from anywhere
    assert h.count("<script>") == 1 and "src=" not in h and "href=" not in h
    assert "http://" not in h.replace('xmlns="http://www.w3.org/2000/svg"', "") and \
        "https://" not in h
    assert 'data-name="src/a&lt;b&gt;.c:7"' in h and 'id="filter"' in h and 'id="sort"' in h


def test_report_names_a_baseline_not_at_zero():
    """Without 0 % experiments the lowest level is the baseline: the report
    says so (12 end-to-end sqlite3 runs read +41.6 at 60 % over 40 %)."""
    text = ""
    for sp, dur in ((0.4, 1000), (0.6, 600)):
        text += exp("a.c:7", sp, dur, [("t", "p", 10)])
    text += exp("b.c:9", 0.0, 1000, [("t", "p", 10)]) + exp("b.c:9", 0.5, 900, [("t", "p", 10)])
    exps, samples, runs = cozprofile.parse_profile(text)
    out = io.StringIO()
    report.text_report(analysis.analyse(exps), samples, runs, len(exps), out)
    t = out.getvalue()
    assert t.count("no experiment at 0 %") == 1, t
    assert "the baseline is the 40 % level" in t, t


def test_truncated_last_line():
    """A run cut off while writing loses its last line, not the profile."""
    text = "startup\ttime=1\n"
    text += exp("a.c:1", 0.0, 1000, [("t", "p", 10)])
    text += exp("a.c:1", 0.5, 800, [("t", "p", 10)])
    warned = []
    for cut in ("experiment\tselected=a.c:1\tspee", "throughput-point\tname=p\tdelta=1"):
        exps, _, _ = cozprofile.parse_profile(text + cut, "t.coz", warned.append)
        assert len(exps) == 2 and exps[1]["points"][0]["delta"] == 10, exps
    assert len(warned) == 2 and all("t.coz:6" in w and "incomplete" in w for w in warned), warned
    # a complete last line is kept
    exps, _, _ = cozprofile.parse_profile(text, "t.coz", warned.append)
    assert len(exps) == 2 and len(warned) == 2


def test_json_profile_hint():
    for text in ('{"experiments": []}', '\n [\n{"type": "experiment"}]'):
        try:
            cozprofile.parse_profile(text, "j.coz")
        except cozprofile.ProfileError as e:
            assert str(e).startswith("j.coz:") and "JSON" in str(e), str(e)
        else:
            raise AssertionError("accepted JSON")


SAMPLE_PROFILE = None


def sample_profile():
    text = "startup\ttime=100\n"
    rnd = random.Random(1)
    for i in range(30):
        sp = rnd.choice([0, 0, 0.25, 0.5, 0.75, 1.0])
        text += exp("/src/f%d.c:%d" % (i % 3, 10 + i % 3), sp, rnd.randint(10**8, 10**9),
                    [("t", "main.c:5", rnd.randint(0, 40)),
                     ("l", "req", rnd.randint(0, 40), rnd.randint(0, 40), rnd.randint(0, 3))])
    text += "runtime\ttime=5000\nsamples\tlocation=/src/f0.c:10\tcount=77\n"
    return text


def test_fuzz_parser(iterations=3000):
    base = sample_profile()
    rnd = random.Random(4242)
    alphabet = "\t\n=:.-0123456789abcdefxyz%\x00\xff " + "experiment" + "latency-point"
    accepted = rejected = 0
    for it in range(iterations):
        t = list(base)
        for _ in range(rnd.randint(1, 6)):
            op = rnd.randrange(6)
            pos = rnd.randrange(len(t) + 1)
            if op == 0 and t:
                del t[min(pos, len(t) - 1)]
            elif op == 1:
                t.insert(pos, rnd.choice(alphabet))
            elif op == 2 and t:
                t = t[:pos]
            elif op == 3:
                lines = "".join(t).split("\n")
                rnd.shuffle(lines)
                t = list("\n".join(lines))
            elif op == 4:
                lines = "".join(t).split("\n")
                i = rnd.randrange(len(lines))
                lines.insert(i, lines[rnd.randrange(len(lines))])
                t = list("\n".join(lines))
            else:
                seg = "".join(t)
                a = rnd.randrange(len(seg) + 1)
                t = list(seg[:a] + str(rnd.choice([-1, 10**30, 1e309, "nan", ""])) + seg[a:])
        text = "".join(t)
        try:
            exps, samples, runs = cozprofile.parse_profile(text, "fuzz.coz")
            res = analysis.analyse(exps)
            report.text_report(res, samples, runs, len(exps), io.StringIO())
            report.html_report(res, samples, runs, len(exps), "fuzz.coz")
            accepted += 1
        except cozprofile.ProfileError as e:
            assert str(e).startswith("fuzz.coz:"), str(e)
            rejected += 1
    # random bytes through the file reader
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "r.coz")
        for it in range(300):
            with open(p, "wb") as f:
                f.write(bytes(rnd.randrange(256) for _ in range(rnd.randrange(200))))
            try:
                cozprofile.read_profile(p)
            except cozprofile.ProfileError:
                pass
    assert accepted > 0 and rejected > 0, (accepted, rejected)
    return "%d garbled profiles: %d parsed, %d rejected with a clear error" % (
        iterations, accepted, rejected)


def test_bcozlib_modules():
    """Every bcozlib module imports by name; the class table is perf's and
    the runtime's; bcoz run passes option values on unchecked (the runtime
    checks them)."""
    import importlib
    import re
    mods = ("profile", "analysis", "report", "classes", "target", "cli")
    for m in mods:
        importlib.import_module("bcozlib." + m)
    from bcozlib import classes, cli
    assert classes.NAMES == ("on-cpu", "io", "lock", "sched", "other"), classes.NAMES
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "src", "config.c")
    with open(src) as f:
        rows = re.findall(r'\[BCOZ_\w+\]\s*=\s*\{\s*"([^"]+)",\s*(\'(\w)\'|0),\s*\w+,'
                          r'\s*(?:"(\w+)"|NULL)', f.read())
    c_table = tuple((n, letter or None, label or None) for n, _, letter, label in rows)
    assert c_table == classes.CLASSES, (c_table, classes.CLASSES)
    assert classes.class_of_selected("SCHEDULING") == "sched"
    assert classes.class_of_selected("a.c:1") is None
    o = cli.run_parser().parse_args(["--speedups", "abc", "--fixed-speedup", "120",
                                     "--blocked-scope", "l", "--experiments", "0"])
    env = cli.run_env(o, {})
    assert (env["BCOZ_SPEEDUPS"], env["BCOZ_FIXED_SPEEDUP"], env["BCOZ_BLOCKED_SCOPE"],
            env["BCOZ_EXPERIMENTS"]) == ("abc", "120", "l", "0"), env
    return "%s import; classes %s, as in src/config.c" % (", ".join(mods),
                                                          " ".join(classes.NAMES))


def test_actual_estimate():
    """The actual speedup of alternating runs: best-of when load only slows
    runs down, the paired median when the machine's speed swings."""
    # 10 rounds, truth +20 % (base 100 rounds/s, changed 125); another
    # suite's threads slow some runs of either level by 10-40 %
    rnd = random.Random(3)
    slow = [1 - rnd.uniform(0.1, 0.4) if rnd.random() < 0.5 else 1.0 for _ in range(20)]
    base = [100 * f for f in slow[:10]]
    changed = [125 * f for f in slow[10:]]
    v, se, how = precision.actual_estimate(base, changed)
    assert how == "best-of" and near(v, 20.0, 1e-9), (v, se, how)
    # the host's own speed drifts by up to 15 % between rounds, each pair
    # close in time, and one base run fell in a burst 30 % fast: the best-of
    # takes that run, the median of the pairs does not
    speed = [1 + 0.15 * math.sin(i) for i in range(10)]
    base = [100 * f for f in speed]
    changed = [125 * f * (1 + 0.01 * (-1) ** i) for i, f in enumerate(speed)]
    base[3] = 100 * 1.3 * max(speed)
    v, se, how = precision.actual_estimate(base, changed)
    best = precision.best_of_speedup(base, changed)
    assert how == "paired" and abs(v - 20) < 1.5 and abs(best - 20) > 1.5, (v, se, how, best)
    # the estimates disagree: the error says so, whichever is taken
    assert se >= abs(best - v) / 2, (v, se, best)
    # busy shares (capped at 1): the stage waits 2-8 % of the time at base
    # (5 % on average) and 0-1 % changed (0.5 %), so the truth is
    # 1 - 0.95 / 0.995 = +4.5 %; the base run that waited least makes a
    # best-of read only that run's wait, the pairs read the truth
    truth = (1 - 0.95 / 0.995) * 100
    base = [1 - rnd.uniform(0.02, 0.08) for _ in range(10)]
    changed = [1 - rnd.uniform(0.0, 0.01) for _ in range(10)]
    cv, cse, chow = precision.actual_estimate(base, changed, capped=True)
    cbest = precision.best_of_speedup(base, changed)
    assert chow == "paired" and abs(cv - truth) < 1.0 and cbest < truth - 2, \
        (cv, chow, cbest, truth)
    assert near(cse, precision.paired_error(base, changed), 1e-9), (cse,)
    return ("best-of %+.1f under one-sided load; paired %+.1f (best-of %+.1f, error %.1f) "
            "under drift; capped shares paired %+.1f (best-of %+.1f)"
            % (20.0, v, best, se, cv, cbest))


def test_min_runs():
    """A profile's experiments carry their run; until_precise() believes a
    standard error only from the MIN_RUNS-th run on, even when the first
    run's bootstrap already reads 0."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.coz")
        open(path, "w").close()

        def run_once(n):
            # every experiment alike: the bootstrap error is 0 at once
            text = "startup\ttime=%d\n" % n
            for _ in range(3):
                text += exp("m.c:3", 0.0, 1000, [("t", "p", 10)])
                text += exp("m.c:3", 0.5, 800, [("t", "p", 10)])
            with open(path, "a") as f:
                f.write(text)
        se, runs = precision.until_precise(path, "m.c:3", (50,), run_once, 2.5, 1)
        exps, _, nruns = cozprofile.read_profile(path)
    assert se == 0 and runs == precision.MIN_RUNS == nruns, (se, runs, nruns)
    assert [e["run"] for e in exps] == [i for i in range(runs) for _ in range(6)], exps
    # runs that disagree (the line's 50 % experiments are 20 % faster, the
    # same or 20 % slower, a run each) while each run agrees with itself:
    # the bootstrap over whole runs sees it, the one over experiments much less
    text = ""
    for run, d50 in enumerate((800, 1000, 1200)):
        text += "startup\ttime=%d\n" % run
        for _ in range(10):
            text += exp("m.c:3", 0.0, 1000, [("t", "p", 10)])
            text += exp("m.c:3", 0.5, d50, [("t", "p", 10)])
    exps, _, _ = cozprofile.parse_profile(text)
    both = precision.standard_error(exps, "m.c:3", 50)
    for e in exps:
        e["run"] = 0
    alone = precision.standard_error(exps, "m.c:3", 50)
    assert both > 2 * alone > 0, (both, alone)
    return "%d runs before an error of %.1f is believed; runs that disagree: %.1f, %.1f " \
        "from the experiments alone" % (runs, se, both, alone)


def synthetic_run(rnd, truth, n=64, noise=0.08, drift=0.03):
    """One run's profile text: N experiments of 0.1 s selecting a.c:1, a
    third of them at 0 % and the rest at 50 %, where the program's true
    speedup is TRUTH %.  The program's speed drifts (a random walk of
    DRIFT per experiment) and each experiment's visits carry NOISE
    (relative, normal): the two kinds of noise a host gives."""
    text, speed = "startup\ttime=1\n", 1.0
    for _ in range(n):
        speed *= math.exp(rnd.gauss(0, drift))
        sp = 0.0 if rnd.random() < 1 / 3 else 0.5
        rate = 1000 * speed / (1 - truth / 100 if sp else 1)
        visits = max(1, round(rate * math.exp(rnd.gauss(0, noise))))
        text += exp("a.c:1", sp, 100000000, [("t", "p", visits)])
    return text


def test_standard_error_calibrated():
    """The error `bcoz plot` prints is the error of its prediction: over
    200 synthetic profiles of one run each with a known true speedup
    (synthetic_run(): drift plus per-experiment noise), the prediction at
    50 % lies within one printed standard error of the truth in about 68 %
    of them and within two in about 95 %.  An error that read too small by
    a third would cover under 50 %; too large by a half, over 85 %."""
    rnd = random.Random(7)
    within1 = within2 = boot1 = 0
    errs, n = [], 200
    for _ in range(n):
        exps, _, _ = cozprofile.parse_profile(synthetic_run(rnd, 20.0))
        r = analysis.analyse(exps, errors=True)[0]
        v, se = r["speedups"][50], r["se"][50]
        errs.append(se)
        within1 += abs(v - 20.0) <= se
        within2 += abs(v - 20.0) <= 2 * se
        # the experiments' bootstrap alone (the error until 2026-11-29)
        for e in exps:
            for p in e["points"]:
                del p["base_from"]
        boot1 += abs(v - 20.0) <= analysis.standard_errors(exps, "p", "throughput")[50]
    c1, c2, b1 = 100.0 * within1 / n, 100.0 * within2 / n, 100.0 * boot1 / n
    assert 58 <= c1 <= 78 and 90 <= c2 <= 99, (c1, c2)
    assert b1 < 55, "the bootstrap alone covers %.0f%%: the check cannot tell" % b1
    # too few experiments at a level for an error: none printed, not 0
    text = "".join(exp("a.c:1", sp, 1000, [("t", "p", 10)])
                   for sp in (0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 1.0))
    exps, samples, runs = cozprofile.parse_profile(text)
    res = analysis.analyse(exps, errors=True)
    assert sorted(res[0]["se"]) == [50] and res[0]["se"][50] == 0, res
    out = io.StringIO()
    report.text_report(res, samples, runs, len(exps), out)
    rows = {s: r[1] for s, r in precision.plot_rows(out.getvalue()).items()}
    assert rows == {0: "-", 50: "0.0", 100: "-"}, out.getvalue()
    h = report.html_report(res, samples, runs, len(exps), "x.coz")
    assert h.count('class="se"') == 1 and "&#177; 0.0" in h, h
    return ("prediction within 1 error of the truth in %.0f%%, within 2 in %.0f%% of %d "
            "profiles (errors %.1f-%.1f points); within 1 error of the experiments' "
            "bootstrap alone: %.0f%%" % (c1, c2, n, min(errs), max(errs), b1))


def test_errors_only_where_predicted():
    """An error only where there is a prediction, and the baselines' error
    only where the prediction used them: (a) a level whose prediction is
    out of range (50 %: -101 %) gets none, and the page still draws;
    (b) 0 % with too few visits makes 50 % the reference: no error there;
    (c) a level whose baselined experiments total under 5 visits falls
    back to the sums and keeps the bootstraps' error alone."""
    text = "startup\ttime=0\n"
    for d in (499, 497, 498):
        text += (exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1000)]) +
                 exp("a.c:1", 0.5, 10 ** 6, [("t", "p", d)]) +
                 exp("a.c:1", 1.0, 10 ** 6, [("t", "p", 900)]))
    text += exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1000)])
    exps, samples, runs = cozprofile.parse_profile(text)
    res = analysis.analyse(exps, errors=True)
    assert sorted(res[0]["speedups"]) == [0, 100] and sorted(res[0]["se"]) == [100], res
    report.html_report(res, samples, runs, len(exps), "x.coz")
    text = "startup\ttime=0\n"
    for d50, d100 in ((6, 9), (5, 10), (7, 8)):
        text += (exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1)]) +
                 exp("a.c:1", 0.5, 10 ** 6, [("t", "p", d50)]) +
                 exp("a.c:1", 1.0, 10 ** 6, [("t", "p", d100)]))
    exps, _, _ = cozprofile.parse_profile(text)
    r = analysis.analyse(exps, errors=True)[0]
    assert min(r["speedups"]) == 50 and sorted(r["se"]) == [100], r
    text = "startup\ttime=0\n"
    for d in (1, 2, 1):
        text += (exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1000)]) +
                 exp("a.c:1", 0.5, 10 ** 6, [("t", "p", d)]))
    text += exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1000)])
    text += "startup\ttime=1\n" + exp("a.c:1", 0.0, 10 ** 6, [("t", "p", 1000)])
    for d in (1100, 1150, 1120):
        text += exp("a.c:1", 0.5, 10 ** 6, [("t", "p", d)])
    exps, _, _ = cozprofile.parse_profile(text)
    r = analysis.analyse(exps, errors=True)[0]
    base = analysis.baseline_errors(exps, "p")[50]
    assert r["se"][50] < base / 100, (r["se"], base)
    return "out of range: none; reference 50 %%: none; sums: %.1f (the baselines' would be %.0f)" % (
        r["se"][50], base)


ALL = [test_throughput_math, test_appended_runs_aggregate, test_drift_local_baseline,
       test_local_baselines_neighbours,
       test_baseline_fallback_and_min_delta,
       test_latency_math_sign, test_latency_and_throughput_agree, test_end_to_end_point,
       test_subclass_selected_and_legacy_records, test_fit_and_slope, test_parser_errors,
       test_reports_render, test_report_names_a_baseline_not_at_zero,
       test_truncated_last_line, test_json_profile_hint,
       test_fuzz_parser, test_bcozlib_modules, test_actual_estimate, test_min_runs,
       test_standard_error_calibrated, test_errors_only_where_predicted]
