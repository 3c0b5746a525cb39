// SPDX-License-Identifier: GPL-2.0
/*
 * --comms, --pid and --tid are judged on each sample, and what `perf report
 * --comms T --sort KEY` shows must be thread T's rows of the unfiltered
 * `--sort pid,KEY`, whichever thread's sample created an entry first.
 *
 * The samples below are ordered so that, for every filter and sort key, some
 * of the filtered thread's rows share their keys with a row that another
 * thread created first, and some rows that thread created first are shared
 * by others.  Each case checks exact numbers (sampling points and periods)
 * and compares them with the rows of the unfiltered sort on the same data.
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
#include "util/intlist.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/parse-events.h"
#include "util/sort.h"
#include "util/strlist.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "tests/tests.h"
#include "tests/hists_common.h"

#define PERIOD	100

static const struct fake_blocked_sample fake_samples[] = {
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_PERF_MAIN,       BLOCKED_ONCPU,  1),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_BASH_MAIN,       BLOCKED_ONCPU,  2),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF2, FAKE_IP_KERNEL_SCHEDULE, BLOCKED_IO,     3),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_KERNEL_SCHEDULE, BLOCKED_IO,     4),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_BASH_XMALLOC,    BLOCKED_LOCK,   5),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF2, FAKE_IP_LIBC_MALLOC,     BLOCKED_LOCK,   6),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_KERNEL_SCHEDULE, BLOCKED_SCHED,  7),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF2, FAKE_IP_PERF_MAIN,       BLOCKED_ONCPU,  8),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_BASH,  FAKE_IP_LIBC_FREE,       BLOCKED_OTHER,  9),
	FAKE_BLOCKED_SAMPLE(FAKE_PID_PERF1, FAKE_IP_LIBC_MALLOC,     BLOCKED_OTHER, 10),
};

#define TOTAL_POINTS	55

enum filter_kind { BY_COMM, BY_PID, BY_TID };

struct row {
	const char *key;	/* dso short name or blocked class */
	u64 points;
};

#define MAX_ROWS	8

struct filter_case {
	const char *name;
	enum filter_kind kind;
	const char *list;	/* as given to --comms, --pid or --tid */
	u32 tid;		/* the one thread that list selects */
	const char *sort;	/* sort order of the filtered report */
	bool by_dso;		/* KEY is dso, else blocked */
	struct row exp[MAX_ROWS];	/* sorted by points, then key */
};

static const struct filter_case cases[] = {
	{ "--comms bash --sort blocked", BY_COMM, "bash", FAKE_PID_BASH, "blocked", false,
	  { { "other", 9 }, { "lock", 5 }, { "io", 4 }, { "on-cpu", 2 } } },
	{ "--tid 200 --sort blocked", BY_TID, "200", FAKE_PID_PERF2, "blocked", false,
	  { { "on-cpu", 8 }, { "lock", 6 }, { "io", 3 } } },
	{ "--pid 100 --sort blocked", BY_PID, "100", FAKE_PID_PERF1, "blocked", false,
	  { { "other", 10 }, { "sched", 7 }, { "on-cpu", 1 } } },
	{ "--comms bash --sort dso", BY_COMM, "bash", FAKE_PID_BASH, "dso", true,
	  { { "libc", 9 }, { "bash", 7 }, { "[kernel]", 4 } } },
	{ "--tid 200 --sort dso", BY_TID, "200", FAKE_PID_PERF2, "dso", true,
	  { { "perf", 8 }, { "libc", 6 }, { "[kernel]", 3 } } },
	{ "--pid 100 --sort dso", BY_PID, "100", FAKE_PID_PERF1, "dso", true,
	  { { "libc", 10 }, { "[kernel]", 7 }, { "perf", 1 } } },
	/* comm needs the collapse stage: both perf threads are "perf" */
	{ "--tid 200 --sort comm,dso", BY_TID, "200", FAKE_PID_PERF2, "comm,dso", true,
	  { { "perf", 8 }, { "libc", 6 }, { "[kernel]", 3 } } },
};

static void set_filter(const struct filter_case *c)
{
	switch (c->kind) {
	case BY_COMM:
		symbol_conf.comm_list = strlist__new(c->list, NULL);
		break;
	case BY_PID:
		symbol_conf.pid_list = intlist__new(c->list);
		break;
	case BY_TID:
		symbol_conf.tid_list = intlist__new(c->list);
		break;
	}
}

static void clear_filter(void)
{
	strlist__delete(symbol_conf.comm_list);
	intlist__delete(symbol_conf.pid_list);
	intlist__delete(symbol_conf.tid_list);
	symbol_conf.comm_list = NULL;
	symbol_conf.pid_list = NULL;
	symbol_conf.tid_list = NULL;
}

static const char *row_key(struct hist_entry *he, bool by_dso)
{
	if (by_dso)
		return he->ms.map && he->ms.map->dso ? he->ms.map->dso->short_name : "?";
	return blocked__name(he->blocked);
}

