// SPDX-License-Identifier: GPL-2.0
/*
 * The paper's motivational example (Figure 1) for bcoz.
 *
 * Two threads meet at a barrier once per iteration (one progress visit):
 *   thread 1: compute_light, one 4 KiB pwrite and eight 512 B preads with
 *             O_DIRECT on PATH (a scratch file or block device);
 *   thread 2: compute_heavy.
 * case 1: compute_heavy takes ~3x thread 1's time  -> thread 2 is critical;
 * case 2: compute_heavy takes ~0.15x thread 1's time -> thread 1 (I/O) is
 *         critical, with room to spare: pausing thread 2 for a virtual
 *         speedup (and its wake-up latency under TCG) must not make it critical.
 * The work is calibrated against the measured I/O time, at start-up and
 * then in a warm-up of both threads (see warm_round), so the cases keep
 * their meaning under KVM, TCG or on a fast host; each thread times its own
 * work, and the run ends by printing both per round (thread 2 over thread 1:
 * about 3 in case 1, 0.15 in case 2), the check that the case held.
 *
 *   motiv PATH CASE SECONDS [ROUNDS]
 * MOTIV_ITERS=LIGHT,HEAVY skips the warm-up and runs with those loop counts
 * (what a first run printed): the runs appended to one profile are then of
 * one program, not of three calibrations.
 * SECONDS 0 means: run exactly ROUNDS iterations (fixed work, for benchmarks),
 * or without ROUNDS until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 * The signal ends any run at the next round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coz.h"
#include "../testprog.h"

#define NREADS		8
#define SPAN		(4 << 20)	/* offsets used within the first 4 MiB */

static int fd;
static char *wbuf, *rbuf;
/*
 * Each loop counts in a variable on its own thread's stack: two adjacent
 * globals share a cache line, and a loop would then run slower while the
 * other thread runs, so the loops' costs would depend on each other and the
 * ground truth below would not hold on an idle multi-core machine.
 */
static volatile unsigned long sink_l, sink_h;
static long light_iters, heavy_iters;
static pthread_barrier_t bar;
static volatile int stop;
static double seconds;
static long rounds, max_rounds;
static double t1_busy, t2_busy;	/* seconds in each thread's own work */
static double run_start;		/* after the warm-up */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((noinline)) compute_light(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LIGHT */
	sink_l = acc;
}

static void __attribute__((noinline)) compute_heavy(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* HEAVY */
	sink_h = acc;
}

static void __attribute__((noinline)) do_io(long it)
{
	off_t w = (off_t)((it * 7919) % (SPAN / 4096)) * 4096;

	if (pwrite(fd, wbuf, 4096, w) != 4096) { /* PWRITE */
		perror("motiv: pwrite");
		exit(1);
	}
	for (int k = 0; k < NREADS; k++) {
		off_t r = (off_t)(((it * NREADS + k) * 104729) % (SPAN / 512)) * 512;

		if (pread(fd, rbuf, 512, r) != 512) { /* PREAD */
			perror("motiv: pread");
			exit(1);
		}
	}
}

/*
 * Warm-up: the threads' first rounds (at least WARM_MIN of them and
 * WARM_S seconds) visit no progress point; each thread records its own work
 * per round, and at the end thread 2's work is rescaled so that the median
 * round holds the case's ratio.  The start-up calibration alone is not
 * enough under TCG: the guest has phases of a few hundred ms at half speed,
 * and one during the calibration made case 1 balanced (thread 2 no longer
 * critical) in half the runs.  A causal profiler starts its experiments
 * at the first progress point, so the warm-up is not in them.
 */
#define WARM_MIN	20
#define WARM_MAX	1000
#define WARM_S		0.3

static double warm1[WARM_MAX], warm2[WARM_MAX], target;
static int warm = 1, nwarm;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* thread 1, between the barriers (thread 2 waits): end the warm-up? */
static void warm_round(double started)
{
	double m1, m2;

	if (++nwarm < WARM_MAX && (nwarm < WARM_MIN || now() - started < WARM_S))
		return;
	m1 = median(warm1, nwarm);
	m2 = median(warm2, nwarm);
	if (m1 > 0 && m2 > 0)
		heavy_iters = (long)(heavy_iters * target * m1 / m2) + 1;
	printf("motiv: warm-up %d rounds: thread 1 %.3f ms, thread 2 %.3f ms (ratio %.2f, "
	       "want %.2f): heavy %ld iterations\n", nwarm, m1 * 1e3, m2 * 1e3, m2 / m1,
	       target, heavy_iters);
	warm = 0;
}

