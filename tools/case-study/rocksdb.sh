#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The paper's RocksDB case study (OSDI '24, section 4.2), scaled to a
# 2-CPU QEMU guest, on Debian's db_bench (rocksdb-tools 7.8.3, a library
# without line tables: bcoz profiles it by function, from .dynsym).
#
#   make case-study        (scripts/run-vm.sh -- tools/case-study/rocksdb.sh /dev/vda)
#
# Three optimisations, each: the problem as bperf shows it (per-thread
# classes, top symbols per class, a hot/cold flame graph), bcoz's
# prediction (end-to-end runs of a fixed amount of work, half of them with
# the virtual speedup, appended to one profile), then the real change and
# its measured effect. For each prediction one line:
#
#   case-study: NAME predicted +X% actual +Y%
#
# Both numbers are program speedups in COZ's sense, the share of time per
# operation saved: 1 - ops/s(before) / ops/s(after) for the real change
# (section 4.1's conversion of throughput into speedup; +50 % throughput is
# a speedup of +33 %), and bcoz's end-to-end estimate at the line speedup
# named in the line's comment.
#
#   opt1  block cache contention: readrandom, THREADS readers, one cache
#         shard (--cache_numshardbits=0), data in the cache.
#         prediction: the paper's cache lookup,
#         rocksdb::BlockBasedTable::GetDataBlockFromCache<rocksdb::Block>
#         (with its callees: the shard's Lookup, its mutex, the hash
#         table) at 50 %; actual: 64 shards (--cache_numshardbits=6).
#   opt2  block reads: the same reads with an 8 MiB cache and
#         --use_direct_reads, so they go to the disk.
#         predictions at 100 %: the I/O subclass (--blocked-scope i: the
#         waits for the disk) and the paper's block read,
#         rocksdb::BlockFetcher::ReadBlockContents (the waits, the read
#         path's CPU time in the kernel and the checksums);
#         actual: a 256 MiB cache, so nothing is read twice.
#   opt3  writes: fillrandom, WRITERS threads, snappy compression, 4 MiB
#         memtables (so flushes and compactions run during the run).
#         predictions at 100 %: snappy's compressor
#         (snappy::internal::CompressFragment) and the write group's
#         write-ahead log write (rocksdb::DBImpl::WriteToWAL for a
#         WriteGroup: the record, its checksum and the write(2));
#         actual: --compression_type=none, --disable_wal=1. A third real change, more memtables
#         (--max_write_buffer_number=6), is measured and printed.
#
# Every size is set in the run: the number of operations is calibrated
# once, unprofiled, to about TARGET_S seconds (default 4). RUNS (default 3)
# runs per arm, before and after interleaved; medians.
#
# Environment: OUT (default build/vm-scratch/case-study), RUNS, TARGET_S,
# KEYS (100000), THREADS (4), WRITERS (2), BPERF, BCOZ, DB_BENCH.
# Argument: a block device to put the databases on (made ext2, mounted),
# else a directory under /tmp.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
BCOZ=${BCOZ:-$repo/build/bcoz/bcoz}
DB_BENCH=${DB_BENCH:-/usr/bin/db_bench}
OUT=${OUT:-$repo/build/vm-scratch/case-study}
RUNS=${RUNS:-3} TARGET_S=${TARGET_S:-4} KEYS=${KEYS:-100000}
THREADS=${THREADS:-4} WRITERS=${WRITERS:-2}
dev=${1:-}

die() { echo "case-study: ERROR: $*" >&2; exit 1; }
say() { echo "case-study: $*"; }
[ -x "$DB_BENCH" ] || die "$DB_BENCH missing; install rocksdb-tools (make deps)"
[ -x "$BPERF" ] || die "$BPERF missing; run: make bperf"
[ -x "$BCOZ" ] || die "$BCOZ missing; run: make -C tools/bcoz"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: give a positive number"
mkdir -p "$OUT" || die "cannot create $OUT"
t_start=$(date +%s)

if [ -n "$dev" ]; then
	[ -b "$dev" ] || die "$dev is not a block device"
	mnt=/tmp/case-study-db
	mkdir -p "$mnt"
	mkfs.ext2 -q -F "$dev" >/dev/null 2>&1 || die "mkfs.ext2 $dev failed"
	mount -t ext2 "$dev" "$mnt" || die "cannot mount $dev (ext2) on $mnt"
	trap 'umount "$mnt" 2>/dev/null' EXIT
	where="$dev (ext2)"
