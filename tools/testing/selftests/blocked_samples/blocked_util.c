// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers for the blocked samples selftests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "blocked_util.h"

_Static_assert(offsetof(struct perf_event_attr, read_format) + 8 == BS_ATTR_FLAGS_OFFSET,
	       "flags word of perf_event_attr is not at byte offset 40");

const char *const bs_class_name[BS_NR_CLASSES] = {
	[BS_ONCPU] = "on-CPU", [BS_B] = "B", [BS_I] = "I", [BS_S] = "S",
	[BS_L] = "L", [BS_BAD] = "multi-bit",
};

uint64_t bs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

double bs_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

void bs_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ULL,
		.tv_nsec = ns % 1000000000ULL,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void bs_spin_ns(uint64_t ns)
{
	uint64_t end = bs_now_ns() + ns;

	while (bs_now_ns() < end)
		;
}

unsigned long bs_spin_nap(uint64_t run_ns, uint64_t spin_ns, uint64_t nap_ns)
{
	uint64_t t0 = bs_now_ns();
	unsigned long naps = 0;

	while (bs_now_ns() - t0 < run_ns) {
		bs_spin_ns(spin_ns);
		bs_sleep_ns(nap_ns);
		naps++;
	}
	return naps;
}

pid_t bs_gettid(void)
{
	return syscall(__NR_gettid);
}

int bs_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bs_pick_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = CPU_SETSIZE - 1; cpu > 0; cpu--)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

void bs_set_blocked(struct perf_event_attr *attr)
{
#if BS_HAVE_ATTR_BLOCKED
	attr->blocked = 1;
#else
	uint64_t flags;

	memcpy(&flags, (char *)attr + BS_ATTR_FLAGS_OFFSET, sizeof(flags));
	flags |= 1ULL << BS_ATTR_BLOCKED_BIT;
	memcpy((char *)attr + BS_ATTR_FLAGS_OFFSET, &flags, sizeof(flags));
#endif
}

void bs_attr_monotonic(struct perf_event_attr *attr)
{
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

void bs_attr_switch_records(struct perf_event_attr *attr)
{
	attr->context_switch = 1;
	attr->sample_id_all = 1;
	bs_attr_monotonic(attr);
}

bool bs_get_blocked(const struct perf_event_attr *attr)
{
	uint64_t flags;

	memcpy(&flags, (const char *)attr + BS_ATTR_FLAGS_OFFSET, sizeof(flags));
	return flags & (1ULL << BS_ATTR_BLOCKED_BIT);
}

void bs_make_attr(struct perf_event_attr *attr, uint64_t period_ns, bool blocked)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->sample_period = period_ns;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT |
			    PERF_SAMPLE_CALLCHAIN;
	attr->exclude_hv = 1;
	attr->wakeup_events = 1;
	if (blocked)
		bs_set_blocked(attr);
}

long bs_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int bs_event_open(struct bs_event *ev, struct perf_event_attr *attr,
		  pid_t pid, int cpu, unsigned int data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->sample_type = attr->sample_type;
	ev->sample_id_all = attr->sample_id_all;
	ev->fd = bs_perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0) {
		err = errno;
		ev->fd = -1;
		return -err;
	}
	if (!data_pages)
		return 0;
	ev->mmap_len = (size_t)(data_pages + 1) * page;
	ev->base = mmap(NULL, ev->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			ev->fd, 0);
	if (ev->base == MAP_FAILED) {
		err = errno;
		ev->base = NULL;
		close(ev->fd);
		ev->fd = -1;
		return -err;
	}
	return 0;
}

static int switch_tracker_open(struct bs_event *ev, pid_t pid, int cpu,
			       unsigned int data_pages)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	bs_attr_switch_records(&attr);
	return bs_event_open(ev, &attr, pid, cpu, data_pages);
}

int bs_switch_tracker_open(struct bs_event *ev, pid_t pid)
{
	return switch_tracker_open(ev, pid, -1, 64);
}

