#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The overhead benchmark (the paper's Figure 16), run inside the VM:
#
#   make bench          (scripts/run-vm.sh -- tools/perf/tests/blocked/vm/bench.sh)
#
# Four workloads under four profilers, in one boot:
#   workloads  messaging  perf bench sched messaging -g $MSG_GROUPS -l $LOOPS
#              pipe       perf bench sched pipe -l $PIPE_LOOPS
#              cpu        bench-work cpu N   (integer arithmetic, one thread)
#              io         bench-work io N /dev/vda  (random 4 KiB O_DIRECT reads)
#   profilers  none       the workload alone
#              sampling   bperf record -g --no-blocked  (task-clock, 1 ms)
#              bperf      bperf record -g               (task-clock, 1 ms, blocked samples)
#              tracing    bperf record -g -e sched:sched_switch -e sched:sched_wakeup
#   and, named in PROFILERS, the parts of bperf's cost (see "Where bperf's
#   extra cost goes" in Documentation/bperf/bperf.rst):
#              bperf-hooks     bperf record --no-call-graph -c 1000000000
#                              (the switch hooks: a 1 s period writes almost
#                              no blocked sample)
#              bperf-nochain   bperf record --no-call-graph  (blocked samples
#                              without callchains; the kernel stack is still
#                              walked for each sample's IP)
#              sampling-nochain  bperf record --no-blocked --no-call-graph
# Every profiler runs with -B (no build-id pass at the end, which is not part
# of the workload's run) and writes to the guest's tmpfs.  cpu and io are
# sized once, unprofiled, to about $TARGET_MS ms; the same amount of work then
# runs under each profiler.  Runs are interleaved (round r runs every
# profiler once, in a rotating order) so that a slow phase of the host hits
# all profilers alike; each cell is the median of $RUNS rounds.
#
# Printed per workload and profiler:
#   time      median wall time of the workload (its fork to its exit)
#   slowdown  (time - none's time) / none's time
#   profiler CPU  median CPU time (user + system) of perf record itself;
#             its start-up part (recording `true`) is printed below the table
#   extra CPU     (profiler CPU + workload CPU - none's workload CPU) as %
#             of none's workload CPU: the paper's "extra CPU"
#   workload CPU  change of the workload's own CPU time: the kernel's
#             work in the workload's context (switch hooks, unwinding,
#             writing records) shows up here
#   MB/s      perf.data bytes per second of workload time
#   records/s PERF_RECORD_SAMPLE records per second of workload time
#
# Environment: BPERF (default build/bperf/bperf), RUNS (5), TARGET_MS (1000),
# DEVICE (/dev/vda), MSG_GROUPS (4), LOOPS (20), PIPE_LOOPS (3000), OUT (where the
# table goes as well, default build/vm-scratch/bench), WORKLOADS (default
# "messaging pipe cpu io"), PROFILERS (default "sampling bperf tracing";
# none is always run too, first in round 1).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
RUNS=${RUNS:-5}
TARGET_MS=${TARGET_MS:-1000}
DEVICE=${DEVICE:-/dev/vda}
GROUPS_=${MSG_GROUPS:-4}
LOOPS=${LOOPS:-20}
PIPE_LOOPS=${PIPE_LOOPS:-3000}
OUT=${OUT:-$repo/build/vm-scratch/bench}
T=$(mktemp -d /tmp/bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
die() { echo "bench: $*" >&2; exit 1; }

# whether the word list $1 holds the word $2
listed() { [[ " $1 " == *" $2 "* ]]; }

ALL_WORKLOADS="messaging pipe cpu io"
ALL_PROFILERS="none sampling bperf tracing bperf-hooks bperf-nochain sampling-nochain"
WORKLOADS=${WORKLOADS:-$ALL_WORKLOADS}
PROFILERS="none $(echo " ${PROFILERS:-sampling bperf tracing} " | sed 's/ none / /g')"
for wl in $WORKLOADS; do
	listed "$ALL_WORKLOADS" "$wl" || die "WORKLOADS: unknown workload '$wl'; known: $ALL_WORKLOADS"
done
for prof in $PROFILERS; do
	listed "$ALL_PROFILERS" "$prof" || die "PROFILERS: unknown profiler '$prof'; known: $ALL_PROFILERS"
done
[ -x "$BPERF" ] || die "no bperf at $BPERF; build it with 'make bperf'"
mkdir -p "$OUT" 2>/dev/null || OUT=$T
cd "$T" || exit 1
[ -w "${HOME:-/nonexistent}" ] || export HOME=$T
gcc -O2 -o bench-work "$here/bench-work.c" || die "cannot compile bench-work.c (gcc)"
W=$T/bench-work
! listed "$WORKLOADS" io || [ -e "$DEVICE" ] ||
	die "no $DEVICE for the O_DIRECT reads; set DEVICE to a block device or a file on a disk"
if listed "$PROFILERS" tracing && [ ! -e /sys/kernel/tracing/events/sched ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
		die "tracefs is not mounted and cannot be mounted on /sys/kernel/tracing (needed for the tracing profiler)"
fi
"$BPERF" record -o probe.data true >probe.out 2>&1
grep -q 'does not support blocked samples' probe.out &&
	die "kernel $(uname -r) has no blocked samples; boot the patched kernel (make kernel)"

t_start=$(date +%s)
ncpu=0 nio=0
if listed "$WORKLOADS" cpu; then
	ncpu=$("$W" calib cpu "$TARGET_MS") || die "calibrating the CPU-bound loop failed"
fi
if listed "$WORKLOADS" io; then
	nio=$("$W" calib io "$TARGET_MS" "$DEVICE") || die "calibrating O_DIRECT reads of $DEVICE failed"
fi
echo "bench: $(uname -r), $(nproc) CPU(s), $RUNS rounds; cpu: $ncpu rounds, io: $nio reads of $DEVICE (about $TARGET_MS ms each)" >&2

wl_cmd() {
	case $1 in
	messaging) echo "$BPERF bench sched messaging -g $GROUPS_ -l $LOOPS" ;;
	pipe) echo "$BPERF bench sched pipe -l $PIPE_LOOPS" ;;
	cpu) echo "$W cpu $ncpu" ;;
	io) echo "$W io $nio $DEVICE" ;;
	esac
}
prof_cmd() {
	case $1 in
	none) ;;
	sampling) echo "$BPERF record -q -B -g --no-blocked -o perf.data --" ;;
	bperf) echo "$BPERF record -q -B -g -o perf.data --" ;;
	tracing) echo "$BPERF record -q -B -g -e sched:sched_switch -e sched:sched_wakeup -o perf.data --" ;;
	bperf-hooks) echo "$BPERF record -q -B --no-call-graph -c 1000000000 -o perf.data --" ;;
	bperf-nochain) echo "$BPERF record -q -B --no-call-graph -o perf.data --" ;;
	sampling-nochain) echo "$BPERF record -q -B --no-blocked --no-call-graph -o perf.data --" ;;
	esac
}

