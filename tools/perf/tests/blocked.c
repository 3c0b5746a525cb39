// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding of blocked samples: the subclass bits in header.misc and the
 * sampling points in the weight, on hand-made PERF_RECORD_SAMPLE records.
 * No kernel support is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include "util/blocked.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evsel.h"
#include "tests.h"

#define PERIOD_NS	1000000ULL

struct fake_record {
	struct perf_event_header header;
	u64 array[8];
};

static struct evsel *new_task_clock(u64 sample_type, bool blocked)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_TASK_CLOCK,
		.size		= sizeof(attr),
		.sample_period	= PERIOD_NS,
		.sample_type	= sample_type,
		.sample_id_all	= 1,
	};

	attr.blocked = blocked;
	return evsel__new(&attr);
}

/* Lay out IP|TID|TIME[|PERIOD][|WEIGHT] like the kernel does. */
static void make_record(struct fake_record *rec, u64 sample_type, u16 misc,
			u64 period, u64 weight)
{
	int n = 0;

	memset(rec, 0, sizeof(*rec));
	rec->array[n++] = 0x401000;			/* IP */
	rec->array[n++] = (42ULL << 32) | 42;		/* TID */
	rec->array[n++] = 123456789;			/* TIME */
	if (sample_type & PERF_SAMPLE_PERIOD)
		rec->array[n++] = period;
	if (sample_type & PERF_SAMPLE_WEIGHT)
		rec->array[n++] = weight;
	rec->header.type = PERF_RECORD_SAMPLE;
	rec->header.misc = misc;
	rec->header.size = sizeof(rec->header) + n * sizeof(u64);
}

static int parse(struct evsel *evsel, struct fake_record *rec,
		 struct perf_sample *sample)
{
	int save = verbose, err;

	verbose = -1;	/* corrupt records are expected: keep quiet */
	err = evsel__parse_sample(evsel, (union perf_event *)rec, sample);
	verbose = save;
	return err;
}

static const struct {
	u16 bit;
	int cls;
	char level;
	const char *name;
} classes[] = {
	{ PERF_RECORD_MISC_BLOCKED_IO,    BLOCKED_IO,    'I', "io" },
	{ PERF_RECORD_MISC_BLOCKED_LOCK,  BLOCKED_LOCK,  'L', "lock" },
	{ PERF_RECORD_MISC_BLOCKED_SCHED, BLOCKED_SCHED, 'S', "sched" },
	{ PERF_RECORD_MISC_BLOCKED_OTHER, BLOCKED_OTHER, 'B', "other" },
};

static int test_classes(void)
{
	const u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT;
	struct evsel *evsel = new_task_clock(st, true);
	struct perf_sample s;
	struct fake_record rec;
	size_t i;
	int ret = TEST_FAIL;

	if (!evsel)
		return TEST_FAIL;

	/* the mask must not overlap cpumode or the other misc flags */
	if (PERF_RECORD_MISC_BLOCKED_MASK & PERF_RECORD_MISC_CPUMODE_MASK)
		goto out;
	if (PERF_RECORD_MISC_BLOCKED_MASK & PERF_RECORD_MISC_EXACT_IP)
		goto out;

	/* on-CPU sample of a blocked event */
	make_record(&rec, st, PERF_RECORD_MISC_USER, PERIOD_NS, 1);
	if (parse(evsel, &rec, &s) || s.blocked != BLOCKED_ONCPU ||
	    s.points != 1 || s.cpumode != PERF_RECORD_MISC_USER) {
		pr_debug("on-CPU sample misparsed\n");
		goto out;
	}

	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		u16 mode = i & 1 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;

		make_record(&rec, st, mode | classes[i].bit, 7 * PERIOD_NS, 7);
		if (parse(evsel, &rec, &s)) {
			pr_debug("%s sample rejected\n", classes[i].name);
			goto out;
		}
		if (s.blocked != classes[i].cls || s.points != 7 ||
		    s.period != 7 * PERIOD_NS || s.cpumode != mode ||
		    s.weight != 7) {
			pr_debug("%s sample: class %d points %llu cpumode %d\n",
				 classes[i].name, s.blocked,
				 (unsigned long long)s.points, s.cpumode);
			goto out;
		}
		if (blocked__level(s.blocked) != classes[i].level ||
		    strcmp(blocked__name(s.blocked), classes[i].name) ||
		    blocked__class_from_name(classes[i].name) != classes[i].cls) {
			pr_debug("%s: wrong label\n", classes[i].name);
			goto out;
		}
	}

	/* two subclass bits: corrupt */
	make_record(&rec, st, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BLOCKED_IO |
		    PERF_RECORD_MISC_BLOCKED_LOCK, PERIOD_NS, 1);
	if (parse(evsel, &rec, &s) != -EFAULT) {
		pr_debug("two subclass bits accepted\n");
		goto out;
	}

	/* weight 0 is one point, an absurd weight is corrupt */
	make_record(&rec, st, PERF_RECORD_MISC_BLOCKED_OTHER, PERIOD_NS, 0);
	if (parse(evsel, &rec, &s) || s.points != 1 || s.blocked != BLOCKED_OTHER)
		goto out;
	make_record(&rec, st, PERF_RECORD_MISC_BLOCKED_OTHER, PERIOD_NS, 1ULL << 40);
	if (parse(evsel, &rec, &s) != -EFAULT) {
		pr_debug("weight 2^40 accepted\n");
		goto out;
	}
	ret = TEST_OK;