int bs_cpu_switch_tracker_open(struct bs_event *ev, int cpu,
			       unsigned int data_pages)
{
	return switch_tracker_open(ev, -1, cpu, data_pages);
}

void bs_samples_free(struct bs_samples *smp)
{
	size_t i;

	for (i = 0; i < smp->nr; i++)
		free(smp->s[i].chain);
	free(smp->s);
	free(smp->sw);
	memset(smp, 0, sizeof(*smp));
}

void bs_event_close(struct bs_event *ev)
{
	if (ev->base)
		munmap(ev->base, ev->mmap_len);
	if (ev->fd >= 0)
		close(ev->fd);
	ev->base = NULL;
	ev->fd = -1;
	bs_samples_free(&ev->smp);
}

static struct bs_sample *bs_samples_add(struct bs_samples *smp);

static int add_switch(struct bs_samples *smp, const struct bs_switch *sw)
{
	if (smp->nr_sw == smp->alloc_sw) {
		size_t n = smp->alloc_sw ? smp->alloc_sw * 2 : 1024;
		struct bs_switch *p = realloc(smp->sw, n * sizeof(*p));

		if (!p)
			return -1;
		smp->sw = p;
		smp->alloc_sw = n;
	}
	smp->sw[smp->nr_sw++] = *sw;
	return 0;
}

int bs_samples_move(struct bs_samples *dst, struct bs_samples *src)
{
	size_t i;

	for (i = 0; i < src->nr; i++) {
		struct bs_sample *s = bs_samples_add(dst);

		if (!s)
			return -1;
		*s = src->s[i];
		src->s[i].chain = NULL;
	}
	for (i = 0; i < src->nr_sw; i++)
		if (add_switch(dst, &src->sw[i]))
			return -1;
	dst->lost += src->lost;
	dst->nr_lost_records += src->nr_lost_records;
	dst->nr_throttle += src->nr_throttle;
	dst->nr_unthrottle += src->nr_unthrottle;
	dst->nr_other += src->nr_other;
	dst->parse_error |= src->parse_error;
	bs_samples_free(src);
	return 0;
}

uint64_t bs_event_count(const struct bs_event *ev)
{
	uint64_t count;

	if (read(ev->fd, &count, sizeof(count)) != sizeof(count))
		return 0;
	return count;
}

static struct bs_sample *bs_samples_add(struct bs_samples *smp)
{
	if (smp->nr == smp->alloc) {
		size_t n = smp->alloc ? smp->alloc * 2 : 1024;
		struct bs_sample *s = realloc(smp->s, n * sizeof(*s));

		if (!s)
			return NULL;
		smp->s = s;
		smp->alloc = n;
	}
	memset(&smp->s[smp->nr], 0, sizeof(smp->s[0]));
	return &smp->s[smp->nr++];
}

/* Fetch the next u64 of a record; false if the record is too short. */
static bool take_u64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (*p + 8 > end)
		return false;
	memcpy(v, *p, 8);
	*p += 8;
	return true;
}

