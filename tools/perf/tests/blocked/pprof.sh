# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# pprof export (perf data convert --to-pprof), sourced by run-host-tests.sh
# after its section 4b: uses $BPERF, blk.data + expect.txt (one thread, the
# classes mkblocked.py made, exact expected points) and mt.data (three
# threads).  The profiles are read by `go tool pprof` (Debian's golang-go,
# `make deps`), an independent decoder of profile.proto; its totals per
# class, per thread and per thread and class must equal what `bperf report`
# counts on the same file, exactly, in sampling points and in nanoseconds.

. "$here/pprof-lib.sh"

if [ -z "$GO" ] || ! gopprof -h >/dev/null 2>&1; then
	bad "go tool pprof runs offline (install golang-go: make deps), to read the pprof export"
	GO=false
fi

rm -f blk.pb.gz
"$BPERF" data convert -i blk.data --to-pprof blk.pb.gz >pp.out 2>&1
rc=$?
check "data convert --to-pprof: exit 0 and a gzip file (rc=$rc)" \
	bash -c "[ $rc -eq 0 ] && [ \"\$(head -c 2 blk.pb.gz | od -An -tx1 | tr -d ' ')\" = 1f8b ]" ||
	diag <pp.out
rawsamples blk.pb.gz >blk.raw
check "go tool pprof -raw decodes it ($(wc -l <blk.raw) samples)" [ -s blk.raw ] || diag <blk.pb.gz.err

# per class: points and nanoseconds, pprof vs report --sort blocked vs mkblocked.py
sumby blk.raw class >pp-class.txt
repsum blk.data 1 blocked >rep-class.txt
for cls in on-cpu io lock sched other; do
	want=$(awk -v c=$cls '$1 == c { print $2 }' expect.txt)
	got=$(awk -v c=$cls '$1 == c { print $2 " points, " $3 " ns" }' pp-class.txt)
	rep=$(awk -v c=$cls '$1 == c { print $2 " points, " $3 " ns" }' rep-class.txt)
	check "pprof class=$cls: $got, report --sort blocked: $rep, mkblocked.py: $want points" \
		bash -c "[ -n '$got' ] && [ '$got' = '$rep' ] && [ '${got%% *}' = '$want' ]"
done
ptot=$(awk '{ s += $2 } END { print s + 0 }' pp-class.txt)
check "pprof: the points of all classes add up to the recording's $total ($ptot)" [ "$ptot" = "$total" ]
# pprof's own aggregation by tag agrees with the sums of its raw samples
gopprof -tags -sample_index=samples blk.pb.gz 2>/dev/null |
	awk '/^ *class: Total/ { on = 1; next } /^ *[a-z]+: Total/ { on = 0 }
	     on && /%\):/ { printf "%s %d\n", $NF, $1 }' | sort >tags-class.txt
check "go tool pprof -tags: class totals in points equal report's ($(tr '\n' ' ' <tags-class.txt))" \
	bash -c "[ -s tags-class.txt ] && cmp -s tags-class.txt <(awk '{ print \$1, \$2 }' rep-class.txt)" ||
	diff tags-class.txt <(awk '{ print $1, $2 }' rep-class.txt) | diag
# blocked samples name their wait; on-CPU ones have none; every sample has a thread
nbad=$(awk '{ w = 0; c = ""; t = 0
	for (i = 3; i <= NF; i++) { if ($i ~ /^wait=/) w = 1; if ($i ~ /^class=/) c = substr($i, 7)
				    if ($i ~ /^(tid|pid|comm)=./) t++ }
	if ((c == "on-cpu") == w || t != 3) n++ } END { print n + 0 }' blk.raw)
check "pprof labels: wait on every blocked sample only, tid/pid/comm on all ($nbad wrong)" \
	bash -c "[ -s blk.raw ] && [ $nbad -eq 0 ]"

# functions, source lines and mappings
gopprof -raw blk.pb.gz 2>/dev/null >blk.rawfull
nl=$(wc -l <work.c)
spinline=$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ spin / { for (i = 1; i <= NF; i++) if ($i ~ /work\.c:[0-9]+$/) { split($i, a, ":"); print a[2]; exit } }' blk.rawfull)
check "pprof locations: spin with its source line in work.c (line ${spinline:-none} of $nl)" \
	bash -c "[ -n '$spinline' ] && [ '$spinline' -ge 1 ] && [ '$spinline' -le $nl ]" ||
	grep -m3 ' spin ' blk.rawfull | diag
