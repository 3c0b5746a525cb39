// SPDX-License-Identifier: GPL-2.0
/*
 * A thread waiting for a pthread mutex held by another thread sleeps in
 * futex(): the waiter must get [L] samples whose weights add up to the time
 * it waited, with its own context.
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

/* Holds the mutex HOLD_MS per round, sleeping, while the waiter blocks. */
static void *holder(void *arg)
{
	int r;

	for (r = 1; r <= ROUNDS; r++) {
		pthread_mutex_lock(&lock);
		__atomic_store_n(&locked_round, r, __ATOMIC_RELEASE);
		bs_sleep_ns(HOLD_MS * BS_NSEC_PER_MSEC);
		pthread_mutex_unlock(&lock);
		while (__atomic_load_n(&done_round, __ATOMIC_ACQUIRE) < r)
			bs_sleep_ns(BS_NSEC_PER_MSEC);
	}
	return NULL;
}

BS_FIXTURE(lock_weight);

TEST_F_TIMEOUT(lock_weight, mutex_waiter, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	uint64_t l_w, s_w;
	double wait_ms = 0, off_ms = 0;
	pid_t tid = bs_gettid();
	pthread_t th;
	int r;

	BS_REQUIRE_FEATURE();

	/* The event follows this (waiter) thread only: no inherit. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev, &attr, 0, -1);
	ASSERT_EQ(0, pthread_create(&th, NULL, holder, NULL));

	for (r = 1; r <= ROUNDS; r++) {
		uint64_t t0, t1, c0, c1;

		while (__atomic_load_n(&locked_round, __ATOMIC_ACQUIRE) < r)
			sched_yield();
		c0 = bs_event_count(&ev);
		t0 = bs_now_ns();
		pthread_mutex_lock(&lock);
		t1 = bs_now_ns();
		c1 = bs_event_count(&ev);
		pthread_mutex_unlock(&lock);
		wait_ms += bs_ms(t1 - t0);
		if (t1 - t0 > c1 - c0)
			off_ms += bs_ms((t1 - t0) - (c1 - c0));
		__atomic_store_n(&done_round, r, __ATOMIC_RELEASE);
	}
	/* Only the mutex waits: not the join, whose glibc frames lack frame pointers. */
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	pthread_join(th, NULL);
	BS_DRAIN(&ev);

	l_w = bs_sum_weight(&ev.smp, tid, BS_L);
	s_w = bs_sum_weight(&ev.smp, tid, BS_S);
	TH_LOG("waiter waited %.2f ms (%.2f ms off CPU) for the mutex in %d rounds "
	       "(holder %d ms each); [L] weight %llu, [S] weight %llu", wait_ms, off_ms,
	       ROUNDS, HOLD_MS, (unsigned long long)l_w, (unsigned long long)s_w);
	BS_LOG_SUMMARY("waiter", &ev.smp, tid);

	ASSERT_LE(ROUNDS * HOLD_MS * 0.5, wait_ms) TH_LOG("waiter hardly waited");
	BS_EXPECT_NEAR("[L] weight vs measured wait", l_w, wait_ms, 0.15);
	BS_EXPECT_NEAR("[L]+[S] weight vs off-CPU wait", l_w + s_w, off_ms, 0.10);
	/* Only this thread is followed. */
	EXPECT_EQ(ev.smp.nr, bs_count(&ev.smp, tid, BS_ONCPU) + bs_count(&ev.smp, tid, BS_B) +
		  bs_count(&ev.smp, tid, BS_I) + bs_count(&ev.smp, tid, BS_S) +
		  bs_count(&ev.smp, tid, BS_L));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_L, geteuid() == 0);

	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
