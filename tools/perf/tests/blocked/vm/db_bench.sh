# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Part of run-vm-tests.sh (sourced, after ../tap.sh): bperf on a C++ server
# nobody here wrote, RocksDB's db_bench (Debian's rocksdb-tools).
#
# A small DB (DB_KEYS, 20000 keys, no compression) is filled on the
# guest's tmpfs, then `readrandom` runs for DB_S (3) seconds with 4 reader
# threads and one block-cache shard (--cache_numshardbits=0), so that the
# readers meet on the shard's mutex, recorded with bperf record's DEFAULTS
# (no -g: DWARF user stacks of 1 KiB, which name the primitive through
# Debian's glibc).  Asserted:
#   - the recording has DWARF user stacks (the default call graph);
#   - the readers wait under the `mutex` reason, and the class of the
#     innermost RocksDB callers of the lock (lock wrappers skipped) with the
#     most mutex points is the block cache's, rocksdb::...LRUCacheShard
#     demangled (the DB mutex, taken for a new SuperVersion, comes second);
#   - the rocksdb:* pool threads (flush/compaction, idle in readrandom) are
#     `idle` in `bperf report --wait-summary`, and none of their points is
#     called mutex;
#   - at most 5 % of all blocked points that are not runnable ([S], cpu)
#     stay unnamed (futex: a futex wait whose primitive the stack does not
#     show; unknown:*).
# The numbers (ops/s, points by reason, the per-thread summary, the top
# callers) go on "# " lines.  Nothing is a fixed amount of work: the run
# is sized by time and every share is of the same recording.
#
# Uses from run-vm-tests.sh: BPERF, OUT; the cwd is scratch.
DB_KEYS=${DB_KEYS:-20000}
DB_S=${DB_S:-3}
DB_BENCH=${DB_BENCH:-/usr/bin/db_bench}

