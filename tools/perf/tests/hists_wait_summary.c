// SPDX-License-Identifier: GPL-2.0
/*
 * The kinds of wait reasons (the @kind lines of the wait rules) and the
 * per-thread wait summary of perf report --wait-summary, on the threads of
 * the fake machine (see hists_common.c): exact points per kind, verdicts,
 * top reasons and the printed table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>

#include "util/debug.h"
#include "util/machine.h"
#include "util/thread.h"
#include "util/wait-reason.h"
#include "util/wait-summary.h"
#include "tests/tests.h"
#include "tests/hists_common.h"

/* the built-in table: what each reason means for the waiting thread */
static int test__wait_kinds(struct test_suite *test __maybe_unused,
			    int subtest __maybe_unused)
{
	static const struct {
		const char *reason;
		enum wait_kind kind;
	} cases[] = {
		{ "on-cpu",		WAIT_KIND_ONCPU },
		{ "condition",		WAIT_KIND_IDLE },
		{ "semaphore",		WAIT_KIND_IDLE },
		{ "join",		WAIT_KIND_IDLE },
		{ "epoll",		WAIT_KIND_IDLE },
		{ "accept",		WAIT_KIND_IDLE },
		{ "pipe-read",		WAIT_KIND_IDLE },
		{ "socket-read",	WAIT_KIND_IDLE },
		{ "child-wait",		WAIT_KIND_IDLE },
		{ "sleep",		WAIT_KIND_IDLE },
		{ "mutex",		WAIT_KIND_CONTENDED },
		{ "rwlock",		WAIT_KIND_CONTENDED },
		{ "malloc-arena",	WAIT_KIND_CONTENDED },
		{ "mmap-lock",		WAIT_KIND_CONTENDED },
		{ "inode-lock",		WAIT_KIND_CONTENDED },
		{ "kernel-mutex",	WAIT_KIND_CONTENDED },
		{ "kernel-rwsem",	WAIT_KIND_CONTENDED },
		{ "socket-lock",	WAIT_KIND_CONTENDED },
		{ "kernel-lock:percpu_rwsem_wait", WAIT_KIND_CONTENDED },
		{ "io",			WAIT_KIND_IO },
		{ "io-read",		WAIT_KIND_IO },
		{ "io-pagein",		WAIT_KIND_IO },
		{ "cpu",		WAIT_KIND_RUNNABLE },
		{ "futex",		WAIT_KIND_OTHER },
		{ "page-fault",		WAIT_KIND_OTHER },
		{ "pipe-write",		WAIT_KIND_OTHER },
		{ "unknown:mydrv_wait_irq", WAIT_KIND_OTHER },
		{ "unknown",		WAIT_KIND_OTHER },
	};
	size_t i;
	int ret = TEST_OK;

	wait_rules__reset();
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum wait_kind got = wait_reason__kind(cases[i].reason);

		if (got != cases[i].kind) {
			pr_debug("%s is %s, expected %s\n", cases[i].reason,
				 wait_kind__name(got), wait_kind__name(cases[i].kind));
			ret = TEST_FAIL;
		}
	}
	if (*wait_rules__last_error())
		ret = TEST_FAIL;

	/* a user's @kind lines come first: new reasons, and overrides */
	wait_rules__reset();
	if (wait_rules__parse("pool-idle user:Pool::next* kernel:futex_wait*\n"
			      "@kind idle pool-*\n@kind contended condition\n", "u") ||
	    wait_reason__kind("pool-idle") != WAIT_KIND_IDLE ||
	    wait_reason__kind("pool-x") != WAIT_KIND_IDLE ||
	    wait_reason__kind("condition") != WAIT_KIND_CONTENDED ||
	    wait_reason__kind("epoll") != WAIT_KIND_IDLE) {
		pr_debug("user @kind lines not applied first\n");
		ret = TEST_FAIL;
	}
	wait_rules__reset();
	return ret;
}

/* each thread's time, reason by reason, in several pieces */
static const struct {
	u32 tid;
	const char *reason;
	u64 points;
} pieces[] = {
	/* 100: an idle pool worker, a little contention */
	{ FAKE_PID_PERF1, "condition",		50 },
	{ FAKE_PID_PERF1, "on-cpu",		 5 },
	{ FAKE_PID_PERF1, "mutex",		10 },
	{ FAKE_PID_PERF1, "condition",		30 },
	{ FAKE_PID_PERF1, "cpu",		 5 },
	/* 200: a client stuck on locks */
	{ FAKE_PID_PERF2, "on-cpu",		30 },
	{ FAKE_PID_PERF2, "mutex",		25 },
	{ FAKE_PID_PERF2, "mmap-lock",		15 },
	{ FAKE_PID_PERF2, "futex",		10 },
	{ FAKE_PID_PERF2, "mutex",		15 },
	{ FAKE_PID_PERF2, "sleep",		 5 },
	/* 300: mostly on the CPU */
	{ FAKE_PID_BASH,  "on-cpu",		30 },
	{ FAKE_PID_BASH,  "io-read",		10 },
	{ FAKE_PID_BASH,  "epoll",		 5 },
	{ FAKE_PID_BASH,  "unknown:mydrv_wait_irq", 5 },
};

