# SPDX-License-Identifier: GPL-2.0
"""The command line: bcoz run, bcoz plot.

`bcoz run` only maps its options to BCOZ_* variables and becomes the
program with libbcoz.so preloaded; the runtime checks every value (and
their combinations) in src/config.c and prints the one error line.  What
is checked here is what the runtime cannot see: the command line itself
(unknown options, a missing value or '---') and the command to run
(target.py: a warning when the runtime would not profile it).
"""
import argparse
import os
import shutil
import signal
import sys

from . import classes, target

HELP = """bcoz - causal profiler for on- and off-CPU time (blocked samples).

  bcoz run [--end-to-end] [--fixed-line FILE:LINE | --fixed-function NAME]
           [--granularity line|function] [--fixed-speedup 0-100]
           [--speedups 0,25,50] [--experiments N]
           [--blocked-scope i|s|b] [-s SRC_SCOPE]... [-b BIN_SCOPE]...
           [-o profile.coz] [-v] [--follow-exec] --- ./app args
  bcoz plot [-i profile.coz] [--text] [-o plot.html]

See Documentation/bcoz/bcoz.rst."""

RUN_USAGE = ("bcoz run [--end-to-end] [--fixed-line FILE:LINE | --fixed-function NAME] "
             "[--granularity line|function] [--fixed-speedup 0-100] "
             "[--speedups 0,25,..] [--blocked-scope i|s|b] [--experiments N] [-s SRC_SCOPE] "
             "[-b BIN_SCOPE] [-o profile.coz] [-v] [--follow-exec] --- ./app args")
