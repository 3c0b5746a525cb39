// SPDX-License-Identifier: GPL-2.0
/*
 * A sleeper woken while a SCHED_FIFO spinner occupies its CPU stays
 * runnable until the spinner lets go. Its off-CPU interval must be split:
 * a [L] (futex) or [B] (nanosleep) sample for the part until the wake-up,
 * immediately followed by an [S] sample for the wait on the runqueue, both
 * stamped with the same schedule-in time.
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

#define ROUNDS		6
#define SPIN_MS		30	/* runqueue wait forced on the sleeper */
#define NAP_MS		10	/* nanosleep mode: sleep, wakes mid-spin */

enum mode { MODE_FUTEX, MODE_NANOSLEEP };

static struct {
	enum mode mode;
	int cpu;
	volatile pid_t sleeper_tid;
	volatile int sleeper_round;	/* round the sleeper is about to sleep in */
	volatile int go;
	int word;			/* futex word */
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
	for (r = 1; r <= ROUNDS; r++) {
		__atomic_store_n(&ctx.word, 0, __ATOMIC_RELEASE);
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

static void *spinner(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	int r;

	ctx.pin_err |= bs_pin_self(ctx.cpu);
	ctx.fifo_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ctx.fifo_err)
		return NULL;
	for (r = 1; r <= ROUNDS; r++) {
		uint64_t deadline = bs_now_ns() + 5000 * BS_NSEC_PER_MSEC;

		/* Wait (sleeping, so the sleeper can run) until it sleeps. */
		while (bs_now_ns() < deadline &&
		       (__atomic_load_n(&ctx.sleeper_round, __ATOMIC_ACQUIRE) < r ||
			bs_task_state(ctx.sleeper_tid) != 'S'))
			bs_sleep_ns(BS_NSEC_PER_MSEC / 2);
		if (ctx.mode == MODE_FUTEX) {
			__atomic_store_n(&ctx.word, 1, __ATOMIC_RELEASE);
			futex(&ctx.word, FUTEX_WAKE_PRIVATE, 1);
			bs_spin_ns(SPIN_MS * BS_NSEC_PER_MSEC);
		} else {
			/* The sleeper's timer fires NAP_MS into the spin. */
			bs_spin_ns((SPIN_MS + NAP_MS) * BS_NSEC_PER_MSEC);
		}
	}
	return NULL;
}

BS_FIXTURE(wakeup_split);

static void run_split(struct __test_metadata *_metadata, enum mode mode)
{
	enum bs_class want = mode == MODE_FUTEX ? BS_L : BS_B;
	struct perf_event_attr attr;
	int pairs = 0, long_pairs = 0, same_time = 0;
	pthread_t ts, tp;
	struct bs_event ev;
	size_t i;

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
	if (ctx.fifo_err) {
		/* Release the sleeper before reporting. */
		__atomic_store_n(&ctx.word, 1, __ATOMIC_RELEASE);
		futex(&ctx.word, FUTEX_WAKE_PRIVATE, 1);
		pthread_join(ts, NULL);
		bs_event_close(&ev);
		SKIP(return, "cannot make the spinner SCHED_FIFO: %s", strerror(ctx.fifo_err));
	}
	pthread_join(ts, NULL);
	ASSERT_EQ(0, ctx.pin_err) TH_LOG("cannot pin to CPU %d", ctx.cpu);
	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("sleeper", &ev.smp, ctx.sleeper_tid);

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
		/* The sleeper really waited for most of the spin. */
		if (b->weight >= SPIN_MS / 3)
			long_pairs++;
	}
	TH_LOG("%d rounds: %d adjacent [%s]+[S] pairs, %d with equal time, %d with [S] >= %d",
	       ROUNDS, pairs, bs_class_name[want], same_time, long_pairs, SPIN_MS / 3);
	EXPECT_LE(ROUNDS / 2, pairs);
	EXPECT_EQ(pairs, same_time) {
		TH_LOG("both samples of one schedule-in must carry the same "
		       "PERF_SAMPLE_TIME (the schedule-in time)");
	}
	EXPECT_LE(ROUNDS / 2, long_pairs);
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
