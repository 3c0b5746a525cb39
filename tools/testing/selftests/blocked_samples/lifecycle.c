// SPDX-License-Identifier: GPL-2.0
/*
 * Event lifetime against blocked tasks: closing or disabling the event
 * while its task sleeps, the task exiting while the event is still held,
 * and the task being killed while blocked. No sample may cover time when
 * the event was gone or disabled, and the kernel log must stay clean
 * (checked by the fixture teardown for every test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define PRE_MS		30	/* nap before the long block: must be sampled */
#define LONG_MS		300	/* the block during which the event changes */
#define POST_MS		30	/* nap after the long block */
#define CHANGE_MS	50	/* close/disable this far into the long block */
#define BIG_WEIGHT	100	/* a sample this heavy covers the long block */

static struct {
	volatile pid_t tid;
	volatile int go, phase, resume;
	volatile uint64_t t_go;	/* when the thread saw go: samples count from then */
	int pfd[2];		/* the long block is a read of this pipe */
} ctx;

/*
 * phase 1: PRE nap, 2: LONG block, 3: woke (waits for resume), 4: POST nap.
 * The long block is a pipe read that the main thread ends (end_long_block())
 * LONG_MS after it began, whatever the machine's speed: the event changes
 * while the sleeper is blocked, and a stale sample would weigh >= LONG_MS.
 */
static void *sleeper(void *arg)
{
	char c;

	ctx.tid = bs_gettid();
	while (!__atomic_load_n(&ctx.go, __ATOMIC_ACQUIRE))
		usleep(1000);
	ctx.t_go = bs_now_ns();
	ctx.phase = 1;
	bs_sleep_ns(PRE_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	__atomic_store_n(&ctx.phase, 2, __ATOMIC_RELEASE);
	while (read(ctx.pfd[0], &c, 1) < 0 && errno == EINTR)
		;
	__atomic_store_n(&ctx.phase, 3, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctx.resume, __ATOMIC_ACQUIRE))
		;
	ctx.phase = 4;
	bs_spin_ns(BS_NSEC_PER_MSEC);
	bs_sleep_ns(POST_MS * BS_NSEC_PER_MSEC);
	bs_spin_ns(BS_NSEC_PER_MSEC);
	return NULL;
}

static pthread_t start_sleeper(void)
{
	pthread_t th;

	memset(&ctx, 0, sizeof(ctx));
	if (pipe2(ctx.pfd, O_CLOEXEC))
		return 0;
	if (pthread_create(&th, NULL, sleeper, NULL))
		return 0;
	while (!ctx.tid)
		usleep(1000);
	return th;
}

static void stop_sleeper(pthread_t th)
{
	pthread_join(th, NULL);
	close(ctx.pfd[0]);
	close(ctx.pfd[1]);
}

/* Wait until the sleeper is in its long block, then CHANGE_MS more. */
static void wait_long_block(void)
{
	uint64_t deadline = bs_now_ns() + 20000 * BS_NSEC_PER_MSEC;

	while (bs_now_ns() < deadline &&
	       (__atomic_load_n(&ctx.phase, __ATOMIC_ACQUIRE) != 2 ||
		bs_task_state(ctx.tid) != 'S'))
		usleep(500);
	bs_sleep_ns(CHANGE_MS * BS_NSEC_PER_MSEC);
}

/* The rest of LONG_MS, then wake the sleeper up. */
static void end_long_block(void)
{
	bs_sleep_ns((LONG_MS - CHANGE_MS) * BS_NSEC_PER_MSEC);
	if (write(ctx.pfd[1], "x", 1) != 1)
		close(ctx.pfd[1]);	/* EOF ends the read too */
}

/*
 * Samples of class @c after @from with weight in [lo, hi).  Only those of
 * the thread's own phases count: before it saw go it polled with short
 * sleeps, which a loaded host can stretch to any length.
 */
static int count_weight(const struct bs_samples *smp, enum bs_class c,
			uint64_t from, uint64_t lo, uint64_t hi)
{
	size_t i;
	int n = 0;

	for (i = 0; i < smp->nr; i++)
		if (bs_sample_class(&smp->s[i]) == c && smp->s[i].time > from &&
		    smp->s[i].weight >= lo && smp->s[i].weight < hi)
			n++;
	return n;
}

static uint64_t max_blocked_weight(const struct bs_samples *smp, uint64_t from)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < smp->nr; i++)
		if (bs_sample_class(&smp->s[i]) != BS_ONCPU && smp->s[i].time > from &&
		    smp->s[i].weight > m)
			m = smp->s[i].weight;
	return m;
}

BS_FIXTURE(lifecycle);

/*
 * The blocked event writes into the ring buffer of a dummy event on the same
 * task (PERF_EVENT_IOC_SET_OUTPUT), so closing it really releases it while
 * its output stays readable.
 */
