// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz sampler: one sampling task-clock perf event per thread, opened by the
 * thread itself, with blocked samples (perf_event_attr.blocked, bit 38 of the
 * flags word) when the kernel supports them, and kernel + user callchains when
 * permitted.  Samples are read from the event's ring buffer by the owning
 * thread: from a per-thread CPU-time timer (so blocked threads are never
 * interrupted) and from the interposed calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

/*
 * Data pages of each thread's ring (a power of two).  A thread drains its
 * ring every 10 ms of its CPU time and after every wrapped call, so it holds
 * about ten on-CPU samples (a few hundred bytes each) plus the blocked
 * samples of one wake-up: 32 KiB leaves room for bursts.  The ring is
 * locked memory, charged to the user: unprivileged, perf_event_mlock_kb
 * (516 KiB per CPU by default) plus RLIMIT_MEMLOCK, so the size decides how
 * many threads can be sampled (32 pages: 68 threads on 2 CPUs; 8: 260).
 */
#define RING_PAGES	8
#define ATTR_FLAGS_OFF	40
#define ATTR_BLOCKED	(1ULL << 38)

_Atomic int bcoz_unsampled_threads;
int bcoz_blocked_supported;
int bcoz_kernel_samples;
static uint64_t sample_type;
static long page_size;
static int use_stack = 1;	/* user regs + stack copy (see make_attr) */
unsigned int bcoz_stack_bytes = BCOZ_STACK_BYTES;

static int perf_open(struct perf_event_attr *a)
{
	return syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void make_attr(struct perf_event_attr *a, int blocked, int kernel)
{
	uint64_t flags;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->sample_period = BCOZ_PERIOD_NS;
	/* the count in each sample: the CPU time it leaves unsampled is known */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			 PERF_SAMPLE_CALLCHAIN;
	/* sample times on bcoz_now()'s clock: they place each delay in time */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	if (blocked)
		a->sample_type |= PERF_SAMPLE_WEIGHT;
#ifdef __x86_64__
	/* a copy of the top of the user stack finds the caller of a frameless
	 * libc syscall wrapper (pread, nanosleep...), which frame-pointer
	 * callchains skip */
	if (use_stack && bcoz_stack_bytes) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = 1ULL << 7;	/* PERF_REG_X86_SP */
		a->sample_stack_user = bcoz_stack_bytes;
	}
#endif
	a->disabled = 1;
	/*
	 * Time in the kernel (a syscall's own CPU time) is sampled and
	 * charged to the user line that made the call, but the kernel
	 * frames are never looked at: unwinding them on every on-CPU sample
	 * taken in kernel mode is work for nothing (and slow under
	 * emulation).  A blocked sample's kernel stack is still unwound, by
	 * the kernel, to find the wait's IP.
	 */
	a->exclude_kernel = !kernel;
	a->exclude_callchain_kernel = 1;
	a->exclude_hv = 1;
	a->sample_max_stack = 127;
	if (blocked) {
		memcpy(&flags, (char *)a + ATTR_FLAGS_OFF, sizeof(flags));
		flags |= ATTR_BLOCKED;
		memcpy((char *)a + ATTR_FLAGS_OFF, &flags, sizeof(flags));
	}
}

static int read_int_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -99;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -99;
		fclose(f);
	}
	return v;
}

/* kernel.perf_event_max_sample_rate now (the kernel lowers it), or -99 */
int sampler_max_sample_rate(void)
{
	return read_int_file("/proc/sys/kernel/perf_event_max_sample_rate");
}

/*
 * Does this kernel really give blocked samples?  That it accepts bit 38 of
 * the flags word is not proof: a kernel without the feature could some day
 * give that bit another meaning.  The kernel exposes no other sign of the
 * feature (no sysfs file, no attr size or flag of its own; built without
 * it, it refuses the bit with EOPNOTSUPP), so ask for what only the feature
 * does: a blocked task-clock event with a 100 us period on this thread, a
 * 2 ms sleep, and at switch-in a sample of the sleep must be in the ring,
 * marked with a PERF_RECORD_MISC_BLOCKED_* bit and weighing >= 1 points.
 * 1: seen; 0: not seen (or cannot tell).
 */
