// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth test for bcoz: per progress visit two threads run loop A and
 * loop B in parallel and meet at a barrier.  A does three times B's work, so
 * speeding A by s speeds the program by s up to 67 % and not at all beyond;
 * speeding B changes nothing.  The knee sits away from the levels the tests
 * check (25, 50, 75 %): near it either thread may be the critical one in a
 * round, and the program's speedup then falls below both lines.
 *
 * On a shared or virtual machine the two threads may not run at the same
 * speed, so the program also reports the CPU time each loop really took
 * (cpu_a_ms, cpu_b_ms); the tests derive the expected curve from these.
 *
 *   toy [rounds] [b_iterations] [a_percent]
 * b_iterations 0: as many as take 5 ms here (A then takes 15 ms).
 * a_percent (default 100) really shortens loop A, for actual-speedup runs.
 * It prints the rounds done, each loop's CPU time, the threads' wall time
 * and b_iterations (so actual-speedup runs can repeat the calibration).
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "coz.h"
#include "testprog.h"

/*
 * Each loop counts in a variable on its own thread's stack: two adjacent
 * globals share a cache line, and a loop would then run slower while the
 * other thread runs, so the loops' costs would depend on each other and the
 * ground truth below would not hold on an idle multi-core machine.
 */
static volatile unsigned long sink_a, sink_b;
static long b_iters = 10000000, rounds = 100, a_pct = 100;
static pthread_barrier_t bar;
static double cpu_a, cpu_b;
static volatile int last_round;	/* thread A decides, both threads obey */
static long rounds_done;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void __attribute__((noinline)) loop_a(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_A */
	sink_a = acc;
}

static void __attribute__((noinline)) loop_b(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_B */
	sink_b = acc;
}

static void *thread_a(void *arg)
{
	for (long r = 0;; r++) {
		double t0 = cpu_now();

		loop_a(3 * b_iters * a_pct / 100);
		cpu_a += cpu_now() - t0;
		last_round = rounds ? r + 1 >= rounds : stop_requested;
		pthread_barrier_wait(&bar);
		COZ_PROGRESS; /* PROGRESS */
		rounds_done++;
		pthread_barrier_wait(&bar);	/* B has read last_round */
		if (last_round)
			break;
	}
	return arg;
}

static void *thread_b(void *arg)
{
	for (;;) {
		double t0 = cpu_now();
		int last;

		loop_b(b_iters);
		cpu_b += cpu_now() - t0;
		pthread_barrier_wait(&bar);
		last = last_round;	/* set before the first barrier, stable until the second */
		pthread_barrier_wait(&bar);
		if (last)
			break;
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	double t0;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		b_iters = atol(argv[2]);
	if (argc > 3)
		a_pct = atol(argv[3]);
	if (b_iters <= 0)
		b_iters = iters_for_ms(loop_b, 5);
	catch_stop_signals();
	pthread_barrier_init(&bar, NULL, 2);
	t0 = wall_ms();
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("toy: %ld rounds done cpu_a_ms=%.1f cpu_b_ms=%.1f wall_ms=%.1f b_iterations=%ld\n",
	       rounds_done, cpu_a, cpu_b, wall_ms() - t0, b_iters);
	return 0;
}
