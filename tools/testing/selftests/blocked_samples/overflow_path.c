// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked samples are overflows like any other: they go through
 * perf_event_overflow(), so the limits perf puts on samples hold for them.
 *
 * refresh_limit: PERF_EVENT_IOC_REFRESH(3) on a disabled blocked event, then
 * ten 20 ms sleeps.  The event must stop after exactly 3 samples (the
 * event_limit counts every overflow, blocked ones included) and at least one
 * of them is blocked; a kernel that writes blocked samples on the side
 * emits one per sleep, about 10.
 *
 * throttle: with kernel.perf_event_max_sample_rate = 1 every overflow
 * reaches max_samples_per_tick (1) and throttles the event, logging a
 * PERF_RECORD_THROTTLE; a throttled event samples nothing until perf
 * unthrottles it (at the next tick or schedule-in).  A thread sleeping
 * 200 us at a time for 1 s, period 100 us: every sample written must be
 * followed by its THROTTLE record (throttles == samples), and blocked
 * samples must be among them.  Blocked samples that bypass the overflow
 * path show as samples without THROTTLE records.  Needs root (sysctl);
 * the old rate is restored.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define RATE_PATH	BS_MAX_SAMPLE_RATE
#define LIMIT		3

BS_FIXTURE(overflow_path);

TEST_F_TIMEOUT(overflow_path, refresh_limit, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	size_t n, blocked;
	pid_t tid = bs_gettid();
	int i;

	BS_REQUIRE_FEATURE();

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.disabled = 1;
	BS_OPEN(&ev, &attr, 0, -1);
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_REFRESH, LIMIT))
		TH_LOG("PERF_EVENT_IOC_REFRESH: %m");

	for (i = 0; i < 10; i++)
		bs_sleep_ns(20 * BS_NSEC_PER_MSEC);

	BS_DRAIN(&ev);
	n = ev.smp.nr;
	blocked = n - bs_count(&ev.smp, tid, BS_ONCPU);
	TH_LOG("event_limit %d: %zu samples written, %zu of them blocked", LIMIT,
	       n, blocked);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);
	EXPECT_EQ(LIMIT, n) TH_LOG("the event did not stop at its event_limit");
	EXPECT_LE(1, blocked) TH_LOG("no blocked sample counted toward the limit");

	bs_event_close(&ev);
}

TEST_F_TIMEOUT(overflow_path, throttle, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	size_t n, blocked;
	uint64_t t0;
	pid_t tid = bs_gettid();
	int werr;

	BS_REQUIRE_FEATURE();
	if (geteuid() != 0)
		SKIP(return, "needs root to set %s", RATE_PATH);

	bs_make_attr(&attr, 100000, true);
	attr.disabled = 1;
	BS_OPEN(&ev, &attr, 0, -1);
	werr = bs_sysctl_set(RATE_PATH, 1);
	ASSERT_EQ(0, werr) TH_LOG("cannot write 1 to %s: %m", RATE_PATH);
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));

	t0 = bs_now_ns();
	while (bs_now_ns() - t0 < 1000 * BS_NSEC_PER_MSEC)
		bs_sleep_ns(200000);
	ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0);

	bs_sysctl_restore();
	BS_DRAIN(&ev);
	n = ev.smp.nr;
	blocked = n - bs_count(&ev.smp, tid, BS_ONCPU);
	TH_LOG("rate 1/s: %zu samples (%zu blocked), %llu THROTTLE, %llu UNTHROTTLE records",
	       n, blocked,
	       (unsigned long long)ev.smp.nr_throttle,
	       (unsigned long long)ev.smp.nr_unthrottle);
	EXPECT_LE(10, blocked) TH_LOG("too few blocked samples to judge");
	EXPECT_EQ(n, ev.smp.nr_throttle)
		TH_LOG("samples written without being accounted as overflows");

	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