static int parse_sample(struct bs_samples *smp, uint64_t type,
			const struct perf_event_header *hdr)
{
	const uint8_t *p = (const uint8_t *)(hdr + 1);
	const uint8_t *end = (const uint8_t *)hdr + hdr->size;
	const uint64_t known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			       PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_WEIGHT;
	struct bs_sample *s;
	uint64_t v;

	if (type & ~known)
		return -1;
	s = bs_samples_add(smp);
	if (!s)
		return -1;
	s->misc = hdr->misc;
	if ((type & PERF_SAMPLE_IDENTIFIER) && !take_u64(&p, end, &v))
		return -1;
	if ((type & PERF_SAMPLE_IP) && !take_u64(&p, end, &s->ip))
		return -1;
	if (type & PERF_SAMPLE_TID) {
		if (!take_u64(&p, end, &v))
			return -1;
		memcpy(&s->pid, &v, 4);
		memcpy(&s->tid, (uint8_t *)&v + 4, 4);
	}
	if ((type & PERF_SAMPLE_TIME) && !take_u64(&p, end, &s->time))
		return -1;
	if ((type & PERF_SAMPLE_ADDR) && !take_u64(&p, end, &v))
		return -1;
	if ((type & PERF_SAMPLE_ID) && !take_u64(&p, end, &v))
		return -1;
	if ((type & PERF_SAMPLE_STREAM_ID) && !take_u64(&p, end, &v))
		return -1;
	if ((type & PERF_SAMPLE_CPU) && !take_u64(&p, end, &v))
		return -1;
	if ((type & PERF_SAMPLE_PERIOD) && !take_u64(&p, end, &s->period))
		return -1;
	/* read_format 0: the event's count alone */
	if ((type & PERF_SAMPLE_READ) && !take_u64(&p, end, &s->count))
		return -1;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		if (!take_u64(&p, end, &s->nr_chain))
			return -1;
		if (s->nr_chain > (uint64_t)(end - p) / 8)
			return -1;
		if (s->nr_chain) {
			s->chain = malloc(s->nr_chain * 8);
			if (!s->chain)
				return -1;
			memcpy(s->chain, p, s->nr_chain * 8);
			p += s->nr_chain * 8;
		}
	}
	if ((type & PERF_SAMPLE_WEIGHT) && !take_u64(&p, end, &s->weight))
		return -1;
	return 0;
}

/*
 * A PERF_RECORD_SWITCH (per-task: no body) or PERF_RECORD_SWITCH_CPU_WIDE
 * (@cpu_wide: a body of the other task's pid and tid) and its sample_id
 * trailer, whose tid is the task switched out or in.
 */
static int parse_switch(struct bs_samples *smp, uint64_t type,
			const struct perf_event_header *hdr, bool cpu_wide)
{
	const uint8_t *p = (const uint8_t *)(hdr + 1);
	const uint8_t *end = (const uint8_t *)hdr + hdr->size;
	struct bs_switch sw = {
		.out = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT,
		.preempt = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
	};
	uint64_t v;

	if (!(type & PERF_SAMPLE_TID) || !(type & PERF_SAMPLE_TIME))
		return 0;	/* cannot attribute it: ignore */
	if (cpu_wide) {
		if (!take_u64(&p, end, &v))
			return -1;
		memcpy(&sw.other, (uint8_t *)&v + 4, 4);
	}
	if (!take_u64(&p, end, &v))
		return -1;
	memcpy(&sw.tid, (uint8_t *)&v + 4, 4);
	if (!take_u64(&p, end, &sw.time))
		return -1;
	return add_switch(smp, &sw);
}

int bs_event_drain(struct bs_event *ev)
{
	struct perf_event_mmap_page *pg = ev->base;
	struct bs_samples *smp = &ev->smp;
	size_t before = smp->nr;
	uint8_t *data, rec[65536];
	uint64_t head, tail, size;

	if (!pg)
		return -1;
	data = (uint8_t *)ev->base + pg->data_offset;
	size = pg->data_size;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t off = tail % size;
		size_t first;

		if (head - tail < sizeof(hdr))
			goto bad;
		/* The header itself may straddle the end of the buffer. */
		first = size - off < sizeof(hdr) ? size - off : sizeof(hdr);
		memcpy(&hdr, data + off, first);
		memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			goto bad;
		first = size - off < hdr.size ? size - off : hdr.size;
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, hdr.size - first);

		if (hdr.type == PERF_RECORD_SAMPLE) {
			if (parse_sample(smp, ev->sample_type,
					 (struct perf_event_header *)rec))
				goto bad;
		} else if (hdr.type == PERF_RECORD_SWITCH && ev->sample_id_all) {
			if (parse_switch(smp, ev->sample_type,
					 (struct perf_event_header *)rec, false))
				goto bad;
		} else if (hdr.type == PERF_RECORD_SWITCH_CPU_WIDE &&
			   ev->sample_id_all) {
			if (parse_switch(smp, ev->sample_type,
					 (struct perf_event_header *)rec, true))
				goto bad;
		} else if (hdr.type == PERF_RECORD_LOST) {
			uint64_t lost;

			/* struct { header; u64 id; u64 lost; } */
			if (hdr.size >= sizeof(hdr) + 16) {
				memcpy(&lost, rec + sizeof(hdr) + 8, 8);
				smp->lost += lost;
			}
			smp->nr_lost_records++;
		} else if (hdr.type == PERF_RECORD_THROTTLE) {
			smp->nr_throttle++;
		} else if (hdr.type == PERF_RECORD_UNTHROTTLE) {
			smp->nr_unthrottle++;
		} else {
			smp->nr_other++;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return smp->nr - before;
bad:
	smp->parse_error = 1;
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return -1;
}

