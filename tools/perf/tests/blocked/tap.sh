# SPDX-License-Identifier: GPL-2.0
# TAP 13 for bperf's test scripts (sourced; summed by scripts/tap-summary.sh):
#
#   ok NAME...          a passed check
#   bad NAME...         a failed check
#   skip NAME REASON    a check that cannot run here, and why
#   check NAME CMD...   ok or bad by CMD's exit status
#   tap_done            print the plan; status 0 only if nothing failed
#
# Measured numbers belong in NAME or in "# " lines printed between checks.
tap_n=0 tap_fail=0
echo "TAP version 13"
ok()    { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
bad()   { tap_n=$((tap_n + 1)); tap_fail=$((tap_fail + 1)); echo "not ok $tap_n - $*"; }
skip()  { local name=$1; shift; tap_n=$((tap_n + 1)); echo "ok $tap_n - $name # SKIP $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
tap_done() { echo "1..$tap_n"; [ "$tap_fail" -eq 0 ]; }
