// SPDX-License-Identifier: GPL-2.0
/*
 * A thread waiting for a pthread mutex held by another thread sleeps in
 * futex(): the waiter must get [L] samples for the time it waited, with
 * its own context.
 *
 * Each round the holder takes the mutex, sleeps HOLD_MS and notes the time
 * just before it unlocks (u); the waiter notes the time before and after
 * its pthread_mutex_lock() (t0, t1).  The samples are attributed to the
 * rounds by their time (CLOCK_MONOTONIC).  Asserted:
 *  - [L] points: at least floor((u - t0 - slack) / period) per round (the
 *    waiter leaves the CPU within the slack of t0 and is woken no earlier
 *    than u);
 *  - [L] + [S] points during the waits fit the waiter's off-CPU intervals
 *    from its switch records: at most floor(R / period) + 1 per interval of
 *    length R, at least floor((R - slack) / period);
 *  - only the waiter is followed; the [L] samples carry its context.
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

#define ROUNDS		5
#define HOLD_MS		50

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int locked_round, done_round;
static uint64_t unlock_at[ROUNDS + 1];

/* Holds the mutex HOLD_MS per round, sleeping, while the waiter blocks. */
static void *holder(void *arg)
{
	int r;

	for (r = 1; r <= ROUNDS; r++) {
		pthread_mutex_lock(&lock);
		__atomic_store_n(&locked_round, r, __ATOMIC_RELEASE);
		bs_sleep_ns(HOLD_MS * BS_NSEC_PER_MSEC);
		unlock_at[r] = bs_now_ns();
		pthread_mutex_unlock(&lock);
		while (__atomic_load_n(&done_round, __ATOMIC_ACQUIRE) < r)
			bs_sleep_ns(BS_NSEC_PER_MSEC);
	}
	return NULL;
}

BS_FIXTURE(lock_weight);

TEST_F_TIMEOUT(lock_weight, mutex_waiter, 120)
{
	uint64_t t0[ROUNDS + 1], t1[ROUNDS + 1], l_w = 0, ls_w = 0, l_min = 0;
	uint64_t max_points = 0, min_points = 0;
	struct perf_event_attr attr;
	double wait_ms = 0, off_ms = 0;
	size_t intervals = 0;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	pthread_t th;
	int r;

	BS_REQUIRE_FEATURE();

	/* The event follows this (waiter) thread only: no inherit. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_switch_records(&attr);
	BS_OPEN(&ev, &attr, 0, -1);
	ASSERT_EQ(0, pthread_create(&th, NULL, holder, NULL));

	for (r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&locked_round, __ATOMIC_ACQUIRE) < r)
			sched_yield();
		t0[r] = bs_now_ns();
		pthread_mutex_lock(&lock);
		t1[r] = bs_now_ns();
		pthread_mutex_unlock(&lock);
		__atomic_store_n(&done_round, r, __ATOMIC_RELEASE);
	}
	/* Only the mutex waits: not the join, whose glibc frames lack frame pointers. */
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	pthread_join(th, NULL);
	BS_DRAIN(&ev);

	for (r = 1; r <= ROUNDS; r++) {
		uint64_t held = unlock_at[r] - t0[r];
		struct bs_offcpu off;

		/* The holder unlocked while the waiter was waiting. */
		EXPECT_LT(t0[r], unlock_at[r]);
		EXPECT_LE(unlock_at[r], t1[r]);
		wait_ms += bs_ms(t1[r] - t0[r]);
		if (held > BS_SLACK_NS)
			l_min += (held - BS_SLACK_NS) / attr.sample_period;
		l_w += bs_sum_weight_between(&ev.smp, tid, BS_L, t0[r], t1[r]);
		ls_w += bs_sum_weight_between(&ev.smp, tid, BS_L, t0[r], t1[r]) +
			bs_sum_weight_between(&ev.smp, tid, BS_S, t0[r], t1[r]);
		bs_offcpu_bounds(&ev.smp, tid, t0[r], t1[r], attr.sample_period,
				 BS_SLACK_NS, &off);
		off_ms += bs_ms(off.ns);
		intervals += off.nr;
		max_points += off.max_points;
		min_points += off.min_points;
	}
	TH_LOG("waiter waited %.2f ms in %d rounds (holder %d ms each), %.2f ms off the CPU "
	       "in %zu intervals (switch records); [L] %llu, [L]+[S] %llu points during "
	       "the waits", wait_ms, ROUNDS, HOLD_MS, off_ms, intervals,
	       (unsigned long long)l_w, (unsigned long long)ls_w);
	BS_LOG_SUMMARY("waiter", &ev.smp, tid);

	BS_EXPECT_BETWEEN("[L] points during the waits (>= (unlock - lock call - slack) / period)",
			  l_min, l_w, ls_w);
	BS_EXPECT_BETWEEN("[L]+[S] points during the waits vs their off-CPU intervals",
			  min_points, ls_w, max_points);
	/* Only this thread is followed. */
	EXPECT_EQ(ev.smp.nr, bs_count(&ev.smp, tid, BS_ONCPU) + bs_count(&ev.smp, tid, BS_B) +
		  bs_count(&ev.smp, tid, BS_I) + bs_count(&ev.smp, tid, BS_S) +
		  bs_count(&ev.smp, tid, BS_L));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_L, geteuid() == 0);

	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
