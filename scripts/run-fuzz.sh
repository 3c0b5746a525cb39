#!/bin/bash
# Usage: scripts/run-fuzz.sh [--seconds N] [--seed S] [run-vm options]
#
# Runs the blocked samples fuzzer (tools/testing/selftests/blocked_samples/
# fuzz_blocked.c) in the VM for N seconds (default $FUZZ_SECONDS, else 90),
# on the kernel of KERNEL_FLAVOUR (`make fuzz KERNEL_FLAVOUR=debug` is the
# point: KASAN, lockdep and the other checkers of scripts/config/debug.config
# watch every path the fuzzer drives). The scratch disk is /dev/vda for its
# O_DIRECT reads. Prints the fuzzer's TAP; fails on a "not ok", on a VM
# failure or timeout, and on kernel console badness (run-vm.sh). The seed is
# printed; --seed repeats a run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${FUZZ_SECONDS:-90} seed= vmargs=()
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=${2:?--seconds needs a number}; shift 2 ;;
	--seed) seed=${2:?--seed needs a number}; shift 2 ;;
	--cpus|--mem|--disk|--kernel|--accel) vmargs+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see scripts/run-fuzz.sh --help)" ;;
	esac
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "--seconds $secs: give a positive whole number of seconds"
[ -z "$seed" ] || [[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: give a number (as the fuzzer printed it)"
[ -f "$BZIMAGE_DEFAULT" ] ||
	die "$BZIMAGE_DEFAULT missing; run: make kernel${KERNEL_FLAVOUR:+ KERNEL_FLAVOUR=$KERNEL_FLAVOUR}"

"$REPO/scripts/run-selftests.sh" --build-only
inst=$BUILD/kselftest
prog=$inst/blocked_samples/fuzz_blocked
[ -x "$prog" ] || die "$prog was not installed (is fuzz_blocked in TEST_GEN_PROGS_EXTENDED?)"

log "fuzzing for $secs s on the ${KERNEL_FLAVOUR:-default} kernel ($BZIMAGE_DEFAULT)"
# Boot plus teardown take up to a few minutes on the debug kernel under TCG.
exec "$REPO/scripts/run-vm.sh" --timeout $((secs + 600)) --rw "$inst" "${vmargs[@]}" -- \
	"cd '$inst/blocked_samples' && ./fuzz_blocked -t $secs -d /dev/vda ${seed:+-s $seed}"
