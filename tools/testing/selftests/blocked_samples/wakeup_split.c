// SPDX-License-Identifier: GPL-2.0
/*
 * A sleeper woken while a SCHED_FIFO spinner occupies its CPU stays
 * runnable until the spinner lets go. Its off-CPU interval must be split:
 * a [L] (futex) or [B] (nanosleep) sample for the part until the wake-up,
 * immediately followed by an [S] sample for the wait on the runqueue, both
 * stamped with the same schedule-in time.
 *
 * Each round the spinner waits (sleeping, so the sleeper can run) until it
 * sees the sleeper asleep; from then on it holds the CPU, so the sleeper
 * cannot run again before the spinner lets go:
 *  - futex: the spinner spins DOZE_MS, wakes the sleeper, spins SPIN_MS;
 *    the [L] part is at least DOZE_MS long, the [S] part at least SPIN_MS;
 *  - nanosleep: the sleeper naps NAP_MS; the spinner, having seen it
 *    asleep at least CATCH_MS before the nap's end, spins until it sees it
 *    woken (runnable), then SPIN_MS more: the [B] part is at least
 *    CATCH_MS long, the [S] part at least SPIN_MS.
 * A round the spinner does not catch in time (the nap nearly or wholly
 * over when it looked) does not count; the test runs until ROUNDS rounds
 * were caught, and fails if MAX_ROUNDS were not enough.
 *
 * Asserted: at least one adjacent [L]/[B] + [S] pair with an [S] of at
 * least SPIN_MS / period points per caught round, each such pair with
 * equal times, and period = weight x sample_period.  Only the long pairs
 * are the spinner's: a [B] whose thread then ran less than a period and
 * was preempted is followed by a short [S] of a later schedule-in (seen
 * once, at the sleeper's start: [B] 2 + [S] 2, 2.75 ms apart).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define ROUNDS		6	/* rounds to catch */
#define MAX_ROUNDS	30
#define SPIN_MS		30	/* runqueue wait forced on the sleeper */
#define DOZE_MS		10	/* futex mode: sleep before the wake-up */
#define NAP_MS		10	/* nanosleep mode: the sleeper's nap */
#define CATCH_MS	2	/* ... caught this long before its end at least */
#define CATCH_S		5	/* wait at most this long for one sleep */

enum mode { MODE_FUTEX, MODE_NANOSLEEP };

static struct {
	enum mode mode;
	int cpu;
	volatile pid_t sleeper_tid;
	volatile int sleeper_round;	/* round the sleeper is about to sleep in */
	volatile uint64_t nap_start;	/* nanosleep mode: just before the nap */
	volatile int go, stop;
	int word;			/* futex word */
	int caught, tried;		/* the spinner's tally */
	int pin_err, fifo_err;
} ctx;

static long futex(int *uaddr, int op, int val)
{
	return syscall(__NR_futex, uaddr, op, val, NULL, NULL, 0);
}

