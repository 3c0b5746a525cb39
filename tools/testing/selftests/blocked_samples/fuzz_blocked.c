// SPDX-License-Identifier: GPL-2.0
/*
 * A randomised stress of the blocked samples paths, for the debug kernel
 * (KASAN, lockdep, atomic-sleep, list and object checks; `make fuzz`).
 *
 * Six worker threads keep switching for every reason the hooks know:
 * sleeps, a contended mutex, a condition variable, a pipe ping-pong,
 * O_DIRECT reads, migrations between CPUs, fork+wait and busy loops.  The
 * main thread meanwhile opens, reconfigures and closes perf events on them
 * at random: task-clock with and without the blocked bit, other software
 * events, random sample types, periods from 1 ns to 100 ms, frequency
 * mode, inheritance, groups, per-CPU and per-task scopes, enable/disable,
 * REFRESH, PERIOD, SET_OUTPUT, PAUSE_OUTPUT, an invalid SET_BPF, prctl()
 * enable/disable of all the thread's events, mmap/munmap of ring buffers
 * (which it drains, counting the blocked samples it sees), and changes of
 * perf_event_max_sample_rate (restored at the end; a perf_cpu_time_max_percent
 * of 0 or 100, which makes the kernel refuse them, is set to 25 meanwhile).
 *
 * It fails when the kernel log gets a BUG, WARNING, Oops or call trace
 * during the run, when a worker stops making progress (a lost wake-up or
 * a deadlock in the hooks), or when no blocked sample was seen at all (the
 * fuzzer would then be exercising nothing).  It is not in TEST_GEN_PROGS:
 * it runs for a fixed time, so it is installed as an extended program and
 * run by scripts/run-fuzz.sh.
 *
 * Usage: fuzz_blocked [-t SECONDS] [-s SEED] [-d BLOCKDEV]
 *   -t  run time (default: $FUZZ_SECONDS, else 60)
 *   -s  seed of the random choices (default: from the clock; printed, so a
 *       failing run can be repeated)
 *   -d  a block device for the O_DIRECT reads (default: a file in /tmp;
 *       without O_DIRECT support there the reads are buffered)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"
#include "blocked_util.h"

#define NR_WORKERS	6
#define MAX_FDS		48
#define RATE_PATH	BS_MAX_SAMPLE_RATE
#define IO_SIZE		4096
#define IO_SPAN		(256 * IO_SIZE)

struct fuzz_fd {
	int fd;
	void *base;
	size_t len;
	bool blocked;
};

static struct fuzz_fd fds[MAX_FDS];
static pid_t worker_tid[NR_WORKERS];
static atomic_ulong worker_ops[NR_WORKERS];
static atomic_bool stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
/* pipes[pair][direction]: worker 2p writes [p][0], 2p+1 writes [p][1] */
static int pipes[2][2][2];
static int io_fd = -1;
static int ncpus;

/* Counters the report prints. */
static unsigned long n_ops, n_open_ok, n_open_err, n_blocked_open, n_ioctl,
	n_mmap, n_records, n_blocked_records, n_rate_changes, n_rate_refused;

