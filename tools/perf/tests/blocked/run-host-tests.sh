#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host tests of bperf: no kernel with blocked samples is needed.
#
#   tools/perf/tests/blocked/run-host-tests.sh [BPERF]
#
# BPERF defaults to build/bperf/bperf of the repository.  Stock perf
# (/usr/bin/perf, Debian's linux-perf 6.1, or $STOCK_PERF) is used for the
# compatibility, diff, parity (parity.sh) and demangling (demangle.sh)
# tests.  Prints TAP 13 through tap.sh (one result per
# check, measured numbers in the descriptions, details on "# " lines) and
# nothing else on stdout; exits 1 when anything failed.
#
# Nothing here depends on this machine's speed or number of CPUs: the
# workload runs for a fixed wall time (5 x 40 ms busy + 20 ms asleep), and
# every count is checked against the totals mkblocked.py counts as it turns
# this run's recording into blocked samples, so it passes under `taskset -c 0`
# and beside a CPU hog (with fewer samples); a crash check allows a command
# 60 s before it counts a timeout.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
BPERF=${1:-${BPERF:-$repo/build/bperf/bperf}}
STOCK=${STOCK_PERF:-/usr/bin/perf}
MK="python3 $here/mkblocked.py"
T=$(mktemp -d /tmp/bperf-host.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$here/tap.sh"
# sig CMD...: run CMD (output discarded, 60 s limit), print the signal that
# killed it or 0 (perf exits with negative errnos, so $? > 128 is ambiguous)
sig() {
	python3 -c 'import subprocess, sys
try:
    r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=60)
    print(-r.returncode if r.returncode < 0 else 0)
except subprocess.TimeoutExpired:
    print("timeout")' "$@"
}

[ -x "$BPERF" ] || { bad "no bperf binary at $BPERF (run scripts/build-bperf.sh)"; tap_done; exit 1; }
if [ -x "$STOCK" ] && "$STOCK" version >/dev/null 2>&1; then have_stock=1; else have_stock=0; fi
cd "$T"
# perf report ends --stdio output with a random tip: drop it before comparing
notip() { grep -v '^# (Tip:'; }

# --- 1. bperf test suites -----------------------------------------------------
out=$("$BPERF" test 'Blocked samples' 2>&1)
n_ok=$(grep -c ': Ok$' <<<"$out")
check "bperf test: the 10 blocked sample and wait reason suites pass ($n_ok/10)" [ "$n_ok" -eq 10 ] ||
	grep -v ': Ok$' <<<"$out" | grep -i 'blocked' | diag
out=$("$BPERF" test 'Filter samples by thread' 2>&1)
check "bperf test: 'Filter samples by thread: rows match the per-thread sort'" grep -q ': Ok$' <<<"$out" ||
	diag <<<"$out"
for s in 'Sort output of hist entries' 'Cumulate child hist entries' \
	 'Filter hist entries' 'Match and link multiple hists' 'Sample parsing'; do
	out=$("$BPERF" test "$s" 2>&1)
	check "bperf test: '$s' still passes" grep -q ': Ok$' <<<"$out"
done

# --- 2. a workload with frame pointers ----------------------------------------
# spin() counts the thread's own CPU time, so a recording holds ~200 on-CPU
# samples however busy the machine is (by wall time a loaded host gave too
# few for mkblocked.py --corrupt, which needs more than 20).
cat >work.c <<'EOF'
#include <stdio.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}
__attribute__((noinline)) static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}
int main(void)
{
	for (int i = 0; i < 5; i++) {
		spin(40);
		nap(20);
	}
	return 0;
}
EOF
gcc -O1 -g -fno-omit-frame-pointer -o work work.c || { bad "compile workload"; }

