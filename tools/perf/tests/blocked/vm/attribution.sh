# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Part of run-vm-tests.sh (sourced, after ../tap.sh): on-CPU time is charged
# to the code that spent it.
#
# tests/blocked/vm/alternate.c repeats, for ALT_MS (6000) ms of wall time,
# a phase of 512-byte O_DIRECT reads (ALT_IO_MS of wall time; its CPU time
# is the kernel's read path) and a phase of computing (ALT_CPU_MS of thread
# CPU time), each in a noinline function, and sums each phase's thread CPU
# time (CLOCK_THREAD_CPUTIME_ID, read by the program around every phase),
# and main's own CPU time outside the phases ("outside": setup, the clock
# reads between phases, the report).  Recorded with --call-graph dwarf, each
# on-CPU sample of al-main belongs to the innermost phase function on its
# stack, or to "outside" if there is none.  Asserted, per phase:
#
#   | on-CPU points x period - the phase's thread CPU time | <= ALT_TOL (2) %
#                                                      of the run's wall time
# (for compute and outside; for io against the phase's task-clock count,
# see below), and no sample lost.
#
# A sampling point that falls due while the task-clock hrtimer is held off
# (an interrupts-off section, a vCPU that did not run: common under TCG)
# must be charged to the code that ran then, not carried into the next
# on-CPU sample after the task runs again, which may be in the other phase.
# A kernel that carries them over moves points from phase to phase, and
# into main's code, when a vCPU stalls on the way out (a loaded host): seen
# as compute -285 ms, and +253 ms on glibc's tcache_init (outside), beyond
# the 120 ms allowed.
#
# The io phases are checked against the program's own counting task-clock
# event, read around every phase: it runs between the same two hooks of the
# context switch as the sampling event.  Their thread CPU time is printed
# beside it, not checked: it also holds the context switch and, for a task
# woken onto an idle CPU, the time from its wake-up to its pick
# (check_preempt_curr() skips the next runqueue clock update), which the
# task-clock and bperf count as off-CPU: 15-50 us per read under TCG (see
# "On-CPU time and the context switch" in
# Documentation/admin-guide/perf/blocked-samples.rst).  So is the time on
# the CPU by the sched_switch tracepoint (within the io spans alternate -p
# writes), which fires at the pick, before perf core's switch-out and
# switch-in.  Until the blocked event counted its on- and off-CPU points
# apart, the read phases' points fell 120-220 ms (7-13 %) short of the
# count in 12,000 reads: the waits caught more points of a single grid in
# wall time than their length.
#
# Uses from run-vm-tests.sh: BPERF, DEVICE, here, OUT; the cwd is scratch.
ALT_MS=${ALT_MS:-6000}
ALT_IO_MS=${ALT_IO_MS:-200}
ALT_CPU_MS=${ALT_CPU_MS:-100}
ALT_TOL=${ALT_TOL:-2}

