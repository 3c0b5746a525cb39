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
 * of several points.  Asserted: most on-CPU samples (more than
 * ONE_POINT_PCT) weigh one point (the timer fired where the task ran; a
 * timer left behind makes almost every sample one of SPIN_MS points, and
 * a host that stalls a TCG guest makes a few samples heavy, so the mean
 * weight says less), the on-CPU points
 * follow the event's task-clock count (two periods plus 1 % short of it
 * at most, one period over; see "Why on- and off-CPU points are counted
 * apart" in Documentation/admin-guide/perf/blocked-samples.rst), and on-
 * plus off-CPU points match the wall time of the run within 20 ms plus
 * 3 %.  As in onoff_split.c, root raises perf_event_max_sample_rate for
 * the run, and a throttled run is skipped.
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
#define ONE_POINT_PCT	40	/* migrate: on-CPU samples of one point */

BS_FIXTURE(timer_keep);

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
	uint64_t t0, t1, on, all, count, period;
	size_t n_on, n_one = 0, i;
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
		bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
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
	for (i = 0; i < ev.smp.nr; i++)
		if (ev.smp.s[i].tid == (uint32_t)tid &&
		    bs_sample_class(&ev.smp.s[i]) == BS_ONCPU &&
		    ev.smp.s[i].weight == 1)
			n_one++;
	TH_LOG("%d moves between CPUs %d and %d, %d naps, in %.1f ms; task-clock %.1f ms, "
	       "on-CPU points %llu in %zu samples (%zu of one point), all points %llu "
	       "(period %llu ns)", turns, cpu[0], cpu[1], naps, bs_ms(t1 - t0),
	       bs_ms(count), (unsigned long long)on, n_on, n_one,
	       (unsigned long long)all, (unsigned long long)period);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	if (ev.smp.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped",
		     (unsigned long long)ev.smp.nr_throttle);
	BS_EXPECT_BETWEEN("on-CPU samples of one point (%)", ONE_POINT_PCT,
			  100.0 * n_one / (n_on ?: 1), 100);
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