int bs_probe_feature(void)
{
	struct perf_event_attr attr;
	int fd;

	bs_make_attr(&attr, BS_DEFAULT_PERIOD_NS, true);
	attr.disabled = 1;
	fd = bs_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

const char *bs_feature_msg(int err)
{
	switch (err) {
	case 0:
		return "blocked samples supported";
	case EINVAL:
		return "perf_event_open(task-clock, blocked=1) failed with EINVAL: this kernel "
		       "does not know attr.blocked (bit 38 is reserved); boot the kernel built "
		       "with this project's patches/series";
	case EOPNOTSUPP:
		return "perf_event_open(task-clock, blocked=1) failed with EOPNOTSUPP: kernel "
		       "has the patches but CONFIG_PERF_BLOCKED_SAMPLES is not set; enable it";
	case EACCES:
	case EPERM:
		return "perf_event_open() not permitted: run as root or lower "
		       "/proc/sys/kernel/perf_event_paranoid";
	case ENOSYS:
		return "perf_event_open() not available: kernel built without CONFIG_PERF_EVENTS";
	default:
		return "perf_event_open(task-clock, blocked=1) failed with an unexpected error";
	}
}

enum bs_class bs_sample_class(const struct bs_sample *s)
{
	switch (s->misc & PERF_RECORD_MISC_BLOCKED_MASK) {
	case 0:
		return BS_ONCPU;
	case PERF_RECORD_MISC_BLOCKED_OTHER:
		return BS_B;
	case PERF_RECORD_MISC_BLOCKED_IO:
		return BS_I;
	case PERF_RECORD_MISC_BLOCKED_SCHED:
		return BS_S;
	case PERF_RECORD_MISC_BLOCKED_LOCK:
		return BS_L;
	default:
		return BS_BAD;
	}
}

static bool match(const struct bs_sample *s, int tid, enum bs_class c)
{
	return (tid < 0 || s->tid == (uint32_t)tid) && bs_sample_class(s) == c;
}

uint64_t bs_sum_weight(const struct bs_samples *smp, int tid, enum bs_class c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < smp->nr; i++)
		if (match(&smp->s[i], tid, c))
			sum += smp->s[i].weight;
	return sum;
}

size_t bs_count(const struct bs_samples *smp, int tid, enum bs_class c)
{
	size_t n = 0, i;

	for (i = 0; i < smp->nr; i++)
		if (match(&smp->s[i], tid, c))
			n++;
	return n;
}

uint64_t bs_max_weight(const struct bs_samples *smp, int tid, enum bs_class c)
{
	uint64_t max = 0;
	size_t i;

	for (i = 0; i < smp->nr; i++)
		if (match(&smp->s[i], tid, c) && smp->s[i].weight > max)
			max = smp->s[i].weight;
	return max;
}

/*
 * Walk @tid's off-CPU intervals by its switch records (all tids if @tid < 0):
 * each switch-in that follows a switch-out is one interval, reported with
 * the two times in *out and *in (in < out is possible and left to the
 * caller).  *pos starts at 0; returns false when there are no more.
 */
