#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not a test: slowdowns of perf record -g without and with blocked samples
# on three switch-heavy workloads, in one boot, to compare kernels by
# booting them alternately (each workload times itself):
#
#   for k in A B A B; do
#           scripts/run-vm.sh --kernel $k -- tools/perf/tests/blocked/vm/switch-ab.sh
#   done | awk '$1 == "ab"' >ab.txt
#
# Prints "ab PROFILER msg S pipe S dd MS" per round: perf bench sched
# messaging -g 4 -l 60 and pipe -l 8000 (their "Total time"), 6000
# 512-byte O_DIRECT reads of DEVICE by dd (ms). ROUNDS rounds (6).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
DEVICE=${DEVICE:-/dev/vda}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
[ -x "$BPERF" ] || { echo "switch-ab: no bperf at $BPERF; build it with 'make bperf'" >&2; exit 1; }
[ -r "$DEVICE" ] || { echo "switch-ab: cannot read $DEVICE; set DEVICE to a block device" >&2; exit 1; }
echo "# kernel $(uname -r) $(uname -v)"
for ((r = 0; r < ${ROUNDS:-6}; r++)); do
	for v in none sampling bperf; do
		case $v in
		none) x=() ;;
		sampling) x=("$BPERF" record -q -g -o p.data --no-blocked --) ;;
		bperf) x=("$BPERF" record -q -g -o p.data --) ;;
		esac
		m=$("${x[@]}" "$BPERF" bench sched messaging -g 4 -l 60 2>/dev/null |
			awk '/Total time/ { print $3 }')
		p=$("${x[@]}" "$BPERF" bench sched pipe -l 8000 2>/dev/null |
			awk '/Total time/ { print $3 }')
		"${x[@]}" bash -c 's=$(date +%s%N)
			dd if="$1" of=/dev/null bs=512 count=6000 iflag=direct 2>/dev/null
			echo $((($(date +%s%N) - s) / 1000000)) >dd.ms' dd "$DEVICE" >/dev/null 2>&1
		echo "ab $v msg ${m:-?} pipe ${p:-?} dd $(cat dd.ms 2>/dev/null || echo '?')"
	done
done
