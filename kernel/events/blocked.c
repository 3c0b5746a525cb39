// SPDX-License-Identifier: GPL-2.0
/*
 * Blocked samples: off-CPU samples for the task-clock event.
 *
 * A sampling task-clock event samples a task only while it runs: a point
 * falls due every period of the task's on-CPU time, its count.  With
 * attr.blocked the task's off-CPU time has sampling points of its own, one
 * every period of off-CPU time, and those that fell into an off-CPU
 * interval are emitted at switch-in, as at most two samples:
 *
 *   out ............. wake-up ............ in
 *   |<---- blocked ---->|<---- runnable --->|
 *      [I]/[L]/[B]             [S]
 *
 * The blocked part is typed by why the task left the CPU (I/O wait, lock
 * wait, anything else), the runnable part is always scheduling delay.  A
 * preempted task never blocked, so its whole interval is [S].  Each sample
 * carries the number of sampling points it stands for as its weight, and
 * that many periods as its period, so tools that sum periods count the
 * off-CPU time correctly without knowing about weights.  Over any stretch
 * of the task's life the points add up to its wall time, within a period
 * on and one off.
 *
 * The two grids are apart on purpose.  One grid in wall time across both
 * (the hrtimer left running across the gap) lets the program and the
 * sampling see each other: a sample's own cost, and an interrupt held off
 * until after its point, are spent just after a point, so a program that
 * switches every few periods' worth of microseconds shifts its switches
 * against the grid, and its waits catch more points than their length.  A
 * spin-sleep loop in a TCG guest (100 us on, 50 us off) had 15 % more
 * points off the CPU than it was off, and as many fewer on it.  Counted
 * apart, each side's points follow its own time only.
 *
 * Where the work is done:
 *  - __schedule() tags the task with the class at a real switch; perf
 *    core, at the same switch (__perf_event_task_sched_out()), stamps the
 *    switch-out time once per task, and clears both once the task's
 *    contexts are scheduled in again; try_to_wake_up() stamps the
 *    wake-up.  The scheduler hooks are behind perf_blocked_key and only
 *    touch tasks with a perf context, see <linux/perf_blocked.h>.  No
 *    list of events is walked on a switch.
 *  - pmu::del() of each blocked event remembers which switch-out it saw
 *    (the task's stamp) and when its count stopped, and counts the on-CPU
 *    points its held-off timer did not sample; pmu::add() counts the
 *    interval's off-CPU points and splits them; pmu::start() sets the
 *    hrtimer for the count's next point.  Both grids are the event's own,
 *    so several blocked events on one task (a recorder and a profiler,
 *    two per-CPU sessions) each get exact results.
 *  - Nothing is unwound or written while the scheduler holds the
 *    runqueue lock: add() only counts points and puts the event on a
 *    per-CPU list, which finish_task_switch() empties once it unlocked
 *    the runqueue, still in the task's switch-in and on its stack.
 *    The samples go through perf_event_overflow() like any other, so
 *    throttling, event_limit/PERF_EVENT_IOC_REFRESH, sigtrap, fasync and
 *    a BPF program attached with PERF_EVENT_IOC_SET_BPF apply to them.
 *  - An event reports an interval only if it saw it whole: it was active
 *    when the task left (CPU-bound events: or enabled since before that,
 *    on another CPU), and was not disabled since.  del()/add() outside a
 *    context switch (enable, disable, rotation) see no stamp and measure
 *    nothing.
 *
 * The sample is taken in the blocked task's own context: in
 * finish_task_switch() on the task's stack, so the kernel unwinder walks
 * back through the scheduler into the code that went to sleep.  Frames
 * are cut up to the first __sched function (__schedule()) and past the
 * run of scheduler functions that
 * follows it (in_sched_functions(): __sched and lock text, the rule
 * get_wchan() uses), so the sample's IP is the function that called
 * schedule(), io_schedule(), mutex_lock(), ...  The user part
 * is the user stack at the syscall, as are the user registers and stack
 * dump, so DWARF unwinding works.
 */

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/perf_blocked.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched/clock.h>
#include <linux/sched/debug.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/workqueue.h>
#include <asm/sections.h>
#include <trace/events/lock.h>

DEFINE_STATIC_KEY_DEFERRED_FALSE(perf_blocked_key, HZ);

static const u16 perf_blocked_misc[] = {
	[PERF_BLOCKED_OTHER]	= PERF_RECORD_MISC_BLOCKED_OTHER,
	[PERF_BLOCKED_IO]	= PERF_RECORD_MISC_BLOCKED_IO,
	[PERF_BLOCKED_SCHED]	= PERF_RECORD_MISC_BLOCKED_SCHED,
	[PERF_BLOCKED_LOCK]	= PERF_RECORD_MISC_BLOCKED_LOCK,
};

