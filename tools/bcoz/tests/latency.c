// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz test program for latency points and lifecycle corner cases.
 *
 *   latency [rounds] [mode]
 * mode: "plain" (default), "pthread_exit" (main leaves with pthread_exit while
 * a worker still runs), "fork" (a forked child runs and exits), "noprogress"
 * (the progress point is never reached), "exec" (re-exec /bin/true at the end)
 * rounds 0: run until SIGTERM/SIGINT (bcoz run --experiments N sends it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coz.h"
#include "testprog.h"

static volatile unsigned long sink;
static long rounds = 100;

static void __attribute__((noinline)) work(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++) acc += i; /* WORK */
	sink = acc;
}

static void *worker(void *arg)
{
	const char *mode = arg;

	if (!strcmp(mode, "noprogress")) {
		for (long r = 0; r < rounds; r++) {
			work(2000000);
			if (r > 1000000000)
				COZ_PROGRESS; /* NEVER */
		}
		return NULL;
	}
	for (long r = 0; rounds ? r < rounds : !stop_requested; r++) {
		COZ_BEGIN("request");
		work(2000000);
		COZ_END("request");
		COZ_PROGRESS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "plain";
	double t0 = wall_ms();
	pthread_t t;

	if (argc > 1)
		rounds = atol(argv[1]);
	catch_stop_signals();
	if (!strcmp(mode, "fork")) {
		pid_t p = fork();

		if (p == 0) {
			work(1000000);
			_exit(7);
		} else {
			int st;

			waitpid(p, &st, 0);
			printf("child exit %d\n", WEXITSTATUS(st));
		}
	}
	pthread_create(&t, NULL, worker, (void *)mode);
	if (!strcmp(mode, "pthread_exit"))
		pthread_exit(NULL);
	pthread_join(t, NULL);
	if (!strcmp(mode, "exec")) {
		execl("/bin/true", "true", (char *)NULL);
		return 3;
	}
	printf("latency: done wall_ms=%.1f\n", wall_ms() - t0);
	return 0;
}
