// SPDX-License-Identifier: GPL-2.0
/*
 * Without attr.blocked a task-clock event behaves as upstream: no blocked
 * samples, none of the misc bits 0x78, and PERF_SAMPLE_WEIGHT reads 0.
 * This also runs (and must pass) on kernels without the feature.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

BS_FIXTURE(no_blocked_bit);

TEST_F_TIMEOUT(no_blocked_bit, plain_task_clock, 120)
{
	struct perf_event_attr attr;
	size_t i, misc_bits = 0, nonzero_weight = 0;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	int it;

	/* No feature check: this is the upstream behaviour. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, false);
	ASSERT_FALSE(bs_get_blocked(&attr));
	BS_OPEN(&ev, &attr, 0, -1);

	for (it = 0; it < 3; it++) {
		bs_spin_ns(20 * BS_NSEC_PER_MSEC);
		bs_sleep_ns(50 * BS_NSEC_PER_MSEC);
	}
	bs_spin_ns(5 * BS_NSEC_PER_MSEC);
	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("plain task-clock", &ev.smp, tid);

	for (i = 0; i < ev.smp.nr; i++) {
		if (ev.smp.s[i].misc & PERF_RECORD_MISC_BLOCKED_MASK)
			misc_bits++;
		if (ev.smp.s[i].weight)
			nonzero_weight++;
	}
	TH_LOG("%zu samples: %zu with misc & 0x%x, %zu with weight != 0",
	       ev.smp.nr, misc_bits, PERF_RECORD_MISC_BLOCKED_MASK, nonzero_weight);
	EXPECT_LE(10, ev.smp.nr) TH_LOG("expected on-CPU samples from 65 ms of spinning");
	EXPECT_EQ(0, misc_bits);
	EXPECT_EQ(0, nonzero_weight);
	EXPECT_EQ(ev.smp.nr, bs_count(&ev.smp, tid, BS_ONCPU));
	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
