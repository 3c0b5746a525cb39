/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the blocked samples selftests: event attributes,
 * perf_event_open(), ring buffer parsing, per-class/per-tid weight sums,
 * callchain and kernel symbol checks, kernel log scanning.
 *
 * The ABI is described in
 * Documentation/admin-guide/perf/blocked-samples-abi.txt.
 */
#ifndef BLOCKED_UTIL_H
#define BLOCKED_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/*
 * The installed uapi header may predate the feature. The misc bits and the
 * attr bit position are fixed by the ABI, so provide them here; the attr bit
 * is then set through the raw flags word (see bs_set_blocked()).
 */
#ifdef PERF_RECORD_MISC_BLOCKED_MASK
#define BS_HAVE_ATTR_BLOCKED 1
#else
#define BS_HAVE_ATTR_BLOCKED 0
#define PERF_RECORD_MISC_BLOCKED_OTHER	(1 << 3)
#define PERF_RECORD_MISC_BLOCKED_IO	(1 << 4)
#define PERF_RECORD_MISC_BLOCKED_SCHED	(1 << 5)
#define PERF_RECORD_MISC_BLOCKED_LOCK	(1 << 6)
#define PERF_RECORD_MISC_BLOCKED_MASK	(0xf << 3)
#endif

/* Byte offset of the 64-bit flags word and the bit number of `blocked'. */
#define BS_ATTR_FLAGS_OFFSET	40
#define BS_ATTR_BLOCKED_BIT	38

#define BS_NSEC_PER_MSEC	1000000ULL
#define BS_DEFAULT_PERIOD_NS	BS_NSEC_PER_MSEC

/*
 * What the tests assert follows from the design: every sampling point lies
 * in exactly one sample, and each part of an off-CPU interval weighs the
 * number of points that fell into it, so a part of length L weighs
 * floor(L / period) or one more.  Upper bounds are exact.  Lower bounds
 * also have to allow, once per off-CPU interval, for the kernel's own path
 * between what the test can see (its clock reads, a switch record, a
 * timer's expiry) and the switch-out or switch-in where the interval
 * starts or ends: the scheduler and perf's switch work.  That takes
 * microseconds on hardware, 0.05-0.2 ms in a QEMU TCG guest, up to ~10 ms
 * when TCG translates a code path for the first time or a loaded host
 * takes the virtual CPU away (seen with stress-ng --cpu 2 beside a 2-CPU
 * guest); BS_SLACK_NS covers it twice over.
 */
#define BS_SLACK_NS		(20 * BS_NSEC_PER_MSEC)

/* Lowest kernel virtual address on x86_64 (and the arm64 style split). */
#define BS_KERNEL_ADDR_MIN	0xffff800000000000ULL

/* Subclass indices used by the sums; 0 is "on-CPU" (no blocked bit). */
enum bs_class {
	BS_ONCPU = 0,
	BS_B,		/* PERF_RECORD_MISC_BLOCKED_OTHER */
	BS_I,		/* PERF_RECORD_MISC_BLOCKED_IO */
	BS_S,		/* PERF_RECORD_MISC_BLOCKED_SCHED */
	BS_L,		/* PERF_RECORD_MISC_BLOCKED_LOCK */
	BS_BAD,		/* more than one blocked bit set: ABI violation */
	BS_NR_CLASSES,
};

extern const char *const bs_class_name[BS_NR_CLASSES];

struct bs_sample {
	uint16_t misc;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t period;
	uint64_t weight;
	uint64_t count;		/* PERF_SAMPLE_READ, read_format 0 */
	uint64_t nr_chain;
	uint64_t *chain;	/* malloc'ed copy, nr_chain entries */
};

/*
 * PERF_RECORD_SWITCH of a per-task event (bs_attr_switch_records()), or
 * PERF_RECORD_SWITCH_CPU_WIDE of a CPU-wide one.
 */
struct bs_switch {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint32_t tid;
	uint32_t other;		/* CPU-wide: the next (out) or prev (in) tid */
	bool out;		/* switch-out (else switch-in) */
	bool preempt;		/* switch-out while runnable */
};

struct bs_samples {
	struct bs_sample *s;
	size_t nr, alloc;
	struct bs_switch *sw;
	size_t nr_sw, alloc_sw;
	uint64_t lost;		/* sum of PERF_RECORD_LOST.lost */
	uint64_t nr_lost_records;
	uint64_t nr_throttle;	/* PERF_RECORD_THROTTLE */
	uint64_t nr_unthrottle;	/* PERF_RECORD_UNTHROTTLE */
	uint64_t nr_other;	/* records other than the above */
	int parse_error;	/* malformed record seen */
};

struct bs_event {
	int fd;
	void *base;		/* mmap base (control page) */
	size_t mmap_len;
	uint64_t sample_type;
	bool sample_id_all;
	struct bs_samples smp;
};

