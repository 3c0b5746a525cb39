// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-oversubscribed loop for bcoz's scheduling-subclass test: one more
 * thread than CPUs, each computing COMPUTE_MS per round, all meeting at a
 * barrier; thread 0 counts the progress.  Every thread is runnable but
 * waiting for a CPU for part of each round ([S] blocked samples), so
 * speeding the scheduling subclass (--blocked-scope s) by 100 % should
 * predict the program speedup of never waiting for a CPU: the share of the
 * round the threads spend runnable, which the program measures (wall time
 * minus the threads' mean CPU time, over wall time) and prints as
 * sched_share.
 *
 *   oversub SECONDS COMPUTE_MS [THREADS]   (THREADS defaults to CPUs + 1)
 * SECONDS 0: until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "coz.h"
#include "../testprog.h"

static volatile unsigned long sink;
static pthread_barrier_t bar;
static volatile int stop;
static long iters;
static double cpu_sum;
static pthread_mutex_t cpu_mtx = PTHREAD_MUTEX_INITIALIZER;

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((noinline)) compute(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* COMPUTE */
	sink = acc;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);

	for (;;) {
		compute(iters);
		pthread_barrier_wait(&bar);
		if (id == 0)
			COZ_PROGRESS; /* PROGRESS */
		/* everybody sees the same stop decision */
		pthread_barrier_wait(&bar);
		if (stop)
			break;
	}
	pthread_mutex_lock(&cpu_mtx);
	cpu_sum += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	pthread_mutex_unlock(&cpu_mtx);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	double cms = argc > 2 ? atof(argv[2]) : 20;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long n = argc > 3 ? atol(argv[3]) : cpus + 1, i;
	double t0, wall;
	pthread_t *t;

	if (n < 1 || n > 64 || secs < 0 || cms <= 0) {
		fprintf(stderr, "usage: oversub SECONDS COMPUTE_MS [THREADS 1-64]\n");
		return 2;
	}
	catch_stop_signals();
	t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	compute(2000000);
	iters = (long)(cms / 1e3 / ((clock_s(CLOCK_THREAD_CPUTIME_ID) - t0) / 2000000));
	t = calloc(n, sizeof(*t));
	pthread_barrier_init(&bar, NULL, n + 1);
	t0 = clock_s(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	/* main decides when to stop, at a round boundary */
	for (;;) {
		pthread_barrier_wait(&bar);
		stop = stop_requested || (secs > 0 && clock_s(CLOCK_MONOTONIC) - t0 >= secs);
		pthread_barrier_wait(&bar);
		if (stop)
			break;
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	wall = clock_s(CLOCK_MONOTONIC) - t0;
	printf("oversub: %ld threads on %ld CPUs, sched_share=%.3f\n", n, cpus,
	       1 - cpu_sum / n / wall);
	free(t);
	return 0;
}
