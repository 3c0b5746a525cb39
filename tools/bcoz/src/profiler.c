// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz profiler core: progress points, experiments and virtual speedup.
 *
 * Virtual speedup (COZ's method): while an experiment speeds up line L by s,
 * every sample whose (kernel + user) callchain contains L adds
 * weight * s * period to the sampling thread's local delay.  A thread whose
 * local delay is ahead of the global delay publishes it; a thread behind it
 * pauses for the difference.  Everybody except the code in L is slowed down
 * by s * (time spent in L), which is equivalent to L running s faster.
 * Experiment duration is wall time minus the global delay added during it.
 *
 * An experiment is measured only after a warm-up (BCOZ_WARMUP_PCT of its
 * length, the speedup already in force).  A program's buffers hold what the
 * previous setting left in them: a pipeline whose reader ran ahead starts a
 * worker experiment with a full queue, and the worker then runs on the
 * queued items at full speed while the reader pays the delays, a speedup the
 * really faster program never sees.  Measured from the start, the worker of a
 * pipeline whose reader was 10 % ahead read +21..+24 at 50 % against an
 * actual +11 (queue of 4, 3 ms items); after a warm-up of 30 %, +9..+11.  The
 * warm-up also leaves owed delays at its end about as large as at the
 * measurement's end, where otherwise the experiment starts with none owed and
 * ends with some, which counts delay the program did not yet pay.
 *
 * Blocked samples (paper section 3.3): the kernel delivers them at schedule-in;
 * they are drained before a thread can wake another (catch-up in the
 * unlock/post/signal wrappers and post-block after every blocking wrapper).
 * Lock-wait samples never count toward a line.  Subclass experiments select
 * blocked samples by their misc bits instead of by line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"

/* ---------- progress points (COZ-compatible symbol interface) ---------- */

typedef struct {
	size_t count;
	size_t backoff;
} coz_counter_t;

#define PT_THROUGHPUT	1
#define PT_BEGIN	2
#define PT_END		3
#define MAX_POINTS	512

struct point {
	char *name;
	int type;
	coz_counter_t *ctr;
	size_t snap;
};

static struct point points[MAX_POINTS];
static _Atomic int npoints;
static pthread_mutex_t points_lock = PTHREAD_MUTEX_INITIALIZER;

BCOZ_EXPORT coz_counter_t *_coz_get_counter(int type, const char *name)
{
	int n;

	if (!name)
		name = "(null)";
	bcoz_real_mutex_lock(&points_lock);
	n = atomic_load(&npoints);
	for (int i = 0; i < n; i++) {
		if (points[i].type == type && !strcmp(points[i].name, name)) {
			bcoz_real_mutex_unlock(&points_lock);
			return points[i].ctr;
		}
	}
	if (n == MAX_POINTS) {
		static coz_counter_t overflow;

		bcoz_real_mutex_unlock(&points_lock);
		return &overflow;
	}
	points[n].name = strdup(name);
	points[n].type = type;
	points[n].ctr = calloc(1, sizeof(coz_counter_t));
	atomic_store(&npoints, n + 1);
	bcoz_real_mutex_unlock(&points_lock);
	return points[n].ctr;
}

/* ---------- state ---------- */

int bcoz_active;
static __thread struct bcoz_thread *self_thread __attribute__((tls_model("initial-exec")));

static _Atomic uint64_t global_delay;
static _Atomic int exp_active;
static _Atomic int exp_line = -1;
static _Atomic int exp_class;		/* enum bcoz_class of a subclass experiment */
static _Atomic uint64_t exp_delay;	/* ns per sampled period */
static _Atomic uint64_t selected_hits;
static _Atomic int next_line = -1;
static _Atomic uint64_t class_samples[BCOZ_CLASS_NR], total_samples;
_Atomic int bcoz_live_threads;
static _Atomic int stop_flag;
static _Atomic int shut_once;
static _Atomic uint64_t total_pause_ns;
static _Atomic uint64_t total_late_handoff;	/* points due before a hand-off, sampled after */
static _Atomic uint64_t total_in_handler;	/* points sampled in our SIGPROF handler */
static _Atomic uint64_t total_overslept_ns;	/* pauses that ended late */
static _Atomic uint64_t total_carried_ns;	/* oversleep that paid a later pause */
static _Atomic uint64_t total_spun, total_slept;	/* pauses of each kind */
static _Atomic uint64_t total_in_pause;	/* samples taken in a pause, dropped */
static _Atomic uint64_t total_spun_count_ns;	/* pauses' spins' CPU time, recorded where
						 * a hand-off's credit may need it */
/* the program's threads not in a wait that another thread ends (between
 * bcoz_pre_block() and bcoz_post_block()): a pause spins while they are
 * no more than ncpus (pause_ns()) */
static _Atomic int running_threads;
static int ncpus;			/* the CPUs the process may run on */
/*
 * Counted as the records are drained, not when a thread ends: with
 * --experiments the statistics are written before the threads end.
 */
_Atomic uint64_t bcoz_total_lost;
_Atomic uint64_t bcoz_total_throttled;	/* the kernel stopped a thread's samples */
static _Atomic uint64_t total_exit_credit_ns;	/* ended threads: unsampled CPU time credited */
static _Atomic uint64_t total_own_credit_ns;	/* threads' set-up and tear-down, sped away */
static _Atomic uint64_t total_process_ns;	/* in process(), pauses excluded */

static int out_fd = -1;
static int fixed_line = -1;
static unsigned long profiler_thr;
static uint64_t start_ns, startup_cost_ns;
static uint64_t nexperiments;
static _Atomic uint64_t exp_seq;	/* experiments started */
static pid_t bcoz_pid;			/* the profiled process (set at start-up) */

struct bcoz_thread *bcoz_self(void)
{
	return self_thread;
}

uint64_t bcoz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A cheaper clock for marks taken on hot paths (a hand-off: every unlock,
 * signal and post): the cycle counter where there is one (a few ns; a
 * clock_gettime() there doubled the cost of an uncontended lock+unlock
 * pair), converted to CLOCK_MONOTONIC when the mark is used, at the rate
 * measured since start-up.
 */
static uint64_t start_stamp;

static inline uint64_t bcoz_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return bcoz_now();
#endif
}

/* CLOCK_MONOTONIC of @mark, from a clock read @now and a stamp @snow taken
 * together; 0 when unknown (no mark, or too early to know the rate) */
static uint64_t stamp_time(uint64_t mark, uint64_t now, uint64_t snow)
{
	double rate = 1.0;

	if (!mark || mark > snow)
		return 0;
#if defined(__x86_64__) || defined(__i386__)
	if (snow == start_stamp || now - start_ns < 10000000ULL)
		return 0;
	rate = (double)(now - start_ns) / (double)(snow - start_stamp);
#endif
	return now - (uint64_t)((double)(snow - mark) * rate);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The messages go to the stderr bcoz started with: programs close or
 * redirect fd 2 (xz closes it before exiting, and the summary at exit was
 * lost).  The copy is checked before each use, in case the program closed
 * it and the number now names one of its own files.
 */
static int msg_fd = -1;
static int msg_kept;		/* 1: msg_dev/msg_ino name it; -1: no stderr */
static dev_t msg_dev;
static ino_t msg_ino;

static int same_file(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && st.st_dev == msg_dev && st.st_ino == msg_ino;
}

static void keep_stderr(void)
{
	struct stat st;

	if (fstat(2, &st)) {
		msg_kept = -1;		/* started without one: say nothing */
		return;
	}
	msg_dev = st.st_dev;
	msg_ino = st.st_ino;
	msg_kept = 1;
	msg_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
}

/* where a message goes now, or -1 */
static int stderr_fd(void)
{
	if (!msg_kept)
		return 2;		/* before the program runs */
	if (msg_kept < 0)
		return -1;
	if (same_file(msg_fd))
		return msg_fd;
	return same_file(2) ? 2 : -1;
}

/* a forked child keeps no copy: a daemon that closes 0-2 must not hold
 * the pipe its caller reads its stderr from */
static void drop_stderr_copy(void)
{
	if (msg_fd >= 0)
		close(msg_fd);
	msg_fd = -1;
}

void bcoz_msg(const char *fmt, ...)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "bcoz: "), fd;
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf))
		n = sizeof(buf);
	fd = stderr_fd();
	if (fd >= 0 && syscall(SYS_write, fd, buf, n) < 0)
		return;
}

/* profile output: raw write() of whole records, so fork never duplicates */
static void out(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	if (out_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf))
		n = sizeof(buf);
	if (syscall(SYS_write, out_fd, buf, n) < 0)
		bcoz_msg("warning: writing the profile failed: %s\n", strerror(errno));
}

/* ---------- sample accounting ---------- */

#define CONTEXT_MAX	((uint64_t)-4095)
#define KERNEL_START	0xffff800000000000ULL

/* Is addr a return address, i.e. just after a call instruction? */
static int after_call(uint64_t addr)
{
#ifdef __x86_64__
	const unsigned char *p = (const unsigned char *)addr;

	/* e8 rel32 (direct, PLT) or ff /2 (indirect: 2, 3 or 6 bytes) */
	if (p[-5] == 0xe8)
		return 1;
	if (p[-2] == 0xff && (p[-1] & 0x38) == 0x10)
		return 1;
	if (p[-3] == 0xff && (p[-2] & 0x38) == 0x10)
		return 1;
	if (p[-6] == 0xff && (p[-5] & 0x38) == 0x10)
		return 1;
#endif
	return 0;
}

/* the fully stripped in-scope object @addr is in, or -1 */
static int stripped_at(uint64_t addr)
{
	int b = linemap_blind(addr);

	return b >= 0 && linemap_blind_stripped(b) ? b : -1;
}

/*
 * The first user frame is outside the scope (e.g. inside libc's pread): look
 * for the return address into in-scope code on the top of the user stack,
 * which a frame-pointer walk misses when the callee built no frame.  A
 * return address into a fully stripped in-scope object comes first when
 * that object made the call: the sample is its own (*@stripped), and the
 * addresses further up are as likely stale as not.
 */
static int scan_stack(const uint64_t *stack, uint64_t n, int *stripped)
{
	for (uint64_t i = 0; i < n; i++) {
		int idx = linemap_lookup_held(stack[i] - 1);

		if (idx >= 0 && after_call(stack[i]))
			return idx;
		if (idx < 0 && (*stripped = stripped_at(stack[i])) >= 0 &&
		    after_call(stack[i]))
			return -1;
		*stripped = -1;
	}
	return -1;
}

/*
 * Is the selected function a caller of this sample's code?  The callchain
 * says so when the code keeps frame pointers; most distributions' libraries
 * do not (RocksDB's, glibc's), and a frame-pointer walk from inside them
 * stops or wanders.  The return addresses are still on the stack: look for
 * one into the selected function, just after a call, in the stack copy
 * (BCOZ_STACK_BYTES_FN of it when an object is profiled by function).
 */
