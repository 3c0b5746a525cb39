// SPDX-License-Identifier: GPL-2.0
/*
 * A sleep in a percpu-rwsem is a lock wait: the waiter must get [L]
 * samples for it, not [B].
 *
 * The percpu-rwsem user space can hold for as long as it likes is a
 * superblock's freeze lock (sb->s_writers): FIFREEZE takes it for write,
 * FITHAW releases it, and every write(2) to the file system takes it for
 * read first (sb_start_write()), so a write to a frozen file system sleeps
 * in percpu_rwsem_wait() until the thaw.  The file system is ext2 on a
 * memory-backed null_blk disk made for the test.
 *
 * Each round the holder freezes the file system, sleeps HOLD_MS and notes
 * the time just before it thaws (u); the waiter notes the time before and
 * after its write (t0, t1).  The samples are attributed to the rounds by
 * their time (CLOCK_MONOTONIC).  Asserted:
 *  - [L] points: at least floor((u - t0 - slack) / period) per round (the
 *    waiter leaves the CPU within the slack of t0 and is woken no earlier
 *    than u);
 *  - [L] + [S] points during the writes fit the waiter's off-CPU intervals
 *    from its switch records;
 *  - [B] points during the writes: at most one per round (a kernel that
 *    does not type the wait as a lock wait gives them all to [B]);
 *  - the [L] samples carry the waiter's context.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "blocked_util.h"
#include "blocked_fixture.h"

#define ROUNDS		5
#define HOLD_MS		50

struct frozen_fs {
	struct bs_nullb nb;	/* the disk */
	char dev[80];		/* device node made for the test */
	char mnt[64];		/* mount point */
	bool mounted;
	int dir_fd;		/* the mount point, for FIFREEZE/FITHAW */
};

static struct frozen_fs fs = { .dir_fd = -1 };
static int frozen_round, done_round;	/* __atomic accesses only */
static uint64_t thaw_at[ROUNDS + 1];
static int holder_err;

static void fs_destroy(void)
{
	if (fs.dir_fd >= 0)
		close(fs.dir_fd);
	fs.dir_fd = -1;
	if (fs.mounted)
		umount(fs.mnt);
	fs.mounted = false;
	if (fs.mnt[0])
		rmdir(fs.mnt);
	fs.mnt[0] = '\0';
	if (fs.dev[0])
		unlink(fs.dev);
	fs.dev[0] = '\0';
	bs_nullb_destroy(&fs.nb);
}

/* Run mkfs.ext2 on @dev; 0, or -1 and why. */
static int mkfs_ext2(const char *dev, char *why, size_t wlen)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		snprintf(why, wlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		setenv("PATH", "/usr/sbin:/sbin:/usr/bin:/bin", 1);
		execlp("mkfs.ext2", "mkfs.ext2", "-q", "-F", dev, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(why, wlen, "mkfs.ext2 %s failed (status 0x%x; exit 127: not found, "
			 "install e2fsprogs)", dev, status);
		return -1;
	}
	return 0;
}

/*
 * ext2 on a 16 MiB memory-backed null_blk disk, mounted on a new directory
 * in /tmp.  1 = cannot be made here (why says so, the test skips), -1 =
 * failed (why), 0 = ready.
 */
