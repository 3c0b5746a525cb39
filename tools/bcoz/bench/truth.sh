#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bcoz's predictions against actual speedups (a benchmark table, not a test;
# the host suite checks a few of these rows with tolerances).
#
# For each line of the ground-truth programs (tests/pipeline.c in three
# shapes, tests/forkjoin.c, tests/lock.c, tests/twin.c) it prints bcoz's program speedup at
# LEVEL % line speedup, the actual speedup of unprofiled runs in which that
# line's loop really is LEVEL % shorter, their difference and the
# prediction's bootstrap standard error (tests/truth.py explains the method).
#
# usage: tools/bcoz/bench/truth.sh [--vm] [--level N] [--experiments N] [--profiled] [CASE...]
#   --vm        run it in the VM (scripts/run-vm.sh), on the project's kernel
#               built without lockdep, as production kernels are and as make
#               bench runs (KERNEL_FLAVOUR=nolockdep; set KERNEL_FLAVOUR= for
#               the default, lockdep, kernel); in its throwaway guest the
#               kernel is kept from lowering perf_event_max_sample_rate
#               (truth.py --hold-sample-rate), as in the guest suite
#   --profiled  also the profiled actual: the same speedup on runs under
#               bcoz at 0 %, which splits an error into the model's and
#               the profiling's own (tests/truth.py)
#   CASE        substrings of "program MARKER" to run only some rows
# Environment: BCOZ_BUILD, BCOZ_TEST_SE (default 1.5 here, 2.5 in the suites), BCOZ_TEST_RT, and any
# BCOZ_* tuning knob (printed in the header), e.g. BCOZ_SPIN_PAUSES=1.
# Needs: make bcoz (make bcoz-truth builds and runs it on the host)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${BCOZ_BUILD:-$root/build/bcoz}
vm=0
if [ "${1:-}" = "--vm" ]; then
	vm=1
	shift
fi
case " $* " in
*" -h "*|*" --help "*) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[ -x "$build/bcoz" ] && [ -x "$build/tests/pipeline" ] ||
	{ echo "truth.sh: build first: make bcoz (or make -C tools/bcoz)" >&2; exit 1; }
if [ $vm = 1 ]; then
	vars="BCOZ_BUILD"
	for v in $(env | sed -n 's/^\(BCOZ_[A-Z_]*\)=.*/\1/p'); do
		vars="$vars $v"
	done
	cd "$root"
	export KERNEL_FLAVOUR=${KERNEL_FLAVOUR-nolockdep}
	. scripts/lib.sh
	[ -f "$BZIMAGE_DEFAULT" ] || { echo "truth.sh: no $BZIMAGE_DEFAULT; build it: make kernel KERNEL_FLAVOUR=$KERNEL_FLAVOUR" >&2; exit 1; }
	# run-vm.sh joins its command into one shell line: quote each CASE
	# (e.g. "lock LOOP_O") so that it stays one argument
	args=""
	[ $# -eq 0 ] || args=$(printf ' %q' "$@")
	BCOZ_BUILD=$build VM_ENV="$vars" exec scripts/run-vm.sh --timeout 3000 -- \
		"python3 tools/bcoz/tests/truth.py --hold-sample-rate$args"
fi
BCOZ_BUILD=$build exec python3 "$root/tools/bcoz/tests/truth.py" "$@"
