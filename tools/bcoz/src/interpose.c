// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz interposition.  Rules (COZ's, plus the blocked-samples ordering):
 *   pre-block   before a call that may wait for another thread: remember the
 *               global delay;
 *   post-block  after it: if another thread woke us ("skip"), credit the delay
 *               added meanwhile (the waker paid it); then drain our samples, so
 *               blocked samples of the wait are accounted at once;
 *   catch-up    before a call that may wake another thread: drain samples and
 *               pay owed delays first, so the woken thread inherits a correct
 *               global delay (paper section 3.3, Figure 8).
 * Blocking system calls that are not synchronisation (I/O, sleeps) get a
 * post-block without credit: delays added while we waited on the outside world
 * are owed.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

/*
 * The libc functions bcoz wraps, in one list:
 *   X(return type, name, (parameter types), symbol version or NULL)
 * It declares real_NAME, the next definition of NAME (libc's), and
 * interpose_resolve() looks them all up.  A versioned lookup falls back to
 * the default version.  pthread_mutex_trylock is listed but not wrapped:
 * pthread_mutex_lock's fast path calls the real one.
 */
#define BCOZ_WRAPPED(X) \
	X(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *), NULL) \
	X(void, pthread_exit, (void *), NULL) \
	X(int, pthread_join, (pthread_t, void **), NULL) \
	X(int, pthread_timedjoin_np, (pthread_t, void **, const struct timespec *), NULL) \
	X(int, pthread_clockjoin_np, (pthread_t, void **, clockid_t, const struct timespec *), NULL) \
	X(int, pthread_mutex_lock, (pthread_mutex_t *), NULL) \
	X(int, pthread_mutex_trylock, (pthread_mutex_t *), NULL) \
	X(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *), NULL) \
	X(int, pthread_mutex_unlock, (pthread_mutex_t *), NULL) \
	X(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *), "GLIBC_2.3.2") \
	X(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *), "GLIBC_2.3.2") \
	X(int, pthread_cond_clockwait, (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *), NULL) \
	X(int, pthread_cond_signal, (pthread_cond_t *), "GLIBC_2.3.2") \
	X(int, pthread_cond_broadcast, (pthread_cond_t *), "GLIBC_2.3.2") \
	X(int, pthread_barrier_wait, (pthread_barrier_t *), NULL) \
	X(int, pthread_rwlock_rdlock, (pthread_rwlock_t *), NULL) \
	X(int, pthread_rwlock_wrlock, (pthread_rwlock_t *), NULL) \
	X(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t *, const struct timespec *), NULL) \
	X(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t *, const struct timespec *), NULL) \
	X(int, pthread_rwlock_unlock, (pthread_rwlock_t *), NULL) \
	X(int, pthread_spin_lock, (pthread_spinlock_t *), NULL) \
	X(int, pthread_spin_unlock, (pthread_spinlock_t *), NULL) \
	X(int, sem_wait, (sem_t *), NULL) \
	X(int, sem_timedwait, (sem_t *, const struct timespec *), NULL) \
	X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *), NULL) \
	X(int, sem_post, (sem_t *), NULL) \
	X(int, pthread_kill, (pthread_t, int), NULL) \
	X(int, kill, (pid_t, int), NULL) \
	X(int, sigaction, (int, const struct sigaction *, struct sigaction *), NULL) \
	X(sighandler_t, signal, (int, sighandler_t), NULL) \
	X(int, sigprocmask, (int, const sigset_t *, sigset_t *), NULL) \
	X(int, pthread_sigmask, (int, const sigset_t *, sigset_t *), NULL) \
	X(pid_t, fork, (void), NULL) \
	X(int, execve, (const char *, char *const[], char *const[]), NULL) \
	X(int, execv, (const char *, char *const[]), NULL) \
	X(int, execvp, (const char *, char *const[]), NULL) \
	X(int, execvpe, (const char *, char *const[], char *const[]), NULL) \
	X(void, _exit, (int), NULL) \
	X(void, _Exit, (int), NULL) \
	X(void *, dlopen, (const char *, int), NULL) \
	X(ssize_t, read, (int, void *, size_t), NULL) \
	X(ssize_t, write, (int, const void *, size_t), NULL) \
	X(ssize_t, pread, (int, void *, size_t, off_t), NULL) \
	X(ssize_t, pwrite, (int, const void *, size_t, off_t), NULL) \
	X(ssize_t, pread64, (int, void *, size_t, off_t), NULL) \
	X(ssize_t, pwrite64, (int, const void *, size_t, off_t), NULL) \
	X(ssize_t, readv, (int, const struct iovec *, int), NULL) \
	X(ssize_t, writev, (int, const struct iovec *, int), NULL) \
	X(int, fsync, (int), NULL) \
	X(int, fdatasync, (int), NULL) \
	X(int, nanosleep, (const struct timespec *, struct timespec *), NULL) \
	X(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *), NULL) \
	X(int, usleep, (useconds_t), NULL) \
	X(unsigned int, sleep, (unsigned int), NULL) \
	X(int, poll, (struct pollfd *, nfds_t, int), NULL) \
	X(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *), NULL) \
	X(int, epoll_wait, (int, struct epoll_event *, int, int), NULL)