PLOT_USAGE = "bcoz plot [-i profile.coz] [--text] [-o plot.html]"


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line: the problem, and where the
    options are listed."""

    def error(self, message):
        raise UsageError("%s: %s; the options are in `%s --help`"
                         % (self.prog, message, self.prog))


def run_parser():
    p = Parser(prog="bcoz run", usage=RUN_USAGE, allow_abbrev=False,
               description="Run a program under the causal profiler. Values are "
               "checked by the runtime (libbcoz.so), which names the BCOZ_* variable "
               "an option sets when a value is wrong.")
    a = p.add_argument
    a("--end-to-end", action="store_true",
      help="one experiment per run, over the whole run (BCOZ_END_TO_END)")
    a("--fixed-line", metavar="FILE:LINE", help="speed up only this line (BCOZ_FIXED_LINE)")
    a("--fixed-function", metavar="NAME",
      help="speed up only this function (BCOZ_FIXED_FUNCTION)")
    a("--granularity", metavar="line|function",
      help="profile by line (default) or by function (BCOZ_GRANULARITY)")
    a("--fixed-speedup", metavar="0-100", help="one speedup for every experiment "
      "(BCOZ_FIXED_SPEEDUP)")
    a("--speedups", metavar="0,25,50", help="cycle through these speedups (BCOZ_SPEEDUPS)")
    a("--experiments", metavar="N", help="end the program after N experiments "
      "(BCOZ_EXPERIMENTS)")
    a("--blocked-scope", metavar="i|s|b", help="speed up an off-CPU subclass: %s "
      "(BCOZ_BLOCKED_SCOPE)" % classes.scope_forms())
    a("-s", "--source-scope", action="append", default=[], metavar="SRC_SCOPE",
      help="%%-pattern of source files in scope (BCOZ_SRC_SCOPE)")
    a("-b", "--binary-scope", action="append", default=[], metavar="BIN_SCOPE",
      help="%%-pattern of binaries in scope, MAIN by default (BCOZ_BIN_SCOPE)")
    a("-o", "--output", default="profile.coz", help="profile to append to (BCOZ_OUTPUT)")
    a("-v", "--verbose", action="store_true", help="say more (BCOZ_VERBOSE)")
    a("--follow-exec", action="store_true",
      help="keep profiling the programs it execs (BCOZ_FOLLOW_EXEC)")
    return p


def plot_parser():
    p = Parser(prog="bcoz plot", usage=PLOT_USAGE, allow_abbrev=False,
               description="Predictions from a profile: an HTML page, or text.")
    p.add_argument("-i", "--input", default="profile.coz")
    p.add_argument("-o", "--output")
    p.add_argument("--text", action="store_true", help="print the report on stdout")
    return p


def find_lib(here):
    env = os.environ.get("BCOZ_LIB")
    if env:
        return env
    cands = [os.path.join(here, "libbcoz.so"),
             os.path.join(here, "..", "lib", "bcoz", "libbcoz.so"),
             os.path.join(here, "..", "..", "build", "bcoz", "libbcoz.so")]
    for c in cands:
        if os.path.exists(c):
            return os.path.realpath(c)
    raise UsageError("cannot find libbcoz.so (looked in %s); build it with "
                     "`make -C tools/bcoz` or set BCOZ_LIB" % ", ".join(cands))


def split_command(args):
    """(options, command) around the first '---' (or '--')."""
    sep = "---" if "---" in args else "--" if "--" in args else None
    if sep is None:
        raise UsageError("missing '---' before the command, as in: bcoz run [OPTIONS] --- "
                         "./app args (the options are in `bcoz run --help`)")
    i = args.index(sep)
    if not args[i + 1:]:
        raise UsageError("no command after '---', as in: bcoz run [OPTIONS] --- ./app "
                         "args")
    return args[:i], args[i + 1:]


def run_env(o, env):
    """The BCOZ_* variables for the options o, in a copy of env."""
    env = dict(env)
    env["BCOZ_OUTPUT"] = os.path.abspath(o.output)
    env["BCOZ_BIN_SCOPE"] = "\t".join(o.binary_scope) if o.binary_scope else "MAIN"
    env["BCOZ_SRC_SCOPE"] = "\t".join(o.source_scope) if o.source_scope else "%"
    for k, v in (("BCOZ_END_TO_END", "1" if o.end_to_end else ""),
                 ("BCOZ_FIXED_LINE", o.fixed_line or ""),
                 ("BCOZ_FIXED_FUNCTION", o.fixed_function or ""),
                 ("BCOZ_GRANULARITY", o.granularity or env.get("BCOZ_GRANULARITY", "")),
                 ("BCOZ_FIXED_SPEEDUP", o.fixed_speedup or ""),
                 ("BCOZ_BLOCKED_SCOPE", o.blocked_scope or ""),
                 ("BCOZ_SPEEDUPS", o.speedups or ""),
                 ("BCOZ_EXPERIMENTS", o.experiments or ""),
                 ("BCOZ_VERBOSE", "1" if o.verbose else ""),
                 ("BCOZ_FOLLOW_EXEC", "1" if o.follow_exec else "")):
        env[k] = v
    env.pop("BCOZ_WARNED_BLOCKED", None)
    env.pop("BCOZ_FOLLOWED", None)
    return env


def cmd_run(args, here):
    if args[:1] in (["-h"], ["--help"]):
        run_parser().print_help()
        return 0
    opts, cmd = split_command(args)
    o = run_parser().parse_args(opts)
    path = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0])
    if not path or not os.path.exists(path):
        sys.stderr.write("bcoz: error: command not found: %s\n" % cmd[0])
        return 127
    why = target.unreached(path)
    if why:
        sys.stderr.write("bcoz: warning: %s %s\n" % (path, why))
    env = run_env(o, os.environ)
    lib = find_lib(here)
    pre = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = lib + (":" + pre if pre else "")
    # Become the program (as env(1) does): no launcher process lives on, and
    # the program's exit status and signals are its own.
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError as e:
        sys.stderr.write("bcoz: error: cannot run %s: %s\n" % (cmd[0], e.strerror))
        return 126


def cmd_plot(args):
    from . import analysis, profile, report

    o = plot_parser().parse_args(args)
    inp, out = o.input, o.output
    if out and os.path.isdir(out):
        raise UsageError("-o %s is a directory; give the file to write, e.g. -o %s"
                         % (out, os.path.join(out, "plot.html")))
    exps, samples, runs = profile.read_profile(
        inp, lambda m: sys.stderr.write("bcoz plot: warning: %s\n" % m))
    if not exps:
        raise profile.ProfileError(
            "%s holds no experiments (%d run(s) recorded). Usual causes: no "
            "progress point was reached, or the runs were shorter than one "
            "experiment (0.1 s, or BCOZ_EXP_MS, after a warm-up of BCOZ_WARMUP_PCT "
            "of that); see the messages printed by `bcoz run`" % (inp, runs))
    results = analysis.analyse(exps, errors=True)
    if o.text:
        report.text_report(results, samples, runs, len(exps), sys.stdout)
    if out or not o.text:
        out = out or "plot.html"
        page = report.html_report(results, samples, runs, len(exps), inp)
        try:
            with open(out, "w") as f:
                f.write(page)
        except OSError as e:
            raise UsageError("cannot write %s: %s; choose another -o FILE"
                             % (out, e.strerror or e))
        sys.stderr.write("bcoz: wrote %s (%d charts)\n" % (out, len(results)))
    return 0


def main(argv, here=None):
    """bcoz's entry point; here is the directory of the bcoz script, where
    libbcoz.so is looked for."""
    from .profile import ProfileError

    here = here or os.path.dirname(os.path.realpath(argv[0]))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `bcoz plot --text | head` is fine
    if sys.stderr is None:
        # started with fd 2 closed (2>&-): say nothing, and leave it closed
        # for the program (Python opens files non-inheritable)
        sys.stderr = open(os.devnull, "w")
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(HELP)
        return 0 if len(argv) >= 2 else 2
    try:
        if argv[1] == "run":
            return cmd_run(argv[2:], here)
        if argv[1] == "plot":
            return cmd_plot(argv[2:])
        raise UsageError("unknown command %r (use run or plot)" % argv[1])
    except UsageError as e:
        sys.stderr.write("bcoz: error: %s\n" % e)
        return 2
    except ProfileError as e:
        sys.stderr.write("bcoz plot: error: %s\n" % e)
        return 1
