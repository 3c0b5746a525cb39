// SPDX-License-Identifier: GPL-2.0
/*
 * Which event reports an off-CPU interval: only one that saw it whole.
 *
 *  - disabled during one sleep and enabled during a later one, or disabled
 *    and enabled within one sleep: neither sleep is reported, and nothing
 *    covers the time the thread ran in between;
 *  - an event bound to CPU 0 while its thread computes on another CPU:
 *    no sample covers the time spent computing there;
 *  - two sessions of per-CPU events (perf record style) on one thread:
 *    each gets the thread's sleeps;
 *  - a task-clock in a group led by a hardware event (the hardware
 *    context): gets them too (SKIP without a hardware PMU, e.g. QEMU TCG).
 *
 * Every heavy sample these scenarios could produce from a stale switch-out
 * weighs at least the 300 ms the thread ran or the 200 ms it slept, while
 * every interval an event may report is bounded by the thread's own
 * switch records (a tracker event on the thread).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define NAP_MS		30	/* naps that must be reported */
#define SLEEP_MS	200	/* sleeps around which the event changes */
#define RUN_MS		300	/* computing between them */
#define CHANGE_MS	50	/* change this far into a sleep */
#define MAX_CPUS	64

static struct {
	volatile pid_t tid;
	volatile int go, phase;
	volatile uint64_t t_go, t_end;
	int cpu_run;		/* migration: compute here (-1: don't move) */
	int pin_err;
} ctx;

static void set_phase(int p)
{
	__atomic_store_n(&ctx.phase, p, __ATOMIC_RELEASE);
}

/* Wait until the thread is asleep in phase @p, then @ms more. */
static int wait_asleep(int p, unsigned int ms)
{
	uint64_t deadline = bs_now_ns() + 20000 * BS_NSEC_PER_MSEC;

	while (__atomic_load_n(&ctx.phase, __ATOMIC_ACQUIRE) != p ||
	       bs_task_state(ctx.tid) != 'S') {
		if (bs_now_ns() > deadline)
			return -1;
		usleep(500);
	}
	bs_sleep_ns(ms * BS_NSEC_PER_MSEC);
	return 0;
}

static void wait_tid(void)
{
	while (!ctx.tid)
		usleep(1000);
}

static void wait_go(void)
{
	ctx.tid = bs_gettid();
	while (!__atomic_load_n(&ctx.go, __ATOMIC_ACQUIRE))
		usleep(1000);
	ctx.t_go = bs_now_ns();
}

/* nap, SLEEP (phase 2), run, SLEEP (phase 3), nap */
static void *two_sleeps(void *arg)
{
	wait_go();
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	set_phase(2);
	bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(RUN_MS * BS_NSEC_PER_MSEC);
	set_phase(3);
	bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	set_phase(4);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	ctx.t_end = bs_now_ns();
	return NULL;
}

/* nap, one long SLEEP (phase 2) of SLEEP + RUN, nap */
static void *one_sleep(void *arg)
{
	wait_go();
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	set_phase(2);
	bs_sleep_ns((SLEEP_MS + RUN_MS) * BS_NSEC_PER_MSEC);
	set_phase(4);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	ctx.t_end = bs_now_ns();
	return NULL;
}

/* On CPU 0: nap, compute RUN on ctx.cpu_run, back on CPU 0: nap. */
static void *migrate(void *arg)
{
	ctx.pin_err = bs_pin_self(0);
	wait_go();
	bs_spin_ns(BS_NSEC_PER_MSEC);
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	ctx.pin_err |= bs_pin_self(ctx.cpu_run);
	bs_spin_ns(RUN_MS * BS_NSEC_PER_MSEC);
	ctx.pin_err |= bs_pin_self(0);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	ctx.t_end = bs_now_ns();
	return NULL;
}