/* Time, sleeping, spinning, affinity. */
uint64_t bs_now_ns(void);
double bs_ms(uint64_t ns);
void bs_sleep_ns(uint64_t ns);		/* one nanosleep(), restarted on EINTR */
void bs_spin_ns(uint64_t ns);		/* busy loop on CLOCK_MONOTONIC */
/* spin @spin_ns, nap @nap_ns, for @run_ns of wall time; returns the naps */
unsigned long bs_spin_nap(uint64_t run_ns, uint64_t spin_ns, uint64_t nap_ns);
pid_t bs_gettid(void);
int bs_pin_self(int cpu);
int bs_pick_cpu(void);			/* highest CPU in our affinity mask */

/*
 * Attribute helpers. bs_make_attr(): task-clock, sampling every @period_ns,
 * sample_type IP|TID|TIME|PERIOD|WEIGHT|CALLCHAIN, blocked bit per @blocked.
 */
void bs_make_attr(struct perf_event_attr *attr, uint64_t period_ns, bool blocked);
void bs_set_blocked(struct perf_event_attr *attr);
/*
 * Also record PERF_RECORD_SWITCH with CLOCK_MONOTONIC time stamps: an
 * independent measure of the thread's off-CPU intervals (bs_offcpu_ns()),
 * comparable with clock_gettime(CLOCK_MONOTONIC).
 */
void bs_attr_switch_records(struct perf_event_attr *attr);
/* Sample and record times on CLOCK_MONOTONIC, comparable with bs_now_ns(). */
void bs_attr_monotonic(struct perf_event_attr *attr);
bool bs_get_blocked(const struct perf_event_attr *attr);

long bs_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);

/*
 * Open an event and map @data_pages (power of two) pages of ring buffer.
 * Returns 0 or -errno; on failure ev->fd is -1.
 */
int bs_event_open(struct bs_event *ev, struct perf_event_attr *attr,
		  pid_t pid, int cpu, unsigned int data_pages);
void bs_event_close(struct bs_event *ev);
/*
 * A dummy software event on @pid that only records its context switches
 * (bs_attr_switch_records()), as an independent off-CPU reference.
 */
int bs_switch_tracker_open(struct bs_event *ev, pid_t pid);
/*
 * The same for every task on @cpu (pid -1: CAP_PERFMON or paranoid <= 0),
 * with @data_pages of ring.  It lives in the CPU's context, not a task's,
 * so it leaves cloned task contexts clones.
 */
int bs_cpu_switch_tracker_open(struct bs_event *ev, int cpu,
			       unsigned int data_pages);

/*
 * Consume everything currently in the ring buffer into ev->smp (appending).
 * Handles wrap-around; returns number of new samples or -1 on parse error.
 */
int bs_event_drain(struct bs_event *ev);
void bs_samples_free(struct bs_samples *smp);
/* Move all samples of @src to the end of @dst (e.g. per-CPU rings). */
int bs_samples_move(struct bs_samples *dst, struct bs_samples *src);
/* Current task-clock count of the event (ns on CPU), 0 on error. */
uint64_t bs_event_count(const struct bs_event *ev);

/*
 * Probe: open a valid blocked event on the calling thread.
 * Returns 0 or the errno; bs_feature_msg() explains an errno.
 */
int bs_probe_feature(void);
const char *bs_feature_msg(int err);

/* Sample classification and sums. tid < 0 means all tids. */
enum bs_class bs_sample_class(const struct bs_sample *s);
uint64_t bs_sum_weight(const struct bs_samples *smp, int tid, enum bs_class c);
size_t bs_count(const struct bs_samples *smp, int tid, enum bs_class c);
uint64_t bs_max_weight(const struct bs_samples *smp, int tid, enum bs_class c);
/*
 * Off-CPU time of @tid from its switch records: sum of (switch-in - the
 * preceding switch-out); *nr gets the number of intervals.
 */
uint64_t bs_offcpu_ns(const struct bs_samples *smp, int tid, size_t *nr);
/*
 * Bounds on the off-CPU points of @tid from its switch records, for the
 * intervals that start at or after @from and end by @to (0: no limit).
 * Each interval the blocked samples measure lies inside the records' one:
 * it holds at most floor(R / period) + 1 points (max_points), and, as it
 * falls short of R by at most @slack, at least floor((R - slack) / period)
 * (min_points).
 */
struct bs_offcpu {
	uint64_t ns;		/* off-CPU time by the records */
	size_t nr;		/* intervals */
	uint64_t max_points, min_points;
};
void bs_offcpu_bounds(const struct bs_samples *smp, int tid, uint64_t from,
		      uint64_t to, uint64_t period, uint64_t slack,
		      struct bs_offcpu *o);
/* Weight of @tid's samples of class @c with a time in (from, to]. */
uint64_t bs_sum_weight_between(const struct bs_samples *smp, int tid,
			       enum bs_class c, uint64_t from, uint64_t to);
/* Weight of @tid's blocked samples (every class but on-CPU) in (from, to]. */
uint64_t bs_sum_blocked_between(const struct bs_samples *smp, int tid,
				uint64_t from, uint64_t to);
