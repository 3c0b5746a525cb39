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
 * The work is calibrated at start-up against the measured I/O time, so the
 * cases keep their meaning under KVM, TCG or on a fast host.
 *
 *   motiv PATH CASE SECONDS [ROUNDS]
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

static void *thread1(void *arg)
{
	double t0 = now();

	for (long it = 0;; it++) {
		compute_light(light_iters);
		do_io(it);
		if (stop_requested ||
		    (seconds > 0 ? now() - t0 > seconds : max_rounds && it + 1 >= max_rounds))
			stop = 1;
		pthread_barrier_wait(&bar);
		COZ_PROGRESS; /* PROGRESS */
		rounds++;
		pthread_barrier_wait(&bar);	/* both threads see the same stop */
		if (stop)
			break;
	}
	return arg;
}

static void *thread2(void *arg)
{
	for (;;) {
		int last;

		compute_heavy(heavy_iters);
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
	t0 = now();
	compute_light(2000000);
	per_iter = (now() - t0) / 2000000;
	light_iters = (long)(0.1 * io_s / per_iter);
	heavy_iters = (long)((cs == 1 ? 3.0 : 0.15) * 1.1 * io_s / per_iter);
	printf("motiv: case %d io %.3f ms/iter, light %ld, heavy %ld iterations\n", cs,
	       io_s * 1e3, light_iters, heavy_iters);
	pthread_barrier_init(&bar, NULL, 2);
	t0 = now();
	pthread_create(&a, NULL, thread1, NULL);
	pthread_create(&b, NULL, thread2, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("motiv: %ld rounds in %.2f s\n", rounds, now() - t0);
	close(fd);
	return 0;
}
