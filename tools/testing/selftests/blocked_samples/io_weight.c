// SPDX-License-Identifier: GPL-2.0
/*
 * O_DIRECT reads sleep in io_schedule(): the reading thread must get [I]
 * samples for the time it waited for the device, with its own context.
 *
 * The device is a null_blk disk made for the test through configfs, in
 * timer mode: every request completes DELAY_MS after it was queued (an
 * hrtimer, which never fires early).  So the wait is set by construction,
 * long against the sampling period and against the kernel's own switch
 * work, and the same on any machine.  (A real disk under QEMU TCG waits
 * about as long as perf's switch work takes, 0.1-0.3 ms: the [I] weight of
 * such reads depends on the machine's speed, not on the feature.)
 *
 * Asserted, for READS reads:
 *  - each read took at least DELAY_MS;
 *  - the [I] samples taken during the reads weigh at least
 *    floor((DELAY_MS - slack) / period) per read: the reader leaves the CPU
 *    within the slack of queueing the request (BS_SLACK_NS), and is woken
 *    no earlier than DELAY_MS after it;
 *  - the blocked points fit the thread's off-CPU intervals from its switch
 *    records: at most floor(R / period) + 1 per interval of length R, at
 *    least floor((R - slack) / period);
 *  - no [L]; the [I] samples carry the reader's context.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#ifndef PERIOD_NS
#define PERIOD_NS	BS_DEFAULT_PERIOD_NS
#endif
#define DELAY_MS	50	/* null_blk completion_nsec */
#define READS		8
#define READ_SIZE	4096
#define MAX_WALL_S	60	/* give up if the reads take longer than this */
/* A null_blk disk completing every request after @delay_ms (bs_nullb_create). */
static int nullb_create(struct bs_nullb *nb, unsigned int delay_ms, char *why,
			size_t wlen)
{
	char val[32];
	const char *const attrs[][2] = {
		{ "irqmode", "2" },		/* complete from an hrtimer */
		{ "completion_nsec", val },
		{ "size", "16" },		/* MB, not backed by memory */
		{ "blocksize", "4096" },
	};

	snprintf(val, sizeof(val), "%llu", delay_ms * BS_NSEC_PER_MSEC);
	return bs_nullb_create(nb, "blocked_io", attrs, ARRAY_SIZE(attrs), why, wlen);
}

/* Open /dev/@name O_DIRECT, making the node from sysfs if there is none. */
static int open_disk(const char *name, char *why, size_t wlen)
{
	unsigned int maj, min;
	char path[256];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%u:%u", &maj, &min) == 2) {
			snprintf(path, sizeof(path), "/tmp/bs-%s", name);
			if (!mknod(path, S_IFBLK | 0400, makedev(maj, min))) {
				fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
				unlink(path);
			}
		}
		if (f)
			fclose(f);
	}
	if (fd < 0)
		snprintf(why, wlen, "cannot open /dev/%s O_DIRECT: %s", name, strerror(errno));
	return fd;
}

BS_FIXTURE(io_weight);

static void measure(struct __test_metadata *_metadata, int fd, const char *disk)
{
	uint64_t t0[READS], t1[READS], deadline, i_w, i_reads, s_w, blocked, slowest = 0;
	const uint64_t per_read = (DELAY_MS * BS_NSEC_PER_MSEC - BS_SLACK_NS) / PERIOD_NS;
	struct perf_event_attr attr;
	struct bs_offcpu off;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	double read_ms = 0;
	void *buf;
	int r;

	ASSERT_EQ(0, posix_memalign(&buf, 4096, READ_SIZE));
	bs_make_attr(&attr, PERIOD_NS, true);
	bs_attr_switch_records(&attr);
	attr.disabled = 1;
	BS_OPEN(&ev, &attr, 0, -1);

	deadline = bs_now_ns() + MAX_WALL_S * 1000000000ULL;
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	for (r = 0; r < READS; r++) {
		ssize_t n;

		t0[r] = bs_now_ns();
		n = pread(fd, buf, READ_SIZE, (off_t)r * READ_SIZE);
		t1[r] = bs_now_ns();
		ASSERT_EQ(READ_SIZE, n) TH_LOG("pread(/dev/%s): %s", disk, strerror(errno));
		read_ms += bs_ms(t1[r] - t0[r]);
		if (t1[r] - t0[r] > slowest)
			slowest = t1[r] - t0[r];
		ASSERT_GT(deadline, t1[r]) {
			TH_LOG("%d reads of a %d ms device took more than %d s",
			       r + 1, DELAY_MS, MAX_WALL_S);
		}
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	BS_DRAIN(&ev);
	free(buf);

	i_w = bs_sum_weight(&ev.smp, tid, BS_I);
	s_w = bs_sum_weight(&ev.smp, tid, BS_S);
	blocked = bs_sum_weight_all(&ev.smp, tid) - bs_sum_weight(&ev.smp, tid, BS_ONCPU);
	for (i_reads = 0, r = 0; r < READS; r++)
		i_reads += bs_sum_weight_between(&ev.smp, tid, BS_I, t0[r], t1[r]);
	bs_offcpu_bounds(&ev.smp, tid, 0, 0, PERIOD_NS, BS_SLACK_NS, &off);
	TH_LOG("/dev/%s (completes after %d ms): %d O_DIRECT reads of %d KiB took %.2f ms "
	       "(slowest %.2f); off the CPU %.2f ms in %zu intervals (switch records); "
	       "[I] %llu (%llu during the reads), [S] %llu, all blocked %llu points of %.3f ms",
	       disk, DELAY_MS, READS, READ_SIZE / 1024, read_ms, bs_ms(slowest),
	       bs_ms(off.ns), off.nr, (unsigned long long)i_w, (unsigned long long)i_reads,
	       (unsigned long long)s_w, (unsigned long long)blocked, bs_ms(PERIOD_NS));
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	/* null_blk's timer never completes a request early. */
	for (r = 0; r < READS; r++) {
		EXPECT_LE(DELAY_MS * BS_NSEC_PER_MSEC, t1[r] - t0[r]) {
			TH_LOG("read %d took %.2f ms: is the device in timer mode?",
			       r, bs_ms(t1[r] - t0[r]));
		}
	}
	BS_EXPECT_BETWEEN("[I] points during the reads (>= reads x (delay - slack) / period)",
			  READS * per_read, i_reads, i_w);
	BS_EXPECT_BETWEEN("blocked points vs the switch records' off-CPU intervals",
			  off.min_points, blocked, off.max_points);
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_L));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_I, geteuid() == 0);
	bs_event_close(&ev);
}

TEST_F_TIMEOUT(io_weight, odirect_reads, 200)
{
	char why[512];
	struct bs_nullb nb;
	int fd;

	BS_REQUIRE_FEATURE();
	if (geteuid() != 0)
		SKIP(return, "needs root to make a null_blk disk");
	if (nullb_create(&nb, DELAY_MS, why, sizeof(why)))
		SKIP(return, "%s", why);
	fd = open_disk(nb.name, why, sizeof(why));
	if (fd >= 0) {
		measure(_metadata, fd, nb.name);
		close(fd);
	}
	bs_nullb_destroy(&nb);
	ASSERT_LE(0, fd) TH_LOG("%s", why);
}

TEST_HARNESS_MAIN
