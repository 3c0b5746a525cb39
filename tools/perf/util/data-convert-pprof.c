// SPDX-License-Identifier: GPL-2.0
/*
 * pprof export: perf data convert --to-pprof profile.pb.gz
 *
 * Writes the samples of a perf.data file as a gzipped profile.proto, the
 * format read by `go tool pprof`, Pyroscope, Parca and Grafana.  Each pprof
 * sample has two values: the sampling points it stands for (a blocked
 * sample of weight N counts N) and its period (for the clock events,
 * nanoseconds: weight x sample period).  Labels say where the time went
 * ("class": on-cpu, io, lock, sched, other), what the thread waited for
 * ("wait", blocked samples only, see wait-reason.h), the thread ("tid",
 * "pid", "comm") and, when the file has several events, the event.
 * Stacks are resolved as perf report resolves them (frame pointers, LBR
 * or DWARF unwinding); every distinct stack with the same labels becomes
 * one sample.  Locations carry the address, the mapping (file name, build
 * id, address range) and the function, demangled, with the source file
 * and line when the binary has debug information.
 *
 * The messages are protobuf-c's, generated from profile.proto.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_ZLIB_SUPPORT
#include <zlib.h>
#endif
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "data-convert.h"
#include "blocked.h"
#include "build-id.h"
#include "callchain.h"
#include "debug.h"
#include "dso.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "hashmap.h"
#include "map.h"
#include "session.h"
#include "srcline.h"
#include "symbol.h"
#include "thread.h"
#include "tool.h"
#include "wait-reason.h"
#include "profile.pb-c.h"

#define PPROF_MAX_STACK		1024
#define PPROF_MAX_LABELS	6

/* A growing array of pointers (the repeated fields of the profile). */
struct ptr_vec {
	void	**v;
	size_t	n, cap;
};

static int ptr_vec__push(struct ptr_vec *vec, void *p)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 64;
		void **v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = p;
	return 0;
}

/* Keys of the location and sample tables. */
struct loc_key {
	struct map	*map;
	struct symbol	*sym;	/* inlined frames share the ip of their caller */
	u64		ip;
};

struct sample_key {
	size_t		nr_locs;
	const u64	*locs;
	int		nr_labels;
	/* key and value string indexes of the labels */
	s64		labels[PPROF_MAX_LABELS][2];
};

struct convert_pprof {
	struct perf_tool	tool;
	struct perf_session	*session;
	struct hashmap		*strings;	/* char * -> index + 1 */
	struct hashmap		*mappings;	/* struct map * -> mapping */
	struct hashmap		*functions;	/* symbol or dso -> function */
	struct hashmap		*locations;	/* struct loc_key * -> location */
	struct hashmap		*samples;	/* struct sample_key * -> sample */
	struct ptr_vec		string_table, mapping, function, location, sample;
	struct ptr_vec		held_maps;	/* references taken on struct map */
	u64			locs[PPROF_MAX_STACK];
	bool			several_events;
	u64			first_time, last_time;
	u64			nr_samples, points, period;
	s64			key_class, key_wait, key_tid, key_pid, key_comm, key_event;
};

static size_t str_hash_fn(const void *key, void *ctx __maybe_unused)
{
	return str_hash(key);
}

static bool str_equal_fn(const void *a, const void *b, void *ctx __maybe_unused)
{
	return !strcmp(a, b);
}

static size_t ptr_hash_fn(const void *key, void *ctx __maybe_unused)
{
	return (size_t)key * 0x9E3779B97F4A7C15ULL >> 16;
}

static bool ptr_equal_fn(const void *a, const void *b, void *ctx __maybe_unused)
{
	return a == b;
}

