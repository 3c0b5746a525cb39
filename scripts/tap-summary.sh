#!/bin/bash
# Usage: scripts/tap-summary.sh TAPFILE [EXPECTED_PROGRAMS]
#
# Summarises TAP in one of two shapes, without trusting any exit code, and
# prints one line per test ("ok", "not ok" or "skip", then the test's name),
# then a final line exactly "N passed, N failed, N skipped".
#
# kselftest's nested TAP (run_kselftest.sh, scripts/kselftest-runner.sh), used
# when the input has a "# selftests: dir: prog" line: outer lines "ok N
# selftests: dir: prog", each program's own TAP nested with a "# " prefix
# (6.1's runner exits 0 on failures). Each nested result is one test. A test
# counts as failed when it prints "not ok", when a program's plan (1..N)
# announces more results than it printed, when a program fails or times out
# after its own results, and when fewer programs report than the outer plan
# (or EXPECTED_PROGRAMS, e.g. the line count of kselftest-list.txt) announces.
# Summary lines that follow the TAP (this script's own output, as
# scripts/run-selftests.sh prints it) are not counted again.
#
# Flat TAP 13 otherwise, as bperf's and bcoz's suites print it:
#     TAP version 13
#     ok 1 - name
#     #   diagnostics
#     not ok 2 - name
#     ok 3 - name # SKIP reason
#     1..3
# Only top-level lines count; "# " diagnostics, indented lines and anything
# else (build output around the suite) are ignored. The plan may come first
# or last. Each "TAP version" line starts a new stream (so does a result
# after a stream's trailing plan); each stream is checked on its own:
#   "not ok"                        1 failed
#   "ok ... # SKIP reason"          1 skipped (the directive, case-insensitive)
#   plan announces more results     1 failed per missing result
#   more results than the plan      1 failed
#   no plan                         1 failed (the suite stopped before its end)
#   "Bail out!"                     the missing results failed, at least 1
#   "1..0 # SKIP reason", no result 1 skipped
#   no TAP at all                   1 failed
# EXPECTED_PROGRAMS applies to kselftest TAP only.
# Exit status: 0 only if nothing failed and at least one test passed or skipped.
set -euo pipefail

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 TAPFILE [EXPECTED_PROGRAMS]" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 2; }

if ! tr -d '\r' <"$1" | grep -Eq '^# selftests: [^:]+: '; then
	tr -d '\r' <"$1" | awk '
