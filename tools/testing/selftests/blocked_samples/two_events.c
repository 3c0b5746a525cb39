// SPDX-License-Identifier: GPL-2.0
/*
 * Two blocked events on the same task, each with its own ring buffer and
 * its own sampling points, see the same off-CPU time.  Asserted for each:
 *  - no point is counted twice or lost from its enable on (as wall_time
 *    checks for one event);
 *  - [B] has at least floor((NAP_MS - slack) / period) points per nap and
 *    at most floor(nap / period) + 1 of each nap's measured length;
 *  - the blocked points fit the off-CPU intervals from the switch records:
 *    at most floor(R / period) + 1, at least floor((R - slack) / period);
 * and per class the two agree within 2 points per interval and per on-CPU
 * stretch (the points' phases differ, and each event's bookkeeping at a
 * switch is shifted by the other's), plus the ends.
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
#define TAIL	50	/* periods of computing at the end */

BS_FIXTURE(two_events);

TEST_F_TIMEOUT(two_events, same_task, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev[2], trk;
	uint64_t tb[2], ta[2], b_max = 0, tail;
	double slept_ms = 0;
	struct bs_offcpu off;
	pid_t tid = bs_gettid();
	int i, c;

	BS_REQUIRE_FEATURE();

	/* Both fully set up (mapped) before either counts. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	attr.disabled = 1;
	BS_OPEN(&ev[0], &attr, 0, -1);
	BS_OPEN(&ev[1], &attr, 0, -1);
	BS_OPEN_TRACKER(&trk, 0);
	for (i = 0; i < 2; i++) {
		tb[i] = bs_now_ns();
		ASSERT_EQ(0, ioctl(ev[i].fd, PERF_EVENT_IOC_ENABLE, 0));
		ta[i] = bs_now_ns();
	}
	for (i = 0; i < NAPS; i++) {
		uint64_t t0 = bs_now_ns(), t1;

		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		t1 = bs_now_ns();
		slept_ms += bs_ms(t1 - t0);
		b_max += (t1 - t0) / attr.sample_period + 1;
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	/* End on the CPU with a run of on-CPU samples. */
	tail = bs_now_ns();
	bs_spin_ns(TAIL * attr.sample_period);
	ioctl(ev[0].fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(ev[1].fd, PERF_EVENT_IOC_DISABLE, 0);
	BS_DRAIN(&ev[0]);
	BS_DRAIN(&ev[1]);
	BS_DRAIN(&trk);
	bs_offcpu_bounds(&trk.smp, tid, 0, 0, attr.sample_period, BS_SLACK_NS, &off);
	TH_LOG("slept %.2f ms in %d naps; off CPU %.2f ms in %zu intervals (switch records)",
	       slept_ms, NAPS, bs_ms(off.ns), off.nr);
	BS_LOG_SUMMARY("event 0", &ev[0].smp, tid);
	BS_LOG_SUMMARY("event 1", &ev[1].smp, tid);

	for (c = BS_ONCPU; c <= BS_L; c++) {
		uint64_t w0 = bs_sum_weight(&ev[0].smp, tid, c);
		uint64_t w1 = bs_sum_weight(&ev[1].smp, tid, c);

		EXPECT_GE(2 * (off.nr + 2), w0 > w1 ? w0 - w1 : w1 - w0) {
			TH_LOG("[%s] weights differ: %llu vs %llu, over %zu intervals",
			       bs_class_name[c], (unsigned long long)w0,
			       (unsigned long long)w1, off.nr);
		}
	}
	for (i = 0; i < 2; i++) {
		uint64_t b = bs_sum_weight(&ev[i].smp, tid, BS_B);
		int64_t min_all, min_tail;
		size_t n_tail;
		uint64_t blocked = bs_sum_weight_all(&ev[i].smp, tid) -
				   bs_sum_weight(&ev[i].smp, tid, BS_ONCPU);
		char what[96];

		snprintf(what, sizeof(what), "event %d [B] points vs the naps", i);
		BS_EXPECT_BETWEEN(what, NAPS * ((NAP_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) /
						attr.sample_period), b, b_max);
		snprintf(what, sizeof(what), "event %d blocked points vs the off-CPU intervals", i);
		BS_EXPECT_BETWEEN(what, off.min_points, blocked, off.max_points);
		/* The points cover the event's whole life, on and off the CPU. */
		n_tail = bs_point_offsets(&ev[i].smp, tid, attr.sample_period, tail,
					 &min_all, &min_tail);
		EXPECT_LE(1, n_tail);
		EXPECT_LE((int64_t)tb[i], min_all) {
			TH_LOG("event %d: a sample holds %.3f ms more points than the time "
			       "since the enable", i, ((int64_t)tb[i] - min_all) / 1e6);
		}
		EXPECT_GT((int64_t)(ta[i] + attr.sample_period + BS_SLACK_NS), min_tail) {
			TH_LOG("event %d: the samples at the end hold %.3f ms fewer points "
			       "than the time since the enable", i,
			       (min_tail - (int64_t)ta[i] - (int64_t)attr.sample_period) / 1e6);
		}
		bs_event_close(&ev[i]);
	}
	bs_event_close(&trk);
}

TEST_HARNESS_MAIN