static int stack_holds(const uint64_t *stack, uint64_t n, int sel)
{
	for (uint64_t i = 0; i < n; i++)
		if (linemap_lookup_held(stack[i] - 1) == sel && after_call(stack[i]))
			return 1;
	return 0;
}

/*
 * When the delays happened.  COZ excuses a thread woken by another from all
 * the global delay added while it was blocked.  But a thread publishes its
 * delays only when it drains its samples (every 10 ms of its CPU time, and
 * before it wakes anybody), so delays earned while the waiter was still
 * running often arrive after it blocked and are wrongly excused: in a
 * program whose rounds are shorter than the batch (two threads meeting at
 * a barrier every 4 ms) the waiter never pays anything and a line off the
 * critical path looks as important as the critical one.  Each delay is
 * therefore also filed under its sample's time, and a woken thread is
 * excused only the delays whose samples fall inside its wait.  Waits
 * longer than the history excuse everything, as COZ does.
 */
#define DELAY_BUCKET_NS		250000ULL
#define DELAY_BUCKETS		8192		/* ~2 s of history */
#define LATE_WINDOW_NS		10000000ULL	/* see settle_wait() */

static struct {
	uint64_t id;				/* absolute bucket number */
	uint64_t delay;
} delay_hist[DELAY_BUCKETS];
static atomic_flag delay_hist_lock = ATOMIC_FLAG_INIT;

static void delay_hist_add(uint64_t time, uint64_t delay)
{
	uint64_t k = time / DELAY_BUCKET_NS;
	unsigned int i = k % DELAY_BUCKETS;

	while (atomic_flag_test_and_set_explicit(&delay_hist_lock, memory_order_acquire))
		;
	if (delay_hist[i].id > k) {
		/* older than the history (a back-dated owed point) */
		atomic_flag_clear_explicit(&delay_hist_lock, memory_order_release);
		return;
	}
	if (delay_hist[i].id != k) {
		delay_hist[i].id = k;
		delay_hist[i].delay = 0;
	}
	delay_hist[i].delay += delay;
	atomic_flag_clear_explicit(&delay_hist_lock, memory_order_release);
}

/*
 * A thread that blocked at @from owing @debt is woken at @to.  Had every
 * delay been published the moment it was earned, it would have paused
 * first, earning more debt for each delay dated inside that pause, and
 * blocked only once caught up.  Did that happen before @to (1), or would it
 * still have been pausing when woken (0)?  -1: beyond the history.
 */
static int delay_hist_caught_up(uint64_t from, uint64_t to, uint64_t debt)
{
	uint64_t k0 = from / DELAY_BUCKET_NS + 1, k1 = to / DELAY_BUCKET_NS;
	int caught = -1;

	if (k1 >= k0 && k1 - k0 >= DELAY_BUCKETS)
		return -1;
	while (atomic_flag_test_and_set_explicit(&delay_hist_lock, memory_order_acquire))
		;
	for (uint64_t k = k0; k <= k1; k++) {
		unsigned int i = k % DELAY_BUCKETS;

		if (debt <= k * DELAY_BUCKET_NS - from) {
			caught = 1;
			break;
		}
		if (delay_hist[i].id == k)
			debt += delay_hist[i].delay;
	}
	atomic_flag_clear_explicit(&delay_hist_lock, memory_order_release);
	if (caught < 0)
		caught = debt <= to - from;
	return caught;
}

/* Delay filed under (from, to]; -1 when that is beyond the history. */
static int64_t delay_hist_sum(uint64_t from, uint64_t to)
{
	uint64_t k0 = from / DELAY_BUCKET_NS + 1, k1 = to / DELAY_BUCKET_NS;
	uint64_t sum = 0;

	if (k1 < k0)
		return 0;
	if (k1 - k0 >= DELAY_BUCKETS)
		return -1;
	while (atomic_flag_test_and_set_explicit(&delay_hist_lock, memory_order_acquire))
		;
	for (uint64_t k = k0; k <= k1; k++) {
		unsigned int i = k % DELAY_BUCKETS;

		if (delay_hist[i].id == k)
			sum += delay_hist[i].delay;
	}
	atomic_flag_clear_explicit(&delay_hist_lock, memory_order_release);
	return (int64_t)sum;
}

/*
 * Did the on-CPU point of the sample being handled fall due before the
 * thread's last hand-off that credited ahead (credit_unsampled())?  The
 * kernel's on-CPU points are at multiples of the period in the event's
 * count (Documentation/admin-guide/perf/blocked-samples.rst), and the
 * sample's count (PERF_SAMPLE_READ) was read when the timer interrupt came.
 * Under QEMU TCG it comes 0.15-0.19 ms after the point on average and a
 * whole period late one time in ten, so the point due in the last part of
 * a lock holder's loop is sampled in the unlock or after it: its IP is
 * there, and the debt the hand-off ran up for that very time would be paid
 * back by the next stint's first hit, so the loop lost the point.  Such a
 * point is charged as owed points are (the previous sample's line), and
 * the thread is where the sample found it.  In the guest 50-130 of a lock
 * holder's 2,400 points a run came that way (late_handoff in BCOZ_STATS).
 */
static int due_before_handoff(const struct bcoz_thread *t)
{
	uint64_t c = t->sample_read;

	/* the grid is the project kernel's rule (blocked-samples.rst); a
	 * stock kernel does not promise it, and its timer is seldom late */
	return bcoz_blocked_supported && c && t->credited_to &&
	       c / BCOZ_PERIOD_NS * BCOZ_PERIOD_NS <= t->credited_to;
}

/* How much of the event's count in (FROM, TO] the last spins took. */
static uint64_t spun_within(const struct bcoz_thread *t, uint64_t from, uint64_t to)
{
	uint64_t sum = 0;

	for (int i = 0; i < BCOZ_SPUN_HIST; i++) {
		uint64_t lo = t->spun_from[i] > from ? t->spun_from[i] : from;
		uint64_t hi = t->spun_to[i] < to ? t->spun_to[i] : to;

		if (hi > lo)
			sum += hi - lo;
	}
	return sum;
}

/* Whether the on-CPU point of the record being handled fell due in a
 * spin (the kernel's points are on the period's grid of the count: see
 * due_before_handoff()); its interrupt may come after the spin ended. */
static int due_in_spin(const struct bcoz_thread *t)
{
	uint64_t due = t->sample_read / BCOZ_PERIOD_NS * BCOZ_PERIOD_NS;

	return bcoz_blocked_supported && due && spun_within(t, due - 1, due);
}

/* The thread's previous on-CPU sample's line into *first; whether it hit
 * the selection in this experiment.  Where owed, late and handler points
 * are charged (on_sample()). */
static int previous_line(const struct bcoz_thread *t, int *first)
{
	*first = t->last_line;
	return t->last_hit && t->last_hit_exp == atomic_load(&exp_seq);
}

static void on_sample(struct bcoz_thread *t, uint16_t misc, uint64_t time,
		      uint64_t weight, const uint64_t *ips, uint64_t nr, const uint64_t *stack,
		      uint64_t nstack)
{
	int cls = bcoz_class_of(misc);
	int first = -1, hit = 0, fresh = 1, late = 0;
	int here = -1, hit_here = 0;	/* where a late sample found the thread */
	int blind = -1;			/* its code: in scope, without lines */
	int stale;			/* ... and without symbols: no walk */
	int kept = 0;			/* charged to the previous sample's line, */
					/* which stays the thread's */
	int active = atomic_load(&exp_active);
	int sel = atomic_load(&exp_line);
	uint64_t h = 0;

	atomic_fetch_add(&total_samples, weight);
	if (cls < 0)
		cls = BCOZ_OTHER;	/* several bits: not from a kernel we know */
	if (cls == BCOZ_ONCPU && t->sample_read) {
		late = !t->owed && due_before_handoff(t);
		t->count_at_sample = t->sample_read;
	}
	atomic_fetch_add(&class_samples[cls], weight);
	if (cls == BCOZ_LOCK)
		return;	/* lock waiting is a consequence of the holder's work: never a line's */
	if ((cls == BCOZ_ONCPU || (cls == BCOZ_SCHED && bcoz_cfg.scope != BCOZ_SCHED)) &&
	    ((time && time >= t->pause_from && time <= t->pause_to) ||
	     (cls == BCOZ_ONCPU && due_in_spin(t)))) {
		/*
		 * Taken in our own pause's spin (or while its CPU was taken),
		 * or due in it and taken just after: bcoz's time, never a
		 * line's.  The walk below skips bcoz's frames and would
		 * charge it to the line that called the wrapper, or through
		 * the signal frame to the interrupted function's caller.
		 * Under --blocked-scope s a spin's waits for the CPU are its
		 * hits (pause_ns()).
		 */
		atomic_fetch_add(&total_in_pause, weight);
		return;
	}
	if (cls == BCOZ_ONCPU && !t->owed && !late && time &&
	    time >= t->work_from && time <= t->work_to) {
		/*
		 * Taken while our SIGPROF handler ran (not in its pause):
		 * the thread was interrupted in the line of its previous
		 * sample, and goes back there.  The callchain, through the
		 * signal frame, names the interrupted function's caller
		 * instead (lock.c's call of its loop: 10-40 points a run of
		 * the loop's 2,400 under QEMU TCG, in_handler in BCOZ_STATS).
		 */
		hit = previous_line(t, &first);
		atomic_fetch_add(&total_in_handler, weight);
		kept = 1;
		goto charge;
	}
	if (cls == BCOZ_ONCPU && t->owed) {
		/*
		 * Timed at the switch-in that wrote them, but due before the
		 * switch-out: dated no later than the start of the wait the
		 * thread was in, else its previous sample (both before the
		 * points).  Dated at the switch-in, the delay fell inside the
		 * wait of the thread that had woken this one, which was then
		 * excused it (settle_wait()): in the paper's example with
		 * thread 1 (I/O) critical, thread 1 was excused half the
		 * delay of thread 2's loop, which read +4..+13 for no effect.
		 */
		uint64_t due = t->block_ts > t->oncpu_time ? t->block_ts : t->oncpu_time;

		if (due && due < time)
			time = due;
		/*
		 * Points that fell due after this thread's previous sample,
		 * but whose timer interrupt came only after it had left the
		 * CPU: they come with the stack it left with (the call into
		 * the scheduler), which is where the thread went next, not
		 * where the points fell.  They are charged to the previous
		 * sample's line, the last place the thread was seen before.
		 * Under QEMU TCG, whose timer interrupts come 0.1-0.2 ms late
		 * and sometimes milliseconds late, 8-15 % of a lock holder's
		 * points arrive like this, and its line read 10-20 % low.
		 */
		hit = previous_line(t, &first);
		goto charge;
	}
	linemap_hold();		/* one table for all of this sample's lookups */
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];
		int idx, user_top;

		if (ip >= CONTEXT_MAX) {
			fresh = 1;
			continue;
		}
		if (ip >= KERNEL_START) {
			fresh = 0;
			continue;
		}
		user_top = fresh;
		idx = linemap_lookup_held(fresh ? ip : ip - 1);
		fresh = 0;
		if (idx < 0) {
			int b = linemap_blind(ip);

			/*
			 * Code without any symbol keeps no frame pointers
			 * either: its callchain and its stack may hold
			 * return addresses left by calls made long before.
			 * The sample is the stripped code's.
			 */
			if (b >= 0 && linemap_blind_stripped(b)) {
				blind = b;
				break;
			}
			if (user_top) {
				blind = b;	/* .dynsym only, or none */
				if (stack) {
					idx = scan_stack(stack, nstack, &b);
					if (b >= 0) {
						blind = b;
						break;
					}
				}
			}
		}
		if (idx < 0)
			continue;
		if (first < 0)
			first = idx;
		if (idx == sel)
			hit = 1;
		if (hit || sel < 0)
			break;
	}
	stale = blind >= 0 && linemap_blind_stripped(blind);
	if (!hit && !stale && sel >= 0 && stack && nstack * 8 > BCOZ_STACK_BYTES)
		hit = stack_holds(stack, nstack, sel);
	linemap_release();
	if (first < 0 && blind >= 0)
		linemap_blind_count(blind, weight);
	if (late) {
		/* charged as owed points are; the thread is where it was found */
		here = first;
		hit_here = hit;
		hit = previous_line(t, &first);
		atomic_fetch_add(&total_late_handoff, weight);
	}
	if (cls == BCOZ_ONCPU) {
		t->last_line = late ? here : first;
		t->oncpu_time = time;
	}
