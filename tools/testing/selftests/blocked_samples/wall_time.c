// SPDX-License-Identifier: GPL-2.0
/*
 * A blocked event has a sampling point every period of its task's on-CPU
 * time (its count) and one every period of its off-CPU time, and every
 * point from the event's enable on lies in exactly one sample, on or off
 * the CPU, each weighted by the points it stands for.  For a thread that
 * computes and sleeps, the samples up to one of its on-CPU samples then
 * weigh the time from the enable to that sample (whose on-CPU point was
 * just reached), less the off-CPU time since the last off-CPU point, under
 * a period, however many times the thread left the CPU.  On-CPU samples
 * normally have weight 1; a late timer interrupt (common under QEMU TCG)
 * makes one sample stand for the points it missed.
 *
 * The workload has both kinds of gaps: long ones (SPIN_MS on, SLEEP_MS
 * off), and many short sleeps, each a switch-out and a switch-in (at
 * least SHORT_NAPS of them), where points that slipped by a few
 * microseconds per switch, or time counted on both sides of a switch,
 * would show.
 *
 * Asserted: weight >= 1 and period = weight x sample_period for every
 * sample, and, with the enable somewhere in [tb, ta] (the test's clock
 * reads around the ioctl), for every on-CPU sample k at time s_k with W_k
 * the points of all samples up to it:
 *	W_k x period <= s_k - tb		(no point counted twice)
 * and for the best of the on-CPU samples of the TAIL periods at the end
 *	W_k x period > s_k - ta - period - slack	(no point lost)
 * (a sample is taken after its point, by its interrupt latency, which a
 * loaded host may stretch for some samples; BS_SLACK_NS).  Points that
 * lost a few microseconds per switch show over the SHORT_NAPS switches.
 *
 * A throttled event drops points, as upstream does: as root the test
 * raises perf_event_max_sample_rate while the event is enabled (as
 * onoff_split does), and a run throttled anyway is skipped.  Without
 * that, a CI run under QEMU TCG read the end 20.1 ms short.
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
#define SHORT_NAPS	2000
#define SHORT_SPIN_US	300
#define SHORT_NAP_US	50
#define MAX_WALL_S	60
#define TAIL		50	/* periods of computing at the end */

BS_FIXTURE(wall_time);

TEST_F_TIMEOUT(wall_time, compute_and_sleep, 120)
{
	struct perf_event_attr attr;
	uint64_t tb, ta, tail, on, total, deadline;
	int64_t min_all, min_tail;
	size_t n_tail;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	size_t i, oncpu_late = 0;
	int it;

	BS_REQUIRE_FEATURE();

	BS_RAISE_SAMPLE_RATE(100000);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;
	bs_attr_monotonic(&attr);
	attr.disabled = 1;
	BS_OPEN(&ev, &attr, 0, -1);

	tb = bs_now_ns();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	ta = bs_now_ns();
	deadline = ta + MAX_WALL_S * 1000000000ULL;
	for (it = 0; it < ITERS; it++) {
		bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		bs_sleep_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	}
	for (it = 0; it < SHORT_NAPS; it++) {
		bs_spin_ns(SHORT_SPIN_US * 1000ULL);
		bs_sleep_ns(SHORT_NAP_US * 1000ULL);
		if (!(it % 64)) {
			/* Drain as we go: the ring buffer holds 1 MiB. */
			EXPECT_LE(0, bs_event_drain(&ev));
			ASSERT_GT(deadline, bs_now_ns()) {
				TH_LOG("%d short naps took more than %d s", it, MAX_WALL_S);
			}
		}
	}
	/* End on the CPU with a run of on-CPU samples. */
	tail = bs_now_ns();
	bs_spin_ns(TAIL * attr.sample_period);
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	bs_sysctl_restore();
	BS_DRAIN(&ev);

	n_tail = bs_point_offsets(&ev.smp, tid, attr.sample_period, tail, &min_all, &min_tail);
	on = bs_sum_weight(&ev.smp, tid, BS_ONCPU);
	total = bs_sum_weight_all(&ev.smp, tid);
	TH_LOG("%d x (%d ms spin + %d ms sleep), %d x (%d us spin + %d us sleep): enable "
	       "took %.3f ms; points on-CPU %llu, blocked %llu; sample time - points x "
	       "period - enable: >= %.3f ms, at the end (%zu samples) %.3f ms", ITERS,
	       SPIN_MS, SLEEP_MS, SHORT_NAPS, SHORT_SPIN_US, SHORT_NAP_US, bs_ms(ta - tb),
	       (unsigned long long)on, (unsigned long long)(total - on),
	       (min_all - (int64_t)ta) / 1e6, n_tail, (min_tail - (int64_t)ta) / 1e6);
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
	TH_LOG("%zu on-CPU samples, %zu of them with weight > 1 (late timer or points "
	       "that fell due during a switch); %llu throttles",
	       bs_count(&ev.smp, tid, BS_ONCPU), oncpu_late,
	       (unsigned long long)ev.smp.nr_throttle);
	if (ev.smp.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped (as root the test "
		     "raises perf_event_max_sample_rate)",
		     (unsigned long long)ev.smp.nr_throttle);
	EXPECT_LT(0, on);
	EXPECT_LT(0, total - on);
	ASSERT_LE(1, n_tail) TH_LOG("no on-CPU sample in the last %d periods", TAIL);
	EXPECT_LE((int64_t)tb, min_all) {
		TH_LOG("a sample holds %.3f ms more points than the time since the enable",
		       ((int64_t)tb - min_all) / 1e6);
	}
	EXPECT_GT((int64_t)(ta + attr.sample_period + BS_SLACK_NS), min_tail) {
		TH_LOG("the samples at the end hold %.3f ms fewer points than the time "
		       "since the enable: points lost time",
		       (min_tail - (int64_t)ta - (int64_t)attr.sample_period) / 1e6);
	}
	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
