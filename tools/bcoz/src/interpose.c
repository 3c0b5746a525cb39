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
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#define DECL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)
#define RESOLVE(name) do { \
		if (!real_##name) \
			real_##name = dlsym(RTLD_NEXT, #name); \
	} while (0)
#define RESOLVEV(name, ver) do { \
		if (!real_##name) \
			real_##name = dlvsym(RTLD_NEXT, #name, ver); \
		if (!real_##name) \
			real_##name = dlsym(RTLD_NEXT, #name); \
	} while (0)
/* if a symbol cannot be found, fail loudly instead of looping forever */
#define NEED(name) do { \
		if (!real_##name) \
			missing(#name); \
	} while (0)

static void missing(const char *name)
{
	bcoz_msg("fatal: cannot find the real %s (dlsym: %s)\n", name, dlerror());
	_exit(127);
}

DECL(int, pthread_create, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
DECL(void, pthread_exit, void *);
DECL(int, pthread_join, pthread_t, void **);
DECL(int, pthread_timedjoin_np, pthread_t, void **, const struct timespec *);
DECL(int, pthread_clockjoin_np, pthread_t, void **, clockid_t, const struct timespec *);
DECL(int, pthread_mutex_lock, pthread_mutex_t *);
DECL(int, pthread_mutex_timedlock, pthread_mutex_t *, const struct timespec *);
DECL(int, pthread_mutex_unlock, pthread_mutex_t *);
DECL(int, pthread_cond_wait, pthread_cond_t *, pthread_mutex_t *);
DECL(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
DECL(int, pthread_cond_clockwait, pthread_cond_t *, pthread_mutex_t *, clockid_t,
     const struct timespec *);
DECL(int, pthread_cond_signal, pthread_cond_t *);
DECL(int, pthread_cond_broadcast, pthread_cond_t *);
DECL(int, pthread_barrier_wait, pthread_barrier_t *);
DECL(int, pthread_rwlock_rdlock, pthread_rwlock_t *);
DECL(int, pthread_rwlock_wrlock, pthread_rwlock_t *);
DECL(int, pthread_rwlock_timedrdlock, pthread_rwlock_t *, const struct timespec *);
DECL(int, pthread_rwlock_timedwrlock, pthread_rwlock_t *, const struct timespec *);
DECL(int, pthread_rwlock_unlock, pthread_rwlock_t *);
DECL(int, pthread_spin_lock, pthread_spinlock_t *);
DECL(int, pthread_spin_unlock, pthread_spinlock_t *);
DECL(int, sem_wait, sem_t *);
DECL(int, sem_timedwait, sem_t *, const struct timespec *);
DECL(int, sem_clockwait, sem_t *, clockid_t, const struct timespec *);
DECL(int, sem_post, sem_t *);
DECL(int, pthread_kill, pthread_t, int);
DECL(int, kill, pid_t, int);
DECL(int, sigaction, int, const struct sigaction *, struct sigaction *);
DECL(sighandler_t, signal, int, sighandler_t);
DECL(int, sigprocmask, int, const sigset_t *, sigset_t *);
DECL(int, pthread_sigmask, int, const sigset_t *, sigset_t *);
DECL(pid_t, fork, void);
DECL(int, execve, const char *, char *const[], char *const[]);
DECL(int, execv, const char *, char *const[]);
DECL(int, execvp, const char *, char *const[]);
DECL(int, execvpe, const char *, char *const[], char *const[]);
DECL(void, _exit, int);
DECL(void, _Exit, int);
DECL(void *, dlopen, const char *, int);
DECL(ssize_t, read, int, void *, size_t);
DECL(ssize_t, write, int, const void *, size_t);
DECL(ssize_t, pread, int, void *, size_t, off_t);
DECL(ssize_t, pwrite, int, const void *, size_t, off_t);
DECL(ssize_t, pread64, int, void *, size_t, off_t);
DECL(ssize_t, pwrite64, int, const void *, size_t, off_t);
DECL(ssize_t, readv, int, const struct iovec *, int);
DECL(ssize_t, writev, int, const struct iovec *, int);
DECL(int, fsync, int);
DECL(int, fdatasync, int);
DECL(int, nanosleep, const struct timespec *, struct timespec *);
DECL(int, clock_nanosleep, clockid_t, int, const struct timespec *, struct timespec *);
DECL(int, usleep, useconds_t);
DECL(unsigned int, sleep, unsigned int);
DECL(int, poll, struct pollfd *, nfds_t, int);
DECL(int, select, int, fd_set *, fd_set *, fd_set *, struct timeval *);
DECL(int, epoll_wait, int, struct epoll_event *, int, int);

void interpose_resolve(void)
{
	RESOLVE(pthread_create);
	RESOLVE(pthread_exit);
	RESOLVE(pthread_join);
	RESOLVE(pthread_timedjoin_np);
	RESOLVE(pthread_clockjoin_np);
	RESOLVE(pthread_mutex_lock);
	RESOLVE(pthread_mutex_timedlock);
	RESOLVE(pthread_mutex_unlock);
	RESOLVEV(pthread_cond_wait, "GLIBC_2.3.2");
	RESOLVEV(pthread_cond_timedwait, "GLIBC_2.3.2");
	RESOLVE(pthread_cond_clockwait);
	RESOLVEV(pthread_cond_signal, "GLIBC_2.3.2");
	RESOLVEV(pthread_cond_broadcast, "GLIBC_2.3.2");
	RESOLVE(pthread_barrier_wait);
	RESOLVE(pthread_rwlock_rdlock);
	RESOLVE(pthread_rwlock_wrlock);
	RESOLVE(pthread_rwlock_timedrdlock);
	RESOLVE(pthread_rwlock_timedwrlock);
	RESOLVE(pthread_rwlock_unlock);
	RESOLVE(pthread_spin_lock);
	RESOLVE(pthread_spin_unlock);
	RESOLVE(sem_wait);
	RESOLVE(sem_timedwait);
	RESOLVE(sem_clockwait);
	RESOLVE(sem_post);
	RESOLVE(pthread_kill);
	RESOLVE(kill);
	RESOLVE(sigaction);
	RESOLVE(signal);
	RESOLVE(sigprocmask);
	RESOLVE(pthread_sigmask);
	RESOLVE(fork);
	RESOLVE(execve);
	RESOLVE(execv);
	RESOLVE(execvp);
	RESOLVE(execvpe);
	RESOLVE(_exit);
	RESOLVE(_Exit);
	RESOLVE(dlopen);
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(pread);
	RESOLVE(pwrite);
	RESOLVE(pread64);
	RESOLVE(pwrite64);
	RESOLVE(readv);
	RESOLVE(writev);
	RESOLVE(fsync);
	RESOLVE(fdatasync);
	RESOLVE(nanosleep);
	RESOLVE(clock_nanosleep);
	RESOLVE(usleep);
	RESOLVE(sleep);
	RESOLVE(poll);
	RESOLVE(select);
	RESOLVE(epoll_wait);
}

#define REAL(name) ({ RESOLVE(name); NEED(name); real_##name; })
#define REALV(name, ver) ({ RESOLVEV(name, ver); NEED(name); real_##name; })

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
	bcoz_catch_up();
	return REAL(pthread_mutex_unlock)(m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	bcoz_pre_block();
	r = REALV(pthread_cond_wait, "GLIBC_2.3.2")(c, m);
	bcoz_post_block(1);
	return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	int r;

	bcoz_pre_block();
	r = REALV(pthread_cond_timedwait, "GLIBC_2.3.2")(c, m, ts);
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
	bcoz_catch_up();
	return REALV(pthread_cond_signal, "GLIBC_2.3.2")(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	bcoz_catch_up();
	return REALV(pthread_cond_broadcast, "GLIBC_2.3.2")(c);
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	bcoz_catch_up();
	bcoz_pre_block();
	r = REAL(pthread_barrier_wait)(b);
	bcoz_post_block(1);
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
	bcoz_catch_up();
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
	bcoz_catch_up();
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
	bcoz_catch_up();
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

	if (p == 0 && bcoz_active)
		bcoz_after_fork_child();
	return p;
}

/*
 * 1 when this exec ends the profiled process.  In a vfork child it does
 * not: the parent goes on being profiled, and the child must not touch the
 * memory it shares with the parent (bcoz_shutdown() checks that too).
 */
static int before_exec(void)
{
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
	int r, was = before_exec();

	r = REAL(execve)(path, argv, envp);
	if (was)
		exec_failed();
	return r;
}

int execv(const char *path, char *const argv[])
{
	int r, was = before_exec();

	r = REAL(execv)(path, argv);
	if (was)
		exec_failed();
	return r;
}

int execvp(const char *file, char *const argv[])
{
	int r, was = before_exec();

	r = REAL(execvp)(file, argv);
	if (was)
		exec_failed();
	return r;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int r, was = before_exec();

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
