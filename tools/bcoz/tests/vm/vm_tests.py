#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bcoz off-CPU tests (paper section 3.3), for a kernel with blocked samples.

The paper's motivational example (tests/vm/motiv.c) in its two cases, and a
sleep-bound loop (tests/vm/sleeper.c):

  case 1 (thread 2's compute_heavy is critical):
      compute_heavy predicts a clear gain; the pread line and the I/O
      subclass (--blocked-scope i, judged at 100 %) predict no gain.
  case 2 (thread 1's I/O is critical):
      compute_heavy predicts no gain; the pread line and the I/O subclass
      predict a clear gain.
  In both, where the selection has no effect, the critical thread pays at
      least 80 % of the delay inserted (credited pauses, BCOZ_STATS).
  sleeper: --blocked-scope b at 100 % predicts the sleep's measured share.
  truth: the sleep-pipe rows of tests/truth.py (a reader that sleeps, line
      SLEEP_R): reader-bound, the prediction at 50 % within 10 points of
      unprofiled runs whose sleep really is half as long; worker-bound (no
      effect) printed, not asserted, and its pauses adding up to the delay
      owed and what they ran late (within PAUSES_MATCH); and tests/lock.c's holder L against
      unprofiled runs whose loop L really is half as long, printed, not
      asserted while issue 11 is open (it read 4-15 points low in the
      guest on a slow host).
  oversub (one thread more than CPUs, tests/vm/oversub.c): --blocked-scope s
      at 100 % predicts a gain between a third of the share of time the
      threads wait for a CPU (measured by the program in a plain run) and
      that share + 12 points.

Each prediction comes from runs with --fixed-line/--blocked-scope and
--speedups 0,50 (0,100 for the I/O subclass, the sleeper and oversub), so
experiments at both levels interleave within a run.  Runs are sized by
their outcome: the program loops until bcoz has N experiments per speedup
level (--experiments), whatever the speed of the machine or the guest; a run
that does not get there within BCOZ_TEST_TIMEOUT seconds (default 600) fails
saying so.  More runs are appended to the profile while the prediction's
bootstrap standard error is above 3.5 points (BCOZ_TEST_SE), up to 3 runs
(tests/precision.py); there are no retries.  motiv calibrates its case
in each run (a warm-up of both threads); the runs of a case after its
first reuse the loop counts the first one found (MOTIV_ITERS), so that one
profile holds one program.  Prints TAP (tests/tap.py).

usage: vm_tests.py [-o OUTDIR] [--per-level N] [--demo] DEVICE_OR_FILE
  --per-level N  experiments per speedup level and run (default 6)
  --demo         more speedup levels and HTML/text plots per case (Figure 9 shape)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BCOZ_BUILD", os.path.join(SRC, "..", "..", "build", "bcoz"))
BCOZ = os.path.join(BUILD, "bcoz")
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, SRC)
from bcozlib import analysis, report  # noqa: E402
from bcozlib import profile as cozprofile  # noqa: E402
import precision  # noqa: E402
import truth  # noqa: E402
import unit_tests  # noqa: E402
from tap import Tap  # noqa: E402

GAIN = 10.0     # a "clear gain" at 50 % line speedup, in program-speedup points
ZERO = 10.0     # "~0": |prediction| at 50 % within this many points
TRUTH_TOL = 10.0        # prediction vs actual speedup (as the host suite)
# The worker-bound sleeping pipeline's worker pays the reader's delay in
# pauses: the program's pauses (nearly all the worker's; the reader is the
# one sped up), summed over the row's runs, are this share of the global
# delay.  Above 1 by what the pauses ran late.  Its two threads have a
# CPU each, so its pauses spin (profiler.c, pause_ns()), and a spin ends
# late only when the guest takes its CPU: on the lockdep guest
# (2026-11-29, bench/ab.py) 1.029 in 16 runs and 1.031 in 20.  Sleeping
# pauses (BCOZ_SLEEP_PAUSES=1) came to 1.079-1.097 (1.09-1.22 a run), and
# 0.98-1.06 a run when the late part paid the next pause (BCOZ_CARRY=1,
# the default for a day; see Documentation/bcoz/bcoz.rst "Delay
# rules").  The row may stop after
# three runs, so the bound allows one run's worst and some.  Below the
# range, pauses went unpaid (the delay of an experiment's end is
# forgiven); above it, pauses ran late past what they are built to
# prevent.
PAUSES_MATCH = (0.90, 1.30)
PAID = 0.8      # share of the inserted delay the critical thread pays
# A configuration's runs append to one profile until the standard error of
# its prediction is at most SE_TARGET points (BCOZ_TEST_SE), up to MAX_RUNS
# runs: a TCG guest on a busy host is far noisier than on an idle one.
SE_TARGET = float(os.environ.get("BCOZ_TEST_SE", "3.5"))
# the truth rows' prediction and actual aim at this (truth.TABLE_SE)
TRUTH_SE = min(SE_TARGET, 1.5)
MAX_RUNS = 3
TIMEOUT = float(os.environ.get("BCOZ_TEST_TIMEOUT", "600"))


def marker(src, m):
    with open(os.path.join(HERE, src)) as f:
        for i, line in enumerate(f, 1):
            if "/* %s */" % m in line:
                return "%s:%d" % (src, i)
    raise RuntimeError(m)


def main(argv):
    out, per_level, demo, dev = None, 6, False, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-o":
            out = argv[i + 1]
            i += 1
        elif a == "--per-level":
            per_level = int(argv[i + 1])
            i += 1
        elif a == "--demo":
            demo = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            dev = a
        i += 1
    if not dev:
        print(__doc__)
        return 2
    out = out or tempfile.mkdtemp(prefix="bcoz-vm-")
    os.makedirs(out, exist_ok=True)
    levels = "0,25,50,75,100" if demo else "0,50"
    notes = [truth.hold_sample_rate()]
    tap = Tap()
    result = tap.result

    def run(tag, prof, args, cmd, more=1, env_extra=None):
        stats = os.path.join(out, tag + ".stats")
        if os.path.exists(stats):
            os.unlink(stats)
        env = dict(os.environ, BCOZ_STATS=stats, **(env_extra or {}))
        nlev = len(args[args.index("--speedups") + 1].split(","))
        args = ["--experiments", str(per_level * nlev * more)] + args
        t0 = time.time()
        try:
            p = subprocess.run([BCOZ, "run", "-o", prof] + args + ["---"] + cmd, env=env,
                               capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise RuntimeError("%s: %d experiments were not done within %.0f s (a hang, or "
                               "a guest too slow for them; BCOZ_TEST_TIMEOUT raises the "
                               "limit)" % (tag, per_level * nlev * more, TIMEOUT))
        with open(os.path.join(out, tag + ".log"), "w") as f:
            f.write(p.stdout + p.stderr)
        if "no blocked samples" in p.stderr and not os.environ.get("BCOZ_VM_ON_HOST"):
            result(False, "kernel %s has blocked samples" % os.uname().release,
                   "bcoz said: %s; run these tests in the VM with the patched kernel"
                   % p.stderr.strip().splitlines()[0])
            sys.exit(tap.done())
        if p.returncode:
            raise RuntimeError("%s: bcoz run failed (%d): %s" % (tag, p.returncode,
                                                                 p.stderr[-500:]))
        st = {}
        if os.path.exists(stats):
            with open(stats) as f:
                for kv in f.read().split():
                    k, v = kv.split("=")
                    st[k] = int(v)
        return p.stdout, st, time.time() - t0

    def pred(prof, sel, level):
        exps, _, _ = cozprofile.read_profile(prof)
        for r in analysis.analyse(exps):
            if r["selected"] == sel or r["selected"].endswith(sel):
                return r["speedups"].get(level), r
        return None, None

    motiv = os.path.join(BUILD, "tests", "vm", "motiv")
    heavy, pread = marker("motiv.c", "HEAVY"), marker("motiv.c", "PREAD")
    for case in (1, 2):
        prof = os.path.join(out, "case%d.coz" % case)
        if os.path.exists(prof):
            os.unlink(prof)
        got = {}
        # Every run of the case, whatever the selection, appends to one
        # profile: after the first, motiv runs with the loop counts that
        # run calibrated (MOTIV_ITERS), so the profile is of one program.
        iters = {}
        # The I/O subclass is only the [I] part of the reads (not the
        # on-CPU syscall work nor the [S] wait for a CPU after each one
        # that the pread line also covers): 15-30 % of thread 1's time
        # under TCG, so at 50 % its gain (8-15 points) is within the noise
        # of the experiments.  It is judged at 100 %.
        configs = [("heavy", ["--fixed-line", heavy], heavy, 50),
                   ("pread", ["--fixed-line", pread], pread, 50),
                   ("io", ["--blocked-scope", "i"], "IO", 100)]
        for tag, args, sel, level in configs:
            st = {}   # what the runs printed: last output, time, blocked samples
            se, runs = float("inf"), 0
            critical = (case == 1 and tag == "heavy") or (case == 2 and tag != "heavy")
            lv = levels if level == 50 or demo else "0,%d" % level

            def run_once(n, tag=tag, args=args, lv=lv, st=st):
                so, st1, dt1 = run("case%d-%s" % (case, tag), prof,
                                   args + ["--speedups", lv], [motiv, dev, str(case), "0"],
                                   env_extra=iters.get("env"))
                light, heavy = re.search(r"light (\d+),", so), \
                    re.findall(r"heavy (\d+) iterations", so)
                if "env" not in iters and light and heavy:
                    iters["env"] = {"MOTIV_ITERS": "%s,%s" % (light.group(1), heavy[-1])}
                st["so"], st["dt"] = so, st.get("dt", 0) + dt1
                st["blocked"] = st.get("blocked", 0) + st1.get("blocked", 0)
                # the delay paid (credited pauses, and with BCOZ_CARRY=1 the
                # excess of late ones that paid later pauses) and the
                # delay inserted
                st["paid"] = st.get("paid", 0) + st1.get("pause_ns", 0) - \
                    st1.get("overslept_ns", 0) + st1.get("carried_ns", 0)
                st["delay"] = st.get("delay", 0) + st1.get("global_delay_ns", 0)
            try:
                # runs append to the case's profile until this selection's
                # prediction is precise enough (tests/precision.py)
                se, runs = precision.until_precise(prof, sel, (level,), run_once,
                                                   SE_TARGET, MAX_RUNS)
            except RuntimeError as e:
                tap.diag(str(e))
            so, dt = st.get("so", ""), st.get("dt", 0)
            v, r = pred(prof, sel, level)
            got[tag] = v
            info = "%d%%: %s  SE %.1f, %d run(s)  blocked samples %d (%.0fs) %s" % (
                level, "n/a" if v is None else "%+.1f" % v, se, runs, st.get("blocked", -1), dt,
                (re.search(r"io [0-9.]+ ms/iter", so) or [""])[0])
            m = re.search(r"thread 1 \(light\+io\) ([0-9.]+) ms, thread 2 \(heavy\) ([0-9.]+) ms",
                          so)
            if m and float(m.group(1)) > 0:
                # thread 2's work over thread 1's per round, pauses included
                info += ", thread 2/thread 1 %.2f" % (float(m.group(2)) / float(m.group(1)))
            if tag != "io" and st.get("blocked", 0) <= 0:
                result(False, "case %d %s: blocked samples seen" % (case, tag), info)
                continue
            if v is None:
                result(False, "case %d %s: prediction" % (case, tag), "no data; " + info)
                continue
            if critical:
                result(v >= GAIN, "case %d %s predicts a gain" % (case, tag),
                       "want >= %+.0f; %s" % (GAIN, info))
            else:
                # "Positive only in the other case": no gain here.  Below
                # zero is noise of the inserted delays (TCG, busy host),
                # not a prediction that the line helps.
                result(v <= ZERO, "case %d %s predicts no gain" % (case, tag),
                       "want <= %+.0f; %s" % (ZERO, info))
                # The mechanism under it: the one thread that does not run
                # the selection (the critical one) pays the whole delay.
                # Its wait at the barrier excuses only what the other
                # thread earned while it waited; excused the last point
                # of that thread's loop (owed points dated at their
                # switch-in), it paid 41-54 % and the line read +2.9 on
                # average, up to +12.6.  Since: 88-100 %.
                paid = st.get("paid", 0) / st["delay"] if st.get("delay") else 0
                result(paid >= PAID, "case %d %s: the critical thread pays the delay"
                       % (case, tag), "want >= %.0f %%; paid %.0f %% of %.0f ms" % (
                           PAID * 100, paid * 100, st.get("delay", 0) / 1e6))
        if True:   # text and HTML plots of the case (Figure 9 shape with --demo)
            with open(os.path.join(out, "case%d.txt" % case), "w") as f:
                subprocess.run([BCOZ, "plot", "-i", prof, "--text"], stdout=f,
                               stderr=subprocess.DEVNULL)
            subprocess.run([BCOZ, "plot", "-i", prof, "-o",
                            os.path.join(out, "case%d.html" % case)],
                           stderr=subprocess.DEVNULL)
        notes.append("case %d: %s" % (case, got))

    def subclass_case(tag, scope, sel, cmd, share_of, accept, what, want, more=1):
        """--blocked-scope SCOPE at 100 % against a share the program measured."""
        prof = os.path.join(out, tag + ".coz")
        v, shares = None, []
        if os.path.exists(prof):
            os.unlink(prof)

        def run_once(n):
            so, st, dt = run(tag, prof, ["--blocked-scope", scope, "--speedups",
                                         "0,50,100" if demo else "0,100"], cmd, more)
            if share_of(so) is not None:
                shares.append(share_of(so))
        try:
            # runs append to one profile until the prediction is precise
            # enough (tests/precision.py); the truth is their mean share
            se, runs = precision.until_precise(prof, sel, (100,), run_once,
                                               SE_TARGET, MAX_RUNS)
            v, r = pred(prof, sel, 100)
            share = sum(shares) / len(shares) if shares else None
            ok = v is not None and share is not None and accept(v, share)
            result(ok, "%s: scope %s predicts the %s" % (tag, scope, what),
                   "100%%: %s, %s %s (%s); SE %.1f, %d run(s)" % (
                       "n/a" if v is None else "%+.1f" % v, what,
                       "n/a" if share is None else "%.1f%%" % share, want, se, runs))
        except RuntimeError as e:
            result(False, tag, str(e))

    def share_in(text, key):
        m = re.search(key + r"=([0-9.]+)", text)
        return float(m.group(1)) * 100 if m else None

    # sleep-bound loop: speeding the OTHER subclass by 100 % removes the sleep
    sleeper = os.path.join(BUILD, "tests", "vm", "sleeper")
    subclass_case("sleeper", "b", "OTHER", [sleeper, "0", "10", "10"],
                  lambda so: share_in(so, "sleep_share"),
                  lambda v, share: abs(v - share) <= 12, "sleep share", "+-12")

    # oversubscribed CPUs: speeding the scheduling subclass by 100 % removes
    # the time the threads wait for a CPU.  The truth comes from a plain run:
    # under bcoz the pauses of the 100 % experiments would count as waiting.
    oversub = os.path.join(BUILD, "tests", "vm", "oversub")
    p = subprocess.run([oversub, "6", "20"], capture_output=True, text=True, timeout=120)
    wait_share = share_in(p.stdout, "sched_share")
    # Twice the experiments: three threads time-sharing two CPUs vary more
    # from experiment to experiment than the other programs.  Virtual speedup
    # under-predicts here: measured 0.48-0.78 of the share with spinning
    # pauses (sleeping ones: 0.4-0.6), see Documentation/bcoz/bcoz.rst.
    # Asserted: a clear gain, at least a third of the share, and never more
    # than it + 12.
    subclass_case("oversub", "s", "SCHEDULING", [oversub, "0", "20"],
                  lambda so: wait_share,
                  lambda v, share: share >= GAIN and max(GAIN, share / 3) <= v <= share + 12,
                  "CPU-wait share", "want a third of it to +12", more=2)
    # Ground truth off the CPU: tests/truth.py's pipeline whose reader
    # sleeps (line SLEEP_R, seen only through blocked samples), its
    # prediction at 50 % against unprofiled runs whose sleep really is half
    # as long, made here.  Reader-bound, the line is the bottleneck: within
    # TRUTH_TOL points of its actual speedup (measured +0.4..+2.8 off).
    # Worker-bound, it has no effect: printed, not asserted.  On this lockdep
    # kernel it read below zero with sleeping pauses (-2.9 to -8.8 in four
    # CIs, about +0.5 actual; -0.5 on the nolockdep one, truth.sh --vm),
    # the wake-ups' cost; its pauses spin since 2026-11-29, and it read
    # -2.8 (SE 2.7) against -10.4 (1.7) sleeping, 16 runs each.
    # The lock's holder (tests/lock.c, L at 50 %: about +50): it read 11-13
    # points low in the guest while owed on-CPU points (13-27 % of a
    # holder's, their timer interrupt late) went to the lock call, and
    # still 3-7 low while the point due before each unlock, sampled after
    # it, and the samples of bcoz's own SIGPROF handler went elsewhere
    # (Documentation/bcoz/bcoz.rst, "Attribution of a sample").  With both
    # charged where they fell: -3.7..+2.3 off in six truth.sh runs on both
    # kernels and 0.0 here (2026-11-28).  Printed, not asserted, while
    # issue 11 is open: in eight fresh-clone CIs it read 0.6 to 12.8 below
    # its actual (mean 4.7), and on 2026-11-29, with each of the host's
    # CPUs running at under half its best speed most of the time, -12.8,
    # -8.9 and -14.7 at standard errors of 1.5-2.1 (the last two without
    # the sample rate held), where the host suite's L read +49.9.  Not the
    # late samples above: bench/oncpu-points.sh read them no worse that
    # day.  The cause is open.  The asserted rows aim both estimates at TRUTH_SE, as
    # truth.sh's tables do (the actual's rounds stop at ACTUAL_MAX_REPS
    # once its SE is within SE_GATE).
    import run_tests  # sets truth.R (the host suite's helpers); actual_precise()
    for name, mark, what, asserted in (("sleep-pipe-reader", "SLEEP_R", "the bottleneck", True),
                                         ("sleep-pipe-worker", "SLEEP_R", "no effect", False),
                                         ("lock", "LOOP_L", "the holder", False)):
        tag = "truth: %s %s (%s)" % (name, mark, what)
        try:
            r = truth.measure(truth.find(name, mark),
                              **(dict(target=TRUTH_SE) if asserted else {}))
        except (AssertionError, RuntimeError) as e:
            result(False, tag, str(e).splitlines()[0])
            continue
        if name == "sleep-pipe-worker":
            paused, owed = r["pauses"]
            result(owed > 0 and PAUSES_MATCH[0] <= paused / owed <= PAUSES_MATCH[1],
                   "truth: %s: the pauses add up to the delay owed" % name,
                   "%.0f ms paused for %.0f ms owed (%.3f; want %.2f-%.2f)" % (
                       paused / 1e6, owed / 1e6, paused / owed if owed else 0,
                       PAUSES_MATCH[0], PAUSES_MATCH[1]))
        pred, act = r["predicted"], r["actual"]
        info = ("50%%: %s, actual %+.1f (%s; the other estimate %+.1f, SE %.1f); "
                "SE %.1f, %d run(s) (%.0fs); %s") % (
            "n/a" if pred is None else "%+.1f" % pred, act, r["how"], r["other"],
            r["actual_se"], r["se"], r["runs"], r["time"], r["printed"])
        if not asserted:
            tap.diag("not asserted (issue 11): %s: %s; %s" % (
                tag, info, "n/a" if pred is None else "%+.1f from the actual" % (pred - act)))
            continue
        # As on the host: a ground truth as uncertain as the tolerance is
        # not judged against.
        why = run_tests.actual_precise(r["actual_se"], r["rounds"])
        if why:
            tap.skip(tag + " predicts its actual speedup", "%s (%s)" % (why, info))
            continue
        result(pred is not None and abs(pred - act) <= TRUTH_TOL,
               tag + " predicts its actual speedup",
               "want within %.0f; %s" % (TRUTH_TOL, info))
    for n in notes:
        tap.diag(n)
    tap.diag("profiles, logs and plots in " + out)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
