#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What bcoz's libc wrappers cost on calls that do not wait (a benchmark,
# not a test): bench/wrapcost.c (an uncontended mutex lock+unlock pair,
# write(2) of one byte to /dev/null, a condition signal with no waiter)
# natively and under `bcoz run --end-to-end` (sampling on, no experiment
# delays), medians of -r runs (default 5) of -t seconds per operation.
#
# usage: tools/bcoz/bench/wrapcost.sh [-r RUNS] [-t SECONDS]
# Needs: make -C tools/bcoz
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BCOZ_BUILD:-$here/../../../build/bcoz}
[ -x "$build/bcoz" ] || { echo "wrapcost.sh: build first: make -C tools/bcoz" >&2; exit 1; }
build=$(cd "$build" && pwd)
runs=5 secs=0.5
while getopts r:t:h o; do
	case $o in
	r) runs=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -g -o "$tmp/wrapcost" "$here/wrapcost.c" -lpthread
for ((r = 0; r < runs; r++)); do
	"$tmp/wrapcost" "$secs" | sed 's/^/native /' >>"$tmp/res"
	(cd "$tmp" && "$build/bcoz" run --end-to-end -o "$tmp/profile.coz" --- ./wrapcost "$secs") 2>/dev/null |
		grep '^wrapcost:' | sed 's/^/bcoz /' >>"$tmp/res"
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-20s %10s %10s %10s\n' operation "native ns" "bcoz ns" "+ns"
for op in mutex_lock_unlock write_devnull cond_signal; do
	a=$(awk -v op="$op" '$1 == "native" && $3 == op { sub("ns=", "", $4); print $4 }' "$tmp/res" | median)
	b=$(awk -v op="$op" '$1 == "bcoz" && $3 == op { sub("ns=", "", $4); print $4 }' "$tmp/res" | median)
	printf '%-20s %10s %10s %+10.1f\n' "$op" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')"
done
