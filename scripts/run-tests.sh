#!/bin/bash
# Usage: scripts/run-tests.sh TARGET...
#
# Runs `make TARGET` for each TARGET in order (all of them, even after a
# failure), keeps each output in build/test-logs/TARGET.log, and sums the TAP
# every target prints (kselftest's nested TAP or flat TAP 13) with
# scripts/tap-summary.sh (its output in build/test-logs/TARGET.summary). A
# target with no TAP, or one that exits non-zero while its TAP shows no
# failure, counts as 1 failed. The selftests log holds kselftest's nested TAP
# followed by scripts/run-selftests.sh's own summary lines; tap-summary.sh
# counts each nested result once and does not read those lines as results.
# Prints per-target results and a final line exactly "N passed, N failed,
# N skipped"; exits non-zero if anything failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: scripts/run-tests.sh TARGET... (e.g. selftests)"
mkdir -p "$BUILD/test-logs"
P=0 F=0 S=0 failed_targets=()
for t in "$@"; do
	tl=$BUILD/test-logs/$t.log
	log "=== make $t (log: $tl)"
	set +e
	make -C "$REPO" --no-print-directory "$t" 2>&1 | tee "$tl"
	rc=${PIPESTATUS[0]}
	set -e
	line=$("$REPO/scripts/tap-summary.sh" "$tl" 2>&1 | tee "$BUILD/test-logs/$t.summary" | tail -n1 || true)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
	else
		p=0 f=1 s=0
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1        # the target failed even though its own count says otherwise
	fi
	[ "$rc" -eq 0 ] && [ "$f" -eq 0 ] || failed_targets+=("$t")
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	log "=== make $t: exit $rc, $p passed, $f failed, $s skipped"
done
if [ ${#failed_targets[@]} -gt 0 ]; then
	log "FAILED targets: ${failed_targets[*]} (logs in build/test-logs/)"
fi
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ] && [ ${#failed_targets[@]} -eq 0 ]