/* NAPS naps of NAP_MS, for the sessions and the group. */
#define NAPS	5
static void *naps(void *arg)
{
	int i;

	wait_go();
	for (i = 0; i < NAPS; i++) {
		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	ctx.t_end = bs_now_ns();
	return NULL;
}

static pthread_t start(void *(*fn)(void *))
{
	pthread_t th;

	memset(&ctx, 0, sizeof(ctx));
	if (pthread_create(&th, NULL, fn, NULL))
		return 0;
	wait_tid();
	return th;
}

/* Blocked samples after the go with weight >= @lo. */
static int count_heavier(const struct bs_samples *smp, uint64_t lo)
{
	size_t i;
	int n = 0;

	for (i = 0; i < smp->nr; i++)
		if (bs_sample_class(&smp->s[i]) != BS_ONCPU &&
		    smp->s[i].tid == (uint32_t)ctx.tid &&
		    smp->s[i].time > ctx.t_go && smp->s[i].weight >= lo)
			n++;
	return n;
}

static uint64_t max_blocked(const struct bs_samples *smp)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < smp->nr; i++)
		if (bs_sample_class(&smp->s[i]) != BS_ONCPU &&
		    smp->s[i].tid == (uint32_t)ctx.tid &&
		    smp->s[i].time > ctx.t_go && smp->s[i].weight > m)
			m = smp->s[i].weight;
	return m;
}

/* Longest off-CPU interval of the thread in (from, to], by its records. */
static uint64_t longest_offcpu(const struct bs_samples *smp, uint64_t from,
			       uint64_t to)
{
	uint64_t out = 0, m = 0;
	size_t i;

	for (i = 0; i < smp->nr_sw; i++) {
		const struct bs_switch *w = &smp->sw[i];

		if (w->tid != (uint32_t)ctx.tid)
			continue;
		if (w->out) {
			out = w->time;
		} else if (out && out > from && w->time <= to) {
			if (w->time - out > m)
				m = w->time - out;
			out = 0;
		}
	}
	return m;
}

/* Open a blocked task-clock event on a thread running @fn, and let it go. */
static pthread_t open_and_go(struct __test_metadata *_metadata,
			     struct bs_event *ev, void *(*fn)(void *))
{
	struct perf_event_attr attr;
	pthread_t th;

	th = start(fn);
	ASSERT_NE(0, th);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	BS_OPEN(ev, &attr, ctx.tid, -1);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	return th;
}

/*
 * After @th ended: the naps before and after the change of the event's
 * state are reported, one sample each, and no sample stands for a sleep
 * during part of which the event was off.
 */
static void expect_only_naps(struct __test_metadata *_metadata,
			     struct bs_event *ev, pthread_t th)
{
	pthread_join(th, NULL);
	BS_DRAIN(ev);
	BS_LOG_SUMMARY("sleeper", &ev->smp, ctx.tid);
	TH_LOG("heaviest blocked sample %llu points; blocked samples >= %d: %d",
	       (unsigned long long)max_blocked(&ev->smp), NAP_MS / 2,
	       count_heavier(&ev->smp, NAP_MS / 2));
	EXPECT_GT(SLEEP_MS - CHANGE_MS, max_blocked(&ev->smp)) {
		TH_LOG("a blocked sample of %llu points: the event was off for part "
		       "of every sleep that long (stale switch-out)",
		       (unsigned long long)max_blocked(&ev->smp));
	}
	EXPECT_EQ(2, count_heavier(&ev->smp, NAP_MS / 2)) {
		TH_LOG("want one sample each for the %d ms naps before the disable "
		       "and after the enable, nothing for the sleeps", NAP_MS);
	}
	bs_event_close(ev);
}

BS_FIXTURE(event_scope);

/*
 * Disabled 50 ms into a 200 ms sleep, enabled 50 ms into the next one, 300
 * ms of computing later.  Neither sleep is reported: the event was off
 * during part of each.  The naps before and after are.
 */
TEST_F_TIMEOUT(event_scope, disable_enable_across_sleeps, 120)
{
	struct bs_event ev;
	pthread_t th;

	BS_REQUIRE_FEATURE();
	th = open_and_go(_metadata, &ev, two_sleeps);
	ASSERT_EQ(0, wait_asleep(2, CHANGE_MS));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(0, wait_asleep(3, CHANGE_MS));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	expect_only_naps(_metadata, &ev, th);
}

