#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bperf demo on the paper's motivational example (its Figure 1), inside the VM:
#
#   scripts/run-vm.sh -- tools/perf/tests/blocked/vm/demo.sh
#
# Two threads meet at a barrier; thread 1 computes a little and does one
# 4 KiB pwrite and eight 512 B preads with O_DIRECT, thread 2 computes a lot
# (case 1) or a little (case 2).  For each case this records the program with
# bperf and prints, per thread, where its time went (like the paper's
# Figure 7): the per-class split and the top symbols, on CPU ([.]/[k]) and
# off CPU ([I] I/O, [L] lock, [S] waiting for a CPU, [B] other).  A hot/cold
# flame graph is written for each case.
#
# Environment: BPERF, DEVICE (default /dev/vda), SECONDS (default 3), ROUNDS (default 300),
# OUT (default build/vm-scratch/bperf).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
DEVICE=${DEVICE:-/dev/vda}
SECONDS_RUN=${SECONDS:-3}
OUT=${OUT:-$repo/build/vm-scratch/bperf}
src=$repo/tools/bcoz/tests/vm/motiv.c
T=$(mktemp -d /tmp/bperf-demo.XXXXXX)
mkdir -p "$OUT" 2>/dev/null || OUT=$T

[ -x "$BPERF" ] || { echo "demo: no bperf at $BPERF (run scripts/build-bperf.sh)"; exit 1; }
[ -f "$src" ] || { echo "demo: $src not found"; exit 1; }
gcc -O1 -g -fno-omit-frame-pointer -pthread -I"$repo/tools/bcoz/include" \
	-o "$T/motiv" "$src" || { echo "demo: cannot compile $src"; exit 1; }
cd "$T" || exit 1
# the guest's root is read-only: keep perf's ~/.debug build-id cache in /tmp
[ -w "${HOME:-/nonexistent}" ] || export HOME=$T

for cs in 1 2; do
	echo
	echo "=================== case $cs ==================="
	"$BPERF" record -g -o case$cs.data ./motiv "$DEVICE" $cs "$SECONDS_RUN" "${ROUNDS:-300}" 2>&1 |
		grep -v '^\[ perf record: Woken'
	tids=$("$BPERF" report -i case$cs.data --stdio --no-children --sort pid -g none 2>/dev/null |
		awk '/^ +[0-9.]+%/ { split($2, a, ":"); print a[1] }' | sort -n)
	n=0
	for tid in $tids; do
		n=$((n + 1))
		[ $n -eq 1 ] && continue	# the main thread only waits for the two workers
		echo
		echo "--- case $cs, thread $((n - 1)) (tid $tid): where its time went"
		"$BPERF" report -i case$cs.data --stdio --no-children --tid "$tid" \
			--sort pid,blocked --percentage relative -g none 2>/dev/null |
			grep -E '^ +[0-9.]+%'
		echo "--- case $cs, thread $((n - 1)): top symbols (self)"
		"$BPERF" report -i case$cs.data --stdio --no-children --tid "$tid" \
			--sort pid,sym --percentage relative -g none --percent-limit 2 2>/dev/null |
			grep -E '^ +[0-9.]+%' | head -8
	done
	"$BPERF" script -i case$cs.data --flamegraph "$OUT/motiv-case$cs.svg" 2>&1 | sed 's/^/demo: /'
	cp case$cs.data "$OUT/" 2>/dev/null
done
echo
echo "demo: flame graphs: $OUT/motiv-case1.svg $OUT/motiv-case2.svg (open in a browser)"
rm -rf "$T"
