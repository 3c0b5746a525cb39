// SPDX-License-Identifier: GPL-2.0
/*
 * A program built to look like a server, for checking bperf's wait
 * reasons: every thread waits in one way only, known by construction.
 *
 *   server [-s MS]     run for MS ms (default 2000)
 *
 *   srv-idle0/1    pool workers waiting for jobs that never come:
 *                  pthread_cond_wait                          -> condition
 *   srv-holder     holds the big mutex while it naps 4 ms      -> sleep
 *   srv-client0/1  take and release the big mutex in a loop    -> mutex
 *   srv-epoll      epoll_wait on an eventfd nobody signals     -> epoll
 *   srv-sleep      nanosleep 10 ms in a loop                   -> sleep
 *   srv-pipe       read(2) of a pipe written only at the end   -> pipe-read
 *
 * At exit each thread prints "thread NAME wall MS cpu MS": its lifetime
 * and its own CPU time (CLOCK_THREAD_CPUTIME_ID), so off-CPU = wall - cpu.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t work_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static int pipefd[2], efd, epfd;

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *idle_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&work_mtx);
	while (!stop)
		pthread_cond_wait(&work_cond, &work_mtx);
	pthread_mutex_unlock(&work_mtx);
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&big);
		nap_ms(4);
		pthread_mutex_unlock(&big);
	}
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&big);
		pthread_mutex_unlock(&big);
	}
	return NULL;
}

static void *epoller(void *arg)
{
	struct epoll_event ev;

	(void)arg;
	while (!stop)
		epoll_wait(epfd, &ev, 1, 100);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!stop)
		nap_ms(10);
	return NULL;
}

static void *piper(void *arg)
{
	char c;

	(void)arg;
	while (read(pipefd[0], &c, 1) < 0)
		;
	return NULL;
}

struct thr {
	const char *name;
	void *(*fn)(void *);
	pthread_t t;
	double wall, cpu;
};

static struct thr thr[] = {
	{ .name = "srv-idle0", .fn = idle_worker }, { .name = "srv-idle1", .fn = idle_worker },
	{ .name = "srv-holder", .fn = holder },
	{ .name = "srv-client0", .fn = client }, { .name = "srv-client1", .fn = client },
	{ .name = "srv-epoll", .fn = epoller }, { .name = "srv-sleep", .fn = sleeper },
	{ .name = "srv-pipe", .fn = piper },
};
#define NR_THR	(sizeof(thr) / sizeof(thr[0]))

static void *run(void *arg)
{
	struct thr *t = arg;
	double w0 = now_ms(CLOCK_MONOTONIC);

	pthread_setname_np(pthread_self(), t->name);
	t->fn(NULL);
	t->cpu = now_ms(CLOCK_THREAD_CPUTIME_ID);
	t->wall = now_ms(CLOCK_MONOTONIC) - w0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	long ms = 2000;
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "-s"))
		ms = atol(argv[2]);
	efd = eventfd(0, 0);
	epfd = epoll_create1(0);
	if (pipe(pipefd) || efd < 0 || epfd < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev)) {
		perror("server: setup");
		return 1;
	}
	for (i = 0; i < NR_THR; i++)
		if (pthread_create(&thr[i].t, NULL, run, &thr[i])) {
			perror("server: pthread_create");
			return 1;
		}
	nap_ms(ms);
	stop = 1;
	pthread_mutex_lock(&work_mtx);
	pthread_cond_broadcast(&work_cond);
	pthread_mutex_unlock(&work_mtx);
	if (write(pipefd[1], "x", 1) != 1)
		perror("server: write");
	for (i = 0; i < NR_THR; i++)
		pthread_join(thr[i].t, NULL);
	for (i = 0; i < NR_THR; i++)
		printf("thread %s wall %.1f cpu %.1f\n", thr[i].name, thr[i].wall,
		       thr[i].cpu);
	return 0;
}