static struct perf_callchain_entry perf_blocked_empty_callchain = { .nr = 0 };

/*
 * Called from perf_copy_attr(): the bit only means something on a sampling
 * task-clock event.  Per-task attachment is checked at init, where it is
 * known.
 */
int perf_blocked_check_attr(const struct perf_event_attr *attr)
{
	if (!attr->blocked)
		return 0;
	if (attr->type != PERF_TYPE_SOFTWARE ||
	    attr->config != PERF_COUNT_SW_TASK_CLOCK)
		return -EINVAL;
	/* sample_period and sample_freq share storage */
	if (!attr->sample_period)
		return -EINVAL;
	return 0;
}

/*
 * Lock waits.  The sleeping locks of kernel/locking/ (mutex, rwsem,
 * rt_mutex, rtlock, semaphore, percpu-rwsem, rwbase) report a contended
 * acquisition through the lock:contention_begin and contention_end
 * tracepoints.  While blocked events exist, probes on them keep the lock a
 * task contends for in task_struct::lockwait_lock, so a sleep in between is
 * typed as a lock wait (perf_blocked_switch_out()); waits without such a
 * tracepoint mark themselves, see <linux/sched/lockwait.h>.
 *
 * contention_begin is also called for spinning, with LCB_F_SPIN: the
 * spinlocks and rwlocks, and the optimistic spin of a mutex.  Those never
 * sleep, so the probe ignores them, and contention_end only clears the
 * lock it belongs to: a spinlock contended inside a sleeping lock's slow
 * path (its wait_lock), or in an interrupt, leaves the mark alone.  Begins
 * may repeat without an end (a mutex waiter spins again after a wake-up);
 * the last one wins.
 *
 * Without a blocked event the probes are unregistered, so the tracepoints
 * are no-ops again.  The first blocked event registers them; after the
 * last is gone a delayed work unregisters them (HZ later, as the static
 * key goes off, so that opening and closing events in a loop does not
 * patch text every time) and clears the mark of every task: a task that
 * was waiting then misses its contention_end.
 */
static void perf_blocked_contention_begin(void *data, void *lock,
					  unsigned int flags)
{
	if (!(flags & LCB_F_SPIN))
		current->lockwait_lock = lock;
}

static void perf_blocked_contention_end(void *data, void *lock, int ret)
{
	if (current->lockwait_lock == lock)
		current->lockwait_lock = NULL;
}

static DEFINE_MUTEX(perf_blocked_lock_mutex);
static unsigned int perf_blocked_lock_users;	/* events needing the probes */
static bool perf_blocked_lock_probes;		/* the probes are registered */

static void perf_blocked_lock_release(struct work_struct *work)
{
	struct task_struct *g, *t;

	mutex_lock(&perf_blocked_lock_mutex);
	if (perf_blocked_lock_users || !perf_blocked_lock_probes)
		goto out;

	unregister_trace_contention_begin(perf_blocked_contention_begin, NULL);
	unregister_trace_contention_end(perf_blocked_contention_end, NULL);
	/* No probe runs after this: the marks are ours to clear. */
	tracepoint_synchronize_unregister();
	rcu_read_lock();
	for_each_process_thread(g, t)
		WRITE_ONCE(t->lockwait_lock, NULL);
	rcu_read_unlock();
	perf_blocked_lock_probes = false;
out:
	mutex_unlock(&perf_blocked_lock_mutex);
}

static DECLARE_DELAYED_WORK(perf_blocked_lock_work, perf_blocked_lock_release);

static int perf_blocked_lock_get(void)
{
	int err = 0;

	mutex_lock(&perf_blocked_lock_mutex);
	if (!perf_blocked_lock_probes) {
		err = register_trace_contention_begin(perf_blocked_contention_begin,
						      NULL);
		if (err)
			goto out;
		err = register_trace_contention_end(perf_blocked_contention_end,
						    NULL);
		if (err) {
			unregister_trace_contention_begin(perf_blocked_contention_begin,
							  NULL);
			tracepoint_synchronize_unregister();
			goto out;
		}
		perf_blocked_lock_probes = true;
	}
	perf_blocked_lock_users++;
out:
	mutex_unlock(&perf_blocked_lock_mutex);
	return err;
}

static void perf_blocked_lock_put(void)
{
	mutex_lock(&perf_blocked_lock_mutex);
	if (!--perf_blocked_lock_users)
		schedule_delayed_work(&perf_blocked_lock_work, HZ);
	mutex_unlock(&perf_blocked_lock_mutex);
}

