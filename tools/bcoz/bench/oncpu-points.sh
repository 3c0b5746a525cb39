#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a blocked task-clock event's on-CPU points land in a two-thread
# lock hand-off, against where the time went (bench/oncpu-points.c; a
# benchmark, not a test), -r runs (default 2) of -t seconds (default 3).
# It runs in the VM (scripts/run-vm.sh, the nolockdep kernel as truth.sh
# --vm boots; VM_APPEND="idle=poll" keeps the guest's idle CPUs from
# halting), or here with -n on a kernel with blocked samples.
#
# usage: tools/bcoz/bench/oncpu-points.sh [-n] [-r RUNS] [-t SECONDS]
# Needs: gcc; for the VM, make kernel KERNEL_FLAVOUR=nolockdep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
native=0 runs=2 secs=3
while getopts nr:t:h o; do
	case $o in
	n) native=1 ;;
	r) runs=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) echo "oncpu-points.sh: -r $runs: want a run count >= 1" >&2; exit 2 ;; esac
out=$root/build/bench
mkdir -p "$out"
gcc -O1 -g -Wall -o "$out/oncpu-points" "$here/oncpu-points.c" -lpthread
cmd="for i in \$(seq $runs); do $out/oncpu-points $secs || exit 1; done"
if [ $native = 1 ]; then
	exec sh -c "$cmd"
fi
cd "$root"
export KERNEL_FLAVOUR=${KERNEL_FLAVOUR-nolockdep}
. scripts/lib.sh
[ -f "$BZIMAGE_DEFAULT" ] || { echo "oncpu-points.sh: no $BZIMAGE_DEFAULT; build it: make kernel KERNEL_FLAVOUR=$KERNEL_FLAVOUR" >&2; exit 1; }
exec scripts/run-vm.sh --timeout 600 -- "$cmd"
