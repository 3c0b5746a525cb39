// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth test for bcoz: two threads serialised on a mutex around loop L
 * (4 units of work) with loop O (1 unit) outside the lock.  The lock is the
 * bottleneck: one round of both threads takes 2 L, so speeding L by s speeds
 * the program by s (until L shrinks to O at s = 75 %); speeding O changes
 * nothing.
 *
 *   lock [rounds] [o_iterations] [l_percent] [timer_slack_us] [o_percent]
 * o_iterations 0: as many as take 1.25 ms here (L then takes 5 ms).
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 * l_percent and o_percent (default 100) really shorten loop L or O, for
 * actual-speedup runs.
 * timer_slack_us: every sleep (and so every bcoz pause) of the program's
 * threads may end that much late (PR_SET_TIMERSLACK; real-time threads have none),
 * as on a busy or virtual machine; 0 keeps the default.
 * It prints the rounds done, the threads' wall time and o_iterations.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>

#include "coz.h"
#include "testprog.h"

/*
 * Each loop counts in a variable on its own thread's stack: two adjacent
 * globals share a cache line, and a loop would then run slower while the
 * other thread runs, so the loops' costs would depend on each other and the
 * ground truth below would not hold on an idle multi-core machine.
 */
static volatile unsigned long sink_l, sink_o;
static long o_iters = 2500000, rounds = 200, l_pct = 100, o_pct = 100;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static long rounds_done;

static void __attribute__((noinline)) loop_l(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_L */
	sink_l = acc;
}

static void __attribute__((noinline)) loop_o(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_O */
	sink_o = acc;
}

static void *worker(void *arg)
{
	for (long r = 0; rounds ? r < rounds : !stop_requested; r++) {
		pthread_mutex_lock(&mtx);
		loop_l(4 * o_iters * l_pct / 100);
		pthread_mutex_unlock(&mtx);
		loop_o(o_iters * o_pct / 100);
		COZ_PROGRESS; /* PROGRESS */
		__atomic_add_fetch(&rounds_done, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	double t0;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		o_iters = atol(argv[2]);
	if (argc > 3)
		l_pct = atol(argv[3]);
	if (argc > 5)
		o_pct = atol(argv[5]);
	if (argc > 4 && atol(argv[4]) && prctl(PR_SET_TIMERSLACK, atol(argv[4]) * 1000UL, 0, 0, 0))
		perror("lock: PR_SET_TIMERSLACK");
	if (o_iters <= 0)
		o_iters = iters_for_ms(loop_o, 1.25);
	catch_stop_signals();
	t0 = wall_ms();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("lock: %ld rounds done (both threads) wall_ms=%.1f o_iterations=%ld\n",
	       rounds_done, wall_ms() - t0, o_iters);
	return 0;
}
