// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz settings and sample classes.
 *
 * Every BCOZ_* environment variable is read here, once, at start-up, into
 * bcoz_cfg; the rest of the runtime reads bcoz_cfg and never the
 * environment.  Every value is checked here as well, and nowhere else (the
 * launcher only maps its options to these variables): a bad value is one
 * error line naming the variable, the `bcoz run` option that sets it, the
 * value and the accepted form, and the runtime exits with status 2.
 *
 * The classes of samples (on-CPU and the blocked subclasses) are one table
 * with perf's names, used to decode misc bits, print and parse them.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct bcoz_config bcoz_cfg;

/* ---------- classes ---------- */

static const struct {
	const char *name;	/* perf's (tools/perf/util/blocked.c) */
	char letter;		/* --blocked-scope's: perf's level letter */
	uint16_t misc;		/* PERF_RECORD_MISC_BLOCKED_* */
	const char *label;	/* selected= of a subclass experiment */
} classes[BCOZ_CLASS_NR] = {
	[BCOZ_ONCPU]	= { "on-cpu",	0,	0,		NULL },
	[BCOZ_IO]	= { "io",	'i',	BCOZ_MISC_IO,	"IO" },
	[BCOZ_LOCK]	= { "lock",	'l',	BCOZ_MISC_LOCK,	"LOCK" },
	[BCOZ_SCHED]	= { "sched",	's',	BCOZ_MISC_SCHED, "SCHEDULING" },
	[BCOZ_OTHER]	= { "other",	'b',	BCOZ_MISC_OTHER, "OTHER" },
};

/* A sample's class from its header.misc; -1 for a combination of bits. */
int bcoz_class_of(uint16_t misc)
{
	misc &= BCOZ_MISC_MASK;
	for (int c = 0; c < BCOZ_CLASS_NR; c++)
		if (classes[c].misc == misc)
			return c;
	return -1;
}

const char *bcoz_class_name(int cls)
{
	return cls >= 0 && cls < BCOZ_CLASS_NR ? classes[cls].name : "invalid";
}

const char *bcoz_class_label(int cls)
{
	return cls > 0 && cls < BCOZ_CLASS_NR ? classes[cls].label : NULL;
}

/* perf's name ("io") or the one-letter form of --blocked-scope ("i") */
int bcoz_class_parse(const char *s)
{
	for (int c = 0; c < BCOZ_CLASS_NR; c++) {
		if (!strcmp(s, classes[c].name) ||
		    (classes[c].letter && s[0] == classes[c].letter && !s[1]))
			return c;
	}
	return -1;
}

/* ---------- settings ---------- */

enum kind {
	FLAG,		/* 0 or 1 */
	NUM,		/* integer in [min, max], stored times scale */
	STR,
	SPEEDUPS,	/* comma list of percentages */
	SCOPE,		/* a blocked subclass */
	GRANULARITY,	/* line or function */
	LINE_SPEC,	/* FILE:LINE */
};

struct setting {
	const char *var;
	const char *option;	/* the bcoz run option that sets it, or NULL */
	enum kind kind;
	size_t off, size;	/* the field in struct bcoz_config */
	long long min, max;
	unsigned long long scale;
	const char *want;	/* the accepted form, for the error */
};

#define SET(v, opt, k, field, lo, hi, sc, w) \
	{ "BCOZ_" #v, opt, k, offsetof(struct bcoz_config, field), \
	  sizeof(((struct bcoz_config *)0)->field), lo, hi, sc, w }

