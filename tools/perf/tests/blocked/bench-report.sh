#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmark (not a test): wall time of `bperf report` against stock
# `perf report` on the same large perf.data, and their ratio.
#
#   tools/perf/tests/blocked/bench-report.sh [PERF.DATA]
#
# Without an argument a perf.data of NR_SAMPLES (default 1000000) samples is
# made: a short recording on this host, its samples turned into a mix of
# on-CPU and blocked samples (mkblocked.py), then repeated (mkbig.py).
# Each report runs RUNS times (default 3) with --stdio, output discarded;
# the best time counts.  Environment: BPERF, STOCK_PERF, NR_SAMPLES, RUNS.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
STOCK=${STOCK_PERF:-/usr/bin/perf}
NR=${NR_SAMPLES:-1000000}
RUNS=${RUNS:-3}
T=$(mktemp -d /tmp/bperf-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

[ -x "$BPERF" ] || { echo "no bperf at $BPERF"; exit 1; }
[ -x "$STOCK" ] || { echo "no stock perf at $STOCK"; exit 1; }

data=${1:-}
if [ -z "$data" ]; then
	"$BPERF" record -q -g -o "$T/small.data" -- \
		sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 0.1' >/dev/null 2>&1
	python3 "$here/mkblocked.py" "$T/small.data" "$T/blk.data" >/dev/null
	python3 "$here/mkbig.py" "$T/blk.data" "$T/big.data" "$NR"
	data=$T/big.data
fi

# best RUNS: the lowest wall and CPU (user + sys) seconds of RUNS runs of "$@"
best() {
	local i line bw= bc=
	for i in $(seq "$RUNS"); do
		line=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 | tail -1)
		read -r bw bc <<<"$(awk -v l="$line" -v bw="$bw" -v bc="$bc" 'BEGIN {
			split(l, t, " "); w = t[1]; c = t[2] + t[3]
			if (bw == "" || w < bw) bw = w
			if (bc == "" || c < bc) bc = c
			print bw, bc }')"
	done
	echo "$bw $bc"
}

echo "perf.data: $data ($(stat -c %s "$data") bytes), best of $RUNS runs"
for args in "--stdio -g none" "--stdio --no-children" "--stdio --sort comm,dso -n"; do
	read -r sw sc <<<"$(best "$STOCK" report -i "$data" $args)"
	read -r bw bc <<<"$(best "$BPERF" report -i "$data" $args)"
	awk -v sw="$sw" -v sc="$sc" -v bw="$bw" -v bc="$bc" -v a="$args" 'BEGIN {
		printf "report %-28s wall: stock %.2f s bperf %.2f s ratio %.3f | cpu: stock %.2f s bperf %.2f s ratio %.3f\n",
			a, sw, bw, bw / sw, sc, bc, bc / sc }'
done
