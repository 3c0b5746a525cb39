// SPDX-License-Identifier: GPL-2.0
/*
 * O_DIRECT reads from the virtio disk sleep in io_schedule(): the reading
 * thread must get [I] samples whose weights add up to the time it spent in
 * read(), with the reader's own context.
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

#define READ_SIZE	(64 * 1024)
#define TARGET_MS	150.0	/* total read() time to accumulate */
#define MIN_READS	20
#define MAX_WALL_S	40	/* give up accumulating after this long */

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
	uint64_t bytes, i_w, s_w, blocks, t_end;
	double read_ms = 0;
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

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	BS_OPEN(&ev, &attr, 0, -1);

	t_end = bs_now_ns() + MAX_WALL_S * 1000000000ULL;
	while ((read_ms < TARGET_MS || reads < MIN_READS) && bs_now_ns() < t_end) {
		off_t off = (off_t)(lrand48() % blocks) * READ_SIZE;
		uint64_t t0 = bs_now_ns();
		ssize_t n = pread(fd, buf, READ_SIZE, off);
		uint64_t t1 = bs_now_ns();

		ASSERT_EQ(READ_SIZE, n) TH_LOG("pread(/dev/%s, %lld): %s", disk,
					       (long long)off, strerror(errno));
		read_ms += bs_ms(t1 - t0);
		reads++;
		if (!(reads % 64))
			EXPECT_LE(0, bs_event_drain(&ev));
	}
	usleep(1000);
	BS_DRAIN(&ev);
	close(fd);
	free(buf);

	i_w = bs_sum_weight(&ev.smp, tid, BS_I);
	s_w = bs_sum_weight(&ev.smp, tid, BS_S);
	TH_LOG("/dev/%s: %d O_DIRECT reads of %d KiB took %.2f ms in read(); "
	       "[I] weight %llu, [S] weight %llu", disk, reads, READ_SIZE / 1024,
	       read_ms, (unsigned long long)i_w, (unsigned long long)s_w);
	BS_LOG_SUMMARY("all samples", &ev.smp, tid);

	ASSERT_LE(100.0, read_ms) {
		TH_LOG("reads too fast to measure: %.2f ms in %d s", read_ms, MAX_WALL_S);
	}
	BS_EXPECT_NEAR("[I] weight vs measured read() time", i_w, read_ms, 0.25);
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_I, geteuid() == 0);

	bs_event_close(&ev);
}

TEST_HARNESS_MAIN
