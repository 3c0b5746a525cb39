# SPDX-License-Identifier: GPL-2.0
"""TAP 13 output for bcoz's test suites (summed by scripts/tap-summary.sh).

    TAP version 13
    ok 1 - name
    # measured numbers, one diagnostic line each
    not ok 2 - name
    ok 3 - name # SKIP reason
    1..3
"""
import sys


class Tap:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.n = self.failed = 0
        self.out.write("TAP version 13\n")
        self.out.flush()

    def diag(self, text):
        for line in str(text).splitlines() or [""]:
            self.out.write("# %s\n" % line)
        self.out.flush()

    def result(self, ok, name, info=None):
        self.n += 1
        if not ok:
            self.failed += 1
        self.out.write("%s %d - %s\n" % ("ok" if ok else "not ok", self.n, name))
        if info:
            self.diag(info)
        self.out.flush()

    def skip(self, name, reason):
        self.n += 1
        self.out.write("ok %d - %s # SKIP %s\n" % (self.n, name, reason))
        self.out.flush()

    def done(self):
        """Print the plan; returns the exit status (1 if anything failed)."""
        self.out.write("1..%d\n" % self.n)
        self.out.flush()
        return 1 if self.failed else 0
