/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test program's own clocks, shared by alternate.c and spinsleep.c:
 * CLOCK_MONOTONIC or the thread CPU clock in ms, and a counting task-clock
 * event on the calling thread.  That counter runs between the same two
 * hooks of the context switch as a sampling task-clock event, so it is the
 * on-CPU time whose points such an event should report.
 */
#ifndef SELFCLOCK_H
#define SELFCLOCK_H

#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The calling thread's task-clock counter; -1 if perf events are not allowed. */
static inline int task_clock_open(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* Its count in ms; -1 if @fd is not open or cannot be read. */
static inline double task_clock_ms(int fd)
{
	unsigned long long v;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v / 1e6;
}

#endif
