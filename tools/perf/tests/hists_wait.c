// SPDX-License-Identifier: GPL-2.0
/*
 * The 'wait' sort key on a fake machine (see hists_common.c): blocked
 * samples with synthetic kernel + user callchains are named by the
 * built-in rule table (util/wait-reasons.rules), by a user's rule file
 * tried before it, and parse errors name the file and the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>

#include "util/blocked.h"
#include "util/callchain.h"
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
#include "util/wait-reason.h"
#include "tests/tests.h"
#include "tests/hists_common.h"

#define PERIOD		100
#define EXTRA_OFFSET	0x1000
#define EXTRA_LEN	0x100

/* symbols added to the fake machine's libc and [kernel] */
static const char * const libc_extra[] = {
	"__lll_lock_wait",			/* L0 */
	"pthread_mutex_lock",			/* L1 */
	"__futex_abstimed_wait_common",		/* L2 */
	"std::condition_variable::wait",	/* L3 */
	"epoll_wait",				/* L4 */
	"read",					/* L5 */
	"waitpid",				/* L6 */
	"clock_nanosleep",			/* L7 */
	"ioctl",				/* L8 */
	"accept4",				/* L9 */
	"recv",					/* L10 */
	"mprotect",				/* L11 */
	"mmap64",				/* L12 */
	"__GI___lll_lock_wait",			/* L13 */
};

static const char * const kernel_extra[] = {
	"futex_wait_queue",			/* K0 */
	"futex_wait",				/* K1 */
	"do_futex",				/* K2 */
	"rwsem_down_read_slowpath",		/* K3 */
	"lock_mm_and_find_vma",			/* K4 */
	"do_user_addr_fault",			/* K5 */
	"ep_poll",				/* K6 */
	"do_epoll_wait",			/* K7 */
	"pipe_read",				/* K8 */
	"vfs_read",				/* K9 */
	"do_wait",				/* K10 */
	"kernel_wait4",				/* K11 */
	"do_nanosleep",				/* K12 */
	"hrtimer_nanosleep",			/* K13 */
	"io_schedule",				/* K14 */
	"folio_wait_bit_common",		/* K15 */
	"filemap_read",				/* K16 */
	"mydrv_wait_irq",			/* K17 */
	"__x64_sys_ioctl",			/* K18 */
	"preempt_schedule_irq",			/* K19 */
	"inet_csk_accept",			/* K20 */
	"sk_wait_data",				/* K21 */
	"tcp_recvmsg",				/* K22 */
	"do_mprotect_pkey.constprop.0",		/* K23 */
	"__x64_sys_mprotect",			/* K24 */
	"mmap_read_lock_killable",		/* K25 */
	"exc_page_fault",			/* K26 */
	"vm_mmap_pgoff",			/* K27 */
	"ksys_mmap_pgoff",			/* K28 */
	"vma_link",				/* K29 */
	"ext4_buffered_write_iter",		/* K30 */
	"vfs_write",				/* K31 */
	"__lock_sock",				/* K32 */
	"lock_sock_nested",			/* K33 */
	"tcp_sendmsg",				/* K34 */
	"srso_alias_return_thunk",		/* K35 */
};

#define L(n)	(FAKE_MAP_LIBC + EXTRA_OFFSET + (n) * EXTRA_LEN + 1)
#define K(n)	(FAKE_MAP_KERNEL + EXTRA_OFFSET + (n) * EXTRA_LEN + 1)
#define K_SCHED	FAKE_IP_KERNEL_SCHEDULE
#define MAIN	FAKE_IP_PERF_MAIN
#define RUN	FAKE_IP_PERF_RUN_COMMAND
#define BMAIN	FAKE_IP_BASH_MAIN

/* the callchain: nr, then the ips from the leaf */
#define CHAIN(...)	.callchain = (const u64[]){ __VA_ARGS__ }