static size_t hash_mix(size_t h, u64 v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

static size_t loc_hash_fn(const void *key, void *ctx __maybe_unused)
{
	const struct loc_key *k = key;

	return hash_mix(hash_mix(hash_mix(0xcbf29ce484222325ULL, (uintptr_t)k->map),
				 (uintptr_t)k->sym), k->ip);
}

static bool loc_equal_fn(const void *a, const void *b, void *ctx __maybe_unused)
{
	const struct loc_key *x = a, *y = b;

	return x->map == y->map && x->sym == y->sym && x->ip == y->ip;
}

static size_t sample_hash_fn(const void *key, void *ctx __maybe_unused)
{
	const struct sample_key *k = key;
	size_t h = 0xcbf29ce484222325ULL, i;
	int l;

	for (i = 0; i < k->nr_locs; i++)
		h = hash_mix(h, k->locs[i]);
	for (l = 0; l < k->nr_labels; l++)
		h = hash_mix(hash_mix(h, k->labels[l][0]), k->labels[l][1]);
	return h;
}

static bool sample_equal_fn(const void *a, const void *b, void *ctx __maybe_unused)
{
	const struct sample_key *x = a, *y = b;

	return x->nr_locs == y->nr_locs && x->nr_labels == y->nr_labels &&
	       !memcmp(x->locs, y->locs, x->nr_locs * sizeof(*x->locs)) &&
	       !memcmp(x->labels, y->labels, x->nr_labels * sizeof(x->labels[0]));
}

/* Index of s in the string table, adding it; -ENOMEM on failure. */
static s64 pprof__string(struct convert_pprof *c, const char *s)
{
	void *idx;
	char *copy;

	if (!s)
		s = "";
	if (hashmap__find(c->strings, s, &idx))
		return (uintptr_t)idx - 1;
	copy = strdup(s);
	if (!copy || ptr_vec__push(&c->string_table, copy))
		goto out_enomem;
	if (hashmap__add(c->strings, copy, (void *)(uintptr_t)c->string_table.n)) {
		c->string_table.n--;
		goto out_enomem;
	}
	return c->string_table.n - 1;

out_enomem:
	free(copy);
	return -ENOMEM;
}

static Perftools__Profiles__Mapping *pprof__mapping(struct convert_pprof *c, struct map *map)
{
	struct dso *dso = map->dso;
	char bid[SBUILD_ID_SIZE];
	Perftools__Profiles__Mapping *m;
	void *found;

	if (hashmap__find(c->mappings, map, &found))
		return found;
	m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	perftools__profiles__mapping__init(m);
	m->id = c->mapping.n + 1;
	m->memory_start = map->start;
	m->memory_limit = map->end;
	m->file_offset = map->pgoff;
	m->filename = pprof__string(c, dso->long_name ?: dso->short_name);
	m->build_id = 0;
	if (dso->has_build_id) {
		build_id__sprintf(&dso->bid, bid);
		m->build_id = pprof__string(c, bid);
	}
	m->has_functions = true;
	if (m->filename < 0 || m->build_id < 0 || ptr_vec__push(&c->mapping, m))
		goto out_free;
	/* the map, and so its dso and symbols, live as long as the profile */
	if (ptr_vec__push(&c->held_maps, map)) {
		c->mapping.n--;
		goto out_free;
	}
	if (hashmap__add(c->mappings, map, m)) {
		c->mapping.n--;
		c->held_maps.n--;
		goto out_free;
	}
	map__get(map);
	return m;

out_free:
	free(m);
	return NULL;
}

/*
 * The function of a frame: its symbol, or for an address no symbol covers,
 * one function per binary named after it ("[libfoo.so]"), or "[unknown]"
 * outside any mapping, so that unknown frames add up in viewers that merge
 * by name.
 */
static Perftools__Profiles__Function *
pprof__function(struct convert_pprof *c, struct map *map, struct symbol *sym, const char *file)
{
	static const char unknown[] = "[unknown]";
	const void *key = sym ? (const void *)sym :
			  map ? (const void *)map->dso : (const void *)unknown;
	char buf[PATH_MAX + 2];
	Perftools__Profiles__Function *f;
	void *found;

	if (hashmap__find(c->functions, key, &found)) {
		f = found;
		if (!f->filename && file) {
			f->filename = pprof__string(c, file);
			if (f->filename < 0)
				return NULL;
		}
		return f;
	}
	f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	perftools__profiles__function__init(f);
	f->id = c->function.n + 1;
	if (sym) {
		f->name = pprof__string(c, sym->name);
	} else if (!map) {
		f->name = pprof__string(c, unknown);
	} else {
		snprintf(buf, sizeof(buf), "[%s]", map->dso->short_name);
		f->name = pprof__string(c, buf);
	}
	f->system_name = f->name;
	f->filename = file ? pprof__string(c, file) : 0;
	if (f->name < 0 || f->filename < 0 || ptr_vec__push(&c->function, f))
		goto out_free;
	if (hashmap__add(c->functions, key, f)) {
		c->function.n--;
		goto out_free;
	}
	return f;

out_free:
	free(f);
	return NULL;
}

/* The location id of a frame at ip; 0 on failure (out of memory). */
static u64 pprof__location(struct convert_pprof *c, struct map *map,
			   struct symbol *sym, u64 ip)
{
	struct loc_key key = { .map = map, .sym = sym, .ip = ip }, *k;
	Perftools__Profiles__Mapping *m = NULL;
	Perftools__Profiles__Function *f;
	Perftools__Profiles__Location *loc;
	Perftools__Profiles__Line *line;
	unsigned int lineno = 0;
	char *file = NULL;
	void *found;

	if (hashmap__find(c->locations, &key, &found))
		return ((Perftools__Profiles__Location *)found)->id;

	if (map && map->dso) {
		m = pprof__mapping(c, map);
		if (!m)
			return 0;
		/* source lines of user code, when the binary has them */
		if (sym && !map->dso->kernel && map->dso->has_srcline) {
			u64 addr = map__rip_2objdump(map, map->map_ip(map, ip));

			file = get_srcline_split(map->dso, addr, &lineno);
			if (file) {
				m->has_filenames = true;
				m->has_line_numbers = true;
			}
		}
	}

	loc = zalloc(sizeof(*loc) + sizeof(*line) + sizeof(line) + sizeof(*k));
	if (!loc)
		goto out_enomem;
	perftools__profiles__location__init(loc);
	line = (Perftools__Profiles__Line *)(loc + 1);
	loc->line = (Perftools__Profiles__Line **)(line + 1);
	k = (struct loc_key *)(loc->line + 1);
	*k = key;
	loc->id = c->location.n + 1;
	loc->mapping_id = m ? m->id : 0;
	loc->address = ip;

	f = pprof__function(c, m ? map : NULL, m ? sym : NULL, file);
	if (!f)
		goto out_free;
	perftools__profiles__line__init(line);
	line->function_id = f->id;
	line->line = lineno;
	loc->line[0] = line;
	loc->n_line = 1;
	if (ptr_vec__push(&c->location, loc))
		goto out_free;
	if (hashmap__add(c->locations, k, loc)) {
		c->location.n--;
		goto out_free;
	}
	free(file);
	return loc->id;

out_free:
	free(loc);
out_enomem:
	free(file);
	return 0;
}

static int pprof__add_label(struct convert_pprof *c, struct sample_key *key,
			    s64 name, const char *value)
{
	s64 v = pprof__string(c, value);

	if (v < 0)
		return -ENOMEM;
	key->labels[key->nr_labels][0] = name;
	key->labels[key->nr_labels][1] = v;
	key->nr_labels++;
	return 0;
}

static int process_sample_event(struct perf_tool *tool,
				union perf_event *event __maybe_unused,
				struct perf_sample *sample,
				struct evsel *evsel,
				struct machine *machine)
{
	struct convert_pprof *c = container_of(tool, struct convert_pprof, tool);
	struct sample_key key = { .locs = c->locs }, *k;
	struct addr_location al;
	u64 points = blocked__points(sample->points);
	char num[32];
	Perftools__Profiles__Sample *s;
	Perftools__Profiles__Label *labels;
	void *found;
	int i, err = -ENOMEM;

	if (machine__resolve(machine, &al, sample) < 0) {
		pr_err("Cannot resolve the sample at %#" PRIx64 " of thread %d\n",
		       sample->ip, sample->tid);
		return -EINVAL;
	}
	if (al.filtered) {
		err = 0;
		goto out_put;
	}

	/* the stack, leaf first */
	if (sample->callchain &&
	    thread__resolve_callchain(al.thread, &callchain_cursor, evsel, sample,
				      NULL, NULL, PPROF_MAX_STACK) == 0) {
		struct callchain_cursor_node *node;

		callchain_cursor_commit(&callchain_cursor);
		while ((node = callchain_cursor_current(&callchain_cursor)) &&
		       key.nr_locs < PPROF_MAX_STACK) {
			c->locs[key.nr_locs] = pprof__location(c, node->ms.map,
							       node->ms.sym, node->ip);
			if (!c->locs[key.nr_locs++])
				goto out_put;
			callchain_cursor_advance(&callchain_cursor);
		}
	}
	if (!key.nr_locs) {
		c->locs[0] = pprof__location(c, al.map, al.sym, sample->ip);
		if (!c->locs[key.nr_locs++])
			goto out_put;
	}

	/* the labels */
	if (pprof__add_label(c, &key, c->key_class, blocked__name(sample->blocked)))
		goto out_put;
	if (sample->blocked != BLOCKED_ONCPU) {
		const char *wait = wait_reason__classify(&al, evsel, sample);

		if (pprof__add_label(c, &key, c->key_wait, wait ?: blocked__name(sample->blocked)))
			goto out_put;
	}
	snprintf(num, sizeof(num), "%d", al.thread->tid);
	if (pprof__add_label(c, &key, c->key_tid, num))
		goto out_put;
	snprintf(num, sizeof(num), "%d", al.thread->pid_);
	if (pprof__add_label(c, &key, c->key_pid, num))
		goto out_put;
	if (pprof__add_label(c, &key, c->key_comm, thread__comm_str(al.thread) ?: "[unknown]"))
		goto out_put;
	if (c->several_events && pprof__add_label(c, &key, c->key_event, evsel__name(evsel)))
		goto out_put;

	if (!c->nr_samples++ || sample->time < c->first_time)
		c->first_time = sample->time;
	if (sample->time > c->last_time)
		c->last_time = sample->time;
	c->points += points;
	c->period += sample->period;

	if (hashmap__find(c->samples, &key, &found)) {
		s = found;
		s->value[0] += points;
		s->value[1] += sample->period;
		err = 0;
		goto out_put;
	}

	/* one allocation: the sample, its values, locations, labels and key */
	s = zalloc(sizeof(*s) + 2 * sizeof(*s->value) +
		   key.nr_locs * sizeof(*s->location_id) +
		   key.nr_labels * (sizeof(*s->label) + sizeof(**s->label)) + sizeof(*k));
	if (!s)
		goto out_put;
	perftools__profiles__sample__init(s);
	s->n_value = 2;
	s->value = (int64_t *)(s + 1);
	s->value[0] = points;
	s->value[1] = sample->period;
	s->n_location_id = key.nr_locs;
	s->location_id = (uint64_t *)(s->value + 2);
	memcpy(s->location_id, c->locs, key.nr_locs * sizeof(*s->location_id));
	s->n_label = key.nr_labels;
	s->label = (Perftools__Profiles__Label **)(s->location_id + key.nr_locs);
	labels = (Perftools__Profiles__Label *)(s->label + key.nr_labels);
	for (i = 0; i < key.nr_labels; i++) {
		Perftools__Profiles__Label *l = labels + i;

		perftools__profiles__label__init(l);
		l->key = key.labels[i][0];
		l->str = key.labels[i][1];
		s->label[i] = l;
	}
	k = (struct sample_key *)(labels + key.nr_labels);
	*k = key;
	k->locs = s->location_id;
	if (ptr_vec__push(&c->sample, s)) {
		free(s);
		goto out_put;
	}
	if (hashmap__add(c->samples, k, s)) {
		c->sample.n--;
		free(s);
		goto out_put;
	}
	err = 0;
out_put:
	addr_location__put(&al);
	if (err)
		pr_err("Out of memory converting the sample at %" PRIu64 "\n", sample->time);
	return err;
}

/*
 * pass 0: a program (not "[...]", not a shared object "*.so*");
 * pass 1: anything but the kernel and the dynamic loader.
 */
static bool pprof__main_candidate(const char *name, int pass)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (name[0] == '[' || !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5))
		return false;
	return pass || !strstr(base, ".so");
}