/*
 * An event is inactive when it is removed and freed while its task is off
 * the CPU, and its hrtimer may still be queued from the switch-out.  It is
 * on no pending list: pmu::del() took it off (perf_blocked_event_del()).
 */
static void perf_blocked_child_destroy(struct perf_event *event)
{
	hrtimer_cancel(&event->hw.hrtimer);
}

static void perf_blocked_event_destroy(struct perf_event *event)
{
	perf_blocked_child_destroy(event);
	perf_blocked_lock_put();
	put_callchain_buffers();
	static_branch_slow_dec_deferred(&perf_blocked_key);
}

int perf_blocked_event_init(struct perf_event *event)
{
	int err;

	if (!event->attr.blocked)
		return 0;

	/* A CPU-wide task-clock never sees the task switches. */
	if (!(event->attach_state & PERF_ATTACH_TASK))
		return -EINVAL;

	/*
	 * The task-clock hrtimer never fires more often than every
	 * PERF_BLOCKED_MIN_PERIOD ns (a sample_freq was turned into a
	 * period by now): a shorter period would weigh the off-CPU grid in
	 * periods the on-CPU samples never see.
	 */
	if (event->hw.sample_period < PERF_BLOCKED_MIN_PERIOD)
		return -EINVAL;

	/* Enabled from now on, if it is (see perf_blocked_set_state()). */
	event->hw.blocked_on = ktime_get_mono_fast_ns();
	/* The first points: a period of on-CPU and of off-CPU time away. */
	event->hw.blocked_count_next = event->hw.sample_period;
	event->hw.blocked_off_left = event->hw.sample_period;
	INIT_LIST_HEAD(&event->hw.blocked_node);

	/*
	 * An inherited event relies on its parent's callchain buffers and
	 * static key reference: the parent is freed only after all its
	 * children, as upstream does for callchain buffers.
	 */
	if (event->parent) {
		event->destroy = perf_blocked_child_destroy;
		return 0;
	}

	/* The sample's IP comes from the callchain, so always have buffers. */
	err = get_callchain_buffers(sysctl_perf_event_max_stack);
	if (err)
		return err;

	err = perf_blocked_lock_get();
	if (err) {
		put_callchain_buffers();
		return err;
	}

	static_branch_inc(&perf_blocked_key.key);
	event->destroy = perf_blocked_event_destroy;

	return 0;
}

/* Sampling points in (0, len] when the first one is at @first. */
static u64 perf_blocked_points(u64 len, u64 first, u64 period)
{
	if (len < first)
		return 0;
	return div64_u64(len - first, period) + 1;
}

static bool perf_blocked_in_sched_text(unsigned long addr)
{
	return addr >= (unsigned long)__sched_text_start &&
	       addr < (unsigned long)__sched_text_end;
}

/*
 * Drop the perf and scheduler frames from a kernel callchain taken at
 * switch-in (or switch-out): everything up to the first __sched function
 * (__schedule(); finish_task_switch() is not __sched, and lock text may
 * come before it) and the run of scheduler functions after it.  If no
 * scheduler frame is found the kernel part says nothing trustworthy about
 * the wait and is dropped whole.  Returns the number of kernel frames left.
 */
static unsigned int perf_blocked_trim(struct perf_callchain_entry *entry)
{
	u64 *ip = entry->ip;
	unsigned int nr = entry->nr, end, i;

	if (!nr || ip[0] != PERF_CONTEXT_KERNEL)
		return 0;

	for (end = 1; end < nr && ip[end] < PERF_CONTEXT_MAX; end++)
		;
	for (i = 1; i < end && !perf_blocked_in_sched_text(ip[i]); i++)
		;
	while (i < end && in_sched_functions(ip[i]))
		i++;

	if (i == end) {
		memmove(&ip[0], &ip[end], (nr - end) * sizeof(u64));
		entry->nr = nr - end;
		return 0;
	}

	memmove(&ip[1], &ip[i], (nr - i) * sizeof(u64));
	entry->nr = nr - (i - 1);
	return end - i;
}

/*
 * Append the user callchain (the user stack at the syscall) after the
 * trimmed kernel part.  Taking it separately means the perf and scheduler
 * frames trimmed away do not count against sysctl_perf_event_max_stack,
 * which would cut deep user stacks short.  The entry is the per-CPU
 * callchain buffer get_perf_callchain() just filled, still ours: IRQs are
 * off and the caller holds rcu_read_lock().
 */
