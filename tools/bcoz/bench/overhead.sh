#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end overhead of `bcoz run` against the plain program (a benchmark,
# not a test).  Each example runs, back to back, in each repetition:
#   plain    the program alone
#   sample   bcoz run --fixed-speedup 0   (sampling, no delays)
#   full     bcoz run                     (default: random lines and speedups)
#   perf     bperf record -g -e task-clock -c 1000000, for reference (the
#            same event and period; blocked samples where the kernel has them)
# Each is timed twice: from outside (the whole command) and by the program
# itself (its main phase, which it prints: wall_ms=, or "rounds in S s").
# The columns, each the median over the repetitions of a ratio to that
# repetition's own plain run:
#   total     the whole `bcoz run` command, as % of the plain command
#   startup   what bcoz adds outside the program's main phase, as % of the
#             plain command: the launcher (python), the runtime's set-up
#             (debug info, perf), the program's own set-up sampled, and the
#             exit (the profile)
#   steady    the program's main phase under `bcoz run`, as % of its plain
#             main phase: sampling + delays
#   sampling  the same under --fixed-speedup 0
#   delays    steady - sampling         (inserted virtual-speedup pauses)
#   perf      the main phase under bperf record: the kernel's sampling
#             without bcoz (perf writes the data on another CPU)
#
# usage: tools/bcoz/bench/overhead.sh [-r REPEATS] [-t SECONDS | -s SCALE] [EXAMPLE...]
#   EXAMPLE  toy, lock, latency, motiv-1 or motiv-2 (default: all five)
#   -r  repetitions (default 5)
#   -t  size each example's work so that it runs about SECONDS alone
#       (default 3; from calibration runs), so that a slow machine or a VM
#       measures runs as long as a fast one's
#   -s  instead multiply each example's default work by SCALE
# Needs: make -C tools/bcoz vm-programs.  The perf column needs bperf
# (build/bperf/bperf, or BPERF=/path/to/perf) and is "-" without it.
set -euo pipefail
shopt -s inherit_errexit	# a failed run inside $(...) stops the script
here=$(cd "$(dirname "$0")" && pwd)
build=${BCOZ_BUILD:-$here/../../../build/bcoz}
build=$(cd "$build" && pwd)
bcoz=$build/bcoz
reps=5 scale=1 target=3 fixed=
while getopts r:s:t:h o; do
	case $o in
	r) reps=$OPTARG ;;
	s) scale=$OPTARG fixed=1 ;;
	t) target=$OPTARG ;;
	h) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: $0 [-r REPEATS] [-t SECONDS | -s SCALE] [EXAMPLE...] (-h: help)" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $reps =~ ^[1-9][0-9]*$ ]] ||
	{ echo "overhead.sh: -r $reps: give a whole number of repetitions, 1 or more" >&2; exit 2; }
for v in "$target" "$scale"; do
	[[ $v =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v v="$v" 'BEGIN { exit !(v > 0) }' ||
		{ echo "overhead.sh: '$v': -t and -s take a positive number" >&2; exit 2; }
done
names=(toy lock latency motiv-1 motiv-2)
for a in "$@"; do
	[[ " ${names[*]} " == *" $a "* ]] ||
		{ echo "overhead.sh: no example '$a' (toy, lock, latency, motiv-1, motiv-2)" >&2; exit 2; }
done
[ $# -gt 0 ] && names=("$@")
[ -x "$bcoz" ] && [ -x "$build/tests/vm/motiv" ] ||
	{ echo "overhead.sh: build first: make -C tools/bcoz vm-programs" >&2; exit 1; }
perf=${BPERF:-$build/../bperf/bperf}
[ -x "$perf" ] || perf=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n() { awk -v a="$1" -v s="$2" 'BEGIN { n = int(a * s); print (n > 0 ? n : 1) }'; }

# the command of example $1 at scale $2 (its work is proportional to it)
example() {
	case $1 in
	toy) echo "$build/tests/toy $(n 1500 "$2") 2000000" ;;
	lock) echo "$build/tests/lock $(n 1500 "$2") 1000000" ;;
	latency) echo "$build/tests/latency $(n 4000 "$2")" ;;
	motiv-1) echo "$build/tests/vm/motiv $tmp/disk.img 1 0 $(n 2000 "$2")" ;;
	motiv-2) echo "$build/tests/vm/motiv $tmp/disk.img 2 0 $(n 2000 "$2")" ;;
	esac
}

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one run: prints "OUTSIDE_S INSIDE_S"; $1 = mode (plain|sample|full|perf)
timed() {
	local mode=$1 t0 t1 rc
	shift
	rm -f "$tmp/p.coz" "$tmp/out"
	# the previous run's files are written back now, not during this run
	# (motiv's O_DIRECT reads queued behind perf.data: plain runs 50 % slow)
	sync
	t0=$(now)
	rc=0
	case $mode in
	plain) "$@" >"$tmp/out" 2>"$tmp/err" || rc=$? ;;
	sample) "$bcoz" run -o "$tmp/p.coz" --fixed-speedup 0 --- "$@" >"$tmp/out" 2>"$tmp/err" ||
		rc=$? ;;
	full) "$bcoz" run -o "$tmp/p.coz" --- "$@" >"$tmp/out" 2>"$tmp/err" || rc=$? ;;
	# --no-bpf-event: else perf's side-band thread holds each exit up to 1 s
	perf) "$perf" record -q --no-bpf-event -g -e task-clock -c 1000000 \
		-o "$tmp/perf.data" -- "$@" >"$tmp/out" 2>"$tmp/err" || rc=$? ;;
	esac
	t1=$(now)
	if [ "$rc" != 0 ]; then
		echo "overhead.sh: the $mode run failed (exit $rc): $*" >&2
		tail -3 "$tmp/err" >&2
		return 1
	fi
	awk -v a="$t0" -v b="$t1" -v mode="$mode" '
		match($0, /wall_ms=[0-9.]+/) { in_s = substr($0, RSTART + 8, RLENGTH - 8) / 1e3 }
		match($0, /rounds in [0-9.]+ s/) { in_s = substr($0, RSTART + 10, RLENGTH - 12) }
		END {
			if (in_s == "") {
				printf "overhead.sh: a %s run printed no main-phase time\n", mode > "/dev/stderr"
				exit 1
			}
			printf "%.4f %.4f\n", b - a, in_s
		}' "$tmp/out" || { echo "  command: $*" >&2; tail -3 "$tmp/out" >&2; return 1; }
}

