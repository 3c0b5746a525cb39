#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bcoz host test suite (works on a stock kernel: on-CPU profiling only).

Numeric tests use programs whose answer is known by construction and whose
ground truth is measured in the same run:
  toy  - loops A (2 units) and B (1 unit) run in parallel per progress visit:
         speeding A by s gives ~s up to where B becomes critical, then flat;
         speeding B gives ~0.  The program reports each loop's CPU time, and
         the expected curve is computed from those (the loops need not run
         at the same speed on this machine).
  lock - two threads serialised on a mutex around L (4 units), O (1 unit)
         outside: speeding L gives ~s; speeding O gives ~0.
  pipeline, forkjoin, twin (tests/truth.py) - a reader-bound pipeline, a
         fork-join and two threads running one line, each line's
         prediction at 50 % against actual-speedup runs made in the same
         test (+-10); forkjoin's small worker >= -5 (judged at a standard
         error of 1.5); twin's line at most 5 above its actual.
Every causal run is sized by its outcome, not by an amount of work: the
program loops until `bcoz run --experiments N` has N experiments and sends
SIGTERM; a run that does not get there within BCOZ_TEST_TIMEOUT seconds
(default 300) fails saying so.  Experiments interleave the speedup levels
inside one run (--speedups), so slow load drift cancels out.  Tolerances are
+-10 points.

