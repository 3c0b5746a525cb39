// SPDX-License-Identifier: GPL-2.0
/*
 * A blocked event's hrtimer stays queued when its task's CPU switches to
 * another task, and is re-armed only where the task runs next.
 *
 * migrate: the thread computes on two CPUs in turn (sched_setaffinity()
 * moves it through the CPU's stopper task, a switch to another task, so
 * its timer is left on the CPU it left) and now and then sleeps.  If the
 * timer stayed behind, the event would take no on-CPU sample until its
 * next switch, which would write the points it owes as one late sample
 * of several points.  Asserted: the on-CPU samples carry at most
 * EXCESS_PER_TURN points per turn beyond one each, besides those of the
 * stalls the thread saw while it computed (the timer fired where the task
 * ran).  A timer left behind at every move adds SPIN_MS - 1 to that; the
 * guest reads 0.8-1.8, idle or beside three busy loops on the host.  A
 * host that stalls a TCG guest holds the timer off for the stall, so the
 * stalls' points are counted apart: the thread's spin adds up the gaps
 * longer than GAP_US between its clock reads (up to 440 ms a second
 * under load, where the mean sample weight read 2.3 against 1.2 idle).
 * Also asserted: the on-CPU points follow the event's task-clock count
 * (two periods plus 1 % short of it at most, one period over; see "Why
 * on- and off-CPU points are counted apart" in
 * Documentation/admin-guide/perf/blocked-samples.rst), and on- plus
 * off-CPU points match the wall time of the run within 20 ms plus 3 %.
 * As in onoff_split.c, root raises perf_event_max_sample_rate for the
 * run, and a throttled run is skipped.
 *
 * close_while_off: a sleeper shares its CPU with a spinner, so its timer
 * is left queued at each sleep; the event is closed while the sleeper
 * sleeps, and the spinner then spins past the timer's expiry.  A timer not
 * cancelled would fire on freed memory (KASAN, or a crash, on the debug
 * kernel).  Asserted: every round's event closes, the sleeper ran through
 * all rounds, and the fixture's kernel log check stays clean.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define RUN_MS		1000	/* migrate: length of the run */
#define SPIN_MS		7	/* migrate: computing on one CPU */
#define NAP_MS		2	/* migrate: a sleep every third turn */
#define ROUNDS		40	/* close_while_off */
#define EXCESS_PER_TURN	3	/* migrate: see above */
#define GAP_US		1000	/* migrate: a stall, to the spinning thread */

BS_FIXTURE(timer_keep);

/*
 * Spin for @ns on CLOCK_MONOTONIC and return the time of the gaps longer
 * than GAP_US between two reads: the vCPU stalled, or the thread was
 * held off its CPU.
 */
static uint64_t spin_gaps_ns(uint64_t ns)
{
	uint64_t now = bs_now_ns(), end = now + ns, prev, gaps = 0;

	while (now < end) {
		prev = now;
		now = bs_now_ns();
		if (now - prev > GAP_US * 1000ULL)
			gaps += now - prev;
	}
	return gaps;
}

/* The two lowest CPUs we may run on, or -1. */
static int two_cpus(int cpu[2])
{
	cpu_set_t set;
	int c, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	return n == 2 ? 0 : -1;
}