/* Disabled and enabled again within one 500 ms sleep: not reported. */
TEST_F_TIMEOUT(event_scope, disable_enable_same_sleep, 120)
{
	struct bs_event ev;
	pthread_t th;

	BS_REQUIRE_FEATURE();
	th = open_and_go(_metadata, &ev, one_sleep);
	ASSERT_EQ(0, wait_asleep(2, CHANGE_MS));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	bs_sleep_ns(CHANGE_MS * BS_NSEC_PER_MSEC);
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	TH_LOG("disabled and enabled while the thread slept (state %c)",
	       bs_task_state(ctx.tid));
	expect_only_naps(_metadata, &ev, th);
}

/*
 * An event for CPU 0 only; its thread computes 300 ms on another CPU in
 * between two naps on CPU 0.  No sample may stand for more than the
 * thread's longest off-CPU interval.
 */
TEST_F_TIMEOUT(event_scope, cpu_bound_event_thread_migrates, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev, trk;
	uint64_t longest, limit;
	cpu_set_t cpus;
	pthread_t th;
	int cpu;

	BS_REQUIRE_FEATURE();
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	if (!CPU_ISSET(0, &cpus))
		SKIP(return, "CPU 0 is not in our affinity mask");
	for (cpu = 1; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &cpus); cpu++)
		;
	if (cpu == CPU_SETSIZE)
		SKIP(return, "needs a second CPU to migrate to");

	th = start(migrate);
	ASSERT_NE(0, th);
	ctx.cpu_run = cpu;
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	BS_OPEN(&ev, &attr, ctx.tid, 0);
	BS_OPEN_TRACKER(&trk, ctx.tid);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ASSERT_EQ(0, ctx.pin_err);

	BS_DRAIN(&ev);
	BS_DRAIN(&trk);
	BS_LOG_SUMMARY("CPU 0 event", &ev.smp, ctx.tid);
	longest = longest_offcpu(&trk.smp, ctx.t_go, ctx.t_end);
	limit = longest / BS_DEFAULT_PERIOD_NS + 1;
	TH_LOG("computed %d ms on CPU %d; longest off-CPU interval %.2f ms; "
	       "heaviest blocked sample %llu points (limit %llu)", RUN_MS, cpu,
	       bs_ms(longest), (unsigned long long)max_blocked(&ev.smp),
	       (unsigned long long)limit);
	EXPECT_GE(limit, max_blocked(&ev.smp)) {
		TH_LOG("a blocked sample longer than any off-CPU interval: it "
		       "covers the time computed on CPU %d", cpu);
	}
	/* The naps on CPU 0 are still reported. */
	EXPECT_EQ(2, count_heavier(&ev.smp, NAP_MS / 2));
	bs_event_close(&ev);
	bs_event_close(&trk);
}

/* Open one event per CPU of the affinity mask on the thread. */
static int open_session(struct __test_metadata *_metadata, struct bs_event *ev,
			struct perf_event_attr *attr)
{
	cpu_set_t cpus;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && n < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &cpus))
			continue;
		if (bs_event_open(&ev[n], attr, ctx.tid, cpu, 64))
			return -1;
		n++;
	}
	return n;
}

/*
 * Two perf-record-like sessions (one event per CPU each) on one thread:
 * each session on its own gets the naps, within the bounds the thread's
 * own switch records give.
 */