check "pprof locations: main and libc by name, kernel frames too" \
	bash -c "grep -q ' M=[0-9]* main ' blk.rawfull && grep -q ' M=[0-9]* __libc_start' blk.rawfull &&
		 grep -Eq ' M=[0-9]+ (do_syscall_64|entry_SYSCALL_64|\[kernel)' blk.rawfull"
bid=$(readelf -n work 2>/dev/null | awk '/Build ID/ { print $3 }')
check "pprof mappings: $T/work with its build id ${bid:-?}" \
	grep -Eq "^ *[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $T/work +$bid" blk.rawfull ||
	sed -n '/^Mappings/,$p' blk.rawfull | head -5 | diag

file=$(gopprof -top blk.pb.gz 2>/dev/null | awk '/^File: / { print $2; exit }')
check "go tool pprof -top names the program as the profile's File: (${file:-none})" \
	[ "$file" = work ]

# per thread (three threads): comm,class and tid,class against report
rm -f mt.pb.gz
"$BPERF" data convert -i mt.data --to-pprof mt.pb.gz >/dev/null 2>&1
rawsamples mt.pb.gz >mt.raw
sumby mt.raw comm class >pp-cc.txt
repsum mt.data 2 comm,blocked >rep-cc.txt
check "pprof per comm and class = report --sort comm,blocked ($(wc -l <pp-cc.txt) rows: $(awk '{ printf "%s %s; ", $1, $2 }' pp-cc.txt))" \
	bash -c "[ \$(wc -l <pp-cc.txt) -ge 3 ] && cmp -s pp-cc.txt rep-cc.txt" || diff pp-cc.txt rep-cc.txt | diag
# by tid alone: a sample labels the comm the thread had when it was taken,
# while --sort pid names a thread by its last comm, so a sample that lands
# before a worker's prctl(PR_SET_NAME) is "mt" in one and "mt-b" in the other
sumby mt.raw tid >pp-tid.txt
"$BPERF" report -i mt.data --stdio -n --no-children --show-total-period -g none --sort pid 2>/dev/null |
	awk '/^ +[0-9.]+%/ { split($NF, a, ":"); print a[1], $2, $3 }' | sort >rep-tid.txt
check "pprof per tid = report --sort pid, points and ns ($(wc -l <pp-tid.txt) threads)" \
	bash -c "[ \$(wc -l <pp-tid.txt) -eq 3 ] && cmp -s pp-tid.txt rep-tid.txt" || diff pp-tid.txt rep-tid.txt | diag

# bad input: a clear message, non-zero exit, no output left behind
"$BPERF" data convert -i missing.data --to-pprof miss.pb.gz >o 2>&1; rc=$?
check "--to-pprof of a missing file: rc=$rc, names it, no output file" \
	bash -c "[ $rc -ne 0 ] && grep -q 'missing.data' o && [ ! -e miss.pb.gz ]" || diag <o
"$BPERF" data convert -i blk.data --to-pprof /nonexistent-dir/p.pb.gz >o 2>&1; rc=$?
check "--to-pprof to an unwritable path: rc=$rc, 'Cannot create /nonexistent-dir/p.pb.gz: ...'" \
	bash -c "[ $rc -ne 0 ] && grep -q 'Cannot create /nonexistent-dir/p.pb.gz: No such file' o" || diag <o
"$BPERF" data convert -i blk.data --to-pprof blk.pb.gz >o 2>&1; rc=$?
check "--to-pprof over an existing file: rc=$rc, says to use --force" \
	bash -c "[ $rc -ne 0 ] && grep -q 'exists; use --force' o" || diag <o
"$BPERF" data convert -i blk.data --to-pprof blk.pb.gz --force >o 2>&1; rc=$?
check "--to-pprof --force overwrites it (rc=$rc)" [ $rc -eq 0 ] || diag <o
head -c $((dend / 2)) blk.data >t.data
"$BPERF" data convert -i t.data --to-pprof t.pb.gz >o 2>&1; rc=$?
check "--to-pprof of a truncated file: rc=$rc, says so, no output file" \
	bash -c "[ $rc -ne 0 ] && grep -q 'truncated' o && [ ! -e t.pb.gz ]" || diag <o