static void *thread1(void *arg)
{
	double tw = now();	/* the warm-up's start; run_start, the run's */

	for (long it = 0;; it++) {
		double b = now(), d;

		compute_light(light_iters);
		do_io(it);
		d = now() - b;
		if (warm)
			warm1[nwarm] = d;
		else
			t1_busy += d;
		if (stop_requested || (!warm && (seconds > 0 ? now() - run_start > seconds :
						 max_rounds && rounds + 1 >= max_rounds)))
			stop = 1;
		pthread_barrier_wait(&bar);
		if (warm) {
			warm_round(tw);
			if (!warm)
				run_start = now();
		} else {
			COZ_PROGRESS; /* PROGRESS */
			rounds++;
		}
		pthread_barrier_wait(&bar);	/* both threads see the same stop */
		if (stop)
			break;
	}
	return arg;
}

static void *thread2(void *arg)
{
	for (;;) {
		double b = now(), d;
		int last;

		compute_heavy(heavy_iters);
		d = now() - b;
		if (warm)
			warm2[nwarm] = d;
		else
			t2_busy += d;
		pthread_barrier_wait(&bar);
		last = stop;	/* set before the first barrier, stable until the second */
		pthread_barrier_wait(&bar);
		if (last)
			break;
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	double t0, io_s, per_iter;
	int cs;

	if (argc < 4) {
		fprintf(stderr, "usage: motiv PATH CASE(1|2) SECONDS [ROUNDS]\n");
		return 2;
	}
	cs = atoi(argv[2]);
	seconds = atof(argv[3]);
	max_rounds = argc > 4 ? atol(argv[4]) : 0;
	catch_stop_signals();
	fd = open(argv[1], O_RDWR | O_CREAT | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL) {
		fprintf(stderr, "motiv: O_DIRECT not supported on %s, using O_DSYNC\n", argv[1]);
		fd = open(argv[1], O_RDWR | O_CREAT | O_DSYNC, 0600);
	}
	if (fd < 0) {
		fprintf(stderr, "motiv: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (posix_memalign((void **)&wbuf, 4096, 4096) || posix_memalign((void **)&rbuf, 4096, 4096))
		return 1;
	memset(wbuf, 0xab, 4096);
	/* make the span readable (a fresh scratch file is empty) */
	for (off_t o = 0; o < SPAN; o += 4096)
		if (pwrite(fd, wbuf, 4096, o) != 4096) {
			perror("motiv: initial pwrite");
			return 1;
		}
	/* calibrate: I/O time per iteration and compute time per loop iteration */
	t0 = now();
	for (int i = 0; i < 20; i++)
		do_io(i);
	io_s = (now() - t0) / 20;
	/* the fastest of a few timings: the first call is the slowest under TCG */
	per_iter = 1;
	for (int i = 0; i < 8; i++) {
		t0 = now();
		compute_light(500000);
		t0 = (now() - t0) / 500000;
		if (t0 < per_iter)
			per_iter = t0;
	}
	light_iters = (long)(0.1 * io_s / per_iter);
	target = cs == 1 ? 3.0 : 0.15;
	heavy_iters = (long)(target * 1.1 * io_s / per_iter);
	/* the same program again: another run of one profile */
	if (getenv("MOTIV_ITERS") &&
	    sscanf(getenv("MOTIV_ITERS"), "%ld,%ld", &light_iters, &heavy_iters) == 2)
		warm = 0;
	printf("motiv: case %d io %.3f ms/iter, light %ld, heavy %ld iterations%s\n", cs,
	       io_s * 1e3, light_iters, heavy_iters, warm ? "" : " (MOTIV_ITERS)");
	run_start = now();
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&a, NULL, thread1, NULL);
	pthread_create(&b, NULL, thread2, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("motiv: %ld rounds in %.2f s; per round: thread 1 (light+io) %.3f ms, "
	       "thread 2 (heavy) %.3f ms\n", rounds, now() - run_start,
	       rounds ? t1_busy * 1e3 / rounds : 0, rounds ? t2_busy * 1e3 / rounds : 0);
	close(fd);
	return 0;
}