static int fs_create(char *why, size_t wlen)
{
	static const char *const attrs[][2] = {
		{ "memory_backed", "1" },
		{ "size", "16" },		/* MiB */
		{ "blocksize", "1024" },
	};
	unsigned int maj, min;
	char path[256];
	FILE *f;
	int err;

	err = bs_nullb_create(&fs.nb, "blocked_lock", attrs, ARRAY_SIZE(attrs), why, wlen);
	if (err)
		return err;

	/* The disk is named after the configfs item; make our own node. */
	snprintf(path, sizeof(path), "/sys/block/%s/dev", fs.nb.name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u:%u", &maj, &min) != 2) {
		snprintf(why, wlen, "cannot read %s", path);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(fs.dev, sizeof(fs.dev), "/tmp/bs-%s", fs.nb.name);
	if (mknod(fs.dev, S_IFBLK | 0600, makedev(maj, min))) {
		snprintf(why, wlen, "mknod %s: %s", fs.dev, strerror(errno));
		fs.dev[0] = '\0';
		return -1;
	}
	if (mkfs_ext2(fs.dev, why, wlen))
		return 1;

	snprintf(fs.mnt, sizeof(fs.mnt), "/tmp/bs-freeze.XXXXXX");
	if (!mkdtemp(fs.mnt)) {
		snprintf(why, wlen, "mkdtemp /tmp: %s", strerror(errno));
		fs.mnt[0] = '\0';
		return -1;
	}
	if (mount(fs.dev, fs.mnt, "ext2", 0, NULL)) {
		snprintf(why, wlen, "mount -t ext2 %s: %s%s", fs.dev, strerror(errno),
			 errno == ENODEV ? " (needs CONFIG_EXT2_FS)" : "");
		return errno == ENODEV ? 1 : -1;
	}
	fs.mounted = true;
	fs.dir_fd = open(fs.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs.dir_fd < 0) {
		snprintf(why, wlen, "open %s: %s", fs.mnt, strerror(errno));
		return -1;
	}
	return 0;
}

/* Keeps the file system frozen HOLD_MS per round while the waiter writes. */
static void *holder(void *arg)
{
	int r;

	for (r = 1; r <= ROUNDS; r++) {
		if (ioctl(fs.dir_fd, FIFREEZE, 0)) {
			holder_err = errno;
			__atomic_store_n(&frozen_round, ROUNDS + 1, __ATOMIC_RELEASE);
			return NULL;
		}
		__atomic_store_n(&frozen_round, r, __ATOMIC_RELEASE);
		bs_sleep_ns(HOLD_MS * BS_NSEC_PER_MSEC);
		thaw_at[r] = bs_now_ns();
		if (ioctl(fs.dir_fd, FITHAW, 0) && !holder_err)
			holder_err = errno;
		while (__atomic_load_n(&done_round, __ATOMIC_ACQUIRE) < r)
			bs_sleep_ns(BS_NSEC_PER_MSEC);
	}
	return NULL;
}

static void measure(struct __test_metadata *_metadata, int fd)
{
	uint64_t t0[ROUNDS + 1], t1[ROUNDS + 1], l_w = 0, ls_w = 0, b_w = 0, l_min = 0;
	uint64_t max_points = 0, min_points = 0;
	struct perf_event_attr attr;
	double wait_ms = 0, off_ms = 0;
	size_t intervals = 0;
	struct bs_event ev;
	pid_t tid = bs_gettid();
	pthread_t th;
	int r;

	/* The event follows this (waiter) thread only: no inherit. */
	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	bs_attr_switch_records(&attr);
	BS_OPEN(&ev, &attr, 0, -1);
	ASSERT_EQ(0, pthread_create(&th, NULL, holder, NULL));

	for (r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&frozen_round, __ATOMIC_ACQUIRE) < r)
			sched_yield();
		if (holder_err)
			break;
		t0[r] = bs_now_ns();
		EXPECT_EQ(1, pwrite(fd, "x", 1, r)) TH_LOG("write: %s", strerror(errno));
		t1[r] = bs_now_ns();
		__atomic_store_n(&done_round, r, __ATOMIC_RELEASE);
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	pthread_join(th, NULL);
	ASSERT_EQ(0, holder_err) TH_LOG("FIFREEZE/FITHAW on %s: %s", fs.mnt,
					strerror(holder_err));
	BS_DRAIN(&ev);

	for (r = 1; r <= ROUNDS; r++) {
		uint64_t held = thaw_at[r] - t0[r];
		struct bs_offcpu off;

		/* The holder thawed while the waiter was writing. */
		EXPECT_LT(t0[r], thaw_at[r]);
		EXPECT_LE(thaw_at[r], t1[r]);
		wait_ms += bs_ms(t1[r] - t0[r]);
		if (held > BS_SLACK_NS)
			l_min += (held - BS_SLACK_NS) / attr.sample_period;
		l_w += bs_sum_weight_between(&ev.smp, tid, BS_L, t0[r], t1[r]);
		b_w += bs_sum_weight_between(&ev.smp, tid, BS_B, t0[r], t1[r]);
		ls_w += bs_sum_weight_between(&ev.smp, tid, BS_L, t0[r], t1[r]) +
			bs_sum_weight_between(&ev.smp, tid, BS_S, t0[r], t1[r]);
		bs_offcpu_bounds(&ev.smp, tid, t0[r], t1[r], attr.sample_period,
				 BS_SLACK_NS, &off);
		off_ms += bs_ms(off.ns);
		intervals += off.nr;
		max_points += off.max_points;
		min_points += off.min_points;
	}
	TH_LOG("writer waited %.2f ms for a frozen ext2 in %d rounds (frozen %d ms each), "
	       "%.2f ms off the CPU in %zu intervals (switch records); [L] %llu, "
	       "[L]+[S] %llu, [B] %llu points during the writes", wait_ms, ROUNDS,
	       HOLD_MS, off_ms, intervals, (unsigned long long)l_w,
	       (unsigned long long)ls_w, (unsigned long long)b_w);
	BS_LOG_SUMMARY("writer", &ev.smp, tid);

	BS_EXPECT_BETWEEN("[L] points during the writes (>= (thaw - write call - slack) / period)",
			  l_min, l_w, ls_w);
	BS_EXPECT_BETWEEN("[L]+[S] points during the writes vs their off-CPU intervals",
			  min_points, ls_w, max_points);
	BS_EXPECT_BETWEEN("[B] points during the writes (the wait is a lock wait)",
			  0, b_w, ROUNDS);
	BS_EXPECT_CONTEXT(&ev.smp, tid, BS_L, true);

	bs_event_close(&ev);
}

BS_FIXTURE(lock_percpu_rwsem);

TEST_F_TIMEOUT(lock_percpu_rwsem, frozen_fs_writer, 120)
{
	char why[512], path[128];
	int fd, err;

	BS_REQUIRE_FEATURE();
	if (geteuid() != 0)
		SKIP(return, "needs root to make a file system and freeze it");
	err = fs_create(why, sizeof(why));
	if (err > 0) {
		fs_destroy();
		SKIP(return, "%s", why);
	}
	if (err < 0) {
		fs_destroy();
		ASSERT_EQ(0, err) TH_LOG("%s", why);
	}
	snprintf(path, sizeof(path), "%s/file", fs.mnt);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		measure(_metadata, fd);
		close(fd);
	}
	fs_destroy();
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
}

TEST_HARNESS_MAIN