/* xorshift64*: small, seedable, the same sequence on every machine. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd_below(100) < percent;
}

/* Worker-local generator: workers must not race on rng_state. */
static uint64_t wrnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void do_io(uint64_t *s, void *buf)
{
	off_t off;

	if (io_fd < 0 || !buf)
		return;
	off = (off_t)(wrnd(s) % (IO_SPAN / IO_SIZE)) * IO_SIZE;
	if (pread(io_fd, buf, IO_SIZE, off) < 0)
		return;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	uint64_t s = rng_state ^ (0x9E3779B97F4A7C15ULL * (id + 1));
	struct timespec ts;
	cpu_set_t set;
	void *buf = NULL;
	char c = 0;
	pid_t pid;

	if (posix_memalign(&buf, IO_SIZE, IO_SIZE))
		buf = NULL;
	worker_tid[id] = bs_gettid();
	while (!atomic_load(&stop)) {
		switch (wrnd(&s) % 9) {
		case 0:	/* sleep: [B] */
			ts.tv_sec = 0;
			ts.tv_nsec = (long)(wrnd(&s) % 2000000);
			nanosleep(&ts, NULL);
			break;
		case 1:	/* contended mutex: [L] */
			pthread_mutex_lock(&lock);
			bs_spin_ns(wrnd(&s) % 300000);
			pthread_mutex_unlock(&lock);
			break;
		case 2:	/* condition variable with a timeout */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 500000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&cond_lock);
			pthread_cond_timedwait(&cond, &cond_lock, &ts);
			pthread_mutex_unlock(&cond_lock);
			pthread_cond_signal(&cond);
			break;
		case 3:	/* pipe ping-pong between workers 0/1 and 2/3 */
			if (id < 4) {
				int p = id / 2, side = id % 2;
				struct pollfd pfd = {
					.fd = pipes[p][!side][0], .events = POLLIN,
				};

				/* send a byte, wait up to 2 ms for the peer's
				 * (it may be busy elsewhere: never hang) */
				if (write(pipes[p][side][1], &c, 1) == 1 &&
				    poll(&pfd, 1, 2) == 1)
					(void)!read(pipes[p][!side][0], &c, 1);
			}
			break;
		case 4:	/* I/O: [I] */
			do_io(&s, buf);
			break;
		case 5:	/* migrate: the hooks on two CPUs */
			CPU_ZERO(&set);
			CPU_SET(wrnd(&s) % ncpus, &set);
			sched_setaffinity(0, sizeof(set), &set);
			break;
		case 6:	/* fork: inherited events, exit while sampled */
			if (wrnd(&s) % 8)
				break;
			pid = fork();
			if (pid == 0) {
				bs_spin_ns(wrnd(&s) % 1000000);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
			break;
		case 7:
			sched_yield();
			break;
		default:	/* on-CPU */
			bs_spin_ns(wrnd(&s) % 500000);
			break;
		}
		atomic_fetch_add(&worker_ops[id], 1);
	}
	free(buf);
	return NULL;
}