charge:
	if (first >= 0) {
		struct bcoz_line *l = linemap_line(first);

		atomic_fetch_add(&l->samples, weight);
		atomic_fetch_add(&l->recent, weight);
	}
	if (!active)
		return;
	if (cls == BCOZ_ONCPU) {
		t->batch_n += weight;
		if (hit && !bcoz_cfg.scope)
			t->batch_hit += weight;
		if (!t->owed && !kept) {
			t->last_hit = (late ? hit_here : hit) && !bcoz_cfg.scope;
			t->last_hit_exp = atomic_load(&exp_seq);
		}
	}
	if (bcoz_cfg.scope) {
		if (cls == atomic_load(&exp_class))
			h = weight;
	} else if (hit) {
		h = weight;
	}
	if (h) {
		uint64_t delay = atomic_load(&exp_delay), d = h * delay;

		/* a hit pays back what a hand-off credited ahead (credit_unsampled) */
		if (t->debt_ns && !bcoz_cfg.scope && t->debt_exp == atomic_load(&exp_seq)) {
			uint64_t back = t->debt_ns < h * BCOZ_PERIOD_NS ? t->debt_ns :
					h * BCOZ_PERIOD_NS;

			t->debt_ns -= back;
			d -= back * delay / BCOZ_PERIOD_NS;
		}

		t->local_delay += d;
		delay_hist_add(time ? time : bcoz_now(), d);
		atomic_fetch_add(&selected_hits, h);
	}
}

/*
 * Run-queue compensation.  Without blocked samples, time a thread spends
 * runnable but waiting for a CPU is invisible (task-clock stops), so a line
 * that is slowed by CPU contention would be under-credited and predictions
 * shrink by the thread's CPU share.  The kernel's per-thread run_delay
 * (/proc/<tid>/schedstat, read once per timer tick) tells how long the thread
 * waited; it is spread over the on-CPU samples drained since the previous
 * tick, so the selected line gets
 *     speedup * run_delay_delta * hits / samples
 * extra delay.  This stands in for [S] blocked samples and is off when the
 * kernel provides real ones (or with BCOZ_NO_RUNQ=1).
 */
static int runq_enabled;
static int spin_pauses;		/* every pause spins: see pause_ns() */

/*
 * The second field of "cpu_time run_delay timeslices\n" in the calling
 * thread's schedstat.  Opened for each read (once per timer tick), so a
 * thread costs no file descriptor for it.  Runs in the SIGPROF handler:
 * no stdio, no locale, only async-signal-safe calls.
 */
static uint64_t read_run_delay(struct bcoz_thread *t)
{
	char buf[96];
	const char *p = buf;
	long n;
	int fd;
	uint64_t v = 0;

	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return t->last_run_delay;
	n = syscall(SYS_pread64, fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return t->last_run_delay;
	buf[n] = 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == buf || *p++ != ' ' || *p < '0' || *p > '9')
		return t->last_run_delay;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

static void runq_compensate(struct bcoz_thread *t)
{
	uint64_t rd, d;

	if (!runq_enabled)
		return;
	rd = read_run_delay(t);
	d = rd > t->last_run_delay ? rd - t->last_run_delay : 0;
	t->last_run_delay = rd;
	if (d && t->batch_n && t->batch_hit && atomic_load(&exp_active))
		t->local_delay += (uint64_t)((double)atomic_load(&exp_delay) / BCOZ_PERIOD_NS *
					     (double)d * t->batch_hit / t->batch_n);
	/* the batch is every on-CPU sample drained since the previous tick */
	t->batch_n = t->batch_hit = 0;
}

/*
 * A pause spins on the thread's CPU for its length while the program's
 * threads that are not waiting for another (running_threads) are no more
 * than its CPUs, and sleeps otherwise; BCOZ_SPIN_PAUSES=1 and
 * BCOZ_SLEEP_PAUSES=1 choose one kind for every pause, and
 * --blocked-scope s spins (see below).  Neither kind is right everywhere
 * (bench/ab.py and make case-study, 2026-11-29).  Where each thread has a
 * CPU, a sleep pays a wake-up that a spin does not: in the lockdep guest
 * the worker-bound sleeping pipeline's line with no effect read -7.3 (SE
 * 1.6) sleeping and -1.4 (SE 2.2) spinning (20 runs each, alternating;
 * paired +5.9, SE 1.5), and -10.4 (1.7) against -2.8 (2.7) with this
 * rule.  Where runnable threads outnumber the CPUs, every thread but the
 * sped-up one pauses, and spinning, their pauses take the CPU the others
 * need: the program slows by more than the delay (N threads on P CPUs,
 * each of the N - 1 others spinning for about the global delay, take
 * (N - 1) / P of it in wall time).  RocksDB's four readers on two vCPUs
 * read the block read at -26.7 spinning against an actual +16.2,
 * +23.5..+36.3 sleeping (a sleeping pause errs the other way there, its
 * CPU going to threads the model has waiting, but less).  A thread in a
 * read or a sleep of its own counts as running, so in doubt a pause
 * sleeps, COZ's way.
 *
 * A sleeping pause (the knobs below apply to it only) ends late: timer
 * slack, the wake-up's latency, a busy or virtual CPU (0.1-0.3 ms under
 * QEMU TCG, up to the slack for a normal thread).
 * A pause is the model's delay of this thread, so a late one stretches the
 * thread by more than the model allows, and where the thread pauses inside
 * a critical section (a lock holder, a pipeline's bottleneck stage) lines
 * with no effect read negative.  Crediting the measured sleep (COZ) pushes
 * each oversleep onto every other thread, whose pauses oversleep in turn:
 * on a busy 2-vCPU machine "no effect" lines then read -20.  Carrying the
 * excess as a credit against later pauses over-predicted instead, where
 * it was earned where pauses are free (a thread about to wait anyway) and
 * spent where they are not; with BCOZ_CARRY=1 it is carried, and a wait
 * absorbs it (pay_from_excess()).  And a pause is made exact: sleep until (expected
 * lateness) before its end, then spin the rest.  The lateness is this
 * thread's recent worst, decaying, capped at BCOZ_PAUSE_SPIN_MAX_US
 * (default 300): a wake-up later than the cap (the CPU was taken) is
 * credited at what was owed, counted in overslept_ns (BCOZ_STATS), and
 * with BCOZ_CARRY=1 carried to pay the thread's next pauses.  Unless the thread's sleeps
 * are late as a rule: the cap is at least twice the median lateness of its last
 * BCOZ_LATE_HIST sleeps (pause_cap(); at most 5 ms; the test "late
 * timer" gives every sleep 2 ms of timer slack: 59 % of the pauses' time
 * was late with the fixed cap, 2.4-3.9 % with this one).  A preemption is
 * the exception; a timer that is late half the time by that much is the
 * machine's (the project's lockdep kernel under QEMU TCG: 1.5 ms sleeps
 * late by 0.35-0.6 ms at the median, 0.9-1 ms at the 90th percentile).
 * With the cap at 300 us there, the worker-bound pipeline's reader line,
 * which has no effect, read -17.5; with this cap -9.3; with
 * BCOZ_PAUSE_SPIN_MAX_US=5000, -5.7 (bcoz.rst "Pauses that end late").
 */
static uint64_t pause_cap(struct bcoz_thread *t)
{
	uint64_t v[BCOZ_LATE_HIST], cap;
	int n = t->late_n < BCOZ_LATE_HIST ? (int)t->late_n : BCOZ_LATE_HIST;

	/* the median of the last sleeps' lateness (an insertion sort of 8
	 * at most; from the first sleep on, so a thread whose every sleep is
	 * late pays one) */
	for (int i = 0; i < n; i++) {
		int j = i;

		for (; j > 0 && v[j - 1] > t->late_hist[i]; j--)
			v[j] = v[j - 1];
		v[j] = t->late_hist[i];
	}
	if (!n)
		return bcoz_cfg.pause_spin_max_ns;
	cap = 2 * v[n / 2];
	if (cap <= bcoz_cfg.pause_spin_max_ns)
		return bcoz_cfg.pause_spin_max_ns;
	return cap < BCOZ_PAUSE_SPIN_LIMIT_NS ? cap : BCOZ_PAUSE_SPIN_LIMIT_NS;
}

/* the CPUs the process may run on (its affinity mask; not a cgroup quota) */
static int usable_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
}

/*
 * The event's count at the start of a pause's spin, where a hand-off may
 * later credit the thread's CPU time since its last sample to the line
 * (credit_unsampled(): the sample hit it, or one not yet drained may);
 * else 0.  A spin's CPU time is the event's like the line's, and its
 * samples count for no line (on_sample()), so without this a hand-off
 * after a spinning pause credited the spin as the line's time: up to the
 * drain timer's worth of it, as delay every other thread owed.
 */
static uint64_t spin_start(struct bcoz_thread *t)
{
	if (bcoz_cfg.scope || !atomic_load(&exp_active) ||
	    (!t->last_hit && !sampler_has_data(t)))
		return 0;
	return sampler_count(t);
}

/* The spin that began at count C0 (spin_start()) ends: kept out. */
static void spin_end(struct bcoz_thread *t, uint64_t c0)
{
	uint64_t c1;
	unsigned int i;

	if (!c0)
		return;
	c1 = sampler_count(t);
	if (c1 <= c0)
		return;
	i = t->spun_n++ % BCOZ_SPUN_HIST;
	t->spun_from[i] = c0;
	t->spun_to[i] = c1;
	atomic_fetch_add(&total_spun_count_ns, c1 - c0);
}

