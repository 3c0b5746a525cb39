// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling grid runs on across off-CPU gaps, so for a thread that
 * alternates computing and sleeping, on-CPU samples plus blocked samples,
 * each weighted by the grid points it stands for, times the period add up
 * to its wall time. On-CPU samples normally have weight 1; a late timer
 * interrupt (common under QEMU TCG) makes one sample stand for the points
 * it missed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define ITERS		8
#define SPIN_MS		15
#define SLEEP_MS	15

BS_FIXTURE(wall_time);

TEST_F_TIMEOUT(wall_time, compute_and_sleep, 120)
{
	struct perf_event_attr attr;
	uint64_t t0, t1, total, on, off, cpu_ns = 0;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	double wall_ms;
	size_t i, oncpu_late = 0;
	int it;

	BS_REQUIRE_FEATURE();

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;
	attr.disabled = 1;
	BS_OPEN(&ev, &attr, 0, -1);

	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	t0 = bs_now_ns();
	for (it = 0; it < ITERS; it++) {
		bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	}
	/* End on-CPU so that the last off-CPU part has been emitted. */
	bs_spin_ns(2 * BS_NSEC_PER_MSEC);
	t1 = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ(sizeof(cpu_ns), read(ev.fd, &cpu_ns, sizeof(cpu_ns)));
	BS_DRAIN(&ev);

	wall_ms = bs_ms(t1 - t0);
	on = bs_sum_weight(&ev.smp, tid, BS_ONCPU);
	total = bs_sum_weight_all(&ev.smp, tid);
	off = total - on;
	TH_LOG("wall %.2f ms (%d x %d ms spin + %d ms sleep); on-CPU weight %llu, "
	       "blocked weight %llu, total %llu x %.3f ms = %.2f ms", wall_ms, ITERS,
	       SPIN_MS, SLEEP_MS, (unsigned long long)on, (unsigned long long)off,
	       (unsigned long long)total, bs_ms(attr.sample_period),
	       bs_ms(total * attr.sample_period));
	TH_LOG("task-clock count %.2f ms on CPU (on-CPU weight x period %.2f ms)",
	       bs_ms(cpu_ns), bs_ms(on * attr.sample_period));
	BS_LOG_SUMMARY("thread", &ev.smp, tid);

	/* Every sample stands for >= 1 point, and its period says so. */
	for (i = 0; i < ev.smp.nr; i++) {
		const struct bs_sample *s = &ev.smp.s[i];

		EXPECT_LE(1, s->weight);
		EXPECT_EQ(s->weight * attr.sample_period, s->period);
		if (bs_sample_class(s) == BS_ONCPU && s->weight != 1)
			oncpu_late++;
		if (!_metadata->passed)
			break;	/* one report is enough */
	}
	TH_LOG("%zu on-CPU samples, %zu of them with weight > 1 (late timer)",
	       bs_count(&ev.smp, tid, BS_ONCPU), oncpu_late);
	/* The on-CPU points add up to the CPU time. */
	BS_EXPECT_NEAR("on-CPU weight x period vs task-clock count (ms)",
		       bs_ms(on * attr.sample_period), bs_ms(cpu_ns), 0.20);
	EXPECT_LT(0, on);
	EXPECT_LT(0, off);
	BS_EXPECT_NEAR("sum(weight) x period vs wall time (ms)",
		       bs_ms(total * attr.sample_period), wall_ms, 0.10);
	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