# bperf on this host: blocked samples are not supported, so it must say so once
"$BPERF" record -g -o bperf.data ./work >rec.out 2>&1
rc=$?
n_warn=$(grep -c 'does not support blocked samples' rec.out)
check "bperf record on a kernel without the feature: exit 0 (rc=$rc)" [ $rc -eq 0 ]
check "bperf record: fallback explained exactly once ($n_warn)" [ "$n_warn" -eq 1 ]
"$BPERF" evlist -v -i bperf.data >evl.out 2>&1
check "bperf record default event: task-clock, period 1 ms, PERIOD and WEIGHT" \
	grep -q 'task-clock.*sample_period.*1000000.*sample_type: IP|TID|TIME|CALLCHAIN|PERIOD|WEIGHT' evl.out
"$BPERF" record --no-blocked -o noblk.data ./work >rec2.out 2>&1
check "bperf record --no-blocked: no fallback message" \
	[ "$(grep -c 'blocked samples' rec2.out)" -eq 0 ]
# the default call graph: DWARF user stacks of 1 KiB; -g and --no-call-graph
# give the old behaviour (frame pointers, none)
cg_of() {	# ARGS...: "CALLCHAIN STACK_USER size" flags of a recording's evlist
	"$BPERF" record "$@" -o cg.data ./work >/dev/null 2>&1
	"$BPERF" evlist -v -i cg.data 2>/dev/null | awk '/task-clock/ {
		printf "%d %d %s\n", /CALLCHAIN/, /STACK_USER/,
			(match($0, /sample_stack_user: [0-9]+/) ? substr($0, RSTART + 19, RLENGTH - 19) : 0) }'
}
cg=$(cg_of)
check "bperf record default call graph: DWARF, 1024-byte user stacks ($cg)" [ "$cg" = "1 1 1024" ]
cg=$(cg_of -g)
check "bperf record -g: frame pointers, no user stacks ($cg)" [ "$cg" = "1 0 0" ]
cg=$(cg_of --no-call-graph)
check "bperf record --no-call-graph: no call graph ($cg)" [ "$cg" = "0 0 0" ]
cg=$(cg_of --no-blocked)
check "bperf record --no-blocked: no default call graph ($cg)" [ "$cg" = "0 0 0" ]

# --- 3. diff test: stock perf.data through stock perf and bperf -----------------
if [ $have_stock -eq 1 ]; then
	"$STOCK" record -q -g -e task-clock -c 1000000 -o stock.data ./work >/dev/null 2>&1
	for args in "--stdio" "--stdio -n --no-children" "--stdio --children" \
		    "--stdio --sort comm,dso -n -g none" "--stdio -g caller --percent-limit 1"; do
		"$STOCK" report -i stock.data $args 2>&1 | notip >s.out
		"$BPERF" report -i stock.data $args 2>&1 | notip >b.out
		check "diff: report $args on stock perf.data is identical" cmp -s s.out b.out ||
			diff s.out b.out | head -5 | diag
	done
	"$STOCK" script -i stock.data >s.out 2>&1
	"$BPERF" script -i stock.data >b.out 2>&1
	check "diff: script on stock perf.data is identical" cmp -s s.out b.out ||
		diff s.out b.out | head -5 | diag
	"$STOCK" report -i bperf.data --stdio 2>&1 | notip >s.out
	"$BPERF" report -i bperf.data --stdio 2>&1 | notip >b.out
	check "diff: bperf.data (no blocked bit) reads the same in stock perf" cmp -s s.out b.out ||
		diff s.out b.out | head -5 | diag
else
	bad "stock perf ($STOCK, Debian's linux-perf) runs, for the diff tests (make deps installs it)"
fi

# --- 4. blocked samples (synthesised from the recording) ------------------------
$MK bperf.data blk.data >expect.txt || bad "mkblocked.py"
total=$(awk '$1 == "total" { print $2 }' expect.txt)
"$BPERF" report -i blk.data --stdio --sort blocked -n -g none 2>&1 |
	awk '/^ +[0-9.]+%/ { sub("%", "", $1); print $NF, $1, $(NF-1) }' >rep.txt