# Trace al-main's context switches (tracefs, sched_switch) around the
# recording: alt_trace_start prints an error and fails if it cannot;
# alt_trace_stop PHASES prints how long al-main was on the CPU within the
# "io START END" spans of PHASES (ms, CLOCK_MONOTONIC), empty if the trace
# lost events or saw no switch.
ALT_TR=/sys/kernel/tracing
ALT_TR_SAVED=
alt_trace_start() {
	ALT_TR_SAVED=
	[ -e $ALT_TR/events/sched/sched_switch ] ||
		mount -t tracefs tracefs $ALT_TR 2>/dev/null ||
		{ echo "tracefs is not mounted and cannot be mounted on $ALT_TR" >&2; return 1; }
	# what the trace changes, restored by alt_trace_stop
	# buffer_size_kb reads "7 (expanded: 1408)" before the first resize
	ALT_TR_SAVED="$(cat $ALT_TR/tracing_on) $(awk '{ sub(/\)/, "", $3); print $2 == "(expanded:" ? $3 : $1 }' $ALT_TR/buffer_size_kb)"
	ALT_TR_SAVED+=" $(sed -n 's/.*\[\(.*\)\].*/\1/p' $ALT_TR/trace_clock)"
	ALT_TR_SAVED+=" $(cat $ALT_TR/events/sched/sched_switch/enable)"
	echo 0 >$ALT_TR/tracing_on
	echo 16384 >$ALT_TR/buffer_size_kb
	echo mono >$ALT_TR/trace_clock
	echo 'prev_comm == "al-main" || next_comm == "al-main"' \
		>$ALT_TR/events/sched/sched_switch/filter
	echo 1 >$ALT_TR/events/sched/sched_switch/enable
	: >$ALT_TR/trace
	echo 1 >$ALT_TR/tracing_on
}
alt_trace_stop() {
	local on kb clock enable

	[ -n "$ALT_TR_SAVED" ] || return 0
	read -r on kb clock enable <<<"$ALT_TR_SAVED"
	echo 0 >$ALT_TR/tracing_on
	echo "$enable" >$ALT_TR/events/sched/sched_switch/enable
	echo 0 >$ALT_TR/events/sched/sched_switch/filter
	# phases first (in time order), then the switches (in time order):
	# sweep the on-CPU intervals over the io spans
	awk '
	FNR == NR { if ($1 == "io") { ps[++np] = $2; pe[np] = $3 } next }
	/^# entries-in-buffer\/entries-written:/ { split($3, e, "/"); if (e[1] != e[2]) lost = 1 }
	/ sched_switch: / {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = substr($i, 1, length($i) - 1) * 1000
		if ($0 ~ /prev_comm=al-main / && tin) {
			n++
			while (k <= np && pe[k] <= tin) k++
			for (j = (k ? k : 1); j <= np && ps[j] < ts; j++) {
				a = tin > ps[j] ? tin : ps[j]; b = ts < pe[j] ? ts : pe[j]
				if (b > a) on += b - a
			}
			tin = 0
		}
		if ($0 ~ /next_comm=al-main /) tin = ts
	}
	END { if (!lost && n && np) printf "%.1f", on }' "$1" $ALT_TR/trace
	# (changing the clock or the size empties the buffer)
	echo "$clock" >$ALT_TR/trace_clock
	echo "$kb" >$ALT_TR/buffer_size_kb
	echo "$on" >$ALT_TR/tracing_on
}

attribution_test() {
	local rc period wall tol phase cpu tc pts got d lost name trace_on thr

	if ! gcc -O1 -g -o alternate "$here/alternate.c"; then
		bad "attribution: compile alternate.c"
		return
	fi
	# the sched_switch trace is a printed reference only: go on without it
	alt_trace_start 2>al-trace.err || diag "attribution: no sched_switch trace: $(cat al-trace.err)"
	rm -f al-phases.txt
	# throttling drops points: see rate_raise in run-vm-tests.sh
	rate_raise
	# A lost sample would take its points with it: a big buffer, and a
	# stack dump (2 KiB) deep enough for main -> phase_* -> pread.
	"$BPERF" record --call-graph dwarf,2048 -m 4096 -o al.data \
		./alternate -t "$ALT_MS" -i "$ALT_IO_MS" -c "$ALT_CPU_MS" -d "$DEVICE" \
		-p al-phases.txt >al.txt 2>al.err
	rc=$?
	rate_restore
	trace_on=$(alt_trace_stop al-phases.txt)
	if ! check "attribution: record alternate -t $ALT_MS (rc=$rc)" [ $rc -eq 0 ]; then
		diag <al.err
		return
	fi
	diag "alternate measured (ms):"
	diag <al.txt
	period=$("$BPERF" evlist -v -i al.data 2>/dev/null |
		sed -n 's/.*sample_period[^:]*: \([0-9]*\).*/\1/p' | head -1)
	wall=$(awk '$1 == "run" && $2 == "wall" { print $3 }' al.txt)
	if [ -z "$period" ] || [ -z "$wall" ]; then
		bad "attribution: sample_period (${period:-none}) and run wall time (${wall:-none}) known"
		return
	fi

	lost=$("$BPERF" report -i al.data --stats 2>/dev/null |
		awk '/LOST_SAMPLES events:/ { n += $3 } END { print n + 0 }')
	check "attribution: no sample lost in the recording ($lost lost; a lost sample takes its points with it)" \
		[ "$lost" -eq 0 ]
	thr=$("$BPERF" report -i al.data --stats 2>/dev/null |
		awk '/THROTTLE events:/ { n += $3 } END { print n + 0 }')
	diag "attribution: $thr throttle record(s) (a throttled tick drops its points); perf_event_max_sample_rate was $rate0 before the recording"

	# Folded stacks "al-main;main;phase_io;read_block;...;leaf N", N in
	# points; blocked ones end in a [class] or [class:wait] frame.  An
	# on-CPU stack counts for its innermost phase_* frame.
	"$BPERF" script -i al.data --folded 2>/dev/null | grep '^al-main;' >al-folded.txt
	cp al-folded.txt "$OUT/alternate-folded.txt" 2>/dev/null
	awk '{
		n = $NF; sub(/ [0-9]+$/, "")
		k = split($0, f, ";")
		if (f[k] ~ /^\[(io|lock|sched|other)(:[^]]*)?\]$/) { off += n; next }
		ph = "none"
		for (i = k; i > 1; i--)
			if (f[i] ~ /^phase_(io|compute)$/) { ph = substr(f[i], 7); break }
		on[ph] += n
	} END { printf "io %d\ncompute %d\noutside %d\noff %d\n", on["io"], on["compute"], on["none"], off }' \
		al-folded.txt >al-points.txt
	diag "on-CPU points of al-main by phase, period $period ns:" $(tr '\n' ' ' <al-points.txt)

	tol=$(awk -v w="$wall" -v t="$ALT_TOL" 'BEGIN { printf "%.1f", w * t / 100 }')
	# signed difference A - B in ms, "?" if B is unknown
	alt_diff() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "") print "?"; else printf "%+.1f", a - b }'; }
	for phase in compute outside io; do
		cpu=$(awk -v p=$phase '$1 == "phase" && $2 == p { print $4 }' al.txt)
		tc=$(awk -v p=$phase '$1 == "phase" && $2 == p {
			for (i = 3; i < NF; i++) if ($i == "task-clock") print $(i + 1) }' al.txt)
		pts=$(awk -v p=$phase '$1 == p { print $2 }' al-points.txt)
		got=$(awk -v n="${pts:-0}" -v p="$period" 'BEGIN { printf "%.1f", n * p / 1e6 }')
		if [ $phase = io ]; then
			ref="its task-clock count ${tc:-?} ms"
			d=$(alt_diff "$got" "$tc")
			diag "io, not checked (see the header): its thread CPU time ${cpu:-?} ms" \
				"($(alt_diff "$got" "$cpu") ms); on the CPU by sched_switch" \
				"${trace_on:-?} ms ($(alt_diff "$got" "$trace_on") ms)"
		else
			ref="its thread CPU time ${cpu:-?} ms"
			d=$(alt_diff "$got" "$cpu")
		fi
		name="attribution: $phase: on-CPU points x period $got ms vs $ref: $d ms, within $tol ms ($ALT_TOL % of the run's $wall ms)"
		check "$name" \
			awk -v d="$d" -v t="$tol" 'BEGIN { exit !(d != "?" && d <= t && -d <= t) }'
	done
}
