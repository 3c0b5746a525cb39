/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SCHED_LOCKWAIT_H
#define _LINUX_SCHED_LOCKWAIT_H

#include <linux/sched.h>

/*
 * Blocked samples type a sleep as a lock wait when the task went to sleep
 * to acquire a lock.  The sleeping locks of kernel/locking/ (mutex, rwsem,
 * rt_mutex and rtlock, semaphore, percpu-rwsem, rwbase) are seen through
 * their lock:contention_begin/contention_end tracepoints, see
 * kernel/events/blocked.c.  The waits below have no such tracepoint and
 * mark the current task around the schedule() of their slow path instead:
 * futexes, the proxy rt_mutex wait of PI futexes, bit locks
 * (wait_on_bit_lock()) and socket locks (lock_sock()).
 *
 *	bool lw = lockwait_begin();
 *	schedule();
 *	lockwait_end(lw);
 *
 * The flag only needs to be right at the moment __schedule() switches the
 * task out.  Restoring the previous value keeps nested waits correct, and
 * every exit path of the wait goes through lockwait_end() because the pair
 * brackets the sleep itself, not the slow path.
 */
#ifdef CONFIG_PERF_BLOCKED_SAMPLES
static __always_inline bool lockwait_begin(void)
{
	bool old = current->in_lockwait;

	current->in_lockwait = 1;
	return old;
}

static __always_inline void lockwait_end(bool old)
{
	current->in_lockwait = old;
}
#else
static __always_inline bool lockwait_begin(void)
{
	return false;
}

static __always_inline void lockwait_end(bool old) { }
#endif

#endif /* _LINUX_SCHED_LOCKWAIT_H */