static void perf_blocked_user_chain(struct perf_callchain_entry *entry,
				    unsigned int nr_kernel)
{
	struct perf_callchain_entry_ctx ctx = {
		.entry		= entry,
		.max_stack	= sysctl_perf_event_max_stack,
		.nr		= nr_kernel,
		.contexts	= entry->nr > nr_kernel,
	};

	if (perf_callchain_store_context(&ctx, PERF_CONTEXT_USER))
		return;
	perf_callchain_user(&ctx, task_pt_regs(current));
}

/* Remove the kernel part (marker and frames) of a callchain. */
static void perf_blocked_strip_kernel(struct perf_callchain_entry *entry,
				      unsigned int nr_kernel)
{
	unsigned int cut = nr_kernel + 1;

	if (!entry->nr || entry->ip[0] != PERF_CONTEXT_KERNEL)
		return;
	memmove(&entry->ip[0], &entry->ip[cut],
		(entry->nr - cut) * sizeof(u64));
	entry->nr -= cut;
}

/* Honour attr.sample_max_stack after the trimming. */
static void perf_blocked_limit(struct perf_callchain_entry *entry, u32 max)
{
	unsigned int i, frames = 0;

	for (i = 0; i < entry->nr; i++) {
		if (entry->ip[i] >= PERF_CONTEXT_MAX)
			continue;
		if (++frames > max) {
			entry->nr = i;
			return;
		}
	}
}

/*
 * One sample through the normal overflow path.  Returns non-zero if the
 * event must stop (throttled, or its event_limit reached).
 */
static int perf_blocked_output(struct perf_event *event,
			       enum perf_blocked_class class, u64 points,
			       u64 time, struct pt_regs *regs,
			       struct perf_callchain_entry *callchain)
{
	u64 sample_type = event->attr.sample_type;
	struct perf_sample_data data;

	perf_sample_data_init(&data, 0, points * event->hw.sample_period);

	/* Both samples of one interval carry its end, the switch-in. */
	data.time = time;
	data.sample_flags |= PERF_SAMPLE_TIME;

	if (sample_type & PERF_SAMPLE_WEIGHT) {
		data.weight.full = points;
		data.sample_flags |= PERF_SAMPLE_WEIGHT_TYPE;
	} else if (sample_type & PERF_SAMPLE_WEIGHT_STRUCT) {
		data.weight.full = 0;
		data.weight.var1_dw = min_t(u64, points, U32_MAX);
		data.sample_flags |= PERF_SAMPLE_WEIGHT_TYPE;
	}

	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		data.callchain = callchain;
		data.sample_flags |= PERF_SAMPLE_CALLCHAIN;
	}

	/* perf_prepare_sample() puts the subclass into header.misc */
	data.blocked_misc = perf_blocked_misc[class];

	return perf_event_overflow(event, &data, regs);
}

/*
 * Build the registers and the callchain the samples of this interval
 * report.  Must not be inlined into a caller that returns before the
 * callchain is used: the unwind starts at this function's frame.
 */
static noinline struct perf_callchain_entry *
perf_blocked_context(struct perf_event *event, struct pt_regs *regs)
{
	struct perf_event_attr *attr = &event->attr;
	bool want_chain = attr->sample_type & PERF_SAMPLE_CALLCHAIN;
	bool user = want_chain && !attr->exclude_callchain_user;
	struct perf_callchain_entry *entry;
	unsigned int nr_kernel;

	if (attr->exclude_kernel) {
		/* The task as its user code sees it: at the syscall. */
		if (!current->mm)
			return NULL;
		*regs = *task_pt_regs(current);
		if (!user)
			return &perf_blocked_empty_callchain;
		entry = get_perf_callchain(regs, 0, false, true,
					   attr->sample_max_stack, false, true);
		return entry ?: &perf_blocked_empty_callchain;
	}

	perf_fetch_caller_regs(regs);
	entry = get_perf_callchain(regs, 0, true, false,
				   sysctl_perf_event_max_stack, false, true);
	if (!entry)
		return &perf_blocked_empty_callchain;

	nr_kernel = perf_blocked_trim(entry);
	if (user && current->mm)
		perf_blocked_user_chain(entry, nr_kernel);

	if (nr_kernel) {
		regs->ip = entry->ip[1];
	} else if (current->mm) {
		/* No kernel context to show: report the syscall site. */
		*regs = *task_pt_regs(current);
	} else {
		/*
		 * A kernel thread whose stack showed no scheduler frame: no
		 * IP is better than one inside perf.
		 */
		regs->ip = 0;
	}

	if (!want_chain)
		return &perf_blocked_empty_callchain;
	if (attr->exclude_callchain_kernel)
		perf_blocked_strip_kernel(entry, nr_kernel);
	perf_blocked_limit(entry, attr->sample_max_stack ?:
			   sysctl_perf_event_max_stack);
	return entry;
}

