# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# TAP 13 for bperf's test scripts, the one copy both run-host-tests.sh and
# vm/run-vm-tests.sh source (scripts/tap-summary.sh sums what they print).
# Sourcing it prints "TAP version 13"; then:
#
#   plan N              announce N results first (optional: without it,
#                       tap_done prints the plan last)
#   ok NAME...          "ok N - NAME": a passed check
#   bad NAME...         "not ok N - NAME": a failed check
#   skip NAME REASON... "ok N - NAME # SKIP REASON": a check that cannot run
#                       here, and why
#   check NAME CMD...   ok or bad by CMD's exit status; returns that status,
#                       so "check ... || diag ..." explains a failure
#   diag [TEXT...]      TEXT, or stdin, as "# " diagnostic lines
#   tap_done            the plan (unless announced); status 0 only if no
#                       check failed and an announced plan was met
#
# Measured numbers go in NAME or in diag lines, never after a " # " (a "#"
# in NAME is escaped as "\#", so it cannot read as a directive).  Nothing
# else may go to stdout: send other output to files, stderr or diag.
tap_n=0 tap_fail=0 tap_plan=
echo "TAP version 13"
_tap_line() {	# STATUS DESCRIPTION [DIRECTIVE]
	local d=${2//$'\n'/ }
	tap_n=$((tap_n + 1))
	echo "$1 $tap_n - ${d//\#/\\#}${3:+ # $3}"
}
plan()  { tap_plan=$1; echo "1..$1"; }
ok()    { _tap_line ok "$*"; }
bad()   { tap_fail=$((tap_fail + 1)); _tap_line "not ok" "$*"; }
skip()  { local name=$1; shift; _tap_line ok "$name" "SKIP ${*:-no reason given}"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; return 1; fi; }
diag()  { if [ $# -gt 0 ]; then printf '%s\n' "$*"; else cat; fi | sed 's/^/# /'; }
tap_done() {
	[ -n "$tap_plan" ] || echo "1..$tap_n"
	if [ -n "$tap_plan" ] && [ "$tap_plan" -ne "$tap_n" ]; then
		diag "planned $tap_plan checks, ran $tap_n"
		return 1
	fi
	[ "$tap_fail" -eq 0 ]
}
