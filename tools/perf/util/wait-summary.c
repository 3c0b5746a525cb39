// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread wait summary (see wait-summary.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/zalloc.h>

#include "blocked.h"
#include "event.h"
#include "symbol.h"
#include "thread.h"
#include "wait-summary.h"

struct wait_summary {
	struct wait_thread_summary	*threads;
	size_t				nr, alloc;
};

struct wait_summary *wait_summary__new(void)
{
	return zalloc(sizeof(struct wait_summary));
}

void wait_summary__delete(struct wait_summary *ws)
{
	size_t i;

	if (!ws)
		return;
	for (i = 0; i < ws->nr; i++) {
		thread__put(ws->threads[i].thread);
		free(ws->threads[i].reasons);
	}
	free(ws->threads);
	free(ws);
}

static struct wait_thread_summary *find(struct wait_summary *ws,
					struct thread *thread)
{
	struct wait_thread_summary *t;
	size_t i;

	for (i = 0; i < ws->nr; i++)
		if (ws->threads[i].thread == thread)
			return &ws->threads[i];
	if (ws->nr == ws->alloc) {
		size_t alloc = ws->alloc ? ws->alloc * 2 : 16;

		t = realloc(ws->threads, alloc * sizeof(*t));
		if (!t)
			return NULL;
		ws->threads = t;
		ws->alloc = alloc;
	}
	t = &ws->threads[ws->nr++];
	memset(t, 0, sizeof(*t));
	t->thread = thread__get(thread);
	return t;
}

int wait_summary__add(struct wait_summary *ws, struct thread *thread,
		      const char *reason, u64 points)
{
	struct wait_thread_summary *t = find(ws, thread);
	enum wait_kind kind = wait_reason__kind(reason);
	struct wait_reason_points *r;
	size_t i;

	if (!t)
		return -ENOMEM;
	t->total += points;
	t->kind[kind] += points;
	if (kind == WAIT_KIND_ONCPU)
		return 0;
	for (i = 0; i < t->nr_reasons; i++) {
		if (!strcmp(t->reasons[i].reason, reason)) {
			t->reasons[i].points += points;
			return 0;
		}
	}
	r = realloc(t->reasons, (t->nr_reasons + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	t->reasons = r;
	r[t->nr_reasons].reason = reason;
	r[t->nr_reasons++].points = points;
	return 0;
}

int wait_summary__add_sample(struct wait_summary *ws, struct addr_location *al,
			     struct evsel *evsel, struct perf_sample *sample)
{
	if (!al->thread)
		return 0;
	return wait_summary__add(ws, al->thread,
				 wait_reason__classify(al, evsel, sample),
				 blocked__points(sample->points));
}

const struct wait_thread_summary *wait_summary__find(struct wait_summary *ws,
						     pid_t tid)
{
	size_t i;

	for (i = 0; i < ws->nr; i++)
		if (ws->threads[i].thread->tid == tid)
			return &ws->threads[i];
	return NULL;
}

enum wait_kind wait_thread_summary__verdict(const struct wait_thread_summary *t)
{
	int k, best = WAIT_KIND_ONCPU;

	for (k = WAIT_KIND_ONCPU + 1; k < WAIT_KIND__NR; k++)
		if (t->kind[k] > t->kind[best])
			best = k;
	return best;
}

static int cmp_points(const void *a, const void *b)
{
	const struct wait_reason_points *l = a, *r = b;

	if (l->points != r->points)
		return l->points > r->points ? -1 : 1;
	return strcmp(l->reason, r->reason);
}

size_t wait_thread_summary__top(const struct wait_thread_summary *t,
				struct wait_reason_points *top, size_t nr)
{
	struct wait_reason_points *all;
	size_t n = t->nr_reasons < nr ? t->nr_reasons : nr;

	if (!n)
		return 0;
	all = malloc(t->nr_reasons * sizeof(*all));
	if (!all)
		return 0;
	memcpy(all, t->reasons, t->nr_reasons * sizeof(*all));
	qsort(all, t->nr_reasons, sizeof(*all), cmp_points);
	memcpy(top, all, n * sizeof(*top));
	free(all);
	return n;
}

static int cmp_threads(const void *a, const void *b)
{
	const struct wait_thread_summary *l = a, *r = b;

	if (l->total != r->total)
		return l->total > r->total ? -1 : 1;
	return l->thread->tid - r->thread->tid;
}

static double pct(u64 part, u64 total)
{
	return total ? 100.0 * part / total : 0.0;
}

int wait_summary__fprintf(struct wait_summary *ws, FILE *fp)
{
	size_t i, j, n;
	int k;

	qsort(ws->threads, ws->nr, sizeof(*ws->threads), cmp_threads);
	fprintf(fp, "# Per-thread wait summary: each thread's sampling points (on and off CPU)\n"
		"# by kind of wait; verdict = the kind with most points.  Kinds: @kind\n"
		"# lines of the wait rules (Documentation/bperf/wait-reasons.rst).\n#\n");
	fprintf(fp, "# %7s %7s  %-16s %10s", "pid", "tid", "comm", "points");
	for (k = 0; k < WAIT_KIND__NR; k++)
		fprintf(fp, " %9s", wait_kind__name(k));
	fprintf(fp, "  %-9s  %s\n", "verdict", "top waits");
	for (i = 0; i < ws->nr; i++) {
		const struct wait_thread_summary *t = &ws->threads[i];
		struct wait_reason_points top[WAIT_SUMMARY_TOP];

		fprintf(fp, "  %7d %7d  %-16s %10" PRIu64, t->thread->pid_,
			t->thread->tid, thread__comm_str(t->thread) ?: "?", t->total);
		for (k = 0; k < WAIT_KIND__NR; k++)
			fprintf(fp, " %8.1f%%", pct(t->kind[k], t->total));
		fprintf(fp, "  %-9s ",
			wait_kind__name(wait_thread_summary__verdict(t)));
		n = wait_thread_summary__top(t, top, WAIT_SUMMARY_TOP);
		for (j = 0; j < n; j++)
			fprintf(fp, "%s %s %.1f%%", j ? "," : "", top[j].reason,
				pct(top[j].points, t->total));
		fputc('\n', fp);
	}
	return ferror(fp) ? -EIO : 0;
}
