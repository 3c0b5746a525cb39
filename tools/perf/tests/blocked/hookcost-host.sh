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
# BOOTS (2): boots per kernel, alternating. Environment passed to the VM:
# ROUNDS (7), SECS (1), EVENTS ("0 1 2 64"),
# PERIODS ("1000000000 1000000").
set -euo pipefail
. "$(dirname "$0")/../../../../scripts/lib.sh"

out=$BUILD/vm-scratch/hookcost
mkdir -p "$out"
export VM_ENV="ROUNDS SECS EVENTS PERIODS"
BOOTS=${BOOTS:-2}
[[ $BOOTS =~ ^[1-9]$ ]] || die "BOOTS=$BOOTS: give 1 to 9 boots per kernel"
for fl in noblocked default; do
	f=$fl
	[ "$fl" = default ] && f=
	log "building the $fl kernel"
	KERNEL_FLAVOUR=$f "$REPO/scripts/build-kernel.sh" --no-prepare >"$out/build-$fl.log" 2>&1 ||
		{ tail -20 "$out/build-$fl.log" >&2; die "building the $fl kernel failed (log: $out/build-$fl.log)"; }
done
# Boots alternate between the kernels, so a slow phase of the host does
# not land on one kernel only; the spread between boots of one kernel is
# the noise the comparison has to beat.
for ((b = 1; b <= BOOTS; b++)); do
	for fl in noblocked default; do
		f=$fl
		[ "$fl" = default ] && f=
		log "measuring on the $fl kernel (boot $b of $BOOTS)"
		KERNEL_FLAVOUR=$f "$REPO/scripts/run-vm.sh" --timeout 1800 -- \
			"$REPO/tools/perf/tests/blocked/vm/hookcost.sh" | tee "$out/$fl-$b.txt"
		[ "${PIPESTATUS[0]}" = 0 ] || die "the VM run on the $fl kernel failed (see above)"
	done
done
nums() {	# FLAVOUR WHAT -> the boots' values, space-separated
	for ((b = 1; b <= BOOTS; b++)); do
		case $2 in
		pipe) sed -n 's/^perf bench sched pipe.*: \([0-9]*\) ns per switch.*/\1/p' "$out/$1-$b.txt" ;;
		*) awk '$1 == 0 { print $3 }' "$out/$1-$b.txt" ;;
		esac
	done | tr '\n' ' '
}
{
	echo "no event open, ns per switch in each boot (without CONFIG_PERF_BLOCKED_SAMPLES | with it):"
	echo "  perf bench sched pipe: $(nums noblocked pipe)| $(nums default pipe)"
	echo "  hookcost ping-pong:    $(nums noblocked hook)| $(nums default hook)"
} | tee "$out/summary.txt"
