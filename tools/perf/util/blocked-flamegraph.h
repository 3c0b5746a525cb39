/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hot/cold flame graphs of blocked samples: stacks are merged into one tree
 * weighted by sampling points; each frame is coloured by the class (on CPU,
 * or one of the blocked subclasses) that most of its time belongs to.
 * The leaf frame of a blocked stack names its class and what it waited
 * for ("[lock:mutex]", "[lock:condition]", see wait-reason.h) and is
 * coloured by the kind of that wait (idle, contended, io, ...).
 * Output is folded stacks or a self-contained SVG.
 */
#ifndef __PERF_BLOCKED_FLAMEGRAPH_H
#define __PERF_BLOCKED_FLAMEGRAPH_H

#include <linux/types.h>
#include <stdio.h>

struct addr_location;
struct evsel;
struct perf_sample;
struct blocked_fg;

struct blocked_fg *blocked_fg__new(void);
void blocked_fg__delete(struct blocked_fg *fg);

/*
 * Add one stack, frames[0] being the outermost caller, standing for count
 * sampling points of class cls (enum blocked_class).  A blocked stack gets
 * one more frame on top naming its class ("[io]", ...).
 */
int blocked_fg__add_stack(struct blocked_fg *fg, const char * const *frames,
			  int nr, int cls, u64 count);

/*
 * The same, the frame on top naming the class and the wait reason:
 * "[lock:mutex]"; a NULL reason gives the class frame alone.  The frame is
 * drawn in the colour of the reason's kind (wait_reason__kind()).
 */
int blocked_fg__add_wait_stack(struct blocked_fg *fg, const char * const *frames,
			       int nr, int cls, const char *reason, u64 count);

/*
 * Add a sample: comm, then its callchain (or just its symbol), resolved,
 * and on a blocked sample its class and wait reason (wait_reason__classify()).
 */
int blocked_fg__add_sample(struct blocked_fg *fg, struct perf_sample *sample,
			   struct evsel *evsel, struct addr_location *al,
			   int max_stack);

u64 blocked_fg__total(const struct blocked_fg *fg);
u64 blocked_fg__class_total(const struct blocked_fg *fg, int cls);

/* "frame;frame;... count" lines, one per distinct stack. */
int blocked_fg__fprintf_folded(struct blocked_fg *fg, FILE *fp);

/*
 * A self-contained SVG: inline script for hover, zoom and search, no
 * external resources.
 */
int blocked_fg__write_svg(struct blocked_fg *fg, FILE *fp, const char *title);

#endif /* __PERF_BLOCKED_FLAMEGRAPH_H */
