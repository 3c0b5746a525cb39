#!/bin/bash
# Usage: scripts/tap-summary.sh TAPFILE [EXPECTED_PROGRAMS]
#
# Summarises TAP in one of two shapes, without trusting any exit code:
# - kselftest's (run_kselftest.sh, scripts/kselftest-runner.sh): outer lines
#   "ok N selftests: dir: prog", each program's own TAP nested with a "# "
#   prefix (6.1's runner exits 0 on failures);
# - flat TAP 13, as bperf's and bcoz's suites print it: "ok N - name",
#   "not ok N - name", "ok N - name # SKIP reason", a plan "1..N" first or
#   last. Used when the input has no "# selftests:" header; other lines
#   (build output, "# " diagnostics) are ignored.
# Prints one line per test ("ok", "not ok" or "skip" + program: test), then a
# final line exactly "N passed, N failed, N skipped".
# A test counts as failed when it prints "not ok", when a program's plan
# (1..N) announces more results than it printed, when a program fails or times
# out after its own results, and when fewer programs report than the outer plan
# (or EXPECTED_PROGRAMS, e.g. the line count of kselftest-list.txt) announces.
# Exit status: 0 only if nothing failed and at least one test passed or skipped.
set -euo pipefail

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 TAPFILE [EXPECTED_PROGRAMS]" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 2; }

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
	ksft = 1
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
# flat TAP: a top-level result that is not a kselftest program line
!ksft && /^(not )?ok [0-9]+/ && $0 !~ /^(not )?ok [0-9]+ selftests: / {
	name = testname($0)
	nflat++
	if ($0 ~ /^not ok/) {
		failed++
		printf "not ok  %s\n", name
	} else if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) {
		skipped++
		printf "skip    %s\n", name
	} else {
		passed++
		printf "ok      %s\n", name
	}
	next
}
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
	if (!ksft && nprogs == 0) {
		if (nflat == 0 && oplan == 0) {
			failed++
			print "not ok  no TAP found"
		} else if (oplan > nflat) {
			failed += oplan - nflat
			printf "not ok  %d result(s) missing (plan 1..%d, got %d)\n", oplan - nflat, oplan, nflat
		} else if (oplan == 0) {
			failed++
			print "not ok  no plan (1..N): the suite stopped before its end"
		}
		printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
		exit (failed > 0 || passed + skipped == 0) ? 1 : 0
	}
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
