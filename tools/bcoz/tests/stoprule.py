#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Replay the suite's stopping rule on recorded runs (a benchmark, not a test).

The suite appends runs to a profile until its prediction's standard error
is small enough (precision.until_precise).  Whether the error it then
reports is honest cannot be seen from one check; this records many runs of
one ground-truth line back to back (`--fixed-line LINE --speedups 0,50`,
12 experiments a run, the program looping until bcoz stops it) and
replays the rule from every run in turn, taking runs in order (wrapping
around), against the prediction of all runs together:

  old  stop at the first run whose bootstrap over experiments is at most
       the target (the rule before 2026-11-27);
  now  precision.standard_error from precision.MIN_RUNS runs on.

For each it prints the rms error of the predictions it stopped at, the rms
of the errors it reported, their ratio (above 1: the check believes a
smaller error than it has), the mean number of runs and the worst error.
Documentation/bcoz/bcoz.rst ("The standard error the suite believes")
holds a table made with it.

usage: stoprule.py [--runs N] [--target SE] [-o PROFILE | --replay PROFILE]
                   PROGRAM MARKER     (-h lists the options)
"""
import argparse
import math
import os
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precision as P  # noqa: E402
import run_tests as R  # noqa: E402
import truth  # noqa: E402
from precision import cozprofile  # noqa: E402


def find(name, marker):
    """The truth.py row PROGRAM MARKER, and its line."""
    try:
        case = truth.find(name, marker)
    except KeyError:
        sys.exit("stoprule: no row %s %s; the rows: %s" % (
            name, marker, ", ".join("%s %s" % (c[0], c[4]) for c in truth.CASES)))
    return case, R.marker_line(case[3], case[4])


def record(case, line, runs, path):
    _, exe, key, _, _, args, _ = case
    iters = 0
    for _ in range(runs):
        rc, out, err, _ = R.run(["-o", path, "--fixed-line", line, "--speedups", "0,50"],
                                [R.prog(exe), "0", str(iters)] + list(args(100)),
                                experiments=12, rt=True)
        if rc:
            sys.exit("stoprule: bcoz run failed (%d): %s" % (rc, err.strip()[-500:]))
        iters = iters or R.calibration(out, key)


def replay(exps, sel, target, min_runs, flat):
    """(errors, reported errors, runs used) of the rule started at each run."""
    runs = {}
    for e in exps:
        runs.setdefault(e["run"], []).append(e)
    order = [runs[k] for k in sorted(runs)]
    whole = P.prediction(exps, sel, 50)
    errs, ses, used = [], [], []
    for start in range(len(order)):
        acc = []
        for n in range(1, len(order) + 1):
            acc += [dict(e, run=0) if flat else e for e in order[(start + n - 1) % len(order)]]
            se = P.standard_error(acc, sel, 50)
            se = float("inf") if se is None else se
            if n >= min_runs and se <= target:
                break
        errs.append(P.prediction(acc, sel, 50) - whole)
        ses.append(se)
        used.append(n)
    return errs, ses, used


def rms(xs):
    return math.sqrt(statistics.mean(x * x for x in xs))


def main(argv):
    ap = argparse.ArgumentParser(
        prog="stoprule.py", description=__doc__.split("\n\n")[0],
        epilog="The experiment length is bcoz's default or BCOZ_EXP_MS.  Needs make bcoz.")
    ap.add_argument("program", help="a row of truth.py with MARKER, e.g. forkjoin LOOP_SMALL")
    ap.add_argument("marker")
    ap.add_argument("--runs", type=int, default=30, help="runs to record (at least 3)")
    ap.add_argument("--target", type=float, default=float(os.environ.get("BCOZ_TEST_SE", "2.5")),
                    help="the rule's target (default BCOZ_TEST_SE or 2.5)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("-o", dest="keep", help="keep the recorded profile there")
    where.add_argument("--replay", help="replay a profile recorded before instead")
    o = ap.parse_args(argv)
    if o.runs < 3:
        ap.error("--runs %d: at least 3" % o.runs)
    case, sel = find(o.program, o.marker)
    prof = o.replay
    if prof is None:
        prof = o.keep or R.prof("runs.coz")
        if os.path.exists(prof):
            os.unlink(prof)
        record(case, sel, o.runs, prof)
    try:
        exps, _, nruns = cozprofile.read_profile(prof)
    except cozprofile.ProfileError as e:
        sys.exit("stoprule: %s" % e)
    print("%s %s (%s): %d runs, %d experiments; target %.1f" % (
        o.program, o.marker, sel, nruns, len(exps), o.target))
    for name, min_runs, flat in (("old", 1, True), ("now", P.MIN_RUNS, False)):
        errs, ses, used = replay(exps, sel, o.target, min_runs, flat)
        print("%s: rms error %.2f / rms SE %.2f = %.2f, %.1f runs, worst %.1f" % (
            name, rms(errs), rms(ses), rms(errs) / rms(ses), statistics.mean(used),
            max(abs(e) for e in errs)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        shutil.rmtree(R.TMP, ignore_errors=True)
