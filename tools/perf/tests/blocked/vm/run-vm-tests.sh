#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bperf tests that need a kernel with blocked samples (run inside the VM):
#
#   scripts/run-vm.sh -- tools/perf/tests/blocked/vm/run-vm-tests.sh
#
# Environment: BPERF (default build/bperf/bperf of the repository), SCALE
# (ms per phase of the workload, default 400), DEVICE (block device or file
# on a real disk for O_DIRECT reads, default /dev/vda), OUT (directory for
# the flame graph and reports, default build/vm-scratch/bperf).
#
# Records tests/blocked/vm/phases.c (compute, sleep, O_DIRECT reads, a held
# mutex, an oversubscribed CPU), which measures the time it spends in each
# phase itself, and checks bperf against it:
#   - each class's share of ph-main's time in `bperf report --sort
#     comm,blocked` is within TOL (5) points of the program's own measurement,
#     once the [S] that follows each I/O, lock or sleep wake-up (by symbol,
#     from --sort blocked,sym) is counted with that phase, as the program's
#     wall-clock timing of the phase counts it;
#   - the top [I] symbol is on the read path;
#   - with --call-graph dwarf (Debian's glibc, no frame pointers) the user
#     callchain of blocked samples reaches main;
#   - `bperf record sleep 2` reports about 2000 samples (at least 1900, at
#     most the wall time of the record);
#   - server.c and server-cxx.cpp, built like a server (idle pool workers on
#     a condition variable, clients contending on one mutex, epoll, a
#     sleeper, a pipe reader), recorded with --call-graph dwarf: at least 90%
#     of each thread's off-CPU points carry its true wait reason, its
#     off-CPU points match the off-CPU time it measured itself, no idle
#     worker's wait is called mutex, and --wait-summary calls the workers
#     idle and the clients contended;
#   - RocksDB's db_bench (Debian's rocksdb-tools), readrandom with 4
#     readers on one block-cache shard, recorded with bperf record's
#     defaults: the block cache's mutex waits are `mutex` under a demangled
#     rocksdb::...LRUCacheShard... caller, the rocksdb:* pool is idle in
#     --wait-summary, at most 5% of the waits stay unnamed (db_bench.sh:
#     DB_KEYS, DB_S);
#   - on-CPU time is charged to the code that spent it: per phase of
#     tests/blocked/vm/alternate.c (O_DIRECT reads, computing), on-CPU points
#     x period match the phase's thread CPU time (the read phases: their
#     task-clock count) within 2 % of the run's wall time (attribution.sh;
#     ALT_MS, ALT_IO_MS, ALT_CPU_MS, ALT_TOL).
# Every phase lasts SCALE ms of wall or CPU time, never a fixed amount of
# work, and every expected share is the program's own measurement in the
# same run, so neither the guest's speed (TCG) nor its CPU count matters.
# Prints TAP 13 through ../tap.sh (the program's measurements and the [S]
# moved between classes on "# " lines) and nothing else on stdout; exits 1
# on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
SCALE=${SCALE:-400}
DEVICE=${DEVICE:-/dev/vda}
OUT=${OUT:-$repo/build/vm-scratch/bperf}
TOL=${TOL:-5}
T=$(mktemp -d /tmp/bperf-vm.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$here/../tap.sh"
# The kernel lowers perf_event_max_sample_rate as a suite goes on (samples
# take long under TCG) and then throttles the task-clock: a throttled tick
# drops its points, and a blocked sample whole (an idle thread's only one,
# for its 2 s wait).  Recordings whose points are counted raise it around
# themselves, as the selftests do (a percentage of 0 makes the kernel
# refuse rates); rate_restore puts back what rate_raise found.
SYSK=/proc/sys/kernel
rate_raise() {
	rate0=$(cat $SYSK/perf_event_max_sample_rate)
	pct0=$(cat $SYSK/perf_cpu_time_max_percent)
	echo 25 >$SYSK/perf_cpu_time_max_percent
	echo 100000 >$SYSK/perf_event_max_sample_rate
	echo 0 >$SYSK/perf_cpu_time_max_percent
}
rate_restore() {
	echo 25 >$SYSK/perf_cpu_time_max_percent
	echo "$rate0" >$SYSK/perf_event_max_sample_rate
	echo "$pct0" >$SYSK/perf_cpu_time_max_percent
}
. "$here/attribution.sh"
. "$here/db_bench.sh"
finish() { tap_done; exit $?; }

mkdir -p "$OUT" 2>/dev/null || OUT=$T
cd "$T" || exit 1
# the guest's root is read-only: keep perf's ~/.debug build-id cache in /tmp
[ -w "${HOME:-/nonexistent}" ] || export HOME=$T
[ -x "$BPERF" ] || { bad "no bperf at $BPERF (scripts/build-bperf.sh)"; finish; }
gcc -O1 -g -pthread -o phases "$here/phases.c" || { bad "compile phases.c"; finish; }

# --- the kernel must support blocked samples --------------------------------
"$BPERF" record -o probe.data true >probe.out 2>&1
if grep -q 'does not support blocked samples' probe.out; then
	bad "kernel $(uname -r) has no blocked samples (boot the patched kernel)"
	finish
fi
check "kernel $(uname -r) accepts attr.blocked" \
	bash -c "'$BPERF' evlist -v -i probe.data | grep -q 'blocked: 1'"
check "bperf record true says blocked samples are on, once ($(grep -c '^Blocked samples: on' probe.out))" \
	[ "$(grep -c '^Blocked samples: on (task-clock records off-CPU time' probe.out)" -eq 1 ]
"$BPERF" record -q -o probe-q.data true >probe-q.out 2>&1
check "bperf record -q true: silent ($(wc -l <probe-q.out) lines)" [ ! -s probe-q.out ]

# --- sleep 2: about 2000 sampling points ------------------------------------
# The sleep process lives 2 s plus its exec and exit, which are slow under
# TCG: its points must lie between 2000 - 5% and the wall time of the whole
# record (which also covers perf's own start-up) + 5%.
t0=$(date +%s%N)
"$BPERF" record -o sleep.data sleep 2 >sleep.out 2>&1
wall=$((($(date +%s%N) - t0) / 1000000))
n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' sleep.out)
check "record sleep 2: 'Captured ... (${n:-?} samples)' in [1900, ${wall} ms of record wall time + 5%]" \
	bash -c "[ -n '$n' ] && [ $n -ge 1900 ] && [ $n -le $((wall * 105 / 100)) ]"

# --- phases: shares per class -------------------------------------------------
"$BPERF" record -g -o ph.data ./phases -s "$SCALE" -d "$DEVICE" >expect.txt 2>ph.err
rc=$?
check "record phases (rc=$rc)" [ $rc -eq 0 ] || diag <ph.err
diag "$(nproc) CPU(s); phases -s $SCALE measured (ms):"
diag <expect.txt
grep '^phases:' ph.err | diag
"$BPERF" report -i ph.data --stdio --no-children --sort comm,blocked -n -g none 2>/dev/null >cb.txt
cp cb.txt "$OUT/phases-comm-blocked.txt" 2>/dev/null
# rows: "  12.34%  1234  ph-main  io"
awk '$3 == "ph-main" { print $4, $2 }' cb.txt >got.raw
# The program times each phase by its wall clock, so its io, lock and sleep
# phases include the wait for a CPU after each wake-up, which bperf reports
# as [S] (scheduling), by the paper's definition.  Give those [S] points back
# to the phase they follow, by the symbol the task slept in; [S] of a
# preempted task (exit_to_user_mode_prepare, ...) stays scheduling.
# rows: "  1.34%  77  sched  [S] submit_bio_wait"
"$BPERF" report -i ph.data --stdio --no-children --comms ph-main --sort blocked,sym -n -g none \
	2>/dev/null >bs.txt
awk '$3 == "sched" && $4 == "[S]" {
	if ($5 ~ /bio|blk|read|direct_?io|iomap/) m["io"] += $2
	else if ($5 ~ /futex|mutex|rwsem|semaphore/) m["lock"] += $2
	else if ($5 ~ /nanosleep|hrtimer|schedule_timeout|poll|select/) m["other"] += $2
}
END { for (c in m) print c, m[c] }' bs.txt >moved.txt
awk 'FNR == NR { mv[$1] = $2; tot += $2; next }
     { n = $2 + 0; if ($1 == "sched") n -= tot; else n += mv[$1]; print $1, n }' \
	moved.txt got.raw >got.txt
