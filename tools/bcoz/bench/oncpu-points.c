// SPDX-License-Identifier: GPL-2.0
/*
 * Where a blocked task-clock event's on-CPU points land, against where the
 * time went (a benchmark, not a test).  Two threads hand a mutex to each
 * other: each holds it for loop L (four units), then runs loop O (one unit)
 * outside it, as tests/lock.c does.  Each thread samples itself with a
 * blocked task-clock event (1 ms) and times its own L and O; at the end
 * the samples are read back and sorted by where their IP is.
 *
 * It prints, per thread: the share of its on-CPU time in L (timed), and
 * L's share of its on-CPU points three ways, by what is done with the
 * points the kernel owed (their timer interrupt came after the thread had
 * left the CPU; they come at its switch-in with the stack it left with,
 * which is not in L or O): left out (where a tool that reads the IP puts
 * them: the lock call), charged to the thread's previous sample (what
 * bcoz does), or to its next one.  It also prints how late the timer's
 * samples were on the count's grid and how many of them weigh more than
 * one point (the interrupt came a whole period late or more).
 *
 *   oncpu-points [SECONDS]     (default 3)
 * Needs a kernel with blocked samples (run it in the VM: oncpu-points.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS	1000000ULL
#define RING_PAGES	1024		/* 4 MiB: a few seconds of samples */
#define ATTR_FLAGS_OFF	40		/* the attr's bit-field word */
#define ATTR_BLOCKED	(1ULL << 38)
#define MISC_BLOCKED	(0xf << 3)	/* PERF_RECORD_MISC_BLOCKED_MASK */

enum where { IN_L, IN_O, ELSEWHERE, NOWHERE };

struct thread {
	pthread_t thr;
	long rounds;
	double l_ms, o_ms;		/* timed */
	uint64_t pts[3];		/* timer samples' points by where */
	uint64_t owed[4];		/* owed points by the previous sample */
	uint64_t owed_next[4];		/* ... by the next one */
	uint64_t owed_total, owed_samples, timer_samples, heavy, late_ns;
	const char *err;
};

static volatile unsigned long sink;
static long units;			/* iterations of one unit (1.25 ms) */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static void __attribute__((noinline)) loop_l(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++)
		acc += i;
	sink = acc;
}

static void __attribute__((noinline)) loop_l_end(void) { }

static void __attribute__((noinline)) loop_o(long n)
{
	volatile unsigned long acc = 0;

	for (long i = 0; i < n; i++)
		acc += i;
	sink = acc;
}

static void __attribute__((noinline)) loop_o_end(void) { }

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static enum where where_is(uint64_t ip)
{
	if (ip >= (uint64_t)loop_l && ip < (uint64_t)loop_l_end)
		return IN_L;
	if (ip >= (uint64_t)loop_o && ip < (uint64_t)loop_o_end)
		return IN_O;
	return ELSEWHERE;
}

static int open_event(void)
{
	struct perf_event_attr a;
	uint64_t flags;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = PERIOD_NS;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			PERF_SAMPLE_WEIGHT;
	a.exclude_hv = 1;
	a.disabled = 1;
	memcpy(&flags, (char *)&a + ATTR_FLAGS_OFF, sizeof(flags));
	flags |= ATTR_BLOCKED;
	memcpy((char *)&a + ATTR_FLAGS_OFF, &flags, sizeof(flags));
	return syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

struct rec {
	uint16_t misc;
	uint64_t ip, time, count, weight;
};

/* Read the ring back into @out (at most @max records); returns how many. */
static long read_ring(void *ring, long page, struct rec *out, long max)
{
	struct perf_event_mmap_page *pg = ring;
	unsigned char *data = (unsigned char *)ring + page;
	uint64_t head = pg->data_head, tail = pg->data_tail, size = pg->data_size;
	long n = 0;

	while (tail < head && n < max) {
		struct perf_event_header h;
		uint64_t w[4];	/* IP, time, count, weight */

		memcpy(&h, data + tail % size, sizeof(h));
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(w)) {
			for (int i = 0; i < 4; i++)
				memcpy(&w[i], data + (tail + 8 + 8 * i) % size, 8);
			out[n++] = (struct rec){ h.misc, w[0], w[1], w[2], w[3] };
		}
		tail += h.size;
	}
	return n;
}

/* Owed on-CPU points: an on-CPU sample followed by a blocked one of its time. */
static int is_owed(const struct rec *r, long i, long n)
{
	return !(r[i].misc & MISC_BLOCKED) && i + 1 < n &&
	       (r[i + 1].misc & MISC_BLOCKED) && r[i + 1].time == r[i].time;
}

