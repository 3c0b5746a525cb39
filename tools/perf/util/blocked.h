/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blocked samples: off-CPU samples of a task-clock event opened with
 * attr.blocked = 1.  The kernel stores the reason the task was off CPU in
 * perf_event_header.misc (one of PERF_RECORD_MISC_BLOCKED_*) and the number
 * of sampling points the record stands for in PERF_SAMPLE_WEIGHT.
 *
 * See Documentation/admin-guide/perf/blocked-samples-abi.txt.
 */
#ifndef __PERF_BLOCKED_H
#define __PERF_BLOCKED_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#ifndef PERF_RECORD_MISC_BLOCKED_OTHER
#define PERF_RECORD_MISC_BLOCKED_OTHER	(1 << 3)
#define PERF_RECORD_MISC_BLOCKED_IO	(1 << 4)
#define PERF_RECORD_MISC_BLOCKED_SCHED	(1 << 5)
#define PERF_RECORD_MISC_BLOCKED_LOCK	(1 << 6)
#define PERF_RECORD_MISC_BLOCKED_MASK	(0xf << 3)
#endif

struct evsel;
struct perf_event_attr;
struct perf_sample;
union perf_event;

/*
 * Subclass of a sample, stored in perf_sample::blocked, addr_location::blocked
 * and hist_entry::blocked.  0 means "on CPU" so that zero-initialised samples
 * of ordinary events keep their meaning.
 */
enum blocked_class {
	BLOCKED_ONCPU = 0,
	BLOCKED_IO,
	BLOCKED_LOCK,
	BLOCKED_SCHED,
	BLOCKED_OTHER,
	BLOCKED__NR,
};

/*
 * blocked__class_from_misc - decode the subclass bits of a sample's misc.
 * Returns a blocked_class, or -1 when more than one subclass bit is set
 * (the ABI allows exactly one), which means the record is corrupt.
 */
int blocked__class_from_misc(u16 misc);

/* "on-cpu", "io", "lock", "sched", "other" */
const char *blocked__name(int cls);

/* Level letter shown in the symbol column: 'I', 'L', 'S', 'B'; 0 for on-CPU. */
char blocked__level(int cls);

/* Parse a --sort/-F value name back to a class; -1 if unknown. */
int blocked__class_from_name(const char *name);

/* True when the attr describes an event that may carry blocked samples. */
bool blocked__attr_is_blocked(const struct perf_event_attr *attr);

/*
 * True when the attr may request blocked samples: a sampling
 * task-clock software event.
 */
bool blocked__attr_can_block(const struct perf_event_attr *attr);

/*
 * Called at the end of evsel__parse_sample() for PERF_RECORD_SAMPLE: fills
 * data->blocked and data->points.  Returns 0, or -EFAULT (after printing an
 * error naming the record) when the misc bits are invalid.
 */
int blocked__parse_sample(struct evsel *evsel, union perf_event *event,
			  struct perf_sample *data);

/* Number of sampling points a parsed sample stands for (>= 1). */
static inline u64 blocked__points(u64 points)
{
	return points ? points : 1;
}

#endif /* __PERF_BLOCKED_H */