diag "[S] after wake-ups, given back to the phase they follow: $(tr '\n' ' ' <moved.txt)"
tot=$(awk '{ s += $2 } END { print s + 0 }' got.txt)
etot=$(awk '$1 == "expect" && $2 == "total" { print $3 }' expect.txt)
check "ph-main's sampling points ($tot) match its wall time (${etot} ms) within 5%" \
	awk -v a="$tot" -v b="${etot:-0}" 'BEGIN { exit !(b > 0 && a > 0.95 * b && a < 1.05 * b) }'
for cls in on-cpu io lock sched other; do
	want=$(awk -v c=$cls '$1 == "expect" && $2 == c { print $3 }' expect.txt)
	got=$(awk -v c=$cls '$1 == c { print $2 }' got.txt)
	line=$(awk -v w="${want:-0}" -v t="${etot:-1}" -v g="${got:-0}" -v n="$tot" \
		'BEGIN { printf "%.1f %.1f", 100 * w / t, (n ? 100 * g / n : 0) }')
	set -- $line
	check "share of $cls: program measured $1%, bperf says $2% (tolerance $TOL points; [S] after wake-ups counted with their phase)" \
		awk -v a="$1" -v b="$2" -v t="$TOL" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'
done

# --- the top [I] symbol is on the read path -----------------------------------
"$BPERF" report -i ph.data --stdio --no-children --comms ph-main --sort sym -g none 2>/dev/null >sym.txt
cp sym.txt "$OUT/phases-sym.txt" 2>/dev/null
top_io=$(awk '/\[I\]/ { print $NF; exit }' sym.txt)
check "top [I] symbol '${top_io:-none}' is on the read path" \
	bash -c "echo '${top_io:-}' | grep -Eiq 'read|blkdev|blk_|bio|direct_?io|dio|iomap'"