#define DECLARE_REAL(ret, name, params, ver) \
	static ret (*real_##name) params; \
	static const char *const ver_##name = ver;
BCOZ_WRAPPED(DECLARE_REAL)

static void *lookup(const char *name, const char *ver)
{
	void *p = ver ? dlvsym(RTLD_NEXT, name, ver) : NULL;

	return p ? p : dlsym(RTLD_NEXT, name);
}

/* if a symbol cannot be found, fail loudly instead of looping forever */
static void missing(const char *name)
{
	bcoz_msg("fatal: cannot find the real %s (dlsym: %s)\n", name, dlerror());
	syscall(SYS_exit_group, 127);
}

#define RESOLVE_REAL(ret, name, params, ver) \
	if (!real_##name) \
		real_##name = (ret (*) params)lookup(#name, ver_##name);

void interpose_resolve(void)
{
	BCOZ_WRAPPED(RESOLVE_REAL)
}

#define REAL(name) ({ \
		if (!real_##name) \
			real_##name = (__typeof__(real_##name))lookup(#name, ver_##name); \
		if (!real_##name) \
			missing(#name); \
		real_##name; \
	})

int bcoz_real_create(unsigned long *thr, void *(*fn)(void *), void *arg)
{
	return REAL(pthread_create)((pthread_t *)thr, NULL, fn, arg);
}

int bcoz_real_join(unsigned long thr)
{
	return REAL(pthread_join)((pthread_t)thr, NULL);
}

int bcoz_real_sigaction(int sig, const void *act, void *old)
{
	return REAL(sigaction)(sig, act, old);
}

/* the runtime's own locks, sleeps and signals must not run its wrappers */
int bcoz_real_mutex_lock(pthread_mutex_t *m)
{
	return REAL(pthread_mutex_lock)(m);
}

int bcoz_real_mutex_unlock(pthread_mutex_t *m)
{
	return REAL(pthread_mutex_unlock)(m);
}

int bcoz_real_nanosleep(const struct timespec *req, struct timespec *rem)
{
	return REAL(nanosleep)(req, rem);
}

int bcoz_real_kill(pid_t pid, int sig)
{
	return REAL(kill)(pid, sig);
}

void bcoz_real_exit(int code)
{
	REAL(_exit)(code);
	__builtin_unreachable();
}

/*
 * Everything from here on is a wrapper of a libc function: exported, so
 * it takes the place of libc's in the program.
 */
#pragma GCC visibility push(default)

/* ---------- threads ---------- */

struct start {
	void *(*fn)(void *);
	void *arg;
	uint64_t inherit;
};

static void thread_finish(void *unused)
{
	struct bcoz_thread *t = bcoz_self();

	(void)unused;
	if (!t)
		return;
	bcoz_thread_end(t);
	free(t);
	/* the last application thread: finish the profile now (the profiler thread
	 * would otherwise keep the process alive after main's pthread_exit) */
	if (atomic_fetch_sub(&bcoz_live_threads, 1) == 1)
		bcoz_shutdown();
}

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;
	struct bcoz_thread *t = calloc(1, sizeof(*t));
	void *ret;

	free(p);
	if (t)
		bcoz_thread_begin(t, s.inherit);
	pthread_cleanup_push(thread_finish, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

int pthread_create(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct start *s;
	int r;

	if (!bcoz_active || !bcoz_self())
		return REAL(pthread_create)(thr, attr, fn, arg);
	s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	/*
	 * Settle first: the delay earned since the last drain (a serial part
	 * before a fork, sped up) must be published before the new thread
	 * copies our counter, or the thread owes it and pays it in parallel
	 * with us, and a sped-up serial part reads 0 (forkjoin's merge loop:
	 * 0.0 predicted, +12.2 actual).
	 */
	bcoz_catch_up();
	s->inherit = bcoz_current_local();
	atomic_fetch_add(&bcoz_live_threads, 1);
	r = REAL(pthread_create)(thr, attr, trampoline, s);
	if (r) {
		atomic_fetch_sub(&bcoz_live_threads, 1);
		free(s);
	}
	return r;
}

void pthread_exit(void *ret)
{
	/* worker threads finish in the trampoline's cleanup handler; this covers
	 * the main thread */
	thread_finish(NULL);
	REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

int pthread_join(pthread_t t, void **ret)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_join)(t, ret);
	bcoz_post_block(1);
	return r;
}

int pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_timedjoin_np)(t, ret, ts);
	bcoz_post_block(r == 0);
	return r;
}

int pthread_clockjoin_np(pthread_t t, void **ret, clockid_t c, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_clockjoin_np)(t, ret, c, ts);
	bcoz_post_block(r == 0);
	return r;
}