static bool bs_next_offcpu(const struct bs_samples *smp, int tid, size_t *pos,
			   uint64_t *out, uint64_t *in)
{
	uint64_t last_out = 0;

	for (; *pos < smp->nr_sw; (*pos)++) {
		const struct bs_switch *sw = &smp->sw[*pos];

		if (tid >= 0 && sw->tid != (uint32_t)tid)
			continue;
		if (sw->out) {
			last_out = sw->time;
		} else if (last_out) {
			*out = last_out;
			*in = sw->time;
			(*pos)++;
			return true;
		}
	}
	return false;
}

uint64_t bs_offcpu_ns(const struct bs_samples *smp, int tid, size_t *nr)
{
	uint64_t sum = 0, out, in;
	size_t pos = 0, n = 0;

	while (bs_next_offcpu(smp, tid, &pos, &out, &in)) {
		if (in > out)
			sum += in - out;
		n++;
	}
	if (nr)
		*nr = n;
	return sum;
}

void bs_offcpu_bounds(const struct bs_samples *smp, int tid, uint64_t from,
		      uint64_t to, uint64_t period, uint64_t slack,
		      struct bs_offcpu *o)
{
	uint64_t out, in, len;
	size_t pos = 0;

	memset(o, 0, sizeof(*o));
	while (bs_next_offcpu(smp, tid, &pos, &out, &in)) {
		if (out < from || (to && in > to) || in <= out)
			continue;
		len = in - out;
		o->ns += len;
		o->nr++;
		o->max_points += len / period + 1;
		if (len > slack)
			o->min_points += (len - slack) / period;
	}
}

uint64_t bs_sum_weight_between(const struct bs_samples *smp, int tid,
			       enum bs_class c, uint64_t from, uint64_t to)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < smp->nr; i++)
		if (match(&smp->s[i], tid, c) && smp->s[i].time > from &&
		    smp->s[i].time <= to)
			sum += smp->s[i].weight;
	return sum;
}

uint64_t bs_sum_blocked_between(const struct bs_samples *smp, int tid,
				uint64_t from, uint64_t to)
{
	uint64_t sum = 0;
	int c;

	for (c = BS_B; c < BS_NR_CLASSES; c++)
		sum += bs_sum_weight_between(smp, tid, c, from, to);
	return sum;
}

size_t bs_point_offsets(const struct bs_samples *smp, int tid, uint64_t period,
		       uint64_t tail, int64_t *min_all, int64_t *min_tail)
{
	uint64_t points = 0;
	size_t i, n = 0;
	int64_t d;

	*min_all = *min_tail = INT64_MAX;
	for (i = 0; i < smp->nr; i++) {
		const struct bs_sample *s = &smp->s[i];

		if (tid >= 0 && s->tid != (uint32_t)tid)
			continue;
		points += s->weight;
		if (bs_sample_class(s) != BS_ONCPU)
			continue;
		d = (int64_t)s->time - (int64_t)(points * period);
		if (d < *min_all)
			*min_all = d;
		if (s->time > tail) {
			n++;
			if (d < *min_tail)
				*min_tail = d;
		}
	}
	return n;
}

uint64_t bs_sum_weight_all(const struct bs_samples *smp, int tid)
{
	uint64_t sum = 0;
	int c;

	for (c = BS_ONCPU; c < BS_NR_CLASSES; c++)
		sum += bs_sum_weight(smp, tid, c);
	return sum;
}

const char *bs_summary(const struct bs_samples *smp, int tid, char *buf, size_t len)
{
	size_t used = 0;
	int c;

	buf[0] = '\0';
	for (c = BS_ONCPU; c < BS_NR_CLASSES && used < len; c++)
		used += snprintf(buf + used, len - used, "%s%s: n=%zu w=%llu",
				 c ? ", " : "", bs_class_name[c], bs_count(smp, tid, c),
				 (unsigned long long)bs_sum_weight(smp, tid, c));
	if (used < len)
		snprintf(buf + used, len - used, "; lost=%llu",
			 (unsigned long long)smp->lost);
	return buf;
}