As root, with RT throttling active (the kernel keeps 5 % of each CPU for
everybody else), the numeric runs use SCHED_RR (`chrt -r 1`): causal
profiling measures wall time, and a CPU hog beside the test would otherwise
take a varying share of the CPUs from the program.  Round-robin, not FIFO:
two suites run at once (two checkouts on one machine) each spin two threads
at the same priority, and under FIFO a spinning thread keeps its CPU for
good, so the others (bcoz's profiler thread among them) starve and the runs
hang.  BCOZ_TEST_RT=0 turns this off.  With fewer than 2 usable CPUs (taskset -c 0) the tests whose ground
truth is "the two threads run in parallel" are skipped, with that reason.

Environment: BCOZ_BUILD (build dir), BCOZ_TEST_TIMEOUT, BCOZ_TEST_RT.
Prints TAP (tests/tap.py); exits 1 on any failure.
"""
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
BUILD = os.environ.get("BCOZ_BUILD", os.path.join(SRC, "..", "..", "build", "bcoz"))
BCOZ = os.path.join(BUILD, "bcoz")
TOL = 10.0
TIMEOUT = float(os.environ.get("BCOZ_TEST_TIMEOUT", "300"))
# causal runs go on (appending runs) until the standard error of each
# checked prediction is at most this many points: MAX_RUNS runs always, more
# while the check's runs took less than PRECISE_BUDGET_S seconds
SE_TARGET = float(os.environ.get("BCOZ_TEST_SE", "2.5"))
MAX_RUNS = 4
PRECISE_BUDGET_S = float(os.environ.get("BCOZ_TEST_BUDGET", "120"))
# a check whose error is still above TOL / 3 then says so and is skipped: on
# noise alone a +-10 check at SE 5.7 failed one CI run (toy B read -12.7)
SE_GATE = TOL / 3
# actual-speedup runs: rounds of alternating runs, added until precise:
# to SE_TARGET within ACTUAL_MAX_REPS rounds, to SE_GATE within
# ACTUAL_MORE_REPS; an actual still less precise than that is not judged
ACTUAL_MIN_REPS, ACTUAL_MAX_REPS, ACTUAL_MORE_REPS = 8, 16, 32
NCPU = len(os.sched_getaffinity(0))

sys.path.insert(0, HERE)
sys.path.insert(0, SRC)
from bcozlib import analysis, report  # noqa: E402
from bcozlib import profile as cozprofile  # noqa: E402
import precision  # noqa: E402
import truth  # noqa: E402
import unit_tests  # noqa: E402
from tap import Tap  # noqa: E402

truth.R = sys.modules[__name__]

TMP = tempfile.mkdtemp(prefix="bcoz-test-")


class Skip(Exception):
    pass


def marker_line(src, marker):
    with open(os.path.join(HERE, src)) as f:
        for i, line in enumerate(f, 1):
            if "/* %s */" % marker in line:
                return "%s:%d" % (src, i)
    raise RuntimeError("marker %s not in %s" % (marker, src))


def rt_prefix():
    """`chrt -r 1` for the timing-sensitive runs, when it is safe.

    Only as root, and only with RT throttling active (sched_rt_runtime_us
    below the period), so a runaway test cannot lock the machine.
    """
    if os.environ.get("BCOZ_TEST_RT", "1") == "0" or os.geteuid() != 0 or \
            not shutil.which("chrt"):
        return []
    try:
        with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
            rt = int(f.read())
        with open("/proc/sys/kernel/sched_rt_period_us") as f:
            per = int(f.read())
    except (OSError, ValueError):
        return []
    if rt <= 0 or rt >= per:
        return []
    if subprocess.run(["chrt", "-r", "1", "true"], capture_output=True).returncode:
        return []
    return ["chrt", "-r", "1"]


RT = rt_prefix()


def run(args, prog, experiments=None, timeout=None, env=None, rt=False, prefix=()):
    """bcoz run ARGS --- PROG; with EXPERIMENTS, the program (started with
    rounds 0) runs until bcoz has that many experiments.  PREFIX runs the
    command under another, e.g. taskset."""
    timeout = timeout or TIMEOUT
    if experiments:
        args = ["--experiments", str(experiments)] + args
    cmd = list(prefix) + (RT if rt else []) + [BCOZ, "run"] + args + ["---"] + prog
    e = dict(os.environ)
    e.update(env or {})
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired:
        what = ("%d experiments were not done" % experiments) if experiments else \
            "the run did not end"
        raise AssertionError("%s within %.0f s (a hang, or a machine too slow for this "
                             "test; BCOZ_TEST_TIMEOUT raises the limit): %s"
                             % (what, timeout, " ".join(cmd)))
    return p.returncode, p.stdout, p.stderr, time.time() - t0


def prof(name):
    p = os.path.join(TMP, name)
    if os.path.exists(p):
        os.unlink(p)
    return p


def curve(path, line, local=True):
    exps, _, _ = cozprofile.read_profile(path)
    for r in analysis.analyse(exps, local):
        if r["selected"].endswith(line):
            return r["speedups"]
    raise AssertionError("no prediction for %s in %s (%d experiments)"
                         % (line, path, len(exps)))


def fmt(c):
    return " ".join("%d%%->%+.1f" % (k, v) for k, v in sorted(c.items()))


def check_near(c, s, want, tol=TOL, info=None):
    assert s in c, "no data at %d%%: %s" % (s, info or fmt(c))
    assert abs(c[s] - want) <= tol, "at %d%%: %+.1f, want %+.1f +- %.0f (%s)" % (
        s, c[s], want, tol, info or fmt(c))


def prog(name):
    """A test program of the build, or NAME itself when it is a path."""
    return name if os.path.isabs(name) else os.path.join(BUILD, "tests", name)


def need_precise(se, info, runs, secs):
    """Skip a check whose prediction's standard error SE (points) is above
    SE_GATE: the machine was too noisy for its tolerance in the time it may
    take.  An error that could not be computed (a level without a
    prediction) is a failure, not noise.  INFO: the check's numbers."""
    assert math.isfinite(se), "no standard error: a checked level has no prediction (%s)" % info
    if se > SE_GATE:
        raise Skip("the prediction (%s) is not precise enough on this machine: standard "
                   "error %.1f points "
                   "after %d run(s) (%.0f s), a +-%.0f check needs at most %.1f (an idle "
                   "2-CPU machine gives 1.5-3; BCOZ_TEST_BUDGET=%.0f seconds may be raised)"
                   % (info, se, runs, secs, TOL, SE_GATE, PRECISE_BUDGET_S))


def actual_precise(ase, rounds):
    """'' if the actual speedup's standard error ASE (points, after ROUNDS
    rounds) is at most SE_GATE, else why it is not judged: the ground truth
    is then as uncertain as the tolerance, and a check against it fails on
    noise (a +-10 check with errors of 2.8 and 4.0 fails about 1 run in 20)."""
    if ase <= SE_GATE:
        return ""
    return ("the actual speedup is not precise enough on this machine to judge a "
            "prediction by: standard error %.1f points after %d rounds, a +-%.0f check "
            "needs at most %.1f" % (ase, rounds, TOL, SE_GATE))


def need_two_cpus():
    if NCPU < 2:
        raise Skip("needs 2 usable CPUs, has %d: the expected curve assumes the two "
                   "threads run in parallel, and on one CPU they take turns" % NCPU)


# ---------------------------------------------------------------- tests

def toy_truth(out):
    """Expected program speedups from the loops' measured CPU times.

    By construction loop A does 3x loop B's work.  On a shared or virtual
    machine the two threads can run at different speeds, so the truth is
    computed from what the loops really cost in this run:
    round(sA, sB) = max(A (1 - sA), B (1 - sB)), speedup = 1 - round/round(0, 0).
    """
    m = re.search(r"cpu_a_ms=([0-9.]+) cpu_b_ms=([0-9.]+)", out)
    assert m, out
    a, b = float(m.group(1)), float(m.group(2))

    def sp(sa, sb):
        return (1 - max(a * (1 - sa), b * (1 - sb)) / max(a, b)) * 100
    return a, b, sp


def timed_run(args, secs):
    """Rounds per second of wall time, as the program timed itself, and its
    output: it runs with rounds 0 for SECS and is stopped with SIGTERM."""
    p = subprocess.Popen(RT + [prog(args[0]), "0"] + args[1:], stdout=subprocess.PIPE, text=True)
    time.sleep(secs)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    m = re.search(r"(\d+) rounds done.* wall_ms=([0-9.]+)", out)
    assert m and int(m.group(1)) > 0 and float(m.group(2)) > 0, out
    return int(m.group(1)) / float(m.group(2)) * 1e3, out


def timed_rounds(args, secs):
    return timed_run(args, secs)[0]


def rounds_per_s(rps, outs):
    """actual_runs()' default view: each run's rounds per second."""
    return rps, "rounds/s"


def actual_runs(name, iters, levels, args=None, secs=1.0, view=rounds_per_s, target=None):
    """Runs of NAME whose line really is LEVELS % shorter (the program's
    percent argument; ARGS(percent) gives the arguments after the
    calibration ITERS, default the percent), and of the unchanged program:
    ({level: [value, ...]}, {level: [rounds/s, ...]}, what the values are),
    level 0 included.  VIEW(rps, outs) turns the runs' rounds per second
    and outputs into the values measured (by default rounds per second;
    tests/truth.py's pipelines count rounds in the time of a busy stage left
    unchanged).  Runs at every level alternate, SECS each, so that load
    drift hits all of them; rounds of them are added, at least
    ACTUAL_MIN_REPS, until the bootstrap standard error of every speedup
    (precision.actual_estimate; capped when VIEW counted something other
    than rounds per second) is at most TARGET points (default SE_TARGET) or
    ACTUAL_MAX_REPS rounds were made, and past that up to ACTUAL_MORE_REPS
    while it is above SE_GATE (actual_precise()): on a shared host whose
    speed swings by 20 % within seconds, a fixed five rounds read lock L at
    25 % anywhere from +10 to +32, and sixteen left the pipeline's worker at
    +9.3 (SE 4.0) for a true 0."""
    args = args or (lambda pct: [str(pct)])
    target = SE_TARGET if target is None else target
    rps = {s: [] for s in (0,) + tuple(levels)}
    outs = {s: [] for s in rps}
    while True:
        for s in rps:
            rate, out = timed_run([name, str(iters)] + args(100 - s), secs)
            rps[s].append(rate)
            outs[s].append(out)
        n = len(rps[0])
        if n < ACTUAL_MIN_REPS:
            continue
        vals, what = view(rps, outs)
        ase = max(precision.actual_estimate(vals[0], vals[s], vals is not rps)[1]
                  for s in levels)
        if (ase <= target or n >= ACTUAL_MORE_REPS or
                (n >= ACTUAL_MAX_REPS and ase <= SE_GATE)):
            return vals, rps, what


def actual_speedups(name, iters, levels, args=None):
    """({line speedup %: measured program speedup %}, standard error, rounds)
    from actual_runs(), each level by precision.actual_estimate(): the best
    run of each level, or the median of the paired runs, whichever is more
    precise.  Best-of, because on a busy machine (another suite's threads
    at the same real-time priority, time-sliced in 100 ms quanta) medians
    of three read +35 and +57 for loop A at 25 and 50 %; paired, because on
    a host whose speed swings both ways best-of read forkjoin's big worker
    +25.1 where its pairs read +42.1."""
    rps = actual_runs(name, iters, levels, args)[0]
    ests = {s: precision.actual_estimate(rps[0], rps[s]) for s in levels}
    return ({s: e[0] for s, e in ests.items()}, max(e[1] for e in ests.values()),
            len(rps[0]))


def calibration(out, key):
    m = re.search(r"%s=(\d+)" % key, out)
    assert m, out
    return int(m.group(1))


def precise_run(path, args, name, calib_key, experiments, sel, levels, extra=(),
                target=None, budget_s=None, hard_max=24):
    """bcoz run ARGS --- NAME until the predictions at LEVELS are precise.

    The first run calibrates the program's rounds (it prints CALIB_KEY);
    later runs reuse that calibration and append to the same profile, until
    the largest bootstrap standard error over LEVELS is at most TARGET
    points (default SE_TARGET), or at least MAX_RUNS runs were made and
    they took BUDGET_S (default PRECISE_BUDGET_S), or
    HARD_MAX runs were made (precision.py: the rule looks at the spread
    only, never at the value).  EXTRA: the program's arguments after
    the calibration.  Returns the first run's output, the calibration, the
    standard error, the number of runs and the time."""
    first = {}

    def run_once(n):
        iters = calibration(first["out"], calib_key) if n > 1 else 0
        rc, out, err, dt = run(["-o", path] + args,
                               [prog(name), "0", str(iters)] + list(extra),
                               experiments=experiments, rt=True)
        assert rc == 0, err
        first.setdefault("out", out)
        first["t"] = first.get("t", 0.0) + dt

    se, runs = precision.until_precise(
        path, sel, levels, run_once, SE_TARGET if target is None else target, MAX_RUNS,
        PRECISE_BUDGET_S if budget_s is None else budget_s, hard_max)
    return first["out"], calibration(first["out"], calib_key), se, runs, first["t"]


def t_toy_line_a():
    need_two_cpus()
    line = marker_line("toy.c", "LOOP_A")
    p = prof("toy_a.coz")
    out, iters, se, runs, dt = precise_run(p, ["--fixed-line", line, "--speedups", "0,25,50,75"],
                                           "toy", "b_iterations", 48, line, (25, 50, 75))
    return check_toy_a(curve(p, line), out, "toy", iters, se, runs, dt)


def check_toy_a(c, out, exe, iters, se, runs, dt):
    """Loop A's curve against two truths measured in this test.

    The CPU-time model, from what each loop cost in the profiled run:
    round(sA) = max(A (1 - sA), B), which is what virtual speedup can
    promise (A is delayed nowhere, B pays for A's speedup while it runs
    beside A), checked at 25, 50 and 75 %: the knee, 1 - B/A, is at 58-63 %
    on the development guest, so 50 and 75 % sit on either side of it and
    the curve's shape is checked too.  And runs whose loop A really is
    shorter, checked at 25 %, where A stays critical either way.  Above,
    the two truths part on machines whose CPUs slow each other down
    (hyperthreads, a shared host): a really shorter A leaves B running
    beside it for more of the round, which virtual speedup does not see;
    COZ's method shares the limit.  Both truths are printed.
    """
    a, b, model = toy_truth(out)
    truth, ase, reps = actual_speedups(exe, iters, (25, 50, 75))
    info = ("%s; CPU-time model %s (B/A = %.2f); actual %s (SE %.1f, %d rounds); "
            "SE %.1f, %d run(s) (%.0fs)") % (
        fmt(c), " ".join("%+.0f" % model(s / 100, 0) for s in (25, 50, 75)), b / a,
        " ".join("%+.1f" % truth[s] for s in (25, 50, 75)), ase, reps, se, runs, dt)
    need_precise(se, info, runs, dt)
    for s in (25, 50, 75):
        check_near(c, s, model(s / 100, 0), info=info)
    why = actual_precise(ase, reps)
    if why:
        return info + "; " + why
    check_near(c, 25, truth[25], info=info)
    return info


def t_toy_line_b():
    need_two_cpus()
    line = marker_line("toy.c", "LOOP_B")
    p = prof("toy_b.coz")
    out, iters, se, runs, dt = precise_run(p, ["--fixed-line", line, "--speedups", "0,50"],
                                           "toy", "b_iterations", 12, line, (50,))
    c = curve(p, line)
    a, b, truth = toy_truth(out)
    info = "%s; truth %+.0f (B/A = %.2f); SE %.1f, %d run(s) (%.0fs)" % (
        fmt(c), truth(0, 0.5), b / a, se, runs, dt)
    need_precise(se, info, runs, dt)
    check_near(c, 50, truth(0, 0.5), info=info)
    return info


def stripped_toy(kind):
    """A copy of toy without line tables: "debug" strips the debug info
    (.symtab stays), "dynsym" builds it with loop_a and loop_b made global
    and exported (-rdynamic) and strips everything but .dynsym, "none" is
    built as distributions build (-O2, no frame pointers) and has no symbol
    at all."""
    path = os.path.join(TMP, "toy-" + kind)
    if os.path.exists(path):
        return path
    if kind == "debug":
        shutil.copy(prog("toy"), path)
        subprocess.run(["strip", "--strip-debug", path], check=True)
    elif kind == "none":
        subprocess.run(["gcc", "-O2", "-fomit-frame-pointer", "-I", os.path.join(SRC, "include"),
                        "-o", path, os.path.join(HERE, "toy.c"), "-lpthread"], check=True)
        subprocess.run(["strip", "--strip-all", path], check=True)
    else:
        obj = path + ".o"
        subprocess.run(["gcc", "-O1", "-fno-omit-frame-pointer", "-I",
                        os.path.join(SRC, "include"), "-c", "-o", obj,
                        os.path.join(HERE, "toy.c")], check=True)
        subprocess.run(["objcopy", "--globalize-symbol=loop_a", "--globalize-symbol=loop_b",
                        obj], check=True)
        subprocess.run(["gcc", "-rdynamic", "-o", path, obj, "-lpthread"], check=True)
        subprocess.run(["strip", "--strip-all", path], check=True)
    sec = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    assert ".debug_line" not in sec, sec
    assert (".symtab" in sec) == (kind == "debug"), sec
    return path


def t_toy_function_a():
    """Stripped toy (no line tables): loop_a as a whole function, checked
    as loop A's line is (check_toy_a)."""
    need_two_cpus()
    exe = stripped_toy("debug")
    p = prof("toy_fa.coz")
    out, iters, se, runs, dt = precise_run(p, ["--fixed-function", "loop_a",
                                               "--speedups", "0,25,50,75"],
                                           exe, "b_iterations", 48, "loop_a", (25, 50, 75))
    c = curve(p, "loop_a")
    exps, _, _ = cozprofile.read_profile(p)
    assert {e["selected"] for e in exps} == {"loop_a"}, {e["selected"] for e in exps}
    return check_toy_a(c, out, exe, iters, se, runs, dt)


CXX_FUNCS = r"""#include <csignal>
#include <cstdio>
#include "coz.h"
namespace work {
template <typename T> struct Acc { volatile T v; };
__attribute__((noinline)) long spin(Acc<long> &a, long n)
{ for (long i = 0; i < n; i++) a.v = a.v + i; return a.v; }
template <typename T> __attribute__((noinline)) T twice(Acc<T> &a, T n)
{ for (T i = 0; i < n; i++) a.v = a.v + 2 * i; return a.v; }
template long twice<long>(Acc<long> &, long);
template int twice<int>(Acc<int> &, int);
/* all its time is in spin: selecting outer must catch spin's samples */
__attribute__((noinline)) long outer(Acc<long> &a, long n)
{ long r = spin(a, n); asm volatile("" ::: "memory"); return r + 1; }
}
static volatile std::sig_atomic_t stop;
int main()
{
	work::Acc<long> a{0};
	std::signal(SIGTERM, [](int) { stop = 1; });
	work::Acc<int> b{0};
	while (!stop) {
		work::outer(a, 200000);
		work::twice(a, 1000L);
		work::twice(b, 1000);
		COZ_PROGRESS;
	}
	std::printf("done %ld\n", (long)a.v);
	return 0;
}
"""


def t_scope_all_not_runtime():
    """-b % (every object in scope) never puts bcoz's own library there: each
    thread starts in the runtime's pthread_create trampoline, and with
    libbcoz.so in scope that frame took 96 % of xz -T2's samples.  And
    glibc's lines (with libc6-dbg) read ./posix/regcomp.c, as gdb names
    them, not ./posix/posix/regcomp.c."""
    p = prof("all.coz")
    rc, out, err, _ = run(["-o", p, "-b", "%"], [prog("toy"), "0", "0"], experiments=2,
                          timeout=120)
    assert rc == 0, err
    _, samples, _ = cozprofile.read_profile(p)
    own = sorted(k for k in samples if "/tools/bcoz/src/" in k or k.startswith("bcoz_"))
    assert not own, "bcoz's own code in the profile: %s" % own[:5]
    # glibc's comp_dir is relative ("./posix"), and was joined twice
    twice = sorted(k for k in samples if re.match(r"\./([^/]+)/\1/", k))
    assert not twice, "a relative comp_dir joined twice: %s" % twice[:5]
    loop_a = marker_line("toy.c", "LOOP_A")
    assert any(k.endswith(loop_a) for k in samples), "no sample of %s: %s" % (
        loop_a, sorted(samples)[:10])
    # a program in write(): glibc's own line (or function, without
    # libc6-dbg) has the time.  glibc's line program runs a function's hot
    # and cold parts as one sequence; taken whole, one row of ifaddrs.c
    # covered a megabyte of libc, write() included
    p2 = prof("all-write.coz")
    rc, out, err, _ = run(["-o", p2, "-b", "%"], [prog("robust"), "write", "800"], timeout=120)
    assert rc == 0 and "robust: write" in out, err
    _, wsamples, _ = cozprofile.read_profile(p2)
    top = max(wsamples.items(), key=lambda kv: kv[1], default=("-", 0))
    assert "write" in top[0], "write()'s time went to %s: %s" % (
        top[0], sorted(wsamples.items(), key=lambda kv: -kv[1])[:4])
    return "%d locations, none in libbcoz.so; %s has %d samples; write()'s time on %s" % (
        len(samples), loop_a, sum(v for k, v in samples.items() if k.endswith(loop_a)), top[0])


def t_function_granularity():
    """The notice (once), --granularity function, --fixed-function errors,
    a .dynsym-only binary and a C++ program's demangled names."""
    msgs = []
    exe = stripped_toy("debug")
    p = prof("fg1.coz")
    rc, out, err, _ = run(["-o", p], [exe, "0", "0"], experiments=2)
    assert rc == 0, err
    assert err.count("no line tables in %s: profiling by function" % exe) == 1, err
    assert err.count("profiling by function") == 1, err
    _, samples, _ = cozprofile.read_profile(p)
    assert "loop_a" in samples and "loop_b" in samples, samples
    msgs.append("notice once")
    # forced, with debug info: functions, no notice
    p = prof("fg2.coz")
    rc, out, err, _ = run(["-o", p, "--granularity", "function", "--fixed-function", "loop_b"],
                          [prog("toy"), "0", "0"], experiments=2)
    assert rc == 0 and "profiling by function" not in err, err
    exps, samples, _ = cozprofile.read_profile(p)
    assert [e["selected"] for e in exps] == ["loop_b"] * 2, exps
    assert "loop_a" in samples and not any(":" in k for k in samples), samples
    msgs.append("--granularity function")
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-function", "loop_a"],
                          [prog("toy"), "1"], timeout=30)
    assert rc != 0 and "--granularity function" in err, err
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-function", "nosuch"],
                          [exe, "1"], timeout=30)
    assert rc != 0 and "no in-scope function is named 'nosuch'" in err, err
    assert "did you mean" not in err, err
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-function", "loop_bb"],
                          [exe, "1"], timeout=30)
    assert rc != 0 and "did you mean 'loop_b'?" in err, err
    rc, out, err, _ = run(["--granularity", "file"], [exe, "1"], timeout=30)
    assert rc == 2 and "line" in err and "function" in err, err
    msgs.append("errors")
    dyn = stripped_toy("dynsym")
    p = prof("fg3.coz")
    rc, out, err, _ = run(["-o", p, "--fixed-function", "loop_a"], [dyn, "0", "0"],
                          experiments=2)
    assert rc == 0 and "from .dynsym" in err, err
    exps, _, _ = cozprofile.read_profile(p)
    assert [e["selected"] for e in exps] == ["loop_a"] * 2, exps
    msgs.append(".dynsym only")
    # no symbol at all, libc in scope: the samples are the stripped
    # code's, not its stack's (which holds return addresses of calls made
    # long ago) nor, with libc6-dbg, glibc's (one line had 94 % of them
    # while a row of glibc's line table could cover a megabyte of code)
    bare = stripped_toy("none")
    p = prof("fg9.coz")
    rc, out, err, _ = run(["-o", p, "-b", "%"], [bare, "60", "0"], timeout=120)
    m = re.search(r"warning: (\d+)% of the samples \((\d+) of (\d+)\) were in " +
                  re.escape(bare) + ", which has no symbols", err)
    assert rc == 0 and m and int(m.group(1)) >= 80, err
    _, samples, _ = cozprofile.read_profile(p)
    top = max(samples.items(), key=lambda kv: kv[1], default=("-", 0))
    assert top[1] <= 0.05 * int(m.group(3)), (top, m.group(0))
    msgs.append("no symbols: %s%% blind, top line %d of %s samples" % (
        m.group(1), top[1], m.group(3)))
    # a data-only library (libicudata) has no code: nothing to warn about.
    # Linked without -z separate-code, its data shares the executable
    # segment, so only the sections tell how much code there is
    data_c = os.path.join(TMP, "data.c")
    data_so = os.path.join(TMP, "libdata.so")
    with open(data_c, "w") as f:
        f.write("const char blob[65536] = {1};\n"
                "__attribute__((visibility(\"hidden\"), used)) int tiny(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-nostdlib", "-fPIC", "-Wl,-z,noseparate-code", "-o",
                    data_so, data_c], check=True)
    subprocess.run(["strip", data_so], check=True)
    rc, out, err, _ = run(["-o", prof("fg10.coz"), "-b", "MAIN", "-b", "%libdata%"],
                          [prog("toy"), "3", "0"], timeout=60, env={"LD_PRELOAD": data_so})
    assert rc == 0 and "libdata" not in err, err
    msgs.append("data-only library: no warning")
    cxx = shutil.which("g++")
    if not cxx:
        return ", ".join(msgs) + "; C++ part skipped: g++ is not installed"
    src = os.path.join(TMP, "funcs.cc")
    cexe = os.path.join(TMP, "funcs")
    with open(src, "w") as f:
        f.write(CXX_FUNCS)
    c = subprocess.run([cxx, "-O1", "-fno-omit-frame-pointer", "-I", os.path.join(SRC, "include"),
                        "-o", cexe, src], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    p = prof("fg4.coz")
    rc, out, err, _ = run(["-o", p], [cexe], experiments=2)
    assert rc == 0 and "profiling by function" in err, err
    rep = subprocess.run([BCOZ, "plot", "-i", p, "--text"], capture_output=True, text=True)
    want = "work::spin(work::Acc<long>&, long)"
    assert rep.returncode == 0 and want in rep.stdout, rep.stdout + rep.stderr
    rc, out, err, _ = run(["-o", prof("fg5.coz"), "--fixed-function", "work::spin"], [cexe],
                          experiments=1)
    exps, _, _ = cozprofile.read_profile(os.path.join(TMP, "fg5.coz"))
    assert rc == 0 and [e["selected"] for e in exps] == [want], (exps, err)
    msgs.append("C++: %s" % want)
    # template instances: the return type before the name is skipped; two
    # instances need their template arguments
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-function", "work::spn"], [cexe],
                          timeout=30)
    assert rc != 0 and "did you mean '%s'?" % want in err, err
    rc, out, err, _ = run(["-o", prof("fg6.coz"), "--fixed-function", "work::twice"], [cexe],
                          timeout=30)
    assert rc != 0 and "names 2 functions" in err, err
    rc, out, err, _ = run(["-o", prof("fg7.coz"), "--fixed-function", "work::twice<long>"],
                          [cexe], experiments=1)
    exps, _, _ = cozprofile.read_profile(os.path.join(TMP, "fg7.coz"))
    assert rc == 0 and [e["selected"] for e in exps] == \
        ["long work::twice<long>(work::Acc<long>&, long)"], (exps, err)
    msgs.append("template instance")
    # a caller, in code without frame pointers: found on the stack copy
    nofp = os.path.join(TMP, "funcs-nofp")
    c = subprocess.run([cxx, "-O2", "-fomit-frame-pointer", "-I", os.path.join(SRC, "include"),
                        "-o", nofp, src], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    subprocess.run(["strip", "--strip-debug", nofp], check=True)
    p = prof("fg8.coz")
    rc, out, err, _ = run(["-o", p, "--fixed-function", "work::outer", "--fixed-speedup", "0"],
                          [nofp], experiments=2)
    exps, samples, _ = cozprofile.read_profile(p)
    sel = sum(e["selected_samples"] for e in exps)
    spin = sum(v for k, v in samples.items() if k.startswith("work::spin"))
    info = "caller without frame pointers: %d selected samples, spin %d in all" % (sel, spin)
    assert rc == 0 and spin > 0, (err, samples)
    assert sel >= 0.2 * spin, info
    msgs.append(info)
    return ", ".join(msgs)


def t_lock_line_l():
    need_two_cpus()
    line = marker_line("lock.c", "LOOP_L")
    p = prof("lock_l.coz")
    out, iters, se, runs, dt = precise_run(p, ["--fixed-line", line, "--speedups", "0,25,50"],
                                           "lock", "o_iterations", 36, line, (25, 50))
    c = curve(p, line)
    truth, ase, reps = actual_speedups("lock", iters, (25, 50))
    info = "%s; actual %s (SE %.1f, %d rounds); SE %.1f, %d run(s) (%.0fs)" % (
        fmt(c), " ".join("%+.1f" % truth[s] for s in (25, 50)), ase, reps, se, runs, dt)
    need_precise(se, info, runs, dt)
    why = actual_precise(ase, reps)
    if why:
        raise Skip("%s (%s)" % (why, info))
    check_near(c, 25, truth[25], info=info)
    check_near(c, 50, truth[50], info=info)
    return info


def t_lock_line_o():
    need_two_cpus()
    line = marker_line("lock.c", "LOOP_O")
    p = prof("lock_o.coz")
    out, iters, se, runs, dt = precise_run(p, ["--fixed-line", line, "--speedups", "0,50"],
                                           "lock", "o_iterations", 12, line, (50,))
    c = curve(p, line)
    info = "%s; SE %.1f, %d run(s) (%.0fs)" % (fmt(c), se, runs, dt)
    need_precise(se, info, runs, dt)
    check_near(c, 50, 0, info=info)
    return info


def t_late_timer():
    """Pauses stay exact when every sleep ends late.  With 2 ms of timer
    slack (lock.c's fourth argument; normal priority, as real-time threads
    have none) each sleep ends up to 2 ms late.  A sleeping pause
    (BCOZ_SLEEP_PAUSES=1, or the default where threads outnumber CPUs)
    sleeps and spins its end: past the spin cap (300 us) a late
    wake-up is taken for a preemption and charged to the thread; when every
    one of the last 8 is that late, the timer is, and the cap rises to it
    (pause_cap() in profiler.c).  Counted by BCOZ_STATS: the pauses' time
    beyond what was owed, against the pauses' time: 2.4-3.9 % in three runs
    (15 experiments; a thread's first sleep is paid); with the cap fixed at
    300 us, 59 % (485 ms of 821).  A spinning pause (BCOZ_SPIN_PAUSES=1,
    or the default where the program has a CPU per thread) never meets the
    slack."""
    need_two_cpus()
    got = []
    for how, env in (("sleeping", {"BCOZ_SLEEP_PAUSES": "1"}),
                     ("spinning", {"BCOZ_SPIN_PAUSES": "1"})):
        st_path = prof("late-%s.stats" % how)
        rc, out, err, _ = run(["-o", prof("late.coz"), "--fixed-line",
                               marker_line("lock.c", "LOOP_O"), "--fixed-speedup", "50"],
                              [prog("lock"), "0", "0", "100", "2000"],
                              experiments=15, env=dict(env, BCOZ_STATS=st_path))
        assert rc == 0 and os.path.exists(st_path), err
        st = stats(st_path)
        paused, late = st["pause_ns"], st["overslept_ns"]
        assert paused > 50e6, "%s: the program paused only %.1f ms: the check needs pauses" % (
            how, paused / 1e6)
        assert late <= 0.1 * paused, \
            "%s pauses ran %.0f ms late of %.0f ms (%.0f %%), more than 10 %%" % (
                how, late / 1e6, paused / 1e6, 100.0 * late / paused)
        got.append("%s: pauses %.0f ms, late by %.1f ms (%.1f %%)" % (
            how, paused / 1e6, late / 1e6, 100.0 * late / paused))
    return "; ".join(got)


def t_pause_kind():
    """A pause spins while the program's threads not waiting for another
    are no more than its CPUs, and sleeps otherwise (pause_ns() in
    profiler.c).  The reader-bound pipeline with its reader's line sped
    up: the worker pays, its reader computing beside it.  On one CPU
    (taskset) two running threads outnumber it: e.g. 214 of 235 pauses
    slept; on two, 186 of 186 spun (BCOZ_STATS spun and slept)."""
    need_two_cpus()
    line = marker_line("pipeline.c", "LOOP_R")
    mine = sorted(os.sched_getaffinity(0))
    got = {}
    for n_cpus in (1, 2):
        cpus = ",".join(str(c) for c in mine[:n_cpus])
        st_path = prof("kind-%d.stats" % n_cpus)
        rc, out, err, _ = run(["-o", prof("kind.coz"), "--fixed-line", line,
                               "--fixed-speedup", "50"], [prog("pipeline"), "0", "0", "reader"],
                              experiments=10, env={"BCOZ_STATS": st_path},
                              prefix=["taskset", "-c", cpus])
        assert rc == 0 and os.path.exists(st_path), err
        st = stats(st_path)
        n = st["spun"] + st["slept"]
        assert n >= 20, "CPUs %s: only %d pauses: the check needs pauses" % (cpus, n)
        got[n_cpus] = (st["spun"], st["slept"], n)
    spun, slept, n = got[1]
    assert slept >= 0.6 * n, "on one CPU %d of %d pauses slept; want most" % (slept, n)
    spun, slept, n = got[2]
    assert spun >= 0.9 * n, "on two CPUs %d of %d pauses spun; want nearly all" % (spun, n)
    return "one CPU: %d of %d pauses slept; two: %d of %d spun" % (
        got[1][1], got[1][2], got[2][0], got[2][2])


# Ground-truth programs of tests/truth.py (bench/truth.sh prints them all):
# the prediction at 50 % against actual-speedup runs made in the same test.
# A line with no effect must not read below NO_EFFECT_MIN.  Its runs go on
# to a standard error of NO_EFFECT_SE (up to NO_EFFECT_BUDGET_S seconds and
# NO_EFFECT_MAX_RUNS runs; the rule looks at the spread only), and the bound
# is judged only at that precision.  Forkjoin's small worker read, in nine
# runs at SE 2.3-2.5, +3.5 -0.0 -3.1 -0.7 -0.2 -3.6 +1.8 -2.6 -5.1, and
# +0.1 and -4.3 at SE 1.7 and 1.5; their actuals averaged -1.1 (a halved
# small worker really leaves the round a little slower on this host).  So
# at the SE of 2.5 the other checks stop at, the bound was 1.6 standard
# errors from the truth and failed one CI in about fifteen (-5.1, SE 2.5,
# actual -2.6); at 1.5 it is 2.6 away (0.5 %).
NO_EFFECT_MIN = -5.0
NO_EFFECT_SE = min(SE_TARGET, 1.5)
NO_EFFECT_BUDGET_S, NO_EFFECT_MAX_RUNS = 1.5 * PRECISE_BUDGET_S, 48


def truth_check(name, marker, no_effect=False, judge=True, over=None, se=None):
    """OVER: also hold the prediction to at most that many points above
    its actual.  SE: run both estimates to that standard error (the
    no-effect checks' budget), not the suite's."""
    need_two_cpus()
    more = dict(target=se or NO_EFFECT_SE, budget_s=NO_EFFECT_BUDGET_S,
                hard_max=NO_EFFECT_MAX_RUNS) if no_effect or se else {}
    r = truth.measure(truth.find(name, marker), **more)
    pred, act = r["predicted"], r["actual"]
    info = ("%s 50%%: %s, actual %+.1f (%s; the other estimate %+.1f; SE %.1f, %d rounds); "
            "SE %.1f, %d run(s) (%.0fs)") % (
        marker, "none" if pred is None else "%+.1f" % pred, act, r["how"], r["other"],
        r["actual_se"],
        r["rounds"], r["se"], r["runs"], r["time"])
    assert pred is not None, "no prediction: " + info
    if not judge:
        return info
    need_precise(r["se"], info, r["runs"], r["time"])
    why = actual_precise(r["actual_se"], r["rounds"])
    if why and not no_effect:
        raise Skip("%s (%s)" % (why, info))
    if why:
        info += "; " + why
    else:
        assert abs(pred - act) <= TOL, "%+.1f from the actual speedup, more than %.0f: %s" % (
            pred - act, TOL, info)
        assert over is None or pred - act <= over, \
            "%+.1f above the actual speedup, more than %.0f: %s" % (pred - act, over, info)
    if no_effect and r["se"] > NO_EFFECT_SE:
        info += ("; the no-effect bound %+.0f not judged: it needs a standard error of at "
                 "most %.1f" % (NO_EFFECT_MIN, NO_EFFECT_SE))
    elif no_effect:
        assert pred >= NO_EFFECT_MIN, "a line with no effect reads below %+.0f: %s" % (
            NO_EFFECT_MIN, info)
    return info


def t_pipeline_bottleneck():
    """Reader-bound pipeline: speeding the reader (the bottleneck).

    Its actual is counted per unit of the reader's work (truth.busy_stage):
    the model's +50 lowered by the waits the halving left the reader, not
    what the host's speed did to it.  In rounds per second a CI read
    +31.8 (SE 3.3) against a prediction of +43.2 and failed, on a host
    whose reader item took 2.6 to 9.2 ms in consecutive 1 s runs."""
    return truth_check("pipeline-reader", "LOOP_R")


def t_pipeline_other_stage():
    """Reader-bound pipeline: speeding the worker changes nothing.

    Checked against its actual speedup only: it read -5.3 (SE 1.9, actual
    +0.6) in one of five runs, so ">= -5" would not hold (issue 11 A).
    The actual is counted in the busy reader's own time (truth.busy_stage):
    in rounds per second, runs with a really halved worker read +3 to +10
    on a shared host (the reader got a quieter CPU) and failed a -2.9."""
    return truth_check("pipeline-reader", "LOOP_W")


def t_pipeline_full_queue():
    """Pipeline whose reader is 10 % ahead: speeding the worker, the queue full.

    The worker's experiments start with the queue the reader filled, and
    measured from their start the worker ran on those items at full speed
    while the reader paid the delays: +21..+25 at 50 % against an actual
    +9..+11.  An experiment is measured after its warm-up
    (BCOZ_WARMUP_PCT).

    Measured, not asserted (issue 11): on the idle host of 2026-11-28 (others
    0-3 % of the CPUs) it read +18.8 against +2.7, +10.6 against +4.6 and
    +22.7 against +2.5 within ten minutes, where the same actual runs
    counted in rounds per second read +9.2, +18.0 and +23.2: the reader's
    own item time moves with what the worker does, so the truth is not
    stable there, and the check failed one run in two (one in eight CIs
    before).  Within one profile, 50 % experiments that follow a 0 % one
    and those that follow a 50 % one read alike with the warm-up (+9.2 and
    +13.0) and without it (+19.3 and +16.8), so the queue carried over is
    not what moves it.  The prediction and its actual are printed in the
    skip reason for the record."""
    info = truth_check("pipeline-fullq", "LOOP_W", judge=False)
    raise Skip("measured, not asserted while issue 11 is open (the actual is not stable "
               "on a 2-CPU virtual machine, see the docstring): " + info)


def t_forkjoin_big():
    """Fork-join: speeding the big worker of each round."""
    return truth_check("forkjoin", "LOOP_BIG")


def t_forkjoin_small():
    """Fork-join: speeding the small worker changes nothing."""
    return truth_check("forkjoin", "LOOP_SMALL", no_effect=True)


# twin's line may read at most this far above its actual (t_twin_threads)
TWIN_OVER = 5.0


def t_twin_threads():
    """Two threads running the same line, each handing off every 0.2 ms
    (tests/twin.c): the line is all the work, about +50 at 50 %.

    The thread behind pauses in the hand-off's wrapper, and then the
    hand-off credits its CPU time since its last sample to the line, a
    debt its next hits pay back.  That CPU time held the pause's spin:
    the line earned delay for bcoz's own pauses, and read high, +8.4 and
    +8.1 above the actual (spinning and sleeping pauses, 2026-11-29).
    The spins' counts are kept out now (spin_start() in profiler.c): it
    read -3.9 to -5.9 below it in five truth.py runs at SE 1.5, -2.4 of
    it below the profiled actual (truth.py --profiled), the rest the
    profiling's own cost at each hand-off; this test read -7.7 and -2.5
    at SE 2.3-2.4.  So it runs to the no-effect checks' SE of 1.5: at
    2.5 the ±10 had 1.5 standard errors of room, and the old runtime's
    +8 would pass the bound above one time in eight.  Beside the suite's
    tolerance, the reading above the actual is held to TWIN_OVER."""
    return truth_check("twin", "LOOP_X", over=TWIN_OVER, se=NO_EFFECT_SE)


def t_own_time():
    """bcoz's own thread set-up and tear-down is sped away (own_credit_ns).

    forkjoin at 0 % speedup starts two workers a round: the only global
    delay is then the workers' set-up and tear-down, summed per thread in
    own_credit_ns and published as the longest of the threads running
    together, so global_delay_ns is above zero and at most own_credit_ns.
    BCOZ_NO_OWN_CREDIT=1: neither grows."""
    need_two_cpus()
    line = marker_line("forkjoin.c", "LOOP_BIG")
    res = {}
    for off in ("0", "1"):
        st = prof("own%s.stats" % off)
        rc, out, err, dt = run(["-o", prof("own%s.coz" % off), "--fixed-line", line,
                                "--fixed-speedup", "0"], [prog("forkjoin"), "0", "0"],
                               experiments=4, env={"BCOZ_STATS": st, "BCOZ_NO_OWN_CREDIT": off})
        assert rc == 0, (rc, out, err)
        res[off] = stats(st)
    on, off = res["0"], res["1"]
    assert off["own_credit_ns"] == 0 and off["global_delay_ns"] == 0, off
    assert 0 < on["global_delay_ns"] <= on["own_credit_ns"], on
    return "own_credit %.1f ms, global delay %.1f ms at 0 %%; off: 0 and 0" % (
        on["own_credit_ns"] / 1e6, on["global_delay_ns"] / 1e6)


def t_throttle_warning():
    """Throttled sampling is counted and named, with the fix.

    With kernel.perf_event_max_sample_rate at 200 the kernel throttles a
    1 kHz event every tick: bcoz must count the THROTTLE records
    (BCOZ_STATS throttled=), and say so with the sysctl that fixes it.
    The kernel refuses a new rate while kernel.perf_cpu_time_max_percent
    is 0 or 100 (the limit off, as that fix sets it): the test sets it to
    25 around the writes.  Both settings are restored afterwards.  Needs
    root."""
    rate_path = "/proc/sys/kernel/perf_event_max_sample_rate"
    pct_path = "/proc/sys/kernel/perf_cpu_time_max_percent"
    if os.geteuid() != 0:
        raise Skip("needs root to lower %s" % rate_path)

    def sysctl(path, value=None):
        if value is None:
            with open(path) as f:
                return f.read().strip()
        with open(path, "w") as f:
            f.write(value + "\n")
    rate0, pct0 = sysctl(rate_path), sysctl(pct_path)
    st, st2 = prof("throttle.stats"), prof("throttle-exp.stats")
    try:
        sysctl(pct_path, "25")
        sysctl(rate_path, "200")
        rc, out, err, dt = run(["-o", prof("throttle.coz"), "--end-to-end"],
                               [prog("toy"), "100", "2000000"], env={"BCOZ_STATS": st})
        # --experiments writes the statistics before the threads end: the
        # count must not wait for them
        rc2, out2, err2, _ = run(["-o", prof("throttle-exp.coz")], [prog("toy"), "0"],
                                 experiments=2, env={"BCOZ_STATS": st2})
    finally:
        sysctl(pct_path, "25")
        sysctl(rate_path, rate0)
        sysctl(pct_path, pct0)
    assert rc == 0, (rc, out, err)
    assert rc2 == 0, (rc2, out2, err2)
    s, s2 = stats(st), stats(st2)
    assert s["throttled"] >= 10, s
    want = "sysctl -w kernel.perf_event_max_sample_rate="
    assert "throttled sampling %d time(s)" % s["throttled"] in err and want in err, err
    assert s2["throttled"] >= 10, ("--experiments: the statistics lost the throttles", s2)
    return ("%d throttles at rate 200, named with the fix; %d counted in the statistics "
            "of an --experiments run; rate restored to %s, perf_cpu_time_max_percent to %s" % (
                s["throttled"], s2["throttled"], rate0, pct0))


def binom_tail_ok(k, n, p, alpha=1e-3):
    """k is inside the central 1 - alpha interval of Binomial(n, p)."""
    cdf = [0.0]
    for i in range(n + 1):
        cdf.append(cdf[-1] + math.comb(n, i) * p ** i * (1 - p) ** (n - i))
    below, above = cdf[k], 1 - cdf[k + 1]     # P(X < k), P(X > k)
    return below < 1 - alpha / 2 and above < 1 - alpha / 2


def t_auto_selection():
    """Default mode picks lines in proportion to their samples.

    Samples count CPU time, so A's and B's sample counts must be in the ratio
    of the loops' measured CPU times, and the experiments must fall on A and
    B like draws in that proportion (a binomial test at 0.1 %)."""
    p = prof("auto.coz")
    rc, out, err, dt = run(["-o", p], [prog("toy"), "0", "0"], experiments=30)
    assert rc == 0, err
    a, b, _ = toy_truth(out)
    exps, samples, _ = cozprofile.read_profile(p)
    la, lb = marker_line("toy.c", "LOOP_A"), marker_line("toy.c", "LOOP_B")
    na = sum(1 for e in exps if e["selected"].endswith(la))
    nb = sum(1 for e in exps if e["selected"].endswith(lb))
    sa = sum(c for k, c in samples.items() if k.endswith(la))
    sb = sum(c for k, c in samples.items() if k.endswith(lb))
    info = "%d experiments: A %d, B %d; samples A/B = %.2f, CPU time A/B = %.2f (%.0fs)" % (
        len(exps), na, nb, sa / max(sb, 1), a / b, dt)
    assert len(exps) == 30, info
    assert na + nb >= 0.8 * len(exps), info
    assert abs(sa / max(sb, 1) / (a / b) - 1) <= 0.15, "sample ratio off the CPU-time ratio: " + info
    assert binom_tail_ok(na, na + nb, sa / (sa + sb)), "A/B draws unlikely for the samples: " + info
    speeds = {e["speedup"] for e in exps}
    assert all(s % 5 == 0 for s in speeds), speeds
    return info


def t_end_to_end():
    need_two_cpus()
    line = marker_line("toy.c", "LOOP_A")
    p = prof("e2e.coz")
    # whole runs of one fixed amount of work, sized to about 1.5 s here: the
    # loops' length is calibrated once, here, not by each run (a run that
    # calibrated while the host was busy did half the work and read as a
    # 45 % speedup or slowdown of its own)
    rate, out = timed_run(["toy", "0"], 1.0)
    rounds, iters = max(10, int(1.5 * rate)), calibration(out, "b_iterations")
    # one experiment per run: runs at 0 % and 50 % alternate so load drift
    # between runs hits both levels.  But this host's speed moves by a
    # factor of two between 1.5 s runs (loop A's CPU time for the same work
    # 1.36 to 2.71 s within a minute), and bcoz's curve over whole runs
    # then read +29..+49 against +50, failing one run in three.  So each
    # run's adjusted duration is set against its own critical path (the
    # slower loop's CPU time): that ratio is the end-to-end accounting,
    # whatever the machine's speed during the run.  The curve is printed.
    levels = ("0", "50") * 3
    ta = tb = 0.0
    norm = {"0": [], "50": []}
    for s in levels:
        rc, out, err, dt = run(["-o", p, "--end-to-end", "--fixed-line", line,
                                "--fixed-speedup", s], [prog("toy"), str(rounds), str(iters)],
                               rt=True)
        assert rc == 0, err
        a, b, _ = toy_truth(out)
        ta, tb = ta + a, tb + b
        exps, _, _ = cozprofile.read_profile(p)
        norm[s].append(exps[-1]["duration"] / 1e6 / max(a, b))
    exps, _, runs = cozprofile.read_profile(p)
    assert runs == len(levels) and len(exps) == len(levels), (runs, len(exps))
    assert all(e["points"][0]["name"] == "end-to-end" for e in exps)
    c = curve(p, line)
    truth = (1 - max(ta * 0.5, tb) / max(ta, tb)) * 100
    pred = (1 - statistics.mean(norm["50"]) / statistics.mean(norm["0"])) * 100
    info = "per run, adjusted duration / critical path: 0%% %s, 50%% %s; so %+.1f; truth " \
        "%+.0f; bcoz's curve over the runs %s; %d rounds of %d a run" % (
            " ".join("%.2f" % x for x in norm["0"]), " ".join("%.2f" % x for x in norm["50"]),
            pred, truth, fmt(c), rounds, iters)
    assert 50 in c, info
    assert abs(pred - truth) <= 10, info
    return info


def t_latency_points():
    p = prof("lat.coz")
    rc, out, err, dt = run(["-o", p], [prog("latency"), "0"], experiments=3)
    assert rc == 0, err
    exps, _, _ = cozprofile.read_profile(p)
    assert len(exps) == 3, (len(exps), err)
    lat = [q for e in exps for q in e["points"] if q["kind"] == "latency"]
    assert lat and all(q["name"] == "request" for q in lat), lat[:3]
    arr = sum(q["arrivals"] for q in lat)
    dep = sum(q["departures"] for q in lat)
    assert arr > 10 and abs(arr - dep) <= len(lat), (arr, dep)
    return "%d latency records, %d arrivals, %d departures" % (len(lat), arr, dep)


def t_no_progress_point():
    p = prof("noprog.coz")
    rc, out, err, dt = run(["-o", p], [prog("latency"), "60", "noprogress"])
    assert "no progress point was reached" in err and "latency.c:" in err, err
    m = re.search(r"latency\.c:(\d+)", err)
    assert m and ("latency.c:" + m.group(1)) == marker_line("latency.c", "NEVER"), err
    return err.strip().splitlines()[-1][:100]


def t_pthread_exit_main():
    p = prof("pexit.coz")
    rc, out, err, dt = run(["-o", p], [prog("latency"), "0", "pthread_exit"], experiments=2)
    assert rc == 0, (rc, err)
    exps, _, _ = cozprofile.read_profile(p)
    assert len(exps) == 2, (len(exps), err)
    with open(p) as f:
        assert "runtime\t" in f.read()
    return "exited rc 0 after %.1fs with %d experiments" % (dt, len(exps))


def t_fork_and_exec():
    p = prof("fork.coz")
    rc, out, err, dt = run(["-o", p], [prog("latency"), "0", "fork"], experiments=1)
    assert rc == 0 and "child exit 7" in out, (rc, out, err)
    with open(p) as f:
        text = f.read()
    assert text.count("startup\t") == 1 and text.count("runtime\t") >= 1, text[:300]
    p2 = prof("exec.coz")
    rc, out, err, dt = run(["-o", p2], [prog("latency"), "0", "exec"], experiments=1)
    assert rc == 0, (rc, err)
    with open(p2) as f:
        text = f.read()
    assert "experiment\t" in text and "runtime\t" in text, text[:300]
    return "fork child unprofiled, exec flushed the profile"


def t_experiments_option():
    """--experiments N: exactly N experiments, then SIGTERM; a program that
    does not handle it still leaves a complete profile; a bad N is refused.
    The first experiment lasts the minimum length: 0.1 s, or BCOZ_EXP_MS,
    after its warm-up, and a run shorter than it is told so with both."""
    p = prof("nexp.coz")
    line = marker_line("toy.c", "LOOP_B")
    rc, out, err, dt = run(["-o", p, "--fixed-line", line, "--speedups", "0,50"],
                           [prog("toy"), "0", "0"], experiments=4)
    assert rc == 0 and "rounds done" in out and "4 experiments done" in err, (rc, out, err)
    exps, _, _ = cozprofile.read_profile(p)
    assert len(exps) == 4 and sorted(e["speedup"] for e in exps) == [0, 0, 50, 50], exps
    # a program that does not handle SIGTERM dies of it; the profile is complete
    p2 = prof("nexp2.coz")
    rc, out, err, dt = run(["-o", p2, "--fixed-line", line, "--speedups", "0,50"],
                           [prog("toy"), "0", "0"], experiments=2,
                           env={"TEST_DEFAULT_SIGTERM": "1"})
    assert rc == -signal.SIGTERM, (rc, err)
    exps, _, _ = cozprofile.read_profile(p2)
    assert len(exps) == 2, exps
    with open(p2) as f:
        assert "runtime\t" in f.read()
    # a 0 % experiment's duration is its wall time: the length asked for,
    # and less than the next (doubled) length
    lens = []
    for ms in (None, 300):
        p3 = prof("len%s.coz" % ms)
        rc, out, err, dt = run(["-o", p3, "--fixed-line", line, "--fixed-speedup", "0"],
                               [prog("toy"), "0", "0"], experiments=1,
                               env={"BCOZ_EXP_MS": str(ms)} if ms else None)
        exps, _, _ = cozprofile.read_profile(p3)
        want = (ms or 100) * 1e6
        assert rc == 0 and len(exps) == 1 and want <= exps[0]["duration"] < 2 * want, (ms, exps)
        lens.append("%.0f ms" % (exps[0]["duration"] / 1e6))
    # a run shorter than one experiment: the warning gives the length in force
    rc, out, err, _ = run(["-o", prof("short.coz")], [prog("toy"), "1"],
                          env={"BCOZ_EXP_MS": "10000"})
    assert rc == 0 and "before the first experiment completed" in err and \
        "experiments last >= 10000 ms, measured after a 3000 ms warm-up" in err, (rc, err)
    # a program that ends first: the profile holds what was done, and a warning says so
    rounds = max(10, int(1.2 * timed_rounds(["toy", "0"], 1.0)))
    rc, out, err, dt = run(["-o", prof("nexp3.coz")], [prog("toy"), str(rounds), "0"],
                           experiments=1000)
    assert rc == 0 and "of the 1000 experiments asked for" in err, (rc, err)
    rc, out, err, _ = run(["-o", prof("x.coz"), "--experiments", "0"], [prog("toy"), "1"])
    assert rc == 2 and "BCOZ_EXPERIMENTS=0 (--experiments): expected a count" in err, err
    rc, out, err, _ = run(["-o", prof("x.coz"), "--end-to-end", "--experiments", "3"],
                          [prog("toy"), "1"])
    assert rc == 2 and "use one of them" in err, err
    return ("4 experiments then SIGTERM; unhandled SIGTERM keeps the profile; early end warned; "
            "experiment %s by default, %s at BCOZ_EXP_MS=300" % tuple(lens))


def t_unreached_programs():
    """Programs bcoz's runtime would not profile get a warning before they run,
    and still run: a static program (and a static-pie one: no PT_INTERP), a
    script whose interpreter is static, and an ELF file with Go's
    .go.buildinfo section (a Go program exits without the C library).  A
    static program that execs a dynamic one passes LD_PRELOAD on, and that
    one is profiled.  The dynamic linker run as a program, a dynamic
    program and a FIFO (whose read would block) get no warning."""
    src, inc = os.path.join(HERE, "toy.c"), os.path.join(SRC, "include")
    toy = [prog("toy"), "1", "1000"]

    def build(name, flags, source=src):
        exe = os.path.join(TMP, name)
        p = subprocess.run(["gcc", "-O1", "-g", "-I", inc, "-o", exe] + source + flags +
                           ["-lpthread"], capture_output=True, text=True)
        return exe if p.returncode == 0 else None

    def bcoz(cmd, name):
        path = prof("unreached-%s.coz" % name)
        rc, out, err, _ = run(["-o", path], cmd, timeout=30)
        assert "Traceback" not in err, err
        return rc, out, err, os.path.exists(path)
    got = []
    gosrc = os.path.join(TMP, "gobuildinfo.c")
    with open(gosrc, "w") as f:
        f.write('__attribute__((used, section(".go.buildinfo")))\n'
                'const char go_buildinfo[32] = "\\xff Go buildinf:";\n')
    exe = build("toy-go", [], [src, gosrc])
    assert exe, "gcc could not build toy.c with a .go.buildinfo section"
    rc, out, err, _ = bcoz([exe, "1", "1000"], "go")
    assert rc == 0 and "rounds" in out, (rc, out, err)
    assert "warning: %s holds Go code" % exe in err and "bperf record -g" in err, err
    got.append("Go")
    for kind, flags in (("static", ["-static"]), ("static-pie", ["-static-pie", "-fPIE"])):
        exe = build("toy-" + kind, flags, [src])
        if not exe:
            continue
        rc, out, err, wrote = bcoz([exe, "1", "1000"], kind)
        assert rc == 0 and "rounds" in out and not wrote, (kind, rc, out, err)
        assert "warning: %s is statically linked" % exe in err and "Fix:" in err, err
        got.append(kind)
    static = os.path.join(TMP, "toy-static")
    if "static" in got:
        script = os.path.join(TMP, "static-interp.sh")
        with open(script, "w") as f:
            f.write("#!%s 1\n" % static)     # toy 1 SCRIPT: one round, calibrated
        os.chmod(script, 0o755)
        rc, out, err, _ = bcoz([script], "sh")
        assert "warning: %s runs with %s, a statically linked interpreter" % (
            script, static) in err, (rc, err)
        execsrc = os.path.join(TMP, "execer.c")
        with open(execsrc, "w") as f:
            f.write("#include <unistd.h>\n"
                    "int main(int c, char **v) { execv(v[1], v + 1); return 127; }\n")
        execer = build("execer-static", ["-static"], [execsrc])
        rc, out, err, wrote = bcoz([execer] + toy, "execer")
        assert rc == 0 and "statically linked" in err and wrote, (rc, out, err)
        got.append("a script run by a static program, a static program's exec profiled")
    # let through, without a warning
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    rc, out, err, _ = bcoz([fifo], "fifo")
    assert rc == 126 and "warning" not in err, (rc, err)
    # Debian's /usr/bin/ld.so (a link: the name is what is matched)
    ldso = "/usr/bin/ld.so" if os.path.exists("/usr/bin/ld.so") else \
        os.path.realpath("/lib64/ld-linux-x86-64.so.2")
    rc, out, err, wrote = bcoz(toy, "dyn")
    assert rc == 0 and wrote and "statically" not in err and "Go code" not in err, err
    if os.path.exists(ldso):
        rc, out, err, _ = bcoz([ldso] + toy, "ldso")
        assert "rounds" in out and "statically" not in err, (rc, out, err)
    got.append("none for ld.so, a dynamic program, a FIFO")
    if len(got) < 4:
        raise Skip("static linking unavailable (libc6-dev's libc.a): checked only %s"
                   % ", ".join(got))
    return "warned: " + ", ".join(got)


def t_errors():
    msgs = []
    rc, out, err, _ = run(["--blocked-scope", "l"], [prog("toy"), "1"], timeout=30)
    assert rc == 2 and "critical section" in err, err
    msgs.append("scope l refused")
    rc, out, err, _ = run(["--fixed-speedup", "120"], [prog("toy"), "1"], timeout=30)
    assert rc == 2 and "0-100" in err, err
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-line", "toy.c:1"], [prog("toy"), "1"],
                          timeout=30)
    assert rc != 0 and "has no code" in err and "nearest" in err, err
    msgs.append("fixed-line without code")
    rc, out, err, _ = run(["-o", prof("e.coz"), "--fixed-line", "nosuch.c:3"],
                          [prog("toy"), "1"], timeout=30)
    assert rc != 0 and "no in-scope source file" in err, err
    rc, out, err, _ = run([], ["/nonexistent/prog"], timeout=30)
    assert rc == 127 and "not found" in err, err
    # no debug info in scope
    nodbg = os.path.join(TMP, "toy-nodebug")
    subprocess.run(["gcc", "-O1", "-I", os.path.join(SRC, "include"), "-o", nodbg,
                    os.path.join(HERE, "toy.c"), "-lpthread"], check=True)
    subprocess.run(["strip", "--strip-all", nodbg], check=True)
    rc, out, err, _ = run(["-o", prof("e.coz")], [nodbg, "1", "1000"], timeout=30)
    assert rc != 0 and "no debug line information" in err and "-g" in err, err
    assert "neither line tables nor function symbols" in err, err
    assert "put that program after --- instead" in err, err
    msgs.append("no debug info")
    # a shell that only starts the program: say so, not just "rebuild it"
    sh = shutil.which("sh")
    rc, out, err, _ = run(["-o", prof("e.coz")], [sh, "-c", "%s 1 1000" % prog("toy")],
                          timeout=30)
    if "neither line tables nor function symbols" in err:
        assert "put that program after --- instead" in err, err
        msgs.append("sh -c")
    # bad profile for plot
    bad = os.path.join(TMP, "bad.coz")
    with open(bad, "w") as f:
        f.write("startup\ttime=1\nexperiment\tselected=a\tspeedup=zz\tduration=1\n")
    p = subprocess.run([BCOZ, "plot", "-i", bad, "--text"], capture_output=True, text=True)
    assert p.returncode == 1 and "bad.coz:2" in p.stderr and "Traceback" not in p.stderr, p.stderr
    msgs.append("garbled profile")
    return ", ".join(msgs)