/* ---------- mutex / condvar / barrier / rwlock / spin / sem ---------- */

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r;

	/*
	 * A free mutex is taken without waiting: nothing to settle, as for a
	 * call that never blocks.  Delays owed are paid first (catch-up costs
	 * a few loads when nothing is owed): paid later, at the unlock, they
	 * would hold the lock through the pause.  EBUSY (held, or an
	 * error-checking mutex we own) takes the full path, whose real lock
	 * returns the right error.
	 */
	bcoz_catch_up();
	r = REAL(pthread_mutex_trylock)(m);
	if (r != EBUSY)
		return r;
	bcoz_pre_block();
	r = REAL(pthread_mutex_lock)(m);
	bcoz_post_block(1);
	return r;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_mutex_timedlock)(m, ts);
	bcoz_post_block(r == 0);
	return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	bcoz_release();
	return REAL(pthread_mutex_unlock)(m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_cond_wait)(c, m);
	bcoz_post_block(1);
	return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_cond_timedwait)(c, m, ts);
	bcoz_post_block(r != ETIMEDOUT);
	return r;
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t ck,
			   const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_cond_clockwait)(c, m, ck, ts);
	bcoz_post_block(r != ETIMEDOUT);
	return r;
}

int pthread_cond_signal(pthread_cond_t *c)
{
	bcoz_release();
	return REAL(pthread_cond_signal)(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	bcoz_release();
	return REAL(pthread_cond_broadcast)(c);
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	bcoz_catch_up();
	bcoz_pre_block();
	r = REAL(pthread_barrier_wait)(b);
	bcoz_post_block(1);
	bcoz_barrier_passed(r == PTHREAD_BARRIER_SERIAL_THREAD);
	return r;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_rwlock_rdlock)(l);
	bcoz_post_block(1);
	return r;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_rwlock_wrlock)(l);
	bcoz_post_block(1);
	return r;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_rwlock_timedrdlock)(l, ts);
	bcoz_post_block(r == 0);
	return r;
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_rwlock_timedwrlock)(l, ts);
	bcoz_post_block(r == 0);
	return r;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	bcoz_release();
	return REAL(pthread_rwlock_unlock)(l);
}

int pthread_spin_lock(pthread_spinlock_t *l)
{
	int r;

	bcoz_pre_block();
	r = REAL(pthread_spin_lock)(l);
	bcoz_post_block(1);
	return r;
}

int pthread_spin_unlock(pthread_spinlock_t *l)
{
	bcoz_release();
	return REAL(pthread_spin_unlock)(l);
}

int sem_wait(sem_t *s)
{
	int r;

	bcoz_pre_block();
	r = REAL(sem_wait)(s);
	bcoz_post_block(r == 0);
	return r;
}

int sem_timedwait(sem_t *s, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(sem_timedwait)(s, ts);
	bcoz_post_block(r == 0);
	return r;
}

int sem_clockwait(sem_t *s, clockid_t c, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REAL(sem_clockwait)(s, c, ts);
	bcoz_post_block(r == 0);
	return r;
}

int sem_post(sem_t *s)
{
	bcoz_release();
	return REAL(sem_post)(s);
}

/* ---------- signals ---------- */

static int refused_once;