# the scale at which example $1 runs about $target s: timed from a run of at
# least half a second, starting at a tenth of the default work
calibrate() {
	local sc=0.1 c i
	for ((i = 0; i < 5; i++)); do
		c=$(timed plain $(example "$1" "$sc")); c=${c%% *}
		awk -v c="$c" 'BEGIN { exit !(c >= 0.5) }' && break
		sc=$(awk -v s="$sc" -v c="$c" 'BEGIN { f = 0.7 / (c > 0.01 ? c : 0.01);
			printf "%.4f", s * (f < 10 ? f : 10) }')
	done
	awk -v s="$sc" -v t="$target" -v c="$c" 'BEGIN { printf "%.4f", s * t / c }'
}

# median over the repetitions of the awk expression $1, whose $1, $2, ...
# are that repetition's elements of the arrays named by the other arguments
rep_median() {
	local expr=$1 i n v row
	shift
	for ((i = 0; i < reps; i++)); do
		row=
		for n in "$@"; do
			v="$n[$i]"
			row+=" ${!v}"
		done
		echo "$row"
	done | awk "{ printf \"%.6f\\n\", $expr }" | median
}

[ -n "$fixed" ] && echo "work: scale $scale" || echo "work: sized to about ${target}s per plain run"
[ -n "$perf" ] && echo "perf: $perf" || echo "perf: no bperf (build/bperf/bperf or BPERF=...)"
printf "%-9s %8s %8s | %8s | %8s %8s %8s %8s | %6s\n" example plain_s full_s total% \
	startup% steady% sampling% delays% perf%
sum=0 ssum=0 cnt=0
for name in "${names[@]}"; do
	sc=$scale
	unset MOTIV_ITERS
	if [[ $name == motiv-* ]]; then
		# motiv sizes its loops to the I/O it measures at start: one
		# plain run's sizes for every run, or each does different work
		r=$(timed plain $(example "$name" 0.1))
		MOTIV_ITERS=$(sed -n 's/.*light \([0-9]*\), heavy \([0-9]*\) iter.*/\1,\2/p' "$tmp/out")
		[ -n "$MOTIV_ITERS" ] || { echo "overhead.sh: no loop sizes from motiv" >&2; exit 1; }
		export MOTIV_ITERS
	fi
	[ -z "$fixed" ] && sc=$(calibrate "$name")
	cmd=($(example "$name" "$sc"))
	declare -a Po=() Pi=() Si=() Fo=() Fi=() Qi=()
	for ((i = 0; i < reps; i++)); do
		# (an assignment, so that a failed run stops the script)
		r=$(timed plain "${cmd[@]}"); Po+=("${r% *}"); Pi+=("${r#* }")
		r=$(timed sample "${cmd[@]}"); Si+=("${r#* }")
		r=$(timed full "${cmd[@]}"); Fo+=("${r% *}"); Fi+=("${r#* }")
		if [ -n "$perf" ]; then
			r=$(timed perf "${cmd[@]}"); Qi+=("${r#* }")
		fi
	done
	ratio='($1 / $2 - 1) * 100'
	to=$(rep_median "$ratio" Fo Po) st=$(rep_median "$ratio" Fi Pi)
	sa=$(rep_median "$ratio" Si Pi)
	# the time outside the main phase that a run adds, as % of the plain command
	ou=$(rep_median '(($1 - $2) - ($3 - $4)) / $3 * 100' Fo Fi Po Pi)
	pr=-
	[ -n "$perf" ] && pr=$(rep_median "$ratio" Qi Pi | awk '{ printf "%.1f", $1 }')
	printf "%-9s %8.3f %8.3f | %8.1f | %8.1f %8.1f %8.1f %8.1f | %6s\n" "$name" \
		"$(printf "%s\n" "${Po[@]}" | median)" "$(printf "%s\n" "${Fo[@]}" | median)" \
		"$to" "$ou" "$st" "$sa" \
		"$(awk -v a="$st" -v b="$sa" 'BEGIN { print a - b }')" "$pr"
	sum=$(awk -v a="$sum" -v b="$to" 'BEGIN { print a + b }')
	ssum=$(awk -v a="$ssum" -v b="$st" 'BEGIN { print a + b }')
	cnt=$((cnt + 1))
done
awk -v a="$sum" -v s="$ssum" -v n="$cnt" 'BEGIN {
	printf "average overhead: end to end %.1f%%, steady state %.1f%%\n", a / n, s / n }'
echo "(medians of $reps repetitions of each run's ratio to the plain run just before it;"
echo " on a loaded machine expect a few points of noise)"