/* hw_perf_event::interrupts of a throttled event (MAX_INTERRUPTS) */
#define PERF_BLOCKED_THROTTLED	(~0ULL)

/*
 * Emit what the event owes: on-CPU points that fell due while its hrtimer
 * was held off before the switch-out, then the blocked and the runnable
 * part of the off-CPU interval.  Runs in the task's own context with
 * interrupts off: from finish_task_switch() after the switch-in, or from
 * pmu::del() if the event leaves before that ran.  The samples carry the
 * task's present IP and callchain, which for all three is the place it went
 * to sleep (or, with exclude_kernel, the syscall site).
 */
static void perf_blocked_emit(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	enum perf_blocked_class class = hwc->blocked_pend_class;
	u64 due = hwc->blocked_due, n_blocked = hwc->blocked_pend;
	u64 n_sched = hwc->blocked_pend_sched, t0, time;
	struct perf_callchain_entry *callchain;
	struct pt_regs regs = {};
	int stop = 0;

	hwc->blocked_due = 0;
	hwc->blocked_pend = 0;
	hwc->blocked_pend_sched = 0;

	if (!(due | n_blocked | n_sched))
		return;
	if (event->attr.exclude_kernel && event->attr.exclude_user)
		return;
	/*
	 * Throttled, or its event_limit ran out (the disable is pending):
	 * dropped, as the hrtimer's samples are.
	 */
	if (hwc->interrupts == PERF_BLOCKED_THROTTLED ||
	    READ_ONCE(event->pending_disable))
		return;

	t0 = local_clock();
	/* protects the per-CPU callchain buffer until the last sample */
	rcu_read_lock();
	callchain = perf_blocked_context(event, &regs);
	time = event->clock();
	if (callchain && due)
		stop = perf_blocked_output(event, PERF_BLOCKED_NONE, due, time,
					   &regs, callchain);
	if (callchain && n_blocked && !stop)
		stop = perf_blocked_output(event, class, n_blocked, time,
					   &regs, callchain);
	if (callchain && n_sched && !stop)
		stop = perf_blocked_output(event, PERF_BLOCKED_SCHED, n_sched,
					   time, &regs, callchain);
	rcu_read_unlock();

	/*
	 * Stop the on-CPU samples too, as perf_swevent_hrtimer() does, and
	 * drop the points until they restart (perf_blocked_skip()).
	 */
	if (stop) {
		hwc->blocked_stopped = 1;
		hrtimer_try_to_cancel(&hwc->hrtimer);
	}

	/* Lets perf lower perf_event_max_sample_rate if this is too slow. */
	perf_sample_event_took(local_clock() - t0);
}

/*
 * The events whose samples this CPU's switch-in counted and has yet to
 * write.  Only the CPU itself touches its list, with interrupts off: at
 * pmu::add() and pmu::del(), which run where the event is active, and in
 * __perf_blocked_finish_switch().  So an event on it is active on this
 * CPU, and it leaves the list before it can be freed.
 */
DEFINE_PER_CPU(struct list_head, perf_blocked_pending);

static int __init perf_blocked_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		INIT_LIST_HEAD(per_cpu_ptr(&perf_blocked_pending, cpu));
	return 0;
}
early_initcall(perf_blocked_init);

/*
 * finish_task_switch(), once the runqueue is unlocked: write what the
 * events scheduled in at this switch-in counted.  The task is current and
 * still on the stack it slept on.  Interrupts are enabled again here, so
 * they are disabled while writing, as for a sample from the hrtimer.  An
 * event that a disable or removal IPI took off the CPU as the runqueue was
 * unlocked is not on the list any more: its pmu::del() wrote what it owed.
 */
void __perf_blocked_finish_switch(void)
{
	struct list_head *head = this_cpu_ptr(&perf_blocked_pending);
	struct perf_event *event;
	unsigned long flags;

	local_irq_save(flags);
	while (!list_empty(head)) {
		event = list_first_entry(head, struct perf_event,
					 hw.blocked_node);
		list_del_init(&event->hw.blocked_node);
		perf_blocked_emit(event);
	}
	local_irq_restore(flags);
}

/*
 * Called from pmu::add() at a switch-in, with the runqueue locked and
 * interrupts off: __perf_blocked_finish_switch() of the same switch
 * writes the samples, or pmu::del(), if the event leaves first.
 */