for cls in on-cpu io lock sched other; do
	want=$(awk -v c=$cls '$1 == c { print $2 }' expect.txt)
	got=$(awk -v c=$cls '$1 == c { print $3 }' rep.txt)
	pct=$(awk -v c=$cls '$1 == c { print $2 }' rep.txt)
	check "report --sort blocked: $cls has $want sampling points (got ${got:-none})" \
		[ "${got:-x}" = "$want" ]
	check "report --sort blocked: $cls share $(awk -v w=$want -v t=$total 'BEGIN { printf "%.2f", 100*w/t }')% (got ${pct:-none}%)" \
		awk -v w="$want" -v t="$total" -v p="${pct:--1}" 'BEGIN { d = 100*w/t - p; exit !(d < 0.01 && d > -0.01) }'
done
"$BPERF" report -i blk.data --stdio -n -g none --no-children >r.out 2>&1
hdr=$(sed -n 's/^# Samples: \([0-9K]*\) .*/\1/p' r.out)
check "report header counts sampling points ($hdr for $total)" \
	[ "$hdr" = "$total" ] || [ "$hdr" = "$((total / 1000))K" ] || [ "$hdr" = "$(( (total + 500) / 1000 ))K" ]
for l in I L S B; do
	check "report symbol column has [$l] rows" grep -q "\[$l\] " r.out
done
check "report: the same symbol on and off CPU has separate rows" \
	bash -c "grep -q '\[\.\] spin' r.out && grep -q '\[I\] spin' r.out"
nsum=$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s }' r.out)
check "report -n: Samples column sums to the sampling points ($nsum = $total)" [ "$nsum" = "$total" ]
"$BPERF" report -i blk.data --stdio --sort comm,blocked -g none >cb.out 2>&1
check "report --sort comm,blocked works" grep -q 'work *io' cb.out

# wait reasons: the built-in table names on-CPU samples on-cpu, runnable ones
# cpu and the remaining io ones io; a user's rule file goes first; a bad
# rule file stops report with its name and line
"$BPERF" report -i blk.data --stdio --sort wait -n -g none 2>&1 |
	awk '/^ +[0-9.]+%/ { print $NF, $(NF-1) }' >wait.txt