TEST_F_TIMEOUT(event_scope, two_percpu_sessions, 120)
{
	static struct bs_event ev[2][MAX_CPUS];
	struct bs_samples all[2] = { 0 };
	struct perf_event_attr attr;
	struct bs_offcpu off;
	struct bs_event trk;
	int n[2], k, i;
	pthread_t th;
	uint64_t b, s;

	BS_REQUIRE_FEATURE();
	th = start(naps);
	ASSERT_NE(0, th);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	for (k = 0; k < 2; k++) {
		n[k] = open_session(_metadata, ev[k], &attr);
		ASSERT_LT(0, n[k]) TH_LOG("per-CPU events of session %d: %s",
					  k + 1, strerror(errno));
	}
	BS_OPEN_TRACKER(&trk, ctx.tid);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	BS_DRAIN(&trk);
	bs_offcpu_bounds(&trk.smp, ctx.tid, ctx.t_go, ctx.t_end,
			 BS_DEFAULT_PERIOD_NS, BS_SLACK_NS, &off);
	TH_LOG("%d naps of %d ms: %.2f ms off CPU in %zu intervals, "
	       "points %llu .. %llu", NAPS, NAP_MS, bs_ms(off.ns), off.nr,
	       (unsigned long long)off.min_points,
	       (unsigned long long)off.max_points);
	for (k = 0; k < 2; k++) {
		char what[64];

		for (i = 0; i < n[k]; i++) {
			BS_DRAIN(&ev[k][i]);
			ASSERT_EQ(0, bs_samples_move(&all[k], &ev[k][i].smp));
			bs_event_close(&ev[k][i]);
		}
		b = bs_sum_weight_between(&all[k], ctx.tid, BS_B, ctx.t_go,
					  ctx.t_end);
		s = bs_sum_weight_between(&all[k], ctx.tid, BS_S, ctx.t_go,
					  ctx.t_end);
		snprintf(what, sizeof(what), "session %d ([B]+[S] %llu+%llu)",
			 k + 1, (unsigned long long)b, (unsigned long long)s);
		BS_LOG_SUMMARY(what, &all[k], ctx.tid);
		BS_EXPECT_BETWEEN(what, off.min_points, b + s, off.max_points);
		BS_EXPECT_BETWEEN("its [B] vs the naps",
				  NAPS * ((NAP_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) /
					  BS_DEFAULT_PERIOD_NS), b, off.max_points);
		bs_samples_free(&all[k]);
	}
	bs_event_close(&trk);
}

/*
 * {cycles, task-clock}: the task-clock lives in the hardware context.  It
 * must still get the naps.  Needs a hardware PMU.
 */
TEST_F_TIMEOUT(event_scope, hardware_led_group, 120)
{
	struct perf_event_attr hw, attr;
	struct bs_event ev, trk;
	struct bs_offcpu off;
	long page = sysconf(_SC_PAGESIZE);
	pthread_t th;
	uint64_t b, s;
	int lead;

	BS_REQUIRE_FEATURE();
	th = start(naps);
	ASSERT_NE(0, th);
	memset(&hw, 0, sizeof(hw));
	hw.type = PERF_TYPE_HARDWARE;
	hw.size = sizeof(hw);
	hw.config = PERF_COUNT_HW_CPU_CYCLES;
	hw.exclude_hv = 1;
	lead = bs_perf_event_open(&hw, ctx.tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (lead < 0) {
		int err = errno;

		__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		SKIP(return, "no hardware cycles event (%s): no PMU, e.g. QEMU TCG; "
		     "run on hardware or under KVM with a vPMU", strerror(err));
	}
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	memset(&ev, 0, sizeof(ev));
	ev.sample_type = attr.sample_type;
	ev.fd = bs_perf_event_open(&attr, ctx.tid, -1, lead, PERF_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, ev.fd) TH_LOG("task-clock in the cycles group: %s",
				   strerror(errno));
	ev.mmap_len = (size_t)(BS_PAGES + 1) * page;
	ev.base = mmap(NULL, ev.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ev.fd, 0);
	ASSERT_NE(MAP_FAILED, ev.base);
	BS_OPEN_TRACKER(&trk, ctx.tid);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	BS_DRAIN(&trk);
	BS_DRAIN(&ev);
	bs_offcpu_bounds(&trk.smp, ctx.tid, ctx.t_go, ctx.t_end,
			 BS_DEFAULT_PERIOD_NS, BS_SLACK_NS, &off);
	b = bs_sum_weight_between(&ev.smp, ctx.tid, BS_B, ctx.t_go, ctx.t_end);
	s = bs_sum_weight_between(&ev.smp, ctx.tid, BS_S, ctx.t_go, ctx.t_end);
	BS_LOG_SUMMARY("task-clock in a cycles group", &ev.smp, ctx.tid);
	BS_EXPECT_BETWEEN("[B]+[S] vs the off-CPU intervals", off.min_points,
			  b + s, off.max_points);
	bs_event_close(&ev);
	bs_event_close(&trk);
	close(lead);
}

TEST_HARNESS_MAIN