static void perf_blocked_queue(struct perf_event *event)
{
	struct list_head *node = &event->hw.blocked_node;

	if (list_empty(node))
		list_add_tail(node, this_cpu_ptr(&perf_blocked_pending));
}

/*
 * The on-CPU points the count has reached: move hw.blocked_count_next
 * past @count and return how many points it passed.
 */
static u64 perf_blocked_pass(struct hw_perf_event *hwc, u64 count)
{
	u64 period = hwc->sample_period, next = hwc->blocked_count_next, n;

	if (!period || count < next)
		return 0;
	n = div64_u64(count - next, period) + 1;
	hwc->blocked_count_next = next + n * period;
	return n;
}

/*
 * The event's samples stopped (its event_limit ran out, or it was
 * throttled while writing blocked samples): drop the on-CPU points its
 * count passed until now, as upstream drops the samples of a stopped
 * event, and go on from the next one.
 */
static void perf_blocked_skip(struct perf_event *event, u64 count)
{
	event->hw.blocked_stopped = 0;
	perf_blocked_pass(&event->hw, count);
}

/*
 * pmu::del(), with the event's count brought up to date.  Only a context
 * switch (perf core stamped the task's switch-out, perf_blocked_sched_out())
 * starts an interval; the event remembers the stamp of the switch-out it
 * saw.
 */
void perf_blocked_event_del(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 count = local64_read(&event->count);
	u64 out = current->blocked_out_ts;
	u64 due;

	/*
	 * Leaving before the switch-in wrote its samples (an IPI taken as
	 * the runqueue was unlocked): off the list, and write them now.
	 */
	if (!list_empty(&hwc->blocked_node))
		list_del_init(&hwc->blocked_node);
	if (hwc->blocked_pend | hwc->blocked_pend_sched | hwc->blocked_due)
		perf_blocked_emit(event);
	if (hwc->blocked_stopped)
		perf_blocked_skip(event, count);

	/*
	 * The count passed points its timer did not sample: their interrupt
	 * was held off until the switch-out (or the disable).  They are
	 * on-CPU time spent on the way to where the task is now; an event
	 * not bound to a CPU is added again at the task's next switch-in,
	 * where the task's stack is the same, so it emits them then, outside
	 * the runqueue lock.  An event bound to a CPU may not see the task
	 * again before it ran elsewhere: it emits them here.  A throttled
	 * event's timer was stopped on purpose: its points are dropped, as
	 * upstream drops them.
	 */
	due = perf_blocked_pass(hwc, count);
	if (due && hwc->interrupts != PERF_BLOCKED_THROTTLED) {
		hwc->blocked_due = due;
		if (event->cpu != -1 || !out)
			perf_blocked_emit(event);
	}

	/*
	 * The off-CPU interval starts where the count stopped, at the
	 * context's last time update, not at the task's stamp taken a little
	 * before: the time between is on-CPU time to the count.
	 */
	hwc->blocked_out = out;
	hwc->blocked_stop = event->ctx->timestamp;
}

/*
 * @task, which @event is about to count for, is coming back from an
 * off-CPU interval: if the event measured it, count its points into the
 * samples the event owes.  @now is when the event's count starts again
 * (the count's clock).  Returns whether the event owes samples.
 */
static bool perf_blocked_count(struct perf_event *event,
			       struct task_struct *task, u64 now)
{
	struct hw_perf_event *hwc = &event->hw;
	enum perf_blocked_class class = task->blocked_class;
	u64 out = task->blocked_out_ts;
	u64 seen = hwc->blocked_out;
	u64 period = hwc->sample_period;
	u64 wake, delta, first, n, n_blocked;

	hwc->blocked_out = 0;
	if (!out || class == PERF_BLOCKED_NONE || !period)
		goto out;

	/*
	 * Report the interval only if this event saw it whole: it was
	 * active at the switch-out, or, bound to a CPU the task was not on
	 * then, it was enabled before the switch-out (perf record's
	 * per-CPU events: the one of the CPU the task comes back on takes
	 * the interval over).  Disabling clears what the event saw, so an
	 * event that was off in between, or missed the switch-out because
	 * it was not scheduled (multiplexing, another CPU for a CPU-less
	 * event), reports nothing.
	 */
	if (seen != out &&
	    (event->cpu == -1 || !hwc->blocked_on || hwc->blocked_on > out))
		goto out;