for pair in on-cpu:on-cpu cpu:sched io:io; do
	reason=${pair%%:*} cls=${pair#*:}
	want=$(awk -v c=$cls '$1 == c { print $2 }' expect.txt)
	got=$(awk -v r=$reason '$1 == r { print $2 }' wait.txt)
	check "report --sort wait: $reason has the $want $cls points (got ${got:-none})" \
		[ "${got:-x}" = "$want" ]
done
wsum=$(awk '{ s += $2 } END { print s }' wait.txt)
check "report --sort wait: every sampling point has a reason ($wsum = $total)" [ "$wsum" = "$total" ]
printf '# a user rule\nspin-lock  user:spin  class:lock\n' >user.rules
want=$(awk '$1 == "lock" { print $2 }' expect.txt)
got=$("$BPERF" report -i blk.data --stdio --sort comm,wait -n -g none --wait-rules user.rules 2>&1 |
	awk '/^ +[0-9.]+%/ && $NF == "spin-lock" { print $(NF-2) }')
check "report --wait-rules: a user rule names the lock points in spin ($want, got ${got:-none})" \
	awk -v g="${got:-0}" -v w="$want" 'BEGIN { exit !(g > 0 && g <= w) }'
printf 'ok kernel:x\nbroken user:\n' >bad.rules
"$BPERF" report -i blk.data --stdio --sort wait --wait-rules bad.rules >bad.out 2>&1
rc=$?
check "report --wait-rules with a bad line: non-zero exit naming bad.rules:2 (rc=$rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q '^bad.rules:2: empty pattern' bad.out" ||
	diag <bad.out
"$BPERF" script -i blk.data -F comm,blocked,wait 2>/dev/null >sw.out
nsw=$(awk '{ split($(NF-1), a, ":"); if (a[1] == "sched") n++ } END { print n + 0 }' sw.out)
nbadsw=$(awk '{ split($(NF-1), a, ":");
	if ((a[1] == "sched") != ($NF == "cpu") || (a[1] == "on-cpu") != ($NF == "on-cpu")) n++ }
	END { print n + 0 }' sw.out)
check "script -F wait: the $nsw sched samples are cpu, on-CPU ones on-cpu, no other ($nbadsw wrong)" \
	bash -c "[ $nsw -gt 0 ] && [ $nbadsw -eq 0 ]"

# --wait-summary: one row for the one thread, its points are all the points,
# on-cpu and runnable (the sched samples: rule cpu, kind runnable) shares
# are exact, the six shares add up to 100 %
"$BPERF" report -i blk.data --wait-summary >ws.out 2>&1
wpts=$(awk '!/^#/ && NF > 10 { s += $4 } END { print s + 0 }' ws.out)
nrow=$(awk '!/^#/ && NF > 10 && $3 == "work"' ws.out | wc -l)
check "report --wait-summary: one work row, points sum to $total (got $wpts, rows $nrow)" \
	bash -c "[ '$wpts' = '$total' ] && [ $nrow -eq 1 ]" || diag <ws.out
for pair in on-cpu:5:on-cpu runnable:9:sched; do
	kind=${pair%%:*} col=${pair#*:} col=${col%%:*} cls=${pair##*:}
	want=$(awk -v c=$cls -v t=$total '$1 == c { printf "%.1f", 100 * $2 / t }' expect.txt)
	got=$(awk -v c=$col '!/^#/ && $3 == "work" { sub("%", "", $c); print $c }' ws.out)
	check "report --wait-summary: work's $kind share is its $cls points ($want%, got ${got:-none}%)" \
		awk -v g="${got:--1}" -v w="${want:-0}" 'BEGIN { exit !(g - w < 0.06 && w - g < 0.06) }'
done
wsumpct=$(awk '!/^#/ && $3 == "work" { for (i = 5; i <= 10; i++) { sub("%", "", $i); s += $i } } END { print s + 0 }' ws.out)
check "report --wait-summary: the six kinds add up to 100% ($wsumpct)" \
	awk -v s="$wsumpct" 'BEGIN { exit !(s > 99.7 && s < 100.3) }'

# children: every blocked sample's stack reaches main, so main's [I] row has
# Children = io share
io_pct=$(awk '$1 == "io" { print $2 }' rep.txt)
main_io=$("$BPERF" report -i blk.data --stdio --children --sort sym -g none 2>/dev/null |
	awk '/\[I\] main$/ { sub("%", "", $1); print $1 }')
check "report --children: [I] main carries the io share ($main_io% ~ $io_pct%)" \
	awk -v a="${main_io:--100}" -v b="${io_pct:-0}" 'BEGIN { exit !(a - b < 0.02 && b - a < 0.02) }'

# script
"$BPERF" script -i blk.data -F comm,tid,time,blocked 2>/dev/null >sc.out
ssum=$(awk '{ split($NF, a, ":"); s += a[2] } END { print s }' sc.out)
check "script -F blocked: points sum to $total (got $ssum)" [ "$ssum" = "$total" ]
nexp=$("$BPERF" script -i blk.data -F comm,tid,time,blocked --blocked-expand 2>/dev/null | wc -l)
check "script --blocked-expand: one line per sampling point ($nexp = $total)" [ "$nexp" = "$total" ]
fsum=$("$BPERF" script -i blk.data --folded 2>/dev/null | awk '{ s += $NF } END { print s }')
check "script --folded: counts sum to $total (got $fsum)" [ "$fsum" = "$total" ]
check "script --folded: blocked stacks reach main and end in their subclass and wait" \
	bash -c "'$BPERF' script -i blk.data --folded 2>/dev/null | grep -q '^work;.*main;.*;\[io:io[a-z-]*\] [0-9]*$'"
"$BPERF" script -i blk.data --flamegraph fg.svg >fg.out 2>&1
rc=$?
check "script --flamegraph: exit 0 and an SVG" bash -c "[ $rc -eq 0 ] && head -c 200 fg.svg | grep -q '<svg'"
if python3 - fg.svg "$total" 2>fg.err <<'EOF'; then
import sys, xml.etree.ElementTree as E
ns = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
titles = [g.find(ns + 'title').text for g in root.iter(ns + 'g')]
assert titles[0].startswith('all (%s samples' % sys.argv[2]), titles[0]
rects = set(r.get('class') for r in root.iter(ns + 'rect')) - {None}
classes = set(c.split()[0] for c in rects)
kinds = set(c.split()[1] for c in rects if len(c.split()) > 1)
# frames take the colour of their dominant class; blocked classes carry
# most points in the synthetic mix, so they must all show up; the leaves
# of blocked stacks carry the kind of their wait, never on-cpu
assert {'io', 'lock', 'sched', 'other'} <= classes <= {'on-cpu', 'io', 'lock', 'sched', 'other'}, rects
assert kinds and kinds <= {'wait-idle', 'wait-contended', 'wait-io', 'wait-runnable', 'wait-other'}, rects
legend = ' '.join(t.text or '' for t in root.iter(ns + 'text'))
for c in ('on-cpu', 'io', 'lock', 'sched', 'other'):
    assert c + ' ' in legend, c
EOF
	ok "flame graph: valid XML, root = $total points, blocked classes coloured, legend of five"
else
	bad "flame graph content"
	tail -n 3 fg.err | diag
fi
# the same SVG in headless chromium: search, hover, zoom against the folded
# stacks of the recording; screenshots into the test log directory
# (browser.py; a missing browser fails with the apt-get command)
logdir=${TEST_LOG_DIR:-$repo/build/test-logs}
mkdir -p "$logdir"
"$BPERF" script -i blk.data --folded >fg.folded 2>/dev/null
python3 "$here/browser.py" fg.svg fg.folded "$total" "$logdir/bperf-flamegraph.png" >br.out 2>br.err
rc=$?
while IFS=$'\t' read -r st msg; do
	case $st in
	ok) ok "flame graph in chromium: $msg" ;;
	"not ok") bad "flame graph in chromium: $msg" ;;
	"#") diag "$msg" ;;
	esac
