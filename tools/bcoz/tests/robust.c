// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz test program for robustness on programs bcoz was not written for.
 *
 *   robust vfork          a worker makes progress until SIGTERM; main vforks
 *                         a child that execs /bin/true (or _exits when the exec
 *                         fails) and waits for it
 *   robust sigintr        siginterrupt(SIGALRM, 1) + signal() + alarm(1): a
 *                         blocking read() of an empty pipe must fail with EINTR
 *   robust stack N MS     N threads with 16 KiB stacks that each use 8 KiB of
 *                         it and spin MS ms of CPU time below that frame
 *   robust fds N          N threads that each open /dev/null and hold it
 *                         until all have tried; prints the failures
 *   robust spawn PATH     fork + exec PATH, wait; prints the child's status
 *   robust crash HOW MS   progress for MS ms, then HOW: abort, segv, or
 *                         wait for SIGTERM (term)
 *   robust stderr MS PATH progress for MS ms, then close stderr and open
 *                         PATH, which becomes fd 2, and write one line to it
 *   robust phases A B [S] a start-up phase of A ms of CPU in its own loop,
 *                         then B ms of progress in work(), then a sleep of
 *                         S ms
 *   robust write MS       write() one byte to /dev/null for MS ms: the
 *                         time is libc's and the kernel's
 * Each prints one line "robust: MODE ..." with what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coz.h"
#include "testprog.h"

static volatile unsigned long sink;

static void __attribute__((noinline)) work(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* WORK */
	sink = acc;
}

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- vfork ---- */

static void *progress_worker(void *arg)
{
	(void)arg;
	while (!stop_requested) {
		work(200000);
		COZ_PROGRESS;
	}
	return NULL;
}

static int do_vfork(void)
{
	pthread_t t;
	pid_t p;
	int st = -1;

	catch_stop_signals();
	pthread_create(&t, NULL, progress_worker, NULL);
	work(1000000);
	p = vfork();
	if (p == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, &st, 0);
	pthread_join(t, NULL);
	printf("robust: vfork child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* ---- signal() + siginterrupt() ---- */

static void on_alarm(int sig)
{
	(void)sig;
}

static int do_sigintr(void)
{
	int fds[2];
	char c;
	ssize_t r;

	if (pipe(fds))
		return 1;
	/* deprecated, but what such programs do: the test is about them */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	siginterrupt(SIGALRM, 1);
#pragma GCC diagnostic pop
	signal(SIGALRM, on_alarm);
	alarm(1);
	r = read(fds[0], &c, 1);
	printf("robust: sigintr read %zd errno %s\n", r, r < 0 ? strerror(errno) : "-");
	return !(r < 0 && errno == EINTR);
}

/* ---- small stacks ---- */

static double spin_ms;

static void __attribute__((noinline)) spin_below(void)
{
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);

	while ((now_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e3 < spin_ms)
		work(10000);
}

static void *small_stack_thread(void *arg)
{
	volatile char used[8192];

	(void)arg;
	memset((char *)used, 1, sizeof(used));
	spin_below();
	return (void *)(long)used[100];
}

static int do_stack(int n, double ms)
{
	pthread_attr_t a;
	pthread_t t[64];
	int made = 0;

	spin_ms = ms;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, 16384))
		return 2;
	for (int i = 0; i < n && i < 64; i++) {
		int r = pthread_create(&t[made], &a, small_stack_thread, NULL);

		if (r) {
			printf("robust: stack pthread_create: %s\n", strerror(r));
			return 2;
		}
		made++;
	}
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("robust: stack %d threads survived\n", made);
	return 0;
}

/* ---- fds per thread ---- */

static pthread_barrier_t all_tried;
static int open_failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void *fd_thread(void *arg)
{
	int fd = open("/dev/null", O_RDONLY);

	(void)arg;
	if (fd < 0) {
		pthread_mutex_lock(&fail_lock);
		open_failures++;
		pthread_mutex_unlock(&fail_lock);
	}
	work(100000);
	pthread_barrier_wait(&all_tried);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int do_fds(int n)
{
	pthread_t *t = calloc(n, sizeof(*t));
	int made = 0;

	pthread_barrier_init(&all_tried, NULL, n);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, fd_thread, NULL)) {
			printf("robust: fds pthread_create failed at %d\n", i);
			return 2;
		}
		made++;
	}
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("robust: fds %d threads, %d open() failures\n", made, open_failures);
	return 0;
}

