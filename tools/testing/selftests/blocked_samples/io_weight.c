// SPDX-License-Identifier: GPL-2.0
/*
 * O_DIRECT reads from the virtio disk sleep in io_schedule(): the reading
 * thread must get [I] samples whose weights add up to the time it spent
 * off the CPU in read(), with the reader's own context.
 *
 * Under QEMU TCG much of a read() is CPU work (the guest kernel runs ~20x
 * slower), so the reference is the thread's off-CPU time, measured
 * independently from PERF_RECORD_SWITCH records (CLOCK_MONOTONIC stamps).
 *
 * What is asserted is what the design guarantees, not a ratio tuned on one
 * machine: the grid's points, on and off CPU, cover the thread's wall time;
 * blocked points fall only inside off-CPU intervals, so they never exceed
 * the switch records' off-CPU time; and most of them are [I] and [S].
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#ifndef PERIOD_NS
#define PERIOD_NS	BS_DEFAULT_PERIOD_NS
#endif
#define READ_SIZE	(64 * 1024)
#define TARGET_MS	120.0	/* off-CPU read() time to accumulate */
#define MIN_READS	20
#define MAX_WALL_S	60	/* give up accumulating after this long */

BS_FIXTURE(io_weight);

/* Find the first virtio disk and open it O_DIRECT; -1 and a reason if none. */
static int open_virtio_disk(char *name, size_t len, uint64_t *bytes,
			    char *why, size_t wlen)
{
	char path[600], buf[64];
	unsigned int maj, min;
	struct dirent *de;
	int fd = -1;
	FILE *f;
	DIR *d;

	name[0] = '\0';
	d = opendir("/sys/block");
	if (!d) {
		snprintf(why, wlen, "/sys/block not readable");
		return -1;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "vd", 2) &&
		    (!name[0] || strcmp(de->d_name, name) < 0))
			snprintf(name, len, "%s", de->d_name);
	closedir(d);
	if (!name[0]) {
		snprintf(why, wlen, "no virtio disk in /sys/block (vd*): run in a VM with a "
			 "virtio-blk disk (CONFIG_VIRTIO_BLK=y)");
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		snprintf(why, wlen, "cannot read %s", path);
		return -1;
	}
	fclose(f);
	*bytes = strtoull(buf, NULL, 10) * 512;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* No devtmpfs node: make one from the sysfs dev numbers. */
		snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%u:%u", &maj, &min) == 2) {
			snprintf(path, sizeof(path), "/tmp/bs-%s-%d", name, getpid());
			if (!mknod(path, S_IFBLK | 0400, makedev(maj, min))) {
				fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
				unlink(path);
			}
		}
		if (f)
			fclose(f);
	}
	if (fd < 0)
		snprintf(why, wlen, "cannot open /dev/%s O_DIRECT: %s", name,
			 strerror(errno));
	return fd;
}