static void refuse_sigprof(void)
{
	if (!refused_once++)
		bcoz_msg("warning: the program installs a SIGPROF handler; bcoz needs SIGPROF "
			 "and ignores it while profiling\n");
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy;

	if (bcoz_active && sig == SIGPROF) {
		if (act)
			refuse_sigprof();
		if (old)
			memset(old, 0, sizeof(*old));
		return 0;
	}
	if (bcoz_active && act && sigismember(&act->sa_mask, SIGPROF)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGPROF);
		act = &copy;
	}
	if (sig > 0 && sig < NSIG && bcoz_stand_in[sig]) {
		/* bcoz's fatal-signal handler is the program's SIG_DFL */
		if (act && act->sa_handler != SIG_DFL) {
			int r = REAL(sigaction)(sig, act, NULL);

			if (r)
				return r;
			bcoz_stand_in[sig] = 0;
		}
		if (old) {
			memset(old, 0, sizeof(*old));
			old->sa_handler = SIG_DFL;
		}
		return 0;
	}
	return REAL(sigaction)(sig, act, old);
}

/*
 * libc's own signal(): whether it restarts system calls depends on
 * siginterrupt(), whose set is private to libc.  Its mask holds only @sig,
 * so it never blocks SIGPROF.
 */
sighandler_t signal(int sig, sighandler_t h)
{
	if (bcoz_active && sig == SIGPROF) {
		refuse_sigprof();
		return SIG_DFL;
	}
	if (sig > 0 && sig < NSIG && bcoz_stand_in[sig]) {
		if (h != SIG_DFL) {
			if (REAL(signal)(sig, h) == SIG_ERR)
				return SIG_ERR;
			bcoz_stand_in[sig] = 0;
		}
		return SIG_DFL;
	}
	return REAL(signal)(sig, h);
}

static const sigset_t *strip_set(int how, const sigset_t *set, sigset_t *copy)
{
	if (!bcoz_active || !set || how == SIG_UNBLOCK || !sigismember(set, SIGPROF))
		return set;
	*copy = *set;
	sigdelset(copy, SIGPROF);
	return copy;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return REAL(sigprocmask)(how, strip_set(how, set, &copy), old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return REAL(pthread_sigmask)(how, strip_set(how, set, &copy), old);
}

int pthread_kill(pthread_t t, int sig)
{
	bcoz_catch_up();
	return REAL(pthread_kill)(t, sig);
}

int kill(pid_t pid, int sig)
{
	bcoz_catch_up();
	return REAL(kill)(pid, sig);
}

/* ---------- processes ---------- */

pid_t fork(void)
{
	pid_t p = REAL(fork)();

	if (p == 0 && (bcoz_active || bcoz_forked()))
		bcoz_after_fork_child();
	return p;
}

/*
 * --follow-exec into a statically linked program: it never loads us, and
 * the rest of the run would go unprofiled without a word.  FILE is looked
 * up in PATH as execvp() does when SEARCH.
 */
static void warn_static_exec(const char *file, int search)
{
	char buf[PATH_MAX];
	const char *path = file, *p = getenv("PATH");

	if (search && !strchr(file, '/')) {
		path = NULL;
		for (p = p ? p : "/bin:/usr/bin"; *p && !path; p += *p == ':') {
			size_t n = strcspn(p, ":");

			if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1),
				     n ? p : ".", file) < (int)sizeof(buf) &&
			    !access(buf, X_OK))
				path = buf;
			p += n;
		}
		if (!path)
			return;
	}
	if (linemap_static_program(path))
		bcoz_msg("warning: --follow-exec: %s is statically linked, so it never loads "
			 "bcoz's runtime (LD_PRELOAD) and is not profiled; a dynamically "
			 "linked program it execs would be\n", path);
}

/*
 * 1 when this exec ends the profiled process.  In a vfork child it does
 * not: the parent goes on being profiled, and the child must not touch the
 * memory it shares with the parent (bcoz_shutdown() checks that too).
 */
static int before_exec(const char *file, int search)
{
	if (bcoz_exec_followed())
		warn_static_exec(file, search);
	if (!bcoz_active || bcoz_in_other_process())
		return 0;
	/* exec does not return to us: write the profile now */
	bcoz_shutdown();
	return 1;
}

static void exec_failed(void)
{
	bcoz_msg("warning: exec failed after bcoz finished its profile; the rest of this "
		 "run is not profiled\n");
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	int r, was = before_exec(path, 0);

	r = REAL(execve)(path, argv, envp);
	if (was)
		exec_failed();
	return r;
}

int execv(const char *path, char *const argv[])
{
	int r, was = before_exec(path, 0);

	r = REAL(execv)(path, argv);
	if (was)
		exec_failed();
	return r;
}

