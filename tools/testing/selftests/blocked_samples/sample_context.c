// SPDX-License-Identifier: GPL-2.0
/*
 * What a blocked sample carries besides its weight:
 *
 *  - deep_user_stack: a thread 300 frames deep sleeps.  The perf and
 *    scheduler frames are trimmed from the kernel callchain; they must not
 *    have counted against perf_event_max_stack first, so the chain holds
 *    exactly perf_event_max_stack frames (kernel part + user part).
 *  - regs_intr_zero: PERF_SAMPLE_REGS_INTR of a sample with a kernel IP
 *    holds the IP, SP, CS and FLAGS of the unwind's first frame; every
 *    other register must read 0, not kernel stack contents.  (A kernel
 *    built with CONFIG_INIT_STACK_ALL_ZERO zeroes the stack anyway: there
 *    this passes with or without the fix; the log says which.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define DEPTH		300
#define NAP_MS		30
#define NAPS		5

static volatile int sink;

static int __attribute__((noinline)) descend(int n)
{
	if (!n) {
		int i;

		for (i = 0; i < NAPS; i++) {
			bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
			bs_spin_ns(BS_NSEC_PER_MSEC);
		}
		return 1;
	}
	/* not a tail call: every level keeps its frame */
	return descend(n - 1) + sink;
}

static int read_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static uint64_t chain_frames(const struct bs_sample *s)
{
	uint64_t i, n = 0;

	for (i = 0; i < s->nr_chain; i++)
		if (s->chain[i] < (uint64_t)PERF_CONTEXT_MAX)
			n++;
	return n;
}

BS_FIXTURE(sample_context);

TEST_F_TIMEOUT(sample_context, deep_user_stack, 120)
{
	struct perf_event_attr attr;
	uint64_t lo = UINT64_MAX, hi = 0, f;
	struct bs_event ev;
	int max, n = 0;
	size_t i;

	BS_REQUIRE_FEATURE();
	max = read_max_stack();
	ASSERT_LT(0, max) TH_LOG("cannot read /proc/sys/kernel/perf_event_max_stack");
	if (max >= DEPTH)
		SKIP(return, "perf_event_max_stack %d >= %d frames of recursion", max, DEPTH);
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev, &attr, 0, -1);
	descend(DEPTH);
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	BS_DRAIN(&ev);
	for (i = 0; i < ev.smp.nr; i++) {
		const struct bs_sample *s = &ev.smp.s[i];

		if (bs_sample_class(s) != BS_B || s->weight < NAP_MS / 2)
			continue;
		f = chain_frames(s);
		lo = f < lo ? f : lo;
		hi = f > hi ? f : hi;
		n++;
	}
	TH_LOG("%d [B] samples of the naps %d frames deep: %llu .. %llu frames, "
	       "perf_event_max_stack %d", n, DEPTH, (unsigned long long)lo,
	       (unsigned long long)hi, max);
	ASSERT_LT(0, n);
	EXPECT_EQ((uint64_t)max, lo) {
		TH_LOG("a callchain of %llu frames: the trimmed perf/scheduler "
		       "frames counted against perf_event_max_stack",
		       (unsigned long long)lo);
	}
	EXPECT_EQ((uint64_t)max, hi);
	bs_event_close(&ev);
}

/* x86_64 registers REGS_INTR may ask for: all but DS, ES, FS, GS. */
#define REGS_MASK	(((1ULL << 24) - 1) & ~(0xfULL << 12))
#define REG_SP		7
#define REG_IP		8
#define REG_FLAGS	9
#define REG_CS		10

/* Walk the ring: IP, TID, TIME, REGS_INTR samples; count bad registers. */
static int check_regs(struct __test_metadata *_metadata, struct bs_event *ev,
		      pid_t tid, int *nonzero)
{
	struct perf_event_mmap_page *pg = ev->base;
	uint8_t *data = (uint8_t *)ev->base + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t size = pg->data_size, tail = pg->data_tail;
	static uint8_t rec[65536];
	int checked = 0;

	*nonzero = 0;
	while (tail < head) {
		struct perf_event_header *h = (struct perf_event_header *)rec;
		uint64_t off = tail % size, *v, k, r;
		size_t first;

		first = size - off < sizeof(*h) ? size - off : sizeof(*h);
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, sizeof(*h) - first);
		if (h->size < sizeof(*h) || h->size > sizeof(rec))
			return -1;
		first = size - off < h->size ? size - off : h->size;
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, h->size - first);
		tail += h->size;
		if (h->type != PERF_RECORD_SAMPLE ||
		    !(h->misc & PERF_RECORD_MISC_BLOCKED_MASK) ||
		    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL)
			continue;
		/* ip, pid|tid, time, abi, regs[] */
		v = (uint64_t *)(h + 1);
		if ((uint32_t)(v[1] >> 32) != (uint32_t)tid || !v[3])
			continue;
		checked++;
		for (k = 0, r = 0; r < 24; r++) {
			if (!(REGS_MASK & (1ULL << r)))
				continue;
			if (r != REG_SP && r != REG_IP && r != REG_FLAGS &&
			    r != REG_CS && v[4 + k]) {
				if (!*nonzero)
					TH_LOG("sample at IP %#llx: register %llu = %#llx",
					       (unsigned long long)v[0],
					       (unsigned long long)r,
					       (unsigned long long)v[4 + k]);
				(*nonzero)++;
			}
			k++;
		}
	}
	return checked;
}

TEST_F_TIMEOUT(sample_context, regs_intr_zero, 120)
{
	struct perf_event_attr attr;
	struct bs_event ev;
	int checked, nonzero, i;

	BS_REQUIRE_FEATURE();
	if (geteuid())
		SKIP(return, "needs root for kernel IPs and registers");
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_REGS_INTR;
	attr.sample_regs_intr = REGS_MASK;
	BS_OPEN(&ev, &attr, 0, -1);
	for (i = 0; i < NAPS; i++) {
		bs_sleep_ns(NAP_MS * BS_NSEC_PER_MSEC);
		bs_spin_ns(BS_NSEC_PER_MSEC);
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	checked = check_regs(_metadata, &ev, bs_gettid(), &nonzero);
	TH_LOG("%d blocked samples with a kernel IP; %d registers beyond "
	       "IP/SP/CS/FLAGS not zero", checked, nonzero);
	ASSERT_LT(0, checked) TH_LOG("no blocked sample with a kernel IP to check");
	EXPECT_EQ(0, nonzero) TH_LOG("kernel stack contents leak through REGS_INTR");
	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