# one run: appends "wl prof wall wl_cpu total_cpu bytes records elapsed" to
# $RES; wall and wl_cpu are the workload's, total_cpu also counts perf record
# (outer - inner = the profiler's own CPU time), elapsed the whole run's.
one() {
	local wl=$1 prof=$2 bytes=0 recs=0 t0 t1
	rm -f perf.data in.txt out.txt
	t0=$(date +%s%N)
	# shellcheck disable=SC2046
	"$W" run out.txt $(prof_cmd "$prof") "$W" run in.txt $(wl_cmd "$wl") \
		>/dev/null 2>run.err || { cat run.err >&2; die "$wl under $prof failed"; }
	t1=$(date +%s%N)
	if [ -f perf.data ]; then
		bytes=$(stat -c %s perf.data)
		recs=$("$W" count perf.data)
	fi
	set -- $(cat in.txt) $(cat out.txt)
	echo "$wl $prof $2 $4 $8 $bytes $recs $(((t1 - t0) / 1000000))" >>"$RES"
}

RES=$OUT/results.txt
: >"$RES" || die "cannot write $RES"
# the profiler's fixed cost (start-up, /proc and kallsyms, writing the
# header) from recording `true`, printed with the table
for prof in $PROFILERS; do
	[ "$prof" = none ] && continue
	for _ in 1 2 3; do
		rm -f in.txt out.txt
		# shellcheck disable=SC2046
		"$W" run out.txt $(prof_cmd "$prof") "$W" run in.txt true >/dev/null 2>&1
		set -- $(cat in.txt) $(cat out.txt)
		echo "true $prof $2 $4 $8 0 0 0" >>"$RES"
	done
done
echo "bench: start-up costs measured after $(($(date +%s) - t_start)) s" >&2

for r in $(seq 1 "$RUNS"); do
	for wl in $WORKLOADS; do
		set -- $PROFILERS
		# rotate the order by round
		for _ in $(seq 2 "$r"); do set -- "$@" "$1"; shift; done
		for prof in "$@"; do one "$wl" "$prof"; done
	done
	echo "bench: round $r/$RUNS done after $(($(date +%s) - t_start)) s" >&2
done

awk -v profs="$PROFILERS" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	k = $1 SUBSEP $2; m = ++n[k]
	wall[k, m] = $3; wcpu[k, m] = $4; perf[k, m] = $5 - $4
	rate[k, m] = $6 / $3; srate[k, m] = $7 / $3
	if ($1 != "true" && !($1 in seen)) { seen[$1] = 1; order[++nw] = $1 }
}
END {
	np = split(profs, P, " ")
	for (p = 2; p <= np; p++) {
		k = "true" SUBSEP P[p]
		for (i = 1; i <= n[k]; i++) a[i] = perf[k, i]
		fixed[P[p]] = n[k] ? median(a, n[k]) : 0
	}
	printf "| workload | profiler | time (s) | slowdown | profiler CPU (s) | extra CPU | workload CPU | perf.data MB/s | records/s |\n"
	printf "|---|---|---|---|---|---|---|---|---|\n"
	for (w = 1; w <= nw; w++) {
		for (p = 1; p <= np; p++) {
			k = order[w] SUBSEP P[p]; m = n[k]
			for (i = 1; i <= m; i++) { a[i] = wall[k, i]; b[i] = wcpu[k, i]; c[i] = perf[k, i]; d[i] = rate[k, i]; e[i] = srate[k, i] }
			mw = median(a, m); mc = median(b, m); mp = median(c, m); md = median(d, m); me = median(e, m)
			if (p == 1) {
				base = mw; basecpu = mc
				printf "| %s | none | %.2f | | | | %.2f s | | |\n", order[w], mw, mc
				continue
			}
			printf "| %s | %s | %.2f | %+.1f %% | %.2f | %+.1f %% | %+.1f %% | %.2f | %.0f |\n",
				order[w], P[p], mw, 100 * (mw - base) / base, mp,
				100 * (mp + mc - basecpu) / basecpu, 100 * (mc - basecpu) / basecpu,
				md / 1e6, me
		}
	}
	printf "\nof which start-up (perf record of `true`):"
	for (p = 2; p <= np; p++)
		printf "%s %s %.2f s", (p > 2 ? "," : ""), P[p], fixed[P[p]]
	printf " of CPU\n"
}' "$RES" | tee "$OUT/table.md"
echo "bench: $(($(date +%s) - t_start)) s in all; table in $OUT/table.md, raw runs in $RES" >&2
