/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * coz.h - progress points for the bcoz causal profiler.
 *
 * Source- and symbol-compatible with COZ: the macros look up
 * `_coz_get_counter(int type, const char *name)` at run time with dlsym(), so a
 * program built with this header runs normally (the macros do nothing) when
 * bcoz is not loaded, and a program built with COZ's header runs under bcoz.
 *
 *   COZ_PROGRESS              one unit of work done (named "file:line")
 *   COZ_PROGRESS_NAMED(name)  the same with an explicit name
 *   COZ_BEGIN(name) / COZ_END(name)   a transaction starts / ends (latency)
 *   COZ_PRE_BLOCK / COZ_POST_BLOCK(skip) / COZ_CATCH_UP   annotate custom
 *       blocking primitives (skip = 1 when another thread woke us)
 *
 * With old glibc (< 2.34) link with -ldl.
 */
#ifndef BCOZ_COZ_H
#define BCOZ_COZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COZ_COUNTER_TYPE_THROUGHPUT	1
#define COZ_COUNTER_TYPE_BEGIN		2
#define COZ_COUNTER_TYPE_END		3

typedef struct {
	size_t count;	/* visits; incremented atomically by the macros */
	size_t backoff;	/* unused; kept for layout compatibility */
} coz_counter_t;

typedef coz_counter_t *(*coz_get_counter_fn)(int, const char *);
typedef void (*coz_void_fn)(void);
typedef void (*coz_int_fn)(int);

/* dlsym may be absent (static link, no -ldl on old glibc): weak reference */
#pragma weak dlsym

static inline void *_bcoz_lookup(const char *sym)
{
	if (!dlsym)
		return NULL;
	return dlsym(RTLD_DEFAULT, sym);
}

static inline coz_counter_t *_bcoz_counter(int type, const char *name)
{
	/* resolved once per translation unit; NULL when bcoz is not loaded */
	static unsigned char done;
	static coz_get_counter_fn fn;

	if (!done) {
		fn = (coz_get_counter_fn)_bcoz_lookup("_coz_get_counter");
		done = 1;
	}
	return fn ? fn(type, name) : NULL;
}

/*
 * Progress-point names are also stored in the "bcoz_points" section so bcoz
 * can name a point that was declared but never reached.  The name is
 * emitted by the assembler, not as a variable: a variable in a named section
 * inside a C++ inline function goes to a COMDAT group, and GCC refuses to
 * mix it with one from an ordinary function ("section type conflict").
 * A copy of the function emitted twice only repeats the name.
 */
#define _BCOZ_STR2(x) #x
#define _BCOZ_STR(x) _BCOZ_STR2(x)
#define _BCOZ_DECLARE(name) \
	__asm__(".pushsection bcoz_points,\"a\"\n\t" \
		".asciz \"" name "\"\n\t.popsection")

#define _BCOZ_VISIT(type, name) do { \
		static unsigned char _bcoz_init; \
		static coz_counter_t *_bcoz_ctr; \
		if (!_bcoz_init) { \
			_bcoz_ctr = _bcoz_counter(type, name); \
			_bcoz_init = 1; \
		} \
		if (_bcoz_ctr) \
			__atomic_add_fetch(&_bcoz_ctr->count, 1, __ATOMIC_RELAXED); \
	} while (0)

#define COZ_PROGRESS_NAMED(name) _BCOZ_VISIT(COZ_COUNTER_TYPE_THROUGHPUT, name)

#define COZ_PROGRESS do { \
		_BCOZ_DECLARE(__FILE__ ":" _BCOZ_STR(__LINE__)); \
		_BCOZ_VISIT(COZ_COUNTER_TYPE_THROUGHPUT, __FILE__ ":" _BCOZ_STR(__LINE__)); \
	} while (0)

#define COZ_BEGIN(name) _BCOZ_VISIT(COZ_COUNTER_TYPE_BEGIN, name)
#define COZ_END(name) _BCOZ_VISIT(COZ_COUNTER_TYPE_END, name)

#define _BCOZ_CALL(sym, type, ...) do { \
		type _f = (type)_bcoz_lookup(sym); \
		if (_f) \
			_f(__VA_ARGS__); \
	} while (0)
#define COZ_PRE_BLOCK _BCOZ_CALL("_coz_pre_block", coz_void_fn)
#define COZ_POST_BLOCK(skip) _BCOZ_CALL("_coz_post_block", coz_int_fn, skip)
#define COZ_CATCH_UP _BCOZ_CALL("_coz_catch_up", coz_void_fn)

#ifdef __cplusplus
}
#endif

#endif
