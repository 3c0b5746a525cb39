// SPDX-License-Identifier: GPL-2.0
/*
 * An inherited event (attr.inherit=1) opened on the process before a thread
 * is created follows the new thread too: the thread's sleeps must show up
 * as [B] samples with its tid in the parent's ring buffer. The second test
 * keeps parent and child on one CPU so they switch directly to each other,
 * the case where perf may swap cloned contexts instead of rescheduling them.
 *
 * perf refuses mmap() of an inherited event with cpu == -1, so like
 * perf record this opens one inherited event per CPU and merges their
 * ring buffers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define NAPS		10
#define NAP_MS		40
#define MAX_CPUS	64

static struct {
	int naps;
	int cpu;		/* -1: don't pin */
	int hop[2];		/* >= 0: move to hop[i % 2] before nap i */
	volatile pid_t tid;
	volatile int done;
	double slept_ms, max_nap_ms;
	uint64_t b_max;		/* sum of floor(nap / period) + 1 */
	struct bs_offcpu off;	/* child's off-CPU intervals, its own switch records */
	uint64_t t_start, t_end;	/* child, from its tracker's open on */
	int pin_err, trk_err;
} ctx;

static void *child(void *arg)
{
	struct bs_event trk;
	int i;

	if (ctx.cpu >= 0)
		ctx.pin_err = bs_pin_self(ctx.cpu);
	ctx.trk_err = bs_switch_tracker_open(&trk, 0);
	ctx.t_start = bs_now_ns();
	ctx.tid = bs_gettid();
	for (i = 0; i < ctx.naps; i++) {
		uint64_t t0;

		if (ctx.hop[0] >= 0)
			ctx.pin_err |= bs_pin_self(ctx.hop[i % 2]);
		t0 = bs_now_ns();

		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		t0 = bs_now_ns() - t0;
		ctx.slept_ms += bs_ms(t0);
		ctx.b_max += t0 / BS_DEFAULT_PERIOD_NS + 1;
		if (bs_ms(t0) > ctx.max_nap_ms)
			ctx.max_nap_ms = bs_ms(t0);
		bs_spin_ns(BS_NSEC_PER_MSEC / 2);
	}
	ctx.t_end = bs_now_ns();
	if (!ctx.trk_err) {
		if (bs_event_drain(&trk) < 0 || trk.smp.lost)
			ctx.trk_err = -EIO;
		bs_offcpu_bounds(&trk.smp, ctx.tid, ctx.t_start, ctx.t_end,
				 BS_DEFAULT_PERIOD_NS, BS_SLACK_NS, &ctx.off);
		bs_event_close(&trk);
	}
	__atomic_store_n(&ctx.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

BS_FIXTURE(inherit_thread);

/* same_cpu: parent spins where the child runs; hop: child changes CPU per nap */
static void run_inherit(struct __test_metadata *_metadata, bool same_cpu, bool hop)
{
	static struct bs_event ev[MAX_CPUS];
	struct bs_samples all = { 0 };
	struct perf_event_attr attr;
	int cpu, nev = 0, i;
	cpu_set_t cpus;
	uint64_t b, s;
	pthread_t th;

	/*
	 * A first run of the thread, unmeasured: the first run after boot
	 * faults the thread's code in from the 9p root, and a fault that
	 * waits for it is a [B] sample whose user part is the faulting IP
	 * alone (libc has no frame pointers), which is right but is not
	 * what the checks below are about.
	 */
	memset(&ctx, 0, sizeof(ctx));
	ctx.naps = 1;
	ctx.cpu = ctx.hop[0] = ctx.hop[1] = -1;
	ASSERT_EQ(0, pthread_create(&th, NULL, child, NULL));
	pthread_join(th, NULL);

	memset(&ctx, 0, sizeof(ctx));
	ctx.naps = NAPS;
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	ctx.cpu = same_cpu ? bs_pick_cpu() : -1;
	ctx.hop[0] = ctx.hop[1] = -1;
	if (hop) {
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &cpus))
				continue;
			if (ctx.hop[0] < 0)
				ctx.hop[0] = cpu;
			else if (ctx.hop[1] < 0)
				ctx.hop[1] = cpu;
		}
		if (ctx.hop[1] < 0)
			SKIP(return, "needs two CPUs");
	}
	if (same_cpu)
		ASSERT_EQ(0, bs_pin_self(ctx.cpu));

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	attr.inherit = 1;
	BS_OPEN_PER_CPU(ev, MAX_CPUS, &attr, &cpus, nev);
	ASSERT_EQ(0, pthread_create(&th, NULL, child, NULL));
	if (same_cpu) {
		/* Keep the CPU busy so the child switches to and from us. */
		while (!__atomic_load_n(&ctx.done, __ATOMIC_ACQUIRE))
			;
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, ctx.pin_err);
	ASSERT_EQ(0, ctx.trk_err) TH_LOG("child's switch-record tracker: %s",
					 strerror(-ctx.trk_err));
	BS_DRAIN_ALL(ev, nev, &all);

	/* From the child's tracker on: the records cover those intervals. */
	b = bs_sum_weight_between(&all, ctx.tid, BS_B, ctx.t_start, ctx.t_end);
	s = bs_sum_weight_between(&all, ctx.tid, BS_S, ctx.t_start, ctx.t_end);
	TH_LOG("child tid %d slept %.2f ms in %d naps, %.2f ms off CPU in %zu intervals "
	       "(parent %s%s); [B] weight %llu, [S] weight %llu", ctx.tid, ctx.slept_ms,
	       NAPS, bs_ms(ctx.off.ns), ctx.off.nr,
	       same_cpu ? "spinning on the same CPU" : "joining",
	       hop ? ", child changing CPU before every nap" : "",
	       (unsigned long long)b, (unsigned long long)s);
	TH_LOG("%d per-CPU inherited events", nev);
	BS_LOG_SUMMARY("child", &all, ctx.tid);
	BS_LOG_SUMMARY("parent", &all, bs_gettid());

	EXPECT_LT(0, bs_count(&all, ctx.tid, BS_B)) TH_LOG("no [B] samples of the child");
	/* Each nap: at least (NAP_MS - slack) / period points, at most its length's. */
	BS_EXPECT_BETWEEN("child [B] points vs its naps",
			  NAPS * ((NAP_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) / BS_DEFAULT_PERIOD_NS),
			  b, ctx.b_max);
	BS_EXPECT_BETWEEN("child [B]+[S] points vs its off-CPU intervals", ctx.off.min_points,
			  b + s, ctx.off.max_points);
	/* No [B] sample may be longer than the longest nap. */
	EXPECT_GE(ctx.max_nap_ms / bs_ms(BS_DEFAULT_PERIOD_NS) + 1,
		  bs_max_weight(&all, ctx.tid, BS_B)) {
		TH_LOG("a [B] sample of %llu points, the longest nap took %.2f ms: an "
		       "interval measured from a stale switch-out (another CPU's event?)",
		       (unsigned long long)bs_max_weight(&all, ctx.tid, BS_B),
		       ctx.max_nap_ms);
	}
	BS_EXPECT_CONTEXT(&all, ctx.tid, BS_B, geteuid() == 0);
	bs_samples_free(&all);
	for (i = 0; i < nev; i++)
		bs_event_close(&ev[i]);
}

TEST_F_TIMEOUT(inherit_thread, child_sleeps, 120)
{
	BS_REQUIRE_FEATURE();
	run_inherit(_metadata, false, false);
}

TEST_F_TIMEOUT(inherit_thread, child_sleeps_parent_spins_same_cpu, 120)
{
	BS_REQUIRE_FEATURE();
	run_inherit(_metadata, true, false);
}

/*
 * Like perf record, one inherited event per CPU: a thread that sleeps on
 * one CPU and wakes on another leaves the interval in one CPU's event and
 * comes back in another's; the interval must still be measured once.
 */
TEST_F_TIMEOUT(inherit_thread, child_changes_cpu_between_naps, 120)
{
	BS_REQUIRE_FEATURE();
	run_inherit(_metadata, false, true);
}

TEST_HARNESS_MAIN
