// SPDX-License-Identifier: GPL-2.0
/*
 * Hist entries of blocked samples on a fake machine (see hists_common.c):
 * weighting by sampling points, [I]/[L]/[S]/[B] labels, separate rows for
 * the same symbol on and off CPU, and the 'blocked' sort key.
 */
#include <string.h>
#include <linux/kernel.h>

#include "util/blocked.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/hist.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/parse-events.h"
#include "util/sort.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "tests/tests.h"
#include "tests/hists_common.h"

#define PERIOD	100

static const struct fake_blocked_sample fake_samples[] = {
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_IO,     5),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_IO,     2),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_KERNEL_SCHEDULE, BLOCKED_LOCK,   6),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_KERNEL_SCHEDULE, BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_BASH_MAIN,       BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_BASH_XMALLOC,    BLOCKED_SCHED,  4),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_BASH_MAIN,       BLOCKED_OTHER, 10),
};

/* on-cpu 5, io 7, lock 6, sched 4, other 10 */
#define TOTAL_POINTS	32

static int prepare(struct evsel *evsel, struct machine *machine,
		   const char *sort)
{
	struct hists *hists = evsel__hists(evsel);

	field_order = NULL;
	sort_order = sort;
	if (setup_sorting(NULL) < 0)
		return TEST_FAIL;
	if (add_fake_blocked_samples(hists, machine, fake_samples,
				     ARRAY_SIZE(fake_samples), PERIOD) < 0)
		return TEST_FAIL;
	hists__collapse_resort(hists, NULL);
	evsel__output_resort(evsel, NULL);
	if (verbose > 2)
		print_hists_out(hists);
	return TEST_OK;
}

struct expect {
	const char *comm;
	const char *sym;	/* as printed by the symbol column */
	int cls;
	u64 nr_events;
};

