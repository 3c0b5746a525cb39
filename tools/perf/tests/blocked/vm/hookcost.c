// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of the scheduler hooks per context switch.
 *
 * Two threads pinned to one CPU pass a byte back and forth through two
 * pipes, so every round trip is two context switches and nothing else.
 * Each thread carries N task-clock sampling events of its own (cpu = -1,
 * mmap'ed, drained by a third thread on another CPU), with or without the
 * blocked bit.  Prints, for a run of -t seconds:
 *
 *   hookcost: events=N blocked=0|1 period=NS switches=S ns_per_switch=X samples=K blocked_samples=B
 *
 * Comparing ns_per_switch for N = 0 between a kernel without
 * CONFIG_PERF_BLOCKED_SAMPLES and one with it measures the hooks' cost when
 * no blocked event exists (the static key is off); N > 0 with blocked=0 and
 * blocked=1 on one kernel measures what the blocked bit adds per event.
 *
 * Usage: hookcost [-n EVENTS] [-b] [-p PERIOD_NS] [-t SECONDS] [-c CPU]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES	8
#define MAX_EVENTS	256
#define BLOCKED_BIT	38	/* bit of attr's flags word (the ABI) */
#define BLOCKED_MASK	(0xf << 3)	/* header.misc subclass bits */

struct ring {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
};

static int nevents, blocked, cpu;
static uint64_t period = 1000000000ULL;
static int p1[2], p2[2];
static atomic_bool stop, go;
static atomic_int ready;
static struct ring rings[2 * MAX_EVENTS];
static atomic_int nrings;
static unsigned long long nsamples, nblocked;
static long page;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "hookcost: cannot pin to CPU %d: %s\n", c, strerror(errno));
		exit(1);
	}
}

static void open_events(void)
{
	struct perf_event_attr attr;
	int i;

	for (i = 0; i < nevents; i++) {
		struct ring *r;
		int fd, k;
		void *p;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_TASK_CLOCK;
		attr.sample_period = period;
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
		attr.exclude_kernel = 0;
		if (blocked) {
			attr.sample_type |= PERF_SAMPLE_WEIGHT;
			*(uint64_t *)((char *)&attr + 40) |= 1ULL << BLOCKED_BIT;
		}
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0) {
			fprintf(stderr, "hookcost: perf_event_open(task-clock%s, period %llu): %s%s\n",
				blocked ? ", blocked" : "", (unsigned long long)period,
				strerror(errno),
				blocked && (errno == EINVAL || errno == EOPNOTSUPP) ?
				" (this kernel has no blocked samples)" : "");
			exit(3);
		}
		p = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "hookcost: mmap of the ring buffer: %s (raise ulimit -l or run as root)\n",
				strerror(errno));
			exit(1);
		}
		k = atomic_fetch_add(&nrings, 1);
		r = &rings[k];
		r->fd = fd;
		r->pg = p;
		r->len = (RING_PAGES + 1) * page;
	}
}

static void drain(struct ring *r)
{
	struct perf_event_mmap_page *pg = r->pg;
	unsigned char *data = (unsigned char *)pg + page;
	uint64_t size = RING_PAGES * page;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			nsamples++;
			if (h.misc & BLOCKED_MASK)
				nblocked++;
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

static void *pinger(void *arg)
{
	unsigned long long *trips = arg;
	char c = 0;

	pin(cpu);
	open_events();
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		;
	while (!atomic_load(&stop)) {
		if (write(p1[1], &c, 1) != 1 || read(p2[0], &c, 1) != 1)
			break;
		(*trips)++;
	}
	c = 1;	/* let the ponger see the end */
	(void)!write(p1[1], &c, 1);
	return NULL;
}

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	pin(cpu);
	open_events();
	atomic_fetch_add(&ready, 1);
	for (;;) {
		if (read(p1[0], &c, 1) != 1 || c)
			break;
		if (write(p2[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long trips = 0;
	double secs = 1.0;
	pthread_t a, b;
	uint64_t t0, t1, end;
	int opt, i, ncpu;

	cpu = 0;
	while ((opt = getopt(argc, argv, "n:bp:t:c:h")) != -1) {
		switch (opt) {
		case 'n':
			nevents = atoi(optarg);
			break;
		case 'b':
			blocked = 1;
			break;
		case 'p':
			period = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n EVENTS] [-b] [-p PERIOD_NS] [-t SECONDS] [-c CPU]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (nevents < 0 || nevents > MAX_EVENTS || !period || secs <= 0) {
		fprintf(stderr, "hookcost: -n must be 0..%d, -p and -t positive\n", MAX_EVENTS);
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (pipe(p1) || pipe(p2)) {
		perror("hookcost: pipe");
		return 1;
	}
	/* The drainer runs on another CPU, out of the ping-pong's way. */
	if (ncpu > 1)
		pin(cpu == 0 ? 1 : 0);
	if (pthread_create(&a, NULL, pinger, &trips) ||
	    pthread_create(&b, NULL, ponger, NULL)) {
		fprintf(stderr, "hookcost: pthread_create failed\n");
		return 1;
	}
	while (atomic_load(&ready) < 2)
		usleep(1000);
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	atomic_store(&go, true);
	while (now_ns() < end) {
		usleep(ncpu > 1 ? 5000 : 50000);
		for (i = 0; i < atomic_load(&nrings); i++)
			drain(&rings[i]);
	}
	atomic_store(&stop, true);
	t1 = now_ns();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	for (i = 0; i < atomic_load(&nrings); i++)
		drain(&rings[i]);
	printf("hookcost: events=%d blocked=%d period=%llu switches=%llu ns_per_switch=%.1f samples=%llu blocked_samples=%llu\n",
	       nevents, blocked, (unsigned long long)period, 2 * trips,
	       trips ? (double)(t1 - t0) / (2.0 * trips) : 0.0, nsamples, nblocked);
	return trips ? 0 : 1;
}
