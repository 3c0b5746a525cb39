// SPDX-License-Identifier: GPL-2.0
/*
 * A thread sleeping in nanosleep() for 200 ms with a 1 ms task-clock period
 * must get [B] samples whose weights add up to the time it slept, carrying
 * its own context (user callchain, kernel IP of the sleeping function).
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
	double slept_ms, off_ms;
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
	off_ms = bs_ms(bs_offcpu_ns(&trk.smp, tid, NULL));
	slept_ms = bs_ms(t1 - t0);
	b = bs_sum_weight(&ev.smp, tid, BS_B);
	s = bs_sum_weight(&ev.smp, tid, BS_S);
	TH_LOG("nanosleep(%d ms) measured %.2f ms, off CPU %.2f ms (switch records); "
	       "[B] weight %llu, [S] weight %llu", SLEEP_MS, slept_ms, off_ms,
	       (unsigned long long)b, (unsigned long long)s);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	/*
	 * 15% against the requested time: under QEMU TCG the guest's timer
	 * calibration can make every hrtimer fire ~10% late for a whole boot.
	 * The blocked weight must still match the sleep that really happened.
	 */
	BS_EXPECT_NEAR("measured sleep (ms)", slept_ms, SLEEP_MS, 0.15);
	BS_EXPECT_NEAR("[B] weight vs 200 ms", b, SLEEP_MS, 0.15);
	BS_EXPECT_NEAR("[B] weight vs measured sleep", b, slept_ms, 0.10);
	BS_EXPECT_NEAR("[B]+[S] weight vs off-CPU time (switch records)", b + s, off_ms, 0.10);
	/* The interval is blocked sleep, never lock or I/O. */
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_L));
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_I));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_B, geteuid() == 0);

	bs_event_close(&ev);
	bs_event_close(&trk);
}

TEST_HARNESS_MAIN
