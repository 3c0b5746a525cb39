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

/*
 * Iterations of LOOP that take MS milliseconds of CPU time on this machine.
 * The grain of a test program's rounds decides how finely virtual speedup
 * can follow it (a pause, a wake-up and the 1 ms sampling period are fixed
 * costs), so rounds are sized in time: a fixed iteration count made 10 ms
 * rounds on one machine and 1 ms rounds on one four times faster.
 */
static inline long iters_for_ms(void (*loop)(long), double ms)
{
	struct timespec a, b;
	long n = 100000;
	double s;

	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		loop(n);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		if (s >= 0.02 || n > (1L << 40))
			break;
		n *= 2;
	}
	return (long)(n * ms / 1e3 / s) + 1;
}

/* CLOCK_MONOTONIC in ms: programs time their own runs (actual speedups) */
static inline double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