/* Walk the records between tail and head, count samples, free the space. */
static void drain(struct fuzz_fd *f)
{
	struct perf_event_mmap_page *pg = f->base;
	size_t data_len = f->len - (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *data = (unsigned char *)f->base + pg->data_offset;
	uint64_t head, tail;

	if (!pg->data_offset)	/* very old layout: data follows the page */
		data = (unsigned char *)f->base + sysconf(_SC_PAGESIZE);
	if (pg->data_size)
		data_len = pg->data_size;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t off = tail % data_len, i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % data_len];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		n_records++;
		if (h.type == PERF_RECORD_SAMPLE &&
		    (h.misc & PERF_RECORD_MISC_BLOCKED_MASK))
			n_blocked_records++;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

static int free_slot(void)
{
	int i;

	for (i = 0; i < MAX_FDS; i++)
		if (fds[i].fd < 0)
			return i;
	return -1;
}

static struct fuzz_fd *any_fd(void)
{
	int i, start = (int)rnd_below(MAX_FDS);

	for (i = 0; i < MAX_FDS; i++) {
		struct fuzz_fd *f = &fds[(start + i) % MAX_FDS];

		if (f->fd >= 0)
			return f;
	}
	return NULL;
}

static void close_fd(struct fuzz_fd *f)
{
	if (f->base)
		munmap(f->base, f->len);
	close(f->fd);
	f->fd = -1;
	f->base = NULL;
	f->blocked = false;
}

static const uint64_t periods[] = {
	1, 1000, 9999, 10000, 100000, 250000, 1000000, 4000000, 100000000,
};

static const uint64_t sample_bits[] = {
	PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
	PERF_SAMPLE_READ, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_ID,
	PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD, PERF_SAMPLE_STREAM_ID,
	PERF_SAMPLE_RAW, PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_IDENTIFIER,
	PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_REGS_INTR, PERF_SAMPLE_PHYS_ADDR,
	PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE,
	PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT,
};

static void fuzz_open(void)
{
	struct perf_event_attr attr;
	int slot = free_slot(), cpu = -1, group = -1, fd;
	struct fuzz_fd *g;
	pid_t pid;
	size_t i;

	if (slot < 0) {
		close_fd(any_fd());
		slot = free_slot();
	}
	bs_make_attr(&attr, periods[rnd_below(ARRAY_SIZE(periods))],
		     chance(80));
	if (chance(10)) {	/* another software event, maybe with the bit */
		static const uint64_t cfg[] = {
			PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
			PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_PAGE_FAULTS,
		};
		attr.config = cfg[rnd_below(ARRAY_SIZE(cfg))];
	}
	if (chance(30)) {
		attr.sample_type = 0;
		for (i = 0; i < ARRAY_SIZE(sample_bits); i++)
			if (chance(35))
				attr.sample_type |= sample_bits[i];
	}
	if (attr.sample_type & PERF_SAMPLE_REGS_USER)
		attr.sample_regs_user = rnd() & 0xffffff;
	if (attr.sample_type & PERF_SAMPLE_REGS_INTR)
		attr.sample_regs_intr = rnd() & 0xffffff;
	if (attr.sample_type & PERF_SAMPLE_STACK_USER)
		attr.sample_stack_user = (uint32_t)(rnd_below(4) * 2048 + 8);
	if (attr.sample_type & PERF_SAMPLE_READ)
		attr.read_format = rnd() & 0x1f;
	if (chance(15)) {
		attr.freq = 1;
		attr.sample_freq = 1 + rnd_below(20000);
	}
	attr.disabled = chance(30);
	attr.inherit = chance(30);
	attr.exclude_kernel = chance(15);
	attr.exclude_user = chance(10);
	attr.exclude_idle = chance(5);
	attr.context_switch = chance(20);
	attr.sample_id_all = chance(50);
	attr.task = chance(10);
	attr.comm = chance(10);
	attr.mmap = chance(10);
	attr.watermark = chance(20);
	attr.wakeup_events = (uint32_t)rnd_below(4);
	attr.sample_max_stack = (uint16_t)rnd_below(130);
	if (chance(10)) {
		attr.use_clockid = 1;
		attr.clockid = chance(50) ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
	}
	if (chance(5))
		attr.sigtrap = 1, attr.remove_on_exec = 1;

	switch (rnd_below(4)) {
	case 0:	/* the calling thread */
		pid = 0;
		break;
	case 1:	/* the main thread, by the process's pid */
		pid = getpid();
		break;
	default:
		pid = worker_tid[rnd_below(NR_WORKERS)];
		break;
	}
	if (chance(40))
		cpu = (int)rnd_below(ncpus);
	if (chance(20) && (g = any_fd()))
		group = g->fd;

	fd = (int)bs_perf_event_open(&attr, pid, cpu, group,
				     chance(50) ? PERF_FLAG_FD_CLOEXEC : 0);
	if (fd < 0) {
		n_open_err++;
		return;
	}
	n_open_ok++;
	fds[slot].fd = fd;
	fds[slot].blocked = bs_get_blocked(&attr);
	n_blocked_open += fds[slot].blocked;
	if (chance(70)) {
		size_t pages = (size_t)1 << rnd_below(5);
		size_t len = (pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (p != MAP_FAILED) {
			fds[slot].base = p;
			fds[slot].len = len;
			n_mmap++;
		}
	}
}

static void fuzz_ioctl(void)
{
	struct fuzz_fd *f = any_fd(), *o;
	unsigned long flag = chance(30) ? PERF_IOC_FLAG_GROUP : 0;
	uint64_t v, id;

	if (!f)
		return;
	n_ioctl++;
	switch (rnd_below(10)) {
	case 0:
		ioctl(f->fd, PERF_EVENT_IOC_ENABLE, flag);
		break;
	case 1:
		ioctl(f->fd, PERF_EVENT_IOC_DISABLE, flag);
		break;
	case 2:
		ioctl(f->fd, PERF_EVENT_IOC_RESET, flag);
		break;
	case 3:
		ioctl(f->fd, PERF_EVENT_IOC_REFRESH, (int)rnd_below(5));
		break;
	case 4:
		v = periods[rnd_below(ARRAY_SIZE(periods))];
		ioctl(f->fd, PERF_EVENT_IOC_PERIOD, &v);
		break;
	case 5:
		o = any_fd();
		ioctl(f->fd, PERF_EVENT_IOC_SET_OUTPUT, o && chance(70) ? o->fd : -1);
		break;
	case 6:	/* not a BPF program: must fail cleanly */
		ioctl(f->fd, PERF_EVENT_IOC_SET_BPF, chance(50) ? -1 : f->fd);
		break;
	case 7:
		ioctl(f->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, (unsigned long)chance(50));
		break;
	case 8:
		ioctl(f->fd, PERF_EVENT_IOC_ID, &id);
		break;
	default: {
		uint64_t buf[64];

		(void)!read(f->fd, buf, sizeof(buf));
		break;
	}
	}
}

static void open_io(const char *dev)
{
	char path[] = "/tmp/fuzz_blocked.XXXXXX";
	void *buf;
	int fd, i;

	if (dev) {
		io_fd = open(dev, O_RDONLY | O_DIRECT);
		if (io_fd < 0)
			ksft_print_msg("cannot open %s with O_DIRECT (%s); using a file\n",
				       dev, strerror(errno));
		else
			return;
	}
	fd = mkstemp(path);
	if (fd < 0)
		return;
	unlink(path);
	if (posix_memalign(&buf, IO_SIZE, IO_SIZE) == 0) {
		memset(buf, 0x5a, IO_SIZE);
		for (i = 0; i < IO_SPAN / IO_SIZE; i++)
			(void)!write(fd, buf, IO_SIZE);
		free(buf);
	}
	fsync(fd);
	io_fd = fd;
	/* O_DIRECT where the file system has it, so reads go to the device. */
	if (fcntl(io_fd, F_SETFL, O_DIRECT) < 0)
		ksft_print_msg("no O_DIRECT on /tmp; reads are buffered\n");
}

int main(int argc, char **argv)
{
	const char *env = getenv("FUZZ_SECONDS"), *dev = NULL;
	unsigned long seconds = env ? strtoul(env, NULL, 10) : 60, last_ops[NR_WORKERS];
	uint64_t seed = bs_now_ns(), deadline, next_check;
	long rate0;
	pthread_t th[NR_WORKERS];
	struct bs_klog klog;
	char first[512] = "";
	int opt, i, bad, stalled = -1, err;

	while ((opt = getopt(argc, argv, "t:s:d:h")) != -1) {
		switch (opt) {
		case 't':
			seconds = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'd':
			dev = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-t SECONDS] [-s SEED] [-d BLOCKDEV]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!seconds) {
		fprintf(stderr, "%s: -t/FUZZ_SECONDS must be a positive number of seconds\n",
			argv[0]);
		return 2;
	}

	ksft_print_header();
	err = bs_probe_feature();
	if (err)
		ksft_exit_skip("%s\n", bs_feature_msg(err));
	ksft_set_plan(4);
	rng_state = seed ? seed : 1;
	ksft_print_msg("seed %llu, %lu s (repeat with -s %llu)\n",
		       (unsigned long long)seed, seconds, (unsigned long long)seed);

	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	for (i = 0; i < MAX_FDS; i++)
		fds[i].fd = -1;
	for (i = 0; i < 4; i++)
		if (pipe2(pipes[i / 2][i % 2], O_NONBLOCK))
			ksft_exit_fail_msg("pipe2: %s\n", strerror(errno));
	signal(SIGTRAP, SIG_IGN);	/* sigtrap events on our own thread */
	open_io(dev);
	rate0 = bs_sysctl_read(RATE_PATH);
	if (rate0 > 0) {
		/* the kernel refuses rate writes while the percentage is 0 or 100 */
		long pct = bs_sysctl_read(BS_CPU_TIME_MAX_PERCENT);

		if ((pct == 0 || pct == 100) &&
		    bs_sysctl_set(BS_CPU_TIME_MAX_PERCENT, 25))
			ksft_exit_fail_msg("perf_cpu_time_max_percent is %ld and cannot be set to 25: %s\n",
					   pct, strerror(errno));
	}
	bs_klog_mark(&klog);

	for (i = 0; i < NR_WORKERS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i))
			ksft_exit_fail_msg("pthread_create failed\n");
	while (1) {	/* the workers' tids are targets */
		for (i = 0; i < NR_WORKERS && worker_tid[i]; i++)
			;
		if (i == NR_WORKERS)
			break;
		bs_sleep_ns(BS_NSEC_PER_MSEC);
	}

	deadline = bs_now_ns() + seconds * 1000000000ULL;
	next_check = bs_now_ns() + 5000000000ULL;
	memset(last_ops, 0, sizeof(last_ops));
	while (bs_now_ns() < deadline) {
		unsigned int what = (unsigned int)rnd_below(100);
		struct fuzz_fd *f;

		n_ops++;
		if (what < 25) {
			fuzz_open();
		} else if (what < 35) {
			f = any_fd();
			if (f)
				close_fd(f);
		} else if (what < 65) {
			fuzz_ioctl();
		} else if (what < 85) {
			for (i = 0; i < MAX_FDS; i++)
				if (fds[i].base)
					drain(&fds[i]);
			bs_sleep_ns(rnd_below(2 * BS_NSEC_PER_MSEC));
		} else if (what < 90) {
			prctl(chance(50) ? PR_TASK_PERF_EVENTS_DISABLE :
			      PR_TASK_PERF_EVENTS_ENABLE);
		} else if (what < 92 && rate0 > 0) {
			if (bs_sysctl_write(RATE_PATH, chance(50) ? rate0 :
					    (long)(1 + rnd_below(2000))))
				n_rate_refused++;
			else
				n_rate_changes++;
		} else {
			bs_spin_ns(rnd_below(BS_NSEC_PER_MSEC));
		}
		if (bs_now_ns() >= next_check) {
			/* every worker must get somewhere in 5 s, however slow */
			for (i = 0; i < NR_WORKERS; i++) {
				unsigned long o = atomic_load(&worker_ops[i]);

				if (o == last_ops[i] && stalled < 0)
					stalled = i;
				last_ops[i] = o;
			}
			next_check = bs_now_ns() + 5000000000ULL;
		}
	}
	prctl(PR_TASK_PERF_EVENTS_ENABLE);
	for (i = 0; i < MAX_FDS; i++) {
		if (fds[i].base)
			drain(&fds[i]);
		if (fds[i].fd >= 0)
			close_fd(&fds[i]);
	}
	atomic_store(&stop, true);
	pthread_cond_broadcast(&cond);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(th[i], NULL);
	if (rate0 > 0 && bs_sysctl_write(RATE_PATH, rate0))
		ksft_print_msg("could not restore perf_event_max_sample_rate %ld: %s\n",
			       rate0, strerror(errno));
	bs_sysctl_restore();

	ksft_print_msg("%lu operations: %lu opens (%lu with the blocked bit), %lu refused, %lu ioctls, %lu mmaps, %lu rate changes (%lu refused)\n",
		       n_ops, n_open_ok, n_blocked_open, n_open_err, n_ioctl,
		       n_mmap, n_rate_changes, n_rate_refused);
	ksft_print_msg("%lu records read, %lu blocked samples among them\n",
		       n_records, n_blocked_records);
	for (i = 0; i < NR_WORKERS; i++)
		ksft_print_msg("worker %d: %lu operations\n", i,
			       atomic_load(&worker_ops[i]));

	bad = bs_klog_scan(&klog, first, sizeof(first));
	if (bad)
		ksft_print_msg("first: %s\n", first);
	ksft_test_result(bad == 0, "no BUG/WARNING/Oops in the kernel log (%d lines)\n", bad);
	ksft_test_result(stalled < 0, "every worker made progress in each 5 s window%s\n",
			 stalled < 0 ? "" : " (one stalled: lost wake-up or deadlock?)");
	ksft_test_result(n_blocked_records > 0,
			 "blocked samples were written (%lu): the paths were exercised\n",
			 n_blocked_records);
	ksft_test_result(n_rate_refused == 0,
			 "every perf_event_max_sample_rate change was taken (%lu of %lu refused)\n",
			 n_rate_refused, n_rate_changes + n_rate_refused);
	ksft_finished();
}
