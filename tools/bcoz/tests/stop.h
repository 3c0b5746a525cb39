/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stop on request, for bcoz's test programs.
 *
 * Tests size a causal run by its outcome, not by an amount of work: the
 * program runs until `bcoz run --experiments N` has its N experiments and
 * sends SIGTERM (timeout(1) and Ctrl-C end it the same way).  The program
 * finishes its current round and prints what it measured, the ground truth
 * the test compares the profile with.
 */
#ifndef BCOZ_TEST_STOP_H
#define BCOZ_TEST_STOP_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* TEST_DEFAULT_SIGTERM=1 leaves the default action, as in most programs */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	if (getenv("TEST_DEFAULT_SIGTERM"))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

#endif
