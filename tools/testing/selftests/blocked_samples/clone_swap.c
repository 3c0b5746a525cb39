// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads that share inherited events (one per CPU, as perf record
 * opens them) hand a byte back and forth through two pipes on one CPU, so
 * every switch goes straight from one to the other.  Their contexts are
 * clones, and perf core swaps them at such a switch instead of scheduling
 * the events out and in: the event that counted for one thread counts for
 * the other from then on.  The blocked events hand over what they saw of
 * each thread (__perf_blocked_ctx_swap()), so each thread's blocked points
 * must still weigh its own off-CPU time: the wall time less its CPU time,
 * both read by the thread itself.  (A switch-record tracker, as the other
 * tests use, would add an event to the child's context and unclone it.)
 * Their on-CPU points together must weigh their CPU time together: the
 * event that counts at a switch counts for both threads in turn, and a
 * context that is only ever swapped is never scheduled in again, so its
 * time must not be taken as the count's start (an unthrottle once added
 * seconds to the count).  The run lasts RUN_MS and must make at least
 * MIN_TRIPS round trips; a throttled run is skipped (points dropped).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define RUN_MS		1000
#define MIN_TRIPS	500
#define MAX_CPUS	64

struct side {
	pid_t tid;
	uint64_t t0, t1, cpu0, cpu1;	/* CLOCK_MONOTONIC, thread CPU time */
	long trips;
	int err;
};

static struct {
	int cpu;
	int p2c[2], c2p[2];
	struct side parent, child;
} ctx;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void side_begin(struct side *s)
{
	s->tid = bs_gettid();
	s->cpu0 = thread_cpu_ns();
	s->t0 = bs_now_ns();
}

static void side_end(struct side *s)
{
	s->t1 = bs_now_ns();
	s->cpu1 = thread_cpu_ns();
}

static void *child(void *arg)
{
	char c = 0;

	ctx.child.err = bs_pin_self(ctx.cpu);
	side_begin(&ctx.child);
	for (;;) {
		if (read(ctx.p2c[0], &c, 1) != 1) {
			ctx.child.err = -1;
			break;
		}
		if (c == 'q')
			break;
		if (write(ctx.c2p[1], &c, 1) != 1) {
			ctx.child.err = -1;
			break;
		}
		ctx.child.trips++;
	}
	side_end(&ctx.child);
	return arg;
}

BS_FIXTURE(clone_swap);

/* Blocked points of @s against its off-CPU time, logged; returns points. */
static uint64_t side_points(struct __test_metadata *_metadata, const char *name,
			    const struct bs_samples *all, const struct side *s,
			    uint64_t *off_ns)
{
	uint64_t pts = bs_sum_blocked_between(all, s->tid, s->t0, s->t1);
	char buf[512];

	*off_ns = (s->t1 - s->t0) - (s->cpu1 - s->cpu0);
	TH_LOG("%s tid %d: %ld trips, %.1f ms wall, %.1f ms CPU, %.1f ms off CPU; "
	       "blocked points %llu (%.1f ms); %s", name, s->tid, s->trips,
	       bs_ms(s->t1 - s->t0), bs_ms(s->cpu1 - s->cpu0), bs_ms(*off_ns),
	       (unsigned long long)pts, bs_ms(pts * BS_DEFAULT_PERIOD_NS),
	       bs_summary(all, s->tid, buf, sizeof(buf)));
	return pts;
}

TEST_F_TIMEOUT(clone_swap, ping_pong_same_cpu, 120)
{
	static struct bs_event ev[MAX_CPUS];
	struct bs_samples all = { 0 };
	struct perf_event_attr attr;
	uint64_t deadline, off, pts, on = 0, cpu_ns = 0;
	const struct side *sides[2] = { &ctx.parent, &ctx.child };
	const char *names[2] = { "parent", "child" };
	int nev = 0, i;
	cpu_set_t cpus;
	pthread_t th;
	char c = 'x';

	BS_REQUIRE_FEATURE();
	BS_RAISE_SAMPLE_RATE(100000);
	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	ctx.cpu = bs_pick_cpu();
	ASSERT_EQ(0, bs_pin_self(ctx.cpu));
	ASSERT_EQ(0, pipe(ctx.p2c));
	ASSERT_EQ(0, pipe(ctx.c2p));

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	attr.inherit = 1;
	BS_OPEN_PER_CPU(ev, MAX_CPUS, &attr, &cpus, nev);
	/* The child's context is cloned from ours here; nothing is added after. */
	ASSERT_EQ(0, pthread_create(&th, NULL, child, NULL));

	side_begin(&ctx.parent);
	deadline = ctx.parent.t0 + RUN_MS * BS_NSEC_PER_MSEC;
	while (bs_now_ns() < deadline) {
		ASSERT_EQ(1, write(ctx.p2c[1], &c, 1));
		ASSERT_EQ(1, read(ctx.c2p[0], &c, 1));
		ctx.parent.trips++;
	}
	side_end(&ctx.parent);
	c = 'q';
	ASSERT_EQ(1, write(ctx.p2c[1], &c, 1));
	pthread_join(th, NULL);
	ASSERT_EQ(0, ctx.child.err);

	BS_DRAIN_ALL(ev, nev, &all);
	ASSERT_LE(MIN_TRIPS, ctx.parent.trips) {
		TH_LOG("%ld round trips in %d ms: too few switches to judge",
		       ctx.parent.trips, RUN_MS);
	}
	if (all.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped",
		     (unsigned long long)all.nr_throttle);

	/*
	 * Each thread's off-CPU time, as its own clocks have it, in points:
	 * within 2 points, for the edges of the window, and 3 % for the
	 * kernel's path between the thread's clock reads and the switches
	 * at each of thousands of switches.
	 */
	for (i = 0; i < 2; i++) {
		pts = side_points(_metadata, names[i], &all, sides[i], &off);
		BS_EXPECT_BETWEEN(names[i],
				  off * 0.97 / BS_DEFAULT_PERIOD_NS - 2,
				  pts, off * 1.03 / BS_DEFAULT_PERIOD_NS + 2);
		on += bs_sum_weight_between(&all, sides[i]->tid, BS_ONCPU,
					    sides[i]->t0, sides[i]->t1);
		cpu_ns += sides[i]->cpu1 - sides[i]->cpu0;
	}
	TH_LOG("on-CPU points of both %llu, CPU time of both %.1f ms",
	       (unsigned long long)on, bs_ms(cpu_ns));
	BS_EXPECT_BETWEEN("on-CPU points of both threads",
			  cpu_ns * 0.97 / BS_DEFAULT_PERIOD_NS - 4,
			  on, cpu_ns * 1.03 / BS_DEFAULT_PERIOD_NS + 4);
	bs_samples_free(&all);
	for (i = 0; i < nev; i++)
		bs_event_close(&ev[i]);
	close(ctx.p2c[0]);
	close(ctx.p2c[1]);
	close(ctx.c2p[0]);
	close(ctx.c2p[1]);
}

TEST_HARNESS_MAIN