/*
 * Spin until END (bcoz_now()), the count read at both ends where it may
 * be needed (spin_start()); the spin leaves the second read the time of
 * the thread's quickest read so far (not this one's: it may have been
 * preempted), so the pause still ends at END.
 */
static void spin_until(struct bcoz_thread *t, uint64_t end)
{
	uint64_t s = bcoz_now(), c0, read = 0;

	if (s >= end)
		return;		/* a sleep that ended late: nothing to spin */
	c0 = spin_start(t);
	if (c0) {
		read = bcoz_now() - s;
		if (t->count_read_ns && t->count_read_ns < read)
			read = t->count_read_ns;
		t->count_read_ns = read;
	}
	while (bcoz_now() + read < end)
		;
	spin_end(t, c0);
}

static void pause_ns(struct bcoz_thread *t, uint64_t ns)
{
	uint64_t t0 = bcoz_now(), el, late, seq = atomic_load(&exp_seq);
	int spin = spin_pauses || (!bcoz_cfg.sleep_pauses &&
				   atomic_load(&running_threads) <= ncpus);

	atomic_fetch_add(spin ? &total_spun : &total_slept, 1);
	if (spin) {
		/*
		 * Stay on the CPU, sampled (the samples land in this
		 * function, never in a line of the program).  Where the wait
		 * for a CPU is sped up (--blocked-scope s), a sleeping pause
		 * would hand its CPU to the threads whose waiting is being
		 * sped up, so their waits (and the delays they earn) would
		 * shrink and the prediction with them; a spinning thread's own
		 * waits for the CPU count as its hits.
		 */
		spin_until(t, t0 + ns);
	} else {
		uint64_t margin = t->wake_late_ns < ns ? t->wake_late_ns : ns;

		/* no samples (and so no blocked samples) for our own pause */
		sampler_enable(t, 0);
		if (ns > margin) {
			uint64_t until = t0 + ns - margin;
			struct timespec ts = { until / 1000000000ULL, until % 1000000000ULL };

			/* the real call: nanosleep is interposed by this library */
			while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
				       &ts, NULL) && errno == EINTR)
				;
			uint64_t cap;

			late = bcoz_now() - until;
			t->late_hist[t->late_n++ % BCOZ_LATE_HIST] = late;
			cap = pause_cap(t);
			if (late > cap)
				late = t->wake_late_ns;	/* preempted: not the timer */
			t->wake_late_ns = late > t->wake_late_ns ? late :
				t->wake_late_ns - (t->wake_late_ns - late) / 8;
			t->wake_late_ns += t->wake_late_ns / 8 > 20000 ? 20000 :
					   t->wake_late_ns / 8;
			if (t->wake_late_ns > cap)
				t->wake_late_ns = cap;
		}
		/*
		 * Sampling back on before the spin, not after it: the ioctl
		 * takes 0.1 ms under QEMU TCG, and after the spin every pause
		 * ended that much late, uncredited.  The samples of the spin
		 * land in this function, never in a line of the program.
		 */
		sampler_enable(t, 1);
		spin_until(t, t0 + ns);
	}
	t->pause_from = t0;
	t->pause_to = bcoz_now();
	el = t->pause_to - t0;
	/*
	 * Credit what was owed, not the oversleep (see above), unless
	 * BCOZ_CREDIT_MEASURED=1 asks for COZ's rule.
	 */
	t->local_delay += bcoz_cfg.credit_measured && !spin ? el : ns;
	if (el > ns) {
		atomic_fetch_add(&total_overslept_ns, el - ns);
		/* carried within the experiment the pause began in, only */
		if (bcoz_cfg.carry && !bcoz_cfg.credit_measured && !spin &&
		    seq == atomic_load(&exp_seq)) {
			if (t->excess_exp != seq)
				t->excess_ns = 0;
			t->excess_exp = seq;
			t->excess_ns += el - ns;
		}
	}
	t->paused_ns += el;
	atomic_fetch_add(&total_pause_ns, el);
}

/*
 * Publish our delay if we are ahead; pause if we are behind.  From the timer
 * (every 10 ms of the thread's CPU time; BCOZ_TIMER_US changes it) a lagging
 * thread may pause only every BCOZ_PAUSE_TICKS ticks (default 1; each pause
 * costs a wake-up).  The wrappers (catch-up, pre/post-block) always settle in
 * full.  The two knobs are for experimenting with the method: measured
 * without CPU contention, a 2 ms timer over-predicts above 50 % in the toy
 * test while 10 ms (COZ's batch) matches the ground truth.
 */
/* Raise the global delay to ours if we are ahead; returns the global delay seen. */
static uint64_t publish_delay(struct bcoz_thread *t)
{
	uint64_t g = atomic_load(&global_delay);

	while (g < t->local_delay &&
	       !atomic_compare_exchange_weak(&global_delay, &g, t->local_delay))
		;
	return g;
}

/*
 * A pause's oversleep, carried: what a pause ran past its end (a wake-up
 * later than the spin cap, above) pays what the thread owes next, in the
 * same experiment, so that its pauses add up to what it owed.  Not
 * credited as delay (BCOZ_CREDIT_MEASURED), which every other thread
 * would owe in turn.  A wait absorbs it: a thread that oversleeps and then
 * waits for another (a stage ahead of its pipeline's bottleneck) lost
 * nothing by it, so the time it waits in a call that may wait for another
 * thread (a lock, a condition, a join: pre_block to post_block; not its
 * own read or sleep) is taken off what it carries (bcoz_post_block()).
 * Spinning pauses (spin_pauses) and BCOZ_CREDIT_MEASURED carry nothing.
 *
 * Only with BCOZ_CARRY=1 (the default for a day, 2026-11-29).  A late end
 * is also a wait for a CPU: with more threads than CPUs, the pause's CPU
 * went to the program's other threads, and paying it back made the
 * program look faster at every speedup (RocksDB's four readers on two
 * CPUs: +71 for their block read at 100 %, +32 without, an actual +14).
 * Telling the two apart needs the thread's run delay (schedstat), which
 * costs 0.3 ms a pause under QEMU TCG; and on hardware a timer is late by
 * tens of us, so the carry helps only an emulated machine.  Kept for
 * measuring that (bench/ab.py).
 */
static void pay_from_excess(struct bcoz_thread *t, uint64_t owed)
{
	uint64_t use = owed < t->excess_ns ? owed : t->excess_ns;

	if (t->excess_exp != atomic_load(&exp_seq)) {
		t->excess_ns = 0;
		return;
	}
	t->local_delay += use;
	t->excess_ns = t->excess_ns > use ? t->excess_ns - use : 0;
	atomic_fetch_add(&total_carried_ns, use);
}

static void add_delays(struct bcoz_thread *t, int from_timer)
{
	uint64_t g;

	if (!atomic_load(&exp_active)) {
		t->local_delay = atomic_load(&global_delay);
		return;
	}
	if (t->blocked)
		return;
	g = publish_delay(t);
	if (t->excess_ns && g > t->local_delay)
		pay_from_excess(t, g - t->local_delay);
	if (t->local_delay > g || g - t->local_delay < bcoz_cfg.min_pause_ns)
		return;		/* ahead (now published), or too little owed */
	if (from_timer && ++t->ticks < bcoz_cfg.pause_ticks)
		return;
	if (t->just_woken)
		return;		/* see bcoz_post_block() */
	t->ticks = 0;
	pause_ns(t, g - t->local_delay);
}

static void process(struct bcoz_thread *t, int from_timer);

/*
 * Keep our own SIGPROF handler from draining while the thread changes what
 * a drain reads or takes a lock a drain takes (the delay history's): the
 * handler sees in_use, marks the drain pending and returns, and the next
 * process() call does it.  The fences keep the compiler from moving the
 * guarded accesses out of the pair; only the thread's own handler reads
 * in_use, so no CPU barrier is needed.
 */
static inline int handler_hold(struct bcoz_thread *t)
{
	int was = t->in_use;

	t->in_use = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return was;
}

/*
 * WAS: what handler_hold() returned.  The pairs nest: a program's signal
 * handler that calls a wrapped wait (bcoz_pre_block(), bcoz_post_block())
 * while our own processing runs must not let our SIGPROF handler in.
 */
static inline void handler_allow(struct bcoz_thread *t, int was)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->in_use = was;
}

/*
 * Whether a wrapper's call to process() has anything to do: samples in the
 * ring, a deferred drain, or a delay to publish or pay.  Most wrapped calls
 * (every uncontended lock, every write) find nothing, and then cost two
 * loads instead of a drain and the delay bookkeeping.
 */
static inline int process_needed(struct bcoz_thread *t)
{
	uint64_t g;

	if (t->pending || sampler_has_data(t))
		return 1;
	g = atomic_load(&global_delay);
	if (!atomic_load(&exp_active))
		return t->local_delay != g;
	if (t->blocked)
		return 0;
	return t->local_delay > g || g - t->local_delay >= bcoz_cfg.min_pause_ns;
}

void bcoz_process(struct bcoz_thread *t)
{
	if (t && bcoz_active && process_needed(t))
		process(t, 0);
}

static void process(struct bcoz_thread *t, int from_timer)
{
	int saved = errno, was;
	uint64_t t0, p0, own;

	if (!t || !bcoz_active)
		return;
	if (t->in_use) {
		/* re-entered from a signal handler: the outer call repeats */
		t->pending = 1;
		return;
	}
	was = handler_hold(t);
	/* timed only for BCOZ_STATS: two clock reads per drain otherwise */
	t0 = bcoz_cfg.stats ? bcoz_now() : 0;
	p0 = t->paused_ns;
	do {
		t->pending = 0;
		sampler_drain(t, on_sample);
		/* once per timer tick: reading schedstat on every wrapped call
		 * (each mutex, barrier, read...) would cost more than it tells */
		if (from_timer)
			runq_compensate(t);
		add_delays(t, from_timer);
	} while (t->pending);
	if (t0) {
		own = bcoz_now() - t0;
		own = own > t->paused_ns - p0 ? own - (t->paused_ns - p0) : 0;
		atomic_fetch_add(&total_process_ns, own);
	}
	handler_allow(t, was);
	errno = saved;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	struct bcoz_thread *t = self_thread;
	uint64_t t0;

	(void)sig;
	(void)si;
	(void)uc;
	if (!t || t->in_use) {
		process(t, 1);	/* defers to the call it interrupted */
		return;
	}
	t0 = bcoz_now();
	process(t, 1);
	/*
	 * The handler's stretch, for its samples, which the next drain reads
	 * (on_sample()): they belong to the line it interrupted, except
	 * those of its pause (the program's delay).
	 */
	t->work_from = t0;
	t->work_to = bcoz_now();
}