# --- flame graph --------------------------------------------------------------
"$BPERF" script -i ph.data --flamegraph "$OUT/phases-flamegraph.svg" >fg.out 2>&1
check "flame graph written to $OUT/phases-flamegraph.svg" \
	bash -c "grep -q 'Wrote flame graph' fg.out && [ -s '$OUT/phases-flamegraph.svg' ]"

# --- pprof export of the real recording: go tool pprof reads what report counts
. "$here/../pprof-lib.sh"
rm -f ph.pb.gz
"$BPERF" data convert -i ph.data --to-pprof ph.pb.gz >pp.out 2>&1
rc=$?
cp ph.pb.gz "$OUT/phases.pb.gz" 2>/dev/null
rawsamples ph.pb.gz >ph.raw
sumby ph.raw comm class >pp-cc.txt
repsum ph.data 2 comm,blocked >rep-cc.txt
check "pprof export (rc=$rc): go tool pprof's points and ns per comm and class = report --sort comm,blocked ($(wc -l <pp-cc.txt) rows)" \
	bash -c "[ $rc -eq 0 ] && [ \$(wc -l <pp-cc.txt) -ge 5 ] && cmp -s pp-cc.txt rep-cc.txt" ||
	{ diag <pp.out; diff pp-cc.txt rep-cc.txt | head -8 | diag; }
gopprof -top -nodecount=12 -tagfocus=comm=ph-main -tagleaf=class ph.pb.gz >"$OUT/phases-pprof-top.txt" 2>/dev/null

# --- dwarf unwinding of blocked samples reaches main ---------------------------
"$BPERF" record --call-graph dwarf -o dw.data ./phases -s $((SCALE / 2)) -d "$DEVICE" >/dev/null 2>&1
"$BPERF" script -i dw.data --folded 2>/dev/null | grep '^ph-main;' >folded.txt
read -r blk reach <<<"$(awk '/;\[(io|lock|sched|other)(:[^];]*)?\] [0-9]+$/ {
	b += $NF; if ($0 ~ /;main;/) r += $NF } END { print b + 0, r + 0 }' folded.txt)"
check "dwarf: blocked points of ph-main whose user stack reaches main: $reach of $blk (>= 90%)" \
	awk -v b="$blk" -v r="$reach" 'BEGIN { exit !(b > 0 && r >= 0.9 * b) }'
for cls in io lock other; do
	check "dwarf: some [$cls] stack goes main -> phase_*" \
		grep -Eq ";main;phase_[a-z]+;.*\[$cls(:[^];]*)?\] [0-9]+$" folded.txt
done

