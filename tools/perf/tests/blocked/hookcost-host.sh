#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make hookcost: the scheduler hooks' cost per context switch, on the same
# kernel built without and with CONFIG_PERF_BLOCKED_SAMPLES
# (KERNEL_FLAVOUR=noblocked builds build/kbuild-noblocked; the default
# build/kbuild has the feature). Boots each in the VM and runs
# tools/perf/tests/blocked/vm/hookcost.sh there; prints both tables and the
# no-event comparison (the static key is off: the hooks' cost when nobody
# asked for blocked samples). Saved in build/vm-scratch/hookcost/.
# Not a test: it asserts nothing and prints numbers. TCG makes every switch
# slow; compare only cells of one kernel, or the two kernels' no-event rows.
# Environment (passed to the VM): ROUNDS (7), SECS (1), EVENTS ("0 1 2 64"),
# PERIODS ("1000000000 1000000").
set -euo pipefail
. "$(dirname "$0")/../../../../scripts/lib.sh"

out=$BUILD/vm-scratch/hookcost
mkdir -p "$out"
export VM_ENV="ROUNDS SECS EVENTS PERIODS"
for fl in noblocked default; do
	f=$fl
	[ "$fl" = default ] && f=
	log "building the $fl kernel"
	KERNEL_FLAVOUR=$f "$REPO/scripts/build-kernel.sh" --no-prepare >"$out/build-$fl.log" 2>&1 ||
		{ tail -20 "$out/build-$fl.log" >&2; die "building the $fl kernel failed (log: $out/build-$fl.log)"; }
	log "measuring on the $fl kernel"
	KERNEL_FLAVOUR=$f "$REPO/scripts/run-vm.sh" --timeout 1800 -- \
		"$REPO/tools/perf/tests/blocked/vm/hookcost.sh" 2>"$out/$fl.cells" | tee "$out/$fl.txt"
done
cmp() {	# LABEL NOBLOCKED DEFAULT
	echo "$1: $2 ns per switch without CONFIG_PERF_BLOCKED_SAMPLES, $3 ns with it" \
		"($(awk -v a="$2" -v b="$3" 'BEGIN { if (a > 0) printf "%+.0f ns, %+.1f %%", b - a, (b - a) * 100 / a; else print "n/a" }'))"
}
{
	cmp "perf bench sched pipe, no event" \
		"$(sed -n 's/^perf bench sched pipe.*: \([0-9]*\) ns per switch.*/\1/p' "$out/noblocked.txt")" \
		"$(sed -n 's/^perf bench sched pipe.*: \([0-9]*\) ns per switch.*/\1/p' "$out/default.txt")"
	cmp "hookcost, no event" "$(awk '$1 == 0 { print $3 }' "$out/noblocked.txt")" \
		"$(awk '$1 == 0 { print $3 }' "$out/default.txt")"
} | tee "$out/summary.txt"