done <br.out
if [ $rc -ne 0 ] && ! grep -q '^not ok' br.out; then
	bad "flame graph in chromium: browser.py exit $rc"
	tail -n 5 br.err | diag
fi

# --- 4b. per-thread views: --comms/--tid show that thread's rows ------------------
# Three threads run the same code (user spin, getppid() in the kernel); the
# main thread runs alone first, so it creates every entry the workers share.
# A filtered report must show exactly the thread's rows of the unfiltered
# per-thread sort, whatever thread created an entry first.
cat >mt.c <<'EOF2'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
static void spin(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 2000; i++)
			sink += i;
		sink += getppid();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}
static void *worker(void *name)
{
	prctl(PR_SET_NAME, name);
	spin(150);
	return NULL;
}
int main(void)
{
	pthread_t a, b;
	spin(150);
	pthread_create(&a, NULL, worker, "mt-a");
	pthread_create(&b, NULL, worker, "mt-b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
EOF2
gcc -O1 -g -fno-omit-frame-pointer -pthread -o mt mt.c || bad "compile mt.c"
"$BPERF" record --no-call-graph -o mt0.data ./mt >/dev/null 2>&1
$MK mt0.data mt.data >/dev/null || bad "mkblocked.py mt0.data"
# rows "KEY SAMPLES" of a report; with a thread column, only that thread's
rows() { # rows FILE [FIELD VALUE]: KEY = last field, SAMPLES = field 2
	awk -v f="${2:-0}" -v v="${3:-}" '/^ +[0-9.]+%/ && (f == 0 || $f == v) { print $NF, $2 }' "$1" | sort
}
for key in blocked dso; do
	"$BPERF" report -i mt.data --stdio -n -g none --sort comm,$key 2>/dev/null >all-comm.out
	"$BPERF" report -i mt.data --stdio -n -g none --sort pid,$key 2>/dev/null >all-tid.out
	for c in mt-a mt-b; do
		"$BPERF" report -i mt.data --stdio -n -g none --comms $c --sort $key 2>/dev/null >f.out
		rows all-comm.out 3 $c >want.txt
		rows f.out >got.txt
		check "--comms $c --sort $key: the rows of --sort comm,$key for $c ($(tr '\n' ' ' <want.txt))" \
			bash -c "[ -s want.txt ] && cmp -s want.txt got.txt" ||
			diff want.txt got.txt | diag
		if [ $have_stock -eq 1 ] && [ $key = dso ]; then
			"$STOCK" report -i mt.data --stdio -n -g none --comms $c --sort $key 2>/dev/null >s.out
			diag "stock perf 6.1, --comms $c --sort $key: $(rows s.out | tr '\n' ' ' | grep . || echo '(no rows)')"
		fi
	done
	# a worker's tid: the "  123:mt-b" column of --sort pid (a thread's id)
	tid=$(awk '/^ +[0-9.]+%/ && $3 ~ /:mt-b$/ { split($3, a, ":"); print a[1]; exit }' all-tid.out)
	"$BPERF" report -i mt.data --stdio -n -g none --tid "${tid:-0}" --sort $key 2>/dev/null >f.out
	rows all-tid.out 3 "${tid:-x}:mt-b" >want.txt
	rows f.out >got.txt
	check "--tid $tid (mt-b) --sort $key: the rows of --sort pid,$key for it ($(tr '\n' ' ' <want.txt))" \
		bash -c "[ -s want.txt ] && cmp -s want.txt got.txt" ||
		diff want.txt got.txt | diag
done

# --- 5. stock perf reads bperf's perf.data with blocked samples ------------------
if [ $have_stock -eq 1 ]; then
	"$STOCK" report -i blk.data --stdio --sort comm,dso -g none >s.out 2>&1
	rc=$?
	"$BPERF" report -i blk.data --stdio --sort comm,dso -g none >b.out 2>&1
	notip <s.out >s2.out; mv s2.out s.out; notip <b.out >b2.out; mv b2.out b.out
	check "stock perf reads a file with blocked samples (rc=$rc, no reserved-bit warning)" \
		bash -c "[ $rc -eq 0 ] && ! grep -q 'Reserved bits' s.out"
	check "stock perf and bperf agree on it except the weighted Samples header" \
		bash -c "diff <(grep -v '^# Samples' s.out) <(grep -v '^# Samples' b.out) >/dev/null" ||
		diff <(grep -v '^# Samples' s.out) <(grep -v '^# Samples' b.out) | head -5 | diag
	"$STOCK" script -i blk.data >/dev/null 2>&1
	check "stock perf script reads it" [ $? -eq 0 ]
else
	skip "stock perf reads a file with blocked samples" "no usable stock perf at $STOCK (failed above)"
fi

# --- 6. bad input -----------------------------------------------------------------
: >empty.data
"$BPERF" report -i empty.data --stdio >o 2>&1; rc=$?
check "empty perf.data: non-zero exit and a message (rc=$rc)" bash -c "[ $rc -ne 0 ] && [ -s o ]"
for kind in two-bits huge-weight; do
	$MK --corrupt=$kind bperf.data c.data >/dev/null
	for cmd in "report --stdio" "script"; do
		"$BPERF" $cmd -i c.data >o 2>&1 </dev/null; rc=$?
		check "corrupt ($kind) $cmd: non-zero exit naming the problem (rc=$rc)" \
			bash -c "[ $rc -ne 0 ] && grep -q 'corrupt blocked sample' o"
	done
done
sz=$(stat -c %s blk.data)
dend=$(python3 -c 'import struct, sys; o, n = struct.unpack_from("<2Q", open(sys.argv[1], "rb").read(), 40); print(o + n)' blk.data)
for cut in 100 2000 $((dend / 2)) $((dend - 30)) $((sz - 100)); do
	head -c $cut blk.data >t.data
	"$BPERF" report -i t.data --stdio >o 2>&1; rc=$?
	s=$(sig "$BPERF" report -i t.data --stdio)
	if [ $cut -lt $dend ]; then
		check "truncated to $cut bytes (data ends at $dend): no crash, non-zero exit, a message (rc=$rc)" \
			bash -c "[ $rc -ne 0 ] && [ $s = 0 ] && [ -s o ]"
	else
		check "truncated to $cut bytes (header features cut): no crash (rc=$rc)" [ "$s" = 0 ]
	fi
done
head -c $((dend / 2)) blk.data >t.data
"$BPERF" script -i t.data >/dev/null 2>o; rc=$?
check "truncated data section: script exits non-zero (rc=$rc) saying the file is truncated" \
	bash -c "[ $rc -ne 0 ] && grep -q 'is truncated' o"
python3 "$here/fuzz.py" blk.data mutants 40 7
# The mutants come from this run's recording, so they differ from run to
# run, and some reach crashes of perf 6.1 itself (a SIGBUS in
# evsel__parse_sample() from the ordered-events flush; patch 0014 fixed
# another).  The check is that bperf adds none: a crash that Debian's perf
# shares on the same file and command is reported, not counted.
n_crash=0 n_upstream=0
for m in mutants/*.data; do
	for cmd in "report --stdio" "script" "script --folded"; do
		s=$(sig "$BPERF" $cmd -i "$m")
		[ "$s" = 0 ] && continue
		cp "$m" "/tmp/bperf-crash-$(basename "$m")"
		# stock perf has no --folded: its plain script parses the same
		if [ $have_stock -eq 1 ] && [ "$(sig "$STOCK" ${cmd% --folded} -i "$m")" = "$s" ]; then
			n_upstream=$((n_upstream + 1))
			diag "upstream crash: perf $cmd -i $m (signal $s in bperf and in $STOCK)"
		else
			n_crash=$((n_crash + 1)); diag "crash: bperf $cmd -i $m (signal $s)"
		fi
	done
done
check "fuzz: 40 mutants x 3 commands, no crash of bperf's own ($n_crash; $n_upstream shared with stock perf)" \
	[ $n_crash -eq 0 ]
# A stat round (PERF_RECORD_STAT_ROUND, 77) before the thread and CPU maps
# that a recording carries: perf script 6.1 dereferenced counts that were
# never allocated (the fuzz above hit it on some runs; patch 0014).
python3 - blk.data statround.data <<'PY'
import struct, sys
buf = bytearray(open(sys.argv[1], 'rb').read())
d_off, = struct.unpack_from('<Q', buf, 40)
typ, misc, size = struct.unpack_from('<IHH', buf, d_off)
assert size >= 24, size                 # the first record becomes a stat round
struct.pack_into('<IHHQQ', buf, d_off, 77, 0, size, 0, 0)
open(sys.argv[2], 'wb').write(buf)
PY
s=$(sig "$BPERF" script -i statround.data)
check "script on a recording with a stray stat round: no crash (signal $s)" [ "$s" = 0 ]

# --- 6b. pprof export (pprof.sh) and the text viewers import (viewers.sh) ------
. "$here/pprof.sh"
. "$here/viewers.sh"

# --- 7. other commands keep working --------------------------------------------------
check "bperf stat" bash -c "'$BPERF' stat -e task-clock -x, ./work 2>&1 | grep -q task-clock"
check "bperf annotate" bash -c "'$BPERF' annotate -i bperf.data --stdio spin 2>/dev/null | grep -q 'Percent'"
check "bperf bench" bash -c "'$BPERF' bench sched pipe -l 2000 >/dev/null 2>&1"
check "bperf report --header-only" bash -c "'$BPERF' report -i blk.data --header-only 2>&1 | grep -q 'event : name = task-clock'"
check "bperf version --build-options: libunwind, libdw, slang on, libbfd off" \
	bash -c "'$BPERF' version --build-options | grep -q 'libunwind: \[ on' &&
		 '$BPERF' version --build-options | grep -q 'libdw-dwarf-unwind: \[ on' &&
		 '$BPERF' version --build-options | grep -q 'libslang: \[ on' &&
		 '$BPERF' version --build-options | grep -q 'libbfd: \[ OFF'"

# --- 8. parity with Debian's perf (parity.sh) --------------------------------------
. "$here/parity.sh"

# --- 9. C++ and Rust names demangled, raw with --no-demangle (demangle.sh) ----------
. "$here/demangle.sh"

tap_done
