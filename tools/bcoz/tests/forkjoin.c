// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth program for bcoz: fork-join.  Each round the main thread
 * creates N workers (default: one per usable CPU), joins them, then merges
 * serially (loop M, 1 unit) and visits the progress point.  Worker 0 runs
 * loop BIG (3 units), the others loop SMALL (1 unit), so a round takes
 * M + BIG: speeding BIG by s speeds the program by 3s/4 (until BIG meets
 * SMALL at 67 %), speeding M by s gives s/4, speeding SMALL nothing.
 * Workers are new threads each round: bcoz's delays must pass through
 * pthread_create and pthread_join.
 *
 *   forkjoin [rounds] [unit_iterations] [big_pct] [small_pct] [merge_pct] [workers]
 * unit_iterations 0: as many as take 1.5 ms here.
 * big_pct, small_pct, merge_pct (default 100) really shorten a loop, for
 * actual-speedup runs.
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 * It prints the rounds done, the wall time and unit_iterations.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "coz.h"
#include "testprog.h"

#define MAX_WORKERS 64

static long unit = 1000000, rounds = 100;
static long big_pct = 100, small_pct = 100, merge_pct = 100;
static long rounds_done;

/* each loop counts on its own stack: see toy.c */
static void __attribute__((noinline)) loop_big(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_BIG */
}

static void __attribute__((noinline)) loop_small(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_SMALL */
}

static void __attribute__((noinline)) loop_merge(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_MERGE */
}

static void *work(void *arg)
{
	if (arg)
		loop_big(3 * unit * big_pct / 100);
	else
		loop_small(unit * small_pct / 100);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_WORKERS];
	cpu_set_t cpus;
	long n = 2;
	double t0;

	if (!sched_getaffinity(0, sizeof(cpus), &cpus))
		n = CPU_COUNT(&cpus);
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		unit = atol(argv[2]);
	if (argc > 3)
		big_pct = atol(argv[3]);
	if (argc > 4)
		small_pct = atol(argv[4]);
	if (argc > 5)
		merge_pct = atol(argv[5]);
	if (argc > 6)
		n = atol(argv[6]);
	if (n < 2 || n > MAX_WORKERS) {
		fprintf(stderr, "forkjoin: workers must be 2..%d, not %ld\n", MAX_WORKERS, n);
		return 2;
	}
	if (unit <= 0)
		unit = iters_for_ms(loop_small, 1.5);
	catch_stop_signals();
	t0 = wall_ms();
	for (long r = 0; rounds ? r < rounds : !stop_requested; r++) {
		for (long i = 0; i < n; i++)
			pthread_create(&t[i], NULL, work, i ? NULL : (void *)1);
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		loop_merge(unit * merge_pct / 100);
		COZ_PROGRESS; /* PROGRESS */
		rounds_done++;
	}
	printf("forkjoin: %ld rounds done (%ld workers) wall_ms=%.1f unit_iterations=%ld\n",
	       rounds_done, n, wall_ms() - t0, unit);
	return 0;
}
