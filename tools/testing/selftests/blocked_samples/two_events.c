// SPDX-License-Identifier: GPL-2.0
/*
 * Two blocked events on the same task, each with its own ring buffer, see
 * the same off-CPU time: per-class weight totals agree, and each matches
 * the measured sleep.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/ioctl.h>
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
	struct bs_event ev[2], trk;
	double slept_ms = 0, off_ms, wall_ms;
	uint64_t t_open, t_end;
	size_t switches;
	pid_t tid = bs_gettid();
	int i, c;

	BS_REQUIRE_FEATURE();

	/* Both fully set up (mapped) before either counts. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.disabled = 1;
	BS_OPEN(&ev[0], &attr, 0, -1);
	BS_OPEN(&ev[1], &attr, 0, -1);
	BS_OPEN_TRACKER(&trk, 0);
	t_open = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev[0].fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(ev[1].fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < NAPS; i++) {
		uint64_t t0 = bs_now_ns();

		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		slept_ms += bs_ms(bs_now_ns() - t0);
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	ioctl(ev[0].fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(ev[1].fd, PERF_EVENT_IOC_DISABLE, 0);
	t_end = bs_now_ns();	/* after the disables: their points are in */
	wall_ms = bs_ms(t_end - t_open);
	BS_DRAIN(&ev[0]);
	BS_DRAIN(&ev[1]);
	BS_DRAIN(&trk);
	off_ms = bs_ms(bs_offcpu_ns(&trk.smp, tid, &switches));
	TH_LOG("slept %.2f ms in %d naps; off CPU %.2f ms in %zu intervals (switch "
	       "records); %.2f ms from enable to disable", slept_ms, NAPS, off_ms,
	       switches, wall_ms);
	BS_LOG_SUMMARY("event 0", &ev[0].smp, tid);
	BS_LOG_SUMMARY("event 1", &ev[1].smp, tid);

	for (c = BS_ONCPU; c <= BS_L; c++) {
		double w0 = bs_sum_weight(&ev[0].smp, tid, c);
		double w1 = bs_sum_weight(&ev[1].smp, tid, c);
		double big = w0 > w1 ? w0 : w1;
		size_t n0 = bs_count(&ev[0].smp, tid, c);
		size_t n1 = bs_count(&ev[1].smp, tid, c);

		/*
		 * The two grids have different phases: each interval may
		 * hold one point more in one of them.
		 */
		EXPECT_TRUE(fabs(w0 - w1) <= 0.10 * big + (n0 > n1 ? n0 : n1) + switches) {
			TH_LOG("[%s] weights differ: %.0f (%zu samples) vs %.0f (%zu samples)",
			       bs_class_name[c], w0, n0, w1, n1);
		}
	}
	for (i = 0; i < 2; i++) {
		uint64_t b = bs_sum_weight(&ev[i].smp, tid, BS_B);
		uint64_t off = bs_sum_weight_all(&ev[i].smp, tid) -
			       bs_sum_weight(&ev[i].smp, tid, BS_ONCPU);
		char what[80];

		/*
		 * [B] runs from switch-out to the timer's wake-up, so it is the
		 * requested sleep (plus timer slack), however long the VM
		 * took to get the thread in and out of nanosleep(); 15% as the
		 * TCG guest's timers may all fire ~10% late in a given boot.
		 */
		snprintf(what, sizeof(what), "event %d [B] weight vs requested sleep", i);
		BS_EXPECT_NEAR(what, b, NAPS * NAP_MS, 0.15);
		snprintf(what, sizeof(what), "event %d blocked weight vs off-CPU time", i);
		BS_EXPECT_NEAR(what, off, off_ms, 0.10);
		/* The grid covers the event's whole life, on and off the CPU. */
		snprintf(what, sizeof(what), "event %d sum(weight) x period vs wall time", i);
		BS_EXPECT_NEAR(what, bs_ms(bs_sum_weight_all(&ev[i].smp, tid) *
					   attr.sample_period), wall_ms, 0.10);
		bs_event_close(&ev[i]);
	}
	bs_event_close(&trk);
}

TEST_HARNESS_MAIN
