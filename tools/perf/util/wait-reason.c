// SPDX-License-Identifier: GPL-2.0
/*
 * Wait reasons of blocked samples from one rule table (see wait-reason.h
 * and Documentation/bperf/wait-reasons.rst).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/zalloc.h>

#include "blocked.h"
#include "callchain.h"
#include "debug.h"
#include "dso.h"
#include "event.h"
#include "map.h"
#include "symbol.h"
#include "thread.h"
#include "wait-reason.h"

/*
 * The default table, util/wait-reasons.rules, compiled in as a
 * NUL-terminated string (WAIT_RULES_FILE is its path, set in util/Build).
 */
asm(".pushsection .rodata\n"
	".globl bperf_wait_rules_default\n"
	".type bperf_wait_rules_default, @object\n"
	"bperf_wait_rules_default:\n"
	".incbin \"" WAIT_RULES_FILE "\"\n"
	".byte 0\n"
	".size bperf_wait_rules_default, . - bperf_wait_rules_default\n"
	".popsection\n");

#define WAIT_RULES_DEFAULT_NAME	"<built-in wait-reasons.rules>"

enum wait_cond_kind {
	WAIT_COND_KERNEL,
	WAIT_COND_LEAF,
	WAIT_COND_USER,
	WAIT_COND_CLASS,
};

struct wait_cond {
	enum wait_cond_kind	kind;
	bool			neg;
	char			**globs;	/* KERNEL, LEAF, USER */
	size_t			nr_globs;
	unsigned int		classes;	/* CLASS: bit per blocked_class */
};

struct wait_rule {
	const char		*reason;	/* interned */
	struct wait_cond	*conds;
	size_t			nr_conds;
};

/* An @kind line's list, one glob of reasons each, in table order. */
struct wait_kind_glob {
	char			*glob;
	enum wait_kind		kind;
};

static const char * const kind_names[WAIT_KIND__NR] = {
	[WAIT_KIND_ONCPU]	= "on-cpu",
	[WAIT_KIND_IDLE]	= "idle",
	[WAIT_KIND_CONTENDED]	= "contended",
	[WAIT_KIND_IO]		= "io",
	[WAIT_KIND_RUNNABLE]	= "runnable",
	[WAIT_KIND_OTHER]	= "other",
};

static struct {
	struct wait_rule	*rules;
	size_t			nr_rules;
	char			**skip;		/* kernel frames unknown: skips */
	size_t			nr_skip;
	struct wait_kind_glob	*kinds;		/* @kind lists */
	size_t			nr_kinds;
	bool			defaults;	/* the built-in table is loaded */
	char			**strings;	/* interned reason names */
	size_t			nr_strings;
} wr;

static char last_error[512];

const char *wait_rules__last_error(void)
{
	return last_error;
}

static const char *intern(const char *s)
{
	char **n, *dup;
	size_t i;

	for (i = 0; i < wr.nr_strings; i++)
		if (!strcmp(wr.strings[i], s))
			return wr.strings[i];
	dup = strdup(s);
	n = realloc(wr.strings, (wr.nr_strings + 1) * sizeof(*n));
	if (!dup || !n) {
		free(dup);
		if (n)
			wr.strings = n;
		return "unknown";
	}
	wr.strings = n;
	wr.strings[wr.nr_strings++] = dup;
	return dup;
}

static void free_globs(char **globs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(globs[i]);
	free(globs);
}

static void free_kinds(struct wait_kind_glob *kinds, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(kinds[i].glob);
	free(kinds);
}

static void free_rule(struct wait_rule *rule)
{
	size_t i;

	for (i = 0; i < rule->nr_conds; i++)
		free_globs(rule->conds[i].globs, rule->conds[i].nr_globs);
	free(rule->conds);
}

void wait_rules__reset(void)
{
	size_t i;

	for (i = 0; i < wr.nr_rules; i++)
		free_rule(&wr.rules[i]);
	free(wr.rules);
	free_globs(wr.skip, wr.nr_skip);
	free_kinds(wr.kinds, wr.nr_kinds);
	wr.rules = NULL;
	wr.skip = NULL;
	wr.kinds = NULL;
	wr.nr_rules = 0;
	wr.nr_skip = 0;
	wr.nr_kinds = 0;
	wr.defaults = false;
	last_error[0] = '\0';
	/* interned strings stay: hist entries may point to them */
}