static const struct setting settings[] = {
	SET(VERBOSE, "-v", FLAG, verbose, 0, 1, 1, "0 or 1"),
	SET(OUTPUT, "-o", STR, output, 0, 0, 0, NULL),
	SET(STATS, NULL, STR, stats, 0, 0, 0, NULL),
	SET(FOLLOW_EXEC, "--follow-exec", FLAG, follow_exec, 0, 1, 1, "0 or 1"),
	SET(FOLLOWED, NULL, FLAG, followed, 0, 1, 1, "0 or 1 (set by bcoz itself)"),
	SET(END_TO_END, "--end-to-end", FLAG, end_to_end, 0, 1, 1, "0 or 1"),
	SET(FIXED_SPEEDUP, "--fixed-speedup", NUM, fixed_speedup, 0, 100, 1,
	    "an integer percentage 0-100, e.g. 50"),
	SET(EXPERIMENTS, "--experiments", NUM, experiments, 1, 1000000, 1,
	    "a count from 1 to 1000000, e.g. 20"),
	SET(SPEEDUPS, "--speedups", SPEEDUPS, speedups, 0, 100, 1,
	    "a comma-separated list of up to 21 percentages 0-100, e.g. 0,25,50"),
	SET(BLOCKED_SCOPE, "--blocked-scope", SCOPE, scope, 0, 0, 0, NULL),
	SET(SLEEP_PAUSES, NULL, FLAG, sleep_pauses, 0, 1, 1, "0 or 1"),
	SET(SPIN_PAUSES, NULL, FLAG, spin_pauses, 0, 1, 1, "0 or 1"),
	SET(STACK_BYTES, NULL, NUM, stack_bytes, 0, BCOZ_STACK_BYTES_MAX, 1,
	    "0 (no stack copy) or 8 to 2048 bytes"),
	SET(TIMER_US, NULL, NUM, timer_ns, 100, 100000, 1000,
	    "microseconds of thread CPU time, 100-100000 (default 10000)"),
	SET(PAUSE_TICKS, NULL, NUM, pause_ticks, 1, 100, 1,
	    "a tick count 1-100 (default 1)"),
	SET(MIN_PAUSE_US, NULL, NUM, min_pause_ns, 0, 100000, 1000,
	    "microseconds 0-100000 (default 20)"),
	SET(PAUSE_SPIN_MAX_US, NULL, NUM, pause_spin_max_ns, 0, 100000, 1000,
	    "microseconds 0-100000 (default 300)"),
	SET(EXP_MS, NULL, NUM, min_exp_ns, 20, 10000, 1000000,
	    "milliseconds 20-10000 (default 100)"),
	SET(WARMUP_PCT, NULL, NUM, warmup_pct, 0, 90, 1, "a percentage 0-90 (default 30)"),
	SET(CREDIT_MEASURED, NULL, FLAG, credit_measured, 0, 1, 1, "0 or 1"),
	SET(NO_OWN_CREDIT, NULL, FLAG, no_own_credit, 0, 1, 1, "0 or 1"),
	SET(CARRY, NULL, FLAG, carry, 0, 1, 1, "0 or 1"),
	SET(NO_RUNQ, NULL, FLAG, no_runq, 0, 1, 1, "0 or 1"),
	SET(NO_BLOCKED, NULL, FLAG, no_blocked, 0, 1, 1, "0 or 1"),
	SET(WARNED_BLOCKED, NULL, FLAG, warned_blocked, 0, 1, 1, "0 or 1 (set by bcoz itself)"),
	SET(FIXED_LINE, "--fixed-line", LINE_SPEC, fixed_line, 0, 0, 0,
	    "FILE:LINE, e.g. toy.c:42"),
	SET(FIXED_FUNCTION, "--fixed-function", STR, fixed_function, 0, 0, 0, NULL),
	SET(BIN_SCOPE, "-b", STR, bin_scope, 0, 0, 0, NULL),
	SET(SRC_SCOPE, "-s", STR, src_scope, 0, 0, 0, NULL),
	SET(GRANULARITY, "--granularity", GRANULARITY, by_function, 0, 1, 1,
	    "line (the default: functions only where an object has no line tables) "
	    "or function"),
};

static void *field(const struct setting *s)
{
	return (char *)&bcoz_cfg + s->off;
}

static int bad(const struct setting *s, const char *val, const char *want)
{
	bcoz_msg("error: %s=%.200s%s%s%s: %s\n", s->var, val, s->option ? " (" : "",
		 s->option ?: "", s->option ? ")" : "", want);
	return -1;
}