int execvp(const char *file, char *const argv[])
{
	int r, was = before_exec(file, 1);

	r = REAL(execvp)(file, argv);
	if (was)
		exec_failed();
	return r;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int r, was = before_exec(file, 1);

	r = REAL(execvpe)(file, argv, envp);
	if (was)
		exec_failed();
	return r;
}

void _exit(int code)
{
	bcoz_shutdown();
	REAL(_exit)(code);
	__builtin_unreachable();
}

void _Exit(int code)
{
	bcoz_shutdown();
	REAL(_Exit)(code);
	__builtin_unreachable();
}

void *dlopen(const char *file, int flags)
{
	void *h = REAL(dlopen)(file, flags);

	if (h && bcoz_active)
		linemap_rescan();
	return h;
}

/* ---------- blocking system calls: post-block without credit ---------- */

#define AFTER_BLOCK() bcoz_post_block(0)

ssize_t read(int fd, void *b, size_t n)
{
	ssize_t r = REAL(read)(fd, b, n);

	AFTER_BLOCK();
	return r;
}

ssize_t write(int fd, const void *b, size_t n)
{
	ssize_t r = REAL(write)(fd, b, n);

	AFTER_BLOCK();
	return r;
}

ssize_t pread(int fd, void *b, size_t n, off_t o)
{
	ssize_t r = REAL(pread)(fd, b, n, o);

	AFTER_BLOCK();
	return r;
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t o)
{
	ssize_t r = REAL(pwrite)(fd, b, n, o);

	AFTER_BLOCK();
	return r;
}

ssize_t pread64(int fd, void *b, size_t n, off_t o)
{
	ssize_t r = REAL(pread64)(fd, b, n, o);

	AFTER_BLOCK();
	return r;
}

ssize_t pwrite64(int fd, const void *b, size_t n, off_t o)
{
	ssize_t r = REAL(pwrite64)(fd, b, n, o);

	AFTER_BLOCK();
	return r;
}

ssize_t readv(int fd, const struct iovec *v, int n)
{
	ssize_t r = REAL(readv)(fd, v, n);

	AFTER_BLOCK();
	return r;
}

ssize_t writev(int fd, const struct iovec *v, int n)
{
	ssize_t r = REAL(writev)(fd, v, n);

	AFTER_BLOCK();
	return r;
}

int fsync(int fd)
{
	int r = REAL(fsync)(fd);

	AFTER_BLOCK();
	return r;
}

int fdatasync(int fd)
{
	int r = REAL(fdatasync)(fd);

	AFTER_BLOCK();
	return r;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int r = REAL(nanosleep)(req, rem);

	AFTER_BLOCK();
	return r;
}

int clock_nanosleep(clockid_t c, int f, const struct timespec *req, struct timespec *rem)
{
	int r = REAL(clock_nanosleep)(c, f, req, rem);

	AFTER_BLOCK();
	return r;
}

int usleep(useconds_t us)
{
	int r = REAL(usleep)(us);

	AFTER_BLOCK();
	return r;
}

unsigned int sleep(unsigned int s)
{
	unsigned int r = REAL(sleep)(s);

	AFTER_BLOCK();
	return r;
}

int poll(struct pollfd *p, nfds_t n, int to)
{
	int r = REAL(poll)(p, n, to);

	AFTER_BLOCK();
	return r;
}

int select(int n, fd_set *r_, fd_set *w, fd_set *e, struct timeval *to)
{
	int r = REAL(select)(n, r_, w, e, to);

	AFTER_BLOCK();
	return r;
}

int epoll_wait(int fd, struct epoll_event *ev, int n, int to)
{
	int r = REAL(epoll_wait)(fd, ev, n, to);

	AFTER_BLOCK();
	return r;
}

/* the execl family calls execve inside libc, out of our reach: rebuild argv */
#define COLLECT_ARGS(arg0, ap, argv, extra) do { \
		size_t _n = 1; \
		va_list _c; \
		va_copy(_c, ap); \
		while (va_arg(_c, char *)) \
			_n++; \
		va_end(_c); \
		argv = alloca((_n + 1) * sizeof(char *)); \
		argv[0] = (char *)arg0; \
		for (size_t _i = 1; _i <= _n; _i++) \
			argv[_i] = va_arg(ap, char *); \
		extra; \
	} while (0)

int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, (void)0);
	va_end(ap);
	return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, (void)0);
	va_end(ap);
	return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	va_end(ap);
	return execve(path, argv, envp);
}

#pragma GCC visibility pop