/* Split "a|b|c" into globs; -1 on an empty alternative. */
static int split_globs(const char *s, char ***globs, size_t *nr)
{
	const char *p = s;

	*globs = NULL;
	*nr = 0;
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		char **n;

		if (!len)
			goto err;
		n = realloc(*globs, (*nr + 1) * sizeof(*n));
		if (!n)
			goto err;
		*globs = n;
		(*globs)[*nr] = strndup(p, len);
		if (!(*globs)[*nr])
			goto err;
		(*nr)++;
		if (!bar)
			return 0;
		p = bar + 1;
	}
err:
	free_globs(*globs, *nr);
	*globs = NULL;
	*nr = 0;
	return -1;
}

static bool valid_reason(const char *s)
{
	const char *p;

	if (!strcmp(s, WAIT_REASON_ONCPU) || !strncmp(s, "unknown", 7))
		return false;
	for (p = s; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_.:+", *p)))
			return false;
	}
	return true;
}

static int parse_cond(char *tok, struct wait_cond *cond, const char **why)
{
	char *colon, *arg;

	memset(cond, 0, sizeof(*cond));
	if (*tok == '!') {
		cond->neg = true;
		tok++;
	}
	colon = strchr(tok, ':');
	if (!colon) {
		*why = "a condition is kernel:GLOB, leaf:GLOB, user:GLOB or class:NAME";
		return -1;
	}
	*colon = '\0';
	arg = colon + 1;
	if (!strcmp(tok, "kernel")) {
		cond->kind = WAIT_COND_KERNEL;
	} else if (!strcmp(tok, "leaf")) {
		cond->kind = WAIT_COND_LEAF;
	} else if (!strcmp(tok, "user")) {
		cond->kind = WAIT_COND_USER;
	} else if (!strcmp(tok, "class")) {
		cond->kind = WAIT_COND_CLASS;
	} else {
		*why = "unknown condition (use kernel:, leaf:, user: or class:)";
		return -1;
	}
	if (split_globs(arg, &cond->globs, &cond->nr_globs)) {
		*why = "empty pattern (write NAME or NAME|NAME...)";
		return -1;
	}
	if (cond->kind == WAIT_COND_CLASS) {
		size_t i;

		for (i = 0; i < cond->nr_globs; i++) {
			int cls = blocked__class_from_name(cond->globs[i]);

			if (cls <= BLOCKED_ONCPU) {
				*why = "unknown class (use io, lock, sched or other)";
				return -1;
			}
			cond->classes |= 1U << cls;
		}
		free_globs(cond->globs, cond->nr_globs);
		cond->globs = NULL;
		cond->nr_globs = 0;
	}
	return 0;
}

/* "@kind KIND REASON|REASON...": append to the kind lists. */
static int parse_kind(char **save, struct wait_kind_glob **kinds,
		      size_t *nr_kinds, const char **why)
{
	char *name = strtok_r(NULL, " \t\r", save);
	char *list = name ? strtok_r(NULL, " \t\r", save) : NULL;
	char **globs;
	size_t nr, i;
	int kind;

	if (!list || strtok_r(NULL, " \t\r", save)) {
		*why = "@kind takes a kind and one REASON|REASON... list";
		return -1;
	}
	for (kind = WAIT_KIND_IDLE; kind < WAIT_KIND__NR; kind++)
		if (!strcmp(name, kind_names[kind]))
			break;
	if (kind == WAIT_KIND__NR) {
		*why = "unknown kind (use idle, contended, io, runnable or other)";
		return -1;
	}
	if (split_globs(list, &globs, &nr)) {
		*why = "empty pattern in @kind";
		return -1;
	}
	for (i = 0; i < nr; i++) {
		struct wait_kind_glob *n = realloc(*kinds, (*nr_kinds + 1) * sizeof(*n));

		if (!n) {
			free_globs(globs + i, nr - i);
			*why = "out of memory";
			return -1;
		}
		*kinds = n;
		(*kinds)[*nr_kinds].glob = globs[i];
		(*kinds)[(*nr_kinds)++].kind = kind;
	}
	free(globs);
	return 1;	/* no rule */
}

