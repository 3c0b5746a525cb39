#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a pipeline's worker spends an item at 0 % and at LEVEL.

A line with no effect reads below zero when the program, at the line's
virtual speedup, runs slower than its pauses account for.  This finds
where: whole runs of a pipeline row of tests/truth.py at
--fixed-speedup 0 and at --fixed-speedup LEVEL, alternating on one
calibration, and per item of the worker (pipeline.c's printout and
BCOZ_STATS) its wall time, the program's pauses, the wall time less the
pauses, its wait in get() (the queue's lock, where most delay is paid),
its loop, its thread's CPU time, the part of that in the loop, how often
it was found on another CPU than at its previous look (three looks an
item), and bcoz's own processing (at LEVEL the CPU time includes the
spinning part of each pause, all of a spinning pause, and bcoz's signal
handler; get() counts the wait for the first item too; the loop less its
CPU time is what the worker waited inside the loop: a sleeping pause from
the timer, or a CPU taken).  The last
line: the wall time less the pauses at LEVEL minus the wall time at 0 %,
per pair of runs, the mean and its standard error; about zero when the
pauses account for the slowdown (a no-effect line reading 0).

usage: tools/bcoz/bench/split.py [--runs N] [--experiments N] [--level N]
                                 [--hold-sample-rate] CASE [SETTING]
  CASE       a pipeline row of tests/truth.py, e.g. "sleep-pipe-worker SLEEP_R"
  SETTING    BCOZ_* assignments for every run, separated by spaces
  --runs N   pairs of runs (default 6), --experiments per run (default 24),
             --level the line speedup (default 50)
  --hold-sample-rate  as in ab.py (a throwaway guest, as root)
In the VM (quote the command whole):
  KERNEL_FLAVOUR= scripts/run-vm.sh --timeout 3000 -- 'tools/bcoz/bench/split.py \\
      --hold-sample-rate "sleep-pipe-worker SLEEP_R"'
Needs: make bcoz.  A benchmark that prints numbers, not a test.
"""
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ab  # noqa: E402

ITEM = re.compile(r"(\d+) rounds done wall_ms=([\d.]+) .*w_ms=([\d.]+) g_ms=([\d.]+) "
                  r"w_cpu_ms=([\d.]+) w_loop_cpu_ms=([\d.]+) w_mig=([\d.]+)")
COLUMNS = ("wall", "pauses", "wall-pauses", "get", "loop", "cpu", "loopcpu", "mig", "own")


def item_split(out, st):
    """Per item of the worker, in ms: the columns above, from the
    program's printout and BCOZ_STATS."""
    m = ITEM.search(out)
    assert m, "the program printed no per-item times (a pipeline row?): %s" % out.strip()
    n = int(m.group(1))
    assert n > 0, "the program made no item: %s" % out.strip()
    wall, pauses = float(m.group(2)) / n, st["pause_ns"] / 1e6 / n
    return dict(zip(COLUMNS, (wall, pauses, wall - pauses, float(m.group(4)),
                              float(m.group(3)), float(m.group(5)), float(m.group(6)),
                              float(m.group(7)), st["process_ns"] / 1e6 / n))), n


def main(argv):
    ap = ab.parser("split.py", __doc__, 6)
    ap.add_argument("setting", nargs="?", default="")
    o = ap.parse_args(argv)
    if o.runs < 2 or o.experiments < 2:
        ap.error("want --runs and --experiments of at least 2")
    case, settings = ab.parse_case(o.case, [o.setting], "split.py")
    if case is None:
        return 2
    if case[1] != "pipeline":
        print("split.py: %r is not a pipeline row; one of: %s" % (o.case, ", ".join(
            sorted({"%s %s" % (c[0], c[4]) for c in ab.truth.CASES if c[1] == "pipeline"}))),
            file=sys.stderr)
        return 2
    import run_tests as R
    try:
        ab.header(o.hold_sample_rate, settings)
        return split(R, case, settings[0], o.runs, o.experiments, o.level)
    except (AssertionError, OSError, ValueError, KeyError, IndexError) as e:
        print("split.py: %s" % (str(e).strip() or type(e).__name__), file=sys.stderr)
        return 1
    finally:
        R.shutil.rmtree(R.TMP, ignore_errors=True)


def split(R, case, setting, runs, exps, level):
    name, exe, key, src, marker, args, _ = case
    line, calib = ab.calibrate(R, case)
    print("# %s %s, line %s, --fixed-speedup 0 and %d, calibration %s=%d, %d pairs of runs "
          "of %d experiments; per item of the worker, ms:" % (
              name, marker, line, level, key, calib, runs, exps))
    print("%-9s %5s " % ("run", "items") + " ".join("%11s" % c for c in COLUMNS))
    sums = {0: dict.fromkeys(COLUMNS, 0.0), level: dict.fromkeys(COLUMNS, 0.0)}
    diffs = []
    for r in range(runs):
        row = {}
        # each pair in turn begins with the other level: a machine whose
        # speed drifts then favours neither
        for sp in (0, level) if r % 2 == 0 else (level, 0):
            st = R.prof("split.stats")
            rc, out, err, _ = R.run(["-o", R.prof("split.coz"), "--fixed-line", line,
                                     "--fixed-speedup", str(sp)],
                                    [R.prog(exe), "0", str(calib)] + args(100),
                                    experiments=exps, env=dict(setting, BCOZ_STATS=st), rt=True)
            assert rc == 0, "run %d at %d %% failed: %s" % (r, sp, err.strip())
            row[sp], n = item_split(out, R.stats(st))
            for c in COLUMNS:
                sums[sp][c] += row[sp][c]
            print("%2d at %3d%% %5d " % (r, sp, n) + " ".join(
                "%11.3f" % row[sp][c] for c in COLUMNS), flush=True)
        diffs.append(row[level]["wall-pauses"] - row[0]["wall"])
    for sp in (0, level):
        print("mean %3d%%       " % sp + " ".join("%11.3f" % (sums[sp][c] / runs)
                                                  for c in COLUMNS))
    mean = sum(diffs) / runs
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (runs - 1) / runs)
    base = sums[0]["wall"] / runs
    print("wall less pauses at %d %% minus wall at 0 %%: %+.3f ms an item (SE %.3f, %d pairs; "
          "%+.1f %% of the item at 0 %%)" % (level, mean, se, runs, 100 * mean / base))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
