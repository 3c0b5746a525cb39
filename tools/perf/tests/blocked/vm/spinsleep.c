// SPDX-License-Identifier: GPL-2.0
/*
 * Short runs and short sleeps, for onoff-split.sh: until RUN_MS of wall
 * time passed, spin SPIN_MS of this thread's CPU time, then nanosleep
 * SLEEP_MS.  Prints its wall time, its thread CPU time and the count of a
 * task-clock counter of its own (the on-CPU time between the two hooks of
 * the context switch that a sampling task-clock event sees), in ms:
 *
 *   spinsleep SPIN_MS SLEEP_MS RUN_MS
 *   wall <ms> cpu <ms> task-clock <ms> sleeps <n>
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "selfclock.h"

int main(int argc, char **argv)
{
	double spin, t0, c0, tc0;
	struct timespec ts;
	long n = 0;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: spinsleep SPIN_MS SLEEP_MS RUN_MS\n");
		return 2;
	}
	spin = atof(argv[1]);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(atof(argv[2]) * 1e6);
	fd = task_clock_open();
	tc0 = task_clock_ms(fd);
	if (tc0 < 0) {
		perror("spinsleep: task-clock counter");
		return 1;
	}
	t0 = now_ms(CLOCK_MONOTONIC);
	c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
	while (now_ms(CLOCK_MONOTONIC) - t0 < atof(argv[3])) {
		double end = now_ms(CLOCK_THREAD_CPUTIME_ID) + spin;

		while (now_ms(CLOCK_THREAD_CPUTIME_ID) < end)
			;
		nanosleep(&ts, NULL);
		n++;
	}
	printf("wall %.1f cpu %.1f task-clock %.1f sleeps %ld\n", now_ms(CLOCK_MONOTONIC) - t0,
	       now_ms(CLOCK_THREAD_CPUTIME_ID) - c0, task_clock_ms(fd) - tc0, n);
	return 0;
}
