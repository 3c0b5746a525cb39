// SPDX-License-Identifier: GPL-2.0
/*
 * A thread sleeping in nanosleep() for 200 ms with a 1 ms task-clock period
 * must get [B] samples for the time it slept, carrying its own context
 * (user callchain, kernel IP of the sleeping function).
 *
 * Asserted: nanosleep() took at least 200 ms (it never returns early);
 * [B] has at least floor((200 ms - slack) / period) points (the sleep's
 * timer is armed before the switch-out, which follows within the slack,
 * and never fires early) and at most floor(slept / period) + 1; [B] + [S]
 * fit the off-CPU interval from the switch records: at most
 * floor(R / period) + 1, at least floor((R - slack) / period).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define SLEEP_MS	200

BS_FIXTURE(sleep_weight);

TEST_F_TIMEOUT(sleep_weight, nanosleep_200ms, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev, trk;
	uint64_t t0, t1, b, s;
	struct bs_offcpu off;
	double slept_ms;
	pid_t tid = bs_gettid();

	BS_REQUIRE_FEATURE();

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev, &attr, 0, -1);
	BS_OPEN_TRACKER(&trk, 0);

	t0 = bs_now_ns();
	bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	t1 = bs_now_ns();	/* the sample was emitted at schedule-in */

	BS_DRAIN(&ev);
	BS_DRAIN(&trk);
	bs_offcpu_bounds(&trk.smp, tid, 0, 0, attr.sample_period, BS_SLACK_NS, &off);
	slept_ms = bs_ms(t1 - t0);
	b = bs_sum_weight(&ev.smp, tid, BS_B);
	s = bs_sum_weight(&ev.smp, tid, BS_S);
	TH_LOG("nanosleep(%d ms) measured %.2f ms, off CPU %.2f ms in %zu interval(s) "
	       "(switch records); [B] weight %llu, [S] weight %llu", SLEEP_MS, slept_ms,
	       bs_ms(off.ns), off.nr, (unsigned long long)b, (unsigned long long)s);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	EXPECT_LE(SLEEP_MS * BS_NSEC_PER_MSEC, t1 - t0) TH_LOG("nanosleep() returned early");
	BS_EXPECT_BETWEEN("[B] points vs the requested and the measured sleep",
			  (SLEEP_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) / attr.sample_period, b,
			  (t1 - t0) / attr.sample_period + 1);
	BS_EXPECT_BETWEEN("[B]+[S] points vs the off-CPU interval (switch records)",
			  off.min_points, b + s, off.max_points);
	/* The interval is blocked sleep, never lock or I/O. */
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_L));
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_I));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_B, geteuid() == 0);

	bs_event_close(&ev);
	bs_event_close(&trk);
}

TEST_HARNESS_MAIN