static const struct {
	u32 tid;
	u64 total;
	u64 kind[WAIT_KIND__NR];	/* on-cpu idle contended io runnable other */
	enum wait_kind verdict;
	const char *top[WAIT_SUMMARY_TOP];
	u64 top_points[WAIT_SUMMARY_TOP];
} expect[] = {
	{ FAKE_PID_PERF1, 100, { 5, 80, 10, 0, 5, 0 }, WAIT_KIND_IDLE,
	  { "condition", "mutex", "cpu" }, { 80, 10, 5 } },
	{ FAKE_PID_PERF2, 100, { 30, 5, 55, 0, 0, 10 }, WAIT_KIND_CONTENDED,
	  { "mutex", "mmap-lock", "futex" }, { 40, 15, 10 } },
	{ FAKE_PID_BASH, 50, { 30, 5, 0, 10, 0, 5 }, WAIT_KIND_ONCPU,
	  { "io-read", "epoll", "unknown:mydrv_wait_irq" }, { 10, 5, 5 } },
};

static const char expect_table[] =
"# Per-thread wait summary: each thread's sampling points (on and off CPU)\n"
"# by kind of wait; verdict = the kind with most points.  Kinds: @kind\n"
"# lines of the wait rules (Documentation/bperf/wait-reasons.rst).\n"
"#\n"
"#     pid     tid  comm                 points    on-cpu      idle contended        io  runnable     other  verdict    top waits\n"
"      100     100  perf                    100      5.0%     80.0%     10.0%      0.0%      5.0%      0.0%  idle       condition 80.0%, mutex 10.0%, cpu 5.0%\n"
"      200     200  perf                    100     30.0%      5.0%     55.0%      0.0%      0.0%     10.0%  contended  mutex 40.0%, mmap-lock 15.0%, futex 10.0%\n"
"      300     300  bash                     50     60.0%     10.0%      0.0%     20.0%      0.0%     10.0%  on-cpu     io-read 20.0%, epoll 10.0%, unknown:mydrv_wait_irq 10.0%\n";

static int check_thread(struct wait_summary *ws, size_t e)
{
	const struct wait_thread_summary *t = wait_summary__find(ws, expect[e].tid);
	struct wait_reason_points top[WAIT_SUMMARY_TOP];
	size_t n, i;
	int k;

	if (!t) {
		pr_debug("thread %u missing\n", expect[e].tid);
		return TEST_FAIL;
	}
	if (t->total != expect[e].total) {
		pr_debug("thread %u: %llu points, expected %llu\n", expect[e].tid,
			 (unsigned long long)t->total,
			 (unsigned long long)expect[e].total);
		return TEST_FAIL;
	}
	for (k = 0; k < WAIT_KIND__NR; k++) {
		if (t->kind[k] != expect[e].kind[k]) {
			pr_debug("thread %u: %s %llu, expected %llu\n", expect[e].tid,
				 wait_kind__name(k), (unsigned long long)t->kind[k],
				 (unsigned long long)expect[e].kind[k]);
			return TEST_FAIL;
		}
	}
	if (wait_thread_summary__verdict(t) != expect[e].verdict) {
		pr_debug("thread %u: verdict %s, expected %s\n", expect[e].tid,
			 wait_kind__name(wait_thread_summary__verdict(t)),
			 wait_kind__name(expect[e].verdict));
		return TEST_FAIL;
	}
	n = wait_thread_summary__top(t, top, WAIT_SUMMARY_TOP);
	for (i = 0; i < WAIT_SUMMARY_TOP; i++) {
		if (i >= n || strcmp(top[i].reason, expect[e].top[i]) ||
		    top[i].points != expect[e].top_points[i]) {
			pr_debug("thread %u: top %zu is %s %llu, expected %s %llu\n",
				 expect[e].tid, i, i < n ? top[i].reason : "(none)",
				 i < n ? (unsigned long long)top[i].points : 0ULL,
				 expect[e].top[i],
				 (unsigned long long)expect[e].top_points[i]);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

static int test__hists_wait_summary(struct test_suite *test __maybe_unused,
				    int subtest __maybe_unused)
{
	struct wait_summary *ws = wait_summary__new();
	struct machines machines;
	struct machine *machine;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *fp;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("no memory", ws);
	wait_rules__reset();
	machines__init(&machines);
	machine = setup_fake_machine(&machines);
	if (!machine)
		goto out;
	for (i = 0; i < ARRAY_SIZE(pieces); i++) {
		struct thread *thread = machine__find_thread(machine, pieces[i].tid,
							     pieces[i].tid);
		int err;

		if (!thread)
			goto out;
		err = wait_summary__add(ws, thread, pieces[i].reason, pieces[i].points);
		thread__put(thread);
		if (err)
			goto out;
	}
	for (i = 0; i < ARRAY_SIZE(expect); i++)
		if (check_thread(ws, i))
			goto out;
	if (wait_summary__find(ws, 400)) {
		pr_debug("a thread without samples has a summary\n");
		goto out;
	}

	fp = open_memstream(&buf, &len);
	if (!fp)
		goto out;
	if (wait_summary__fprintf(ws, fp)) {
		fclose(fp);
		goto out;
	}
	fclose(fp);
	if (strcmp(buf, expect_table)) {
		pr_debug("table:\n%sexpected:\n%s", buf, expect_table);
		goto out;
	}
	ret = TEST_OK;
out:
	free(buf);
	wait_summary__delete(ws);
	machines__exit(&machines);
	wait_rules__reset();
	return ret;
}

DEFINE_SUITE("Blocked samples: kinds of wait reasons", wait_kinds);
DEFINE_SUITE("Blocked samples: per-thread wait summary", hists_wait_summary);