# (environment, what the one error line must hold besides the variable and value)
BAD_SETTINGS = [
    ({"BCOZ_SPEEDUPS": "abc"}, "(--speedups): expected a comma-separated list"),
    ({"BCOZ_SPEEDUPS": "0,101"}, "percentages 0-100, e.g. 0,25,50"),
    ({"BCOZ_FIXED_SPEEDUP": "x5"}, "expected an integer percentage 0-100"),
    ({"BCOZ_EXPERIMENTS": "-3"}, "expected a count from 1 to 1000000"),
    ({"BCOZ_BLOCKED_SCOPE": "q"}, "expected i or io (I/O), s or sched"),
    ({"BCOZ_BLOCKED_SCOPE": "lock"}, "speed up the critical section's lines instead"),
    ({"BCOZ_GRANULARITY": "file"}, "line (the default"),
    ({"BCOZ_FIXED_LINE": "toy.c"}, "expected FILE:LINE, e.g. toy.c:42"),
    ({"BCOZ_STACK_BYTES": "4"}, "expected 0 (no stack copy) or 8 to 2048 bytes"),
    ({"BCOZ_TIMER_US": "10"}, "100-100000 (default 10000)"),
    ({"BCOZ_PAUSE_TICKS": "0"}, "a tick count 1-100"),
    ({"BCOZ_EXP_MS": "5"}, "milliseconds 20-10000 (default 100)"),
    ({"BCOZ_VERBOSE": "yes"}, "expected 0 or 1"),
]


