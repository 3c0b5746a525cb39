// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that alternates O_DIRECT reads and pure computing, for checking
 * that bperf charges on-CPU time to the phase that spent it.
 *
 *   alternate [-t RUN_MS] [-i IO_MS] [-c CPU_MS] [-b BYTES] [-d DEVICE_OR_FILE]
 *             [-p PHASES_FILE]
 *
 * The main thread ("al-main") repeats, until RUN_MS of wall time passed:
 *   phase_io        O_DIRECT preads of BYTES (default 512) at random
 *                   aligned offsets, for IO_MS of wall time (its CPU time
 *                   is the kernel's read path: pinning the pages, building
 *                   and completing the bio)
 *   phase_compute   a busy loop, for CPU_MS of its own CPU time
 * Both are noinline, so a sample's user stack names the phase it was taken
 * in.  Around every phase the program reads its own thread CPU clock
 * (CLOCK_THREAD_CPUTIME_ID), CLOCK_MONOTONIC and its own task-clock counter
 * (perf_event_open; -1 if not allowed), and at exit prints, summed over all
 * rounds:
 *
 *   phase io cpu <ms> wall <ms> task-clock <ms> reads <n>
 *   phase compute cpu <ms> wall <ms> task-clock <ms>
 *   phase outside cpu <ms> wall <ms> task-clock <ms>
 *   run wall <ms> cpu <ms> rounds <n>
 *
 * The task-clock counter runs between the same two hooks of the context
 * switch as a sampling task-clock event, so it is the on-CPU time whose
 * points that event should charge to the phase.  The thread CPU clock also
 * holds the context switch and, for a task woken onto an idle CPU, the time
 * from its wake-up to its pick (the scheduler skips the clock update
 * between them): 30-50 us per read under QEMU TCG.
 *
 * "outside" is main's own time from its prctl(PR_SET_NAME) (from which on
 * its samples are al-main's) to its last clock read: setup, the clock reads
 * between phases, the report.  With -p, every io phase's start and end on
 * CLOCK_MONOTONIC (ms) go to PHASES_FILE, one "io START END" line each, to
 * be matched with a trace of the thread's context switches.
 *
 * Sized by time, never by an amount of work: the guest's speed only changes
 * how many reads and loop turns fit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "selfclock.h"

static volatile unsigned long sink;

static size_t bytes = 512;

__attribute__((noinline)) static ssize_t read_block(int fd, void *buf, off_t off)
{
	return pread(fd, buf, bytes, off);
}

/* Reads for @ms of wall time; returns the number of reads, -1 on error. */
__attribute__((noinline)) static long phase_io(int fd, void *buf, off_t size,
					       unsigned int *seed, double ms)
{
	double end = now_ms(CLOCK_MONOTONIC) + ms;
	long n = 0;

	while (now_ms(CLOCK_MONOTONIC) < end) {
		off_t off = ((off_t)rand_r(seed) % (size / bytes)) * bytes;

		if (read_block(fd, buf, off) != (ssize_t)bytes) {
			fprintf(stderr, "alternate: pread: %s\n", strerror(errno));
			return -1;
		}
		n++;
	}
	return n;
}

/* Computes for @ms of this thread's CPU time. */
__attribute__((noinline)) static void phase_compute(double ms)
{
	double end = now_ms(CLOCK_THREAD_CPUTIME_ID) + ms;

	while (now_ms(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (int i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
	}
}

/* this thread's own task-clock counter, -1 if perf events are not allowed */
static int tc_fd = -1;

/* clock readings, and sums of differences between them */
struct clocks {
	double cpu, wall, tc;
};

static void mark(struct clocks *m)
{
	m->wall = now_ms(CLOCK_MONOTONIC);
	m->cpu = now_ms(CLOCK_THREAD_CPUTIME_ID);
	m->tc = task_clock_ms(tc_fd);
}

static void add_since(struct clocks *t, const struct clocks *m)
{
	struct clocks e;

	mark(&e);
	t->cpu += e.cpu - m->cpu;
	t->wall += e.wall - m->wall;
	t->tc += e.tc - m->tc;
}

int main(int argc, char **argv)
{
	double run_ms = 6000, io_ms = 200, cpu_ms = 100, end;
	const char *device = "/dev/vda";
	struct clocks io = { 0 }, cp = { 0 }, all = { 0 }, life = { 0 };
	struct clocks m, start, named;
	unsigned int seed = 1;
	FILE *phases = NULL;
	long reads = 0, n, rounds = 0;
	off_t size;
	void *buf;
	int fd, opt;

	while ((opt = getopt(argc, argv, "t:i:c:b:d:p:")) != -1) {
		switch (opt) {
		case 't':
			run_ms = atof(optarg);
			break;
		case 'i':
			io_ms = atof(optarg);
			break;
		case 'c':
			cpu_ms = atof(optarg);
			break;
		case 'b':
			bytes = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			device = optarg;
			break;
		case 'p':
			phases = fopen(optarg, "w");
			if (!phases) {
				fprintf(stderr, "alternate: -p %s: %s\n", optarg, strerror(errno));
				return 1;
			}
			break;
		default:
			fprintf(stderr, "usage: alternate [-t RUN_MS] [-i IO_MS] [-c CPU_MS] [-b BYTES] [-d DEVICE] [-p PHASES_FILE]\n");
			return 2;
		}
	}
	prctl(PR_SET_NAME, "al-main");
	tc_fd = task_clock_open();
	mark(&named);

	fd = open(device, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "alternate: open %s with O_DIRECT: %s (give a block device or a file on a disk file system with -d)\n",
			device, strerror(errno));
		return 1;
	}
	size = lseek(fd, 0, SEEK_END);
	if (!bytes || bytes % 512 || size < (off_t)bytes * 16) {
		fprintf(stderr, "alternate: -b %zu: give a multiple of 512 of at most 1/16 of %s (%lld bytes)\n",
			bytes, device, (long long)size);
		return 1;
	}
	if (posix_memalign(&buf, 4096, bytes))
		return 1;

	mark(&start);
	end = start.wall + run_ms;
	while (now_ms(CLOCK_MONOTONIC) < end) {
		mark(&m);
		n = phase_io(fd, buf, size, &seed, io_ms);
		add_since(&io, &m);
		if (phases)
			fprintf(phases, "io %.6f %.6f\n", m.wall, now_ms(CLOCK_MONOTONIC));
		if (n < 0)
			return 1;
		reads += n;

		mark(&m);
		phase_compute(cpu_ms);
		add_since(&cp, &m);
		rounds++;
	}
	add_since(&all, &start);
	free(buf);
	close(fd);
	if (phases)
		fclose(phases);

	printf("phase io cpu %.1f wall %.1f task-clock %.1f reads %ld\n", io.cpu, io.wall,
	       tc_fd < 0 ? -1 : io.tc, reads);
	printf("phase compute cpu %.1f wall %.1f task-clock %.1f\n", cp.cpu, cp.wall,
	       tc_fd < 0 ? -1 : cp.tc);
	fflush(stdout);
	add_since(&life, &named);
	printf("phase outside cpu %.1f wall %.1f task-clock %.1f\n", life.cpu - io.cpu - cp.cpu,
	       life.wall - io.wall - cp.wall, tc_fd < 0 ? -1 : life.tc - io.tc - cp.tc);
	printf("run wall %.1f cpu %.1f rounds %ld\n", all.wall, all.cpu, rounds);
	return 0;
}
