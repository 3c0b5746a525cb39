// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding of blocked samples (off-CPU samples of task-clock events opened
 * with attr.blocked = 1).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <linux/perf_event.h>

#include "blocked.h"
#include "debug.h"
#include "event.h"
#include "evsel.h"

/*
 * A blocked sample never stands for more sampling points than this; a
 * larger weight can only come from a damaged file (2^32 points of 1 ns
 * is already more than four seconds, of 1 ms about 50 days).
 */
#define BLOCKED_MAX_POINTS	(1ULL << 32)

static const char * const blocked_names[BLOCKED__NR] = {
	[BLOCKED_ONCPU]	= "on-cpu",
	[BLOCKED_IO]	= "io",
	[BLOCKED_LOCK]	= "lock",
	[BLOCKED_SCHED]	= "sched",
	[BLOCKED_OTHER]	= "other",
};

static const char blocked_levels[BLOCKED__NR] = {
	[BLOCKED_ONCPU]	= 0,
	[BLOCKED_IO]	= 'I',
	[BLOCKED_LOCK]	= 'L',
	[BLOCKED_SCHED]	= 'S',
	[BLOCKED_OTHER]	= 'B',
};

int blocked__class_from_misc(u16 misc)
{
	switch (misc & PERF_RECORD_MISC_BLOCKED_MASK) {
	case 0:
		return BLOCKED_ONCPU;
	case PERF_RECORD_MISC_BLOCKED_IO:
		return BLOCKED_IO;
	case PERF_RECORD_MISC_BLOCKED_LOCK:
		return BLOCKED_LOCK;
	case PERF_RECORD_MISC_BLOCKED_SCHED:
		return BLOCKED_SCHED;
	case PERF_RECORD_MISC_BLOCKED_OTHER:
		return BLOCKED_OTHER;
	default:
		return -1;
	}
}

const char *blocked__name(int cls)
{
	if (cls < 0 || cls >= BLOCKED__NR)
		return "invalid";
	return blocked_names[cls];
}

char blocked__level(int cls)
{
	if (cls < 0 || cls >= BLOCKED__NR)
		return '?';
	return blocked_levels[cls];
}

int blocked__class_from_name(const char *name)
{
	int i;

	for (i = 0; i < BLOCKED__NR; i++) {
		if (!strcmp(name, blocked_names[i]))
			return i;
	}
	return -1;
}

bool blocked__attr_can_block(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_SOFTWARE &&
	       attr->config == PERF_COUNT_SW_TASK_CLOCK &&
	       (attr->freq || attr->sample_period);
}

bool blocked__attr_is_blocked(const struct perf_event_attr *attr)
{
	return attr->blocked;
}

int blocked__parse_sample(struct evsel *evsel, union perf_event *event,
			  struct perf_sample *data)
{
	const struct perf_event_attr *attr = &evsel->core.attr;
	u64 points = 1;
	int cls;

	data->blocked = BLOCKED_ONCPU;
	data->points = 1;

	/* The subclass bits mean nothing on other events: ignore them. */
	if (!attr->blocked)
		return 0;

	cls = blocked__class_from_misc(event->header.misc);
	if (cls < 0) {
		pr_err("corrupt blocked sample: misc %#x has more than one subclass bit set (mask %#x)\n"
		       "The perf.data file is damaged; re-record it.\n",
		       event->header.misc, PERF_RECORD_MISC_BLOCKED_MASK);
		return -EFAULT;
	}

	if (attr->sample_type & PERF_SAMPLE_WEIGHT_TYPE) {
		points = data->weight;
	} else if ((attr->sample_type & PERF_SAMPLE_PERIOD) &&
		   !attr->freq && attr->sample_period) {
		points = data->period / attr->sample_period;
	}
	if (points == 0)
		points = 1;
	if (points > BLOCKED_MAX_POINTS) {
		pr_err("corrupt blocked sample: weight %" PRIu64 " sampling points is implausible (limit %llu)\n"
		       "The perf.data file is damaged; re-record it.\n",
		       points, BLOCKED_MAX_POINTS);
		return -EFAULT;
	}

	/*
	 * Without PERF_SAMPLE_PERIOD every sample would get the attr period:
	 * give a blocked sample the period of all the points it stands for,
	 * which is what the kernel reports when the period is recorded.
	 */
	if (!(attr->sample_type & PERF_SAMPLE_PERIOD) && !attr->freq)
		data->period = points * attr->sample_period;

	data->blocked = cls;
	data->points = points;
	return 0;
}