TEST_F_TIMEOUT(io_weight, odirect_reads, 200)
{
	char disk[256], why[1024];
	struct perf_event_attr attr;
	uint64_t bytes, i_w, s_w, all_w, tot_w, blocks, t_end, t_open, t_close;
	size_t intervals;
	double read_ms = 0, off_ms = 0;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	int fd, reads = 0;
	void *buf;

	BS_REQUIRE_FEATURE();
	fd = open_virtio_disk(disk, sizeof(disk), &bytes, why, sizeof(why));
	if (fd < 0)
		SKIP(return, "%s", why);
	ASSERT_LE(READ_SIZE, bytes) TH_LOG("/dev/%s is too small", disk);
	ASSERT_EQ(0, posix_memalign(&buf, 4096, READ_SIZE));
	blocks = bytes / READ_SIZE;
	srand48(getpid());

	bs_make_attr(&attr, PERIOD_NS, true);
	bs_attr_switch_records(&attr);
	t_open = bs_now_ns();
	BS_OPEN(&ev, &attr, 0, -1);

	t_end = bs_now_ns() + MAX_WALL_S * 1000000000ULL;
	while ((off_ms < TARGET_MS || reads < MIN_READS) && bs_now_ns() < t_end) {
		off_t off = (off_t)(lrand48() % blocks) * READ_SIZE;
		uint64_t t0 = bs_now_ns();
		ssize_t n = pread(fd, buf, READ_SIZE, off);
		uint64_t t1 = bs_now_ns();

		ASSERT_EQ(READ_SIZE, n) TH_LOG("pread(/dev/%s, %lld): %s", disk,
					       (long long)off, strerror(errno));
		read_ms += bs_ms(t1 - t0);
		reads++;
		if (!(reads % 16)) {
			EXPECT_LE(0, bs_event_drain(&ev));
			off_ms = bs_ms(bs_offcpu_ns(&ev.smp, tid, NULL));
		}
	}
	usleep(1000);
	BS_DRAIN(&ev);
	t_close = bs_now_ns();
	close(fd);
	free(buf);

	/* Weights in ms of the grid. */
	i_w = bs_sum_weight(&ev.smp, tid, BS_I) * (PERIOD_NS / BS_NSEC_PER_MSEC);
	s_w = bs_sum_weight(&ev.smp, tid, BS_S) * (PERIOD_NS / BS_NSEC_PER_MSEC);
	all_w = (bs_sum_weight_all(&ev.smp, tid) - bs_sum_weight(&ev.smp, tid, BS_ONCPU)) *
		(PERIOD_NS / BS_NSEC_PER_MSEC);
	off_ms = bs_ms(bs_offcpu_ns(&ev.smp, tid, &intervals));
	TH_LOG("/dev/%s: %d O_DIRECT reads of %d KiB took %.2f ms in read(); the thread "
	       "was off the CPU %.2f ms in %zu intervals (switch records); [I] weight %llu, "
	       "[S] weight %llu, all blocked %llu", disk, reads, READ_SIZE / 1024, read_ms,
	       off_ms, intervals, (unsigned long long)i_w, (unsigned long long)s_w,
	       (unsigned long long)all_w);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	ASSERT_LE(TARGET_MS * 0.8, off_ms) {
		TH_LOG("reads hardly wait for the disk: %.2f ms off CPU in %d s",
		       off_ms, MAX_WALL_S);
	}
	/*
	 * On- plus off-CPU points cover the thread's time while the event was
	 * open, within 10 % and a point at each end.
	 */
	tot_w = bs_sum_weight_all(&ev.smp, tid) * (PERIOD_NS / BS_NSEC_PER_MSEC);
	BS_EXPECT_NEAR("on- plus off-CPU weight vs the event's wall time", tot_w,
		       bs_ms(t_close - t_open), 0.10);
	/*
	 * Blocked points lie inside off-CPU intervals, and the switch records
	 * enclose them (they also bracket perf's own switch work, 0.1-0.2 ms
	 * per interval under TCG: with 0.3 ms intervals the blocked weight read
	 * 70-93 % of their time, depending on the guest's speed).  So the
	 * records' time is an upper bound, and a lower bound only within a
	 * factor of two.
	 */
	EXPECT_GE(off_ms * 1.05 + 2, all_w) TH_LOG("blocked weight %llu > off-CPU time %.2f ms",
						 (unsigned long long)all_w, off_ms);
	EXPECT_LE(off_ms / 2, all_w) TH_LOG("blocked weight %llu < half the off-CPU time %.2f ms",
					    (unsigned long long)all_w, off_ms);
	/* ... which is mostly the I/O wait plus its wake-up delay ... */
	EXPECT_LE(all_w * 0.9, i_w + s_w);
	/*
	 * ... and a good part of it is the I/O wait.  Under TCG the wake-up
	 * after each completion takes about as long as a 64 KiB read (an idle
	 * vCPU has to be kicked out of halt): [I] measured 40-75 % of the
	 * blocked weight, [S] the rest.
	 */
	EXPECT_LE(all_w / 4, i_w) TH_LOG("[I] weight %llu, blocked weight %llu",
					  (unsigned long long)i_w, (unsigned long long)all_w);
	EXPECT_EQ(0, bs_sum_weight(&ev.smp, tid, BS_L));
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_I, geteuid() == 0);

	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
