// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of bcoz's libc wrappers on calls that do not wait: an
 * uncontended pthread_mutex_lock/unlock pair, write(2) of one byte to
 * /dev/null, pthread_cond_signal with no waiter.  Each is timed for
 * -t seconds (default 0.5) in one thread; prints "wrapcost: NAME ns=X".
 * bench/wrapcost.sh runs it natively and under `bcoz run` and prints
 * the difference: what each wrapped call costs a program that is
 * profiled.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int devnull;

static void op_mutex(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
}

static void op_write(void)
{
	if (write(devnull, "x", 1) != 1)
		abort();
}

static void op_signal(void)
{
	pthread_cond_signal(&c);
}

static void run(const char *name, void (*op)(void), double secs)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), n = 0, t;
	int i;

	do {
		for (i = 0; i < 1000; i++)
			op();
		n += 1000;
		t = now_ns();
	} while (t < end);
	printf("wrapcost: %s ns=%.1f\n", name, (double)(t - t0) / (double)n);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;

	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || secs <= 0) {
		fprintf(stderr, "usage: wrapcost [SECONDS]  (needs /dev/null)\n");
		return 2;
	}
	run("mutex_lock_unlock", op_mutex, secs);
	run("write_devnull", op_write, secs);
	run("cond_signal", op_signal, secs);
	return 0;
}