void bcoz_pre_block(void)
{
	struct bcoz_thread *t = self_thread;

	if (!t)
		return;
	/* settle delays owed for the time we ran before waiting: paid later they
	 * would land after the wake-up, possibly inside a critical section */
	bcoz_process(t);
	t->block_global = atomic_load(&global_delay);
	/*
	 * Only a wait inside an experiment is dated (settle_wait() compares
	 * it with the delay history); 0 makes a wait that an experiment
	 * caught in the middle a long one, settled by COZ's rule.  Saves a
	 * clock read per wrapped call between experiments.
	 */
	t->block_ts = atomic_load(&exp_active) ? bcoz_now() : 0;
	if (t->block_ts) {
		uint64_t snow = bcoz_stamp();
		uint64_t woke = stamp_time(t->woke_stamp, t->block_ts, snow);
		int was = handler_hold(t);	/* delay_hist_sum() takes the history's lock */

		t->block_stamp = snow;
		t->late_from = t->block_ts > LATE_WINDOW_NS ? t->block_ts - LATE_WINDOW_NS : 0;
		if (woke > t->late_from)
			t->late_from = woke;
		t->late_seen = delay_hist_sum(t->late_from, t->block_ts);
		handler_allow(t, was);
	}
	/* one exchange: a signal handler's wrapped call between a test and
	 * a store would count the thread twice */
	if (!__atomic_exchange_n(&t->blocked, 1, __ATOMIC_RELAXED))
		atomic_fetch_sub(&running_threads, 1);
}

static void settle_wait(struct bcoz_thread *t, uint64_t now)
{
	uint64_t g = atomic_load(&global_delay);
	uint64_t grown = g > t->block_global ? g - t->block_global : 0;
	uint64_t owed = t->block_global > t->local_delay ?
			t->block_global - t->local_delay : 0;
	int64_t during = delay_hist_sum(t->block_ts, now);
	uint64_t stuck = 0;
	int caught;

	if (during < 0) {
		t->local_delay += grown;	/* a long wait: COZ's rule */
		return;
	}
	if (grown > (uint64_t)during) {
		/*
		 * Published while we waited, dated before.  A pause before
		 * the wait could only have paid what is dated after our last
		 * hand-off (an unlock, a signal, the last arrival at a
		 * barrier; at most LATE_WINDOW_NS back): for what is dated
		 * before it we would have paused before the hand-off, and the
		 * thread woken there, and so this wake-up, would have come
		 * that much later.  That part stays owed.
		 */
		uint64_t late = grown - during;
		int64_t seen = delay_hist_sum(t->late_from, t->block_ts);
		uint64_t ours = t->late_seen >= 0 && seen > t->late_seen ?
				(uint64_t)(seen - t->late_seen) : 0;

		if (ours > late)
			ours = late;
		stuck = late - ours;
		owed += ours;
	}
	caught = delay_hist_caught_up(t->block_ts, now, owed);
	g = g > stuck ? g - stuck : 0;
	if (caught)
		t->local_delay = g > t->local_delay ? g : t->local_delay;
	else if (g > t->local_delay)
		t->local_delay += now - t->block_ts < g - t->local_delay ?
				  now - t->block_ts : g - t->local_delay;
}

void bcoz_post_block(int skip)
{
	struct bcoz_thread *t = self_thread;

	if (!t)
		return;
	/*
	 * A wait that pre_block began (not a read or a sleep of our own,
	 * AFTER_BLOCK) absorbs what we carry, while we are still blocked to
	 * our SIGPROF handler's add_delays(): see pay_from_excess().
	 */
	if (t->blocked && t->excess_ns && t->block_ts) {
		uint64_t waited = bcoz_now() - t->block_ts;

		t->excess_ns = waited < t->excess_ns ? t->excess_ns - waited : 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	if (__atomic_exchange_n(&t->blocked, 0, __ATOMIC_RELAXED))
		atomic_fetch_add(&running_threads, 1);
	/*
	 * Woken by another thread.  COZ credits all the delay published while
	 * we waited: the waker paid it.  But part of it may be dated before we
	 * blocked (published late, see delay_hist), and what we owed then we
	 * would have paid by pausing before blocking: if that pause would have
	 * ended before the wake-up, the wait absorbed it and we owe nothing;
	 * otherwise the wait counts as pausing and the rest is still owed.
	 * Our local delay never overtakes the global one, or we would count
	 * as sped up ourselves.
	 */
	if (skip && atomic_load(&exp_active)) {
		int was = handler_hold(t);	/* settle_wait() takes the history's lock */
		settle_wait(t, bcoz_now());
		handler_allow(t, was);
		/*
		 * What is still owed is paid at the next drain, not now: a
		 * thread just woken by another often shares the waker's CPU
		 * for a while, and a pause slept right now ended 0.3-1 ms
		 * late under QEMU TCG (later than the spin margin covers;
		 * after a read, 0.1-0.3 ms), uncredited.  Before its next
		 * hand-off or wait the thread drains and pays anyway.
		 */
		t->just_woken = 1;
	}
	bcoz_process(t);
	t->just_woken = 0;
}

/* The last to arrive at a barrier (glibc's serial thread) woke the others
 * as it arrived: a hand-off, for settle_wait(). */
void bcoz_barrier_passed(int serial)
{
	struct bcoz_thread *t = self_thread;

	if (t && serial && t->block_ts)
		t->woke_stamp = t->block_stamp;
}

void bcoz_catch_up(void)
{
	bcoz_process(self_thread);
}

uint64_t bcoz_current_local(void)
{
	struct bcoz_thread *t = self_thread;

	return t ? t->local_delay : atomic_load(&global_delay);
}

/* COZ-compatible annotation hooks for custom synchronisation */
BCOZ_EXPORT void _coz_pre_block(void) { bcoz_pre_block(); }
BCOZ_EXPORT void _coz_post_block(int skip) { bcoz_post_block(skip); }
BCOZ_EXPORT void _coz_catch_up(void) { bcoz_catch_up(); }
BCOZ_EXPORT void _coz_add_delays(void) { bcoz_catch_up(); }

/*
 * bcoz's signal handlers (SIGPROF, fatal signals) run on an alternate
 * signal stack, so they take nothing from the thread's own stack, which
 * can be small and nearly full (16 KiB threads with 8 KiB in use; the
 * kernel's signal frame alone is 1-3.5 KiB with the vector state).  A
 * thread that already has one (the program's own, e.g. Rust's) keeps it
 * and the handlers use that.  A guard page below catches an overflow.
 */
/*
 * The signal stacks of ended threads are kept for the next ones: a program
 * that starts a thread per task (a fork-join's workers) would otherwise
 * map, guard and unmap one per task on its critical path (0.25 ms under
 * QEMU TCG, 16 us on the host).  All have the same size.
 */
#define ALTSTACK_POOL 16
static void *altstack_pool[ALTSTACK_POOL];
static int altstack_pooled;
static atomic_flag altstack_pool_lock = ATOMIC_FLAG_INIT;

/* push (P) or pop (P NULL) one; returns the popped one, or P if full */
static void *altstack_pool_op(void *p)
{
	void *r = p;

	while (atomic_flag_test_and_set_explicit(&altstack_pool_lock, memory_order_acquire))
		;
	if (!p && altstack_pooled)
		r = altstack_pool[--altstack_pooled];
	else if (p && altstack_pooled < ALTSTACK_POOL)
		altstack_pool[altstack_pooled++] = p, r = NULL;
	atomic_flag_clear_explicit(&altstack_pool_lock, memory_order_release);
	return r;
}

static void altstack_begin(struct bcoz_thread *t)
{
	long page = sysconf(_SC_PAGESIZE), min = sysconf(_SC_SIGSTKSZ);
	size_t len = 16384 + (min > 0 ? (size_t)min : 8192);
	stack_t cur, ss;
	char *p;

	len = (len + page - 1) / page * page;
	if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
		return;
	p = altstack_pool_op(NULL);
	if (!p) {
		p = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (p == MAP_FAILED)
			return;
		mprotect(p, page, PROT_NONE);
	}
	ss.ss_sp = p + page;
	ss.ss_size = len;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL)) {
		if (altstack_pool_op(p))
			munmap(p, len + page);
		return;
	}
	t->altstack = p;
	t->altstack_len = len + page;
}

static void altstack_end(struct bcoz_thread *t)
{
	stack_t cur, off = { .ss_flags = SS_DISABLE };
	long page = sysconf(_SC_PAGESIZE);

	if (!t->altstack)
		return;
	if (!sigaltstack(NULL, &cur) && cur.ss_sp == (char *)t->altstack + page) {
		if (cur.ss_flags & SS_ONSTACK)
			return;		/* running on it (a handler called exit) */
		sigaltstack(&off, NULL);
	}
	if (altstack_pool_op(t->altstack))
		munmap(t->altstack, t->altstack_len);
	t->altstack = NULL;
}

/*
 * bcoz's own work in a thread's start and end (the perf event and its ring,
 * the signal stack, the CPU timer) is not the program's: 0.1 ms a thread
 * natively, 1-2 ms under QEMU TCG.  Where threads are made per task (a
 * fork-join's workers) it lies on the critical path, and the profiled
 * program's time, to which every prediction is a fraction, is that much
 * longer than the real one: forkjoin's big worker read +26.6 % where
 * really shortening it gave +35.7 (TCG).  So bcoz speeds its own time away
 * as it speeds up a line: the thread that spent @ns is that far ahead, the
 * threads running meanwhile pause as long, and the experiment's duration
 * loses it with the rest of the global delay.  Only inside an experiment,
 * like every delay; BCOZ_NO_OWN_CREDIT=1 turns it off.
 */
static void credit_own_time(struct bcoz_thread *t, uint64_t ns)
{
	if (!ns || bcoz_cfg.no_own_credit || !atomic_load(&exp_active))
		return;
	t->local_delay += ns;
	delay_hist_add(bcoz_now(), ns);
	atomic_fetch_add(&total_own_credit_ns, ns);
	publish_delay(t);
}

void bcoz_thread_begin(struct bcoz_thread *t, uint64_t inherit)
{
	struct sigevent sev;
	uint64_t t0 = bcoz_now();

	t->tid = syscall(SYS_gettid);
	t->fd = -1;
	t->last_line = -1;
	if (runq_enabled)
		t->last_run_delay = read_run_delay(t);
	t->local_delay = inherit;
	self_thread = t;
	atomic_fetch_add(&running_threads, 1);
	altstack_begin(t);
	sampler_start(t);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = t->tid;
	if (!timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer)) {
		struct itimerspec its = {
			{ 0, (long)bcoz_cfg.timer_ns }, { 0, (long)bcoz_cfg.timer_ns }
		};

		timer_settime(t->timer, 0, &its, NULL);
		t->has_timer = 1;
	}
	credit_own_time(t, bcoz_now() - t0);
}