function testname(s) {
	sub(/^(not )?ok [0-9]+[ \t]*(- )?/, "", s)
	return s
}
function start_stream() {
	nstream++
	instream = 1; nres = 0; plan = -1; trailing = 0; bailed = 0
	where = nstream > 1 ? sprintf("TAP stream %d: ", nstream) : ""
}
function end_stream(   miss) {
	if (!instream)
		return
	instream = 0
	if (bailed) {
		miss = plan > nres ? plan - nres : 1
		failed += miss
		printf "not ok  %sbailed out after %d result(s)%s\n", where, nres,
			(plan > nres ? sprintf(", %d missing (plan 1..%d)", miss, plan) : "")
	} else if (plan < 0) {
		failed++
		if (nres == 0)
			printf "not ok  %sno result and no plan: the suite printed nothing after \"TAP version\"\n", where
		else
			printf "not ok  %sno plan (1..N): the suite stopped before its end (%d result(s))\n", where, nres
	} else if (plan == 0 && nres == 0) {
		skipped++
		printf "skip    %swhole suite%s\n", where, planskip
	} else if (plan > nres) {
		failed += plan - nres
		printf "not ok  %s%d result(s) missing (plan 1..%d, got %d)\n", where, plan - nres, plan, nres
	} else if (plan < nres) {
		failed++
		printf "not ok  %smore results than the plan (plan 1..%d, got %d)\n", where, plan, nres
	}
}
/^TAP version [0-9]+/ { end_stream(); start_stream(); next }
/^(not )?ok [0-9]+([ \t]|$)/ {
	if (!instream || (plan >= 0 && trailing)) {
		end_stream(); start_stream()
	}
	nres++
	name = testname($0)
	if ($0 ~ /^not ok/) {
		failed++
		printf "not ok  %s%s\n", where, name
	} else if (tolower($0) ~ /[ \t]#[ \t]*skip/) {
		skipped++
		printf "skip    %s%s\n", where, name
	} else {
		passed++
		printf "ok      %s%s\n", where, name
	}
	next
}
/^1\.\.[0-9]+/ {
	if (!instream || plan >= 0) {
		end_stream(); start_stream()
	}
	p = $1; sub(/^1\.\./, "", p); plan = p + 0
	trailing = nres > 0
	planskip = ""
	if (match($0, /#.*/)) planskip = " " substr($0, RSTART)
	next
}
/^Bail out!/ {
	if (!instream)
		start_stream()
	bailed = 1
	print "not ok  " where $0
	end_stream()
	next
}
END {
	end_stream()
	if (nstream == 0) {
		failed++
		print "not ok  no TAP found"
	}
	printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
	exit (failed > 0 || passed + skipped == 0) ? 1 : 0
}'
	exit
fi

tr -d '\r' <"$1" | awk -v expected="${2:-0}" '
function finish_prog(   miss) {
	if (cur == "")
		return
	if (plan[cur] > nres[cur]) {
		miss = plan[cur] - nres[cur]
		failed += miss
		printf "not ok  %s: %d result(s) missing (plan 1..%d, got %d)\n", cur, miss, plan[cur], nres[cur]
	}
	cur = ""
}
function testname(s) {
	sub(/^(not )?ok [0-9]+ ?(- )?/, "", s)
	return s
}
# "# selftests: dir: prog" starts a program
/^# selftests: [^:]+: / {
	finish_prog()
	cur = $0; sub(/^# selftests: [^:]+: /, "", cur)
	nres[cur] = 0; plan[cur] = 0; bad[cur] = 0
	next
}
# nested plan and results (exactly one "# " prefix)
cur != "" && /^# 1\.\.[0-9]+/ {
	p = $2; sub(/^1\.\./, "", p); plan[cur] = p + 0
	next
}
cur != "" && /^# (not )?ok [0-9]+/ {
	line = substr($0, 3)
	nres[cur]++
	name = testname(line)
	if (line ~ /^not ok/) {
		failed++; bad[cur]++
		printf "not ok  %s: %s\n", cur, name
	} else if (tolower(line) ~ /# *skip/) {
		skipped++
		printf "skip    %s: %s\n", cur, name
	} else {
		passed++
		printf "ok      %s: %s\n", cur, name
	}
	next
}
# outer plan
/^1\.\.[0-9]+/ { oplan = substr($1, 4) + 0; next }
# outer result for one program
/^(not )?ok [0-9]+ selftests: [^:]+: / {
	prog = $0; sub(/^(not )?ok [0-9]+ selftests: [^:]+: /, "", prog)
	extra = ""
	if (match(prog, / *#.*/)) { extra = substr(prog, RSTART); prog = substr(prog, 1, RSTART - 1) }
	if (cur == prog)
		finish_prog()
	nprogs++
	if ($0 ~ /^not ok/) {
		if (!bad[prog] && nres[prog] >= plan[prog]) {
			# every announced result was seen (or none were), yet the program failed
			failed++
			printf "not ok  %s: program failed%s\n", prog, extra
		}
	} else if (nres[prog] == 0) {
		if (tolower(extra) ~ /skip/) { skipped++; printf "skip    %s%s\n", prog, extra }
		else { passed++; printf "ok      %s (no TAP of its own)\n", prog }
	}
	next
}
END {
	finish_prog()
	want = oplan > expected ? oplan : expected
	if (want == 0 && nprogs == 0) {
		failed++
		print "not ok  no test program reported anything (no TAP found)"
	} else if (nprogs < want) {
		failed += want - nprogs
		printf "not ok  %d test program(s) never reported (expected %d, got %d)\n", want - nprogs, want, nprogs
	}
	printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
	exit (failed > 0 || passed + skipped == 0) ? 1 : 0
}'