static int blocked_sample_seen(void)
{
	struct perf_event_attr a;
	struct perf_event_mmap_page *pg;
	size_t len = 2 * page_size;
	uint64_t flags;
	int fd, seen = 0;
	void *ring;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 100000;
	a.sample_type = PERF_SAMPLE_WEIGHT;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	memcpy(&flags, (char *)&a + ATTR_FLAGS_OFF, sizeof(flags));
	flags |= ATTR_BLOCKED;
	memcpy((char *)&a + ATTR_FLAGS_OFF, &flags, sizeof(flags));
	fd = perf_open(&a);
	if (fd < 0)
		return 0;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		close(fd);
		return 0;
	}
	pg = ring;
	for (int attempt = 0; attempt < 3 && !seen; attempt++) {
		struct timespec ts = { 0, 2000000L << attempt };	/* 2, 4, 8 ms */
		const unsigned char *data = (const unsigned char *)ring + page_size;
		uint64_t size = pg->data_size ? pg->data_size : (uint64_t)page_size;
		uint64_t head, tail;

		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		syscall(SYS_nanosleep, &ts, NULL);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		tail = pg->data_tail;
		/* records are 8-byte aligned and this one is 16 bytes: no wrap inside */
		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			uint64_t w;

			memcpy(&h, data + tail % size, sizeof(h));
			if (h.size < sizeof(h))
				break;
			if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 8 &&
			    bcoz_class_of(h.misc) != BCOZ_ONCPU && tail % size + sizeof(h) + 8 <= size) {
				memcpy(&w, data + tail % size + sizeof(h), 8);
				if (w >= 1)
					seen = 1;
			}
			tail += h.size;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
	munmap(ring, len);
	close(fd);
	return seen;
}

int sampler_probe(void)
{
	struct perf_event_attr a;
	int fd, err;
	const char *not_blocked = NULL;

	page_size = sysconf(_SC_PAGESIZE);
	/* 1. plain user-only task-clock: does perf work at all? */
	make_attr(&a, 0, 0);
	fd = perf_open(&a);
	if (fd < 0) {
		err = errno;
		if (err == EACCES || err == EPERM) {
			int p = read_int_file("/proc/sys/kernel/perf_event_paranoid");

			bcoz_msg("error: perf_event_open failed: %s (kernel.perf_event_paranoid = %d). "
				 "Fix: sudo sysctl kernel.perf_event_paranoid=1 (or run as root / "
				 "grant CAP_PERFMON; in containers allow perf_event_open in seccomp)\n",
				 strerror(err), p);
		} else if (err == ENOSYS || err == ENOENT) {
			bcoz_msg("error: perf_event_open is not available (%s). Fix: use a kernel "
				 "with CONFIG_PERF_EVENTS=y\n", strerror(err));
		} else {
			bcoz_msg("error: perf_event_open(task-clock) failed: %s\n", strerror(err));
		}
		return -1;
	}
	close(fd);
	/* 2. samples in kernel mode (a syscall's CPU time) */
	make_attr(&a, 0, 1);
	fd = perf_open(&a);
	if (fd >= 0) {
		bcoz_kernel_samples = 1;
		close(fd);
	} else if (bcoz_cfg.verbose) {
		bcoz_msg("note: samples in kernel mode not permitted (%s): the CPU time of "
			 "system calls is not sampled (sudo sysctl kernel.perf_event_paranoid=1 "
			 "enables it)\n", strerror(errno));
	}
	/* 3. blocked samples */
	make_attr(&a, 1, bcoz_kernel_samples);
	fd = bcoz_cfg.no_blocked ? (errno = EINVAL, -1) : perf_open(&a);
	if (fd < 0 && errno == EINVAL && !bcoz_cfg.no_blocked) {
		/* a kernel might refuse the stack copy on blocked events: do without */
		use_stack = 0;
		make_attr(&a, 1, bcoz_kernel_samples);
		fd = perf_open(&a);
		if (fd < 0) {
			use_stack = 1;
			errno = EINVAL;
		} else {
			bcoz_msg("note: blocked samples without a user stack copy; callers of "
				 "frameless libc wrappers may be missed\n");
		}
	}
	if (fd >= 0) {
		close(fd);
		if (blocked_sample_seen()) {
			bcoz_blocked_supported = 1;
		} else {
			/* accepted, but it is not blocked samples: treat as absent */
			use_stack = 1;
			fd = -1;
			errno = ENOTSUP;
			not_blocked = "accepted, but a 2-8 ms sleep gave no blocked sample";
		}
	}
	if (fd < 0) {
		err = errno;
		if (!not_blocked)
			not_blocked = strerror(err);
		if (bcoz_cfg.scope != BCOZ_ONCPU) {
			bcoz_msg("error: --blocked-scope needs blocked samples, but this kernel "
				 "has none (perf_event_attr.blocked: %s). Fix: boot a kernel with "
				 "the blocked-samples patches and CONFIG_PERF_BLOCKED_SAMPLES=y, or "
				 "drop --blocked-scope\n", not_blocked);
			return -1;
		}
		/* say it once per bcoz run, not once per process */
		if (!bcoz_cfg.warned_blocked) {
			bcoz_msg("note: this kernel has no blocked samples (perf_event_attr.blocked: "
				 "%s); profiling on-CPU time only. Off-CPU profiling needs a kernel "
				 "with CONFIG_PERF_BLOCKED_SAMPLES=y\n", not_blocked);
			setenv("BCOZ_WARNED_BLOCKED", "1", 1);
		}
	}
	make_attr(&a, bcoz_blocked_supported, bcoz_kernel_samples);
	sample_type = a.sample_type;
	return 0;
}