db_bench_test() {
	local db rc ops n mutex top top_pts verdict bad_pts named_pts

	if [ ! -x "$DB_BENCH" ]; then
		bad "db_bench: no $DB_BENCH (install rocksdb-tools: make deps)"
		return
	fi
	db=$(mktemp -d /tmp/db_bench.XXXXXX)
	if ! "$DB_BENCH" --db="$db" --benchmarks=fillrandom --num="$DB_KEYS" \
		--compression_type=none >dbfill.txt 2>&1; then
		bad "db_bench: fillrandom --num=$DB_KEYS"
		diag <dbfill.txt
		return
	fi
	"$BPERF" record -o db.data -- "$DB_BENCH" --db="$db" --use_existing_db=1 \
		--benchmarks=readrandom --num="$DB_KEYS" --threads=4 \
		--cache_numshardbits=0 --duration="$DB_S" >dbrun.txt 2>dbrun.err
	rc=$?
	rm -rf "$db"
	if ! check "db_bench: record readrandom, 4 threads, one cache shard, ${DB_S} s, bperf record's defaults (rc=$rc)" \
		[ $rc -eq 0 ]; then
		tail -5 dbrun.err | diag
		return
	fi
	ops=$(awk '/^readrandom/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ops/sec") print $i }' dbrun.txt)
	diag "db_bench readrandom under bperf record: ${ops:-?} ops/s; $(grep -o 'Captured.*' dbrun.err)"
	check "db_bench: the default recording has DWARF user stacks" \
		bash -c "'$BPERF' evlist -v -i db.data 2>/dev/null | grep -q 'STACK_USER'"

	# rows: "comm;frame;...;frame;[class:reason] N", the caller first.
	# --no-inline: perf finds inlined frames with addr2line, one query per
	# frame of librocksdb, minutes under TCG; the rules need no inlines.
	"$BPERF" script -i db.data --folded --no-inline 2>/dev/null >db.folded
	"$BPERF" report -i db.data --wait-summary --no-inline 2>/dev/null >db.ws
	cp db.ws "$OUT/db_bench-wait-summary.txt" 2>/dev/null
	diag <db.ws

	# points by reason, all threads
	awk '{ if (match($0, /;\[[a-z]+:[^];]*\] [0-9]+$/)) {
		s = substr($0, RSTART + 2); sub(/\] .*/, "", s); sub(/^[a-z]+:/, "", s)
		p[s] += $NF } }
	     END { for (r in p) print p[r], r }' db.folded | sort -rn >db.reasons
	diag "blocked points by wait reason: $(head -8 db.reasons | tr '\n' ',')"
	mutex=$(awk '$2 == "mutex" { print $1 }' db.reasons)
	check "db_bench: the readers' waits on the block cache are under mutex (${mutex:-0} points)" \
		[ "${mutex:-0}" -gt 0 ]

	# The innermost rocksdb:: frame of each mutex stack, lock wrappers
	# skipped (port::Mutex, InstrumentedMutex, MutexLock), and its class:
	# the block cache takes its shard's lock in Lookup, Release and Insert,
	# each of which alone may rank below the DB mutex's one caller
	# (ColumnFamilyData::GetThreadLocalSuperVersion: 46 points against
	# Lookup 31 and Release 25 in one run), so components are compared.
	awk '/;\[lock:mutex\] [0-9]+$/ {
		n = split($0, f, ";"); c = ""
		for (i = n - 1; i > 1; i--)
			if (f[i] ~ /^rocksdb::/ &&
			    f[i] !~ /^rocksdb::(port::|Instrumented(Mutex|CondVar)|MutexLock|ReadLock|WriteLock)/) {
				c = f[i]; break }
		if (c == "") { c = "(no rocksdb frame)"; k = c }
		else { k = c; while (sub(/<[^<>]*>$/, "", k)); sub(/::[^:]*$/, "", k) }
		p[c] += $NF; q[k] += $NF }
	     END { for (c in p) print p[c] "\t" c > "db.callers"
		   for (k in q) print q[k] "\t" k > "db.classes" }' db.folded
	sort -rn -o db.callers db.callers
	sort -rn -o db.classes db.classes
	diag "innermost RocksDB callers of the mutex waits (points):"
	head -4 db.callers | diag
	diag "and their classes:"
	head -3 db.classes | diag
	read -r top_pts top <<<"$(head -1 db.classes)"
	check "db_bench: the class whose calls wait most on a mutex is the block cache's shard, demangled: ${top:-none} (${top_pts:-0} of ${mutex:-0} points)" \
		bash -c "echo '${top:-}' | grep -Eq '^rocksdb::.*LRUCacheShard$'"

	for n in rocksdb:low rocksdb:high; do
		verdict=$(awk -v n="$n" '!/^#/ && $3 == n { print $11 }' db.ws)
		check "db_bench: $n (the idle flush/compaction pool) is idle in --wait-summary (${verdict:-none})" \
			[ "$verdict" = idle ]
	done
	read -r mutex named_pts <<<"$(awk '/^rocksdb:/ { if ($0 ~ /;\[[a-z]+:mutex\] [0-9]+$/) m += $NF
		if ($0 ~ /;\[[a-z]+:[^];]*\] [0-9]+$/) b += $NF } END { print m + 0, b + 0 }' db.folded)"
	check "db_bench: no wait of the rocksdb:* pool called mutex ($mutex of its $named_pts blocked points)" \
		[ "$mutex" -le $((named_pts / 100)) ]

	read -r bad_pts named_pts <<<"$(awk '$2 != "cpu" { t += $1; if ($2 == "futex" || $2 ~ /^unknown/) u += $1 }
		END { print u + 0, t + 0 }' db.reasons)"
	diag "unnamed: $(awk '$2 == "futex" || $2 ~ /^unknown/' db.reasons | head -5 | tr '\n' ',')"
	check "db_bench: blocked points left unnamed (futex, unknown:*): $bad_pts of $named_pts not runnable (<= 5%)" \
		[ "$named_pts" -gt 0 -a $((bad_pts * 20)) -le "$named_pts" ]
}