/*
 * The CPU time a thread ran since its last on-CPU sample (the event's count
 * now, less its count in that sample and what was credited since, less the
 * spins of its pauses: spin_start()), credited
 * to the selection when that sample hit it: the thread is still in the line
 * or just left it.  At most CAP ns; returns what was credited.  It is a
 * debt: the line's next hits pay it back.  The samples' count stays the
 * estimate of the line's time (a hit's first period covers some time before
 * the line, as the tail after its last sample covers some of it; crediting
 * the tail too read lock L +56 where the truth was +50); only the moment
 * the delay is published moves.
 *
 * Samples come at every 1 ms of the thread's CPU time, so at a hand-off (a
 * lock released, a waiter signalled) the delay of the time since the last
 * one is not yet published: the thread woken by the hand-off finds the
 * global delay short of what the holder earned, is not credited for it, and
 * pays it later, inside its own critical section.  Two threads taking turns
 * on a lock around a 5 ms loop then read +29..+44 at 50 % where really
 * shortening the loop gave +48 (QEMU TCG).  A thread that ends takes its
 * last partial period with it the same way: for threads made per task (a
 * fork-join's workers, 5 ms each) a tenth of their time, more under TCG
 * where a late hrtimer sample can be overtaken by the exit.
 */
static uint64_t credit_unsampled(struct bcoz_thread *t, uint64_t cap)
{
	uint64_t c, seen, ran, rem, d;

	if (!atomic_load(&exp_active) || !t->last_hit || bcoz_cfg.scope)
		return 0;
	c = sampler_count(t);
	seen = t->count_at_sample > t->credited_to ? t->count_at_sample : t->credited_to;
	if (c <= seen)
		return 0;
	/* not the spins of its pauses (spin_start()); clamped, though the
	 * ranges do not overlap while pauses cannot nest */
	ran = spun_within(t, seen, c);
	ran = c - seen > ran ? c - seen - ran : 0;
	rem = ran < cap ? ran : cap;
	t->credited_to = c - (ran - rem);
	if (!rem)
		return 0;
	if (t->debt_exp != atomic_load(&exp_seq))
		t->debt_ns = 0;
	t->debt_ns += rem;
	t->debt_exp = atomic_load(&exp_seq);
	d = rem * atomic_load(&exp_delay) / BCOZ_PERIOD_NS;
	if (d) {
		t->local_delay += d;
		delay_hist_add(bcoz_now(), d);
	}
	return rem;
}

/* A thread that ends: see credit_unsampled().  Past the drain timer's
 * worth (and a period), the time was lost, not owed. */
static void credit_remainder(struct bcoz_thread *t)
{
	int was;

	if (t->in_use)
		return;
	/* the history's lock (delay_hist_add()), then a pause: as process() */
	was = handler_hold(t);
	atomic_fetch_add(&total_exit_credit_ns,
			 credit_unsampled(t, bcoz_cfg.timer_ns + BCOZ_PERIOD_NS));
	add_delays(t, 0);
	handler_allow(t, was);
	if (t->pending)
		process(t, 0);	/* what our SIGPROF handler left */
}

/*
 * Whether a hand-off reads the count (a system call, 0.4 us): at most about
 * every 1/8 period, so a thread that hands off every few hundred ns pays
 * little; each credit covers all the time since the last one.  The cycle
 * counter where there is one (a few ns; its rate needs no precision here).
 */
static int release_due(struct bcoz_thread *t)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t now = __builtin_ia32_rdtsc();

	if (now - t->release_tsc < (1ULL << 17))	/* 40-130 us at 1-3 GHz */
		return 0;
	t->release_tsc = now;
	return 1;
#else
	uint64_t now = bcoz_now();

	if (now - t->release_tsc < BCOZ_PERIOD_NS / 8)
		return 0;
	t->release_tsc = now;
	return 1;
#endif
}

/*
 * A hand-off (the wrappers of unlocks, signals, posts): publish the delay
 * earned up to now, the time since the last sample included
 * (credit_unsampled()), before the real call wakes anyone.
 */
void bcoz_release(void)
{
	struct bcoz_thread *t = self_thread;

	if (!t)
		return;
	bcoz_process(t);
	if (!atomic_load(&exp_active))
		return;
	t->woke_stamp = bcoz_stamp();	/* for settle_wait() */
	/* not from a signal handler of the program inside our own processing
	 * (a pause's spin not yet recorded would be credited) */
	if (t->last_hit && !t->in_use && release_due(t)) {
		int was = handler_hold(t);	/* while we change the counters */
		credit_unsampled(t, bcoz_cfg.timer_ns + BCOZ_PERIOD_NS);
		handler_allow(t, was);
		bcoz_process(t);
	}
}

void bcoz_thread_end(struct bcoz_thread *t)
{
	uint64_t t0;

	if (!t)
		return;
	bcoz_process(t);
	credit_remainder(t);
	t0 = bcoz_now();
	if (t->has_timer)
		timer_delete(t->timer);
	t->has_timer = 0;
	if (!t->blocked)
		atomic_fetch_sub(&running_threads, 1);
	self_thread = NULL;
	sampler_stop(t);
	altstack_end(t);
	/* published before a joiner can be woken: the thread has not exited */
	credit_own_time(t, bcoz_now() - t0);
}

/* ---------- experiments ---------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* --speedups LIST: cycle through these levels, shuffled per cycle */
static int speedup_list[BCOZ_SPEEDUP_STEPS + 1], nspeedups, speedup_pos;

static int pick_speedup(void)
{
	int r;

	if (bcoz_cfg.fixed_speedup >= 0)
		return bcoz_cfg.fixed_speedup;
	if (nspeedups) {
		if (speedup_pos % nspeedups == 0) {
			for (int i = nspeedups - 1; i > 0; i--) {
				int j = rnd() % (i + 1), tmp = speedup_list[i];

				speedup_list[i] = speedup_list[j];
				speedup_list[j] = tmp;
			}
		}
		return speedup_list[speedup_pos++ % nspeedups];
	}
	r = rnd() % (BCOZ_SPEEDUP_STEPS + BCOZ_ZERO_WEIGHT + 1);
	return r <= BCOZ_ZERO_WEIGHT ? 0 : (r - BCOZ_ZERO_WEIGHT) * (100 / BCOZ_SPEEDUP_STEPS);
}

/* sleep up to ns, waking early on stop; returns 1 if stopped */
static int nap(uint64_t ns)
{
	uint64_t end = bcoz_now() + ns;

	while (!atomic_load(&stop_flag)) {
		uint64_t now = bcoz_now(), left;
		struct timespec ts;

		if (now >= end)
			return 0;
		left = end - now;
		if (left > 10000000ULL)
			left = 10000000ULL;
		ts.tv_sec = 0;
		ts.tv_nsec = left;
		bcoz_real_nanosleep(&ts, NULL);
	}
	return 1;
}

/*
 * Choose the next line with probability proportional to its weighted samples
 * (on-CPU and blocked, lock waits excluded) since the previous choice, so
 * lines are explored in proportion to where the program spends its time now.
 */
static int pick_line(void)
{
	int n = linemap_nlines(), pick = -1;
	uint64_t total = 0, r;

	for (int i = 0; i < n; i++)
		total += atomic_load(&linemap_line(i)->recent);
	if (!total)
		return -1;
	r = rnd() % total;
	for (int i = 0; i < n; i++) {
		uint64_t c = atomic_load(&linemap_line(i)->recent);

		if (pick < 0 && r < c)
			pick = i;
		else if (pick < 0)
			r -= c;
		atomic_store(&linemap_line(i)->recent, 0);
	}
	atomic_store(&next_line, pick);
	return pick;
}

/*
 * --end-to-end: the run's one line is drawn from the samples taken from
 * half an experiment's length after @begin (the end of bcoz's set-up) to a
 * whole one (50-100 ms), or later, once one falls in scope.  The first samples are the program's
 * start-up: sqlite3's shell, drawn from them, ran its whole query with
 * sqlite3Malloc selected.  The experiment is measured from the draw on.
 */
static uint64_t e2e_left_out;	/* in-scope samples of the start-up */

static int pick_e2e_line(uint64_t begin)
{
	uint64_t up = bcoz_now() - begin, half = bcoz_cfg.min_exp_ns / 2;
	int n = linemap_nlines(), line;

	if (up < half && nap(half - up))
		return -1;
	for (int i = 0; i < n; i++)
		e2e_left_out += atomic_exchange(&linemap_line(i)->recent, 0);
	if (nap(half))
		return -1;
	while ((line = pick_line()) < 0 && !nap(10000000ULL))
		;
	return line;
}

static void write_samples(void)
{
	int n = linemap_nlines();

	out("runtime\ttime=%llu\n", (unsigned long long)(bcoz_now() - start_ns));
	for (int i = 0; i < n; i++) {
		struct bcoz_line *l = linemap_line(i);
		uint64_t c = atomic_load(&l->samples);

		if (c) {
			char loc[1100];

			linemap_label(i, loc, sizeof(loc));
			out("samples\tlocation=%s\tcount=%llu\n", loc, (unsigned long long)c);
		}
	}
}

static void write_stats(void);
static _Atomic int final_written;	/* the profiler thread wrote the last samples */

/*
 * --experiments N: the profile is complete, so end the program the way
 * timeout(1) does, with SIGTERM to the process.  A program that handles it
 * finishes on its own terms (and may print its results); the statistics are
 * written first because the default action does not run destructors.
 */
static void end_program(void)
{
	write_stats();
	bcoz_msg("%llu experiments done (--experiments): profile complete; ending the program "
		 "with SIGTERM\n", (unsigned long long)nexperiments);
	bcoz_real_kill(getpid(), SIGTERM);
}