	/*
	 * Off-CPU time has a sampling grid of its own: a point every period
	 * of the task's off-CPU time, hw.blocked_off_left from the
	 * switch-out to the next.  The interval is the time the count stood
	 * still: from the context's time update at the switch-out to the one
	 * at this switch-in (perf_clock(), the count's clock).  An event that
	 * takes over an interval another one saw has only the task's stamp.
	 * The clocks are read on different CPUs: clamp rather than trust the
	 * ordering.
	 */
	if (seen == out) {
		delta = now > hwc->blocked_stop ? now - hwc->blocked_stop : 0;
	} else {
		now = ktime_get_mono_fast_ns();
		delta = now > out ? now - out : 0;
	}
	first = clamp_t(u64, hwc->blocked_off_left, 1, period);

	n = perf_blocked_points(delta, first, period);
	hwc->blocked_off_left = first + n * period - delta;
	if (!n)
		goto out;

	if (class == PERF_BLOCKED_SCHED) {
		n_blocked = 0;
	} else {
		wake = task->blocked_wake_ts;
		if (wake)
			n_blocked = perf_blocked_points(wake > out ?
					min(wake - out, delta) : 0,
					first, period);
		else
			n_blocked = n;
	}

	hwc->blocked_pend = n_blocked;
	hwc->blocked_pend_sched = n - n_blocked;
	hwc->blocked_pend_class = class;

out:
	return hwc->blocked_pend | hwc->blocked_pend_sched | hwc->blocked_due;
}

/*
 * pmu::add(), before the hrtimer is started: if the task is coming back
 * from an off-CPU interval this event measured, count its points and queue
 * them to be written after the switch.
 */
void perf_blocked_event_add(struct perf_event *event)
{
	if (!perf_blocked_count(event, current, event->ctx->timestamp))
		return;
	/*
	 * At a switch-in (the task's switch-out stamp is still set) the
	 * runqueue is locked: write after it is unlocked.  Otherwise (an
	 * enable after a disable) only owed on-CPU points can be pending,
	 * and this is not the scheduler: write them now.
	 */
	if (current->blocked_out_ts)
		perf_blocked_queue(event);
	else
		perf_blocked_emit(event);
}

/* The next blocked event of @ctx's event list after @event (or its head). */
static struct perf_event *perf_blocked_next(struct perf_event_context *ctx,
					    struct perf_event *event)
{
	list_for_each_entry_continue(event, &ctx->event_list, event_entry)
		if (event->attr.blocked)
			return event;
	return NULL;
}

/* The event both clones were inherited from (or one of them is). */
static struct perf_event *perf_blocked_origin(struct perf_event *event)
{
	return event->parent ?: event;
}

/*
 * perf_event_context_sched_out() may swap @ctx, the context @prev runs
 * here, with @next_ctx, a clone of it that @next owns, instead of
 * scheduling both out and in: the events of @ctx go on counting, for
 * @next, and those of @next_ctx are @prev's from now on.  That skips
 * pmu::del() and pmu::add(), where a blocked event measures an off-CPU
 * interval.  What an event knows of the interval (the switch-out it saw,
 * where its count stopped, its off-CPU grid, on-CPU points owed) belongs
 * to the task, and so does the time since which it has been enabled for
 * the task: a clone is made enabled with its task, and the clones of one
 * event are enabled and disabled together.  Left with the event, a
 * per-CPU event of a context made for a thread started later would
 * refuse the interval of a task it is swapped to (perf_blocked_count()):
 * a thread that slept on one CPU and came back on another lost its whole
 * sleep.  So all of it changes sides with the task: each event of @next_ctx
 * takes what its match in @ctx held (for one running here, @prev's
 * switch-out, now), each event of @ctx what its match held, and one
 * running here counts @next's interval as pmu::add() would and queues the
 * samples for finish_task_switch().  Clones' events match by the event
 * they were inherited from, in list order; when they do not, return false
 * and the contexts are scheduled out and in as usual.  Both contexts are
 * locked and interrupts are off.
 */
bool __perf_blocked_ctx_swap(struct perf_event_context *ctx,
			     struct perf_event_context *next_ctx,
			     struct task_struct *prev, struct task_struct *next)
{
	struct perf_event *a, *b;
	struct hw_perf_event *ha, *hb;
	u64 now, out, stop;
	int cpu = smp_processor_id();
	bool here;

	if (ctx->nr_blocked != next_ctx->nr_blocked)
		return false;
	a = list_entry(&ctx->event_list, struct perf_event, event_entry);
	b = list_entry(&next_ctx->event_list, struct perf_event, event_entry);
	while ((a = perf_blocked_next(ctx, a))) {
		b = perf_blocked_next(next_ctx, b);
		if (!b || perf_blocked_origin(a) != perf_blocked_origin(b))
			return false;
	}