int bs_chain_user_entries(const struct bs_sample *s)
{
	uint64_t i;

	for (i = 0; i < s->nr_chain; i++)
		if (s->chain[i] == PERF_CONTEXT_USER)
			return s->nr_chain - i - 1;
	return -1;
}

bool bs_chain_has_marker(const struct bs_sample *s, uint64_t marker)
{
	uint64_t i;

	for (i = 0; i < s->nr_chain; i++)
		if (s->chain[i] == marker)
			return true;
	return false;
}

bool bs_chain_has_kernel_addr(const struct bs_sample *s)
{
	uint64_t i;

	for (i = 0; i < s->nr_chain; i++)
		if (s->chain[i] >= BS_KERNEL_ADDR_MIN &&
		    s->chain[i] < (uint64_t)PERF_CONTEXT_MAX)
			return true;
	return false;
}

/* ---- /proc/kallsyms ---- */

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *ksyms;
static size_t nr_ksyms;
static int ksyms_loaded;	/* 0 not tried, 1 ok, -1 unavailable */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms_load(void)
{
	char line[512], name[256], type;
	unsigned long long addr;
	size_t alloc = 0;
	FILE *f;

	ksyms_loaded = -1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue;	/* kptr_restrict hides addresses */
		if (nr_ksyms == alloc) {
			struct ksym *n;

			alloc = alloc ? alloc * 2 : 65536;
			n = realloc(ksyms, alloc * sizeof(*n));
			if (!n)
				break;
			ksyms = n;
		}
		ksyms[nr_ksyms].addr = addr;
		ksyms[nr_ksyms].name = strdup(name);
		nr_ksyms++;
	}
	fclose(f);
	if (!nr_ksyms)
		return;
	qsort(ksyms, nr_ksyms, sizeof(*ksyms), ksym_cmp);
	ksyms_loaded = 1;
}

bool bs_ksyms_available(void)
{
	if (!ksyms_loaded)
		ksyms_load();
	return ksyms_loaded > 0;
}

const char *bs_ksym_name(uint64_t addr)
{
	size_t lo = 0, hi;

	if (!bs_ksyms_available() || addr < ksyms[0].addr)
		return NULL;
	hi = nr_ksyms;
	while (hi - lo > 1) {		/* last symbol with start <= addr */
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return ksyms[lo].name;
}

bool bs_ksym_forbidden(const char *name)
{
	static const char *const exact[] = {
		"schedule", "finish_task_switch", "context_switch",
		"prepare_task_switch", "event_sched_in", "event_sched_out",
		"group_sched_in", "group_sched_out", "ctx_sched_in",
		"ctx_sched_out", "merge_sched_in", "visit_groups_merge",
		"ctx_groups_sched_in", "ctx_flexible_sched_in",
		"ctx_pinned_sched_in", NULL,
	};
	static const char *const prefix[] = { "perf_", "task_clock_", NULL };
	char base[256];
	char *dot;
	int i;

	while (*name == '_')
		name++;
	snprintf(base, sizeof(base), "%s", name);
	dot = strchr(base, '.');	/* finish_task_switch.isra.0 */
	if (dot)
		*dot = '\0';
	for (i = 0; exact[i]; i++)
		if (!strcmp(base, exact[i]))
			return true;
	for (i = 0; prefix[i]; i++)
		if (!strncmp(base, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

void bs_check_context(const struct bs_samples *smp, int tid, enum bs_class c,
		      bool want_kernel_ip, struct bs_ctx_report *rep)
{
	size_t i;

	memset(rep, 0, sizeof(*rep));
	for (i = 0; i < smp->nr; i++) {
		const struct bs_sample *s = &smp->s[i];
		const char *sym = NULL;
		int user;

		if (!match(s, tid, c))
			continue;
		rep->checked++;
		user = bs_chain_user_entries(s);
		if (user < 2) {
			rep->no_user_chain++;
			if (!rep->first_problem[0])
				snprintf(rep->first_problem, sizeof(rep->first_problem),
					 "sample %zu: user callchain part has %d entries "
					 "(-1 = no PERF_CONTEXT_USER), chain nr=%llu",
					 i, user, (unsigned long long)s->nr_chain);
		}
		if (!want_kernel_ip)
			continue;
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL) {
			rep->bad_cpumode++;
			if (!rep->first_problem[0])
				snprintf(rep->first_problem, sizeof(rep->first_problem),
					 "sample %zu: cpumode %u, want KERNEL (1)", i,
					 s->misc & PERF_RECORD_MISC_CPUMODE_MASK);
		}
		if (s->ip < BS_KERNEL_ADDR_MIN) {
			rep->not_kernel_ip++;
			if (!rep->first_problem[0])
				snprintf(rep->first_problem, sizeof(rep->first_problem),
					 "sample %zu: ip %#llx is not a kernel address", i,
					 (unsigned long long)s->ip);
			continue;
		}
		sym = bs_ksym_name(s->ip);
		if (!sym) {
			rep->unresolved++;
			continue;
		}
		if (bs_ksym_forbidden(sym)) {
			rep->forbidden_sym++;
			if (!rep->first_problem[0])
				snprintf(rep->first_problem, sizeof(rep->first_problem),
					 "sample %zu: ip %#llx is in %s (scheduler/perf "
					 "frames must be removed)", i,
					 (unsigned long long)s->ip, sym);
		} else if (!rep->example[0]) {
			snprintf(rep->example, sizeof(rep->example), "%s", sym);
		}
	}
}

/* ---- kernel log ---- */

static const char *const klog_bad[] = {
	"BUG:", "WARNING:", "Oops", "Call Trace", "general protection", NULL,
};

static bool klog_line_bad(const char *line)
{
	int i;

	for (i = 0; klog_bad[i]; i++)
		if (strstr(line, klog_bad[i]))
			return true;
	return false;
}

static int klogctl_count(char *first, size_t len)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	int n, count = 0;
	char *buf, *line, *save;

	if (size <= 0)
		return 0;
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!klog_line_bad(line))
			continue;
		if (!count && first)
			snprintf(first, len, "%s", line);
		count++;
	}
	free(buf);
	return count;
}