/* Parse one non-empty line into rule (or the @skip or @kind lists). */
static int parse_line(char *line, struct wait_rule *rule, char ***skip,
		      size_t *nr_skip, struct wait_kind_glob **kinds,
		      size_t *nr_kinds, const char **why)
{
	char *save = NULL, *tok;

	memset(rule, 0, sizeof(*rule));
	tok = strtok_r(line, " \t\r", &save);
	if (!strcmp(tok, "@kind"))
		return parse_kind(&save, kinds, nr_kinds, why);
	if (!strcmp(tok, "@skip")) {
		char **globs;
		size_t nr, i;

		tok = strtok_r(NULL, " \t\r", &save);
		if (!tok || strtok_r(NULL, " \t\r", &save)) {
			*why = "@skip takes one GLOB|GLOB... list";
			return -1;
		}
		if (split_globs(tok, &globs, &nr)) {
			*why = "empty pattern in @skip";
			return -1;
		}
		for (i = 0; i < nr; i++) {
			char **n = realloc(*skip, (*nr_skip + 1) * sizeof(*n));

			if (!n) {
				free_globs(globs + i, nr - i);
				*why = "out of memory";
				return -1;
			}
			*skip = n;
			(*skip)[(*nr_skip)++] = globs[i];
		}
		free(globs);
		return 1;	/* no rule */
	}
	if (*tok == '@') {
		*why = "unknown directive (@skip and @kind exist)";
		return -1;
	}
	if (!valid_reason(tok)) {
		*why = "bad reason name (letters, digits, - _ . : +; not on-cpu or unknown*)";
		return -1;
	}
	rule->reason = intern(tok);
	while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL) {
		struct wait_cond *n = realloc(rule->conds,
					      (rule->nr_conds + 1) * sizeof(*n));

		if (!n) {
			*why = "out of memory";
			goto err;
		}
		rule->conds = n;
		if (parse_cond(tok, &rule->conds[rule->nr_conds], why))
			goto err;
		rule->nr_conds++;
	}
	if (!rule->nr_conds) {
		*why = "a rule needs at least one condition: REASON COND [COND...]";
		goto err;
	}
	return 0;
err:
	free_rule(rule);
	return -1;
}