static void *sleeper(void *arg)
{
	int r;

	ctx.pin_err = bs_pin_self(ctx.cpu);
	ctx.sleeper_tid = bs_gettid();
	while (!__atomic_load_n(&ctx.go, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (r = 1; !__atomic_load_n(&ctx.stop, __ATOMIC_ACQUIRE); r++) {
		__atomic_store_n(&ctx.word, 0, __ATOMIC_RELEASE);
		ctx.nap_start = bs_now_ns();
		__atomic_store_n(&ctx.sleeper_round, r, __ATOMIC_RELEASE);
		if (ctx.mode == MODE_FUTEX) {
			while (!__atomic_load_n(&ctx.word, __ATOMIC_ACQUIRE))
				futex(&ctx.word, FUTEX_WAIT_PRIVATE, 0);
		} else {
			bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		}
	}
	return NULL;
}

static void release_sleeper(void)
{
	__atomic_store_n(&ctx.stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ctx.word, 1, __ATOMIC_RELEASE);
	futex(&ctx.word, FUTEX_WAKE_PRIVATE, 1);
}

static void *spinner(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	int r;

	ctx.pin_err |= bs_pin_self(ctx.cpu);
	ctx.fifo_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ctx.fifo_err) {
		release_sleeper();
		return NULL;
	}
	for (r = 1; ctx.caught < ROUNDS && ctx.tried < MAX_ROUNDS; r++) {
		uint64_t deadline = bs_now_ns() + CATCH_S * 1000000000ULL;
		int sr = 0;

		/* Wait (sleeping, so the sleeper can run) until it sleeps. */
		while (bs_now_ns() < deadline) {
			sr = __atomic_load_n(&ctx.sleeper_round, __ATOMIC_ACQUIRE);
			if (sr > r)
				r = sr;		/* it woke and went on unseen */
			if (sr == r && bs_task_state(ctx.sleeper_tid) == 'S')
				break;
			bs_sleep_ns(BS_NSEC_PER_MSEC / 2);
		}
		ctx.tried = r;
		if (sr != r || bs_task_state(ctx.sleeper_tid) != 'S')
			break;
		/* Caught asleep; the sleeper cannot run until this thread sleeps. */
		if (ctx.mode == MODE_FUTEX) {
			ctx.caught++;
			bs_spin_ns(DOZE_MS * BS_NSEC_PER_MSEC);
			__atomic_store_n(&ctx.word, 1, __ATOMIC_RELEASE);
			futex(&ctx.word, FUTEX_WAKE_PRIVATE, 1);
			bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		} else {
			if (bs_now_ns() + CATCH_MS * BS_NSEC_PER_MSEC <=
			    ctx.nap_start + NAP_MS * BS_NSEC_PER_MSEC)
				ctx.caught++;
			/* Its timer wakes it; it waits for the CPU from then on. */
			while (bs_now_ns() < deadline &&
			       bs_task_state(ctx.sleeper_tid) == 'S')
				;
			bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		}
	}
	/* Still holding the CPU: the sleeper sees stop once it runs. */
	release_sleeper();
	return NULL;
}

BS_FIXTURE(wakeup_split);

static void run_split(struct __test_metadata *_metadata, enum mode mode)
{
	enum bs_class want = mode == MODE_FUTEX ? BS_L : BS_B;
	const uint64_t long_s = SPIN_MS * BS_NSEC_PER_MSEC / BS_DEFAULT_PERIOD_NS;
	struct perf_event_attr attr;
	int pairs = 0, long_pairs = 0, same_time = 0, long_same = 0;
	pthread_t ts, tp;
	struct bs_event ev;
	size_t i;

	/* A throttled sample breaks a pair: raise the limits as root. */
	BS_RAISE_SAMPLE_RATE(100000);
	memset(&ctx, 0, sizeof(ctx));
	ctx.mode = mode;
	ctx.cpu = bs_pick_cpu();
	ASSERT_EQ(0, pthread_create(&ts, NULL, sleeper, NULL));
	while (!ctx.sleeper_tid)
		usleep(1000);

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev, &attr, ctx.sleeper_tid, -1);
	ASSERT_EQ(0, pthread_create(&tp, NULL, spinner, NULL));
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	pthread_join(tp, NULL);
	pthread_join(ts, NULL);
	if (ctx.fifo_err) {
		bs_event_close(&ev);
		SKIP(return, "cannot make the spinner SCHED_FIFO: %s", strerror(ctx.fifo_err));
	}
	ASSERT_EQ(0, ctx.pin_err) TH_LOG("cannot pin to CPU %d", ctx.cpu);
	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("sleeper", &ev.smp, ctx.sleeper_tid);
	if (ev.smp.nr_throttle) {
		bs_event_close(&ev);
		SKIP(return, "throttled %llu times: samples dropped",
		     (unsigned long long)ev.smp.nr_throttle);
	}

	for (i = 1; i < ev.smp.nr; i++) {
		const struct bs_sample *a = &ev.smp.s[i - 1], *b = &ev.smp.s[i];

		if (bs_sample_class(a) != want || bs_sample_class(b) != BS_S ||
		    a->tid != b->tid)
			continue;
		pairs++;
		TH_LOG("split %d: [%s] weight %llu + [S] weight %llu, time %llu / %llu (diff %lld ns)",
		       pairs, bs_class_name[want], (unsigned long long)a->weight,
		       (unsigned long long)b->weight, (unsigned long long)a->time,
		       (unsigned long long)b->time, (long long)(b->time - a->time));
		EXPECT_EQ(ctx.sleeper_tid, (pid_t)b->tid);
		EXPECT_LT(0, b->weight);
		EXPECT_EQ(b->weight * attr.sample_period, b->period);
		if (a->time == b->time)
			same_time++;
		/* The sleeper waited for the spin: a split of one schedule-in. */
		if (b->weight >= long_s) {
			long_pairs++;
			if (a->time == b->time)
				long_same++;
		}
	}
	TH_LOG("caught the sleeper asleep in %d of %d rounds: %d adjacent [%s]+[S] pairs, "
	       "%d with equal time; %d with [S] >= %llu, %d of them with equal time",
	       ctx.caught, ctx.tried, pairs, bs_class_name[want], same_time, long_pairs,
	       (unsigned long long)long_s, long_same);
	ASSERT_LE(ROUNDS, ctx.caught) {
		TH_LOG("the spinner caught the sleeper asleep in only %d of %d rounds",
		       ctx.caught, ctx.tried);
	}
	EXPECT_LE(ctx.caught, long_pairs);
	EXPECT_EQ(long_pairs, long_same) {
		TH_LOG("both samples of one schedule-in must carry the same "
		       "PERF_SAMPLE_TIME (the schedule-in time)");
	}
	bs_event_close(&ev);
}

TEST_F_TIMEOUT(wakeup_split, futex_wake_on_busy_cpu, 120)
{
	BS_REQUIRE_FEATURE();
	run_split(_metadata, MODE_FUTEX);
}

TEST_F_TIMEOUT(wakeup_split, timer_wake_on_busy_cpu, 120)
{
	BS_REQUIRE_FEATURE();
	run_split(_metadata, MODE_NANOSLEEP);
}

TEST_HARNESS_MAIN
