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
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	unsigned long long tc0, tc1;
	double spin, t0, c0;
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
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0 || read(fd, &tc0, sizeof(tc0)) != sizeof(tc0)) {
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
	if (read(fd, &tc1, sizeof(tc1)) != sizeof(tc1))
		return 1;
	printf("wall %.1f cpu %.1f task-clock %.1f sleeps %ld\n", now_ms(CLOCK_MONOTONIC) - t0,
	       now_ms(CLOCK_THREAD_CPUTIME_ID) - c0, (tc1 - tc0) / 1e6, n);
	return 0;
}