void bs_klog_mark(struct bs_klog *k)
{
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0 && lseek(k->fd, 0, SEEK_END) < 0) {
		close(k->fd);
		k->fd = -1;
	}
	k->base_count = k->fd < 0 ? klogctl_count(NULL, 0) : 0;
}

int bs_klog_scan(struct bs_klog *k, char *first, size_t len)
{
	char rec[8192];
	int count = 0;
	ssize_t n;

	if (first && len)
		first[0] = '\0';
	if (k->fd < 0) {
		count = klogctl_count(first, len) - k->base_count;
		return count < 0 ? 0 : count;
	}
	for (;;) {
		n = read(k->fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten; go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (klog_line_bad(rec)) {
			if (!count && first)
				snprintf(first, len, "%s", rec);
			count++;
		}
	}
	close(k->fd);
	k->fd = -1;
	return count;
}

char bs_task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

#define BS_NULLB_CFS	"/sys/kernel/config/nullb"

static int write_attr(const char *dir, const char *attr, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : (n < 0 ? -errno : -EIO);
}

void bs_nullb_destroy(struct bs_nullb *nb)
{
	if (!nb->dir[0])
		return;
	if (nb->powered)
		write_attr(nb->dir, "power", "0");
	nb->powered = false;
	rmdir(nb->dir);
	nb->dir[0] = '\0';
}

int bs_nullb_create(struct bs_nullb *nb, const char *prefix,
		    const char *const (*attrs)[2], size_t nattrs,
		    char *why, size_t wlen)
{
	size_t i;
	int err;

	memset(nb, 0, sizeof(*nb));
	if (access(BS_NULLB_CFS, F_OK))
		mount("configfs", "/sys/kernel/config", "configfs", 0, NULL);
	if (access(BS_NULLB_CFS, F_OK)) {
		snprintf(why, wlen, "%s missing: needs null_blk (CONFIG_BLK_DEV_NULL_BLK, "
			 "or modprobe null_blk) and configfs", BS_NULLB_CFS);
		return 1;
	}
	snprintf(nb->name, sizeof(nb->name), "%s%d", prefix, getpid());
	snprintf(nb->dir, sizeof(nb->dir), BS_NULLB_CFS "/%s", nb->name);
	if (mkdir(nb->dir, 0755)) {
		snprintf(why, wlen, "mkdir %s: %s", nb->dir, strerror(errno));
		nb->dir[0] = '\0';
		return -1;
	}
	for (i = 0; i <= nattrs; i++) {
		const char *attr = i < nattrs ? attrs[i][0] : "power";

		err = write_attr(nb->dir, attr, i < nattrs ? attrs[i][1] : "1");
		if (err) {
			snprintf(why, wlen, "%s/%s: %s", nb->dir, attr, strerror(-err));
			bs_nullb_destroy(nb);
			return -1;
		}
	}
	nb->powered = true;
	return 0;
}

long bs_sysctl_read(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int bs_sysctl_write(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", v) > 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

static struct {
	const char *path;
	long value;
} bs_sysctl_saved[4];
static int bs_sysctl_nsaved;

int bs_sysctl_set(const char *path, long v)
{
	long old;
	int i;

	for (i = 0; i < bs_sysctl_nsaved; i++)
		if (!strcmp(bs_sysctl_saved[i].path, path))
			return bs_sysctl_write(path, v);
	if (bs_sysctl_nsaved ==
	    (int)(sizeof(bs_sysctl_saved) / sizeof(bs_sysctl_saved[0]))) {
		errno = ENOSPC;
		return -1;
	}
	old = bs_sysctl_read(path);
	if (old < 0 || bs_sysctl_write(path, v))
		return -1;
	bs_sysctl_saved[bs_sysctl_nsaved].path = path;
	bs_sysctl_saved[bs_sysctl_nsaved++].value = old;
	return 0;
}

static bool bs_sysctl_is_saved(const char *path)
{
	int i;

	for (i = 0; i < bs_sysctl_nsaved; i++)
		if (!strcmp(bs_sysctl_saved[i].path, path))
			return true;
	return false;
}

/*
 * The kernel refuses a write to perf_event_max_sample_rate while
 * perf_cpu_time_max_percent is 0 or 100 (perf_proc_update_handler()).
 */
static bool bs_rate_locked(void)
{
	long pct = bs_sysctl_read(BS_CPU_TIME_MAX_PERCENT);

	return pct == 0 || pct == 100;
}

/*
 * Before a rate is written back: lift a locking percentage to its default,
 * only when the test saved the percentage too, so that its own value is
 * written back after.
 */
static void bs_sysctl_rate_writable(void)
{
	if (bs_rate_locked() && bs_sysctl_is_saved(BS_CPU_TIME_MAX_PERCENT))
		bs_sysctl_write(BS_CPU_TIME_MAX_PERCENT, 25);
}

void bs_sysctl_restore(void)
{
	/* In the reverse order of setting. */
	while (bs_sysctl_nsaved > 0) {
		const char *path = bs_sysctl_saved[bs_sysctl_nsaved - 1].path;

		if (!strcmp(path, BS_MAX_SAMPLE_RATE))
			bs_sysctl_rate_writable();
		bs_sysctl_write(path, bs_sysctl_saved[bs_sysctl_nsaved - 1].value);
		bs_sysctl_nsaved--;
	}
}

int bs_raise_sample_rate(long rate)
{
	errno = 0;
	/* a locking percentage would refuse the rate: 25 until it is set */
	if ((bs_rate_locked() && bs_sysctl_set(BS_CPU_TIME_MAX_PERCENT, 25)) ||
	    bs_sysctl_set(BS_MAX_SAMPLE_RATE, rate) ||
	    bs_sysctl_set(BS_CPU_TIME_MAX_PERCENT, 0))
		return errno ? -errno : -EIO;	/* a failed read sets none */
	return 0;
}