/* add the shown entries of hists (of thread tid, if tid) into rows by key */
static int collect(struct hists *hists, bool by_dso, u32 tid, struct row *rows,
		   u64 *period_sum)
{
	struct rb_node *node;
	int n = 0, i;

	*period_sum = 0;
	for (node = rb_first_cached(&hists->entries); node; node = rb_next(node)) {
		struct hist_entry *he = rb_entry(node, struct hist_entry, rb_node);
		const char *key = row_key(he, by_dso);

		if (he->filtered || (tid && he->thread->tid != (pid_t)tid))
			continue;
		pr_debug("  %-8s %-5d %-8s points %llu period %llu\n",
			 thread__comm_str(he->thread), he->thread->tid, key,
			 (unsigned long long)he->stat.nr_events,
			 (unsigned long long)he->stat.period);
		if (he->stat.period != he->stat.nr_events * PERIOD) {
			pr_debug("period %llu is not %d per point\n",
				 (unsigned long long)he->stat.period, PERIOD);
			return -1;
		}
		*period_sum += he->stat.period;
		for (i = 0; i < n; i++)
			if (!strcmp(rows[i].key, key))
				break;
		if (i == n) {
			if (n == MAX_ROWS)
				return -1;
			rows[n].key = key;
			rows[n++].points = 0;
		}
		rows[i].points += he->stat.nr_events;
	}
	return n;
}

static bool same_rows(const struct row *a, int na, const struct row *b, int nb,
		      const char *what)
{
	int i, j;

	if (na != nb) {
		pr_debug("%s: %d rows, expected %d\n", what, na, nb);
		return false;
	}
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (!strcmp(a[i].key, b[j].key))
				break;
		if (j == nb || a[i].points != b[j].points) {
			pr_debug("%s: row %s has %llu points, expected %llu\n",
				 what, a[i].key, (unsigned long long)a[i].points,
				 j == nb ? 0ULL : (unsigned long long)b[j].points);
			return false;
		}
	}
	return true;
}

static int build(struct evsel *evsel, struct machine *machine, const char *sort)
{
	struct hists *hists = evsel__hists(evsel);

	field_order = NULL;
	sort_order = sort;
	if (setup_sorting(NULL) < 0)
		return TEST_FAIL;
	/* judges --comms/--pid/--tid on each sample's thread */
	if (add_fake_blocked_samples(hists, machine, fake_samples,
				     ARRAY_SIZE(fake_samples), PERIOD) < 0)
		return TEST_FAIL;
	hists__collapse_resort(hists, NULL);
	evsel__output_resort(evsel, NULL);
	return TEST_OK;
}

static void teardown(struct evsel *evsel)
{
	del_hist_entries(evsel__hists(evsel));
	reset_output_field();
}

static int run_case(struct evsel *evsel, struct machine *machine,
		    const struct filter_case *c)
{
	struct hists *hists = evsel__hists(evsel);
	struct row got[MAX_ROWS], ref[MAX_ROWS];
	int ngot, nref, nexp = 0, err = TEST_FAIL;
	u64 got_period, ref_period, exp_points = 0;

	while (nexp < MAX_ROWS && c->exp[nexp].key)
		exp_points += c->exp[nexp++].points;

	/* the reference: thread c->tid's rows of the unfiltered --sort pid,KEY */
	pr_debug("%s: unfiltered --sort pid,%s, thread %u:\n", c->name,
		 c->by_dso ? "dso" : "blocked", c->tid);
	if (build(evsel, machine, c->by_dso ? "pid,dso" : "pid,blocked"))
		goto out;
	nref = collect(hists, c->by_dso, c->tid, ref, &ref_period);
	teardown(evsel);
	if (nref < 0)
		goto out;

	pr_debug("%s:\n", c->name);
	set_filter(c);
	if (build(evsel, machine, c->sort))
		goto out_clear;
	ngot = collect(hists, c->by_dso, 0, got, &got_period);
	if (ngot < 0)
		goto out_teardown;

	if (!same_rows(ref, nref, c->exp, nexp, "unfiltered rows") ||
	    !same_rows(got, ngot, c->exp, nexp, "filtered rows") ||
	    !same_rows(got, ngot, ref, nref, "filtered vs unfiltered rows"))
		goto out_teardown;

	/* the header ("Samples: N") and --percentage relative count the thread */
	if (hists->stats.nr_non_filtered_samples != exp_points ||
	    hists->stats.total_non_filtered_period != exp_points * PERIOD ||
	    got_period != exp_points * PERIOD) {
		pr_debug("non-filtered samples %u period %llu, expected %llu, %llu\n",
			 hists->stats.nr_non_filtered_samples,
			 (unsigned long long)hists->stats.total_non_filtered_period,
			 (unsigned long long)exp_points,
			 (unsigned long long)exp_points * PERIOD);
		goto out_teardown;
	}
	/* and the default percentage is of every sample */
	if (hists->stats.total_period != TOTAL_POINTS * PERIOD) {
		pr_debug("total period %llu, expected %d\n",
			 (unsigned long long)hists->stats.total_period,
			 TOTAL_POINTS * PERIOD);
		goto out_teardown;
	}
	err = TEST_OK;
out_teardown:
	teardown(evsel);
out_clear:
	clear_filter();
out:
	pr_debug("%s: %s\n", c->name, err ? "FAILED" : "ok");
	return err;
}

static int test__hists_thread_filter(struct test_suite *test __maybe_unused,
				     int subtest __maybe_unused)
{
	struct machines machines;
	struct machine *machine;
	struct evlist *evlist = evlist__new();
	int err = TEST_FAIL;
	size_t i;

	if (!evlist)
		return TEST_FAIL;
	if (parse_event(evlist, "task-clock"))
		goto out_delete;

	machines__init(&machines);
	machine = setup_fake_machine(&machines);
	if (machine) {
		evlist__first(evlist)->core.attr.blocked = 1;
		err = TEST_OK;
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			/* machine__resolve() judges the filter on each new sample */
			if (run_case(evlist__first(evlist), machine, &cases[i]))
				err = TEST_FAIL;
		}
	}
	machines__exit(&machines);
out_delete:
	evlist__delete(evlist);
	return err;
}

DEFINE_SUITE("Filter samples by thread: rows match the per-thread sort",
	     hists_thread_filter);