static const struct fake_blocked_sample fake_samples[] = {
	/* perf 100: a contended pthread mutex */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 6,
	  CHAIN(6, K(0), K(1), K(2), L(0), L(1), MAIN) },
	/* perf 100: an idle worker on a std::condition_variable */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 20,
	  CHAIN(6, K(0), K(1), K(2), L(2), L(3), RUN) },
	/* perf 100: a futex wait whose user chain ends in libc (no frame pointers) */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 10,
	  CHAIN(4, K(0), K(1), K(2), L(2)) },
	/* perf 100: on CPU, even with a kernel frame that a rule would match */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_ONCPU, .points = 3,
	  CHAIN(3, K(8), K(9), MAIN) },
	/* perf 200: malloc faulting a page while the mmap lock is held */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 8,
	  CHAIN(6, K_SCHED, K(3), K(4), K(5), FAKE_IP_LIBC_MALLOC, MAIN) },
	/* perf 200: epoll_wait */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_OTHER, .points = 5,
	  CHAIN(5, K_SCHED, K(6), K(7), L(4), MAIN) },
	/* perf 200: reading a pipe */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_OTHER, .points = 4,
	  CHAIN(5, K_SCHED, K(8), K(9), L(5), MAIN) },
	/* perf 200: preempted: waiting for a CPU wins over the chain */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_SCHED, .points = 2,
	  CHAIN(4, K(19), K(8), K(9), MAIN) },
	/* bash: accept */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_OTHER, .points = 13,
	  CHAIN(4, K_SCHED, K(20), L(9), BMAIN) },
	/* bash: nanosleep */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_OTHER, .points = 12,
	  CHAIN(5, K_SCHED, K(12), K(13), L(7), BMAIN) },
	/* bash: socket read */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_OTHER, .points = 11,
	  CHAIN(5, K_SCHED, K(21), K(22), L(10), BMAIN) },
	/* bash: a buffered read waiting for the disk */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_IO, .points = 9,
	  CHAIN(6, K(14), K(15), K(16), K(9), L(5), BMAIN) },
	/* bash: waitpid */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_OTHER, .points = 7,
	  CHAIN(5, K_SCHED, K(10), K(11), L(6), BMAIN) },
	/* bash: nothing matches: named by the first non-scheduler kernel frame */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_OTHER, .points = 1,
	  CHAIN(5, K_SCHED, K(17), K(18), L(8), BMAIN) },
	/* bash: on CPU */
	{ .pid = FAKE_PID_BASH, .cls = BLOCKED_ONCPU, .points = 14,
	  CHAIN(1, BMAIN) },
};

/*
 * Kernel lock waits named by the function that went to sleep (leaf:), as
 * recorded from db_bench: the kernel's stack of a lock wait starts at the
 * lock's caller, the rwsem slow path and down_*() being __sched.  And
 * glibc's mutex slow path by the name Debian's libc gives it.  A lock wait
 * no rule names is kernel-lock:<caller>, not unknown.
 */
static const struct fake_blocked_sample leaf_samples[] = {
	/* glibc's malloc growing an arena: mprotect waits for the mmap lock */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 9,
	  CHAIN(6, K_SCHED, K(23), K(24), L(11), FAKE_IP_LIBC_MALLOC, MAIN) },
	/* a page fault in a condition wait's code: the mmap lock, not the condvar */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 5,
	  CHAIN(6, K(25), K(4), K(5), K(26), L(3), RUN) },
	/* mmap() taking the mmap lock for writing */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 4,
	  CHAIN(5, K_SCHED, K(27), K(28), L(12), MAIN) },
	/* a write() waiting for the inode lock: inode_lock() is inline */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 6,
	  CHAIN(4, K_SCHED, K(30), K(31), MAIN) },
	/* a send waiting for the socket's lock, not for socket memory */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 4,
	  CHAIN(5, K_SCHED, K(32), K(33), K(34), MAIN) },
	/* another lock deeper inside mmap(): not the mmap lock */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 3,
	  CHAIN(6, K_SCHED, K(29), K(27), K(28), L(12), MAIN) },
	/* the same behind a return thunk (SRSO/retbleed mitigations): the
	 * thunk is not the caller */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 2,
	  CHAIN(7, K_SCHED, K(35), K(29), K(27), K(28), L(12), MAIN) },
	/* a fault that waits, not for a lock: a page fault, not the mmap lock */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_OTHER, .points = 2,
	  CHAIN(4, K_SCHED, K(5), K(26), MAIN) },
	/* glibc's mutex slow path by its internal alias (-g: no caller) */
	{ .pid = FAKE_PID_PERF2, .cls = BLOCKED_LOCK, .points = 7,
	  CHAIN(5, K(0), K(1), K(2), L(13), MAIN) },
	/* a futex wait: the user chain still names it */
	{ .pid = FAKE_PID_PERF1, .cls = BLOCKED_LOCK, .points = 1,
	  CHAIN(6, K(0), K(1), K(2), L(2), L(3), RUN) },
};

