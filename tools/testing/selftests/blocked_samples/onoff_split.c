// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that switches every few hundred microseconds (SPIN_US on the
 * CPU, then a NAP_US sleep, for RUN_MS of wall time) gets on-CPU points for
 * its on-CPU time and off-CPU points for its off-CPU time, wherever its
 * switches fall against the sampling points.
 *
 * The on-CPU points follow the event's own count (task-clock), read just
 * before the disable:
 *	count - 2 x period - 1 % <= on-CPU points x period <= count + period
 * (the disable writes the points due after the read)
 * and the off-CPU points of every class follow the rest of the wall time
 * from the enable to that read:
 *	| off-CPU points x period - (wall - count) | <= 2 x period + 1 %
 * One sampling grid in wall time across the gaps fails this: a sample's
 * own cost, and its interrupt's lateness, are spent just after a point,
 * which moves such a thread's switch-outs to just before the points; its
 * sleeps then catch 10-20 % more points than their length, and its
 * on-CPU time loses as many (a TCG guest, 2026-11-26: on-CPU points
 * 107-330 ms short of the count in 3 s).  See "Why on- and off-CPU points
 * are counted apart" in Documentation/admin-guide/perf/blocked-samples.rst.
 *
 * A throttled event drops points, as upstream does.  Under QEMU TCG a
 * sample takes long enough for perf to lower perf_event_max_sample_rate
 * until this event throttles, so, as root, the test raises the rate and
 * turns off the lowering (perf_cpu_time_max_percent = 0) while the event
 * is enabled, and restores both; a run that was throttled anyway is
 * skipped.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define RUN_MS		2000
#define SPIN_US		100
#define NAP_US		50

BS_FIXTURE(onoff_split);

TEST_F_TIMEOUT(onoff_split, spin_nap, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	uint64_t t0, t1, count, period, on, off, naps = 0;
	double on_ms, off_ms, wall_ms, count_ms, tol_on, tol_off;
	pid_t tid = bs_gettid();

	BS_REQUIRE_FEATURE();

	BS_RAISE_SAMPLE_RATE(100000);

	/*
	 * Enabled once its ring buffer is mapped: a sample due before that
	 * has nowhere to go, and the count would hold its points.
	 */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.disabled = 1;
	period = attr.sample_period;
	BS_OPEN(&ev, &attr, 0, -1);
	t0 = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	naps = bs_spin_nap(RUN_MS * BS_NSEC_PER_MSEC, SPIN_US * 1000ULL, NAP_US * 1000ULL);
	count = bs_event_count(&ev);
	t1 = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	bs_sysctl_restore();
	BS_DRAIN(&ev);

	on = bs_sum_weight(&ev.smp, tid, BS_ONCPU);
	off = bs_sum_weight_all(&ev.smp, tid) - on;
	on_ms = bs_ms(on * period);
	off_ms = bs_ms(off * period);
	wall_ms = bs_ms(t1 - t0);
	count_ms = bs_ms(count);
	tol_on = bs_ms(2 * period) + count_ms / 100;
	tol_off = bs_ms(2 * period) + wall_ms / 100;
	TH_LOG("%llu x (%d us spin + %d us nap) in %.1f ms: task-clock %.1f ms, on-CPU "
	       "points %.1f ms (%+.1f); off the CPU %.1f ms, off-CPU points %.1f ms (%+.1f); "
	       "%llu throttles",
	       (unsigned long long)naps, SPIN_US, NAP_US, wall_ms, count_ms, on_ms,
	       on_ms - count_ms, wall_ms - count_ms, off_ms, off_ms - (wall_ms - count_ms),
	       (unsigned long long)ev.smp.nr_throttle);
	BS_LOG_SUMMARY("thread", &ev.smp, tid);

	if (ev.smp.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped (as root the test "
		     "raises perf_event_max_sample_rate)",
		     (unsigned long long)ev.smp.nr_throttle);
	ASSERT_LE(RUN_MS / 2, naps) TH_LOG("too few switches to tell");
	BS_EXPECT_BETWEEN("on-CPU points x period vs the task-clock count (ms)",
			  count_ms - tol_on, on_ms, count_ms + bs_ms(period));
	BS_EXPECT_BETWEEN("off-CPU points x period vs the wall time the count leaves (ms)",
			  wall_ms - count_ms - tol_off, off_ms, wall_ms - count_ms + tol_off);
	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
