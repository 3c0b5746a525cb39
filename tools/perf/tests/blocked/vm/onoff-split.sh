#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not a test: how a blocked task-clock event splits a task's time between
# on-CPU and off-CPU points when the task alternates short runs and short
# sleeps (issue 10, item 3; "Why on- and off-CPU points are counted apart"
# in Documentation/admin-guide/perf/blocked-samples.rst, which has its
# numbers before and after that change; the selftest onoff_split.c asserts
# the split).  In the VM:
#
#   scripts/run-vm.sh -- tools/perf/tests/blocked/vm/onoff-split.sh
#
# spinsleep.c spins SPIN_MS (0.1) of CPU time and sleeps SLEEP_MS (0.05),
# for RUN_MS (3000), ROUNDS (3) times per mode, recorded by bperf record
# --per-thread with blocked samples (MODES: blocked, with dwarf stacks;
# blocked-nocg, without a call graph) and without (sampling).  Per run it
# prints the program's own task-clock count (the on-CPU time the event
# sees between its two hooks), the on-CPU points x period bperf reports for
# it, and their difference in ms and per sleep; for the blocked modes, the
# off-CPU points against the wall time the task-clock count leaves off the
# CPU.  bperf's points include the program's start-up (exec, dynamic
# loading: 20-60 ms under TCG), which its counter does not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export HOME=$T	# perf's build-id cache: the guest's root is read-only
[ -x "$BPERF" ] || { echo "onoff-split: no bperf at $BPERF; build it with 'make bperf'" >&2; exit 1; }
gcc -O1 -o spinsleep "$here/spinsleep.c" || { echo "onoff-split: cannot compile spinsleep.c" >&2; exit 1; }
args=("${SPIN_MS:-0.1}" "${SLEEP_MS:-0.05}" "${RUN_MS:-3000}")
echo "# kernel $(uname -r); spinsleep ${args[*]}"
printf '%-13s %9s %9s %9s %8s %9s %9s\n' mode task-clock on-pts on-diff us/sleep off-pts off-time
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
	for mode in ${MODES:-blocked blocked-nocg sampling}; do
		case $mode in
		blocked) x=(--call-graph dwarf) ;;
		blocked-nocg) x=(--no-call-graph) ;;
		sampling) x=(--no-blocked --no-call-graph) ;;
		*) echo "onoff-split: unknown mode $mode" >&2; exit 2 ;;
		esac
		"$BPERF" record -q --per-thread "${x[@]}" -o s.data ./spinsleep "${args[@]}" >s.out 2>s.err ||
			{ echo "onoff-split: bperf record failed:"; cat s.err; exit 1; } >&2
		# points by class, in ms (period x samples, --sort blocked)
		"$BPERF" report -i s.data --stdio --comm spinsleep --sort blocked -F overhead,sample,period,blocked \
			2>/dev/null | awk -v mode=$mode '
			FNR == NR { for (i = 1; i < NF; i++) if ($i == "task-clock") tc = $(i + 1)
				    else if ($i == "wall") wall = $(i + 1); else if ($i == "sleeps") n = $(i + 1)
				    next }
			/^ *[0-9.]+%/ { ms = $3 / 1e6; if ($4 == "on-cpu") on += ms; else off += ms }
			END { printf "%-13s %9.1f %9.1f %+9.1f %+8.1f %9.1f %9.1f\n", mode, tc, on, on - tc,
				     n ? (on - tc) * 1000 / n : 0, off, wall - tc }' s.out -
	done
done
