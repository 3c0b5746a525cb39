/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blocked samples: off-CPU samples of the perf task-clock event.
 *
 * A task-clock sampling event opened with attr.blocked also samples the
 * time its task spends off the CPU: a sampling point every period of it.
 * When the task is switched back in, the points that fell into the off-CPU
 * interval are emitted as (at most two) weighted samples: one for the time
 * the task was blocked, typed by why it blocked (I/O, lock, other), and one
 * for the time it waited runnable for a CPU (scheduling).  See
 * Documentation/admin-guide/perf/blocked-samples.rst.
 *
 * The scheduler and perf core call the hooks below.  Without
 * CONFIG_PERF_BLOCKED_SAMPLES they compile to nothing; with it, the
 * scheduler hooks are behind a static key that is enabled only while a
 * blocked event exists.
 */
#ifndef _LINUX_PERF_BLOCKED_H
#define _LINUX_PERF_BLOCKED_H

#include <linux/perf_event.h>
#include <linux/sched.h>

/* Subclass of an off-CPU interval, kept in task_struct::blocked_class. */
enum perf_blocked_class {
	PERF_BLOCKED_NONE = 0,
	PERF_BLOCKED_OTHER,
	PERF_BLOCKED_IO,
	PERF_BLOCKED_SCHED,
	PERF_BLOCKED_LOCK,
};

/* The task-clock hrtimer's shortest period, ns: attr.blocked needs >= it. */
#define PERF_BLOCKED_MIN_PERIOD	10000ULL
/* How far ahead of its point an on-CPU sample may fire, ns (two clocks). */
#define PERF_BLOCKED_EARLY_NS	2000ULL

/*
 * task-clock pmu::check_period(): PERF_EVENT_IOC_PERIOD holds a blocked
 * event to the period perf_event_open() requires of it.
 */
static inline int perf_blocked_check_period(struct perf_event *event,
					    u64 value)
{
	return event->attr.blocked && value < PERF_BLOCKED_MIN_PERIOD ?
	       -EINVAL : 0;
}

#ifdef CONFIG_PERF_BLOCKED_SAMPLES

#include <linux/jump_label_ratelimit.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/timekeeping.h>

extern struct static_key_false_deferred perf_blocked_key;

static __always_inline bool perf_blocked_enabled(void)
{
	return static_branch_unlikely(&perf_blocked_key.key);
}

/* Tasks that can have a blocked event: those with a perf context. */
static __always_inline bool perf_blocked_task_has_ctx(struct task_struct *p)
{
	return READ_ONCE(p->perf_event_ctxp[perf_sw_context]) ||
	       READ_ONCE(p->perf_event_ctxp[perf_hw_context]);
}

/*
 * __schedule(), for a real switch away from @prev.  @runnable tells whether
 * @prev stays on the runqueue (preempted or yielding) or is going to sleep.
 * A task-clock event lives in the software context, or in the hardware
 * context when its group has a hardware member: look at both.
 */
static inline void perf_blocked_switch_out(struct task_struct *prev,
					   bool runnable)
{
	u8 class;

	if (!perf_blocked_enabled() || !perf_blocked_task_has_ctx(prev))
		return;

	if (runnable)
		class = PERF_BLOCKED_SCHED;
	else if (prev->in_iowait)
		class = PERF_BLOCKED_IO;
	else if (prev->in_lockwait || READ_ONCE(prev->lockwait_lock))
		class = PERF_BLOCKED_LOCK;
	else
		class = PERF_BLOCKED_OTHER;

	prev->blocked_class = class;
}

/*
 * __perf_event_task_sched_out(), before the task's contexts are scheduled
 * out: perf core calls this only at a real context switch.  The switch-out
 * time is kept once per task, for every blocked event of the task, and is
 * non-zero only from here until the task's contexts are scheduled in again
 * (perf_blocked_sched_in()): a pmu::del() or pmu::add() that sees it zero
 * is not part of a context switch (enable, disable, rotation, resched).
 */
static inline void perf_blocked_sched_out(struct task_struct *task)
{
	if (perf_blocked_enabled() && task->blocked_class)
		task->blocked_out_ts = ktime_get_mono_fast_ns();
}

/*
 * finish_task_switch(), right after perf_event_task_sched_in(): every
 * blocked event has been through pmu::add(), the interval is over.  Not
 * behind a static key, neither ours nor perf_sched_events (perf core's
 * sched-in is skipped once the last task event is gone), so that a stamp
 * left by a switch-out before a key was switched off cannot survive into
 * the task's next run, where a later event's pmu::add() would take it for
 * a switch.  Most switches are of tasks without an interval in flight:
 * test, do not store.
 */
