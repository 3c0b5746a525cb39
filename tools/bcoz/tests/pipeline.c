// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth program for bcoz: a two-stage pipeline.  A reader thread
 * makes items (loop R) and puts them in a bounded queue of 4; a worker
 * thread takes them, processes each (loop W) and visits the progress point.
 * With costs R and W per item the program makes one item per max(R, W), so
 * speeding the slower stage by s speeds the program by s until it meets the
 * other stage, and speeding the faster stage changes nothing.
 *
 *   pipeline [rounds] [unit_iterations] [mode] [r_percent] [w_percent] [r_kind]
 * mode: "reader" (R = 3 units, W = 1: the reader is the bottleneck),
 *       "worker" (R = 1, W = 3) or "balanced" (R = W = 2); a unit takes
 *       1.5 ms here when unit_iterations is 0.
 * r_percent, w_percent (default 100) really shorten stage R or W, for
 * actual-speedup runs.
 * r_kind: "cpu" (default: the reader computes, loop R) or "sleep" (it
 *       waits off the CPU instead, a nanosleep of R units of 1.5 ms, line
 *       SLEEP_R: the reader of a device or a remote service).  Only
 *       blocked samples see that line's time.
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 * It prints the items done, the wall time and unit_iterations (so
 * actual-speedup runs can repeat the calibration), and per item: each
 * stage's own time (r_ms, w_ms), the worker's wait in get() (g_ms), its
 * thread's CPU time (w_cpu_ms), the part of it in loop W (w_loop_cpu_ms)
 * and how often the worker was found on another CPU than at its previous
 * look (w_mig: before get(), before and after the loop), for bench/split.py.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coz.h"
#include "testprog.h"

#define QLEN 4

static volatile unsigned long sink_r, sink_w;
static long unit = 1000000, rounds = 100, r_units = 3, w_units = 1;
static long r_pct = 100, w_pct = 100, r_sleep;
static long queue[QLEN], q_head, q_len;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_nonfull = PTHREAD_COND_INITIALIZER;
static long rounds_done;
static double r_ms, w_ms, g_ms, w_cpu_ms, w_loop_cpu_ms;
static long w_mig;
static long r_items;	/* each stage's own time, for the printout */

/* each loop counts on its own stack: see toy.c */
static void __attribute__((noinline)) loop_r(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_R */
	sink_r = acc;
}

static void __attribute__((noinline)) sleep_r(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL); /* SLEEP_R */
}

static void __attribute__((noinline)) loop_w(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* LOOP_W */
	sink_w = acc;
}

static void put(long item)
{
	pthread_mutex_lock(&q_lock);
	while (q_len == QLEN)
		pthread_cond_wait(&q_nonfull, &q_lock);
	queue[(q_head + q_len++) % QLEN] = item;
	pthread_cond_signal(&q_nonempty);
	pthread_mutex_unlock(&q_lock);
}

static long get(void)
{
	long item;

	pthread_mutex_lock(&q_lock);
	while (!q_len)
		pthread_cond_wait(&q_nonempty, &q_lock);
	item = queue[q_head];
	q_head = (q_head + 1) % QLEN;
	q_len--;
	pthread_cond_signal(&q_nonfull);
	pthread_mutex_unlock(&q_lock);
	return item;
}

static void *reader(void *arg)
{
	for (long r = 0; rounds ? r < rounds : !stop_requested; r++) {
		double t = wall_ms();

		if (r_sleep)
			sleep_r(r_units * 1500000L * r_pct / 100);
		else
			loop_r(r_units * unit * r_pct / 100);
		r_ms += wall_ms() - t;
		r_items++;
		put(r);
	}
	put(-1);
	return arg;
}

static double thread_cpu_ms(void)
{
	struct timespec cpu;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu))
		return 0;
	return cpu.tv_sec * 1e3 + cpu.tv_nsec / 1e6;
}

/* count a change of CPU since the previous look */
static void look_cpu(int *prev)
{
	int c = sched_getcpu();

	if (*prev >= 0 && c != *prev)
		w_mig++;
	*prev = c;
}

static void *worker(void *arg)
{
	int cpu = -1;

	for (;;) {
		double t = wall_ms(), c;
		long item;

		look_cpu(&cpu);
		item = get();
		g_ms += wall_ms() - t;
		if (item < 0)
			break;
		look_cpu(&cpu);
		t = wall_ms();
		c = thread_cpu_ms();

		loop_w(w_units * unit * w_pct / 100);
		w_loop_cpu_ms += thread_cpu_ms() - c;
		w_ms += wall_ms() - t;
		look_cpu(&cpu);
		COZ_PROGRESS; /* PROGRESS */
		rounds_done++;
	}
	w_cpu_ms = thread_cpu_ms();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "reader";
	pthread_t r, w;
	double t0;
	long items;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		unit = atol(argv[2]);
	if (argc > 4)
		r_pct = atol(argv[4]);
	if (argc > 5)
		w_pct = atol(argv[5]);
	if (argc > 6 && strcmp(argv[6], "cpu")) {
		if (strcmp(argv[6], "sleep")) {
			fprintf(stderr, "pipeline: r_kind '%s' is not cpu or sleep\n", argv[6]);
			return 2;
		}
		r_sleep = 1;
	}
	if (!strcmp(mode, "reader")) {
		r_units = 3, w_units = 1;
	} else if (!strcmp(mode, "worker")) {
		r_units = 1, w_units = 3;
	} else if (!strcmp(mode, "balanced")) {
		r_units = 2, w_units = 2;
	} else {
		fprintf(stderr, "pipeline: mode '%s' is not reader, worker or balanced\n", mode);
		return 2;
	}
	if (unit <= 0)
		unit = iters_for_ms(loop_w, 1.5);
	catch_stop_signals();
	t0 = wall_ms();
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, worker, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	items = rounds_done ? rounds_done : 1;
	printf("pipeline %s%s: %ld rounds done wall_ms=%.1f unit_iterations=%ld "
	       "r_ms=%.3f w_ms=%.3f g_ms=%.3f w_cpu_ms=%.3f w_loop_cpu_ms=%.3f "
	       "w_mig=%.3f\n", mode,
	       r_sleep ? " (sleeping reader)" : "", rounds_done, wall_ms() - t0, unit,
	       r_ms / (r_items ? r_items : 1), w_ms / items, g_ms / items, w_cpu_ms / items,
	       w_loop_cpu_ms / items, (double)w_mig / items);
	return 0;
}
