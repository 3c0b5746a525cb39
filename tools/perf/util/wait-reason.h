/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wait reasons: what a blocked sample waited for (mutex, condition, epoll,
 * pipe-read, mmap-lock, ...), named by the first rule of a rule table that
 * matches the sample's kernel and user callchain symbols and its kernel
 * class.  The default table is util/wait-reasons.rules, compiled in; users
 * add rules of their own from a file.  Format:
 * Documentation/bperf/wait-reasons.rst.
 */
#ifndef __PERF_WAIT_REASON_H
#define __PERF_WAIT_REASON_H

#include <stdbool.h>
#include <stddef.h>

struct addr_location;
struct evsel;
struct option;
struct perf_sample;

/* The built-in table (util/wait-reasons.rules), NUL-terminated. */
extern const char bperf_wait_rules_default[];

/* The reason of every on-CPU sample. */
#define WAIT_REASON_ONCPU	"on-cpu"

/*
 * What a reason means for the thread that waits, set by the table's @kind
 * lines: on the CPU, idle (waiting for work or an event: a condition
 * variable, epoll, accept, a sleep, ...), contended (waiting for a lock
 * another thread holds), I/O, runnable (waiting for a CPU) or other (the
 * rest, unknown reasons included).
 */
enum wait_kind {
	WAIT_KIND_ONCPU,
	WAIT_KIND_IDLE,
	WAIT_KIND_CONTENDED,
	WAIT_KIND_IO,
	WAIT_KIND_RUNNABLE,
	WAIT_KIND_OTHER,
	WAIT_KIND__NR,
};

/* "on-cpu", "idle", "contended", "io", "runnable", "other" */
const char *wait_kind__name(enum wait_kind kind);

/*
 * The kind of a reason: on-cpu for "on-cpu", else that of the first @kind
 * line whose list matches the reason, else other.  Loads the default rules
 * on first use.
 */
enum wait_kind wait_reason__kind(const char *reason);

/*
 * Parse rules from text (name and first line number are used in error
 * messages).  Rules added by earlier calls are tried first.  Returns 0, or
 * -EINVAL after printing "NAME:LINE: problem" for the first bad line (no
 * rule of the text is kept then).
 */
int wait_rules__parse(const char *text, const char *name);

/* "NAME:LINE: problem" of the last parse error, "" when there was none. */
const char *wait_rules__last_error(void);

/* Read and parse a user's rule file (tried before the defaults). */
int wait_rules__load_file(const char *path);

/* parse-options callback of --wait-rules FILE */
int wait_rules__parse_opt(const struct option *opt, const char *path, int unset);

/* Drop every rule (defaults included); for tests. */
void wait_rules__reset(void);

/*
 * The frames a sample is matched on, innermost first.  Exposed so that
 * callers with their own callchain (tests, script) can classify too.
 */
struct wait_frames {
	const char	**kernel;
	size_t		nr_kernel;
	const char	**user;
	size_t		nr_user;
};

/*
 * Name the wait of a sample of kernel class cls (enum blocked_class) with
 * the given frames.  Returns an interned string that lives until exit:
 * "on-cpu", a rule's reason, or "unknown:<kernel leaf>" / "unknown".
 * Loads the default rules on first use.
 */
const char *wait_reason__match(int cls, const struct wait_frames *frames);

/*
 * Name the wait of a resolved sample: resolves its callchain (kernel,
 * user, and DWARF-unwound user frames when recorded) into a private
 * cursor and calls wait_reason__match().
 */
const char *wait_reason__classify(struct addr_location *al, struct evsel *evsel,
				  struct perf_sample *sample);

#endif /* __PERF_WAIT_REASON_H */
