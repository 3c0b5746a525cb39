// SPDX-License-Identifier: GPL-2.0
/*
 * Two CPU-bound threads pinned to one CPU: all the time a thread is off
 * the CPU it is runnable but preempted, so it gets [S] samples only, whose
 * points fit its off-CPU intervals (taken independently from switch
 * records), while its on-CPU points fit its CPU time (task-clock count).
 *
 * The spinners are SCHED_RR at one priority, so they take turns by the
 * round-robin timeslice (100 ms by default): long intervals against the
 * sampling period and the kernel's switch work, whatever the machine's
 * speed.  They run until each has been preempted PREEMPTIONS times (a
 * generous upper bound in time fails the test with a message).
 *
 * Asserted per spinner, over its round-robin phase:
 *  - [S] points: at most floor(R / period) + 1 per off-CPU interval of
 *    length R (switch records), at least floor((R - slack) / period);
 *  - on-CPU points x period within (intervals + 1) x (period + slack) of
 *    the task-clock count over the phase (each on-CPU stretch holds
 *    floor(L / period) or one more points of its length L);
 *  - hardly any other blocked class (a spinner does not sleep).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define NTHREADS	2
#define PREEMPTIONS	6
#define MAX_WALL_S	60

struct spinner {
	pthread_t th;
	int cpu;
	pid_t tid;
	int pin_err;
	int ev_fd;
	uint64_t t_start, t_end;	/* round-robin phase */
	uint64_t c_start, c_end;	/* task-clock count then */
	long preempted;
};

static struct spinner sp[NTHREADS];
static volatile int go;
static volatile uint64_t deadline;

static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

/* The task-clock count (ns on the CPU) of an event this thread can read. */
static uint64_t count(int fd)
{
	uint64_t c;

	return read(fd, &c, sizeof(c)) == sizeof(c) ? c : 0;
}

static bool all_preempted(void)
{
	int i;

	for (i = 0; i < NTHREADS; i++)
		if (__atomic_load_n(&sp[i].preempted, __ATOMIC_ACQUIRE) < PREEMPTIONS)
			return false;
	return true;
}

static void *spin(void *arg)
{
	struct spinner *s = arg;
	long base;

	s->pin_err = bs_pin_self(s->cpu);
	/* Fault the spin loop in now: page faults over 9p would block. */
	bs_spin_ns(BS_NSEC_PER_MSEC);
	nivcsw();
	__atomic_store_n(&s->tid, bs_gettid(), __ATOMIC_RELEASE);
	/* Sleep, not spin: the main thread makes us SCHED_RR meanwhile. */
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		usleep(1000);
	s->c_start = count(s->ev_fd);
	s->t_start = bs_now_ns();
	base = nivcsw();
	while (!all_preempted() && bs_now_ns() < deadline) {
		bs_spin_ns(BS_NSEC_PER_MSEC / 4);
		__atomic_store_n(&s->preempted, nivcsw() - base, __ATOMIC_RELEASE);
	}
	s->t_end = bs_now_ns();
	s->c_end = count(s->ev_fd);
	return NULL;
}

BS_FIXTURE(sched_preempt);

TEST_F_TIMEOUT(sched_preempt, two_spinners_one_cpu, 120)
{
	struct sched_param prio = { .sched_priority = 1 };
	struct bs_event ev[NTHREADS];
	struct perf_event_attr attr;
	int cpu = bs_pick_cpu(), i, err;

	BS_REQUIRE_FEATURE();

	memset(sp, 0, sizeof(sp));
	go = 0;
	for (i = 0; i < NTHREADS; i++) {
		sp[i].cpu = cpu;
		ASSERT_EQ(0, pthread_create(&sp[i].th, NULL, spin, &sp[i]));
	}
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;	/* only weights matter */
	bs_attr_switch_records(&attr);
	for (i = 0; i < NTHREADS; i++) {
		while (!__atomic_load_n(&sp[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		ASSERT_EQ(0, sp[i].pin_err) TH_LOG("cannot pin to CPU %d", cpu);
		BS_OPEN(&ev[i], &attr, sp[i].tid, -1);
		sp[i].ev_fd = ev[i].fd;
	}
	for (i = 0; i < NTHREADS; i++) {
		err = pthread_setschedparam(sp[i].th, SCHED_RR, &prio);
		if (err) {
			deadline = 0;
			__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
			for (i = 0; i < NTHREADS; i++)
				pthread_join(sp[i].th, NULL);
			SKIP(return, "cannot make the spinners SCHED_RR: %s", strerror(err));
		}
	}
	deadline = bs_now_ns() + MAX_WALL_S * 1000000000ULL;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(sp[i].th, NULL);

	for (i = 0; i < NTHREADS; i++) {
		const struct spinner *s = &sp[i];
		uint64_t on, sw, other, cpu_ns = s->c_end - s->c_start;
		double tol;
		struct bs_offcpu off;

		BS_DRAIN(&ev[i]);
		bs_offcpu_bounds(&ev[i].smp, s->tid, s->t_start, s->t_end, attr.sample_period,
				 BS_SLACK_NS, &off);
		on = bs_sum_weight_between(&ev[i].smp, s->tid, BS_ONCPU, s->t_start, s->t_end);
		sw = bs_sum_weight_between(&ev[i].smp, s->tid, BS_S, s->t_start, s->t_end);
		other = bs_sum_blocked_between(&ev[i].smp, s->tid, s->t_start, s->t_end) - sw;
		TH_LOG("spinner %d (tid %d, CPU %d): preempted %ld times in %.2f ms; %.2f ms "
		       "on CPU (task-clock), %.2f ms off in %zu intervals (switch records); "
		       "on-CPU %llu, [S] %llu, other blocked %llu points", i, s->tid, cpu,
		       s->preempted, bs_ms(s->t_end - s->t_start), bs_ms(cpu_ns), bs_ms(off.ns),
		       off.nr, (unsigned long long)on, (unsigned long long)sw,
		       (unsigned long long)other);
		BS_LOG_SUMMARY("spinner", &ev[i].smp, s->tid);
		ASSERT_LE(PREEMPTIONS, s->preempted) {
			TH_LOG("spinner %d was preempted only %ld times in %d s: do SCHED_RR "
			       "threads of one priority take turns (sched_rr_timeslice_ms)?",
			       i, s->preempted, MAX_WALL_S);
		}
		/* Preempted time is all [S], point for point ... */
		BS_EXPECT_BETWEEN("[S] points vs the off-CPU intervals", off.min_points, sw,
				  off.max_points);
		/* ... the on-CPU points match the CPU time ... */
		tol = (off.nr + 1) * bs_ms(attr.sample_period + BS_SLACK_NS);
		BS_EXPECT_BETWEEN("on-CPU points x period vs task-clock (ms)",
				  bs_ms(cpu_ns) - tol, bs_ms(on * attr.sample_period),
				  bs_ms(cpu_ns) + tol);
		/* ... and spinners hardly ever sleep (at most a stray page fault). */
		EXPECT_GE(sw / 20, other);
		bs_event_close(&ev[i]);
	}
}

TEST_HARNESS_MAIN
