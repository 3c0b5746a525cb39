// SPDX-License-Identifier: GPL-2.0
/*
 * A program with known phases, for checking what bperf reports about it.
 *
 *   phases [-s SCALE_MS] [-d DEVICE_OR_FILE]
 *
 * The main thread ("ph-main") runs, in order:
 *   compute   busy loop                                     -> on-cpu
 *   sleep     nanosleep                                     -> other
 *   io        512-byte O_DIRECT preads at random offsets     -> io
 *   lock      waits for a mutex a helper thread holds        -> lock
 *   oversub   busy loop pinned to one CPU with two busy
 *             helper threads pinned there too                -> sched + on-cpu
 * and measures itself: wall time of each phase, and its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID).  At exit it prints, for ph-main, the
 * milliseconds it expects bperf to attribute to each class:
 *
 *   expect on-cpu <ms>
 *   expect other <ms>     (sleep phase, minus its CPU time)
 *   expect io <ms>
 *   expect lock <ms>
 *   expect sched <ms>
 *   expect total <ms>     (wall time of the thread)
 *
 * The helpers are named ph-holder and ph-hog so reports can tell them apart.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long scale = 400;	/* ms per phase */
static const char *device = "/dev/vda";
static volatile unsigned long sink;
static volatile int stop_hogs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int holder_ready;

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn(double ms)
{
	double end = now_ms(CLOCK_THREAD_CPUTIME_ID) + ms;

	while (now_ms(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (int i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
	}
}

__attribute__((noinline)) static void phase_compute(void)
{
	burn(scale);
}

__attribute__((noinline)) static void phase_sleep(void)
{
	struct timespec ts = { scale / 1000, (scale % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

__attribute__((noinline)) static ssize_t read_block(int fd, void *buf, off_t off)
{
	return pread(fd, buf, 512, off);
}

__attribute__((noinline)) static int phase_io(void)
{
	double end = now_ms(CLOCK_MONOTONIC) + scale;
	unsigned int seed = 1;
	off_t size;
	void *buf;
	long n = 0;
	int fd;

	fd = open(device, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "phases: open %s O_DIRECT: %s\n", device, strerror(errno));
		return -1;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size < 1 << 20) {
		fprintf(stderr, "phases: %s is too small\n", device);
		close(fd);
		return -1;
	}
	if (posix_memalign(&buf, 4096, 4096)) {
		close(fd);
		return -1;
	}
	while (now_ms(CLOCK_MONOTONIC) < end) {
		off_t off = ((off_t)rand_r(&seed) % (size / 512)) * 512;

		if (read_block(fd, buf, off) != 512) {
			fprintf(stderr, "phases: pread: %s\n", strerror(errno));
			break;
		}
		n++;
	}
	fprintf(stderr, "phases: %ld O_DIRECT reads\n", n);
	free(buf);
	close(fd);
	return 0;
}

static void *holder(void *arg)
{
	struct timespec ts = { scale / 1000, (scale % 1000) * 1000000L };

	(void)arg;
	prctl(PR_SET_NAME, "ph-holder");
	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&ready_lock);
	holder_ready = 1;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&lock);
	return NULL;
}

__attribute__((noinline)) static void take_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

/* returns the ms spent waiting for the holder to be ready (not lock time) */
__attribute__((noinline)) static double phase_lock(double *lock_start)
{
	pthread_t t;
	double t0 = now_ms(CLOCK_MONOTONIC);

	pthread_create(&t, NULL, holder, NULL);
	pthread_mutex_lock(&ready_lock);
	while (!holder_ready)
		pthread_cond_wait(&ready_cond, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
	*lock_start = now_ms(CLOCK_MONOTONIC);
	take_lock();
	pthread_join(t, NULL);
	return *lock_start - t0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *hog(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "ph-hog");
	pin(0);
	while (!stop_hogs)
		sink++;
	return NULL;
}

__attribute__((noinline)) static void phase_oversub(void)
{
	pthread_t t[2];
	cpu_set_t old;

	sched_getaffinity(0, sizeof(old), &old);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hog, NULL);
	pin(0);
	/* a third of the CPU for as long as a phase: about 3 phases of wall time */
	burn(scale);
	stop_hogs = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sched_setaffinity(0, sizeof(old), &old);
}

struct span {
	double wall0, cpu0, wall, cpu;
};

static void begin(struct span *s)
{
	s->wall0 = now_ms(CLOCK_MONOTONIC);
	s->cpu0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
}

static void end(struct span *s)
{
	s->wall = now_ms(CLOCK_MONOTONIC) - s->wall0;
	s->cpu = now_ms(CLOCK_THREAD_CPUTIME_ID) - s->cpu0;
}

int main(int argc, char **argv)
{
	struct span all, cp, sl, io, lk, ov;
	double lock_start, setup, sched_ms, other_ms, lock_ms;
	int opt;

	while ((opt = getopt(argc, argv, "s:d:")) != -1) {
		switch (opt) {
		case 's':
			scale = atol(optarg);
			break;
		case 'd':
			device = optarg;
			break;
		default:
			fprintf(stderr, "usage: phases [-s SCALE_MS] [-d DEVICE]\n");
			return 2;
		}
	}
	prctl(PR_SET_NAME, "ph-main");
	begin(&all);

	begin(&cp);
	phase_compute();
	end(&cp);

	begin(&sl);
	phase_sleep();
	end(&sl);

	begin(&io);
	if (phase_io())
		return 1;
	end(&io);

	begin(&lk);
	setup = phase_lock(&lock_start);
	end(&lk);

	begin(&ov);
	phase_oversub();
	end(&ov);

	end(&all);

	/*
	 * Off-CPU time by class: sleep = other; the lock phase, including
	 * the hand-shake with the holder (a condvar wait, a futex: lock);
	 * the compute phases off CPU were preempted = sched.  Any off-CPU
	 * time outside these phases (thread creation, exit) is small and
	 * counted as other.
	 */
	lock_ms = lk.wall - lk.cpu;
	sched_ms = (ov.wall - ov.cpu) + (cp.wall - cp.cpu);
	other_ms = (all.wall - all.cpu) - (io.wall - io.cpu) - lock_ms - sched_ms;
	(void)setup;
	printf("expect on-cpu %.1f\n", all.cpu);
	printf("expect other %.1f\n", other_ms);
	printf("expect io %.1f\n", io.wall - io.cpu);
	printf("expect lock %.1f\n", lock_ms);
	printf("expect sched %.1f\n", sched_ms);
	printf("expect total %.1f\n", all.wall);
	printf("phase compute wall %.1f cpu %.1f\n", cp.wall, cp.cpu);
	printf("phase sleep wall %.1f cpu %.1f\n", sl.wall, sl.cpu);
	printf("phase io wall %.1f cpu %.1f\n", io.wall, io.cpu);
	printf("phase lock wall %.1f cpu %.1f\n", lk.wall, lk.cpu);
	printf("phase oversub wall %.1f cpu %.1f\n", ov.wall, ov.cpu);
	return 0;
}
