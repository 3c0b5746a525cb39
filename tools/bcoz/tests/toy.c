// SPDX-License-Identifier: GPL-2.0
/*
 * Ground-truth test for bcoz: per progress visit two threads run loop A and
 * loop B in parallel and meet at a barrier.  A does twice B's work, so
 * speeding A by s speeds the program by s up to 50 % and not at all beyond;
 * speeding B changes nothing.
 *
 *   toy [rounds] [b_iterations]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "coz.h"

static volatile unsigned long sink_a, sink_b;
static long b_iters = 10000000, rounds = 100;
static pthread_barrier_t bar;

static void __attribute__((noinline)) loop_a(long n)
{
	for (long i = 0; i < n; i++) sink_a += i; /* LOOP_A */
}

static void __attribute__((noinline)) loop_b(long n)
{
	for (long i = 0; i < n; i++) sink_b += i; /* LOOP_B */
}

static void *thread_a(void *arg)
{
	for (long r = 0; r < rounds; r++) {
		loop_a(2 * b_iters);
		pthread_barrier_wait(&bar);
		COZ_PROGRESS; /* PROGRESS */
	}
	return arg;
}

static void *thread_b(void *arg)
{
	for (long r = 0; r < rounds; r++) {
		loop_b(b_iters);
		pthread_barrier_wait(&bar);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		b_iters = atol(argv[2]);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("toy: %ld rounds done\n", rounds);
	return 0;
}