static inline void perf_blocked_sched_in(struct task_struct *task)
{
	if (!task->blocked_class && !task->blocked_out_ts)
		return;

	task->blocked_class = PERF_BLOCKED_NONE;
	task->blocked_out_ts = 0;
	task->blocked_wake_ts = 0;
}

/*
 * try_to_wake_up(), once @p is known to be off the runqueue and this is the
 * wake-up that makes it runnable: at most one per sleep.  @p cannot run
 * before this returns, so the store needs no further ordering.
 */
static inline void perf_blocked_wakeup(struct task_struct *p)
{
	if (!perf_blocked_enabled() || !perf_blocked_task_has_ctx(p))
		return;

	p->blocked_wake_ts = ktime_get_mono_fast_ns();
}

/* sched_fork(): a new task has no interval in flight. */
static inline void perf_blocked_fork(struct task_struct *p)
{
	p->blocked_class = PERF_BLOCKED_NONE;
	p->blocked_out_ts = 0;
	p->blocked_wake_ts = 0;
	p->in_lockwait = 0;
	p->lockwait_lock = NULL;
}

/* Context bookkeeping, under ctx->lock. */
static inline void perf_blocked_ctx_account(struct perf_event_context *ctx,
					    struct perf_event *event, int nr)
{
	if (event->attr.blocked)
		ctx->nr_blocked += nr;
}

/*
 * perf_event_set_state(), under ctx->lock, before @event's state changes.
 * Acts when it is enabled (@state >= INACTIVE) or disabled, put in error
 * or exits (@state < 0), and for the siblings of a group leader that is.
 * An event that was off during part of an off-CPU interval must not report
 * it: disabling forgets the switch-out it saw, enabling stamps the time
 * from which it may take over an interval (per-CPU events, see
 * perf_blocked_event_add()).
 */
static inline void __perf_blocked_set_state(struct perf_event *event,
					    enum perf_event_state state)
{
	event->hw.blocked_out = 0;
	if (state >= PERF_EVENT_STATE_INACTIVE)
		event->hw.blocked_on = ktime_get_mono_fast_ns();
}

static inline void perf_blocked_set_state(struct perf_event *event,
					  enum perf_event_state state)
{
	bool was_on = event->state >= PERF_EVENT_STATE_INACTIVE;
	bool on = state >= PERF_EVENT_STATE_INACTIVE;
	struct perf_event *sibling;

	if (!perf_blocked_enabled() || was_on == on)
		return;
	if (event->attr.blocked)
		__perf_blocked_set_state(event, state);
	if (event->group_leader != event)
		return;
	for_each_sibling_event(sibling, event)
		if (sibling->attr.blocked)
			__perf_blocked_set_state(sibling, state);
}

bool __perf_blocked_ctx_swap(struct perf_event_context *ctx,
			     struct perf_event_context *next_ctx,
			     struct task_struct *prev, struct task_struct *next);

/*
 * perf_event_context_sched_out(), about to swap @prev's context @ctx with
 * @next's clone @next_ctx: the blocked events' view of the two tasks'
 * off-CPU intervals goes with the tasks (see blocked.c).  False: do not
 * swap.
 */
static inline bool perf_blocked_ctx_swap(struct perf_event_context *ctx,
					 struct perf_event_context *next_ctx,
					 struct task_struct *prev,
					 struct task_struct *next)
{
	if (!ctx->nr_blocked && !next_ctx->nr_blocked)
		return true;
	return __perf_blocked_ctx_swap(ctx, next_ctx, prev, next);
}

/*
 * The hrtimer callback's sample of a blocked event, after
 * perf_blocked_hrtimer_due() counted the points it stands for into
 * hw.last_period: 1 when the timer was on time, more when its interrupt
 * came late (a long irqs-off section, a virtual CPU that was not running).
 */
static inline void perf_blocked_oncpu_sample(struct perf_event *event,
					     struct perf_sample_data *data)
{
	u64 points;

	if (!event->attr.blocked)
		return;

	points = div64_u64(data->period, event->hw.sample_period);

	/*
	 * This sample exhausts the event_limit.  The timer can fire as the
	 * switch-in enables interrupts, before perf_blocked_finish_switch()
	 * wrote the samples of the interval that ended there; the disable
	 * this sample queues may then come first, and its pmu::del() would
	 * write them past the limit.  Drop them, as samples past it are, and
	 * the on-CPU points until the event is enabled again.
	 */
	if (atomic_read(&event->event_limit) == 1) {
		event->hw.blocked_stopped = 1;
		event->hw.blocked_pend = 0;
		event->hw.blocked_pend_sched = 0;
		event->hw.blocked_due = 0;
	}
	if (event->attr.sample_type & PERF_SAMPLE_WEIGHT) {
		data->weight.full = points;
		data->sample_flags |= PERF_SAMPLE_WEIGHT_TYPE;
	} else if (event->attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT) {
		data->weight.full = 0;
		data->weight.var1_dw = min_t(u64, points, U32_MAX);
		data->sample_flags |= PERF_SAMPLE_WEIGHT_TYPE;
	}
}