# --- a server-like program: each thread's wait is known by construction ------
# server.c (pthreads) and server-cxx.cpp (std::mutex, std::condition_variable),
# both -O2, recorded with DWARF user stacks so that the primitive is found
# through Debian's glibc, which has no frame pointers.  Each thread's off-CPU
# time is measured by the program (wall - CLOCK_THREAD_CPUTIME_ID).  The
# runnable time after each wake-up ([S], reason cpu) is a wait for a CPU,
# not for the primitive: the share of the true wait is taken of the other
# off-CPU points, and the cpu points are shown.  The holder naps while it
# holds the mutex and competes for it with the clients: sleep or mutex.
SRV_MS=${SRV_MS:-$((SCALE * 5))}
gcc -O2 -g -pthread -o server "$here/server.c" &&
	g++ -O2 -g -pthread -o server-cxx "$here/server-cxx.cpp" ||
	bad "compile server.c and server-cxx.cpp"
true_wait() {
	case $1 in
	*-idle*) echo condition ;; *-client*) echo mutex ;; *-holder) echo sleep/mutex ;;
	srv-epoll) echo epoll ;; srv-sleep) echo sleep ;; srv-pipe) echo pipe-read ;;
	esac
}
for prog in server server-cxx; do
	[ -x ./$prog ] || continue
	rate_raise
	"$BPERF" record --call-graph dwarf -o $prog.data ./$prog -s "$SRV_MS" \
		>$prog.txt 2>$prog.err
	rc=$?
	rate_restore
	check "record $prog -s $SRV_MS with --call-graph dwarf (rc=$rc)" [ $rc -eq 0 ] ||
		diag <$prog.err
	# rows: "  12.34%  1234  srv-idle0  condition"
	"$BPERF" report -i $prog.data --stdio --no-children --sort comm,wait -n -g none \
		2>/dev/null | awk '/^ +[0-9.]+%/ { print $3, $4, $2 }' >$prog.cw
	"$BPERF" report -i $prog.data --wait-summary 2>/dev/null >$prog.ws
	cp $prog.cw "$OUT/$prog-comm-wait.txt" 2>/dev/null
	cp $prog.ws "$OUT/$prog-wait-summary.txt" 2>/dev/null
	diag <$prog.ws
	"$BPERF" report -i $prog.data --stats 2>/dev/null |
		awk -v p=$prog '/(THROTTLE|LOST_SAMPLES) events:/ { n[$1] += $3 }
			END { printf "%s: %d throttle, %d lost-samples record(s)\n", p, n["THROTTLE"], n["LOST_SAMPLES"] }' | diag
	while read -r _ name _ wall _ cpu; do
		want=$(true_wait "$name")
		read -r blk hit mtx run <<<"$(awk -v n="$name" -v w="/$want/" '$1 == n && $2 != "on-cpu" {
			b += $3; if (index(w, "/" $2 "/")) h += $3; if ($2 == "mutex") m += $3
			if ($2 == "cpu") r += $3 }
			END { print b + 0, h + 0, m + 0, r + 0 }' $prog.cw)"
		off=$(awk -v w="$wall" -v c="$cpu" 'BEGIN { printf "%.0f", w - c }')
		check "$prog: $name: $hit of its $((blk - run)) off-CPU points not runnable are $want (>= 90%; $run runnable)" \
			awk -v b="$((blk - run))" -v h="$hit" 'BEGIN { exit !(b > 0 && h >= 0.9 * b) }' ||
			awk -v n="$name" '$1 == n' $prog.cw | diag
		check "$prog: $name: $blk off-CPU points for the $off ms it measured off CPU (10% + 20)" \
			awk -v b="$blk" -v o="$off" 'BEGIN { d = b - o; if (d < 0) d = -d; exit !(d <= 0.1 * o + 20) }'
		case $name in *-idle*)
			check "$prog: $name: no condition wait reported as mutex ($mtx points)" \
				awk -v m="$mtx" -v b="$blk" 'BEGIN { exit !(m <= 0.01 * b) }'
			verdict=$(awk -v n="$name" '!/^#/ && $3 == n { print $11 }' $prog.ws)
			check "$prog: $name: --wait-summary says idle (${verdict:-none})" \
				[ "$verdict" = idle ] ;;
		*-client*)
			verdict=$(awk -v n="$name" '!/^#/ && $3 == n { print $11 }' $prog.ws)
			check "$prog: $name: --wait-summary says contended (${verdict:-none})" \
				[ "$verdict" = contended ] ;;
		esac
	done <$prog.txt
done

# --- db_bench: the block cache's mutex, the idle pool ---------------------------
db_bench_test

# --- on-CPU points charged where they were spent -------------------------------
attribution_test

finish
