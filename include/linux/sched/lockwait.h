/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SCHED_LOCKWAIT_H
#define _LINUX_SCHED_LOCKWAIT_H

#include <linux/sched.h>

/*
 * Mark the current task as waiting for a lock (futex, mutex, rt_mutex,
 * rwsem, semaphore) around the schedule() of a lock slow path, so that a
 * blocked sample taken for this sleep is typed as a lock wait.
 *
 *	bool lw = lockwait_begin();
 *	schedule();
 *	lockwait_end(lw);
 *
 * The flag only needs to be right at the moment __schedule() switches the
 * task out.  Restoring the previous value keeps nested waits (an rt_mutex
 * taken for a PI futex) correct, and every exit path of the wait goes
 * through lockwait_end() because the pair brackets the schedule() call
 * itself, not the slow path.
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