/* Before any thread samples: the user stack copy per sample, 0 for none. */
void sampler_set_stack_bytes(unsigned int bytes)
{
	struct perf_event_attr a;

	bcoz_stack_bytes = bytes;
	make_attr(&a, bcoz_blocked_supported, bcoz_kernel_samples);
	sample_type = a.sample_type;	/* the records' layout follows */
}

/* the first reason a thread is not sampled; later ones are only counted */
static void unsampled(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void unsampled(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (atomic_fetch_add(&bcoz_unsampled_threads, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	bcoz_msg("warning: %s; this thread and any others that hit the same limit are not "
		 "sampled (their count is given at exit)\n", buf);
}

/*
 * File descriptors are the application's: bcoz takes its one per thread
 * only while a quarter of the limit (at least 16) stays free above it, so
 * a program with many threads runs short of samples, not of descriptors.
 */
static int fd_too_high(int fd, long *limit)
{
	struct rlimit rl;
	rlim_t keep;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	keep = rl.rlim_cur / 4 < 16 ? 16 : rl.rlim_cur / 4;
	*limit = (long)rl.rlim_cur;
	return (rlim_t)fd + keep >= rl.rlim_cur;
}

int sampler_start(struct bcoz_thread *t)
{
	struct perf_event_attr a;
	size_t len = (RING_PAGES + 1) * page_size;
	long limit = 0;

	make_attr(&a, bcoz_blocked_supported, bcoz_kernel_samples);
	/*
	 * Enabled from the start: the first sample falls due a period (1 ms of
	 * the thread's CPU time) later, long after the ring is mapped, and an
	 * ioctl less per thread matters to a program that starts one per task
	 * (0.1 ms under QEMU TCG).
	 */
	a.disabled = 0;
	t->fd = perf_open(&a);
	if (t->fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			unsampled("perf_event_open for thread %d: %s (ulimit -n raises the limit)",
				  (int)t->tid, strerror(errno));
		else
			unsampled("perf_event_open for thread %d failed: %s", (int)t->tid,
				  strerror(errno));
		return -1;
	}
	if (fd_too_high(t->fd, &limit)) {
		close(t->fd);
		t->fd = -1;
		unsampled("thread %d would leave the program too few of its %ld file descriptors "
			  "(ulimit -n raises the limit)", (int)t->tid, limit);
		return -1;
	}
	t->ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		int err = errno;

		if (err == EPERM || err == ENOMEM)
			unsampled("mmap of thread %d's perf ring buffer: %s: the locked memory for "
				  "perf buffers is used up (%zu KiB a thread; raise "
				  "kernel.perf_event_mlock_kb or ulimit -l, or run as root)",
				  (int)t->tid, strerror(err), len / 1024);
		else
			unsampled("mmap of thread %d's perf ring buffer failed: %s", (int)t->tid,
				  strerror(err));
		close(t->fd);
		t->fd = -1;
		t->ring = NULL;
		return -1;
	}
	t->ring_len = len;
	t->tail = 0;
	return 0;
}

void sampler_enable(struct bcoz_thread *t, int on)
{
	if (t->fd >= 0)
		ioctl(t->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* The thread's task-clock so far, in ns (0 if it is not sampled). */
uint64_t sampler_count(struct bcoz_thread *t)
{
	uint64_t c;

	/* the real call: read is interposed by this library */
	if (t->fd < 0 || syscall(SYS_read, t->fd, &c, sizeof(c)) != sizeof(c))
		return 0;
	return c;
}

void sampler_stop(struct bcoz_thread *t)
{
	if (t->fd < 0)
		return;
	/* no disable first: the close removes the event (one ioctl less) */
	if (t->ring)
		munmap(t->ring, t->ring_len);
	close(t->fd);
	t->fd = -1;
	t->ring = NULL;
}

int sampler_has_data(const struct bcoz_thread *t)
{
	const struct perf_event_mmap_page *pg = t->ring;

	return pg && t->fd >= 0 &&
	       __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) != pg->data_tail;
}

/*
 * Is the on-CPU sample just read, timed @time, one of on-CPU points the
 * kernel owed?  Points whose timer interrupt had not come when the thread
 * left the CPU are written at its switch-in, as one on-CPU sample with the
 * stack it left with, right before the blocked samples of the same interval
 * and with the same time (Documentation/admin-guide/perf/blocked-samples.rst);
 * a timer's sample never has a blocked sample of its own time after it.
 * @tail is where the next record starts.  An interval too short to hold an
 * off-CPU point has no blocked sample, and its owed points are not told
 * apart.  Without blocked samples (a stock kernel) there is nothing to
 * look for, and the caller does not look.
 */
static int owed_points(const unsigned char *data, uint64_t size, uint64_t tail,
		       uint64_t head, uint64_t time)
{
	struct perf_event_header h;
	uint64_t w[3];

	if (!(sample_type & PERF_SAMPLE_IP) || !(sample_type & PERF_SAMPLE_TIME) ||
	    tail + sizeof(w) > head)
		return 0;
	for (int i = 0; i < 3; i++)	/* header, IP, time; 8-byte aligned */
		memcpy(&w[i], data + (tail + 8 * i) % size, 8);
	memcpy(&h, &w[0], sizeof(h));
	return h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(w) &&
	       (h.misc & BCOZ_MISC_MASK) && w[2] == time;
}

/* whether samples carry a copy of the user stack */
int sampler_stack_copied(void)
{
#ifdef __x86_64__
	return use_stack && bcoz_stack_bytes;
#else
	return 0;
#endif
}

/* the data part of a thread's ring */
size_t sampler_ring_bytes(void)
{
	return (size_t)RING_PAGES * page_size;
}

void sampler_drain(struct bcoz_thread *t, sample_cb cb)
{
	struct perf_event_mmap_page *pg;
	unsigned char *data;
	uint64_t head, tail, size;

	if (!t || t->fd < 0 || !t->ring)
		return;
	pg = t->ring;
	data = (unsigned char *)t->ring + page_size;
	size = pg->data_size ? pg->data_size : (uint64_t)RING_PAGES * page_size;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		const uint64_t *p;
		uint64_t nr = 0, weight = 1, nstack = 0, time = 0;
		const uint64_t *ips = NULL, *stack = NULL;

		if (off + sizeof(h) <= size) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			size_t first = size - off;

			memcpy(&h, data + off, first);
			memcpy((char *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.size > sizeof(t->rec)) {
			tail += h.size;
			continue;
		}
		if (off + h.size <= size) {
			memcpy(t->rec.b, data + off, h.size);
		} else {
			size_t first = size - off;

			memcpy(t->rec.b, data + off, first);
			memcpy(t->rec.b + first, data, h.size - first);
		}
		tail += h.size;
		if (h.type == PERF_RECORD_LOST) {
			atomic_fetch_add(&bcoz_total_lost, t->rec.u[2]);
			continue;
		}
		if (h.type == PERF_RECORD_THROTTLE) {
			atomic_fetch_add(&bcoz_total_throttled, 1);
			continue;
		}
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		p = t->rec.u + 1;	/* after the 8-byte header */
		/* field order: IP, TIME, READ, CALLCHAIN, REGS, STACK, WEIGHT (perf_event.h) */
		{
			const uint64_t *end = (const uint64_t *)(t->rec.b + h.size);
			uint64_t ip = 0;

			if (sample_type & PERF_SAMPLE_IP)
				ip = *p++;
			if (sample_type & PERF_SAMPLE_TIME)
				time = *p++;
			t->sample_read = 0;
			if (sample_type & PERF_SAMPLE_READ) {
				if (p >= end)
					continue;
				t->sample_read = *p++;
			}
			if (sample_type & PERF_SAMPLE_CALLCHAIN) {
				if (p >= end)
					continue;
				nr = *p++;
				if (p + nr > end)
					continue;
				ips = p;
				p += nr;
			}
			if (sample_type & PERF_SAMPLE_REGS_USER) {
				uint64_t abi;

				if (p >= end)
					continue;
				abi = *p++;
				if (abi)
					p += __builtin_popcountll(1ULL << 7);
			}
			if (sample_type & PERF_SAMPLE_STACK_USER) {
				uint64_t sz;

				if (p >= end)
					continue;
				sz = *p++;
				if (sz) {
					if (p + sz / 8 + 1 > end)
						continue;
					stack = p;
					p += sz / 8;
					nstack = *p++;	/* dyn_size: bytes really copied */
					nstack /= 8;
				}
			}
			if (sample_type & PERF_SAMPLE_WEIGHT) {
				if (p >= end)
					continue;
				weight = *p++;
				if (!weight)
					weight = 1;
			}
			if (!ips) {
				ips = t->rec.u + 1;	/* the IP alone */
				nr = 1;
				(void)ip;
			}
		}
		t->owed = bcoz_blocked_supported && !(h.misc & BCOZ_MISC_MASK) &&
			  owed_points(data, size, tail, head, time);
		cb(t, h.misc, time, weight, ips, nr, nstack ? stack : NULL, nstack);
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}
