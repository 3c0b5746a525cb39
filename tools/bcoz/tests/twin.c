// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth program for bcoz: two threads run the same loop X side by
 * side, in chunks of 0.2 ms each followed by a lock and unlock of the
 * thread's own mutex (never contended: a hand-off wrapper that wakes
 * nobody), and meet at a barrier every 25 chunks.  X is all the work, so
 * speeding it by s speeds the program by about s.
 *
 * It is hard for a causal profiler in one way the other programs are not:
 * each thread's samples hit the selected line, and each is behind the
 * other half the time, so it pauses in the wrapper and then credits the
 * time since its last sample to the line (a hand-off).  That time must not
 * include the pause's own CPU time (a spinning pause), or the line earns
 * delay for bcoz's pauses and the prediction climbs.
 *
 *   twin [rounds] [x_iterations] [x_percent]
 * x_iterations 0: as many as take 0.2 ms here.
 * x_percent (default 100) really shortens loop X, for actual-speedup runs.
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 * It prints the rounds done, the wall time and x_iterations.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "coz.h"
#include "testprog.h"

#define CHUNKS 25

static long rounds = 200, x_iters, x_pct = 100;
static pthread_barrier_t bar;
static volatile int last_round;	/* thread 0 decides, both obey */
static long rounds_done;

/* each thread counts on its own stack: see toy.c */
static void __attribute__((noinline)) loop_x(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_X */
}

static void *worker(void *arg)
{
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
	long id = (long)arg;

	for (long r = 0;; r++) {
		int last;

		for (int i = 0; i < CHUNKS; i++) {
			loop_x(x_iters * x_pct / 100);
			pthread_mutex_lock(&own);
			pthread_mutex_unlock(&own);
		}
		if (id == 0)
			last_round = rounds ? r + 1 >= rounds : stop_requested;
		pthread_barrier_wait(&bar);
		/* read before the second barrier: after it, 0 may already
		 * have decided the next round */
		last = last_round;
		if (id == 0) {
			COZ_PROGRESS; /* PROGRESS */
			rounds_done++;
		}
		pthread_barrier_wait(&bar);
		if (last)
			break;
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
		x_iters = atol(argv[2]);
	if (argc > 3)
		x_pct = atol(argv[3]);
	if (x_iters <= 0)
		x_iters = iters_for_ms(loop_x, 0.2);
	catch_stop_signals();
	pthread_barrier_init(&bar, NULL, 2);
	t0 = wall_ms();
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("twin: %ld rounds done wall_ms=%.1f x_iterations=%ld\n",
	       rounds_done, wall_ms() - t0, x_iters);
	return 0;
}
