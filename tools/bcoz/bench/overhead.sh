#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end overhead of `bcoz run` against the plain program (a benchmark,
# not a test).  For each example it measures the median wall time of
#   plain    the program alone
#   sample   bcoz run --fixed-speedup 0   (startup + sampling, no delays)
#   full     bcoz run                     (default: random lines and speedups)
# and splits the overhead of "full" into
#   startup  = the launcher (python, measured as `bcoz run --help`) plus the
#              runtime's own start-up time (debug info, perf setup)
#   sampling = sample - plain - startup
#   delays   = full - sample            (inserted virtual-speedup pauses)
# all as % of the plain time, from the median of each repetition's ratio
# to its own plain run (the three runs of a repetition are back to back).
#
# usage: tools/bcoz/bench/overhead.sh [-r REPEATS] [-s SCALE]
#   SCALE multiplies the work of each example (default 1).
# Needs: make -C tools/bcoz vm-programs
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BCOZ_BUILD:-$here/../../../build/bcoz}
build=$(cd "$build" && pwd)
bcoz=$build/bcoz
reps=5 scale=1
while getopts r:s:h o; do
	case $o in
	r) reps=$OPTARG ;;
	s) scale=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	esac
done
[ -x "$bcoz" ] && [ -x "$build/tests/vm/motiv" ] ||
	{ echo "overhead.sh: build first: make -C tools/bcoz vm-programs" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n() { awk -v a="$1" -v s="$scale" 'BEGIN { printf "%d", a * s }'; }

# name | command (fixed amount of work)
examples=(
	"toy|$build/tests/toy $(n 1500) 2000000"
	"lock|$build/tests/lock $(n 1500) 1000000"
	"latency|$build/tests/latency $(n 4000)"
	"motiv-1|$build/tests/vm/motiv $tmp/disk.img 1 0 $(n 2000)"
	"motiv-2|$build/tests/vm/motiv $tmp/disk.img 2 0 $(n 2000)"
)

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# wall time of one run; $1 = mode (plain|sample|full), rest = command
timed() {
	local mode=$1 t0 t1
	shift
	rm -f "$tmp/p.coz" "$tmp/stats"
	t0=$(now)
	case $mode in
	plain) "$@" >/dev/null 2>&1 ;;
	sample) BCOZ_STATS=$tmp/stats "$bcoz" run -o "$tmp/p.coz" --fixed-speedup 0 --- "$@" \
		>/dev/null 2>&1 ;;
	full) BCOZ_STATS=$tmp/stats "$bcoz" run -o "$tmp/p.coz" --- "$@" >/dev/null 2>&1 ;;
	esac
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}

# the launcher's own cost: start python, parse, exec
L=$(for ((i = 0; i < 5; i++)); do
	t0=$(now); "$bcoz" run --help >/dev/null 2>&1; t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
done | median)
echo "launcher: ${L}s per run"
printf "%-9s %8s %8s %8s | %8s %8s %8s %8s\n" example plain_s sample_s full_s \
	startup% sampling% delays% total%
sum=0 cnt=0
for ex in "${examples[@]}"; do
	name=${ex%%|*}
	cmd=(${ex#*|})
	declare -a P=() S=() F=() U=()
	for ((i = 0; i < reps; i++)); do
		P+=("$(timed plain "${cmd[@]}")")
		S+=("$(timed sample "${cmd[@]}")")
		U+=("$(sed -n 's/.*startup_ns=\([0-9]*\).*/\1/p' "$tmp/stats" | tail -1)")
		F+=("$(timed full "${cmd[@]}")")
	done
	p=$(printf "%s\n" "${P[@]}" | median)
	s=$(printf "%s\n" "${S[@]}" | median)
	f=$(printf "%s\n" "${F[@]}" | median)
	u=$(printf "%s\n" "${U[@]}" | median)
	# each rep's runs are back to back: the ratios to its own plain run
	# cancel the machine's drift, which the three medians do not
	rs=$(for ((i = 0; i < reps; i++)); do
		awk -v p="${P[i]}" -v s="${S[i]}" 'BEGIN { printf "%.6f\n", s / p }'
	done | median)
	rf=$(for ((i = 0; i < reps; i++)); do
		awk -v p="${P[i]}" -v f="${F[i]}" 'BEGIN { printf "%.6f\n", f / p }'
	done | median)
	read -r st sa de to < <(awk -v p="$p" -v rs="$rs" -v rf="$rf" -v u="$u" -v l="$L" 'BEGIN {
		st = (u / 1e9 + l) / p * 100; sa = (rs - 1) * 100 - st; de = (rf - rs) * 100
		printf "%.1f %.1f %.1f %.1f\n", st, sa, de, (rf - 1) * 100 }')
	printf "%-9s %8.3f %8.3f %8.3f | %8s %8s %8s %8s\n" "$name" "$p" "$s" "$f" "$st" "$sa" \
		"$de" "$to"
	sum=$(awk -v a="$sum" -v b="$to" 'BEGIN { print a + b }')
	cnt=$((cnt + 1))
done
awk -v a="$sum" -v n="$cnt" 'BEGIN { printf "average end-to-end overhead: %.1f%%\n", a / n }'
echo "(times: medians of $reps runs; percentages: medians of each run's ratio to the plain run"
echo " just before it; on a loaded machine expect a few points of noise)"
