// SPDX-License-Identifier: GPL-2.0
/*
 * Two CPU-bound threads pinned to one CPU: all the time a thread is off
 * the CPU it is runnable but preempted, so its [S] weight must match its
 * off-CPU time (taken independently from switch records), its on-CPU
 * weight its CPU time, and as the two share the CPU about evenly, [S] is
 * about as large as on-CPU.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define NTHREADS	2
#define RUN_MS		1000

struct spinner {
	pthread_t th;
	int cpu;
	pid_t tid;
	int pin_err;
	uint64_t t_open, t_end;	/* event opened, thread done */
};

static volatile int go;
static volatile uint64_t stop_at;

static void *spin(void *arg)
{
	struct spinner *sp = arg;

	sp->pin_err = bs_pin_self(sp->cpu);
	/* Fault the spin loop in now: page faults over 9p would block. */
	bs_spin_ns(BS_NSEC_PER_MSEC);
	__atomic_store_n(&sp->tid, bs_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	while (bs_now_ns() < stop_at)
		;
	sp->t_end = bs_now_ns();
	return NULL;
}

BS_FIXTURE(sched_preempt);

TEST_F_TIMEOUT(sched_preempt, two_spinners_one_cpu, 120)
{
	struct spinner sp[NTHREADS];
	struct bs_event ev[NTHREADS], trk[NTHREADS];
	struct perf_event_attr attr;
	int cpu = bs_pick_cpu(), i;

	BS_REQUIRE_FEATURE();

	go = 0;
	for (i = 0; i < NTHREADS; i++) {
		sp[i].cpu = cpu;
		sp[i].tid = 0;
		ASSERT_EQ(0, pthread_create(&sp[i].th, NULL, spin, &sp[i]));
	}
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;	/* only weights matter */
	for (i = 0; i < NTHREADS; i++) {
		while (!__atomic_load_n(&sp[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		ASSERT_EQ(0, sp[i].pin_err) TH_LOG("cannot pin to CPU %d", cpu);
		sp[i].t_open = bs_now_ns();
		BS_OPEN(&ev[i], &attr, sp[i].tid, -1);
		BS_OPEN_TRACKER(&trk[i], sp[i].tid);
	}
	stop_at = bs_now_ns() + RUN_MS * BS_NSEC_PER_MSEC;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(sp[i].th, NULL);

	for (i = 0; i < NTHREADS; i++) {
		uint64_t on, s, cpu_ns = 0;
		double off_ms;

		EXPECT_EQ(sizeof(cpu_ns), read(ev[i].fd, &cpu_ns, sizeof(cpu_ns)));
		BS_DRAIN(&ev[i]);
		BS_DRAIN(&trk[i]);
		off_ms = bs_ms(bs_offcpu_ns(&trk[i].smp, sp[i].tid, NULL));
		on = bs_sum_weight(&ev[i].smp, sp[i].tid, BS_ONCPU);
		s = bs_sum_weight(&ev[i].smp, sp[i].tid, BS_S);
		TH_LOG("spinner %d (tid %d, CPU %d, %d ms): on-CPU weight %llu, [S] weight %llu",
		       i, sp[i].tid, cpu, RUN_MS, (unsigned long long)on,
		       (unsigned long long)s);
		TH_LOG("spinner %d: %.2f ms since the open: task-clock %.2f ms on CPU, "
		       "%.2f ms off CPU (switch records)", i,
		       bs_ms(sp[i].t_end - sp[i].t_open), bs_ms(cpu_ns), off_ms);
		BS_LOG_SUMMARY("spinner", &ev[i].smp, sp[i].tid);
		EXPECT_LE(RUN_MS / 4, on) TH_LOG("too few on-CPU samples");
		/* Preempted time is all [S], point for point ... */
		BS_EXPECT_NEAR("[S] weight x period vs off-CPU time (ms)",
			       bs_ms(s * attr.sample_period), off_ms, 0.15);
		/* ... and the on-CPU points match the CPU time ... */
		BS_EXPECT_NEAR("on-CPU weight x period vs task-clock (ms)",
			       bs_ms(on * attr.sample_period), bs_ms(cpu_ns), 0.20);
		/*
		 * ... so with the CPU shared about evenly, [S] ~ on-CPU. Loose:
		 * other tasks of the VM also take turns on this CPU, which
		 * makes both spinners wait longer than they run.
		 */
		BS_EXPECT_NEAR("[S] weight vs on-CPU weight", s, on, 0.50);
		/* Spinners hardly ever sleep (at most a stray page fault). */
		EXPECT_GE(s / 20, bs_sum_weight(&ev[i].smp, -1, BS_B) +
				  bs_sum_weight(&ev[i].smp, -1, BS_L) +
				  bs_sum_weight(&ev[i].smp, -1, BS_I));
		bs_event_close(&ev[i]);
		bs_event_close(&trk[i]);
	}
}

TEST_HARNESS_MAIN