TEST_F_TIMEOUT(lifecycle, close_while_blocked, 120)
{
	struct perf_event_attr attr, dummy;
	struct bs_event ev, out;
	pthread_t th;

	BS_REQUIRE_FEATURE();
	th = start_sleeper();
	ASSERT_NE(0, th);

	bs_make_attr(&dummy, 0, false);
	dummy.config = PERF_COUNT_SW_DUMMY;
	bs_attr_monotonic(&dummy);
	BS_OPEN(&out, &dummy, ctx.tid, -1);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	ASSERT_EQ(0, bs_event_open(&ev, &attr, ctx.tid, -1, 0));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_SET_OUTPUT, out.fd)) {
		TH_LOG("PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
	}

	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	wait_long_block();
	close(ev.fd);
	ev.fd = -1;
	TH_LOG("closed the event %d ms into the %d ms block (task state %c)",
	       CHANGE_MS, LONG_MS, bs_task_state(ctx.tid));
	end_long_block();
	__atomic_store_n(&ctx.resume, 1, __ATOMIC_RELEASE);
	stop_sleeper(th);

	BS_DRAIN(&out);
	BS_LOG_SUMMARY("sleeper", &out.smp, ctx.tid);
	TH_LOG("heaviest blocked sample %llu; [B] samples >= %d: %d",
	       (unsigned long long)max_blocked_weight(&out.smp, ctx.t_go), PRE_MS / 2,
	       count_weight(&out.smp, BS_B, ctx.t_go, PRE_MS / 2, BIG_WEIGHT));
	/* The PRE nap was sampled through the redirected output ... */
	EXPECT_EQ(1, count_weight(&out.smp, BS_B, ctx.t_go, PRE_MS / 2, BIG_WEIGHT)) {
		TH_LOG("want exactly one [B] sample for the %d ms nap before the close "
		       "(the %d ms nap after it must not be sampled)", PRE_MS, POST_MS);
	}
	/* ... but neither the long block nor anything after the close. */
	EXPECT_GT(BIG_WEIGHT, max_blocked_weight(&out.smp, ctx.t_go));
	bs_event_close(&out);
}

TEST_F_TIMEOUT(lifecycle, disable_while_blocked, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	pthread_t th;

	BS_REQUIRE_FEATURE();
	th = start_sleeper();
	ASSERT_NE(0, th);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	BS_OPEN(&ev, &attr, ctx.tid, -1);

	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	wait_long_block();
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	end_long_block();
	while (__atomic_load_n(&ctx.phase, __ATOMIC_ACQUIRE) < 3)
		usleep(1000);
	/* The sleeper is awake and spinning: enable again, then let it go on. */
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	__atomic_store_n(&ctx.resume, 1, __ATOMIC_RELEASE);
	stop_sleeper(th);

	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("sleeper", &ev.smp, ctx.tid);
	TH_LOG("heaviest blocked sample %llu; [B] samples >= %d: %d",
	       (unsigned long long)max_blocked_weight(&ev.smp, ctx.t_go), PRE_MS / 2,
	       count_weight(&ev.smp, BS_B, ctx.t_go, PRE_MS / 2, BIG_WEIGHT));
	/* The PRE and POST naps are sampled ... */
	EXPECT_EQ(2, count_weight(&ev.smp, BS_B, ctx.t_go, PRE_MS / 2, BIG_WEIGHT)) {
		TH_LOG("want one [B] sample each for the %d ms nap before the disable "
		       "and the %d ms nap after the enable", PRE_MS, POST_MS);
	}
	/* ... the long block, disabled in its middle, is not. */
	EXPECT_GT(BIG_WEIGHT, max_blocked_weight(&ev.smp, ctx.t_go));
	bs_event_close(&ev);
}

static void *short_lived(void *arg)
{
	int i;

	ctx.tid = bs_gettid();
	while (!__atomic_load_n(&ctx.go, __ATOMIC_ACQUIRE))
		usleep(1000);
	ctx.t_go = bs_now_ns();
	for (i = 0; i < 3; i++) {
		bs_sleep_ns(20 * BS_NSEC_PER_MSEC);
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	return NULL;
}

TEST_F_TIMEOUT(lifecycle, thread_exits_while_held, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	uint64_t count = 0;
	pthread_t th;

	BS_REQUIRE_FEATURE();
	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, pthread_create(&th, NULL, short_lived, NULL));
	while (!ctx.tid)
		usleep(1000);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	BS_OPEN(&ev, &attr, ctx.tid, -1);
	__atomic_store_n(&ctx.go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	usleep(20000);

	/* The event outlives its task: it must still be usable. */
	EXPECT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ(sizeof(count), read(ev.fd, &count, sizeof(count)));
	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("exited thread", &ev.smp, ctx.tid);
	TH_LOG("task-clock count %.2f ms", bs_ms(count));
	EXPECT_EQ(3, count_weight(&ev.smp, BS_B, ctx.t_go, 10, BIG_WEIGHT));
	bs_event_close(&ev);
}

TEST_F_TIMEOUT(lifecycle, killed_while_blocked, 120)
{
	struct perf_event_attr attr;
	int to_child[2], from_child[2];
	struct bs_event ev;
	char c = 'x';
	uint64_t b;
	pid_t pid;
	int status, i;

	BS_REQUIRE_FEATURE();
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(from_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Wait for the event, report, then sleep until killed. */
		if (read(to_child[0], &c, 1) != 1 || write(from_child[1], &c, 1) != 1)
			_exit(1);
		bs_sleep_ns(10000 * BS_NSEC_PER_MSEC);
		_exit(2);
	}
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_monotonic(&attr);
	BS_OPEN(&ev, &attr, pid, -1);
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(1, read(from_child[0], &c, 1));
	for (i = 0; i < 10000 && bs_task_state(pid) != 'S'; i++)
		usleep(500);
	bs_sleep_ns(100 * BS_NSEC_PER_MSEC);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	usleep(10000);

	BS_DRAIN(&ev);
	BS_LOG_SUMMARY("killed child", &ev.smp, pid);
	b = bs_sum_weight(&ev.smp, pid, BS_B);
	/* It was asleep >= 100 ms when SIGKILL woke it to exit. */
	EXPECT_LE(50, b) TH_LOG("[B] weight %llu for the sleep ended by SIGKILL",
				(unsigned long long)b);
	EXPECT_GT(BIG_WEIGHT * 5, b);
	bs_event_close(&ev);
	close(to_child[0]);
	close(to_child[1]);
	close(from_child[0]);
	close(from_child[1]);
}

TEST_HARNESS_MAIN