/* the value is not of the setting's form */
static int bad_form(const struct setting *s, const char *val)
{
	char want[256];

	snprintf(want, sizeof(want), "expected %s", s->want);
	return bad(s, val, want);
}

/* a whole decimal integer in [min, max] */
static int parse_int(const char *val, long long min, long long max, long long *v)
{
	char *end;

	*v = strtoll(val, &end, 10);
	return end == val || *end || *v < min || *v > max ? -1 : 0;
}

static void store(const struct setting *s, long long v)
{
	unsigned long long x = (unsigned long long)v * s->scale;

	if (s->size == sizeof(uint64_t))
		*(uint64_t *)field(s) = x;
	else
		*(int *)field(s) = (int)x;
}

static int parse_speedups(const struct setting *s, const char *val)
{
	const char *p = val;
	long long v;
	char tok[32];

	bcoz_cfg.nspeedups = 0;
	for (;;) {
		size_t n = strcspn(p, ",");

		if (!n || n >= sizeof(tok) || bcoz_cfg.nspeedups > BCOZ_SPEEDUP_STEPS)
			return bad(s, val, "expected a comma-separated list of up to 21 "
				   "percentages 0-100, e.g. 0,25,50");
		memcpy(tok, p, n);
		tok[n] = 0;
		if (parse_int(tok, 0, 100, &v))
			return bad(s, val, "expected a comma-separated list of up to 21 "
				   "percentages 0-100, e.g. 0,25,50");
		bcoz_cfg.speedups[bcoz_cfg.nspeedups++] = v;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int parse_scope(const struct setting *s, const char *val)
{
	int c = bcoz_class_parse(val);

	if (c == BCOZ_LOCK)
		return bad(s, val, "lock waiting cannot be sped up by itself; the waiting ends "
			   "when the holder leaves the critical section, so speed up the "
			   "critical section's lines instead (paper section 3.3)");
	if (c < 0 || c == BCOZ_ONCPU)
		return bad(s, val, "expected i or io (I/O), s or sched (scheduling), b or "
			   "other (other blocking)");
	bcoz_cfg.scope = c;
	return 0;
}

static int parse_line_spec(const struct setting *s, const char *val)
{
	const char *colon = strrchr(val, ':');
	long long v;

	if (!colon || colon == val || parse_int(colon + 1, 1, INT32_MAX, &v))
		return bad(s, val, "expected FILE:LINE, e.g. toy.c:42");
	bcoz_cfg.fixed_line = val;
	return 0;
}

static int parse_one(const struct setting *s, const char *val)
{
	long long v;

	switch (s->kind) {
	case FLAG:
	case NUM:
		if (parse_int(val, s->min, s->max, &v))
			return bad_form(s, val);
		store(s, v);
		return 0;
	case STR:
		*(const char **)field(s) = val;
		return 0;
	case SPEEDUPS:
		return parse_speedups(s, val);
	case SCOPE:
		return parse_scope(s, val);
	case GRANULARITY:
		if (strcmp(val, "line") && strcmp(val, "function"))
			return bad_form(s, val);
		bcoz_cfg.by_function = !strcmp(val, "function");
		return 0;
	case LINE_SPEC:
		return parse_line_spec(s, val);
	}
	return -1;
}

static const struct setting *setting(const char *var)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (!strcmp(settings[i].var, var))
			return &settings[i];
	return NULL;
}

/* two settings that cannot go together */
static int conflict(const char *a, const char *b, const char *why)
{
	const struct setting *sa = setting(a), *sb = setting(b);

	if (sa->option && sb->option)
		bcoz_msg("error: %s and %s (%s, %s) %s: use one of them\n", a, b, sa->option,
			 sb->option, why);
	else
		bcoz_msg("error: %s and %s %s: use one of them\n", a, b, why);
	return -1;
}

static int check_combinations(void)
{
	struct bcoz_config *c = &bcoz_cfg;

	if (c->stack_bytes > 0 && c->stack_bytes < 8) {
		char v[16];

		snprintf(v, sizeof(v), "%d", c->stack_bytes);
		return bad_form(setting("BCOZ_STACK_BYTES"), v);
	}
	if (c->nspeedups && c->fixed_speedup >= 0)
		return conflict("BCOZ_SPEEDUPS", "BCOZ_FIXED_SPEEDUP", "both choose the speedups");
	if (c->experiments && c->end_to_end)
		return conflict("BCOZ_EXPERIMENTS", "BCOZ_END_TO_END",
				"exclude each other: N experiments end the program, end-to-end "
				"runs one experiment per run");
	if (c->fixed_line && c->fixed_function)
		return conflict("BCOZ_FIXED_LINE", "BCOZ_FIXED_FUNCTION",
				"both choose what to speed up");
	if (c->fixed_line && c->scope)
		return conflict("BCOZ_FIXED_LINE", "BCOZ_BLOCKED_SCOPE",
				"both choose what to speed up");
	if (c->fixed_function && c->scope)
		return conflict("BCOZ_FIXED_FUNCTION", "BCOZ_BLOCKED_SCOPE",
				"both choose what to speed up");
	if (c->spin_pauses && c->sleep_pauses)
		return conflict("BCOZ_SPIN_PAUSES", "BCOZ_SLEEP_PAUSES",
				"both choose how a pause waits");
	/* rules of sleeping pauses: with spinning ones they would do nothing */
	if (bcoz_every_pause_spins(c)) {
		static const char *const sleeping[] = {
			"BCOZ_CARRY", "BCOZ_CREDIT_MEASURED", "BCOZ_PAUSE_SPIN_MAX_US",
		};
		const int asked[] = { c->carry, c->credit_measured, 1 };

		for (size_t i = 0; i < sizeof(sleeping) / sizeof(sleeping[0]); i++) {
			const char *e = getenv(sleeping[i]);

			/* a flag at 0 asks for the default */
			if (e && *e && asked[i]) {
				bcoz_msg("error: %s=%.200s applies to sleeping pauses, and %s\n",
					 sleeping[i], e, c->spin_pauses ?
					 "BCOZ_SPIN_PAUSES=1 makes them spin: drop one of the two" :
					 "--blocked-scope s makes them spin: add BCOZ_SLEEP_PAUSES=1");
				return -1;
			}
		}
	}
	return 0;
}

int bcoz_every_pause_spins(const struct bcoz_config *c)
{
	return c->spin_pauses || (c->scope == BCOZ_SCHED && !c->sleep_pauses);
}

static void set_defaults(void)
{
	struct bcoz_config *c = &bcoz_cfg;

	memset(c, 0, sizeof(*c));
	c->output = "profile.coz";
	c->bin_scope = "MAIN";
	c->fixed_speedup = -1;
	c->stack_bytes = -1;
	c->scope = BCOZ_ONCPU;
	c->timer_ns = BCOZ_TIMER_NS;
	c->pause_ticks = BCOZ_PAUSE_TICKS;
	c->min_exp_ns = BCOZ_MIN_EXP_NS;
	c->warmup_pct = BCOZ_WARMUP_PCT;
	c->min_pause_ns = 20000;
	c->pause_spin_max_ns = 300000;
}

/*
 * Fill bcoz_cfg from the environment.  An unset or empty variable keeps
 * its default.  BCOZ_DISABLE (any value but 0) leaves everything else
 * unread.  Returns -1 after printing the first bad value.
 */
int bcoz_config_load(void)
{
	const char *e = getenv("BCOZ_DISABLE");

	set_defaults();
	if (e && strcmp(e, "0")) {
		bcoz_cfg.disable = 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		e = getenv(settings[i].var);
		if (e && *e && parse_one(&settings[i], e))
			return -1;
	}
	bcoz_cfg.followed &= bcoz_cfg.follow_exec;
	return check_combinations();
}