def one_error_line(err, *want):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bcoz: error: ") and \
        all(w in lines[0] for w in want), (want, err)


def t_settings_errors():
    """A bad BCOZ_* value, set directly or through a bcoz run option: one
    error line from the runtime naming the variable, the value and the
    accepted form, exit status 2, and the program does not run.  A bad
    command line: one line naming the problem and where the options are."""
    lib = os.path.join(BUILD, "libbcoz.so")
    for env, want in BAD_SETTINGS:
        e = dict(os.environ, LD_PRELOAD=lib, **env)
        p = subprocess.run([prog("toy"), "1", "1000"], capture_output=True, text=True,
                           timeout=30, env=e)
        (var, val), = env.items()
        assert p.returncode == 2 and "rounds done" not in p.stdout, (env, p.returncode, p.stdout)
        one_error_line(p.stderr, "%s=%s" % (var, val), want)
    rc, out, err, _ = run(["--speedups", "0,abc"], [prog("toy"), "1"], timeout=30)
    assert rc == 2, (rc, err)
    one_error_line(err, "BCOZ_SPEEDUPS=0,abc (--speedups)", "e.g. 0,25,50")
    rc, out, err, _ = run(["--fixed-line", "toy.c:3", "--blocked-scope", "i"], [prog("toy"), "1"],
                          timeout=30)
    assert rc == 2, (rc, err)
    one_error_line(err, "(--fixed-line, --blocked-scope)", "use one of them")
    # a rule of sleeping pauses where pauses spin
    for var in ("BCOZ_CARRY", "BCOZ_CREDIT_MEASURED", "BCOZ_PAUSE_SPIN_MAX_US"):
        rc, out, err, _ = run(["-o", prof("x.coz")], [prog("toy"), "1"], timeout=30,
                              env={var: "1", "BCOZ_SPIN_PAUSES": "1"})
        assert rc == 2 and "rounds done" not in out, (var, rc, out, err)
        one_error_line(err, "%s=1 applies to sleeping pauses, and BCOZ_SPIN_PAUSES=1" % var,
                       "drop one of the two")
    rc, out, err, _ = run(["-o", prof("x.coz"), "--blocked-scope", "s"], [prog("toy"), "1"],
                          timeout=30, env={"BCOZ_CARRY": "1"})
    assert rc == 2, (rc, out, err)
    one_error_line(err, "BCOZ_CARRY=1 applies to sleeping pauses, and --blocked-scope s",
                   "add BCOZ_SLEEP_PAUSES=1")
    rc, out, err, _ = run(["-o", prof("x.coz")], [prog("toy"), "1"], timeout=30,
                          env={"BCOZ_SPIN_PAUSES": "1", "BCOZ_SLEEP_PAUSES": "1"})
    assert rc == 2, (rc, out, err)
    one_error_line(err, "BCOZ_SPIN_PAUSES and BCOZ_SLEEP_PAUSES", "use one of them")
    assert "(null)" not in err, err
    # where they do apply, or ask for the default, the program runs
    for env in ({"BCOZ_CARRY": "1"}, {"BCOZ_CARRY": "0", "BCOZ_SPIN_PAUSES": "1"}):
        rc, out, err, _ = run(["-o", prof("x.coz")], [prog("toy"), "1", "1000"], timeout=30,
                              env=env)
        assert rc == 0 and "rounds done" in out, (env, rc, out, err)
    rc, out, err, _ = run(["--speedup", "50"], [prog("toy"), "1"], timeout=30)
    assert rc == 2, (rc, err)
    one_error_line(err, "unrecognized arguments: --speedup", "bcoz run --help")
    rc, out, err, _ = run(["--experiments"], [prog("toy"), "1"], timeout=30)
    assert rc == 2, (rc, err)
    one_error_line(err, "--experiments: expected one argument", "bcoz run --help")
    p = subprocess.run([BCOZ, "run", "-o", prof("x.coz"), prog("toy")], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2, (p.returncode, p.stderr)
    one_error_line(p.stderr, "missing '---'", "bcoz run [OPTIONS] --- ./app args")
    return "%d bad BCOZ_* values, 2 bad option values, 5 settings that contradict each " \
        "other, 3 bad command lines: one line each" % len(BAD_SETTINGS)


def t_class_names():
    """The runtime names sample classes as perf and bcozlib do: bcoz run -v
    counts samples by class, and every --blocked-scope form in bcozlib's table
    is one the runtime takes."""
    from bcozlib import classes
    p = prof("classes.coz")
    rc, out, err, _ = run(["-o", p, "-v"], [prog("toy"), "0", "0"], experiments=1)
    m = re.search(r"samples by class: (.*)", err)
    assert rc == 0 and m, err
    counts = [kv.rsplit(" ", 1) for kv in m.group(1).split(", ")]
    assert tuple(n for n, _ in counts) == classes.NAMES, (counts, classes.NAMES)
    assert int(counts[0][1]) > 0, counts
    # BCOZ_NO_BLOCKED=1: a valid scope gets as far as the kernel check
    for name, letter, _ in classes.SCOPES:
        for form in (name, letter):
            rc, out, err, _ = run(["-o", prof("x.coz"), "--blocked-scope", form],
                                  [prog("toy"), "1"], timeout=30, env={"BCOZ_NO_BLOCKED": "1"})
            assert rc != 0 and "needs blocked samples" in err, (form, err)
    return "%s; --blocked-scope takes %s" % (m.group(1), classes.scope_forms())


def t_stock_kernel_note():
    """On a kernel without blocked samples: one note, on-CPU profile still made."""
    p = prof("note.coz")
    rc, out, err, _ = run(["-o", p], [prog("toy"), "0", "0"], experiments=1)
    assert rc == 0, err
    k = err.count("no blocked samples")
    probe = subprocess.run([BCOZ, "run", "-o", prof("x.coz"), "--blocked-scope", "i", "---",
                            prog("toy"), "1", "1000"], capture_output=True, text=True,
                           timeout=60)
    if k == 0:
        # patched kernel: --blocked-scope must be accepted
        assert "needs blocked samples" not in probe.stderr, probe.stderr
        return "kernel has blocked samples: no note (expected)"
    assert k == 1, "note printed %d times:\n%s" % (k, err)
    assert probe.returncode != 0 and "CONFIG_PERF_BLOCKED_SAMPLES" in probe.stderr, probe.stderr
    return "note printed once; --blocked-scope refused with the fix"


def t_without_bcoz():
    p = subprocess.run([prog("toy"), "2", "1000"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "2 rounds done" in p.stdout, p
    return "coz.h program runs unprofiled"


def t_plot_html():
    p = os.path.join(TMP, "toy_a.coz")
    if not os.path.exists(p):
        p = os.path.join(TMP, "auto.coz")
    assert os.path.exists(p), "no toy profile to plot (the causal tests did not run)"
    out = os.path.join(TMP, "plot.html")
    r = subprocess.run([BCOZ, "plot", "-i", p, "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        h = f.read()
    assert "<svg" in h and "toy.c" in h
    # the error the report prints is the one the causal test believed
    line = marker_line("toy.c", "LOOP_A")
    r = subprocess.run([BCOZ, "plot", "-i", p, "--text"], capture_output=True, text=True)
    block = r.stdout.split(line + "  (", 1)
    assert r.returncode == 0 and len(block) == 2, r.stdout + r.stderr
    rows = {str(s): r[1] for s, r in precision.plot_rows(block[1]).items()}
    exps, _, _ = cozprofile.read_profile(p)
    want = precision.standard_error(exps, line, 50)
    assert rows.get("0") == "-" and want is not None and rows.get("50") == "%.1f" % want, \
        "plot --text errors %s, the test's at 50 %%: %s" % (rows, want)
    assert h.count('class="se"') >= 3, "no error bars in the page"
    return "%d bytes, %d chart(s); loop A's errors %s" % (
        len(h), h.count("<svg"), " ".join("%s%%:%s" % kv for kv in sorted(rows.items())))


def t_plot_browser():
    """The page in headless chromium: sort, filter, tooltip, screenshot."""
    import plot_browser   # puts scripts/ on the path
    import headless_chromium
    logs = headless_chromium.log_dir(os.path.normpath(os.path.join(SRC, "..", "..")))
    try:
        return plot_browser.run(BCOZ, TMP, logs)
    except headless_chromium.BrowserMissing as e:
        raise AssertionError(str(e))


# ---------------------------------------------------------------- robustness
# Programs bcoz was not written for (tests/robust.c): each behaviour is
# compared with the same program run without bcoz where that has an answer.

def native(args, timeout=30):
    return subprocess.run([prog("robust")] + args, capture_output=True, text=True,
                          timeout=timeout)


def t_vfork_exec():
    """A vfork child that execs must not shut the parent's profiler down."""
    p = prof("vfork.coz")
    rc, out, err, dt = run(["-o", p], [prog("robust"), "vfork"], experiments=2, timeout=60)
    assert rc == 0 and "vfork child status 0" in out, (rc, out, err)
    exps, _, _ = cozprofile.read_profile(p)
    assert len(exps) == 2, (len(exps), err)
    assert "exec failed" not in err and "before the first experiment" not in err, err
    return "2 experiments after the vfork child's exec (%.1fs)" % dt


def t_signal_keeps_siginterrupt():
    """siginterrupt(SIGALRM, 1) + signal(): a blocking read() gets EINTR, as natively."""
    nat = native(["sigintr"])
    assert nat.returncode == 0 and "Interrupted" in nat.stdout, nat
    rc, out, err, dt = run(["-o", prof("sigintr.coz"), "--end-to-end"],
                           [prog("robust"), "sigintr"], timeout=20)
    assert rc == 0 and "Interrupted" in out, (rc, out, err)
    return "read() interrupted by SIGALRM under bcoz as natively"


def stats_lines(path):
    """The BCOZ_STATS lines of PATH (one a process), each a dict of ints."""
    with open(path) as f:
        return [{k: int(v) for k, v in (kv.split("=") for kv in line.split())}
                for line in f.read().strip().splitlines()]


def stats(path):
    """The last BCOZ_STATS line of PATH as a dict of ints."""
    return stats_lines(path)[-1]


def t_small_stacks():
    """Threads with 16 KiB stacks, 8 KiB of it in use, survive SIGPROF."""
    n, ms = 4, 300
    nat = native(["stack", str(n), str(ms)], timeout=60)
    assert nat.returncode == 0 and "survived" in nat.stdout, nat
    st = prof("stack.stats")
    rc, out, err, dt = run(["-o", prof("stack.coz"), "--end-to-end"],
                           [prog("robust"), "stack", str(n), str(ms)], timeout=60,
                           env={"BCOZ_STATS": st})
    assert rc == 0 and "%d threads survived" % n in out, (rc, out, err)
    # the handler did run on those stacks: ~1 sample per ms of their CPU time
    s = stats(st)
    assert s["samples"] >= n * ms / 2, s
    return "%d threads x %d ms of CPU, %d samples (%.1fs)" % (n, ms, s["samples"], dt)


def with_limits(cmd, nofile=None, user=None):
    """CMD with ulimit -n NOFILE, as USER (setpriv) when given."""
    pre = []
    if user is not None:
        pre = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"]
    if nofile:
        return pre + ["sh", "-c", 'ulimit -n %d && exec "$@"' % nofile, "sh"] + cmd
    return pre + cmd


def unsampled_threads(s, err):
    """Threads bcoz did not sample: from BCOZ_STATS, or (runtimes that do not
    count them) from the per-thread warnings they printed."""
    if "unsampled" in s:
        return s["unsampled"]
    return err.count("this thread is not sampled") + err.count("mmap of the perf ring")


def t_fd_limit():
    """ulimit -n 256 and 100 threads that each open a file: bcoz takes no
    descriptor the program needs, and says once that it ran short."""
    n = 100
    nat = subprocess.run(with_limits([prog("robust"), "fds", str(n)], nofile=256),
                         capture_output=True, text=True, timeout=60)
    assert "%d threads, 0 open() failures" % n in nat.stdout, nat
    st = prof("fds.stats")
    e = dict(os.environ, BCOZ_STATS=st)
    p = subprocess.run(with_limits([BCOZ, "run", "-o", prof("fds.coz"), "--end-to-end", "---",
                                    prog("robust"), "fds", str(n)], nofile=256),
                       capture_output=True, text=True, timeout=60, env=e)
    m = re.search(r"(\d+) open\(\) failures", p.stdout)
    assert p.returncode == 0 and m, (p.returncode, p.stdout, p.stderr)
    warned = p.stderr.count("are not sampled")
    un = unsampled_threads(stats(st), p.stderr)
    info = "%s open() failures (natively 0); %d of %d threads unsampled, %d warning(s)" % (
        m.group(1), un, n + 1, warned)
    assert m.group(1) == "0", info
    assert warned == (1 if un else 0), info + "\n" + p.stderr
    return info


def t_locked_memory_threads():
    """Unprivileged, 100 threads: every one gets its ring buffer (the
    locked-memory limit allows it), or bcoz says once that it ran out."""
    n = 100
    user = None
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            raise Skip("as root, needs setpriv to run as nobody")
        user = 65534
        d = os.path.join(TMP, "nobody")
        os.makedirs(d, exist_ok=True)
        os.chmod(TMP, 0o755)
        os.chmod(d, 0o777)
    else:
        d = TMP
    st = os.path.join(d, "mlock.stats")
    e = dict(os.environ, BCOZ_STATS=st)
    p = subprocess.run(with_limits([BCOZ, "run", "-o", os.path.join(d, "mlock.coz"),
                                    "--end-to-end", "---", prog("robust"), "fds", str(n)],
                                   user=user),
                       capture_output=True, text=True, timeout=60, env=e)
    if "perf_event_open failed" in p.stderr:
        raise Skip("perf_event_open is not permitted unprivileged here: " +
                   p.stderr.strip().splitlines()[-1][:120])
    assert p.returncode == 0 and "%d threads" % n in p.stdout, (p.returncode, p.stdout, p.stderr)
    un = unsampled_threads(stats(st), p.stderr)
    # what the kernel lets this user lock: perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK
    with open("/proc/sys/kernel/perf_event_mlock_kb") as f:
        kb = int(f.read()) * os.cpu_count()
    res = subprocess.run(with_limits(["sh", "-c", "ulimit -l"], user=user),
                         capture_output=True, text=True).stdout.strip()
    kb += int(res) if res.isdigit() else 0
    ring_kb = (8 + 1) * os.sysconf("SC_PAGE_SIZE") // 1024
    warned = p.stderr.count("are not sampled")
    info = "%d of %d threads unsampled, %d warning(s); %d KiB lockable, %d KiB a thread" % (
        un, n + 1, warned, kb, ring_kb)
    if kb >= (n + 1) * ring_kb:
        assert un == 0, info
    assert warned == (1 if un else 0), info + "\n" + p.stderr
    return info


def t_follow_exec_nodebug():
    """--follow-exec: an exec'd program without debug info runs, unprofiled;
    a statically linked one (which never loads the runtime) is named."""
    true = shutil.which("true")
    nat = native(["spawn", true])
    assert "status 0" in nat.stdout, nat
    rc, out, err, dt = run(["-o", prof("follow.coz"), "--end-to-end", "--follow-exec", "-v"],
                           [prog("robust"), "spawn", true], timeout=30)
    assert rc == 0 and "status 0" in out, (rc, out, err)
    assert "runs unprofiled" in err and "error" not in err, err
    assert "statically linked" not in err, err
    msg = "the child exited 0, as natively; -v says it ran unprofiled"
    # a statically linked child never loads the runtime: named at the exec
    src = os.path.join(TMP, "static-true.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    exe = os.path.join(TMP, "static-true")
    if subprocess.run(["gcc", "-static", "-o", exe, src]).returncode:
        return msg + "; static linking unavailable, the static child not checked"
    rc, out, err, dt = run(["-o", prof("follow-static.coz"), "--end-to-end", "--follow-exec"],
                           [prog("robust"), "spawn", exe], timeout=30)
    assert rc == 0 and "status 0" in out, (rc, out, err)
    assert ("warning: --follow-exec: %s is statically linked" % exe) in err, err
    return msg + "; a static child named at its exec"


def t_end_to_end_no_sample():
    """--end-to-end on a parent whose work runs in a forked child: bcoz
    profiles the process it starts, which is never on the CPU, so no line is
    chosen; it says so and why, where it used to end in silence (found on
    stress-ng --cpu 2)."""
    p = prof("e2e-fork.coz")
    rc, out, err, _ = run(["-o", p, "--end-to-end"], [prog("robust"), "spawn", prog("toy")],
                          timeout=60)
    assert rc == 0 and "status 0" in out, (rc, out, err)
    assert "error: --end-to-end: no experiment ran" in err and "forked child" in err, err
    exps, _, _ = cozprofile.read_profile(p)
    assert not exps, exps
    return "said: " + [x for x in err.splitlines() if "no experiment ran" in x][0][:90] + "..."


def t_fatal_signals():
    """abort, SIGSEGV, SIGTERM: the program dies of the signal as natively,
    and the profile still gets its final runtime and samples records."""
    done = []
    for how, sig in (("abort", signal.SIGABRT), ("segv", signal.SIGSEGV),
                     ("term", signal.SIGTERM)):
        p = prof("crash-%s.coz" % how)
        cmd = [BCOZ, "run", "-o", p, "---", prog("robust"), "crash", how, "1500"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()     # after 1.5 s of progress
        assert "crash %s (SIGTERM default: 1)" % how in line, line
        if how == "term":
            proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("%s: the program did not end within 60 s" % how)
        assert proc.returncode == -sig, (how, proc.returncode, err)
        with open(p) as f:
            text = f.read()
        assert "runtime\t" in text and "samples\t" in text, (how, text[-300:], err)
        assert "ending on SIG" in err, (how, err)
        done.append("%s: rc %d" % (how, proc.returncode))
    return "; ".join(done) + "; runtime and samples written each time"


def t_end_to_end_not_startup():
    """--end-to-end draws its line after the start-up: a program that first
    spins 20 ms in a start-up loop, then works 300 ms elsewhere, gets the
    work's line in every run (the start-up loop's in 4 of 4 before)."""
    p = prof("phases.coz")
    work, startup = marker_line("robust.c", "WORK"), marker_line("robust.c", "STARTUP")
    for _ in range(4):
        rc, out, err, _ = run(["-o", p, "--end-to-end"], [prog("robust"), "phases", "20", "300"],
                              timeout=60)
        assert rc == 0 and "phases" in out, err
    exps, _, _ = cozprofile.read_profile(p)
    sel = [e["selected"].rsplit("/", 1)[-1] for e in exps]
    assert len(sel) == 4 and startup not in sel and sel.count(work) >= 3, sel
    rc, out, err, _ = run(["-o", prof("phases-short.coz"), "--end-to-end"],
                          [prog("robust"), "phases", "0", "20"], timeout=60)
    assert rc == 0 and "no experiment ran: the run lasted" in err, err
    said = "a 20 ms run"
    if "no blocked samples" in err:
        # only a start-up on the CPU, then a sleep (no sample on this kernel)
        rc, out, err, _ = run(["-o", prof("phases-sleep.coz"), "--end-to-end"],
                              [prog("robust"), "phases", "20", "0", "200"], timeout=60)
        assert rc == 0 and re.search(r"no experiment ran: all \d+ in-scope samples came in "
                                     r"the first \d+ ms, the start-up", err), err
        said += " and one with only a start-up on the CPU"
    return "selected: %s; %s told why they have no experiment" % (", ".join(sel), said)


def t_closed_stderr():
    """A program that closes its stderr (xz does) still gets bcoz's summary
    at exit on the stderr bcoz started with, and a file the program then
    opens as fd 2 gets none of it."""
    p = prof("stderr.coz")
    log = os.path.join(TMP, "robust-own.log")
    rc, out, err, _ = run(["-v", "-o", p], [prog("robust"), "stderr", "600", log], timeout=60)
    with open(log) as f:
        own = f.read()
    assert rc == 0 and "is fd 2" in out, (rc, out, err)
    assert "bcoz: samples by class:" in err, err
    assert own == "robust's own\n", own
    # started with stderr closed: bcoz says nothing, and nothing of it goes
    # into the profile, which open() would have made fd 2
    p2 = prof("stderr-closed.coz")
    r = subprocess.run(["sh", "-c", 'exec 2>&-; exec "$0" run -v -o "$1" --- "$2" 3 0', BCOZ, p2,
                        prog("toy")], capture_output=True, text=True, timeout=60)
    with open(p2) as f:
        text = f.read()
    assert r.returncode == 0 and "rounds done" in r.stdout, (r.returncode, r.stdout)
    assert "bcoz:" not in text, text[:500]
    cozprofile.read_profile(p2)
    return "after close(2): %r on bcoz's stderr; the program's fd 2 holds %r; started " \
        "without stderr: the profile holds no message" % (
            [x for x in err.splitlines() if "samples by class" in x][0][:40], own)


def t_lost_records():
    """Samples lost to a full ring are counted, and the advice works: a
    thread spins 400 ms of CPU without a wrapped call, each sample carrying
    2 KiB of stack, and drains only every 100 ms."""
    cmd = [prog("robust"), "stack", "1", "400"]
    env = {"BCOZ_STACK_BYTES": "2048", "BCOZ_TIMER_US": "100000"}
    rc, out, err, _ = run(["-o", prof("lost.coz")], cmd, timeout=60, env=env)
    m = re.search(r"warning: (\d+) sample records were lost .* Fix: .*BCOZ_TIMER_US=(\d+)", err)
    assert m and int(m.group(1)) > 0, err
    env["BCOZ_TIMER_US"] = m.group(2)
    rc, out, err, _ = run(["-o", prof("lost.coz")], cmd, timeout=60, env=env)
    assert "were lost" not in err, err
    return "%s records lost; none with BCOZ_TIMER_US=%s as advised" % m.groups()


def t_plot_output_errors():
    """plot -o into a missing directory or onto a directory: a clear error."""
    p = os.path.join(TMP, "small.coz")
    with open(p, "w") as f:
        f.write("startup\ttime=1\n" + unit_tests.exp("a.c:1", 0.0, 1000, [("t", "p", 10)]) +
                unit_tests.exp("a.c:1", 0.5, 800, [("t", "p", 10)]) + "experiment\tsel")
    msgs = []
    for out, want in (("/nonexistent/x.html", "cannot write /nonexistent/x.html"),
                      (TMP, "is a directory")):
        r = subprocess.run([BCOZ, "plot", "-i", p, "-o", out], capture_output=True, text=True)
        assert r.returncode == 2 and want in r.stderr and "Traceback" not in r.stderr, r.stderr
        msgs.append(r.stderr.strip().splitlines()[-1])
    r = subprocess.run([BCOZ, "plot", "-i", p, "--text"], capture_output=True, text=True)
    assert r.returncode == 0 and "incomplete" in r.stderr and "+20.0%" in r.stdout, r
    return "; ".join(msgs) + "; truncated last line skipped with a warning"


# A kernel that accepts bit 38 of perf_event_attr's flags but does not give
# blocked samples: this shim clears the bit before the real system call, so
# the stock kernel accepts the event and never sends a blocked sample.
BIT38_SHIM = r"""#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	struct perf_event_attr copy;
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (n == SYS_perf_event_open) {
		uint64_t f;

		memcpy(&copy, (void *)a[0], sizeof(copy));
		memcpy(&f, (char *)&copy + 40, 8);
		f &= ~(1ULL << 38);
		memcpy((char *)&copy + 40, &f, 8);
		a[0] = (long)&copy;
	}
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
"""


def t_blocked_detected_positively():
    """A kernel that merely accepts attr.blocked is not taken for one with
    blocked samples: bcoz asks for a blocked sample and must see one."""
    src = os.path.join(TMP, "bit38.c")
    lib = os.path.join(TMP, "libbit38.so")
    with open(src, "w") as f:
        f.write(BIT38_SHIM)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", lib, src, "-ldl"], check=True)
    rc, out, err, _ = run(["-o", prof("bit38.coz"), "--end-to-end", "-v"],
                          [prog("robust"), "crash", "none", "10"], timeout=30,
                          env={"LD_PRELOAD": lib})
    m = re.search(r"blocked samples (on|off)", err)
    assert m, err
    assert m.group(1) == "off" and "gave no blocked sample" in err, err
    return "bit 38 accepted but no blocked sample seen: %s" % m.group(0)


def t_runtime_symbols():
    """libbcoz.so exports only libc wrappers and _coz_*, and its own locks,
    sleeps, signals and exits call libc, not its wrappers."""
    if not shutil.which("nm") or not shutil.which("objdump"):
        raise Skip("needs nm and objdump (binutils)")
    lib = os.path.join(BUILD, "libbcoz.so")
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                        check=True).stdout
    names = [ln.split()[-1] for ln in nm.splitlines() if ln.strip()]
    internal = [n for n in names if re.match(r"(bcoz|linemap|sampler|interpose)_", n)]
    assert not internal, "internal symbols exported: " + " ".join(internal)
    dis = subprocess.run(["objdump", "-d", lib], capture_output=True, text=True,
                         check=True).stdout
    own = {"pthread_mutex_lock", "pthread_mutex_unlock", "nanosleep", "clock_nanosleep",
           "usleep", "sleep", "kill", "_exit", "_Exit", "write", "read", "sigaction",
           "pthread_create", "pthread_join"}
    calls = set(re.findall(r"call.*<([\w]+)@plt>", dis)) & own
    assert not calls, "the runtime calls its own wrappers of: " + " ".join(sorted(calls))
    return "%d exported symbols, all libc wrappers or _coz_*" % len(names)


CXX_POINTS = r"""#include "coz.h"
inline int in_header(int x) { if (x > 1000) COZ_PROGRESS; return x + 1; }
int normal(int x) { if (x > 1000) COZ_PROGRESS; return in_header(x) * 2; }
int main(int argc, char **argv) { (void)argv; return normal(argc) == 4 ? 0 : 1; }
"""


def t_wrapper_cost():
    """An uncontended mutex lock+unlock pair under bcoz costs at most
    4 x its native cost + 10 ns (bench/wrapcost.c, interleaved runs, medians
    of 3): a wrapper that drains, does the delay bookkeeping and reads the
    clock on every call costs about 12 x (6 -> 79 ns)."""
    exe = os.path.join(TMP, "wrapcost")
    c = subprocess.run(["gcc", "-O2", "-o", exe, os.path.join(SRC, "bench", "wrapcost.c"),
                        "-lpthread"], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    res = {"native": [], "bcoz": []}
    for _ in range(3):
        n = subprocess.run([exe, "0.3"], capture_output=True, text=True, timeout=60)
        rc, out, err, _ = run(["--end-to-end", "-o", prof("wrapcost.coz")], [exe, "0.3"],
                              timeout=60)
        assert n.returncode == 0 and rc == 0, (n.stderr, err)
        for k, o in (("native", n.stdout), ("bcoz", out)):
            m = re.search(r"wrapcost: mutex_lock_unlock ns=([0-9.]+)", o)
            assert m, o
            res[k].append(float(m.group(1)))
    a, b = sorted(res["native"])[1], sorted(res["bcoz"])[1]
    info = "mutex lock+unlock: native %.1f ns, under bcoz %.1f ns (+%.1f)" % (a, b, b - a)
    assert b <= 4 * a + 10, info
    return info


def t_coz_h_cxx_inline():
    """COZ_PROGRESS in an inline and an ordinary function of one C++ file."""
    cxx = shutil.which("g++")
    if not cxx:
        raise Skip("g++ is not installed")
    src = os.path.join(TMP, "points.cc")
    exe = os.path.join(TMP, "points")
    with open(src, "w") as f:
        f.write(CXX_POINTS)
    c = subprocess.run([cxx, "-O2", "-g", "-I", os.path.join(SRC, "include"), "-o", exe, src],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    assert subprocess.run([exe]).returncode == 0
    # neither point is reached: bcoz names both declarations, once each
    rc, out, err, _ = run(["-o", prof("cxx.coz")], [exe], timeout=30)
    m = re.search(r"declared but never executed: (.*?)\. Fix", err)
    assert m, err
    names = [os.path.basename(n) for n in re.findall(r"'([^']*)'", m.group(1))]
    assert names == ["points.cc:2", "points.cc:3"], names
    return "g++ -O2 compiles it; bcoz names both points: %s" % ", ".join(names)


def t_actual_rounds():
    """actual_runs() adds rounds until the actual speedup is precise, and
    actual_precise() turns down one that never got there: fake runs of a
    true +20 %, each run's speed off by a random factor of spread S."""
    global timed_run
    real = timed_run
    got = {}
    try:
        for spread in (0.01, 0.12, 0.25, 0.6):
            rnd = random.Random(7)

            def fake(args, secs, rnd=rnd, spread=spread):
                rate = 125.0 if args[2] == "50" else 100.0
                return rate * (1 + rnd.uniform(-spread, spread)), ""

            timed_run = fake
            rps = actual_runs("fake", 1, (50,))[0]
            v, ase, how = precision.actual_estimate(rps[0], rps[50])
            got[spread] = (len(rps[0]), ase, v, actual_precise(ase, len(rps[0])))
    finally:
        timed_run = real
    quiet, noisy, late, wild = (got[k] for k in (0.01, 0.12, 0.25, 0.6))
    assert quiet[0] == ACTUAL_MIN_REPS and quiet[1] <= SE_TARGET and not quiet[3], quiet
    assert ACTUAL_MIN_REPS < noisy[0] <= ACTUAL_MORE_REPS and noisy[1] <= SE_GATE, noisy
    assert not noisy[3] and abs(noisy[2] - 20) <= 3 * noisy[1], noisy
    # past ACTUAL_MAX_REPS rounds only while above SE_GATE, and no further
    assert ACTUAL_MAX_REPS < late[0] < ACTUAL_MORE_REPS, late
    assert SE_TARGET < late[1] <= SE_GATE and not late[3], late
    assert wild[0] == ACTUAL_MORE_REPS and wild[1] > SE_GATE and wild[3], wild
    return "; ".join("spread %.0f%%: %d rounds, %+.1f (SE %.1f)%s" % (
        100 * k, n, v, e, ", not judged" if why else "")
        for k, (n, e, v, why) in sorted(got.items()))


def t_busy_stage():
    """truth.busy_stage counts a pipeline's rounds in the time of the stage
    left unchanged when that stage is busy, and in rounds per second when
    it waits: fake runs whose machine speed swings by a third, the line
    without effect (the reader's per-item time follows the machine).  With
    that stage waiting, the stage whose line is halved is the clock, per
    unit of its work, its waits counted."""
    import truth
    view = truth.busy_stage("r_ms", "reader")
    rps, outs = {0: [], 50: []}, {0: [], 50: []}
    for speed in (1.0, 0.7, 1.3, 0.9):
        for s in (0, 50):
            rps[s].append(250.0 * speed)
            outs[s].append("pipeline reader: r_ms=%.3f w_ms=1.0\n" % (3.96 / speed))
    vals, what = view(rps, outs)
    assert what == "in reader time", what
    assert all(abs(v - 0.99) < 1e-4 for v in vals[0] + vals[50]), vals
    assert abs(precision.paired_speedup(vals[0], vals[50])) < 1e-6, vals
    # the same rates with a reader busy half the time: rounds per second
    idle = {s: ["r_ms=%.3f" % (2.0 / sp) for sp in (1.0, 0.7, 1.3, 0.9)] for s in outs}
    vals, what = view(rps, idle)
    assert what == "rounds/s" and vals is rps, (what, vals)
    try:
        view(rps, {0: ["no times"] * 4, 50: ["no times"] * 4})
    except AssertionError as e:
        assert "no r_ms in the program's output" in str(e), e
    else:
        raise AssertionError("an output without r_ms was taken")
    # the reader's own line halved, its worker waiting (a third of the
    # time): per unit of the reader's work, whatever each run's speed (the
    # halved runs on a machine a quarter slower); the halved reader's waits
    # still count
    view = truth.busy_stage("w_ms", "worker", ("r_ms", "reader", 3))
    speeds = (1.0, 0.7, 1.3, 0.9)
    got = {}
    for busy in (0.99, 0.8):
        rps, outs = {0: [], 50: []}, {0: [], 50: []}
        for sb, sc in zip(speeds, (0.75 * sp for sp in speeds)):
            for s, sp, b, item in ((0, sb, 0.99, 4.95), (50, sc, busy, 2.475)):
                rps[s].append(b / (item / sp) * 1e3)
                outs[s].append("r_ms=%.3f w_ms=%.3f" % (item / sp, 1.65 / sp))
        vals, what = view(rps, outs)
        assert what == "per unit of reader work", what
        got[busy] = precision.paired_speedup(vals[0], vals[50])
        assert abs(got[busy] - (1 - 0.99 / (2 * busy)) * 100) < 0.1, (busy, got)
    wild = precision.paired_speedup(rps[0], rps[50])
    assert abs(wild - got[0.8]) > 10, (wild, got)
    # a level at which the stage would no longer be the bottleneck (3 units
    # to the other's 1: from 67 %), or that leaves none of its work
    for level in (70, 100):
        vals, what = view({0: rps[0], level: rps[50]}, {0: outs[0], level: outs[50]})
        assert what == "rounds/s", (level, what)
    return ("busy reader: every run 0.99 item-times, speedup 0; idle reader: rounds/s; "
            "halved reader, idle worker, per unit of its work: %+.1f busy, %+.1f waiting "
            "a fifth (rounds/s %+.1f)" % (got[0.99], got[0.8], wild))


def t_split_items():
    """bench/split.py's per-item split reads what pipeline.c prints: a
    worker-bound pipeline run unprofiled, with made-up pauses."""
    sys.path.insert(0, os.path.join(SRC, "bench"))
    import split
    p = subprocess.run([prog("pipeline"), "12", "0", "worker"], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    row, n = split.item_split(p.stdout, {"pause_ns": 12 * 250000, "process_ns": 0})
    assert n == 12, (n, p.stdout)
    assert abs(row["pauses"] - 0.25) < 1e-9 and \
        abs(row["wall-pauses"] - (row["wall"] - 0.25)) < 1e-9, row
    assert 0 < row["loop"] < row["wall"] and 0 <= row["get"] < row["loop"], row
    # the CPU time is the thread's, the host's steal time not in it
    assert 0 < row["cpu"] < 1.5 * row["wall"], row
    # the loop's CPU time is part of the thread's, and the loop computes
    # (its wall time, less a CPU taken by another thread now and then)
    assert 0.3 * row["loop"] < row["loopcpu"] <= row["cpu"], row
    # three looks an item: at most three changes of CPU
    assert 0 <= row["mig"] <= 3, row
    try:
        split.item_split("pipeline worker: 12 rounds done wall_ms=60.0 r_ms=1.0 w_ms=4.5\n",
                         {"pause_ns": 0, "process_ns": 0})
    except AssertionError as e:
        assert "no per-item times" in str(e), e
    else:
        raise AssertionError("an output without g_ms and w_cpu_ms was taken")
    return "per item: wall %.2f ms, loop %.2f (cpu %.2f), get %.3f, cpu %.2f, cpu changes %.2f" % (
        row["wall"], row["loop"], row["loopcpu"], row["get"], row["cpu"], row["mig"])


TESTS = [(u.__name__, u) for u in unit_tests.ALL] + [
    ("actual speedup: rounds until precise, else not judged", t_actual_rounds),
    ("toy: speeding loop A", t_toy_line_a),
    ("toy: speeding loop B", t_toy_line_b),
    ("stripped toy: speeding function loop_a", t_toy_function_a),
    ("-b %: bcoz's own library is never in scope", t_scope_all_not_runtime),
    ("function granularity: notice, options, .dynsym, C++", t_function_granularity),
    ("lock: speeding critical loop L", t_lock_line_l),
    ("lock: speeding outside loop O", t_lock_line_o),
    ("late timer: pauses stay exact", t_late_timer),
    ("pauses spin unless threads outnumber CPUs", t_pause_kind),
    ("pipeline: the busy stage as a clock", t_busy_stage),
    ("bench split: the worker's times per item", t_split_items),
    ("pipeline: speeding the bottleneck stage", t_pipeline_bottleneck),
    ("pipeline: speeding the other stage", t_pipeline_other_stage),
    ("pipeline: the worker behind a full queue", t_pipeline_full_queue),
    ("fork-join: speeding the big worker", t_forkjoin_big),
    ("fork-join: speeding a small worker", t_forkjoin_small),
    ("two threads, one line: hand-offs after pauses", t_twin_threads),
    ("fork-join: bcoz's own thread set-up sped away", t_own_time),
    ("throttled sampling: counted and named", t_throttle_warning),
    ("auto line selection", t_auto_selection),
    ("end-to-end mode", t_end_to_end),
    ("latency points", t_latency_points),
    ("no progress point error", t_no_progress_point),
    ("main calls pthread_exit", t_pthread_exit_main),
    ("fork and exec", t_fork_and_exec),
    ("--experiments", t_experiments_option),
    ("error messages", t_errors),
    ("static and Go programs: warned, still run", t_unreached_programs),
    ("bad settings and options: one line each", t_settings_errors),
    ("class names: runtime, perf and bcozlib", t_class_names),
    ("stock kernel note", t_stock_kernel_note),
    ("program without bcoz", t_without_bcoz),
    ("plot html", t_plot_html),
    ("plot html in a browser: sort, filter, hover", t_plot_browser),
    ("vfork + exec keeps the parent profiled", t_vfork_exec),
    ("signal() keeps siginterrupt()", t_signal_keeps_siginterrupt),
    ("coz.h: C++ inline and ordinary function", t_coz_h_cxx_inline),
    ("SIGPROF handler on small thread stacks", t_small_stacks),
    ("ulimit -n 256, 100 threads", t_fd_limit),
    ("locked memory: 100 threads unprivileged", t_locked_memory_threads),
    ("--end-to-end: a parent that only waits for its child", t_end_to_end_no_sample),
    ("--end-to-end: the line is drawn after the start-up", t_end_to_end_not_startup),
    ("--follow-exec: child without debug info, static child", t_follow_exec_nodebug),
    ("abort, SIGSEGV, SIGTERM keep the final records", t_fatal_signals),
    ("a program that closes its stderr", t_closed_stderr),
    ("lost sample records: counted, and the advice works", t_lost_records),
    ("plot: bad -o, truncated profile", t_plot_output_errors),
    ("attr.blocked detected positively", t_blocked_detected_positively),
    ("runtime: exports and internal calls", t_runtime_symbols),
    ("wrapper cost: uncontended mutex", t_wrapper_cost),
]


def cpu_snapshot():
    """(busy seconds of all CPUs but steal, steal seconds, this process's and
    its reaped children's CPU seconds, wall time) from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / hz   # user nice system irq softirq
    steal = v[7] / hz if len(v) > 7 else 0.0
    t = os.times()
    return busy, steal, t.user + t.system + t.children_user + t.children_system, time.time()


def others_load(a, b):
    """What the rest of the machine took between two cpu_snapshot()s, as a
    share of all CPUs: other tasks' CPU time, and time the hypervisor stole."""
    cap = max((b[3] - a[3]) * os.cpu_count(), 1e-9)
    other = max(0.0, (b[0] - a[0]) - (b[2] - a[2]))
    return "others took %.0f%% of the CPUs, steal %.0f%%" % (
        other / cap * 100, (b[1] - a[1]) / cap * 100)


def main():
    only = sys.argv[1:]
    if not 0 < SE_TARGET <= SE_GATE:
        # a larger target ends runs at errors need_precise() then skips on
        print("run_tests.py: BCOZ_TEST_SE=%s: the standard error the runs aim at must be "
              "above 0 and at most %.1f points, the largest a +-%.0f check is judged at "
              "(default 2.5)" % (os.environ.get("BCOZ_TEST_SE"), SE_GATE, TOL),
              file=sys.stderr)
        return 2
    tap = Tap()
    t_start = time.time()
    tap.diag("numeric runs: %s; %d usable CPU(s)" % (
        "SCHED_RR via '%s'" % " ".join(RT) if RT else
        "normal priority (a busy machine adds noise)", NCPU))
    for name, fn in TESTS:
        if only and not any(o in name for o in only):
            continue
        t0, snap = time.time(), cpu_snapshot()
        failed = False
        try:
            tap.result(True, name, fn())
        except Skip as e:
            tap.skip(name, str(e))
        except Exception as e:  # noqa: BLE001
            failed = True
            tap.result(False, name, str(e))
            if not isinstance(e, AssertionError):
                tap.diag(traceback.format_exc())
        if time.time() - t0 > 60 or failed:
            tap.diag("%s took %.0fs; %s" % (name, time.time() - t0,
                                           others_load(snap, cpu_snapshot())))
    tap.diag("total time %.0fs" % (time.time() - t_start))
    shutil.rmtree(TMP, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