	now = local_clock();
	a = list_entry(&ctx->event_list, struct perf_event, event_entry);
	b = list_entry(&next_ctx->event_list, struct perf_event, event_entry);
	while ((a = perf_blocked_next(ctx, a))) {
		b = perf_blocked_next(next_ctx, b);
		ha = &a->hw;
		hb = &b->hw;
		here = a->state == PERF_EVENT_STATE_ACTIVE && a->oncpu == cpu;
		out = hb->blocked_out;
		stop = hb->blocked_stop;

		/* Running here: as pmu::del() at @prev's switch-out leaves it */
		hb->blocked_out = here ? prev->blocked_out_ts : ha->blocked_out;
		hb->blocked_stop = here ? now : ha->blocked_stop;
		ha->blocked_out = out;
		ha->blocked_stop = stop;

		swap(ha->blocked_off_left, hb->blocked_off_left);
		swap(ha->blocked_due, hb->blocked_due);
		swap(ha->blocked_on, hb->blocked_on);

		if (here && perf_blocked_count(a, next, now))
			perf_blocked_queue(a);
	}
	return true;
}

/*
 * The hrtimer's expiry @ns from now, but never closer than the task-clock
 * hrtimer's shortest period: a timer that fires a little early, or a
 * throttled event's first one, is not set for a few ns ahead.
 */
static ktime_t perf_blocked_expiry(u64 ns)
{
	return ktime_add_ns(ktime_get(), max(ns, PERF_BLOCKED_MIN_PERIOD));
}

/*
 * task-clock pmu::start() of a blocked event.  On the CPU, a point falls
 * due every period of the event's count, the task's on-CPU time, as for
 * any task-clock event; hw.blocked_count_next is the count of the next one
 * and the timer is set for when the count gets there.
 *
 * pmu::del() leaves the hrtimer queued at a switch-out to another task
 * (perf_blocked_keep_hrtimer()).  Cancelling and re-arming it at every
 * switch reprograms the CPU's clock event device twice, as the timer of a
 * 1 kHz event is usually the CPU's first; under TCG that made a task-clock
 * event cost more than tracing every switch.  If the task comes back on
 * the same CPU, the timer still holds an expiry at or before the point
 * (the count stood still while the task was away) and is left alone: when
 * it fires early, perf_blocked_hrtimer_due() sets it for the point.  A
 * timer that expires while its task is off the CPU fires once for nothing
 * (the event is inactive) in whatever task runs there.  It would wake an
 * idle CPU, so a switch to idle cancels it.  A timer left on another CPU
 * is cancelled first (waiting for its callback, which sees the event is
 * not its CPU's), so it always fires where the event runs.
 */
bool perf_blocked_start_hrtimer(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	struct hrtimer *timer = &hwc->hrtimer;
	u64 count = local64_read(&event->count);
	ktime_t at;

	if (hwc->blocked_stopped)
		perf_blocked_skip(event, count);

	/*
	 * Past the point only after a throttle: the points the count
	 * passed meanwhile go into the timer's first sample.
	 */
	at = perf_blocked_expiry(hwc->blocked_count_next > count ?
				 hwc->blocked_count_next - count : 0);

	if (hrtimer_active(timer)) {
		if (READ_ONCE(timer->base)->cpu_base->cpu != smp_processor_id())
			hrtimer_cancel(timer);
		else if (hrtimer_is_queued(timer) &&
			 hrtimer_get_expires(timer) <= at)
			return true;
	}
	hrtimer_start(timer, at, HRTIMER_MODE_ABS_PINNED_HARD);
	return true;
}

/*
 * The hrtimer callback of an active blocked event, its count just read.
 * Count the points the count passed into hw.last_period, the sample's
 * period, and set the timer for the next one; returns false, with the
 * callback's return value in @ret, if there is nothing to sample: the
 * timer fired early, kept from before an off-CPU interval (see
 * perf_blocked_start_hrtimer()).  The hrtimer and the count are read on
 * two clocks of one CPU; a point less than PERF_BLOCKED_EARLY_NS ahead is
 * taken as reached.
 */
bool perf_blocked_hrtimer_due(struct perf_event *event,
			      enum hrtimer_restart *ret)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 count = local64_read(&event->count);
	u64 next = hwc->blocked_count_next;

	if (count + PERF_BLOCKED_EARLY_NS < next) {
		hrtimer_set_expires(&hwc->hrtimer,
				    perf_blocked_expiry(next - count));
		*ret = HRTIMER_RESTART;
		return false;
	}

	hwc->last_period = hwc->sample_period *
			   perf_blocked_pass(hwc, max(count, next));
	hrtimer_set_expires(&hwc->hrtimer,
			    perf_blocked_expiry(hwc->blocked_count_next - count));
	return true;
}
