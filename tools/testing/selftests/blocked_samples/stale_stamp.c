// SPDX-License-Identifier: GPL-2.0
/*
 * A task's switch-out stamp must not outlive the switch it was taken at.
 *
 * A sleeper's only blocked event is closed while it sleeps, and every
 * task event in the system is then gone: a second later perf core stops
 * calling its sched-in hooks (perf_sched_events).  The sleeper wakes and
 * computes; while it runs, two new blocked events are opened on it, the
 * second one rescheduling the first (pmu::del() and pmu::add() outside any
 * switch).  A stamp left from the old sleep would be taken for a switch
 * there, and the first event would report the whole time since that
 * sleep, seconds, as one off-CPU interval.
 *
 * Asserted: no sample of either event weighs more points than the time
 * from its open to its close, plus a point.  (With another task event
 * open in the system, perf core's hook stays on and the test shows
 * nothing either way.)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define SLEEP_MS	2500	/* the old sleep: its event closed at CLOSE_MS */
#define CLOSE_MS	100
#define RUN_MS		400	/* the sleeper computes this long after it */

BS_FIXTURE(stale_stamp);

static struct {
	volatile pid_t tid;
	volatile int go, awake, opened, done;
} ctx;

static void *sleeper(void *arg)
{
	ctx.tid = bs_gettid();
	/* runs until its event is open, so that it sleeps with it */
	while (!__atomic_load_n(&ctx.go, __ATOMIC_ACQUIRE))
		;
	bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	__atomic_store_n(&ctx.awake, 1, __ATOMIC_RELEASE);
	bs_spin_ns(RUN_MS * BS_NSEC_PER_MSEC);
	/*
	 * A loaded host can hold the opener past RUN_MS (a CI run whose VM
	 * shared the host with another: perf_event_open on the exited
	 * sleeper, ESRCH): stay until both events are open, and run a
	 * while with them.
	 */
	if (!__atomic_load_n(&ctx.opened, __ATOMIC_ACQUIRE)) {
		while (!__atomic_load_n(&ctx.opened, __ATOMIC_ACQUIRE))
			;
		bs_spin_ns(RUN_MS / 4 * BS_NSEC_PER_MSEC);
	}
	__atomic_store_n(&ctx.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST_F_TIMEOUT(stale_stamp, reopen_after_keys_off, 120)
{
	struct perf_event_attr attr;
	struct bs_event old, a, b;
	uint64_t t_open, t_close, limit;
	pthread_t th;

	BS_REQUIRE_FEATURE();

	ASSERT_EQ(0, pthread_create(&th, NULL, sleeper, NULL));
	while (!ctx.tid)
		usleep(1000);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);

	/* the sleeper is stamped at its switch-out with this event on it */
	BS_OPEN(&old, &attr, ctx.tid, -1);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	usleep(CLOSE_MS * 1000);
	bs_event_close(&old);

	while (!__atomic_load_n(&ctx.awake, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(50 * 1000);	/* it runs, with whatever it kept */
	t_open = bs_now_ns();
	BS_OPEN(&a, &attr, ctx.tid, -1);
	BS_OPEN(&b, &attr, ctx.tid, -1);	/* reschedules a on the task */
	__atomic_store_n(&ctx.opened, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctx.done, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_join(th, NULL);
	t_close = bs_now_ns();

	BS_DRAIN(&a);
	BS_DRAIN(&b);
	limit = (t_close - t_open) / attr.sample_period + 1;
	TH_LOG("events open for %.1f ms on the sleeper woken from a %d ms sleep; heaviest "
	       "samples: a %llu, b %llu points (limit %llu)", bs_ms(t_close - t_open),
	       SLEEP_MS, (unsigned long long)bs_max_weight(&a.smp, ctx.tid, BS_B),
	       (unsigned long long)bs_max_weight(&b.smp, ctx.tid, BS_B),
	       (unsigned long long)limit);
	BS_LOG_SUMMARY("event a", &a.smp, ctx.tid);
	BS_LOG_SUMMARY("event b", &b.smp, ctx.tid);
	for (int c = BS_ONCPU; c < BS_NR_CLASSES; c++) {
		EXPECT_GE(limit, bs_max_weight(&a.smp, ctx.tid, c)) {
			TH_LOG("event a: a [%s] sample outweighs the time it was open",
			       bs_class_name[c]);
		}
		EXPECT_GE(limit, bs_max_weight(&b.smp, ctx.tid, c)) {
			TH_LOG("event b: a [%s] sample outweighs the time it was open",
			       bs_class_name[c]);
		}
	}
	bs_event_close(&a);
	bs_event_close(&b);
}

TEST_HARNESS_MAIN