/*
 * perf_prepare_sample(): the subclass of a blocked sample goes into the
 * record's header.misc; perf_sample_data_init() leaves it 0 for others.
 */
static inline u16 perf_blocked_sample_misc(const struct perf_sample_data *data)
{
	return data->blocked_misc;
}

DECLARE_PER_CPU(struct list_head, perf_blocked_pending);
void __perf_blocked_finish_switch(void);

/*
 * finish_task_switch(), after the runqueue lock is dropped: write the
 * samples that pmu::add() counted at this switch-in.
 */
static __always_inline void perf_blocked_finish_switch(void)
{
	if (perf_blocked_enabled() &&
	    !list_empty(this_cpu_ptr(&perf_blocked_pending)))
		__perf_blocked_finish_switch();
}

/*
 * task-clock pmu::del() of a blocked event: at a switch-out (perf core
 * stamped it) to another task, the hrtimer is not cancelled; see
 * perf_blocked_start_hrtimer().  A CPU going idle is not kept from
 * sleeping by a timer whose task is not there: it is cancelled.  The
 * scheduler has made the next task rq->curr by now.
 */
static inline bool perf_blocked_keep_hrtimer(struct perf_event *event)
{
	return current->blocked_out_ts && !idle_cpu(smp_processor_id());
}

/*
 * The hrtimer callback of an active blocked event: a timer kept at a
 * switch-out may fire on the CPU the task left as the task is switched in
 * on another one, which cancels it there.  Pairs with the smp_wmb()
 * between ->oncpu and ->state in event_sched_in().
 */
static inline bool perf_blocked_hrtimer_here(struct perf_event *event)
{
	/* ->state was ACTIVE: read the ->oncpu written before it */
	smp_rmb();
	return READ_ONCE(event->oncpu) == smp_processor_id();
}

int perf_blocked_check_attr(const struct perf_event_attr *attr);
int perf_blocked_event_init(struct perf_event *event);
void perf_blocked_event_del(struct perf_event *event);
void perf_blocked_event_add(struct perf_event *event);
bool perf_blocked_start_hrtimer(struct perf_event *event);
bool perf_blocked_hrtimer_due(struct perf_event *event,
			      enum hrtimer_restart *ret);

#else /* !CONFIG_PERF_BLOCKED_SAMPLES */

static inline void perf_blocked_switch_out(struct task_struct *prev,
					   bool runnable) { }
static inline void perf_blocked_sched_out(struct task_struct *task) { }
static inline void perf_blocked_sched_in(struct task_struct *task) { }
static inline void perf_blocked_finish_switch(void) { }
static inline void perf_blocked_wakeup(struct task_struct *p) { }
static inline void perf_blocked_fork(struct task_struct *p) { }
static inline void perf_blocked_ctx_account(struct perf_event_context *ctx,
					    struct perf_event *event, int nr) { }
static inline void perf_blocked_set_state(struct perf_event *event,
					  enum perf_event_state state) { }
static inline bool perf_blocked_ctx_swap(struct perf_event_context *ctx,
					 struct perf_event_context *next_ctx,
					 struct task_struct *prev,
					 struct task_struct *next)
{
	return true;
}

static inline void perf_blocked_oncpu_sample(struct perf_event *event,
					     struct perf_sample_data *data) { }

static inline u16 perf_blocked_sample_misc(const struct perf_sample_data *data)
{
	return 0;
}

/* Tell "kernel built without it" (EOPNOTSUPP) from "bad attr" (EINVAL). */
static inline int perf_blocked_check_attr(const struct perf_event_attr *attr)
{
	return attr->blocked ? -EOPNOTSUPP : 0;
}

static inline int perf_blocked_event_init(struct perf_event *event)
{
	return 0;
}

static inline bool perf_blocked_keep_hrtimer(struct perf_event *event)
{
	return false;
}

static inline bool perf_blocked_hrtimer_here(struct perf_event *event)
{
	return true;
}

static inline void perf_blocked_event_del(struct perf_event *event) { }
static inline void perf_blocked_event_add(struct perf_event *event) { }

static inline bool perf_blocked_start_hrtimer(struct perf_event *event)
{
	return false;
}

static inline bool perf_blocked_hrtimer_due(struct perf_event *event,
					    enum hrtimer_restart *ret)
{
	return true;
}

#endif /* CONFIG_PERF_BLOCKED_SAMPLES */

#endif /* _LINUX_PERF_BLOCKED_H */
