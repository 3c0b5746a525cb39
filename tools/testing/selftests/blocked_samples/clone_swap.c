// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads that share inherited events (one per CPU, as perf record
 * opens them) hand a byte back and forth through two pipes on one CPU, so
 * every switch goes straight from one to the other.  Their contexts are
 * clones, and perf core swaps them at such a switch instead of scheduling
 * the events out and in: the event that counted for one thread counts for
 * the other from then on.  The blocked events hand over what they saw of
 * each thread (__perf_blocked_ctx_swap()), so each thread's blocked points
 * must still weigh its own off-CPU time, from its first clock read to its
 * last.  The parent spins PARENT_SPIN_US before each byte it sends, the
 * child CHILD_SPIN_US, so the child is off the CPU longer than the parent
 * (three times as long on hardware, half as long again in a TCG guest,
 * where the switch work is long): points handed to the wrong thread show.
 * Their on-CPU points together must weigh their time on the CPU together:
 * the event that counts at a switch counts for both threads in turn, and
 * a context that is only ever swapped is never scheduled in again, so its
 * time must not be taken as the count's start (an unthrottle once added
 * seconds to the count).
 *
 * The off-CPU time comes from the switch records of a CPU-wide tracker on
 * the threads' CPU (offcpu_ns()): it lives in the CPU's context, so the
 * task contexts stay clones (a per-task tracker, as the other tests use,
 * would unclone them).  The threads' CPU time clocks are no measure of it:
 * the scheduler charges CPU time up to its runqueue clock, read before the
 * switch work (and, at a wakeup that preempts, at the wakeup), and the
 * time between goes to the next thread.  That is microseconds on hardware,
 * but in a TCG guest whose vCPU the host stalls it moved 80 ms a second
 * between the threads, while the blocked points matched a sched_switch
 * trace to 8 ms.  The switch records are written a little before the
 * switch work too: a stall between the two moves its length (17 ms on a
 * loaded host) from one thread's off-CPU time to the other's on-CPU time.
 * The checks allow STALL_PCT of the window for that, a quarter of what
 * points handed to the wrong thread would move in the guest.
 *
 * The run lasts RUN_MS or MAX_TRIPS round trips, whichever comes first
 * (the tracker's ring holds the records of MAX_TRIPS), and must make at
 * least MIN_TRIPS; a throttled run is skipped (points dropped).
 *
 * wake_on_younger_clone: a thread that sleeps on one CPU and is woken onto
 * another, where the task it follows owns a context cloned after the
 * sleeper went to sleep.  The swap hands the sleeper that context, whose
 * event for the new CPU was enabled (made) after the switch-out; the time
 * since which an event has been enabled for its task must change sides
 * with the task, or that event refuses the interval as one it was not
 * enabled for and the whole sleep is lost (a server's idle pool thread,
 * 1 run in 4 of the VM suite, before the fix).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define RUN_MS		1000
#define MIN_TRIPS	200
#define MAX_TRIPS	6000
#define PARENT_SPIN_US	300
#define CHILD_SPIN_US	100
#define STALL_PCT	5
/*
 * 1 MiB: 32768 switch records of 32 bytes, 4 a round trip, and others.
 * A trip spins 400 us, so 1 s holds at most 2500 of them.
 */
#define TRACKER_PAGES	256
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
		bs_spin_ns(CHILD_SPIN_US * 1000ULL);
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

/*
 * Off-CPU time of @tid in [@from, @to] by the CPU-wide switch records of
 * @trk, with the number of intervals in *@nr: from its switch-out to the
 * switch-out of the task that hands the CPU back to it (a record whose
 * other tid is @tid).  The blocked events end the interval there too: a
 * swap of clones counts it at that switch-out.  The switch-in record
 * comes after the switch work, tens of us in a TCG guest: ending there
 * would count each switch as off-CPU time of both threads.
 */
static uint64_t offcpu_ns(const struct bs_samples *trk, uint32_t tid,
			  uint64_t from, uint64_t to, size_t *nr)
{
	uint64_t out = 0, sum = 0;
	size_t i;

	*nr = 0;
	for (i = 0; i < trk->nr_sw; i++) {
		const struct bs_switch *sw = &trk->sw[i];

		if (!sw->out)
			continue;
		if (sw->tid == tid) {
			out = sw->time;
		} else if (sw->other == tid && out) {
			if (out >= from && sw->time <= to) {
				sum += sw->time - out;
				(*nr)++;
			}
			out = 0;
		}
	}
	return sum;
}

/*
 * Blocked points of @s, and in *@off_ns its off-CPU time by the switch
 * records of @trk, logged with what its own clocks say; returns points.
 */
static uint64_t side_points(struct __test_metadata *_metadata, const char *name,
			    const struct bs_samples *all,
			    const struct bs_samples *trk, const struct side *s,
			    uint64_t *off_ns)
{
	uint64_t pts = bs_sum_blocked_between(all, s->tid, s->t0, s->t1);
	uint64_t wall = s->t1 - s->t0, cpu = s->cpu1 - s->cpu0;
	size_t nr;
	char buf[512];

	*off_ns = offcpu_ns(trk, s->tid, s->t0, s->t1, &nr);
	TH_LOG("%s tid %d: %ld trips, %.1f ms wall, %.1f ms off CPU in %zu "
	       "intervals (thread CPU clock: %.1f ms, off %.1f ms); "
	       "blocked points %llu (%.1f ms); %s", name, s->tid, s->trips,
	       bs_ms(wall), bs_ms(*off_ns), nr, bs_ms(cpu),
	       bs_ms(wall > cpu ? wall - cpu : 0),
	       (unsigned long long)pts, bs_ms(pts * BS_DEFAULT_PERIOD_NS),
	       bs_summary(all, s->tid, buf, sizeof(buf)));
	return pts;
}

TEST_F_TIMEOUT(clone_swap, ping_pong_same_cpu, 120)
{
	static struct bs_event ev[MAX_CPUS];
	struct bs_event trk;
	struct bs_samples all = { 0 };
	struct perf_event_attr attr;
	uint64_t deadline, off, pts, wall, walls = 0, on = 0, on_ns = 0;
	double slack;
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
	i = bs_cpu_switch_tracker_open(&trk, ctx.cpu, TRACKER_PAGES);
	if (i == -EACCES || i == -EPERM)
		SKIP(return, "a CPU-wide switch tracker with a %d KiB ring "
		     "needs CAP_PERFMON (or perf_event_paranoid <= 0) and "
		     "CAP_IPC_LOCK (or perf_event_mlock_kb >= %d): run as root",
		     TRACKER_PAGES * 4, TRACKER_PAGES * 4 + 4);
	ASSERT_EQ(0, i) {
		TH_LOG("CPU-wide switch tracker on CPU %d: %s", ctx.cpu,
		       strerror(-i));
	}

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	attr.inherit = 1;
	BS_OPEN_PER_CPU(ev, MAX_CPUS, &attr, &cpus, nev);
	/* The child's context is cloned from ours here; nothing is added after. */
	ASSERT_EQ(0, pthread_create(&th, NULL, child, NULL));

	side_begin(&ctx.parent);
	deadline = ctx.parent.t0 + RUN_MS * BS_NSEC_PER_MSEC;
	while (bs_now_ns() < deadline && ctx.parent.trips < MAX_TRIPS) {
		bs_spin_ns(PARENT_SPIN_US * 1000ULL);
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
	BS_DRAIN(&trk);
	ASSERT_EQ(0, trk.smp.lost) {
		TH_LOG("the switch tracker lost %llu records: its ring of %d "
		       "pages is too small for %ld round trips",
		       (unsigned long long)trk.smp.lost, TRACKER_PAGES,
		       ctx.parent.trips);
	}
	ASSERT_LE(MIN_TRIPS, ctx.parent.trips) {
		TH_LOG("%ld round trips in %d ms: too few switches to judge",
		       ctx.parent.trips, RUN_MS);
	}
	if (all.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped",
		     (unsigned long long)all.nr_throttle);

	/*
	 * Each thread's off-CPU time by the switch records, in points:
	 * within 2 points, for the grid's phase at the edges of the window,
	 * 3 % for the kernel's path between a switch record and the switch
	 * work at each of thousands of switches, and STALL_PCT of the window
	 * for host stalls there.  Its time on the CPU is the rest of its
	 * window: it is running at both ends.
	 */
	for (i = 0; i < 2; i++) {
		pts = side_points(_metadata, names[i], &all, &trk.smp, sides[i],
				  &off);
		wall = sides[i]->t1 - sides[i]->t0;
		slack = 2 + wall * STALL_PCT / 100.0 / BS_DEFAULT_PERIOD_NS;
		BS_EXPECT_BETWEEN(names[i],
				  off * 0.97 / BS_DEFAULT_PERIOD_NS - slack,
				  pts, off * 1.03 / BS_DEFAULT_PERIOD_NS + slack);
		on += bs_sum_weight_between(&all, sides[i]->tid, BS_ONCPU,
					    sides[i]->t0, sides[i]->t1);
		on_ns += wall - off;
		walls += wall;
	}
	TH_LOG("on-CPU points of both %llu, time on the CPU of both %.1f ms",
	       (unsigned long long)on, bs_ms(on_ns));
	slack = 4 + walls * STALL_PCT / 100.0 / BS_DEFAULT_PERIOD_NS;
	BS_EXPECT_BETWEEN("on-CPU points of both threads",
			  on_ns * 0.97 / BS_DEFAULT_PERIOD_NS - slack,
			  on, on_ns * 1.03 / BS_DEFAULT_PERIOD_NS + slack);
	bs_samples_free(&all);
	bs_event_close(&trk);
	for (i = 0; i < nev; i++)
		bs_event_close(&ev[i]);
	close(ctx.p2c[0]);
	close(ctx.p2c[1]);
	close(ctx.c2p[0]);
	close(ctx.c2p[1]);
}

/*
 * wake_on_younger_clone: ROUNDS rounds of a sleeper, which sleeps on
 * cpu[0], and a waker on cpu[1], made before the sleep.  Once the sleeper
 * sleeps, the waker starts a thread and joins it: the switch to it swaps
 * their contexts (the new thread's clone is the waker's from then on), and
 * the new thread's exit takes the other one with it.  The waker then moves
 * the sleeper to cpu[1], wakes it and waits for it, so cpu[1] switches
 * from the waker, with a context cloned after the sleep began, to the
 * sleeper.
 */
#define ROUNDS		12
#define SLEEP_MS	40
#define MIN_SHARE	0.9

static struct {
	int cpu[2];
	int wake[2], done[2], ready[2], go[2];
	pid_t sleeper;
	uint64_t t0, t1, cpu0, cpu1;
	int err;
} yc;

static void *sleeper(void *arg)
{
	char c = 's';

	yc.sleeper = bs_gettid();
	if (bs_pin_self(yc.cpu[0]))
		yc.err = -1;
	if (write(yc.ready[1], &c, 1) != 1)
		yc.err = -1;
	yc.cpu0 = thread_cpu_ns();
	yc.t0 = bs_now_ns();
	if (read(yc.wake[0], &c, 1) != 1)
		yc.err = -1;
	yc.t1 = bs_now_ns();
	yc.cpu1 = thread_cpu_ns();
	if (write(yc.done[1], &c, 1) != 1)
		yc.err = -1;
	return arg;
}

static void *young(void *arg)
{
	return arg;
}

static void *waker(void *arg)
{
	cpu_set_t one;
	pthread_t t;
	char c = 'w';

	if (bs_pin_self(yc.cpu[1]) || read(yc.go[0], &c, 1) != 1) {
		yc.err = -1;
		return arg;
	}
	/* a context cloned now, taken over at the switch to the thread */
	if (pthread_create(&t, NULL, young, NULL) || pthread_join(t, NULL))
		yc.err = -1;
	CPU_ZERO(&one);
	CPU_SET(yc.cpu[1], &one);
	if (sched_setaffinity(yc.sleeper, sizeof(one), &one))
		yc.err = -1;
	bs_spin_ns(SLEEP_MS * BS_NSEC_PER_MSEC);
	if (write(yc.wake[1], &c, 1) != 1 || read(yc.done[0], &c, 1) != 1)
		yc.err = -1;
	return arg;
}

TEST_F_TIMEOUT(clone_swap, wake_on_younger_clone, 120)
{
	static struct bs_event ev[MAX_CPUS];
	struct bs_samples all = { 0 };
	struct perf_event_attr attr;
	uint64_t from[ROUNDS], to[ROUNDS], off[ROUNDS], pts, until;
	pid_t tid[ROUNDS];
	int nev = 0, i, r;
	cpu_set_t cpus;
	pthread_t ts, tw;
	char c, buf[512];

	BS_REQUIRE_FEATURE();
	BS_RAISE_SAMPLE_RATE(100000);
	memset(&yc, 0, sizeof(yc));
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	if (CPU_COUNT(&cpus) < 2)
		SKIP(return, "needs 2 CPUs, has %d", CPU_COUNT(&cpus));
	yc.cpu[1] = bs_pick_cpu();
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &cpus) && i != yc.cpu[1])
			break;
	yc.cpu[0] = i;
	/* this thread stays off the waker's CPU */
	ASSERT_EQ(0, bs_pin_self(yc.cpu[0]));
	ASSERT_EQ(0, pipe(yc.wake));
	ASSERT_EQ(0, pipe(yc.done));
	ASSERT_EQ(0, pipe(yc.ready));
	ASSERT_EQ(0, pipe(yc.go));

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	attr.inherit = 1;
	BS_OPEN_PER_CPU(ev, MAX_CPUS, &attr, &cpus, nev);

	for (r = 0; r < ROUNDS; r++) {
		ASSERT_EQ(0, pthread_create(&tw, NULL, waker, NULL));
		ASSERT_EQ(0, pthread_create(&ts, NULL, sleeper, NULL));
		ASSERT_EQ(1, read(yc.ready[0], &c, 1));
		/* switched out before the young thread's context is cloned */
		until = bs_now_ns() + 5000 * BS_NSEC_PER_MSEC;
		while (bs_task_state(yc.sleeper) != 'S' && bs_now_ns() < until)
			bs_sleep_ns(BS_NSEC_PER_MSEC);
		ASSERT_EQ('S', bs_task_state(yc.sleeper));
		ASSERT_EQ(1, write(yc.go[1], &c, 1));
		pthread_join(tw, NULL);
		pthread_join(ts, NULL);
		ASSERT_EQ(0, yc.err);
		tid[r] = yc.sleeper;
		from[r] = yc.t0;
		to[r] = yc.t1;
		off[r] = yc.t1 - yc.t0 - (yc.cpu1 - yc.cpu0);
	}

	BS_DRAIN_ALL(ev, nev, &all);
	if (all.nr_throttle)
		SKIP(return, "throttled %llu times: points dropped",
		     (unsigned long long)all.nr_throttle);
	/*
	 * Each sleep's points, written at the sleeper's switch-in on the
	 * waker's CPU (before its second clock read): MIN_SHARE of its
	 * off-CPU time, less 2 for the grid's phase, and not more than it.
	 */
	for (r = 0; r < ROUNDS; r++) {
		pts = bs_sum_blocked_between(&all, tid[r], from[r], to[r]);
		TH_LOG("round %d: sleeper %d off CPU %.1f ms, blocked points %llu; %s",
		       r, tid[r], bs_ms(off[r]), (unsigned long long)pts,
		       bs_summary(&all, tid[r], buf, sizeof(buf)));
		BS_EXPECT_BETWEEN("a sleep woken on another CPU",
				  off[r] * MIN_SHARE / BS_DEFAULT_PERIOD_NS - 2, pts,
				  off[r] * 1.03 / BS_DEFAULT_PERIOD_NS + 2);
	}
	bs_samples_free(&all);
	for (i = 0; i < nev; i++)
		bs_event_close(&ev[i]);
	for (i = 0; i < 2; i++) {
		close(yc.wake[i]);
		close(yc.done[i]);
		close(yc.ready[i]);
		close(yc.go[i]);
	}
}

TEST_HARNESS_MAIN
