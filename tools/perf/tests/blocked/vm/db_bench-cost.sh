#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The record-time cost of bperf record's default call graph (DWARF user
# stacks of 1 KiB) against -g, --call-graph dwarf (8 KiB) and no call graph,
# on db_bench readrandom (4 readers, one cache shard, a small DB on the
# guest's tmpfs).  A measurement, not a test (it asserts nothing):
#
#   make vm CMD=tools/perf/tests/blocked/vm/db_bench-cost.sh
#
# Prints, per round (ROUNDS, 3), db_bench's own ops/s alone and under each
# way of recording, the record's wall time, perf.data's size and bytes per
# second of record wall time.  The ways alternate within a round, so that a
# change of the host's speed hits them alike.  Environment: BPERF, DB_KEYS
# (20000), DB_S (4 s of readrandom), ROUNDS.
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
DB_KEYS=${DB_KEYS:-20000}
DB_S=${DB_S:-4}
ROUNDS=${ROUNDS:-3}
T=$(mktemp -d /tmp/db-cost.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
[ -w "${HOME:-/nonexistent}" ] || export HOME=$T
command -v db_bench >/dev/null || { echo "no db_bench: apt-get install rocksdb-tools (make deps)" >&2; exit 1; }
db_bench --db="$T/db" --benchmarks=fillrandom --num="$DB_KEYS" --compression_type=none >/dev/null 2>&1 ||
	{ echo "db_bench fillrandom failed" >&2; exit 1; }
run=(db_bench --db="$T/db" --use_existing_db=1 --benchmarks=readrandom --num="$DB_KEYS"
	--threads=4 --cache_numshardbits=0 --duration="$DB_S")
ops() { awk '/^readrandom/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ops/sec") print $i }' "$1"; }
for round in $(seq "$ROUNDS"); do
	"${run[@]}" >o.txt 2>/dev/null
	echo "round $round alone: $(ops o.txt) ops/s"
	for cg in "-g" "" "--call-graph dwarf" "--no-call-graph"; do
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		"$BPERF" record $cg -o c.data -- "${run[@]}" >o.txt 2>e.txt
		ms=$((($(date +%s%N) - t0) / 1000000))
		sz=$(stat -c %s c.data)
		echo "round $round ${cg:-default}: $(ops o.txt) ops/s; record ${ms} ms;" \
			"${sz} bytes = $((sz * 1000 / ms / 1024)) KiB/s; $(grep -o '([0-9]* samples)' e.txt)"
	done
done