static void *profiler_main(void *arg)
{
	uint64_t len = bcoz_cfg.min_exp_ns, begin = bcoz_now();

	(void)arg;
	out("startup\ttime=%llu\n", (unsigned long long)realtime_ns());
	while (!bcoz_cfg.end_to_end && !atomic_load(&stop_flag) && !atomic_load(&npoints))
		nap(10000000ULL);
	while (!atomic_load(&stop_flag) || bcoz_cfg.end_to_end) {
		int line = -1, sp, n, stopped;
		uint64_t t0, g0, h0, el, gd, dur, hits, mind = UINT64_MAX;
		char sel[4200];

		if (bcoz_cfg.scope) {
			snprintf(sel, sizeof(sel), "%s", bcoz_class_label(bcoz_cfg.scope));
		} else {
			if (fixed_line >= 0) {
				line = fixed_line;
			} else if (bcoz_cfg.end_to_end) {
				line = pick_e2e_line(begin);
				if (line < 0)
					break;
			} else {
				while ((line = pick_line()) < 0 && !atomic_load(&stop_flag))
					nap(10000000ULL);
				if (line < 0)
					break;
			}
			linemap_label(line, sel, sizeof(sel));
		}
		sp = pick_speedup();
		n = atomic_load(&npoints);
		atomic_store(&exp_line, line);
		atomic_store(&exp_class, bcoz_cfg.scope);
		atomic_store(&exp_delay, BCOZ_PERIOD_NS * sp / 100);
		atomic_fetch_add(&exp_seq, 1);	/* debts of the last one lapse */
		atomic_store(&exp_active, 1);
		/* the warm-up (see the top of the file): speedup on, unmeasured */
		if (bcoz_cfg.warmup_pct && !bcoz_cfg.end_to_end &&
		    nap(len * bcoz_cfg.warmup_pct / 100)) {
			atomic_store(&exp_active, 0);
			break;
		}
		for (int i = 0; i < n; i++)
			points[i].snap = __atomic_load_n(&points[i].ctr->count, __ATOMIC_RELAXED);
		h0 = atomic_load(&selected_hits);
		g0 = atomic_load(&global_delay);
		t0 = bcoz_now();
		if (bcoz_cfg.end_to_end) {
			while (!atomic_load(&stop_flag))
				nap(10000000ULL);
			stopped = 0;
		} else {
			stopped = nap(len);
		}
		atomic_store(&exp_active, 0);
		el = bcoz_now() - t0;
		gd = atomic_load(&global_delay) - g0;
		hits = atomic_load(&selected_hits) - h0;
		dur = el > gd ? el - gd : 0;
		atomic_store(&next_line, -1);
		if (stopped)
			break;	/* a cut-short experiment would bias its speedup level */
		nexperiments++;
		out("experiment\tselected=%s\tspeedup=%.2f\tduration=%llu\tselected-samples=%llu\n",
		    sel, sp / 100.0, (unsigned long long)dur, (unsigned long long)hits);
		if (bcoz_cfg.end_to_end) {
			out("throughput-point\tname=end-to-end\tdelta=1\n");
			mind = 1;
		}
		for (int i = 0; i < n; i++) {
			uint64_t now = __atomic_load_n(&points[i].ctr->count, __ATOMIC_RELAXED);
			uint64_t d = now - points[i].snap;

			if (points[i].type == PT_THROUGHPUT) {
				out("throughput-point\tname=%s\tdelta=%llu\n", points[i].name,
				    (unsigned long long)d);
				if (d < mind)
					mind = d;
			} else if (points[i].type == PT_BEGIN) {
				/* pair with the END counter of the same name */
				for (int j = 0; j < n; j++) {
					uint64_t e, ed;

					if (points[j].type != PT_END || strcmp(points[j].name, points[i].name))
						continue;
					e = __atomic_load_n(&points[j].ctr->count, __ATOMIC_RELAXED);
					ed = e - points[j].snap;
					out("latency-point\tname=%s\tarrivals=%llu\tdepartures=%llu\t"
					    "difference=%lld\n", points[i].name, (unsigned long long)d,
					    (unsigned long long)ed, (long long)(now - e));
					if (d < mind)
						mind = d;
					if (ed < mind)
						mind = ed;
				}
			}
		}
		if (bcoz_cfg.end_to_end)
			break;
		if (mind < BCOZ_MIN_DELTA && len < BCOZ_MAX_EXP_NS)
			len *= 2;
		else if (mind != UINT64_MAX && mind > 4 * BCOZ_MIN_DELTA &&
			 len >= 2 * bcoz_cfg.min_exp_ns)
			len /= 2;
		if (bcoz_cfg.experiments && nexperiments >= bcoz_cfg.experiments)
			break;
		if (nexperiments % 32 == 0)
			write_samples();
		nap(BCOZ_COOLOFF_NS);
	}
	write_samples();
	atomic_store(&final_written, 1);
	if (bcoz_cfg.experiments && nexperiments >= bcoz_cfg.experiments)
		end_program();
	return NULL;
}

/* ---------- diagnostics ---------- */

static char declared_names[512];
static int ndeclared;

static void note_declared(const char *name, const char *obj)
{
	size_t l = strlen(declared_names);

	(void)obj;
	if (ndeclared < 3 && l < sizeof(declared_names) - 8)
		snprintf(declared_names + l, sizeof(declared_names) - l, "%s'%s'",
			 ndeclared ? ", " : "", name);
	else if (ndeclared == 3 && l < sizeof(declared_names) - 8)
		strcat(declared_names, ", ...");
	ndeclared++;
}

static void diagnose(void)
{
	int n = atomic_load(&npoints);
	uint64_t total = 0;
	unsigned long long min_ms = bcoz_cfg.min_exp_ns / 1000000;
	unsigned long long warm_ms = min_ms * bcoz_cfg.warmup_pct / 100;

	if (bcoz_cfg.end_to_end) {
		/*
		 * the line is chosen from the samples: none was in scope (with
		 * --follow-exec the exec'd children are the ones profiled)
		 */
		uint64_t all = atomic_load(&total_samples);

		if (nexperiments || bcoz_cfg.follow_exec)
			return;
		if (all && bcoz_now() - start_ns - startup_cost_ns < bcoz_cfg.min_exp_ns)
			bcoz_msg("error: --end-to-end: no experiment ran: the run lasted %llu ms, "
				 "and the line is drawn from the samples %llu-%llu ms after the "
				 "start (the start-up's are left out). Fix: profile a longer run, "
				 "or name the code with --fixed-line or --fixed-function\n",
				 (unsigned long long)((bcoz_now() - start_ns - startup_cost_ns) /
						      1000000),
				 min_ms / 2, min_ms);
		else if (e2e_left_out)
			bcoz_msg("error: --end-to-end: no experiment ran: all %llu in-scope "
				 "samples came in the first %llu ms, the start-up, which the draw "
				 "leaves out. Fix: name the code with --fixed-line or "
				 "--fixed-function, or widen the scope (-b, -s)\n",
				 (unsigned long long)e2e_left_out, min_ms / 2);
		else if (all)
			bcoz_msg("error: --end-to-end: no experiment ran: none of the %llu samples "
				 "fell in an in-scope line or function, so none was chosen. Fix: "
				 "widen the scope (-b for libraries, -s for sources), or name the "
				 "code with --fixed-line or --fixed-function\n",
				 (unsigned long long)all);
		else
			bcoz_msg("error: --end-to-end: no experiment ran: this process was never "
				 "sampled on the CPU. If the work runs in forked child processes "
				 "(stress-ng, fio without --thread), bcoz does not profile them: "
				 "run the work in threads, or profile the child's command itself\n");
		return;
	}
	if (!n) {
		linemap_declared_points(note_declared);
		if (ndeclared)
			bcoz_msg("error: no progress point was reached during the run; declared "
				 "but never executed: %s. Fix: make sure the code path with the "
				 "COZ_PROGRESS runs, or use --end-to-end\n", declared_names);
		else
			bcoz_msg("error: no progress point was reached during the run. Fix: add "
				 "COZ_PROGRESS (include coz.h from tools/bcoz/include, link -ldl on "
				 "old glibc) on a line that runs once per unit of work, or use "
				 "--end-to-end\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		uint64_t c = __atomic_load_n(&points[i].ctr->count, __ATOMIC_RELAXED);

		total += c;
		if (bcoz_cfg.verbose)
			bcoz_msg("progress point '%s': %llu visits\n", points[i].name,
				 (unsigned long long)c);
	}
	if (bcoz_cfg.experiments && nexperiments && nexperiments < bcoz_cfg.experiments)
		bcoz_msg("warning: the program ended after %llu of the %llu experiments asked for "
			 "with --experiments; the profile holds what was done\n",
			 (unsigned long long)nexperiments, (unsigned long long)bcoz_cfg.experiments);
	if (!nexperiments) {
		if (atomic_load(&next_line) < 0 && fixed_line < 0 && !bcoz_cfg.scope &&
		    !atomic_load(&total_samples))
			bcoz_msg("error: no samples were taken in scope, so no experiment ran; "
				 "the run may be too short (needs > %llu ms)\n", min_ms + warm_ms);
		else
			bcoz_msg("warning: the run ended before the first experiment completed "
				 "(progress point '%s' reached %llu times); run longer (experiments "
				 "last >= %llu ms, measured after a %llu ms warm-up)\n", points[0].name,
				 (unsigned long long)total, min_ms, warm_ms);
	}
}

/* ---------- init / shutdown ---------- */

static void strip_preload(void)
{
	const char *lp = getenv("LD_PRELOAD");
	char buf[8192], *tok, *save, *copy;
	size_t n = 0;

	if (!lp)
		return;
	copy = strdup(lp);
	buf[0] = 0;
	for (tok = strtok_r(copy, " :", &save); tok; tok = strtok_r(NULL, " :", &save)) {
		if (strstr(tok, "libbcoz"))
			continue;
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ":" : "", tok);
		if (n >= sizeof(buf))
			break;
	}
	free(copy);
	if (buf[0])
		setenv("LD_PRELOAD", buf, 1);
	else
		unsetenv("LD_PRELOAD");
}

/*
 * A vfork child shares our memory until it execs or _exits, and runs no
 * atfork handlers: it must not touch the runtime's state (shutting down
 * there would stop the parent's profiling).  getpid() is a real system call
 * (glibc stopped caching it), so this is right in a vfork child too.
 */
int bcoz_in_other_process(void)
{
	return bcoz_pid && (pid_t)syscall(SYS_getpid) != bcoz_pid;
}

/*
 * Fatal signals.  A program killed by a signal runs no destructor, so the
 * final runtime and samples records (and BCOZ_STATS) would be lost.  For
 * each signal whose action is the default one, bcoz installs a handler
 * that writes them and then lets the default action happen.  The program
 * does not see it: sigaction() and signal() report SIG_DFL while it stands
 * in, and a handler the program installs replaces it.  SIGKILL cannot be
 * caught; the experiment under way is lost in any case.
 */
static const int fatal_sigs[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
};
int bcoz_stand_in[NSIG];
static _Atomic int fatal_once;

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int expect = 0;

	(void)si;
	(void)uc;
	if (bcoz_active && !bcoz_in_other_process() &&
	    atomic_compare_exchange_strong(&fatal_once, &expect, 1)) {
		if (!atomic_load(&final_written)) {
			write_samples();
			bcoz_msg("the program is ending on SIG%s: the profile holds %llu "
				 "experiments and the final samples (the experiment under way "
				 "is lost)\n", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
				 (unsigned long long)nexperiments);
		}
		write_stats();
	}
	/* SA_RESETHAND restored the default action: it happens on return */
	raise(sig);
}

static void stand_in_for_fatal_signals(void)
{
	struct sigaction sa, cur;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGPROF);
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		int sig = fatal_sigs[i];

		if (bcoz_real_sigaction(sig, NULL, &cur) || cur.sa_handler != SIG_DFL)
			continue;
		if (!bcoz_real_sigaction(sig, &sa, NULL))
			bcoz_stand_in[sig] = 1;
	}
}

/* --fixed-line or --fixed-function: the line index, or exit */
static void resolve_fixed(void)
{
	const char *spec = bcoz_cfg.fixed_line ?: bcoz_cfg.fixed_function;
	const char *what = bcoz_cfg.fixed_line ? "line" : "function";
	char why[1536];

	if (!spec)
		return;
	if (bcoz_cfg.fixed_line)
		fixed_line = linemap_find(spec, why, sizeof(why));
	else
		fixed_line = linemap_find_function(spec, why, sizeof(why));
	if (fixed_line < 0) {
		bcoz_msg("error: --fixed-%s %s: %s\n", what, spec, why);
		bcoz_real_exit(1);
	}
}

