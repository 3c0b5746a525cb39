/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcoz runtime: shared declarations.
 *
 * The runtime is preloaded into the profiled program.  It is split into
 *   config.c    - the BCOZ_* settings, read and checked once at start-up, and
 *                 the blocked-sample classes (perf's names)
 *   linemap.c   - address -> source line map built from DWARF line tables (libdw)
 *   sampler.c   - one perf task-clock event per thread (blocked samples when the
 *                 kernel has them), ring-buffer draining and sample decoding
 *   profiler.c  - progress points, the experiment loop, the global/local delay
 *                 accounting and profile output
 *   interpose.c - wrappers around thread, synchronisation, blocking, signal and
 *                 process calls that apply COZ's pre-block/post-block/catch-up rules
 */
#ifndef BCOZ_RUNTIME_H
#define BCOZ_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * Built with -fvisibility=hidden: the runtime exports only the libc
 * functions it wraps (interpose.c) and COZ's _coz_* interface.
 */
#define BCOZ_EXPORT		__attribute__((visibility("default")))

#define BCOZ_PERIOD_NS		1000000ULL	/* task-clock sample period: 1 ms */
#define BCOZ_TIMER_NS		10000000ULL	/* per-thread CPU-time drain timer */
#define BCOZ_PAUSE_TICKS	1		/* timer ticks between timer pauses */
#define BCOZ_SPEEDUP_STEPS	20		/* 5 % steps */
#define BCOZ_ZERO_WEIGHT	7		/* extra draws that mean 0 % */
#define BCOZ_LATE_HIST		8		/* last sleeps whose median lateness sets the spin cap */
#define BCOZ_SPUN_HIST		32		/* spins of pauses kept out of a hand-off's credit */
#define BCOZ_PAUSE_SPIN_LIMIT_NS 5000000ULL	/* the spin cap never rises above this */
#define BCOZ_MIN_EXP_NS		100000000ULL	/* minimum experiment length (BCOZ_EXP_MS) */
#define BCOZ_MAX_EXP_NS		8000000000ULL	/* cap on the adaptive length */
#define BCOZ_COOLOFF_NS		10000000ULL
#define BCOZ_WARMUP_PCT		30		/* unmeasured start of an experiment, % of its length */
#define BCOZ_MIN_DELTA		10		/* visits wanted per experiment */

/* header.misc subclass bits (blocked-samples ABI) */
#define BCOZ_MISC_OTHER		0x0008
#define BCOZ_MISC_IO		0x0010
#define BCOZ_MISC_SCHED		0x0020
#define BCOZ_MISC_LOCK		0x0040
#define BCOZ_MISC_MASK		0x0078

/*
 * The class of a sample: on-CPU or one blocked subclass.  Same order and
 * names as perf's (tools/perf/util/blocked.c: "on-cpu", "io", ...).
 */
enum bcoz_class {
	BCOZ_ONCPU,
	BCOZ_IO,
	BCOZ_LOCK,
	BCOZ_SCHED,
	BCOZ_OTHER,
	BCOZ_CLASS_NR,
};

int bcoz_class_of(uint16_t misc);		/* enum bcoz_class, -1: bad bits */
const char *bcoz_class_name(int cls);		/* perf's name */
const char *bcoz_class_label(int cls);		/* selected= of a subclass experiment */
int bcoz_class_parse(const char *s);		/* name or --blocked-scope letter; -1 */

/* ---- settings: every BCOZ_* variable, read once by bcoz_config_load() ---- */
struct bcoz_config {
	int disable;			/* BCOZ_DISABLE */
	int verbose;			/* BCOZ_VERBOSE */
	const char *output;		/* BCOZ_OUTPUT (profile.coz) */
	const char *stats;		/* BCOZ_STATS, NULL: none */
	int follow_exec;		/* BCOZ_FOLLOW_EXEC */
	int followed;			/* BCOZ_FOLLOWED: exec'd under follow_exec */
	int end_to_end;			/* BCOZ_END_TO_END */
	int fixed_speedup;		/* BCOZ_FIXED_SPEEDUP, -1: none */
	uint64_t experiments;		/* BCOZ_EXPERIMENTS, 0: no limit */
	int speedups[BCOZ_SPEEDUP_STEPS + 1];	/* BCOZ_SPEEDUPS */
	int nspeedups;
	int scope;			/* BCOZ_BLOCKED_SCOPE, BCOZ_ONCPU: none */
	int sleep_pauses;		/* BCOZ_SLEEP_PAUSES */
	int spin_pauses;		/* BCOZ_SPIN_PAUSES */
	int stack_bytes;		/* BCOZ_STACK_BYTES, -1: default */
	uint64_t timer_ns;		/* BCOZ_TIMER_US */
	unsigned int pause_ticks;	/* BCOZ_PAUSE_TICKS */
	uint64_t min_pause_ns;		/* BCOZ_MIN_PAUSE_US */
	uint64_t min_exp_ns;		/* BCOZ_EXP_MS: experiments last at least this */
	uint64_t pause_spin_max_ns;	/* BCOZ_PAUSE_SPIN_MAX_US */
	uint64_t warmup_pct;		/* BCOZ_WARMUP_PCT: unmeasured start, % of the length */
	int credit_measured;		/* BCOZ_CREDIT_MEASURED */
	int no_own_credit;		/* BCOZ_NO_OWN_CREDIT */
	int carry;			/* BCOZ_CARRY */
	int no_runq;			/* BCOZ_NO_RUNQ */
	int no_blocked;			/* BCOZ_NO_BLOCKED */
	int warned_blocked;		/* BCOZ_WARNED_BLOCKED: the note was printed */
	const char *fixed_line;		/* BCOZ_FIXED_LINE, NULL: none */
	const char *fixed_function;	/* BCOZ_FIXED_FUNCTION, NULL: none */
	const char *bin_scope;		/* BCOZ_BIN_SCOPE (MAIN) */
	const char *src_scope;		/* BCOZ_SRC_SCOPE, NULL: all */
	int by_function;		/* BCOZ_GRANULARITY=function */
};

extern struct bcoz_config bcoz_cfg;
int bcoz_config_load(void);	/* 0, or -1 with one error message printed */
/* every pause spins: BCOZ_SPIN_PAUSES=1, or --blocked-scope s unless
 * BCOZ_SLEEP_PAUSES=1 (profiler.c's pause_ns()) */
int bcoz_every_pause_spins(const struct bcoz_config *c);

/* ---- line map ---- */
struct bcoz_line {
	const char *file;		/* or the function name (line 0) */
	int line;			/* 0: a whole function */
	_Atomic uint64_t samples;	/* weighted sample count */
	_Atomic uint64_t recent;	/* since the last line selection */
};

int linemap_init(int quiet);		/* 0 or -1 (error printed unless quiet) */
void linemap_rescan(void);			/* after dlopen */
int linemap_lookup(uint64_t addr);		/* line index or -1 */
/* many lookups (a sample's): hold the table once, look up, release */
void linemap_hold(void);
int linemap_lookup_held(uint64_t addr);
void linemap_release(void);
struct bcoz_line *linemap_line(int idx);
int linemap_nlines(void);
int linemap_find(const char *spec, char *why, size_t whylen);	/* FILE:LINE */
/* function granularity: a function is an entry with line 0, its name as file */
int linemap_find_function(const char *name, char *why, size_t whylen);
void linemap_label(int idx, char *buf, size_t len);	/* FILE:LINE or NAME */
int linemap_function_objects(void);	/* objects profiled by function */
int linemap_blind(uint64_t addr);		/* in-scope object without lines there, or -1 */
int linemap_blind_stripped(int b);		/* ... and without any symbol */
void linemap_blind_count(int b, uint64_t weight);
void linemap_report_blind(uint64_t total);	/* at exit: where the profile was blind */
int linemap_static_program(const char *path);	/* regular ELF file without PT_INTERP */

/* ---- sampler ---- */
struct bcoz_thread {
	int fd;
	void *ring;
	size_t ring_len;
	uint64_t tail;
	timer_t timer;
	int has_timer;
	pid_t tid;
	uint64_t local_delay;
	uint64_t block_global;
	uint64_t block_ts;		/* CLOCK_MONOTONIC at pre_block */
	uint64_t block_stamp;		/* bcoz_stamp() at pre_block */
	uint64_t woke_stamp;		/* bcoz_stamp() at the last hand-off */
	uint64_t late_from;		/* settle_wait(): (late_from, block_ts] and */
	int64_t late_seen;		/* the delay dated there at pre_block */
	uint64_t oncpu_time;		/* the last on-CPU sample's time */
	int just_woken;			/* in post_block after a wake-up: no pause */
	int blocked;
	volatile int in_use;
	volatile int pending;
	uint64_t paused_ns;		/* sum of pauses (for the overhead split) */
	uint64_t wake_late_ns;		/* how late a pause's sleep ends (pause_ns) */
	uint64_t late_hist[BCOZ_LATE_HIST];	/* the last sleeps' lateness (pause_cap) */
	unsigned int late_n;		/* sleeps counted in late_hist */
	uint64_t excess_ns;		/* pauses' oversleep not yet paid back */
	uint64_t excess_exp;		/* the experiment excess_ns belongs to */
	unsigned int ticks;		/* timer ticks since the last pause */
	int last_hit;			/* the last on-CPU sample hit the selection */
	uint64_t last_hit_exp;		/* the experiment last_hit was taken in */
	int last_line;			/* the last on-CPU sample's line, -1: none */
	int owed;			/* the record being handled: on-CPU points
					 * the kernel owed at a switch-out */
	uint64_t sample_read;		/* the event's count in the record being handled */
	uint64_t count_at_sample;	/* the event's count at the last on-CPU sample */
	uint64_t credited_to;		/* count up to which a hand-off credited ahead */
	/* the event's count over the last spins of pauses: never a line's
	 * time, kept out of credit_unsampled() */
	uint64_t spun_from[BCOZ_SPUN_HIST], spun_to[BCOZ_SPUN_HIST];
	unsigned int spun_n;
	uint64_t count_read_ns;		/* the quickest read of the count (spin_until()) */
	uint64_t work_from, work_to;	/* the SIGPROF handler's last run (bcoz_now()) */
	uint64_t pause_from, pause_to;	/* the thread's last pause */
	uint64_t debt_ns;		/* credited ahead: owed back by the next hits */
	uint64_t debt_exp;		/* the experiment the debt belongs to */
	uint64_t release_tsc;		/* when a hand-off last read the count */
	/* run-queue compensation (kernels without blocked samples) */
	uint64_t last_run_delay;
	uint64_t batch_n, batch_hit;
	void *altstack;			/* signal stack bcoz gave the thread */
	size_t altstack_len;
	/*
	 * One sample record, copied out of the ring (it may wrap).  Here and
	 * not on the stack: the SIGPROF handler runs on the application's
	 * stack, which can be small (16 KiB threads with half of it in use).
	 */
	union {
		uint64_t u[1024];
		unsigned char b[8192];
	} rec;
};

extern int bcoz_blocked_supported;	/* kernel gives blocked samples */
extern _Atomic int bcoz_unsampled_threads;	/* perf event or ring refused */
extern _Atomic uint64_t bcoz_total_lost;	/* samples the rings lost */
extern _Atomic uint64_t bcoz_total_throttled;	/* PERF_RECORD_THROTTLE records */
extern int bcoz_kernel_samples;

int sampler_probe(void);		/* 0 ok, -1 fatal (message printed) */
int sampler_max_sample_rate(void);	/* the sysctl now, or -99 */
void sampler_set_stack_bytes(unsigned int bytes);	/* before threads sample */
size_t sampler_ring_bytes(void);		/* the data part of a thread's ring */
int sampler_stack_copied(void);			/* samples carry a user stack copy */
int sampler_start(struct bcoz_thread *t);
void sampler_stop(struct bcoz_thread *t);
void sampler_enable(struct bcoz_thread *t, int on);
uint64_t sampler_count(struct bcoz_thread *t);
/* Whether the ring buffer holds records not drained yet. */
int sampler_has_data(const struct bcoz_thread *t);
/* Drain the ring buffer, calling cb for each sample. */
typedef void (*sample_cb)(struct bcoz_thread *t, uint16_t misc, uint64_t time,
			  uint64_t weight, const uint64_t *ips, uint64_t nr, const uint64_t *stack,
			  uint64_t nstack);
#define BCOZ_STACK_BYTES	128	/* default user stack copy per sample */
#define BCOZ_STACK_BYTES_FN	1024	/* ... when an object is profiled by function */
#define BCOZ_STACK_BYTES_MAX	2048	/* a sample stays well inside the ring */
extern unsigned int bcoz_stack_bytes;
void sampler_drain(struct bcoz_thread *t, sample_cb cb);

/* ---- profiler core ---- */
extern struct bcoz_thread *bcoz_self(void);
extern int bcoz_active;
extern _Atomic int bcoz_live_threads;			/* runtime is profiling this process */
void bcoz_thread_begin(struct bcoz_thread *t, uint64_t inherit_delay);
void bcoz_thread_end(struct bcoz_thread *t);
void bcoz_process(struct bcoz_thread *t);	/* drain + account + delays */
void bcoz_pre_block(void);
void bcoz_post_block(int skip);
void bcoz_catch_up(void);
void bcoz_barrier_passed(int serial);	/* after the real barrier wait */
void bcoz_release(void);	/* catch up before a hand-off (unlock, signal, post) */
uint64_t bcoz_current_local(void);
void bcoz_shutdown(void);
void bcoz_after_fork_child(void);
int bcoz_in_other_process(void);
int bcoz_forked(void);			/* forked from the profiled process */
int bcoz_exec_followed(void);		/* --follow-exec follows an exec from here */
/* 1 while bcoz's handler stands in for the default action of a fatal signal */
extern int bcoz_stand_in[];	/* a vfork child of the profiled process */

/* ---- util ---- */
uint64_t bcoz_now(void);		/* CLOCK_MONOTONIC ns */
void bcoz_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* real functions used by the runtime itself */
int bcoz_real_create(unsigned long *thr, void *(*fn)(void *), void *arg);
int bcoz_real_join(unsigned long thr);
int bcoz_real_sigaction(int sig, const void *act, void *old);
int bcoz_real_mutex_lock(pthread_mutex_t *m);
int bcoz_real_mutex_unlock(pthread_mutex_t *m);
int bcoz_real_nanosleep(const struct timespec *req, struct timespec *rem);
int bcoz_real_kill(pid_t pid, int sig);
void bcoz_real_exit(int code) __attribute__((noreturn));
void interpose_resolve(void);

/* progress points declared by bcoz's coz.h (names stored in .bcoz_points) */
void linemap_declared_points(void (*cb)(const char *name, const char *obj));

#endif
