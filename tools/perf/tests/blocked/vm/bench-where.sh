#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the profilers' cost goes on hackbench, inside the VM:
#
#   scripts/run-vm.sh -- tools/perf/tests/blocked/vm/bench-where.sh
#
# Runs `perf bench sched messaging -g 4 -l $LOOPS` with no profiler, with
# sampling (--no-blocked) and with bperf, each under a system-wide
# cpu-clock profile of the guest (`perf record -a -g`, 0.5 ms) and
# `perf stat -a`, and writes per mode to $OUT: the bench output, the stat
# (context switches), the top kernel/user symbols of the system-wide
# profile (self and children) and the profiler's record counts.  The guest
# has no PMU, so cpu-clock cannot fire with interrupts off: the work done in
# the irqs-off part of finish_task_switch() (perf_event_task_sched_in(),
# the task-clock pmu::add() and the blocked samples emitted there) shows as
# finish_task_switch's self time.
#
# Environment: BPERF (default build/bperf/bperf), LOOPS (10), OUT (default
# build/vm-scratch/bench-where).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
B=${BPERF:-$repo/build/bperf/bperf}
LOOPS=${LOOPS:-10}
O=${OUT:-$repo/build/vm-scratch/bench-where}
T=$(mktemp -d /tmp/where.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$O" || exit 1
cd "$T" || exit 1
export HOME=$T
for m in none sampling bperf; do
	case $m in
	none) P="" ;;
	sampling) P="$B record -q -B -g --no-blocked -o $T/x.data --" ;;
	bperf) P="$B record -q -B -g -o $T/x.data --" ;;
	esac
	# shellcheck disable=SC2086
	"$B" stat -a -e context-switches,cpu-clock -o "$O/stat-$m.txt" -- \
		"$B" record -q -B -a -e cpu-clock -c 500000 -g -o "$T/sys-$m.data" -- \
		$P "$B" bench sched messaging -g 4 -l "$LOOPS" >"$O/bench-$m.txt" 2>&1
	"$B" report -i "$T/sys-$m.data" --stdio --no-children --sort sym -g none \
		--percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^$' >"$O/sym-$m.txt"
	"$B" report -i "$T/sys-$m.data" --stdio --children --sort sym -g none \
		--percent-limit 2 2>/dev/null | grep -v '^#' | grep -v '^$' >"$O/children-$m.txt"
	if [ -f "$T/x.data" ]; then
		"$B" report -i "$T/x.data" --stats 2>/dev/null >"$O/stats-$m.txt"
	fi
	rm -f "$T/x.data" "$T/sys-$m.data"
	echo "$m: $(grep 'Total time' "$O/bench-$m.txt")," \
		"$(awk '/context-switches/ { print $1 }' "$O/stat-$m.txt") switches," \
		"finish_task_switch self $(awk '/finish_task_switch/ { print $1; exit }' "$O/sym-$m.txt")," \
		"$(awk '/SAMPLE events/ { print $3; exit }' "$O/stats-$m.txt" 2>/dev/null) sample records"
done