int wait_rules__parse(const char *text, const char *name)
{
	struct wait_rule *rules = NULL;
	size_t nr_rules = 0, nr_skip = 0, nr_kinds = 0, lineno = 0;
	struct wait_kind_glob *kinds = NULL;
	char **skip = NULL;
	const char *p = text, *why = NULL;
	int err = 0;

	while (*p) {
		const char *eol = strchrnul(p, '\n');
		char *line = strndup(p, eol - p), *s, *hash;
		struct wait_rule rule;
		int ret;

		lineno++;
		p = *eol ? eol + 1 : eol;
		if (!line) {
			why = "out of memory";
			err = -ENOMEM;
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (s = line; *s == ' ' || *s == '\t' || *s == '\r'; s++)
			;
		if (!*s || strspn(s, " \t\r") == strlen(s)) {
			free(line);
			continue;
		}
		/* trailing CR of DOS files */
		if (s[strlen(s) - 1] == '\r')
			s[strlen(s) - 1] = '\0';
		ret = parse_line(s, &rule, &skip, &nr_skip, &kinds, &nr_kinds,
				 &why);
		free(line);
		if (ret < 0) {
			err = -EINVAL;
			break;
		}
		if (ret == 0) {
			struct wait_rule *n = realloc(rules, (nr_rules + 1) * sizeof(*n));

			if (!n) {
				free_rule(&rule);
				why = "out of memory";
				err = -ENOMEM;
				break;
			}
			rules = n;
			rules[nr_rules++] = rule;
		}
	}
	if (err) {
		size_t i;

		snprintf(last_error, sizeof(last_error), "%s:%zu: %s", name,
			 lineno, why);
		pr_err("%s\n", last_error);
		for (i = 0; i < nr_rules; i++)
			free_rule(&rules[i]);
		free(rules);
		free_globs(skip, nr_skip);
		free_kinds(kinds, nr_kinds);
		return err;
	}
	if (nr_rules) {
		struct wait_rule *n = realloc(wr.rules,
					      (wr.nr_rules + nr_rules) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		wr.rules = n;
		memcpy(wr.rules + wr.nr_rules, rules, nr_rules * sizeof(*rules));
		wr.nr_rules += nr_rules;
	}
	free(rules);
	if (nr_skip) {
		char **n = realloc(wr.skip, (wr.nr_skip + nr_skip) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		wr.skip = n;
		memcpy(wr.skip + wr.nr_skip, skip, nr_skip * sizeof(*skip));
		wr.nr_skip += nr_skip;
	}
	free(skip);
	if (nr_kinds) {
		struct wait_kind_glob *n = realloc(wr.kinds, (wr.nr_kinds + nr_kinds) *
						   sizeof(*n));

		if (!n)
			return -ENOMEM;
		wr.kinds = n;
		memcpy(wr.kinds + wr.nr_kinds, kinds, nr_kinds * sizeof(*kinds));
		wr.nr_kinds += nr_kinds;
	}
	free(kinds);
	return 0;
}

int wait_rules__load_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t size = 0;
	ssize_t n;
	int err;

	if (!f) {
		err = -errno;
		snprintf(last_error, sizeof(last_error),
			 "%s: cannot read the wait rules: %s", path, strerror(-err));
		pr_err("%s\n", last_error);
		return err;
	}
	n = getdelim(&text, &size, '\0', f);
	fclose(f);
	if (n < 0) {
		free(text);
		/* an empty file has no rules */
		return 0;
	}
	if ((size_t)n != strlen(text)) {
		snprintf(last_error, sizeof(last_error),
			 "%s: not a text file (NUL byte at offset %zu)", path,
			 strlen(text));
		pr_err("%s\n", last_error);
		free(text);
		return -EINVAL;
	}
	err = wait_rules__parse(text, path);
	free(text);
	return err;
}

int wait_rules__parse_opt(const struct option *opt __maybe_unused,
			  const char *path, int unset __maybe_unused)
{
	return wait_rules__load_file(path) ? -1 : 0;
}

static void load_defaults(void)
{
	if (wr.defaults)
		return;
	wr.defaults = true;
	/* the built-in table is tested; a failure here is a build defect */
	if (wait_rules__parse(bperf_wait_rules_default, WAIT_RULES_DEFAULT_NAME))
		pr_err("the built-in wait rules do not parse; reasons will be unknown\n");
}

static bool glob_any(char **globs, size_t nr_globs, const char **names,
		     size_t nr_names)
{
	size_t i, j;

	for (i = 0; i < nr_names; i++)
		for (j = 0; j < nr_globs; j++)
			if (!fnmatch(globs[j], names[i], 0))
				return true;
	return false;
}

static bool cond_holds(const struct wait_cond *cond, int cls,
		       const struct wait_frames *frames, const char *leaf)
{
	bool ret = false;

	switch (cond->kind) {
	case WAIT_COND_KERNEL:
		ret = glob_any(cond->globs, cond->nr_globs, frames->kernel,
			       frames->nr_kernel);
		break;
	case WAIT_COND_LEAF:
		ret = leaf && glob_any(cond->globs, cond->nr_globs, &leaf, 1);
		break;
	case WAIT_COND_USER:
		ret = glob_any(cond->globs, cond->nr_globs, frames->user,
			       frames->nr_user);
		break;
	case WAIT_COND_CLASS:
		ret = cls >= 0 && cls < 32 && (cond->classes & (1U << cls));
		break;
	default:
		break;
	}
	return cond->neg ? !ret : ret;
}

/*
 * The kernel function that went to sleep: the innermost kernel frame that
 * is not on the @skip list (the scheduler, the syscall entry).  Kernel
 * stacks of blocked samples start below the scheduler's __sched functions
 * (the rwsem and mutex slow paths, down_*(), mutex_lock()), so for a lock
 * wait this is the lock's caller.  NULL when the sample has no kernel frame.
 */
static const char *kernel_leaf(const struct wait_frames *frames)
{
	size_t i;

	for (i = 0; i < frames->nr_kernel; i++) {
		if (!glob_any(wr.skip, wr.nr_skip, &frames->kernel[i], 1))
			return frames->kernel[i];
	}
	return frames->nr_kernel ? frames->kernel[0] : NULL;
}

/*
 * No rule matched.  A lock wait ([L]) that no rule names is still a lock
 * wait: the kernel types a sleep [L] only for futexes (which the futex
 * rule catches by their kernel frames) and for sleeping kernel locks, whose
 * own functions are __sched and trimmed from the stack; it is named
 * kernel-lock:<caller>, contended, rather than unknown.
 */
static const char *unknown_reason(int cls, const struct wait_frames *frames,
				  const char *leaf)
{
	bool kernel = leaf != NULL;
	char buf[256];

	if (!leaf && frames->nr_user)
		leaf = frames->user[0];
	if (!leaf)
		return intern(cls == BLOCKED_LOCK ? "kernel-lock" : "unknown");
	snprintf(buf, sizeof(buf), "%s:%s",
		 cls == BLOCKED_LOCK && kernel ? "kernel-lock" : "unknown", leaf);
	return intern(buf);
}

const char *wait_reason__match(int cls, const struct wait_frames *frames)
{
	const char *leaf;
	size_t i, j;

	if (cls == BLOCKED_ONCPU)
		return WAIT_REASON_ONCPU;
	load_defaults();
	leaf = kernel_leaf(frames);
	for (i = 0; i < wr.nr_rules; i++) {
		const struct wait_rule *rule = &wr.rules[i];

		for (j = 0; j < rule->nr_conds; j++)
			if (!cond_holds(&rule->conds[j], cls, frames, leaf))
				break;
		if (j == rule->nr_conds)
			return rule->reason;
	}
	return unknown_reason(cls, frames, leaf);
}

const char *wait_kind__name(enum wait_kind kind)
{
	return kind < WAIT_KIND__NR ? kind_names[kind] : "?";
}

enum wait_kind wait_reason__kind(const char *reason)
{
	size_t i;

	if (!strcmp(reason, WAIT_REASON_ONCPU))
		return WAIT_KIND_ONCPU;
	load_defaults();
	for (i = 0; i < wr.nr_kinds; i++)
		if (!fnmatch(wr.kinds[i].glob, reason, 0))
			return wr.kinds[i].kind;
	return WAIT_KIND_OTHER;
}

static struct callchain_cursor wait_cursor;

static int add_frame(const char ***names, size_t *nr, size_t *alloc,
		     const char *name)
{
	if (*nr == *alloc) {
		size_t sz = *alloc ? *alloc * 2 : 64;
		const char **n = realloc(*names, sz * sizeof(*n));

		if (!n)
			return -1;
		*names = n;
		*alloc = sz;
	}
	(*names)[(*nr)++] = name;
	return 0;
}

static void reverse(const char **names, size_t nr)
{
	size_t i;

	for (i = 0; i < nr / 2; i++) {
		const char *t = names[i];

		names[i] = names[nr - 1 - i];
		names[nr - 1 - i] = t;
	}
}

static bool map_is_kernel(struct map *map)
{
	return map && map->dso && map->dso->kernel != DSO_SPACE__USER;
}

const char *wait_reason__classify(struct addr_location *al, struct evsel *evsel,
				  struct perf_sample *sample)
{
	static const char **kernel, **user;
	static size_t alloc_kernel, alloc_user;
	struct wait_frames frames = { .nr_kernel = 0, };
	struct callchain_cursor_node *node;
	struct symbol *parent = NULL;

	if (sample->blocked == BLOCKED_ONCPU)
		return WAIT_REASON_ONCPU;

	callchain_cursor_reset(&wait_cursor);
	if (al->thread &&
	    thread__resolve_callchain(al->thread, &wait_cursor, evsel, sample,
				      &parent, NULL, PERF_MAX_STACK_DEPTH) == 0) {
		callchain_cursor_commit(&wait_cursor);
		while ((node = callchain_cursor_current(&wait_cursor)) != NULL) {
			if (node->ms.sym) {
				if (map_is_kernel(node->ms.map))
					add_frame(&kernel, &frames.nr_kernel,
						  &alloc_kernel, node->ms.sym->name);
				else
					add_frame(&user, &frames.nr_user,
						  &alloc_user, node->ms.sym->name);
			}
			callchain_cursor_advance(&wait_cursor);
		}
	}
	/* no callchain: the sample's own symbol is all there is */
	if (!frames.nr_kernel && !frames.nr_user && al->sym) {
		if (map_is_kernel(al->map))
			add_frame(&kernel, &frames.nr_kernel, &alloc_kernel, al->sym->name);
		else
			add_frame(&user, &frames.nr_user, &alloc_user, al->sym->name);
	}
	frames.kernel = kernel;
	frames.user = user;
	/* callee order: the leaf first */
	if (callchain_param.order == ORDER_CALLER) {
		reverse(kernel, frames.nr_kernel);
		reverse(user, frames.nr_user);
	}
	return wait_reason__match(sample->blocked, &frames);
}