static void tally(struct thread *t, struct rec *r, long n)
{
	enum where prev = NOWHERE;

	for (long i = 0; i < n; i++) {
		if (r[i].misc & MISC_BLOCKED)
			continue;
		if (is_owed(r, i, n)) {
			uint64_t w = r[i].weight;
			enum where next = NOWHERE;

			for (long j = i + 1; j < n; j++)
				if (!(r[j].misc & MISC_BLOCKED) && !is_owed(r, j, n)) {
					next = where_is(r[j].ip);
					break;
				}
			t->owed[prev] += w;
			t->owed_next[next] += w;
			t->owed_total += w;
			t->owed_samples++;
			continue;
		}
		prev = where_is(r[i].ip);
		t->pts[prev] += r[i].weight;
		t->timer_samples++;
		t->heavy += r[i].weight > 1;
		t->late_ns += r[i].count % PERIOD_NS;
	}
}

static void *worker(void *arg)
{
	struct thread *t = arg;
	long page = sysconf(_SC_PAGESIZE), max = 1 << 17, n;
	struct rec *recs;
	void *ring;
	int fd = open_event();

	if (fd < 0) {
		t->err = errno == EINVAL || errno == E2BIG || errno == EOPNOTSUPP ?
			 "this kernel has no blocked samples (attr.blocked refused); run it in the VM: tools/bcoz/bench/oncpu-points.sh" :
			 strerror(errno);
		stop = 1;
		return NULL;
	}
	ring = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		t->err = "cannot map a 4 MiB ring buffer (as non-root: raise kernel.perf_event_mlock_kb)";
		stop = 1;
		close(fd);
		return NULL;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	while (!stop) {
		double a, b, c;

		pthread_mutex_lock(&mtx);
		a = now_ms();
		loop_l(4 * units);
		b = now_ms();
		pthread_mutex_unlock(&mtx);
		loop_o(units);
		c = now_ms();
		t->l_ms += b - a;
		t->o_ms += c - b;
		t->rounds++;
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	recs = malloc(max * sizeof(*recs));
	if (!recs) {
		t->err = "out of memory";
		return NULL;
	}
	n = read_ring(ring, page, recs, max);
	if (((struct perf_event_mmap_page *)ring)->data_head >= (uint64_t)RING_PAGES * page)
		t->err = "the ring buffer filled up: run fewer SECONDS";
	tally(t, recs, n);
	free(recs);
	munmap(ring, (RING_PAGES + 1) * page);
	close(fd);
	return NULL;
}

static double share(uint64_t l, uint64_t all)
{
	return all ? 100.0 * l / all : 0;
}

int main(int argc, char **argv)
{
	double secs = 3, t0, d;
	struct thread t[2];
	char *end;
	long n;

	if (argc > 2 || (argc == 2 && (secs = strtod(argv[1], &end), *end || secs <= 0 || secs > 20))) {
		fprintf(stderr, "usage: oncpu-points [SECONDS]   (0-20, default 3)\n");
		return 2;
	}
	/* one unit: as many iterations as take 1.25 ms here */
	for (n = 1 << 16;; n *= 2) {
		t0 = now_ms();
		loop_o(n);
		d = now_ms() - t0;
		if (d > 25) {
			units = n * 1.25 / d;
			break;
		}
	}
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i].thr, NULL, worker, &t[i]);
	usleep(secs * 1e6);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i].thr, NULL);
	for (int i = 0; i < 2; i++)
		if (t[i].err) {
			fprintf(stderr, "oncpu-points: %s\n", t[i].err);
			return 1;
		}
	printf("%-6s %6s %9s | %8s %8s %8s %8s | %7s %7s %7s\n", "thread", "rounds",
	       "L timed%", "L pts%", "owed>pre", "owed>nxt", "owed%", "late us", "heavy%", "samples");
	for (int i = 0; i < 2; i++) {
		struct thread *x = &t[i];
		uint64_t timer = x->pts[IN_L] + x->pts[IN_O] + x->pts[ELSEWHERE];
		uint64_t all = timer + x->owed_total;

		printf("%-6d %6ld %9.1f | %8.1f %8.1f %8.1f %8.1f | %7.0f %7.1f %7lu\n", i, x->rounds,
		       share(x->l_ms * 1000, (x->l_ms + x->o_ms) * 1000),
		       share(x->pts[IN_L], all),
		       share(x->pts[IN_L] + x->owed[IN_L], all),
		       share(x->pts[IN_L] + x->owed_next[IN_L], all),
		       share(x->owed_total, all),
		       x->timer_samples ? x->late_ns / 1e3 / x->timer_samples : 0,
		       share(x->heavy, x->timer_samples),
		       (unsigned long)(x->timer_samples + x->owed_samples));
	}
	printf("L timed%%: L's share of the thread's L+O time; L pts%%: of its on-CPU points, owed ones left out\n"
	       "(charged to the lock call); owed>pre / owed>nxt: owed points charged to the previous / next\n"
	       "sample's place; owed%%: owed points of all; late us: the timer samples' mean lateness on the\n"
	       "count's grid; heavy%%: timer samples weighing 2 or more points\n");
	return 0;
}