/*
 * The points' offset at each on-CPU sample k of @tid: D_k = s_k - W_k x
 * period, with s_k its time and W_k the points of all samples up to it.
 * From an enable at e, W_k x period is s_k - e less the sample's latency
 * and the off-CPU time not yet reached by a point (under a period): every
 * D_k >= e, and D_k < e + period + the sample's latency.  Points that
 * slipped by x make the later D_k larger by x, points counted twice
 * smaller.  Gets the smallest
 * D_k of all samples and of those after @tail; returns the number of
 * on-CPU samples after @tail.
 */
size_t bs_point_offsets(const struct bs_samples *smp, int tid, uint64_t period,
		       uint64_t tail, int64_t *min_all, int64_t *min_tail);
/* All classes: on-CPU + every blocked class. */
uint64_t bs_sum_weight_all(const struct bs_samples *smp, int tid);
/* One-line summary "on=.. B=.. I=.. S=.. L=.. (counts ...)" for logs. */
const char *bs_summary(const struct bs_samples *smp, int tid, char *buf, size_t len);

/* Number of entries following the PERF_CONTEXT_USER marker (-1: no marker). */
int bs_chain_user_entries(const struct bs_sample *s);
bool bs_chain_has_marker(const struct bs_sample *s, uint64_t marker);
/* Any callchain entry that is a kernel address (context markers excluded). */
bool bs_chain_has_kernel_addr(const struct bs_sample *s);

/*
 * Kernel symbols from /proc/kallsyms. bs_ksym_name() returns the name of
 * the text symbol containing @addr, or NULL (no symbol or addresses hidden).
 */
bool bs_ksyms_available(void);
const char *bs_ksym_name(uint64_t addr);
/* Scheduler or perf internals that must not be the IP of a blocked sample. */
bool bs_ksym_forbidden(const char *name);

/*
 * Check the context of the blocked samples of @tid in class @c:
 * user callchain part (marker followed by >= 2 entries), and when
 * @want_kernel_ip, a kernel IP, cpumode KERNEL, not a scheduler/perf symbol.
 */
struct bs_ctx_report {
	size_t checked;
	size_t no_user_chain;
	size_t not_kernel_ip;
	size_t bad_cpumode;
	size_t forbidden_sym;
	size_t unresolved;
	char first_problem[256];
	char example[256];	/* symbol of one good sample */
};
void bs_check_context(const struct bs_samples *smp, int tid, enum bs_class c,
		      bool want_kernel_ip, struct bs_ctx_report *rep);

/*
 * Kernel log scanning: bs_klog_mark() remembers the current end of the log,
 * bs_klog_scan() counts "BUG:", "WARNING:", "Oops" and "Call Trace" lines
 * written since and copies the first one into @first.
 */
struct bs_klog {
	int fd;			/* /dev/kmsg positioned at the end, or -1 */
	int base_count;		/* klogctl() fallback: count at mark time */
};
void bs_klog_mark(struct bs_klog *k);
int bs_klog_scan(struct bs_klog *k, char *first, size_t len);

/*
 * A numeric sysctl such as perf_event_max_sample_rate: bs_sysctl_read()
 * returns its value or -1, bs_sysctl_write() 0 or -1 (errno set).
 */
#define BS_MAX_SAMPLE_RATE	"/proc/sys/kernel/perf_event_max_sample_rate"
#define BS_CPU_TIME_MAX_PERCENT	"/proc/sys/kernel/perf_cpu_time_max_percent"
long bs_sysctl_read(const char *path);
int bs_sysctl_write(const char *path, long v);
/*
 * bs_sysctl_set() writes @v for the rest of the test and remembers the
 * value it found (0, or -1 if @path cannot be read or written);
 * bs_sysctl_restore() writes every remembered value back.  BS_FIXTURE's
 * teardown calls it, so a failed ASSERT leaves the machine as it was.
 */
int bs_sysctl_set(const char *path, long v);
void bs_sysctl_restore(void);
/*
 * For the rest of the test (root only): perf_event_max_sample_rate @rate,
 * and perf_cpu_time_max_percent 0 so that perf does not lower it again when
 * samples are slow (as they are under QEMU TCG).  In that order: the kernel
 * refuses a rate while the percentage is 0 or 100.  Returns 0 or -errno.
 * Tests call it through BS_RAISE_SAMPLE_RATE() (blocked_fixture.h).
 */
int bs_raise_sample_rate(long rate);

/* State letter of /proc/<tid>/stat (R, S, D, ...), or '?'. */
char bs_task_state(pid_t tid);

/*
 * A null_blk disk made through configfs for one test: /sys/block/@name.
 * bs_nullb_create() names it @prefix<pid>, writes @nattrs attribute/value
 * pairs and powers it on.  It returns 0, 1 when this kernel cannot make one
 * (no null_blk or configfs; @why says so and the test skips), or -1 with
 * @why on a failure; bs_nullb_destroy() undoes whatever was done.
 */
struct bs_nullb {
	char name[64];
	char dir[128];		/* configfs directory */
	bool powered;
};
int bs_nullb_create(struct bs_nullb *nb, const char *prefix,
		    const char *const (*attrs)[2], size_t nattrs,
		    char *why, size_t wlen);
void bs_nullb_destroy(struct bs_nullb *nb);

#endif /* BLOCKED_UTIL_H */