/* The clock events count nanoseconds; others count events. */
static bool evsel__counts_time(struct evsel *evsel)
{
	return evsel->core.attr.type == PERF_TYPE_SOFTWARE &&
	       (evsel->core.attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		evsel->core.attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

static int pprof__write(struct convert_pprof *c, int fd, const char *output_name)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				   PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *types_p[2] = { &types[0], &types[1] };
	struct evlist *evlist = c->session->evlist;
	struct evsel *first = evlist__first(evlist), *evsel;
	bool time = true;
	size_t len, done, i;
	int err = 0, pass;
	u8 *buf;

	evlist__for_each_entry(evlist, evsel)
		time &= evsel__counts_time(evsel);

	types[0].type = pprof__string(c, "samples");
	types[0].unit = pprof__string(c, "count");
	types[1].type = pprof__string(c, time ? "time" : "events");
	types[1].unit = pprof__string(c, time ? "nanoseconds" : "count");
	period_type = types[1];
	prof.n_sample_type = 2;
	prof.sample_type = types_p;
	prof.period_type = &period_type;
	if (!c->several_events && !first->core.attr.freq)
		prof.period = first->core.attr.sample_period;
	prof.default_sample_type = types[1].type;
	if (c->nr_samples)
		prof.duration_nanos = c->last_time - c->first_time;
	if (types[0].type < 0 || types[0].unit < 0 || types[1].type < 0 || types[1].unit < 0)
		return -ENOMEM;

	prof.n_sample = c->sample.n;
	prof.sample = (Perftools__Profiles__Sample **)c->sample.v;
	/*
	 * Viewers take the first mapping for the main binary ("File:" in
	 * pprof -top): the first program, else the first shared object,
	 * never the kernel ("[kernel.kallsyms]") or the dynamic loader,
	 * which is mapped before the program's own libraries are used.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < c->mapping.n; i++) {
			Perftools__Profiles__Mapping *m = c->mapping.v[i];

			if (!pprof__main_candidate(c->string_table.v[m->filename], pass))
				continue;
			c->mapping.v[i] = c->mapping.v[0];
			c->mapping.v[0] = m;
			pass = 2;
			break;
		}
	}
	prof.n_mapping = c->mapping.n;
	prof.mapping = (Perftools__Profiles__Mapping **)c->mapping.v;
	prof.n_location = c->location.n;
	prof.location = (Perftools__Profiles__Location **)c->location.v;
	prof.n_function = c->function.n;
	prof.function = (Perftools__Profiles__Function **)c->function.v;
	prof.n_string_table = c->string_table.n;
	prof.string_table = (char **)c->string_table.v;

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ?: 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(&prof, buf);

#ifdef HAVE_ZLIB_SUPPORT
	{
		gzFile gz = gzdopen(fd, "wb");

		if (!gz) {
			err = -ENOMEM;
			goto out_free;
		}
		for (done = 0; done < len; ) {
			int n = gzwrite(gz, buf + done, min(len - done, (size_t)1 << 30));

			if (n <= 0)
				break;
			done += n;
		}
		if (gzclose(gz) != Z_OK || done != len)
			err = errno ? -errno : -EIO;
	}
#else
	for (done = 0; done < len; ) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0) {
			err = n ? -errno : -EIO;
			break;
		}
		done += n;
	}
	if (close(fd) && !err)
		err = -errno;
	goto out_free;
#endif
out_free:
	free(buf);
	if (err)
		pr_err("Cannot write %s: %s\n", output_name, strerror(-err));
	return err;
}

static void pprof__exit(struct convert_pprof *c)
{
	size_t i;

	for (i = 0; i < c->held_maps.n; i++)
		map__put(c->held_maps.v[i]);
	for (i = 0; i < c->string_table.n; i++)
		free(c->string_table.v[i]);
	for (i = 0; i < c->mapping.n; i++)
		free(c->mapping.v[i]);
	for (i = 0; i < c->function.n; i++)
		free(c->function.v[i]);
	for (i = 0; i < c->location.n; i++)
		free(c->location.v[i]);
	for (i = 0; i < c->sample.n; i++)
		free(c->sample.v[i]);
	free(c->held_maps.v);
	free(c->string_table.v);
	free(c->mapping.v);
	free(c->function.v);
	free(c->location.v);
	free(c->sample.v);
	hashmap__free(c->strings);
	hashmap__free(c->mappings);
	hashmap__free(c->functions);
	hashmap__free(c->locations);
	hashmap__free(c->samples);
}

int convert__perf2pprof(const char *input_name, const char *output_name,
			struct perf_data_convert_opts *opts)
{
	struct convert_pprof c = {
		.tool = {
			.sample		= process_sample_event,
			.mmap		= perf_event__process_mmap,
			.mmap2		= perf_event__process_mmap2,
			.comm		= perf_event__process_comm,
			.namespaces	= perf_event__process_namespaces,
			.cgroup		= perf_event__process_cgroup,
			.exit		= perf_event__process_exit,
			.fork		= perf_event__process_fork,
			.lost		= perf_event__process_lost,
			.tracing_data	= perf_event__process_tracing_data,
			.build_id	= perf_event__process_build_id,
			.id_index	= perf_event__process_id_index,
			.auxtrace_info	= perf_event__process_auxtrace_info,
			.auxtrace	= perf_event__process_auxtrace,
			.event_update	= perf_event__process_event_update,
			.ordered_events	= true,
			.ordering_requires_timestamps = true,
		},
	};
	struct perf_data data = {
		.mode	= PERF_DATA_MODE_READ,
		.path	= input_name,
		.force	= opts->force,
	};
	struct perf_session *session;
	int fd = -1, err = -1;

	if (opts->all || opts->tod) {
		pr_err("--all and --tod do not apply to pprof output.\n");
		return -1;
	}

	c.strings = hashmap__new(str_hash_fn, str_equal_fn, NULL);
	c.mappings = hashmap__new(ptr_hash_fn, ptr_equal_fn, NULL);
	c.functions = hashmap__new(ptr_hash_fn, ptr_equal_fn, NULL);
	c.locations = hashmap__new(loc_hash_fn, loc_equal_fn, NULL);
	c.samples = hashmap__new(sample_hash_fn, sample_equal_fn, NULL);
	if (IS_ERR(c.strings) || IS_ERR(c.mappings) || IS_ERR(c.functions) ||
	    IS_ERR(c.locations) || IS_ERR(c.samples)) {
		pr_err("Out of memory\n");
		return -1;
	}
	/* string 0 is "", as the format requires */
	err = pprof__string(&c, "");
	c.key_class = pprof__string(&c, "class");
	c.key_wait = pprof__string(&c, "wait");
	c.key_tid = pprof__string(&c, "tid");
	c.key_pid = pprof__string(&c, "pid");
	c.key_comm = pprof__string(&c, "comm");
	c.key_event = pprof__string(&c, "event");
	if (err || c.key_class < 0 || c.key_wait < 0 || c.key_tid < 0 || c.key_pid < 0 ||
	    c.key_comm < 0 || c.key_event < 0) {
		err = -1;
		pr_err("Out of memory\n");
		goto out_exit;
	}

	err = -1;
	session = perf_session__new(&data, &c.tool);
	if (IS_ERR(session)) {
		/* perf_data__open() said why */
		pr_err("Cannot convert %s\n", input_name ?: "perf.data");
		goto out_exit;
	}
	c.session = session;
	c.several_events = session->evlist->core.nr_entries > 1;
	if (symbol__init(&session->header.env) < 0) {
		pr_err("Cannot initialise symbol resolution\n");
		goto out_delete;
	}
	symbol_conf.use_callchain = true;
	callchain_param_setup(evlist__combined_sample_type(session->evlist),
			      perf_env__arch(&session->header.env));

	/* create the output only once the input reads, not to leave junk */
	fd = open(output_name, O_CREAT | O_WRONLY | (opts->force ? O_TRUNC : O_EXCL), 0666);
	if (fd < 0) {
		if (errno == EEXIST)
			pr_err("%s exists; use --force to overwrite it\n", output_name);
		else
			pr_err("Cannot create %s: %s\n", output_name, strerror(errno));
		goto out_delete;
	}

	err = perf_session__process_events(session);
	if (err) {
		pr_err("Cannot convert %s: %s\n", data.path,
		       err < 0 ? strerror(-err) : "bad data");
		close(fd);
		unlink(output_name);
		goto out_delete;
	}
	if (!c.nr_samples)
		pr_warning("%s has no samples; writing an empty profile\n", data.path);

	err = pprof__write(&c, fd, output_name);
	if (err) {
		unlink(output_name);
		goto out_delete;
	}
	fprintf(stderr, "[ perf data convert: Converted '%s' into pprof profile '%s' ]\n",
		data.path, output_name);
	fprintf(stderr, "[ perf data convert: %" PRIu64 " samples of %" PRIu64 " sampling points, %"
		PRIu64 " period, as %zu stacks, %zu locations, %zu functions ]\n",
		c.nr_samples, c.points, c.period, c.sample.n, c.location.n, c.function.n);

out_delete:
	perf_session__delete(session);
out_exit:
	pprof__exit(&c);
	return err ? -1 : 0;
}