static int check_rows(struct hists *hists, const struct expect *exp, size_t n,
		      bool by_sym)
{
	struct rb_node *node = rb_first_cached(&hists->entries);
	size_t i;

	for (i = 0; i < n; i++, node = rb_next(node)) {
		struct hist_entry *he;
		char buf[128];
		int save = verbose;

		if (!node) {
			pr_debug("row %zu missing\n", i);
			return TEST_FAIL;
		}
		he = rb_entry(node, struct hist_entry, rb_node);
		verbose = 0;	/* -v would add addresses to the symbol */
		if (by_sym)
			sort_sym.se_snprintf(he, buf, sizeof(buf), 0);
		else
			sort_blocked.se_snprintf(he, buf, sizeof(buf), 0);
		verbose = save;
		pr_debug("row %zu: %s %s cls %d nr %llu period %llu\n", i,
			 thread__comm_str(he->thread), buf, he->blocked,
			 (unsigned long long)he->stat.nr_events,
			 (unsigned long long)he->stat.period);
		if ((exp[i].comm && strcmp(thread__comm_str(he->thread), exp[i].comm)) ||
		    strcmp(buf, exp[i].sym) || he->blocked != exp[i].cls ||
		    he->stat.nr_events != exp[i].nr_events ||
		    he->stat.period != exp[i].nr_events * PERIOD) {
			pr_debug("row %zu: expected %s %s cls %d nr %llu\n", i,
				 exp[i].comm ?: "*", exp[i].sym, exp[i].cls,
				 (unsigned long long)exp[i].nr_events);
			return TEST_FAIL;
		}
	}
	if (node) {
		pr_debug("more rows than expected\n");
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* comm,sym: labels, weights and one row per (symbol, subclass) */
static int test_sym(struct evsel *evsel, struct machine *machine)
{
	static const struct expect exp[] = {
		{ "bash", "[B] main",	  BLOCKED_OTHER, 10 },
		{ "perf", "[I] main",	  BLOCKED_IO,	  7 },
		{ "perf", "[L] schedule", BLOCKED_LOCK,	  6 },
		{ "bash", "[S] xmalloc",  BLOCKED_SCHED,  4 },
		{ "perf", "[.] main",	  BLOCKED_ONCPU,  3 },
		{ "bash", "[.] main",	  BLOCKED_ONCPU,  1 },
		{ "perf", "[.] schedule", BLOCKED_ONCPU,  1 },
	};
	struct hists *hists = evsel__hists(evsel);
	int err = prepare(evsel, machine, "comm,sym");

	if (!err)
		err = check_rows(hists, exp, ARRAY_SIZE(exp), true);
	/* the header counts sampling points, not records */
	if (!err && hists->stats.nr_samples != TOTAL_POINTS) {
		pr_debug("nr_samples %u, expected %d\n", hists->stats.nr_samples,
			 TOTAL_POINTS);
		err = TEST_FAIL;
	}
	if (!err && hists->stats.total_period != TOTAL_POINTS * PERIOD)
		err = TEST_FAIL;
	del_hist_entries(hists);
	reset_output_field();
	return err;
}

/* blocked: per-subclass totals */
static int test_sort_key(struct evsel *evsel, struct machine *machine)
{
	static const struct expect exp[] = {
		{ NULL, "other",  BLOCKED_OTHER, 10 },
		{ NULL, "io",	  BLOCKED_IO,	  7 },
		{ NULL, "lock",	  BLOCKED_LOCK,	  6 },
		{ NULL, "on-cpu", BLOCKED_ONCPU,  5 },
		{ NULL, "sched",  BLOCKED_SCHED,  4 },
	};
	struct hists *hists = evsel__hists(evsel);
	int err = prepare(evsel, machine, "blocked");

	if (!err)
		err = check_rows(hists, exp, ARRAY_SIZE(exp), false);
	del_hist_entries(hists);
	reset_output_field();
	return err;
}

/* comm,blocked: where each thread's time goes */
static int test_comm_blocked(struct evsel *evsel, struct machine *machine)
{
	static const struct expect exp[] = {
		{ "bash", "other",  BLOCKED_OTHER, 10 },
		{ "perf", "io",	    BLOCKED_IO,	    7 },
		{ "perf", "lock",   BLOCKED_LOCK,   6 },
		{ "bash", "sched",  BLOCKED_SCHED,  4 },
		{ "perf", "on-cpu", BLOCKED_ONCPU,  4 },
		{ "bash", "on-cpu", BLOCKED_ONCPU,  1 },
	};
	struct hists *hists = evsel__hists(evsel);
	int err = prepare(evsel, machine, "comm,blocked");

	if (!err)
		err = check_rows(hists, exp, ARRAY_SIZE(exp), false);
	del_hist_entries(hists);
	reset_output_field();
	return err;
}

typedef int (*test_fn_t)(struct evsel *, struct machine *);

static int run(test_fn_t fn)
{
	struct machines machines;
	struct machine *machine;
	struct evlist *evlist = evlist__new();
	int err = TEST_FAIL;

	if (!evlist)
		return TEST_FAIL;
	if (parse_event(evlist, "task-clock"))
		goto out_delete;

	machines__init(&machines);
	machine = setup_fake_machine(&machines);
	if (machine) {
		evlist__first(evlist)->core.attr.blocked = 1;
		err = fn(evlist__first(evlist), machine);
	}
	machines__exit(&machines);
out_delete:
	evlist__delete(evlist);
	return err;
}

static int test__hists_blocked(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	TEST_ASSERT_VAL("comm,sym rows", run(test_sym) == TEST_OK);
	return TEST_OK;
}

static int test__hists_blocked_sort(struct test_suite *test __maybe_unused,
				    int subtest __maybe_unused)
{
	TEST_ASSERT_VAL("blocked rows", run(test_sort_key) == TEST_OK);
	TEST_ASSERT_VAL("comm,blocked rows", run(test_comm_blocked) == TEST_OK);
	return TEST_OK;
}

DEFINE_SUITE("Blocked samples: weighted and labelled hist entries", hists_blocked);
DEFINE_SUITE("Blocked samples: 'blocked' sort key", hists_blocked_sort);