/* ---- exec of another program ---- */

static int do_spawn(const char *path)
{
	pid_t p = fork();
	int st = -1;

	if (p == 0) {
		execl(path, path, (char *)NULL);
		_exit(126);
	}
	waitpid(p, &st, 0);
	printf("robust: spawn %s status %d\n", path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* ---- fatal signals ---- */

static volatile int *volatile bad_ptr;	/* NULL */

static int do_crash(const char *how, double ms)
{
	double t0 = now_s(CLOCK_MONOTONIC);

	while ((now_s(CLOCK_MONOTONIC) - t0) * 1e3 < ms) {
		work(200000);
		COZ_PROGRESS;
	}
	/* whatever bcoz installs, the program sees the default action */
	{
		struct sigaction o;

		sigaction(SIGTERM, NULL, &o);
		printf("robust: crash %s (SIGTERM default: %d)\n", how, o.sa_handler == SIG_DFL);
	}
	fflush(stdout);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		*bad_ptr = 1;
	if (!strcmp(how, "term")) {
		for (;;) {
			work(200000);
			COZ_PROGRESS;
		}
	}
	return 3;
}

/* ---- a program that closes its stderr (xz does, before it exits) ---- */

static int do_stderr(double ms, const char *path)
{
	double t0 = now_s(CLOCK_MONOTONIC);
	int fd;

	while ((now_s(CLOCK_MONOTONIC) - t0) * 1e3 < ms) {
		work(200000);
		COZ_PROGRESS;
	}
	close(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0 && write(fd, "robust's own\n", 13) != 13)
		return 1;
	printf("robust: stderr closed, %s is fd %d\n", path, fd);
	return 0;
}

/* ---- time in a libc syscall wrapper ---- */

static int do_write(double ms)
{
	double t0 = now_s(CLOCK_MONOTONIC);
	int fd = open("/dev/null", O_WRONLY);
	long n = 0;

	while ((now_s(CLOCK_MONOTONIC) - t0) * 1e3 < ms) {
		for (int i = 0; i < 1000; i++)
			if (write(fd, "x", 1) == 1) /* WRITE */
				n++;
		COZ_PROGRESS;
	}
	printf("robust: write %ld bytes\n", n);
	return 0;
}

/* ---- a start-up phase, then the work ---- */

static int do_phases(double a_ms, double b_ms, double s_ms)
{
	struct timespec ts = { (time_t)(s_ms / 1e3), (long)(s_ms * 1e6) % 1000000000L };

	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	volatile unsigned long acc = 0;

	while ((now_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e3 < a_ms)
		for (long i = 0; i < 100000; i++) acc += i; /* STARTUP */
	t0 = now_s(CLOCK_MONOTONIC);
	while ((now_s(CLOCK_MONOTONIC) - t0) * 1e3 < b_ms) {
		work(200000);
		COZ_PROGRESS;
	}
	nanosleep(&ts, NULL);
	printf("robust: phases %.0f ms start-up, %.0f ms work\n", a_ms, b_ms);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "vfork"))
		return do_vfork();
	if (!strcmp(mode, "sigintr"))
		return do_sigintr();
	if (!strcmp(mode, "stack") && argc > 3)
		return do_stack(atoi(argv[2]), atof(argv[3]));
	if (!strcmp(mode, "fds") && argc > 2)
		return do_fds(atoi(argv[2]));
	if (!strcmp(mode, "spawn") && argc > 2)
		return do_spawn(argv[2]);
	if (!strcmp(mode, "crash") && argc > 3)
		return do_crash(argv[2], atof(argv[3]));
	if (!strcmp(mode, "write") && argc > 2)
		return do_write(atof(argv[2]));
	if (!strcmp(mode, "phases") && argc > 3)
		return do_phases(atof(argv[2]), atof(argv[3]), argc > 4 ? atof(argv[4]) : 0);
	if (!strcmp(mode, "stderr") && argc > 3)
		return do_stderr(atof(argv[2]), argv[3]);
	fprintf(stderr, "usage: see the comment at the top of robust.c\n");
	return 2;
}