static int add_extra_symbols(struct machine *machine, const char *dso_name,
			     const char * const *names, size_t nr)
{
	struct dso *dso = machine__findnew_dso(machine, dso_name);
	size_t i;

	if (!dso)
		return -1;
	/* frames of this dso count as kernel frames, as [kernel.kallsyms]'s do */
	if (!strcmp(dso_name, "[kernel]"))
		dso->kernel = DSO_SPACE__KERNEL;
	for (i = 0; i < nr; i++) {
		struct symbol *sym = symbol__new(EXTRA_OFFSET + i * EXTRA_LEN,
						 EXTRA_LEN, STB_GLOBAL, STT_FUNC,
						 names[i]);

		if (!sym) {
			dso__put(dso);
			return -1;
		}
		symbols__insert(&dso->symbols, sym);
	}
	dso__put(dso);
	return 0;
}

struct expect {
	const char *comm;	/* NULL: not sorted by comm */
	const char *wait;
	u64 nr_events;
};

static int check_rows(struct hists *hists, const struct expect *exp, size_t n)
{
	struct rb_node *node = rb_first_cached(&hists->entries);
	size_t i;

	for (i = 0; i < n; i++, node = rb_next(node)) {
		struct hist_entry *he;
		char buf[128];

		if (!node) {
			pr_debug("row %zu missing (expected %s %s %llu)\n", i,
				 exp[i].comm ?: "*", exp[i].wait,
				 (unsigned long long)exp[i].nr_events);
			return TEST_FAIL;
		}
		he = rb_entry(node, struct hist_entry, rb_node);
		sort_wait.se_snprintf(he, buf, sizeof(buf), 0);
		pr_debug("row %zu: %s %s nr %llu period %llu\n", i,
			 thread__comm_str(he->thread), buf,
			 (unsigned long long)he->stat.nr_events,
			 (unsigned long long)he->stat.period);
		if ((exp[i].comm && strcmp(thread__comm_str(he->thread), exp[i].comm)) ||
		    strcmp(buf, exp[i].wait) ||
		    he->stat.nr_events != exp[i].nr_events ||
		    he->stat.period != exp[i].nr_events * PERIOD) {
			pr_debug("row %zu: expected %s %s nr %llu\n", i,
				 exp[i].comm ?: "*", exp[i].wait,
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

static int run_sort_samples(const struct fake_blocked_sample *samples,
			    size_t nr_samples, const char *sort,
			    const struct expect *exp, size_t n)
{
	struct machines machines;
	struct machine *machine;
	struct evlist *evlist = evlist__new();
	struct evsel *evsel;
	int err = TEST_FAIL;

	if (!evlist)
		return TEST_FAIL;
	if (parse_event(evlist, "task-clock"))
		goto out_delete;
	evsel = evlist__first(evlist);
	evsel->core.attr.blocked = 1;

	machines__init(&machines);
	machine = setup_fake_machine(&machines);
	if (!machine ||
	    add_extra_symbols(machine, "libc", libc_extra, ARRAY_SIZE(libc_extra)) ||
	    add_extra_symbols(machine, "[kernel]", kernel_extra, ARRAY_SIZE(kernel_extra)))
		goto out_exit;

	field_order = NULL;
	sort_order = sort;
	symbol_conf.use_callchain = false;
	symbol_conf.cumulate_callchain = false;
	if (setup_sorting(NULL) < 0)
		goto out_exit;
	if (add_fake_blocked_samples(evsel__hists(evsel), machine, samples,
				     nr_samples, PERIOD) == TEST_OK) {
		hists__collapse_resort(evsel__hists(evsel), NULL);
		evsel__output_resort(evsel, NULL);
		err = check_rows(evsel__hists(evsel), exp, n);
	}
	del_hist_entries(evsel__hists(evsel));
	reset_output_field();
out_exit:
	machines__exit(&machines);
out_delete:
	evlist__delete(evlist);
	return err;
}

static int run_sort(const char *sort, const struct expect *exp, size_t n)
{
	return run_sort_samples(fake_samples, ARRAY_SIZE(fake_samples), sort,
				exp, n);
}

/* the built-in table: every sample named, each thread's time by reason */
static int test__hists_wait(struct test_suite *test __maybe_unused,
			    int subtest __maybe_unused)
{
	static const struct expect by_wait[] = {
		{ NULL, "condition",		  20 },
		{ NULL, "on-cpu",		  17 },
		{ NULL, "accept",		  13 },
		{ NULL, "sleep",		  12 },
		{ NULL, "socket-read",		  11 },
		{ NULL, "futex",		  10 },
		{ NULL, "io-read",		   9 },
		{ NULL, "mmap-lock",		   8 },
		{ NULL, "child-wait",		   7 },
		{ NULL, "mutex",		   6 },
		{ NULL, "epoll",		   5 },
		{ NULL, "pipe-read",		   4 },
		{ NULL, "cpu",			   2 },
		{ NULL, "unknown:mydrv_wait_irq",  1 },
	};
	static const struct expect by_comm_wait[] = {
		{ "perf", "condition",		   20 },
		{ "bash", "on-cpu",		   14 },
		{ "bash", "accept",		   13 },
		{ "bash", "sleep",		   12 },
		{ "bash", "socket-read",	   11 },
		{ "perf", "futex",		   10 },
		{ "bash", "io-read",		    9 },
		{ "perf", "mmap-lock",		    8 },
		{ "bash", "child-wait",		    7 },
		{ "perf", "mutex",		    6 },
		{ "perf", "epoll",		    5 },
		{ "perf", "pipe-read",		    4 },
		{ "perf", "on-cpu",		    3 },
		{ "perf", "cpu",		    2 },
		{ "bash", "unknown:mydrv_wait_irq", 1 },
	};
	static const struct expect by_leaf[] = {
		{ NULL, "mmap-lock",		  18 },
		{ NULL, "mutex",		   7 },
		{ NULL, "inode-lock",		   6 },
		{ NULL, "kernel-lock:vma_link",	   5 },
		{ NULL, "socket-lock",		   4 },
		{ NULL, "page-fault",		   2 },
		{ NULL, "condition",		   1 },
	};

	wait_rules__reset();
	TEST_ASSERT_VAL("wait rows", run_sort("wait", by_wait,
					      ARRAY_SIZE(by_wait)) == TEST_OK);
	TEST_ASSERT_VAL("built-in rules parse", !*wait_rules__last_error());
	TEST_ASSERT_VAL("comm,wait rows",
			run_sort("comm,wait", by_comm_wait,
				 ARRAY_SIZE(by_comm_wait)) == TEST_OK);
	TEST_ASSERT_VAL("kernel lock waits by leaf",
			run_sort_samples(leaf_samples, ARRAY_SIZE(leaf_samples),
					 "wait", by_leaf,
					 ARRAY_SIZE(by_leaf)) == TEST_OK);
	return TEST_OK;
}

static int write_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	ssize_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

/* a user's file: its rules go first; a bad line names file and line */
static int test__hists_wait_rules(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	static const char user_rules[] =
		"# my runtime's primitives\n"
		"\n"
		"worker-idle  user:run_command  kernel:futex_wait*   # pool threads\n"
		"nap\t\tkernel:do_nanosleep|clock_nanosleep\n"
		"not-preempted !class:sched|other|io kernel:lock_mm_and_find_vma\n";
	static const char bad_rules[] =
		"# fine\n"
		"good-one kernel:pipe_read\n"
		"bad-one kernel:pipe_read stack:main\n";
	static const struct expect by_wait[] = {
		{ NULL, "worker-idle",		  20 },
		{ NULL, "on-cpu",		  17 },
		{ NULL, "accept",		  13 },
		{ NULL, "nap",			  12 },
		{ NULL, "socket-read",		  11 },
		{ NULL, "futex",		  10 },
		{ NULL, "io-read",		   9 },
		{ NULL, "not-preempted",	   8 },
		{ NULL, "child-wait",		   7 },
		{ NULL, "mutex",		   6 },
		{ NULL, "epoll",		   5 },
		{ NULL, "pipe-read",		   4 },
		{ NULL, "cpu",			   2 },
		{ NULL, "unknown:mydrv_wait_irq",  1 },
	};
	char good[] = "/tmp/perf-test-wait-rules-XXXXXX";
	char bad[] = "/tmp/perf-test-wait-bad-XXXXXX";
	char expect_err[128];
	int ret = TEST_FAIL;

	wait_rules__reset();
	if (write_file(good, user_rules))
		return TEST_FAIL;
	if (write_file(bad, bad_rules))
		goto out_good;

	/* the bad file is refused as a whole, with its name and line 3 */
	if (wait_rules__load_file(bad) != -EINVAL) {
		pr_debug("%s was accepted\n", bad);
		goto out;
	}
	snprintf(expect_err, sizeof(expect_err),
		 "%s:3: unknown condition (use kernel:, leaf:, user: or class:)", bad);
	if (strcmp(wait_rules__last_error(), expect_err)) {
		pr_debug("error \"%s\", expected \"%s\"\n",
			 wait_rules__last_error(), expect_err);
		goto out;
	}
	/* a missing file names the file */
	if (wait_rules__load_file("/nonexistent/wait.rules") == 0 ||
	    !strstr(wait_rules__last_error(), "/nonexistent/wait.rules: "))
		goto out;
	if (wait_rules__load_file(good))
		goto out;
	/* no rule of the bad file ("good-one") may have been kept */
	if (run_sort("wait", by_wait, ARRAY_SIZE(by_wait)) != TEST_OK)
		goto out;
	ret = TEST_OK;
out:
	unlink(bad);
out_good:
	unlink(good);
	wait_rules__reset();
	return ret;
}

/* syntax errors of rule text, each with its line */
static int test__wait_rules_syntax(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{ "a kernel:x\nlonely\n",
		  "t:2: a rule needs at least one condition: REASON COND [COND...]" },
		{ "on-cpu kernel:x\n",
		  "t:1: bad reason name (letters, digits, - _ . : +; not on-cpu or unknown*)" },
		{ "unknown:x kernel:x\n",
		  "t:1: bad reason name (letters, digits, - _ . : +; not on-cpu or unknown*)" },
		{ "\n\nr kernel:a||b\n", "t:3: empty pattern (write NAME or NAME|NAME...)" },
		{ "r class:disk\n", "t:1: unknown class (use io, lock, sched or other)" },
		{ "r nocolon\n",
		  "t:1: a condition is kernel:GLOB, leaf:GLOB, user:GLOB or class:NAME" },
		{ "@include x\n", "t:1: unknown directive (@skip and @kind exist)" },
		{ "@skip\n", "t:1: @skip takes one GLOB|GLOB... list" },
		{ "@kind\n", "t:1: @kind takes a kind and one REASON|REASON... list" },
		{ "@kind idle\n", "t:1: @kind takes a kind and one REASON|REASON... list" },
		{ "@kind idle a b\n", "t:1: @kind takes a kind and one REASON|REASON... list" },
		{ "\n@kind busy a\n",
		  "t:2: unknown kind (use idle, contended, io, runnable or other)" },
		{ "@kind on-cpu a\n",
		  "t:1: unknown kind (use idle, contended, io, runnable or other)" },
		{ "@kind idle a||b\n", "t:1: empty pattern in @kind" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		wait_rules__reset();
		if (wait_rules__parse(cases[i].text, "t") != -EINVAL ||
		    strcmp(wait_rules__last_error(), cases[i].err)) {
			pr_debug("case %zu: got \"%s\", expected \"%s\"\n", i,
				 wait_rules__last_error(), cases[i].err);
			wait_rules__reset();
			return TEST_FAIL;
		}
	}
	wait_rules__reset();
	/* comments, blank lines, CRLF and tabs are fine */
	TEST_ASSERT_VAL("valid text",
			wait_rules__parse("# c\r\n\r\n\tr\tkernel:a|b  user:c # x\r\n", "t") == 0);
	wait_rules__reset();
	return TEST_OK;
}

DEFINE_SUITE("Blocked samples: 'wait' sort key, built-in rules", hists_wait);
DEFINE_SUITE("Blocked samples: 'wait' sort key, user rule files", hists_wait_rules);
DEFINE_SUITE("Blocked samples: wait rule syntax errors", wait_rules_syntax);