out:
	evsel__delete(evsel);
	return ret;
}

/* The bits mean nothing on an event without attr.blocked. */
static int test_not_blocked_event(void)
{
	const u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT;
	struct evsel *evsel = new_task_clock(st, false);
	struct perf_sample s;
	struct fake_record rec;
	int ret = TEST_FAIL;

	if (!evsel)
		return TEST_FAIL;

	/* weight 50 as perf mem would record: must not become points */
	make_record(&rec, st, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BLOCKED_IO |
		    PERF_RECORD_MISC_BLOCKED_SCHED, 3 * PERIOD_NS, 50);
	if (parse(evsel, &rec, &s) || s.blocked != BLOCKED_ONCPU || s.points != 1 ||
	    s.weight != 50 || s.period != 3 * PERIOD_NS ||
	    s.cpumode != PERF_RECORD_MISC_USER) {
		pr_debug("bits on a non-blocked event were not ignored\n");
		goto out;
	}
	ret = TEST_OK;
out:
	evsel__delete(evsel);
	return ret;
}

/* Without WEIGHT the points come from the period, without both they are 1. */
static int test_no_weight(void)
{
	const u64 st_p = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_PERIOD;
	const u64 st_none = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	struct evsel *ep = new_task_clock(st_p, true);
	struct evsel *en = new_task_clock(st_none, true);
	struct perf_sample s;
	struct fake_record rec;
	int ret = TEST_FAIL;

	if (!ep || !en)
		goto out;

	make_record(&rec, st_p, PERF_RECORD_MISC_BLOCKED_LOCK, 5 * PERIOD_NS, 0);
	if (parse(ep, &rec, &s) || s.points != 5 || s.blocked != BLOCKED_LOCK)
		goto out;
	make_record(&rec, st_none, PERF_RECORD_MISC_BLOCKED_SCHED, 0, 0);
	if (parse(en, &rec, &s) || s.points != 1 || s.period != PERIOD_NS ||
	    s.blocked != BLOCKED_SCHED)
		goto out;
	ret = TEST_OK;
out:
	evsel__delete(ep);
	evsel__delete(en);
	return ret;
}

/*
 * Fuzz: every misc value, random weights and random record sizes.  The
 * decoder must accept exactly the records with at most one subclass bit
 * and a sane weight, never touch cpumode, and never read past the record.
 */
static int test_fuzz(void)
{
	const u64 st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT;
	struct evsel *evsel = new_task_clock(st, true);
	struct perf_sample s;
	struct fake_record rec;
	unsigned int seed = 20240710;
	u32 misc;
	int ret = TEST_FAIL;

	if (!evsel)
		return TEST_FAIL;

	for (misc = 0; misc <= 0xffff; misc++) {
		u64 weight = rand_r(&seed) % 4 == 0 ? ((u64)rand_r(&seed) << 20) :
			     (u64)(rand_r(&seed) % 10000);
		int bits = __builtin_popcount(misc & PERF_RECORD_MISC_BLOCKED_MASK);
		bool sane = weight <= (1ULL << 32);
		int err;

		make_record(&rec, st, misc, weight * PERIOD_NS, weight);
		err = parse(evsel, &rec, &s);
		if ((bits <= 1 && sane) != (err == 0)) {
			pr_debug("misc %#x weight %llu: err %d\n", misc,
				 (unsigned long long)weight, err);
			goto out;
		}
		if (s.cpumode != (misc & PERF_RECORD_MISC_CPUMODE_MASK))
			goto out;
		if (!err && (s.points < 1 ||
			     (bits && s.points != (weight ? weight : 1)) ||
			     (!bits) != (s.blocked == BLOCKED_ONCPU)))
			goto out;

		/* the same record cut short must be refused, not overread */
		rec.header.size = sizeof(rec.header) + (rand_r(&seed) % 5) * sizeof(u64);
		if (parse(evsel, &rec, &s) == 0) {
			pr_debug("short record of %d bytes accepted\n", rec.header.size);
			goto out;
		}
	}
	ret = TEST_OK;
out:
	evsel__delete(evsel);
	return ret;
}

static int test__blocked_parse(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	TEST_ASSERT_VAL("subclass decoding", test_classes() == TEST_OK);
	TEST_ASSERT_VAL("bits ignored without attr.blocked",
			test_not_blocked_event() == TEST_OK);
	TEST_ASSERT_VAL("points without WEIGHT", test_no_weight() == TEST_OK);
	TEST_ASSERT_VAL("misc/weight/size fuzz", test_fuzz() == TEST_OK);
	return TEST_OK;
}

DEFINE_SUITE("Blocked samples: misc bit and weight decoding", blocked_parse);