else
	mnt=$(mktemp -d /tmp/case-study-db.XXXXXX)
	trap 'rm -rf "$mnt"' EXIT
	where="$mnt"
fi
DB=$mnt/db
echo "# case study: db_bench $("$DB_BENCH" --version 2>/dev/null | head -1), kernel $(uname -r), $(nproc) CPUs, databases on $where"
"$BPERF" record -o /dev/null true >/dev/null 2>"$OUT/feature.txt" ||
	die "bperf record failed: $(cat "$OUT/feature.txt")"
grep -i "blocked" "$OUT/feature.txt" | sed 's/^/# /'

common=(--db="$DB" --statistics=0 --histogram=0 --value_size=100 --key_size=16)
readers=(--use_existing_db=1 --benchmarks=readrandom --num="$KEYS" --threads="$THREADS")

# ops/s of one db_bench run (the line of its benchmark), or empty
ops() { sed -n 's/.* \([0-9][0-9]*\) ops\/sec.*/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# speedup in COZ's sense from ops/s before and after, in %
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%+.1f", (1 - a / b) * 100; else print "n/a" }'; }

fill() {	# fill the read database (uncompressed), once
	rm -rf "$DB"
	"$DB_BENCH" "${common[@]}" --benchmarks=fillrandom --num="$KEYS" \
		--compression_type=none >"$OUT/fill.txt" 2>&1 || die "fillrandom failed: $(tail -3 "$OUT/fill.txt")"
}

# calibrate NAME ARGS...: per-thread operations for about TARGET_S seconds
calibrate() {
	local name=$1 o
	shift
	"$DB_BENCH" "${common[@]}" "$@" --duration=2 >"$OUT/$name-calib.txt" 2>&1 ||
		die "$name: calibration run failed: $(tail -3 "$OUT/$name-calib.txt")"
	o=$(ops "$OUT/$name-calib.txt")
	[ -n "$o" ] || die "$name: no ops/sec in $OUT/$name-calib.txt"
	echo "$o"
}

# actual NAME "BEFORE ARGS" "AFTER ARGS": interleaved runs, median ops/s
actual() {
	local name=$1 before=$2 after=$3 r b=() a=()
	for ((r = 0; r < RUNS; r++)); do
		# shellcheck disable=SC2086
		"$DB_BENCH" "${common[@]}" $before >"$OUT/$name-before-$r.txt" 2>&1
		b+=("$(ops "$OUT/$name-before-$r.txt")")
		# shellcheck disable=SC2086
		"$DB_BENCH" "${common[@]}" $after >"$OUT/$name-after-$r.txt" 2>&1
		a+=("$(ops "$OUT/$name-after-$r.txt")")
	done
	# a failed run has no ops/s: left out, and said
	A_BEFORE=$(printf '%s\n' "${b[@]}" | grep . | median)
	A_AFTER=$(printf '%s\n' "${a[@]}" | grep . | median)
	[ "${#b[@]}" = "$(printf '%s\n' "${b[@]}" | grep -c .)" ] &&
		[ "${#a[@]}" = "$(printf '%s\n' "${a[@]}" | grep -c .)" ] ||
		echo "# $name: some db_bench runs failed (see $OUT/$name-*.txt)"
	echo "# $name actual: ops/s before ${b[*]} (median $A_BEFORE), after ${a[*]} (median $A_AFTER)"
}

# predict NAME SPEEDUP "DB_BENCH ARGS" BCOZ ARGS...: RUNS end-to-end runs
# at 0 % and at SPEEDUP %, interleaved, into OUT/NAME.coz; sets P_VALUE to
# bcoz's program speedup at SPEEDUP
predict() {
	local name=$1 s=$2 dargs=$3 prof r sp

	shift 3
	prof=$OUT/$name.coz
	rm -f "$prof"
	for ((r = 0; r < RUNS; r++)); do
		for sp in 0 "$s"; do
			# shellcheck disable=SC2086
			"$BCOZ" run --end-to-end "$@" --fixed-speedup "$sp" -o "$prof" --- \
				"$DB_BENCH" "${common[@]}" $dargs >"$OUT/$name-bcoz-$r-$sp.txt" 2>&1 ||
				echo "# $name: bcoz run at $sp % failed: $(grep -m1 'bcoz:.*error' "$OUT/$name-bcoz-$r-$sp.txt")"
		done
	done
	"$BCOZ" plot -i "$prof" --text >"$OUT/$name.txt" 2>&1
	"$BCOZ" plot -i "$prof" -o "$OUT/$name.html" >/dev/null 2>&1
	P_VALUE=$(awk -v s="$s%" '$1 == s && $2 ~ /%$/ { sub("%", "", $2); print $2; exit }' "$OUT/$name.txt")
	[ -n "$P_VALUE" ] || { P_VALUE=n/a; echo "# $name: no estimate at $s % (see $OUT/$name.txt)"; }
	sed -n '1,6p' "$OUT/$name.txt" | sed 's/^/#   /'
}

line() {	# NAME PREDICTED ACTUAL
	local p=$2
	[ "$p" = n/a ] || p=$(awk -v v="$p" 'BEGIN { printf "%+.1f", v }')
	say "$1 predicted ${p}% actual ${3}%"
	echo "$1 $p $3" >>"$OUT/results.txt"
}

# bperf NAME ARGS...: record with bperf's defaults; per-thread classes,
# what the threads waited for, the innermost RocksDB functions of each
# class (the library has no frame pointers: the default DWARF stacks
# unwind it), a hot/cold flame graph. --no-inline everywhere: perf asks
# addr2line for inlined frames one address at a time, minutes in TCG.
profile() {
	local name=$1
	shift
	"$BPERF" record -o "$OUT/$name.data" -- "$DB_BENCH" "${common[@]}" "$@" \
		>"$OUT/$name-record.txt" 2>&1 || { echo "# $name: bperf record failed"; return; }
	"$BPERF" report -i "$OUT/$name.data" --stdio --no-children --no-inline \
		--sort comm,blocked -g none 2>/dev/null | grep -v '^#' | grep -v '^$' |
		head -12 >"$OUT/$name-classes.txt"
	echo "# $name: bperf report --sort comm,blocked (top rows)"
	sed 's/^/#   /' "$OUT/$name-classes.txt"
	"$BPERF" report -i "$OUT/$name.data" --wait-summary --no-inline \
		>"$OUT/$name-wait-summary.txt" 2>/dev/null
	echo "# $name: bperf report --wait-summary (threads with the most points)"
	grep -v '^#' "$OUT/$name-wait-summary.txt" | head -8 | sed 's/^/#   /'
	"$BPERF" script -i "$OUT/$name.data" --folded --no-inline >"$OUT/$name.folded" 2>/dev/null
	# rows "comm;caller;...;leaf;[class:reason] N" (on-CPU rows end in
	# the leaf): the innermost rocksdb:: frame, port:: wrappers skipped
	awk '{ n = split($0, f, ";"); pts = f[n]; sub(/.* /, "", pts)
		cls = "on-cpu"
		if (f[n] ~ /^\[[a-z]+:/) { cls = f[n]; sub(/^\[/, "", cls); sub(/\].*/, "", cls) }
		c = "(no rocksdb frame)"
		for (i = n; i > 1; i--) {
			g = f[i]; sub(/ [0-9]+$/, "", g)
			if (g ~ /^rocksdb::/ && g !~ /^rocksdb::port::/) { c = g; break }
		}
		p[cls "\t" c] += pts; all += pts }
	     END { for (k in p) { split(k, kk, "\t")
			printf "%d\t%5.1f%%\t%-22s %s\n", p[k], 100 * p[k] / all, kk[1], substr(kk[2], 1, 110) } }' \
		"$OUT/$name.folded" | sort -rn | cut -f2- | head -15 >"$OUT/$name-top.txt"
	echo "# $name: innermost RocksDB function by class[:wait reason], share of all points"
	sed 's/^/#   /' "$OUT/$name-top.txt"
	"$BPERF" script -i "$OUT/$name.data" --no-inline --flamegraph "$OUT/$name.svg" >/dev/null 2>&1 &&
		echo "# $name: flame graph $OUT/$name.svg"
}

: >"$OUT/results.txt"

# ---- opt 1: block cache contention -------------------------------------
echo "## opt1: block cache contention (readrandom, $THREADS threads, one cache shard)"
fill
o1=(--cache_size=268435456 --cache_numshardbits=0)
rate=$(calibrate opt1 "${readers[@]}" "${o1[@]}") || exit 1
reads=$(awk -v r="$rate" -v t="$TARGET_S" -v n="$THREADS" 'BEGIN { printf "%d", r * t / n }')
echo "# opt1: $rate ops/s unprofiled; $reads reads per thread"
profile opt1 "${readers[@]}" "${o1[@]}" --reads="$reads"
predict opt1-cache-lookup 50 "${readers[*]} ${o1[*]} --reads=$reads" \
	-b %librocksdb% --fixed-function 'rocksdb::BlockBasedTable::GetDataBlockFromCache<rocksdb::Block>'
p=$P_VALUE
actual opt1 "${readers[*]} ${o1[*]} --reads=$reads" \
	"${readers[*]} --cache_size=268435456 --cache_numshardbits=6 --reads=$reads"
line opt1-cache-lookup "$p" "$(speedup "$A_BEFORE" "$A_AFTER")"

# ---- opt 2: block reads ---------------------------------------------------
echo "## opt2: block reads (8 MiB cache, O_DIRECT reads)"
o2=(--cache_size=8388608 --use_direct_reads=true)
rate=$(calibrate opt2 "${readers[@]}" "${o2[@]}") || exit 1
reads=$(awk -v r="$rate" -v t="$TARGET_S" -v n="$THREADS" 'BEGIN { printf "%d", r * t / n }')
echo "# opt2: $rate ops/s unprofiled; $reads reads per thread"
profile opt2 "${readers[@]}" "${o2[@]}" --reads="$reads"
predict opt2-io-subclass 100 "${readers[*]} ${o2[*]} --reads=$reads" \
	-b %librocksdb% --blocked-scope i
p=$P_VALUE
predict opt2-block-read 100 "${readers[*]} ${o2[*]} --reads=$reads" \
	-b %librocksdb% --fixed-function 'rocksdb::BlockFetcher::ReadBlockContents()'
p2=$P_VALUE
actual opt2 "${readers[*]} ${o2[*]} --reads=$reads" \
	"${readers[*]} --cache_size=268435456 --use_direct_reads=true --reads=$reads"
line opt2-io-subclass "$p" "$(speedup "$A_BEFORE" "$A_AFTER")"
line opt2-block-read "$p2" "$(speedup "$A_BEFORE" "$A_AFTER")"

# ---- opt 3: writes ----------------------------------------------------------
echo "## opt3: writes (fillrandom, $WRITERS writers, snappy)"
w=(--benchmarks=fillrandom --threads="$WRITERS" --compression_type=snappy
	--write_buffer_size=4194304 --target_file_size_base=4194304)
rate=$(calibrate opt3 "${w[@]}" --num=100000000) || exit 1
num=$(awk -v r="$rate" -v t="$TARGET_S" -v n="$WRITERS" 'BEGIN { printf "%d", r * t / n }')
echo "# opt3: $rate ops/s unprofiled; $num writes per thread"
profile opt3 "${w[@]}" --num="$num"
predict opt3-compression 100 "${w[*]} --num=$num" \
	-b %librocksdb% -b %snappy% --fixed-function snappy::internal::CompressFragment
p=$P_VALUE
actual opt3c "${w[*]} --num=$num" "${w[*]/snappy/none} --num=$num"
line opt3-compression "$p" "$(speedup "$A_BEFORE" "$A_AFTER")"
predict opt3-wal 100 "${w[*]} --num=$num" -b %librocksdb% --fixed-function \
	'rocksdb::DBImpl::WriteToWAL(rocksdb::WriteThread::WriteGroup const&, rocksdb::log::Writer*, unsigned long*, bool, bool, unsigned long, rocksdb::DBImpl::LogFileNumberSize&)'
p=$P_VALUE
actual opt3w "${w[*]} --num=$num" "${w[*]} --disable_wal=1 --num=$num"
line opt3-wal "$p" "$(speedup "$A_BEFORE" "$A_AFTER")"
actual opt3m "${w[*]} --num=$num" "${w[*]} --max_write_buffer_number=6 --num=$num"
echo "# opt3 more memtables (no prediction): actual $(speedup "$A_BEFORE" "$A_AFTER")%"

# ---- verdict ------------------------------------------------------------------
echo "## verdict (a prediction within 15 points of its actual change agrees)"
awk '{ if ($2 == "n/a" || $3 == "n/a") v = "no estimate";
	else { d = $2 - $3; v = (d <= 15 && d >= -15) ? "agrees" : "misses" }
	printf "case-study: %-20s %s (predicted %s%%, actual %s%%)\n", $1, v, $2, $3 }' "$OUT/results.txt"
echo "# case study: $(($(date +%s) - t_start)) s; outputs in $OUT"