/*
 * Callers in code without frame pointers are found on a deeper stack copy
 * (stack_holds()); BCOZ_STACK_BYTES sets its size (0 turns the copy off).
 * Threads start sampling after this point.
 */
static void set_stack_bytes(void)
{
	if (bcoz_cfg.stack_bytes >= 0)
		sampler_set_stack_bytes((unsigned int)bcoz_cfg.stack_bytes & ~7u);
	else if (linemap_function_objects())
		sampler_set_stack_bytes(BCOZ_STACK_BYTES_FN);
}

__attribute__((constructor)) static void bcoz_init(void)
{
	struct sigaction sa;
	struct bcoz_thread *t;
	int bad = bcoz_config_load();

	if (bcoz_cfg.disable)
		return;
	start_ns = bcoz_now();
	start_stamp = bcoz_stamp();
	bcoz_pid = (pid_t)syscall(SYS_getpid);
	rng_state = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
	interpose_resolve();
	if (bad)
		bcoz_real_exit(2);
	if (!bcoz_cfg.follow_exec)
		strip_preload();
	/* with --follow-exec, every process after the first was exec'd by it */
	if (bcoz_cfg.follow_exec)
		setenv("BCOZ_FOLLOWED", "1", 1);
	nspeedups = bcoz_cfg.nspeedups;
	memcpy(speedup_list, bcoz_cfg.speedups, sizeof(speedup_list));
	spin_pauses = bcoz_every_pause_spins(&bcoz_cfg);
	ncpus = usable_cpus();
	if (sampler_probe())
		bcoz_real_exit(1);
	if (linemap_init(bcoz_cfg.followed)) {
		if (!bcoz_cfg.followed)
			bcoz_real_exit(1);
		/* a tool the program runs (sh, cp, ...): run it, unprofiled */
		if (bcoz_cfg.verbose)
			bcoz_msg("note: %s (exec'd, --follow-exec) has no line information in "
				 "scope; it runs unprofiled\n", program_invocation_name);
		return;
	}
	set_stack_bytes();
	runq_enabled = !bcoz_blocked_supported && !bcoz_cfg.no_runq;
	resolve_fixed();
	keep_stderr();
	out_fd = open(bcoz_cfg.output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		bcoz_msg("error: cannot open the profile %s: %s\n", bcoz_cfg.output,
			 strerror(errno));
		bcoz_real_exit(1);
	}
	if (out_fd < 3) {
		/* started with 0-2 closed: keep them for the program */
		int fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);

		close(out_fd);
		out_fd = fd;
		if (out_fd < 0) {
			bcoz_msg("error: cannot open the profile %s: %s\n", bcoz_cfg.output,
				 strerror(errno));
			bcoz_real_exit(1);
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	bcoz_real_sigaction(SIGPROF, &sa, NULL);
	stand_in_for_fatal_signals();
	bcoz_active = 1;
	t = calloc(1, sizeof(*t));
	atomic_fetch_add(&bcoz_live_threads, 1);
	bcoz_thread_begin(t, 0);
	if (bcoz_real_create(&profiler_thr, profiler_main, NULL)) {
		bcoz_msg("error: cannot start the profiler thread\n");
		bcoz_real_exit(1);
	}
	startup_cost_ns = bcoz_now() - start_ns;
	if (bcoz_cfg.verbose)
		bcoz_msg("started: %d lines in scope, blocked samples %s, kernel-mode samples %s, "
			 "startup %.1f ms\n", linemap_nlines(),
			 bcoz_blocked_supported ? "on" : "off",
			 bcoz_kernel_samples ? "on" : "off", startup_cost_ns / 1e6);
}

/* BCOZ_STATS=FILE: one line of counters per process, appended once */
static void write_stats(void)
{
	static _Atomic int written;
	const char *stats = bcoz_cfg.stats;
	char buf[1024];
	int fd, n, expect = 0;

	if (!stats || !*stats || !atomic_compare_exchange_strong(&written, &expect, 1))
		return;
	n = snprintf(buf, sizeof(buf),
		     "startup_ns=%llu runtime_ns=%llu global_delay_ns=%llu "
		     "pause_ns=%llu overslept_ns=%llu experiments=%llu samples=%llu blocked=%llu "
		     "lock=%llu unsampled=%d exit_credit_ns=%llu own_credit_ns=%llu "
		     "throttled=%llu process_ns=%llu late_handoff=%llu in_handler=%llu "
		     "carried_ns=%llu spun=%llu slept=%llu in_pause=%llu spun_count_ns=%llu\n",
		     (unsigned long long)startup_cost_ns,
		     (unsigned long long)(bcoz_now() - start_ns),
		     (unsigned long long)atomic_load(&global_delay),
		     (unsigned long long)atomic_load(&total_pause_ns),
		     (unsigned long long)atomic_load(&total_overslept_ns),
		     (unsigned long long)nexperiments,
		     (unsigned long long)atomic_load(&total_samples),
		     (unsigned long long)(atomic_load(&total_samples) -
					  atomic_load(&class_samples[BCOZ_ONCPU])),
		     (unsigned long long)atomic_load(&class_samples[BCOZ_LOCK]),
		     atomic_load(&bcoz_unsampled_threads),
		     (unsigned long long)atomic_load(&total_exit_credit_ns),
		     (unsigned long long)atomic_load(&total_own_credit_ns),
		     (unsigned long long)atomic_load(&bcoz_total_throttled),
		     (unsigned long long)atomic_load(&total_process_ns),
		     (unsigned long long)atomic_load(&total_late_handoff),
		     (unsigned long long)atomic_load(&total_in_handler),
		     (unsigned long long)atomic_load(&total_carried_ns),
		     (unsigned long long)atomic_load(&total_spun),
		     (unsigned long long)atomic_load(&total_slept),
		     (unsigned long long)atomic_load(&total_in_pause),
		     (unsigned long long)atomic_load(&total_spun_count_ns));
	fd = open(stats, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || syscall(SYS_write, fd, buf, n) < 0)
		bcoz_msg("warning: cannot write %s\n", stats);
	if (fd >= 0)
		close(fd);
}

/* -v: weighted samples per class, by perf's class names */
static void print_classes(void)
{
	char buf[256];
	size_t n = 0;

	for (int c = 0; c < BCOZ_CLASS_NR && n < sizeof(buf); c++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s %llu", c ? ", " : "",
			      bcoz_class_name(c),
			      (unsigned long long)atomic_load(&class_samples[c]));
	bcoz_msg("samples by class: %s\n", buf);
}

/*
 * A thread's ring filled before it was drained: a long run of samples
 * without a timer tick or a wrapped call, each carrying the stack copy.
 */
static void report_lost(void)
{
	unsigned long long lost = atomic_load(&bcoz_total_lost);
	unsigned int sb = sampler_stack_copied() ? bcoz_stack_bytes : 0;
	/* half of what a ring holds at about 512 bytes a sample besides the stack */
	unsigned long long us = sampler_ring_bytes() / (sb + 512) * BCOZ_PERIOD_NS / 2000;
	unsigned long long now_us = bcoz_cfg.timer_ns / 1000;
	char fix[256];
	int n = 0;

	if (us > now_us / 2)
		us = now_us / 2;
	if (us >= 100)
		n += snprintf(fix + n, sizeof(fix) - n, "read the ring more often, "
			      "BCOZ_TIMER_US=%llu", us);
	if (sb > 256)
		n += snprintf(fix + n, sizeof(fix) - n, "%scopy less of each stack, "
			      "BCOZ_STACK_BYTES=%s", n ? ", or " : "", sb > 1024 ? "512" : "256");
	if (!n)
		snprintf(fix, sizeof(fix), "none by a setting: the ring is read every %llu us "
			 "of CPU time and holds %zu KiB", now_us, sampler_ring_bytes() / 1024);
	bcoz_msg("warning: %llu sample records were lost (a thread's ring buffer filled "
		 "before the thread read it): the lines of the lost ones read low. Fix: %s\n",
		 lost, fix);
}

void bcoz_shutdown(void)
{
	struct bcoz_thread *t = self_thread;
	int expect = 0;

	if (!bcoz_active || bcoz_in_other_process() ||
	    !atomic_compare_exchange_strong(&shut_once, &expect, 1))
		return;
	if (t)
		bcoz_process(t);
	atomic_store(&stop_flag, 1);
	bcoz_real_join(profiler_thr);
	if (t)
		bcoz_thread_end(t);
	bcoz_active = 0;
	diagnose();
	if (bcoz_cfg.verbose)
		print_classes();
	linemap_report_blind(atomic_load(&total_samples));
	if (atomic_load(&bcoz_total_lost))
		report_lost();
	if (atomic_load(&bcoz_total_throttled))
		bcoz_msg("warning: the kernel throttled sampling %llu time(s) "
			 "(kernel.perf_event_max_sample_rate is %d): the samples of a "
			 "throttled tick are lost and lines read low; run: sysctl -w "
			 "kernel.perf_event_max_sample_rate=100000 "
			 "kernel.perf_cpu_time_max_percent=0\n",
			 (unsigned long long)atomic_load(&bcoz_total_throttled),
			 sampler_max_sample_rate());
	if (atomic_load(&bcoz_unsampled_threads))
		bcoz_msg("warning: %d thread(s) were not sampled (see the first warning for why); "
			 "their time is missing from the profile\n",
			 atomic_load(&bcoz_unsampled_threads));
	write_stats();
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
}

__attribute__((destructor)) static void bcoz_fini(void)
{
	bcoz_shutdown();
}

/* a process forked from the profiled one, or from such a process: its pid */
static pid_t forked_pid;

/*
 * Whether an exec from here is one --follow-exec follows: from the
 * profiled process, or from a process forked from it (a shell's
 * commands), but not from a vfork child, which shares its parent's memory
 * and must not touch it (its pid is neither).
 */
int bcoz_exec_followed(void)
{
	pid_t me;

	if (!bcoz_cfg.follow_exec)
		return 0;
	me = (pid_t)syscall(SYS_getpid);
	return (bcoz_active && me == bcoz_pid) || (forked_pid && me == forked_pid);
}

int bcoz_forked(void)
{
	return forked_pid != 0;
}

void bcoz_after_fork_child(void)
{
	struct bcoz_thread *t = self_thread;

	forked_pid = (pid_t)syscall(SYS_getpid);

	/* the inherited perf fd belongs to the parent's thread: drop it untouched */
	if (t) {
		if (t->ring)
			munmap(t->ring, t->ring_len);
		if (t->fd >= 0)
			close(t->fd);
		t->fd = -1;
		t->ring = NULL;
		self_thread = NULL;
	}
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
	drop_stderr_copy();
	bcoz_active = 0;
}
