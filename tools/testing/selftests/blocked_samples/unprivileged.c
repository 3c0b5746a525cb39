// SPDX-License-Identifier: GPL-2.0
/*
 * An unprivileged user (perf_event_paranoid=2, exclude_kernel=1) still gets
 * blocked samples of its own thread, but they must not leak any kernel
 * address: IP and callchain are user-only, no PERF_CONTEXT_KERNEL marker,
 * cpumode USER.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534
#define NAPS		3
#define NAP_MS		50

struct result {
	int stage;		/* 0 ok, 1 setresuid, 2 open, 3 drain */
	int err;
	uid_t uid;
	size_t samples, blocked, kernel_ip, kernel_chain, kernel_marker;
	size_t bad_cpumode, no_user_chain;
	uint64_t b_weight, b_max;
	double slept_ms;
	char first_problem[160];
};

static int read_paranoid(char *buf, size_t len)
{
	int fd = open(PARANOID, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int write_paranoid(const char *val)
{
	int fd = open(PARANOID, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static void problem(struct result *r, const char *what, uint64_t v)
{
	if (!r->first_problem[0])
		snprintf(r->first_problem, sizeof(r->first_problem), "%s %#llx",
			 what, (unsigned long long)v);
}

/* Runs as nobody in a child process; results go back through a pipe. */
static void unprivileged_child(struct result *r)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	size_t i;
	int n;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		r->stage = 1;
		r->err = errno;
		return;
	}
	r->uid = getuid();
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.exclude_kernel = 1;
	attr.exclude_callchain_kernel = 0;
	r->err = -bs_event_open(&ev, &attr, 0, -1, 16);
	if (r->err) {
		r->stage = 2;
		return;
	}
	for (n = 0; n < NAPS; n++) {
		uint64_t t0 = bs_now_ns();

		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		t0 = bs_now_ns() - t0;
		r->slept_ms += bs_ms(t0);
		r->b_max += t0 / BS_DEFAULT_PERIOD_NS + 1;
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	if (bs_event_drain(&ev) < 0 || ev.smp.lost) {
		r->stage = 3;
		return;
	}
	r->samples = ev.smp.nr;
	r->b_weight = bs_sum_weight(&ev.smp, -1, BS_B);
	for (i = 0; i < ev.smp.nr; i++) {
		const struct bs_sample *s = &ev.smp.s[i];

		if (s->ip >= BS_KERNEL_ADDR_MIN) {
			r->kernel_ip++;
			problem(r, "kernel IP", s->ip);
		}
		if (bs_chain_has_kernel_addr(s)) {
			r->kernel_chain++;
			problem(r, "kernel address in callchain of sample at ip", s->ip);
		}
		if (bs_chain_has_marker(s, PERF_CONTEXT_KERNEL)) {
			r->kernel_marker++;
			problem(r, "PERF_CONTEXT_KERNEL in callchain of sample at ip", s->ip);
		}
		if (bs_sample_class(s) == BS_ONCPU)
			continue;
		r->blocked++;
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER) {
			r->bad_cpumode++;
			problem(r, "blocked sample cpumode", s->misc & PERF_RECORD_MISC_CPUMODE_MASK);
		}
		/*
		 * The naps' samples reach the test's own frames (built with
		 * frame pointers).  A preemption ([S]) can stop the task in
		 * frameless code (the vDSO clock read of the spin), where the
		 * user chain is the IP alone: that is still a user chain.
		 */
		if (bs_chain_user_entries(s) < (bs_sample_class(s) == BS_B ? 2 : 1)) {
			r->no_user_chain++;
			problem(r, "short user chain in blocked sample at ip", s->ip);
		}
	}
	bs_event_close(&ev);
}

BS_FIXTURE(unprivileged);

TEST_F_TIMEOUT(unprivileged, nobody_exclude_kernel, 120)
{
	struct result res = { 0 };
	char saved[32];
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	BS_REQUIRE_FEATURE();
	if (geteuid() != 0)
		SKIP(return, "needs root to set %s and switch to uid %d", PARANOID, NOBODY);
	ASSERT_EQ(0, read_paranoid(saved, sizeof(saved)));
	ASSERT_EQ(0, write_paranoid("2")) TH_LOG("cannot write %s", PARANOID);
	ASSERT_EQ(0, pipe(pfd));

	pid = fork();
	if (!pid) {
		close(pfd[0]);
		unprivileged_child(&res);
		if (write(pfd[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	n = pid > 0 ? read(pfd[0], &res, sizeof(res)) : -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	close(pfd[0]);
	/* Restore before any assertion can end the test. */
	EXPECT_EQ(0, write_paranoid(saved)) TH_LOG("could not restore %s to %s", PARANOID, saved);
	ASSERT_LT(0, pid);
	ASSERT_EQ(sizeof(res), n) TH_LOG("child died without reporting");
	ASSERT_EQ(0, res.stage) {
		TH_LOG("child failed at %s: %s",
		       res.stage == 1 ? "setresuid(nobody)" :
		       res.stage == 2 ? "perf_event_open/mmap as nobody" : "ring buffer",
		       strerror(res.err));
	}

	TH_LOG("uid %u, paranoid 2: %zu samples, %zu blocked ([B] weight %llu for "
	       "%.2f ms of sleep); kernel ip %zu, kernel chain %zu, kernel marker %zu, "
	       "non-USER blocked %zu, no user chain %zu %s", res.uid, res.samples,
	       res.blocked, (unsigned long long)res.b_weight, res.slept_ms,
	       res.kernel_ip, res.kernel_chain, res.kernel_marker, res.bad_cpumode,
	       res.no_user_chain, res.first_problem);
	EXPECT_EQ(NOBODY, res.uid);
	EXPECT_LT(0, res.blocked);
	/* Each nap: at least (NAP_MS - slack) / period points, at most its length's. */
	BS_EXPECT_BETWEEN("[B] points vs the naps",
			  NAPS * ((NAP_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) / BS_DEFAULT_PERIOD_NS),
			  res.b_weight, res.b_max);
	EXPECT_EQ(0, res.kernel_ip);
	EXPECT_EQ(0, res.kernel_chain);
	EXPECT_EQ(0, res.kernel_marker);
	EXPECT_EQ(0, res.bad_cpumode);
	EXPECT_EQ(0, res.no_user_chain);
}

TEST_HARNESS_MAIN
