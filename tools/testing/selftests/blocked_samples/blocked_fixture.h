/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixture and check macros shared by the blocked samples tests.
 * Include after ../kselftest_harness.h and blocked_util.h.
 *
 * The 6.1 harness runs the test body even when FIXTURE_SETUP calls SKIP(),
 * so setup only records the probe result and every TEST_F starts with
 * BS_REQUIRE_FEATURE().
 */
#ifndef BLOCKED_FIXTURE_H
#define BLOCKED_FIXTURE_H

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* Data pages of ring buffer per event: 1 MiB, enough for every test. */
#define BS_PAGES	256

#define BS_FIXTURE(name)						\
FIXTURE(name) {								\
	int skip;							\
	int probe_err;							\
	struct bs_klog klog;						\
};									\
FIXTURE_SETUP(name)							\
{									\
	self->probe_err = bs_probe_feature();				\
	self->skip = self->probe_err != 0;				\
	bs_klog_mark(&self->klog);					\
}									\
FIXTURE_TEARDOWN(name)							\
{									\
	char first[512];						\
	int bad;							\
									\
	bs_sysctl_restore();						\
	bad = bs_klog_scan(&self->klog, first, sizeof(first));		\
	EXPECT_EQ(0, bad) {						\
		TH_LOG("kernel log got %d new BUG/WARNING/Oops lines, "	\
		       "first: %s", bad, first);			\
	}								\
}

#define BS_REQUIRE_FEATURE() do {					\
	if (self->skip)							\
		SKIP(return, "%s (errno %d)",				\
		     bs_feature_msg(self->probe_err), self->probe_err);	\
} while (0)

/*
 * As root, raise perf_event_max_sample_rate to @rate for the test and keep
 * perf from lowering it (bs_raise_sample_rate()), failing the test if it
 * cannot; others run at the rate they find and skip a throttled run.
 */
#define BS_RAISE_SAMPLE_RATE(rate) do {					\
	int __e = geteuid() == 0 ? bs_raise_sample_rate(rate) : 0;	\
	ASSERT_EQ(0, __e) {						\
		TH_LOG("cannot raise perf_event_max_sample_rate to %ld: %s",\
		       (long)(rate), strerror(-__e));			\
	}								\
} while (0)

/* Open @attr on @pid with a ring buffer, failing the test with a reason. */
#define BS_OPEN(ev, attr, pid, cpu) do {				\
	int __e = bs_event_open((ev), (attr), (pid), (cpu), BS_PAGES);	\
	ASSERT_EQ(0, __e) {						\
		TH_LOG("perf_event_open/mmap(pid=%d, cpu=%d) failed: %s",\
		       (int)(pid), (int)(cpu), strerror(-__e));		\
	}								\
} while (0)

/* Switch-record tracker for @pid (bs_switch_tracker_open()). */
#define BS_OPEN_TRACKER(ev, pid) do {					\
	int __e = bs_switch_tracker_open((ev), (pid));			\
	ASSERT_EQ(0, __e) {						\
		TH_LOG("switch-record tracker on pid %d: %s", (int)(pid),\
		       strerror(-__e));					\
	}								\
} while (0)

/* Drain, and fail on a malformed ring buffer or lost records. */
#define BS_DRAIN(ev) do {						\
	EXPECT_LE(0, bs_event_drain(ev));				\
	EXPECT_EQ(0, (ev)->smp.parse_error) {				\
		TH_LOG("malformed record in the ring buffer");		\
	}								\
	EXPECT_EQ(0, (ev)->smp.lost) {					\
		TH_LOG("%llu records lost (ring buffer too small?)",	\
		       (unsigned long long)(ev)->smp.lost);		\
	}								\
	EXPECT_EQ(0, bs_count(&(ev)->smp, -1, BS_BAD)) {		\
		TH_LOG("samples with more than one blocked bit in misc");\
	}								\
} while (0)

/* lo <= actual <= hi, with the three numbers logged on failure. */
#define BS_EXPECT_BETWEEN(what, lo, actual, hi) do {			\
	double __l = (double)(lo), __a = (double)(actual);		\
	double __h = (double)(hi);					\
	EXPECT_TRUE(__l <= __a && __a <= __h) {				\
		TH_LOG("%s: got %.2f, want %.2f .. %.2f", (what), __a,	\
		       __l, __h);					\
	}								\
} while (0)

/*
 * Open @attr on the calling process once per CPU of the mask @cpus, as perf
 * record does (perf refuses mmap() of an inherited event with cpu == -1):
 * at most @max events into the array @ev, their number into @nev.
 */
#define BS_OPEN_PER_CPU(ev, max, attr, cpus, nev) do {			\
	int __bs_cpu;							\
									\
	(nev) = 0;							\
	for (__bs_cpu = 0; __bs_cpu < CPU_SETSIZE && (nev) < (max);	\
	     __bs_cpu++) {						\
		if (!CPU_ISSET(__bs_cpu, (cpus)))			\
			continue;					\
		BS_OPEN(&(ev)[(nev)], (attr), 0, __bs_cpu);		\
		(nev)++;						\
	}								\
} while (0)

/* Drain @nev events of the array @ev and move their samples into @all. */
#define BS_DRAIN_ALL(ev, nev, all) do {					\
	int __bs_i;							\
									\
	for (__bs_i = 0; __bs_i < (nev); __bs_i++) {				\
		BS_DRAIN(&(ev)[__bs_i]);					\
		ASSERT_EQ(0, bs_samples_move((all), &(ev)[__bs_i].smp));	\
	}								\
} while (0)

/*
 * Blocked samples of @tid in class @cls carry the blocked thread's context:
 * a user callchain part, and (root, kernel not excluded) a kernel IP outside
 * the scheduler and perf.
 */
#define BS_EXPECT_CONTEXT(smp, tid, cls, want_kernel) do {		\
	struct bs_ctx_report __r;					\
	bool __wk = (want_kernel);					\
									\
	if (__wk && !bs_ksyms_available())				\
		TH_LOG("/proc/kallsyms addresses hidden: IP symbol check skipped");\
	bs_check_context((smp), (tid), (cls), __wk, &__r);		\
	TH_LOG("context of %zu [%s] samples: no-user-chain=%zu "	\
	       "non-kernel-ip=%zu bad-cpumode=%zu sched/perf-ip=%zu "	\
	       "unresolved=%zu example-ip-symbol=%s", __r.checked,	\
	       bs_class_name[cls], __r.no_user_chain, __r.not_kernel_ip,\
	       __r.bad_cpumode, __r.forbidden_sym, __r.unresolved,	\
	       __r.example[0] ? __r.example : "-");			\
	EXPECT_LT(0, __r.checked);					\
	EXPECT_EQ(0, __r.no_user_chain) TH_LOG("%s", __r.first_problem);\
	if (__wk) {							\
		EXPECT_EQ(0, __r.not_kernel_ip) TH_LOG("%s", __r.first_problem);\
		EXPECT_EQ(0, __r.bad_cpumode) TH_LOG("%s", __r.first_problem);\
		EXPECT_EQ(0, __r.forbidden_sym) TH_LOG("%s", __r.first_problem);\
	}								\
} while (0)

#define BS_LOG_SUMMARY(label, smp, tid) do {				\
	char __b[512];							\
	TH_LOG("%s tid %d: %s", (label), (int)(tid),			\
	       bs_summary((smp), (tid), __b, sizeof(__b)));		\
} while (0)

#endif /* BLOCKED_FIXTURE_H */
