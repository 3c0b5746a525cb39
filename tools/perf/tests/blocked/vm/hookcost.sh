#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The scheduler hooks' cost per context switch, inside the VM (hookcost.c:
# two threads pinned to one CPU ping-pong through pipes, each with N
# task-clock sampling events of its own). Runs by
# tools/perf/tests/blocked/hookcost-host.sh (make hookcost) on the kernel
# without CONFIG_PERF_BLOCKED_SAMPLES and on the default one.
#
# First `perf bench sched pipe` pinned to one CPU with no event open (the
# hooks' cost when nobody uses the feature: compare the two kernels), its
# loop count sized once to about $SECS s, median of $ROUNDS runs.
# Then hookcost.c cells: N in $EVENTS (default "0 1 2 64") x period in
# $PERIODS (default 1 s, where almost no sample is written and only the
# switch-time work counts, and 1 ms) x plain/blocked. Rounds are
# interleaved (each round runs every cell once) so a slow phase of the host
# hits all cells alike; each cell is the median of $ROUNDS (default 7) runs
# of $SECS (default 1) s. Prints a table.
# A kernel without the feature prints "n/a" for blocked cells.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
ROUNDS=${ROUNDS:-7} SECS=${SECS:-1}
EVENTS=${EVENTS:-0 1 2 64} PERIODS=${PERIODS:-1000000000 1000000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
gcc -O2 -o hookcost "$here/hookcost.c" -lpthread || { echo "hookcost: cannot compile hookcost.c" >&2; exit 1; }

feature=1
./hookcost -n 1 -b -t 0.05 >/dev/null 2>&1 || feature=0
echo "# kernel $(uname -r), blocked samples: $([ $feature = 1 ] && echo yes || echo no)," \
	"$(nproc) CPUs, $ROUNDS rounds of $SECS s per cell"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# perf bench sched pipe: usecs/op is one round trip (two switches).
if [ -x "$BPERF" ]; then
	pipe_run() { taskset -c 0 "$BPERF" bench sched pipe -l "$1" 2>/dev/null |
		awk '/usecs\/op/ { print $1 * 1000 / 2 }'; }
	loops=2000
	while :; do
		t0=$(date +%s%N)
		[ -n "$(pipe_run $loops)" ] || { echo "hookcost: $BPERF bench sched pipe failed" >&2; exit 1; }
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ "$ms" -ge 200 ] || [ "$loops" -ge 100000000 ] && break
		loops=$((loops * 4))
	done
	loops=$(awk -v l="$loops" -v ms="$ms" -v s="$SECS" 'BEGIN { printf "%d", l * s * 1000 / ms }')
	for ((r = 0; r < ROUNDS; r++)); do pipe_run "$loops"; done >pipe
	echo "perf bench sched pipe (pinned, no event, -l $loops): $(median <pipe) ns per switch, median of $ROUNDS"
else
	echo "perf bench sched pipe: skipped ($BPERF missing; run make bperf)"
fi

cells=()
first=1
for p in $PERIODS; do
	for n in $EVENTS; do
		if [ "$n" = 0 ]; then	# no events: the period does not matter
			[ $first = 1 ] && cells+=("0 $p 0")
			continue
		fi
		cells+=("$n $p 0")
		[ $feature = 1 ] && cells+=("$n $p 1")
	done
	first=0
done
for ((r = 0; r < ROUNDS; r++)); do
	for c in "${cells[@]}"; do
		set -- $c
		b=()
		[ "$3" = 1 ] && b=(-b)
		out=$(./hookcost -n "$1" -p "$2" -t "$SECS" "${b[@]}" 2>&1 | sed -n 's/^hookcost: //p')
		echo "$1 $2 $3 $out" >>results
	done
done

cell() {	# N PERIOD BLOCKED FIELD -> median
	awk -v n="$1" -v p="$2" -v b="$3" -v f="$4" '$1 == n && $2 == p && $3 == b {
		for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' results | median
}
printf '%-7s %-6s %12s %12s %9s %12s\n' events period "plain ns" "blocked ns" "+ns" "blocked/s"
for c in "${cells[@]}"; do
	set -- $c
	[ "$3" = 1 ] && continue
	plain=$(cell "$1" "$2" 0 ns_per_switch)
	pl=$([ "$2" = 1000000000 ] && echo 1s || echo "$(($2 / 1000000))ms")
	[ "$1" = 0 ] && pl=-
	if [ "$1" -gt 0 ] && [ $feature = 1 ]; then
		blk=$(cell "$1" "$2" 1 ns_per_switch)
		bps=$(cell "$1" "$2" 1 blocked_samples)
		delta=$(awk -v a="$plain" -v b="$blk" 'BEGIN { printf "%+.0f", b - a }')
		bps=$(awk -v b="$bps" -v s="$SECS" 'BEGIN { printf "%.0f", b / s }')
	else
		blk=n/a delta=n/a bps=n/a
	fi
	printf '%-7s %-6s %12s %12s %9s %12s\n' "$1" "$pl" "$plain" "$blk" "$delta" "$bps"
done