TEST_F_TIMEOUT(timer_keep, migrate, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	uint64_t t0, t1, on, all, count, period, gaps = 0, excess;
	size_t n_on;
	int cpu[2], turns = 0, naps = 0;
	pid_t tid = bs_gettid();

	BS_REQUIRE_FEATURE();
	if (two_cpus(cpu))
		SKIP(return, "needs two CPUs to move between");

	BS_RAISE_SAMPLE_RATE(100000);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.disabled = 1;	/* enabled once its ring buffer is mapped */
	period = attr.sample_period;
	ASSERT_EQ(0, bs_pin_self(cpu[0]));
	BS_OPEN(&ev, &attr, 0, -1);

	t0 = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	while (bs_now_ns() - t0 < RUN_MS * BS_NSEC_PER_MSEC) {
		ASSERT_EQ(0, bs_pin_self(cpu[++turns % 2]));
		gaps += spin_gaps_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		if (turns % 3 == 0) {
			bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
			naps++;
		}
	}
	count = bs_event_count(&ev);
	t1 = bs_now_ns();
	ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0);
	bs_sysctl_restore();

	BS_DRAIN(&ev);
	on = bs_sum_weight(&ev.smp, tid, BS_ONCPU);
	n_on = bs_count(&ev.smp, tid, BS_ONCPU);
	all = bs_sum_weight_all(&ev.smp, tid);
	excess = on > n_on ? on - n_on : 0;
	TH_LOG("%d moves between CPUs %d and %d, %d naps, in %.1f ms; task-clock %.1f ms, "
	       "on-CPU points %llu in %zu samples (%llu beyond one each), stalls "
	       "%.1f ms, all points %llu (period %llu ns)", turns, cpu[0], cpu[1],
	       naps, bs_ms(t1 - t0), bs_ms(count), (unsigned long long)on, n_on,
	       (unsigned long long)excess, bs_ms(gaps), (unsigned long long)all,
	       (unsigned long long)period);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	if (ev.smp.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped",
		     (unsigned long long)ev.smp.nr_throttle);
	BS_EXPECT_BETWEEN("on-CPU points beyond one a sample, less the stalls', per turn",
			  -1e9, ((double)excess - (double)gaps / period) / turns,
			  EXCESS_PER_TURN);
	BS_EXPECT_BETWEEN("on-CPU points x period vs the task-clock count (ns)",
			  count * 0.99 - 2.0 * period, (double)on * period,
			  (double)count + period);
	BS_EXPECT_BETWEEN("all points x period vs the run's wall time (ns)",
			  (t1 - t0) * 0.97 - BS_SLACK_NS, all * period,
			  (t1 - t0) * 1.03 + BS_SLACK_NS);
	bs_event_close(&ev);
}

static struct {
	int cpu;
	volatile pid_t tid;
	volatile int round;		/* the sleeper is asleep in this round */
	volatile int stop;
	int pin_err;
} ctx;

static void *sleeper(void *arg)
{
	int r;

	ctx.pin_err = bs_pin_self(ctx.cpu);
	ctx.tid = bs_gettid();
	for (r = 1; !ctx.stop; r++) {
		bs_spin_ns(3 * BS_NSEC_PER_MSEC);
		__atomic_store_n(&ctx.round, r, __ATOMIC_RELEASE);
		bs_sleep_ns(20 * BS_NSEC_PER_MSEC);
	}
	return NULL;
}

TEST_F_TIMEOUT(timer_keep, close_while_off, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	pthread_t th;
	int r, seen, closed = 0;

	BS_REQUIRE_FEATURE();

	ctx.cpu = bs_pick_cpu();
	ASSERT_EQ(0, bs_pin_self(ctx.cpu));
	ASSERT_EQ(0, pthread_create(&th, NULL, sleeper, NULL));
	while (!ctx.tid)
		usleep(1000);
	ASSERT_EQ(0, ctx.pin_err);

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	for (r = 0; r < ROUNDS; r++) {
		BS_OPEN(&ev, &attr, ctx.tid, -1);
		/* spin (so the sleeper's CPU is busy) until it sleeps again */
		seen = __atomic_load_n(&ctx.round, __ATOMIC_ACQUIRE);
		while (__atomic_load_n(&ctx.round, __ATOMIC_ACQUIRE) == seen)
			;
		bs_spin_ns(1 * BS_NSEC_PER_MSEC);
		bs_event_close(&ev);
		closed++;
		/* past the expiry of a timer left queued */
		bs_spin_ns(3 * BS_NSEC_PER_MSEC);
	}
	ctx.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%d events closed while their thread slept (CPU %d, %d sleeper rounds)",
	       closed, ctx.cpu, ctx.round);
	EXPECT_EQ(ROUNDS, closed);
	EXPECT_LE(ROUNDS, ctx.round);
}

TEST_HARNESS_MAIN
