// SPDX-License-Identifier: GPL-2.0
/*
 * Sleep-bound loop for bcoz's subclass test: each progress visit computes
 * for COMPUTE_MS and sleeps for SLEEP_MS.  Speeding the "other" off-CPU
 * subclass (--blocked-scope b) by 100 % should predict a program speedup
 * equal to the sleep's share of the time, which the program measures and
 * prints as sleep_share.
 *
 *   sleeper SECONDS COMPUTE_MS SLEEP_MS
 * SECONDS 0: until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "coz.h"
#include "../testprog.h"

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((noinline)) compute(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* COMPUTE */
	sink = acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, cms = argc > 2 ? atof(argv[2]) : 5;
	double sms = argc > 3 ? atof(argv[3]) : 5, t0, per, slept = 0, start;
	long n, rounds = 0;

	catch_stop_signals();
	t0 = now();
	compute(2000000);
	per = (now() - t0) / 2000000;
	n = (long)(cms / 1e3 / per);
	start = now();
	while (!stop_requested && (secs <= 0 || now() - start < secs)) {
		double s;

		compute(n);
		s = now();
		usleep((useconds_t)(sms * 1e3)); /* SLEEP */
		slept += now() - s;
		COZ_PROGRESS; /* PROGRESS */
		rounds++;
	}
	printf("sleeper: %ld rounds, sleep_share=%.3f\n", rounds, slept / (now() - start));
	return 0;
}
