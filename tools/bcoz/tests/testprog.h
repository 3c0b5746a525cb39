/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by bcoz's test programs: stop on request, work sized by time.
 *
 * Tests size a causal run by its outcome, not by an amount of work: the
 * program runs until `bcoz run --experiments N` has its N experiments and
 * sends SIGTERM (timeout(1) and Ctrl-C end it the same way).  The program
 * finishes its current round and prints what it measured, the ground truth
 * the test compares the profile with.
 */
#ifndef BCOZ_TESTPROG_H
#define BCOZ_TESTPROG_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* TEST_DEFAULT_SIGTERM=1 leaves the default action, as in most programs */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	if (getenv("TEST_DEFAULT_SIGTERM"))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* CPU seconds of one call loop(n) */
static inline double loop_cpu_s(void (*loop)(long), long n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	loop(n);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
}

/*
 * Iterations of LOOP that take MS milliseconds of CPU time on this machine.
 * The grain of a test program's rounds decides how finely virtual speedup
 * can follow it (a pause, a wake-up and the 1 ms sampling period are fixed
 * costs), so rounds are sized in time: a fixed iteration count made 10 ms
 * rounds on one machine and 1 ms rounds on one four times faster.
 *
 * The fastest of five timings of at least 20 ms: a slow one is the
 * machine's, not the loop's.  In a QEMU TCG guest a program started by
 * bcoz run times its loop while bcoz's own start-up runs beside it; with
 * one timing, three such starts of the pipeline calibrated its unit at
 * 562,669, 639,687 and 242,073 iterations (and the worker-bound shape of
 * the last was not worker-bound), with the fastest of five at 655,403-
 * 658,114.  A slow spell longer than the five still gets through: three of
 * fifteen unprofiled starts in one boot read 258,080-259,522 against
 * 655,137-693,326 for the others.
 */
static inline long iters_for_ms(void (*loop)(long), double ms)
{
	long n = 100000;
	double s, best;

	while ((s = loop_cpu_s(loop, n)) < 0.02 && n <= (1L << 40))
		n *= 2;
	best = s;
	for (int i = 0; i < 4; i++) {
		s = loop_cpu_s(loop, n);
		if (s > 0 && s < best)
			best = s;
	}
	return (long)(n * ms / 1e3 / best) + 1;
}

/* CLOCK_MONOTONIC in ms: programs time their own runs (actual speedups) */
static inline double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
