// SPDX-License-Identifier: GPL-2.0
/*
 * Two blocked events on the same task, each with its own ring buffer, see
 * the same off-CPU time: per-class weight totals agree, and each matches
 * the measured sleep.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define NAPS	4
#define NAP_MS	50

BS_FIXTURE(two_events);

TEST_F_TIMEOUT(two_events, same_task, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev[2];
	double slept_ms = 0;
	pid_t tid = bs_gettid();
	int i, c;

	BS_REQUIRE_FEATURE();

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev[0], &attr, 0, -1);
	BS_OPEN(&ev[1], &attr, 0, -1);
	for (i = 0; i < NAPS; i++) {
		uint64_t t0 = bs_now_ns();

		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		slept_ms += bs_ms(bs_now_ns() - t0);
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	BS_DRAIN(&ev[0]);
	BS_DRAIN(&ev[1]);
	TH_LOG("slept %.2f ms in %d naps", slept_ms, NAPS);
	BS_LOG_SUMMARY("event 0", &ev[0].smp, tid);
	BS_LOG_SUMMARY("event 1", &ev[1].smp, tid);

	for (c = BS_B; c <= BS_L; c++) {
		double w0 = bs_sum_weight(&ev[0].smp, tid, c);
		double w1 = bs_sum_weight(&ev[1].smp, tid, c);
		double big = w0 > w1 ? w0 : w1;

		/* Allow one grid point per nap of phase difference. */
		EXPECT_TRUE(fabs(w0 - w1) <= 0.10 * big || fabs(w0 - w1) <= NAPS) {
			TH_LOG("[%s] weights differ: %.0f vs %.0f", bs_class_name[c], w0, w1);
		}
	}
	for (i = 0; i < 2; i++) {
		char what[64];

		snprintf(what, sizeof(what), "event %d [B] weight vs measured sleep", i);
		BS_EXPECT_NEAR(what, bs_sum_weight(&ev[i].smp, tid, BS_B), slept_ms, 0.10);
		bs_event_close(&ev[i]);
	}
}

TEST_HARNESS_MAIN
