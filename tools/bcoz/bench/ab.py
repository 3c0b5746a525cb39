#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Two settings of bcoz on one ground-truth row, in alternating runs.

A change to the runtime's method moves a prediction by a few points, and
a machine whose speed swings (a busy host, a TCG guest on it) moves it by
more between minutes: runs of A then runs of B compare two minutes, not
two methods.  This runs them in turn, A B A B ..., on one calibration of
the program, and prints each run's prediction at LEVEL and its pauses
against the delay owed (BCOZ_STATS), then each setting's prediction over
all its runs with its standard error (bcoz plot's).

usage: tools/bcoz/bench/ab.py [--runs N] [--experiments N] [--level N]
                              [--hold-sample-rate] CASE SETTING_A SETTING_B
  CASE       "program MARKER" of tests/truth.py (bench/truth.sh lists them),
             e.g. "sleep-pipe-worker SLEEP_R"
  SETTING    BCOZ_* assignments separated by spaces, or "" for the defaults,
             e.g. "" "BCOZ_SPIN_PAUSES=1"
  --runs N   runs of each setting (default 8), --experiments per run
             (default 24), --level the line speedup (default 50)
  --hold-sample-rate  keep the kernel from lowering perf_event_max_sample_rate
             (as the guest suite does; for a throwaway guest, as root)
In the VM (KERNEL_FLAVOUR= boots the suite's lockdep kernel; run-vm.sh joins
its command into one shell line, so quote it whole):
  KERNEL_FLAVOUR= scripts/run-vm.sh --timeout 3000 -- 'tools/bcoz/bench/ab.py \\
      --hold-sample-rate "sleep-pipe-worker SLEEP_R" "" BCOZ_SPIN_PAUSES=1'
Needs: make bcoz.  A benchmark that prints numbers, not a test.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import truth  # noqa: E402


def parser(prog, doc, runs):
    """The options ab.py and split.py share, help text from DOC (a
    docstring with "usage: " and "\n  CASE" in it)."""
    ap = argparse.ArgumentParser(prog=prog, usage=doc.split("usage: ")[1].split("\n  CASE")[0],
                                 description=doc.split("usage: ")[0],
                                 epilog="CASE" + doc.split("\n  CASE", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--experiments", type=int, default=24)
    ap.add_argument("--level", type=int, default=50, choices=range(5, 101, 5), metavar="N")
    ap.add_argument("--hold-sample-rate", action="store_true")
    ap.add_argument("case")
    return ap


def main(argv):
    ap = parser("ab.py", __doc__, 8)
    ap.add_argument("settings", nargs=2)
    o = ap.parse_args(argv)
    if o.runs < 1 or o.experiments < 2:
        ap.error("want --runs of at least 1 and --experiments of at least 2")
    runs, exps, level, hold = o.runs, o.experiments, o.level, o.hold_sample_rate
    case, settings = parse_case(o.case, o.settings, "ab.py")
    if case is None:
        return 2
    import run_tests as R   # the host suite's helpers (sets truth.R)
    from bcozlib import analysis
    from bcozlib import profile as cozprofile
    try:
        inherited = header(hold, settings)
        return compare(R, analysis, cozprofile, case, settings, runs, exps, level, inherited)
    except (AssertionError, OSError, ValueError, IndexError, cozprofile.ProfileError) as e:
        # run_tests' helpers and the profile reader say what failed
        print("ab.py: %s" % (str(e).strip() or type(e).__name__), file=sys.stderr)
        return 1
    finally:
        R.shutil.rmtree(R.TMP, ignore_errors=True)


def parse_case(text, setting_texts, tool):
    """truth.py's case named "program MARKER" and each setting as a dict
    of BCOZ_* assignments; (None, None) after saying what is wrong."""
    try:
        name, marker = text.split()
        case = truth.find(name, marker)
    except (ValueError, KeyError):
        print("%s: no case %r; one of: %s" % (tool, text, ", ".join(
            sorted({"%s %s" % (c[0], c[4]) for c in truth.CASES}))), file=sys.stderr)
        return None, None
    settings = []
    for s in setting_texts:
        kv = [w.split("=", 1) for w in s.split()]
        bad = [w for w in kv if len(w) != 2 or not w[0].startswith("BCOZ_")]
        if bad:
            print("%s: %r is not a setting: want BCOZ_NAME=VALUE ..." % (tool, s),
                  file=sys.stderr)
            return None, None
        settings.append(dict(kv))
    return case, settings


def header(hold, settings):
    """Print the sample rate (held or not) and the BCOZ_* settings every
    run inherits; returns the latter."""
    print("# %s" % (truth.hold_sample_rate() if hold else
                    "perf_event_max_sample_rate %s" % truth.sample_rate()))
    # the runtime's settings; not the suites' (BCOZ_TEST_*), nor the paths
    # each run sets itself, nor one that a setting gives its own value
    own = {k for s in settings for k in s}
    inherited = " ".join("%s=%s" % kv for kv in sorted(os.environ.items())
                         if kv[0].startswith("BCOZ_") and not kv[0].startswith("BCOZ_TEST_")
                         and kv[0] not in ("BCOZ_BUILD", "BCOZ_STATS", "BCOZ_OUTPUT")
                         and kv[0] not in own)
    print("# BCOZ_* settings of every run: %s" % (inherited or "defaults"))
    return inherited


def calibrate(R, case):
    """One unprofiled-speed calibration of the case's program, as the
    truth rows make it; returns (line, calibration)."""
    name, exe, key, src, marker, args, _ = case
    line = R.marker_line(src, marker)
    rc, out, err, _ = R.run(["-o", R.prof("ab-calib.coz")], [R.prog(exe), "20", "0"] + args(100),
                            rt=True)
    assert rc == 0, "the calibration run failed: %s" % err.strip()
    assert "%s=" % key in out, "the calibration run printed no %s=: %s" % (key, out.strip())
    return line, R.calibration(out, key)


def compare(R, analysis, cozprofile, case, settings, runs, exps, level, inherited):
    name, exe, key, src, marker, args, _ = case
    line, calib = calibrate(R, case)
    print("# %s %s, line %s at %d %%, calibration %s=%d, %d runs of %d experiments each" % (
        name, marker, line, level, key, calib, runs, exps))
    # each setting's runs appended to one profile, so that its runs keep
    # their own labels (the local baselines' error counts on them)
    whole = [R.prof("ab-%s.coz" % "AB"[si]) for si in range(len(settings))]
    tot = [[0, 0] for _ in settings]
    for r in range(runs):
        for si, s in enumerate(settings):
            p, st = R.prof("ab.coz"), R.prof("ab.stats")
            rc, out, err, dt = R.run(["-o", p, "--fixed-line", line, "--speedups", "0,%d" % level],
                                     [R.prog(exe), "0", str(calib)] + args(100),
                                     experiments=exps, env=dict(s, BCOZ_STATS=st), rt=True)
            assert rc == 0, "run %d of setting %s failed: %s" % (r, "AB"[si], err.strip())
            with open(p) as f, open(whole[si], "a") as w:
                w.write(f.read())
            try:
                pred = R.curve(p, line).get(level)
            except AssertionError:      # no prediction from this run alone
                pred = None
            s1 = R.stats(st)
            tot[si][0] += s1["pause_ns"]
            tot[si][1] += s1["global_delay_ns"]
            print("run %2d %s: %s  paused %5.0f ms for %5.0f owed (%.0f late, %.0f carried)" % (
                r, "AB"[si], "n/a" if pred is None else "%+6.1f" % pred, s1["pause_ns"] / 1e6,
                s1["global_delay_ns"] / 1e6, s1["overslept_ns"] / 1e6,
                s1.get("carried_ns", 0) / 1e6), flush=True)
    for si, s in enumerate(settings):
        # what the runs had: the setting over the environment it inherits
        ran = {k: os.environ[k] for k in {k for x in settings for k in x} if k in os.environ}
        ran.update(s)
        exps_all, _, _ = cozprofile.read_profile(whole[si])
        res = [x for x in analysis.analyse(exps_all, errors=True) if x["selected"].endswith(line)]
        sp = res[0]["speedups"].get(level) if res else None
        se = res[0].get("se", {}).get(level) if res else None
        print("%s %-28s %s (SE %s) over %d runs; paused %.0f ms for %.0f owed (%.3f)" % (
            "AB"[si], " ".join("%s=%s" % kv for kv in sorted(ran.items())) or
            ("(inherited only)" if inherited else "defaults"),
            "n/a" if sp is None else "%+.1f" % sp, "-" if se is None else "%.1f" % se, runs,
            tot[si][0] / 1e6, tot[si][1] / 1e6, tot[si][0] / tot[si][1] if tot[si][1] else 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
