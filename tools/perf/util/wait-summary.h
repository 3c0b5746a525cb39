/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-thread wait summary: each thread's sampling points (on and off CPU,
 * so its sampled time) by kind of wait (wait_reason__kind():
 * on-cpu, idle, contended, io, runnable, other), its largest wait reasons,
 * and a verdict, the kind with the largest share.  It tells a thread
 * pool's idle workers (waiting for work most of their life) from threads
 * that wait on contended locks.  perf report --wait-summary prints it.
 */
#ifndef __PERF_WAIT_SUMMARY_H
#define __PERF_WAIT_SUMMARY_H

#include <linux/types.h>
#include <stdio.h>
#include <sys/types.h>

#include "wait-reason.h"

struct addr_location;
struct evsel;
struct perf_sample;
struct thread;
struct wait_summary;

#define WAIT_SUMMARY_TOP	3	/* reasons shown per thread */

struct wait_reason_points {
	const char	*reason;	/* must live as long as the summary */
	u64		points;
};

struct wait_thread_summary {
	struct thread	*thread;
	u64		total;
	u64		kind[WAIT_KIND__NR];
	struct wait_reason_points *reasons;	/* blocked reasons only */
	size_t		nr_reasons;
};

struct wait_summary *wait_summary__new(void);
void wait_summary__delete(struct wait_summary *ws);

/* Count points of a thread's time under reason (on-cpu included). */
int wait_summary__add(struct wait_summary *ws, struct thread *thread,
		      const char *reason, u64 points);

/* Classify a resolved sample (wait_reason__classify) and add it. */
int wait_summary__add_sample(struct wait_summary *ws, struct addr_location *al,
			     struct evsel *evsel, struct perf_sample *sample);

/* The summary of thread tid, NULL if it has no samples. */
const struct wait_thread_summary *wait_summary__find(struct wait_summary *ws,
						     pid_t tid);

/* The kind with most points; a tie goes to the earlier kind of the enum. */
enum wait_kind wait_thread_summary__verdict(const struct wait_thread_summary *t);

/*
 * The reasons with most points, at most nr of them, largest first (ties
 * by name); returns how many were written to top.
 */
size_t wait_thread_summary__top(const struct wait_thread_summary *t,
				struct wait_reason_points *top, size_t nr);

/* The table, one line a thread, most points first. */
int wait_summary__fprintf(struct wait_summary *ws, FILE *fp);

#endif /* __PERF_WAIT_SUMMARY_H */
