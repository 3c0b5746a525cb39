// SPDX-License-Identifier: GPL-2.0
/*
 * bcoz line map: runtime address -> in-scope source line, from the DWARF line
 * tables of the in-scope loaded objects (libdw).  Objects are found with
 * dl_iterate_phdr(), so libraries loaded later with dlopen() are added by
 * linemap_rescan().  Debug info is taken from the object itself, else from
 * /usr/lib/debug/.build-id/, else through .gnu_debuglink.
 *
 * Function granularity: an in-scope object without line tables (or every
 * object, with BCOZ_GRANULARITY=function) is mapped by its function symbols
 * instead, from .symtab, else .dynsym.  A function is an entry of the same
 * table with line 0 and the (demangled) function name in place of the file.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

struct range {
	uint64_t start, end;
	int line;
};

struct range_table {
	struct range *r;
	size_t n;
};

#define CHUNK_BITS	12
#define CHUNK		(1 << CHUNK_BITS)
#define MAX_CHUNKS	4096

static struct bcoz_line *line_chunks[MAX_CHUNKS];
static _Atomic int nlines;
static struct range_table *_Atomic table;
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

/* scope */
static char **bin_scope, **src_scope;
static int nbin, nsrc;
static int src_default;
static char main_exe[PATH_MAX];

/* objects already scanned */
static char **scanned;
static int nscanned;
static int objects_in_scope, objects_with_lines, objects_by_function;
static size_t rows_seen;
static char example_src[256];
static int by_function;			/* BCOZ_GRANULARITY=function */

/* interned files and lines: simple open hashing */
struct file_ent {
	char *name;
	int in_scope;
	struct file_ent *next;
};
#define FILE_HASH 4096
static struct file_ent *files[FILE_HASH];

struct line_ent {
	const char *file;
	int line;
	int idx;
	struct line_ent *next;
};
#define LINE_HASH (1 << 18)
static struct line_ent *lines_h[LINE_HASH];
/* line_ents come from slabs: one malloc per 4096 lines, not per line */
#define LINE_SLAB 4096
static struct line_ent *line_slab;
static size_t line_slab_used = LINE_SLAB;

static unsigned long hash_str(const char *s)
{
	unsigned long h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* '%' matches any (possibly empty) string */
static int pat_match(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '%') {
		for (const char *t = s;; t++) {
			if (pat_match(p + 1, t))
				return 1;
			if (!*t)
				return 0;
		}
	}
	return *p == *s && pat_match(p + 1, s + 1);
}

static char **split_scope(const char *env, int *n)
{
	char **v = NULL;
	char *dup, *tok, *save;

	*n = 0;
	if (!env || !*env)
		return NULL;
	dup = strdup(env);
	for (tok = strtok_r(dup, "\t", &save); tok; tok = strtok_r(NULL, "\t", &save)) {
		v = realloc(v, sizeof(*v) * (*n + 1));
		v[(*n)++] = strdup(tok);
	}
	free(dup);
	return v;
}

static void normalize(char *p)
{
	/* collapse "//", "/./" and "dir/../" without touching the disk */
	char *out = p, *in = p;

	while (*in) {
		if (in[0] == '/' && in[1] == '/') {
			in++;
			continue;
		}
		if (in[0] == '/' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			in += 2;
			continue;
		}
		if (in[0] == '/' && in[1] == '.' && in[2] == '.' && (in[3] == '/' || !in[3]) &&
		    out > p) {
			while (out > p && out[-1] != '/')
				out--;
			if (out > p)
				out--;
			in += 3;
			continue;
		}
		*out++ = *in++;
	}
	*out = 0;
}

/* does PATH start with the directory DIR ("./elf" and "./elf/x.c")? */
static int has_dir_prefix(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && !strncmp(path, dir, n) && (path[n] == '/' || dir[n - 1] == '/');
}

static int src_in_scope(const char *f)
{
	size_t l = strlen(f);

	if (l >= 6 && !strcmp(f + l - 6, "/coz.h"))
		return 0;
	if (!strcmp(f, "coz.h"))
		return 0;
	if (src_default) {
		if (!strncmp(f, "/usr/include/", 13) || !strncmp(f, "/usr/lib/", 9) ||
		    !strncmp(f, "/usr/local/include/", 19) || !strncmp(f, "/rustc/", 7) ||
		    strstr(f, "/.cargo/registry/") || strstr(f, "/.rustup/"))
			return 0;
		return 1;
	}
	for (int i = 0; i < nsrc; i++)
		if (pat_match(src_scope[i], f))
			return 1;
	return 0;
}

static struct file_ent *intern_file(const char *name)
{
	unsigned long h = hash_str(name) % FILE_HASH;
	struct file_ent *e;

	for (e = files[h]; e; e = e->next)
		if (!strcmp(e->name, name))
			return e;
	e = calloc(1, sizeof(*e));
	e->name = strdup(name);
	e->in_scope = src_in_scope(name);
	e->next = files[h];
	files[h] = e;
	return e;
}

static int intern_line(const char *file, int line)
{
	/* file names are interned: their address identifies them */
	unsigned long h = (((uintptr_t)file >> 4) * 0x9E3779B1UL + (unsigned long)line) % LINE_HASH;
	struct line_ent *e;
	int idx;

	for (e = lines_h[h]; e; e = e->next)
		if (e->file == file && e->line == line)
			return e->idx;
	idx = atomic_load(&nlines);
	if (idx >= MAX_CHUNKS * CHUNK)
		return -1;
	if (!line_chunks[idx >> CHUNK_BITS])
		line_chunks[idx >> CHUNK_BITS] = calloc(CHUNK, sizeof(struct bcoz_line));
	line_chunks[idx >> CHUNK_BITS][idx & (CHUNK - 1)].file = file;
	line_chunks[idx >> CHUNK_BITS][idx & (CHUNK - 1)].line = line;
	if (line_slab_used == LINE_SLAB) {
		line_slab = malloc(LINE_SLAB * sizeof(*line_slab));
		if (!line_slab)
			return -1;
		line_slab_used = 0;
	}
	e = &line_slab[line_slab_used++];
	e->file = file;
	e->line = line;
	e->idx = idx;
	e->next = lines_h[h];
	lines_h[h] = e;
	atomic_store(&nlines, idx + 1);
	return idx;
}

struct bcoz_line *linemap_line(int idx)
{
	if (idx < 0 || idx >= atomic_load(&nlines))
		return NULL;
	return &line_chunks[idx >> CHUNK_BITS][idx & (CHUNK - 1)];
}

int linemap_nlines(void)
{
	return atomic_load(&nlines);
}

/* ranges collected during one scan */
static struct range *pend;
static size_t npend, cappend;

static void add_range(uint64_t s, uint64_t e, int line)
{
	/* rows of one line that follow each other make one range */
	if (npend && pend[npend - 1].line == line && pend[npend - 1].end == s) {
		pend[npend - 1].end = e;
		return;
	}
	if (npend == cappend) {
		cappend = cappend ? cappend * 2 : 4096;
		pend = realloc(pend, cappend * sizeof(*pend));
	}
	pend[npend].start = s;
	pend[npend].end = e;
	pend[npend].line = line;
	npend++;
}

/*
 * A CU's code ranges, sorted.  GCC's line program runs a function's hot
 * and cold parts (-freorder-blocks-and-partition, on at -O2) as one
 * sequence: the hot part's last row is followed by the cold part's first,
 * megabytes on, with no end of sequence between.  Taken as a range, that
 * row covered everything in between: in glibc (libc6-dbg) one row of
 * ifaddrs.c held 0x2705f-0x121d20, and write()'s syscall read
 * ifaddrs.c:729.  A row ends where its CU's range ends, as addr2line has it.
 */
struct span {
	Dwarf_Addr s, e;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

static size_t cu_spans(Dwarf_Die *cu, struct span **sp, size_t *cap)
{
	Dwarf_Addr base, s, e;
	ptrdiff_t o = 0;
	size_t n = 0;

	while ((o = dwarf_ranges(cu, o, &base, &s, &e)) > 0) {
		if (e <= s)
			continue;
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			struct span *m = realloc(*sp, c * sizeof(**sp));

			if (!m)
				return 0;	/* unclipped, as before */
			*sp = m;
			*cap = c;
		}
		(*sp)[n].s = s;
		(*sp)[n++].e = e;
	}
	if (n > 1)
		qsort(*sp, n, sizeof(**sp), cmp_span);
	return n;
}

/* the end of the span holding @a, or 0 if none does */
static Dwarf_Addr span_end(const struct span *sp, size_t n, Dwarf_Addr a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sp[mid].s <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < sp[lo - 1].e ? sp[lo - 1].e : 0;
}

static size_t scan_dwarf(Dwarf *dw, uint64_t bias)
{
	struct span *spans = NULL;
	size_t nspans, capspans = 0;
	Dwarf_Off off = 0, next;
	size_t hsize, added = 0;
	/*
	 * Consecutive rows mostly name the same file, by the same pointer into
	 * the CU's file table: its path is joined, normalised and interned
	 * once, not once per row (the bulk of the start-up on large binaries).
	 */
	const char *last_src = NULL;
	struct file_ent *last_fe = NULL;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;
		const char *compdir = NULL;
		Dwarf_Attribute at;

		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_getsrclines(&cu, &lines, &n)) {
			off = next;
			continue;
		}
		if (dwarf_attr(&cu, DW_AT_comp_dir, &at))
			compdir = dwarf_formstring(&at);
		nspans = cu_spans(&cu, &spans, &capspans);
		last_src = NULL;	/* another CU: another file table */
		for (size_t i = 0; i + 1 < n; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Line *nl = dwarf_onesrcline(lines, i + 1);
			Dwarf_Addr a, b;
			int lineno;
			bool endseq;
			const char *src;
			char path[PATH_MAX];
			struct file_ent *fe;
			int idx;

			if (!l || !nl || dwarf_lineendsequence(l, &endseq) || endseq)
				continue;
			if (dwarf_lineaddr(l, &a) || dwarf_lineaddr(nl, &b) || b <= a)
				continue;
			if (nspans) {
				Dwarf_Addr end = span_end(spans, nspans, a);

				if (!end)
					continue;	/* outside the CU's code */
				if (b > end)
					b = end;
			}
			if (dwarf_lineno(l, &lineno) || lineno <= 0)
				continue;
			src = dwarf_linesrc(l, NULL, NULL);
			if (!src)
				continue;
			if (src == last_src) {
				fe = last_fe;
			} else {
				/*
				 * libdw has joined a relative name with its
				 * directory, comp_dir for the first; a relative
				 * comp_dir (glibc's "./elf", -ffile-prefix-map)
				 * is then in src already: join it only once
				 */
				if (src[0] != '/' && compdir && !has_dir_prefix(src, compdir))
					snprintf(path, sizeof(path), "%s/%s", compdir, src);
				else
					snprintf(path, sizeof(path), "%s", src);
				normalize(path);
				fe = intern_file(path);
				last_src = src;
				last_fe = fe;
			}
			rows_seen++;
			if (!fe->in_scope) {
				if (!example_src[0] && !strstr(fe->name, "/usr/"))
					/* an example for a message: cut short if long */
					snprintf(example_src, sizeof(example_src), "%.*s",
						 (int)sizeof(example_src) - 1, fe->name);
				continue;
			}
			idx = intern_line(fe->name, lineno);
			if (idx < 0)
				continue;
			add_range(a + bias, b + bias, idx);
			added++;
		}
		off = next;
	}
	free(spans);
	return added;
}

/*
 * C++ names are demangled with libstdc++'s __cxa_demangle: present in every
 * process that runs C++ code; otherwise libstdc++ is loaded for it (with the
 * real dlopen, so no rescan starts while the map is being built).  Without
 * libstdc++ the mangled name is kept.
 */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static const char *demangle(const char *name, char **freeme)
{
	static demangle_fn fn;
	static int tried;
	int status = -1;
	char *d;

	*freeme = NULL;
	if (strncmp(name, "_Z", 2))
		return name;
	if (!tried) {
		tried = 1;
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *(*real_dlopen)(const char *, int) =
				(void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
			void *h = real_dlopen ? real_dlopen("libstdc++.so.6",
							    RTLD_LAZY | RTLD_LOCAL) : NULL;

			if (h)
				fn = (demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	if (!fn)
		return name;
	d = fn(name, NULL, NULL, &status);
	if (!d || status)
		return name;
	*freeme = d;
	return d;
}

/* the function names of one object: .symtab, else .dynsym */
static size_t scan_symbols(Elf *elf, uint64_t bias, const char **which)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n, added = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	scn = symtab ? symtab : dynsym;
	*which = symtab ? ".symtab" : ".dynsym";
	if (!scn || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name, *shown;
		char *freeme, buf[1024];
		struct file_ent *fe;
		int type, idx;

		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || !sym.st_size)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		shown = demangle(name, &freeme);
		/* a profile record holds one selection of at most ~4 KiB */
		snprintf(buf, sizeof(buf), "%s", shown);
		free(freeme);
		fe = intern_file(buf);
		idx = intern_line(fe->name, 0);
		if (idx < 0)
			continue;
		add_range(sym.st_value + bias, sym.st_value + sym.st_size + bias, idx);
		added++;
	}
	return added;
}

static Dwarf *open_dwarf(const char *path, int *fdp, Elf **elfp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Dwarf *dw;

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return NULL;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	*fdp = fd;
	*elfp = elf;
	return dw;
}

static void close_dwarf(Dwarf *dw, int fd, Elf *elf)
{
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* find separate debug info: build-id first, then .gnu_debuglink */
static Dwarf *open_separate(Elf *elf, const char *path, int *fdp, Elf **elfp)
{
	const void *id;
	ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
	char dpath[PATH_MAX];
	Dwarf *dw;

	if (idlen > 1) {
		const unsigned char *b = id;
		int n = snprintf(dpath, sizeof(dpath), "/usr/lib/debug/.build-id/%02x/", b[0]);

		for (ssize_t i = 1; i < idlen && n < (int)sizeof(dpath) - 8; i++)
			n += snprintf(dpath + n, sizeof(dpath) - n, "%02x", b[i]);
		snprintf(dpath + n, sizeof(dpath) - n, ".debug");
		dw = open_dwarf(dpath, fdp, elfp);
		if (dw)
			return dw;
		close_dwarf(NULL, *fdp, *elfp);
		*fdp = -1;
		*elfp = NULL;
	}
	{
		GElf_Word crc;
		const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
		char dir[PATH_MAX];
		char *slash;
		const char *fmts[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };

		if (!link)
			return NULL;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		for (int i = 0; i < 3; i++) {
			snprintf(dpath, sizeof(dpath), fmts[i], dir, link);
			dw = open_dwarf(dpath, fdp, elfp);
			if (dw)
				return dw;
			close_dwarf(NULL, *fdp, *elfp);
			*fdp = -1;
			*elfp = NULL;
		}
	}
	return NULL;
}

/* names of progress points declared with bcoz's coz.h */
struct decl {
	char *name;
	const char *obj;
	struct decl *next;
};
static struct decl *decls;

/* "file:line" names compare by file, then by line number */
static int decl_cmp(const struct decl *a, const struct decl *b)
{
	const char *ca = strrchr(a->name, ':'), *cb = strrchr(b->name, ':');
	size_t la = ca ? (size_t)(ca - a->name) : strlen(a->name);
	size_t lb = cb ? (size_t)(cb - b->name) : strlen(b->name);
	int c = strncmp(a->name, b->name, la < lb ? la : lb);

	if (c || la != lb)
		return c ? c : (la < lb ? -1 : 1);
	if (!ca || !cb)
		return strcmp(a->name, b->name);
	return atol(ca + 1) < atol(cb + 1) ? -1 : atol(ca + 1) > atol(cb + 1);
}

static void read_declared(Elf *elf, const char *obj)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, "bcoz_points") || sh.sh_type == SHT_NOBITS)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		for (size_t off = 0; off < d->d_size;) {
			const char *s = (const char *)d->d_buf + off;
			size_t l = strnlen(s, d->d_size - off);

			/* a function emitted more than once repeats its names */
			for (struct decl *y = decls; l && y; y = y->next)
				if (!strncmp(y->name, s, l) && !y->name[l])
					l = 0;
			if (l) {
				struct decl *x = malloc(sizeof(*x)), **at = &decls;

				x->name = strndup(s, l);
				x->obj = obj;
				/* in source order: by file, then line */
				while (*at && decl_cmp(*at, x) < 0)
					at = &(*at)->next;
				x->next = *at;
				*at = x;
			}
			off += l + 1;
		}
	}
}

void linemap_declared_points(void (*cb)(const char *name, const char *obj))
{
	for (struct decl *x = decls; x; x = x->next)
		cb(x->name, x->obj);
}

/*
 * A program that has no PT_INTERP is statically linked: it never runs the
 * dynamic linker, so LD_PRELOAD never loads us into it (--follow-exec
 * warns; the launcher checks the first command, bcozlib/target.py).
 * 0 for anything that is not a readable regular ELF executable.
 */
int linemap_static_program(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int is_static = 0;
	size_t n;
	GElf_Ehdr eh;
	struct stat st;
	Elf *elf;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) && !elf_getphdrnum(elf, &n)) {
		GElf_Phdr ph;

		is_static = 1;
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
				is_static = 0;
	}
	elf_end(elf);
	close(fd);
	return is_static;
}

/* libbcoz.so itself: never in scope, even for -b % */
static char own_path[PATH_MAX];

static void find_own_path(void)
{
	Dl_info di;

	if (dladdr((void *)find_own_path, &di) && di.dli_fname &&
	    !realpath(di.dli_fname, own_path))
		own_path[0] = 0;
}

static int bin_in_scope(const char *path)
{
	if (!strcmp(path, own_path))
		return 0;
	for (int i = 0; i < nbin; i++) {
		if (!strcmp(bin_scope[i], "MAIN")) {
			if (!strcmp(path, main_exe))
				return 1;
		} else if (pat_match(bin_scope[i], path)) {
			return 1;
		}
	}
	return 0;
}

/*
 * In-scope objects whose code maps only in part: fully stripped ones (no
 * symbols at all) and ones profiled by function from .dynsym (exported
 * functions only).  A sample whose code is in one of them but in no line
 * is in no line of the profile either; it is counted here, so the end of
 * the run can say how much of the program the profile cannot see.
 */
#define BLIND_MAX	64

static struct blind_obj {
	uint64_t start, end;		/* the executable segments' span */
	char *path;
	size_t nfunc;			/* 0: fully stripped */
	_Atomic uint64_t samples;
} blind[BLIND_MAX];
static _Atomic int nblind;

/*
 * The size of an object's code: its executable sections (without
 * -z separate-code the executable segment holds read-only data too).
 */
static uint64_t code_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t n = 0;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR))
			n += sh.sh_size;
	return n;
}

static void add_blind(struct dl_phdr_info *info, const char *path, size_t nfunc)
{
	int n = atomic_load(&nblind);
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (n == BLIND_MAX || lo >= hi)
		return;
	blind[n].start = lo;
	blind[n].end = hi;
	blind[n].path = strdup(path);
	blind[n].nfunc = nfunc;
	atomic_store(&nblind, n + 1);	/* readers see the entry complete */
}

int linemap_blind(uint64_t addr)
{
	int n = atomic_load(&nblind);

	/* (a return address's call instruction is inside too: after_call()) */
	for (int i = 0; i < n; i++)
		if (addr >= blind[i].start + 8 && addr < blind[i].end)
			return i;
	return -1;
}

int linemap_blind_stripped(int b)
{
	return !blind[b].nfunc;
}

void linemap_blind_count(int b, uint64_t weight)
{
	atomic_fetch_add_explicit(&blind[b].samples, weight, memory_order_relaxed);
}

/* at exit: the in-scope objects that hid at least a tenth of the samples */
void linemap_report_blind(uint64_t total)
{
	int n = atomic_load(&nblind);

	for (int i = 0; i < n && total; i++) {
		uint64_t s = atomic_load(&blind[i].samples);

		if (s * 10 < total)
			continue;
		if (!blind[i].nfunc)
			bcoz_msg("warning: %.0f%% of the samples (%llu of %llu) were in %s, which "
				 "has no symbols: they are in no line or function of the profile. "
				 "Fix: install its debug symbols (the -dbgsym package) or rebuild "
				 "it with -g\n", 100.0 * s / total, (unsigned long long)s,
				 (unsigned long long)total, blind[i].path);
		else
			bcoz_msg("warning: %.0f%% of the samples (%llu of %llu) were in %s outside "
				 "its %zu exported function%s (.dynsym lists no internal ones): "
				 "they are in no function of the profile. Fix: install its debug "
				 "symbols (the -dbgsym package)\n", 100.0 * s / total,
				 (unsigned long long)s, (unsigned long long)total, blind[i].path,
				 blind[i].nfunc, blind[i].nfunc == 1 ? "" : "s");
	}
}

/* an exec'd child with --follow-exec: its lack of line info is not an error */
static int quiet;

static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
	char path[PATH_MAX];
	const char *name = info->dlpi_name;
	int fd = -1, fd2 = -1;
	Elf *elf = NULL, *elf2 = NULL;
	Dwarf *dw;
	size_t added;

	(void)size;
	(void)data;
	if (!name || !*name) {
		snprintf(path, sizeof(path), "%s", main_exe);
	} else {
		if (!realpath(name, path))
			return 0;
	}
	for (int i = 0; i < nscanned; i++)
		if (!strcmp(scanned[i], path))
			return 0;
	scanned = realloc(scanned, sizeof(*scanned) * (nscanned + 1));
	scanned[nscanned++] = strdup(path);
	if (!bin_in_scope(path))
		return 0;
	objects_in_scope++;
	dw = open_dwarf(path, &fd, &elf);
	if (elf)
		read_declared(elf, scanned[nscanned - 1]);
	if (!dw && elf && !by_function)
		dw = open_separate(elf, path, &fd2, &elf2);
	/*
	 * A program exec'd under --follow-exec (quiet) is profiled by function
	 * only when asked for: tools without line tables (sh, cp) that a
	 * program runs keep running unprofiled.
	 */
	if (elf && (by_function || (!dw && !quiet))) {
		const char *which;

		close_dwarf(dw, fd2, elf2);
		added = scan_symbols(elf, info->dlpi_addr, &which);
		if (added) {
			objects_with_lines++;
			objects_by_function++;
			if (!strcmp(which, ".dynsym"))
				add_blind(info, path, added);
			if (!by_function && !quiet)
				bcoz_msg("no line tables in %s: profiling by function (%zu "
					 "function%s from %s)\n", path, added,
					 added == 1 ? "" : "s", which);
			else if (bcoz_cfg.verbose)
				bcoz_msg("function map: %s: %zu functions from %s\n", path,
					 added, which);
		} else if (strcmp(path, main_exe) && code_bytes(elf) < 1024) {
			/* a data-only library (libicudata: 261 bytes of init code) */
			if (bcoz_cfg.verbose && !quiet)
				bcoz_msg("%s has no code to profile (data only)\n", path);
		} else if (!quiet) {
			add_blind(info, path, 0);
			bcoz_msg("warning: %s has neither line tables nor function symbols "
				 "(fully stripped); it is in scope but cannot be profiled. Fix: "
				 "rebuild it with -g, or do not strip it%s\n", path,
				 strcmp(path, main_exe) ? "" :
				 "; if it only starts the program to profile (sh -c, env, a "
				 "script), put that program after --- instead");
		}
		close_dwarf(NULL, fd, elf);
		return 0;
	}
	if (!dw) {
		close_dwarf(NULL, fd, elf);
		return 0;
	}
	added = scan_dwarf(dw, info->dlpi_addr);
	if (added)
		objects_with_lines++;
	if (bcoz_cfg.verbose)
		bcoz_msg("line map: %s: %zu ranges\n", path, added);
	close_dwarf(dw, fd2 >= 0 ? fd2 : fd, elf2 ? elf2 : elf);
	if (fd2 >= 0)
		close_dwarf(NULL, fd, elf);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* lookups in progress (from SIGPROF handlers too): publish() frees an old
 * table only once none can still be reading it */
static _Atomic int lookups;

static void publish(void)
{
	struct range_table *old = atomic_load(&table);
	struct range_table *nt;
	size_t nold = old ? old->n : 0, n = npend + nold, i = 0, j = 0, k = 0;
	struct range *all;
	int sorted = 1;

	if (!npend)
		return;
	/*
	 * A line table is mostly in address order already: sort the new
	 * ranges only if they are not, then merge them with the old table
	 * (sorted) in one pass, instead of sorting everything again at each
	 * dlopen.  Where ranges overlap the earlier one wins, the old table's
	 * on a tie.
	 */
	for (size_t x = 1; x < npend && sorted; x++)
		sorted = pend[x - 1].start <= pend[x].start;
	if (!sorted)
		qsort(pend, npend, sizeof(*pend), cmp_range);
	all = malloc(n * sizeof(*all));
	if (!all) {
		bcoz_msg("warning: out of memory for the line map (%zu ranges); "
			 "the newest object's lines are not profiled\n", n);
		npend = 0;
		return;
	}
	while (i < nold || j < npend) {
		struct range r = (j == npend || (i < nold && old->r[i].start <= pend[j].start)) ?
				 old->r[i++] : pend[j++];

		if (k && r.start < all[k - 1].end) {
			if (r.end <= all[k - 1].end)
				continue;
			r.start = all[k - 1].end;
		}
		all[k++] = r;
	}
	free(pend);
	pend = NULL;
	npend = cappend = 0;
	nt = malloc(sizeof(*nt));
	if (!nt) {
		bcoz_msg("warning: out of memory for the line map; the newest object's "
			 "lines are not profiled\n");
		free(all);
		return;
	}
	nt->r = realloc(all, k * sizeof(*all)) ?: all;
	nt->n = k;
	atomic_store(&table, nt);
	if (old) {
		/* a lookup that loaded the old pointer is still counted */
		while (atomic_load(&lookups))
			sched_yield();
		free(old->r);
		free(old);
	}
}

int linemap_init(int be_quiet)
{
	const char *bs = bcoz_cfg.bin_scope;
	const char *ss = bcoz_cfg.src_scope;
	ssize_t n;

	quiet = be_quiet;
	by_function = bcoz_cfg.by_function;
	elf_version(EV_CURRENT);
	n = readlink("/proc/self/exe", main_exe, sizeof(main_exe) - 1);
	if (n > 0)
		main_exe[n] = 0;
	find_own_path();
	bin_scope = split_scope(bs, &nbin);
	src_scope = split_scope(ss, &nsrc);
	src_default = !nsrc || (nsrc == 1 && !strcmp(src_scope[0], "%"));
	bcoz_real_mutex_lock(&map_lock);
	dl_iterate_phdr(scan_object, NULL);
	publish();
	bcoz_real_mutex_unlock(&map_lock);
	if (be_quiet && (!objects_in_scope || !atomic_load(&nlines)))
		return -1;
	if (!objects_in_scope) {
		bcoz_msg("error: no loaded object matches the binary scope (-b %s); main executable "
			 "is %s. Fix: pass -b with a %%-pattern that matches it, or -b MAIN\n",
			 bs, main_exe);
		return -1;
	}
	if (rows_seen && !atomic_load(&nlines)) {
		bcoz_msg("error: the in-scope binaries have debug info, but no source file "
			 "matches the source scope (-s %s)%s%s. Fix: use a %%-pattern such as "
			 "-s '%%/myproject/%%'\n", ss && *ss ? ss : "%",
			 example_src[0] ? "; e.g. " : "", example_src);
		return -1;
	}
	if (!objects_with_lines || !atomic_load(&nlines)) {
		bcoz_msg("error: no debug line information in scope, and no function symbols "
			 "(binary scope: %s, source scope: %s). Fix: compile with -g (e.g. "
			 "CFLAGS='-g -O2 -fno-omit-frame-pointer'), do not strip the binary, "
			 "or widen -s/-b\n",
			 bs, ss && *ss ? ss : "%");
		return -1;
	}
	return 0;
}

void linemap_rescan(void)
{
	bcoz_real_mutex_lock(&map_lock);
	dl_iterate_phdr(scan_object, NULL);
	publish();
	bcoz_real_mutex_unlock(&map_lock);
}

void linemap_hold(void)
{
	atomic_fetch_add(&lookups, 1);
}

void linemap_release(void)
{
	atomic_fetch_sub(&lookups, 1);
}

/* between linemap_hold() and linemap_release(): the table stays */
int linemap_lookup_held(uint64_t addr)
{
	struct range_table *t = atomic_load(&table);
	size_t lo = 0, hi;

	if (!t || !t->n)
		return -1;
	hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < t->r[lo - 1].end)
		return t->r[lo - 1].line;
	return -1;
}

int linemap_lookup(uint64_t addr)
{
	int line;

	linemap_hold();
	line = linemap_lookup_held(addr);
	linemap_release();
	return line;
}

static int suffix_match(const char *path, const char *want)
{
	size_t lp = strlen(path), lw = strlen(want);

	if (lw > lp)
		return 0;
	if (strcmp(path + lp - lw, want))
		return 0;
	return lw == lp || path[lp - lw - 1] == '/' || want[0] == '/';
}

int linemap_find(const char *spec, char *why, size_t whylen)
{
	char file[PATH_MAX];
	const char *colon = strrchr(spec, ':');
	char *end;
	long line;
	int n = linemap_nlines(), found = -1, files_seen = 0, near = -1;

	if (!colon || colon == spec) {
		snprintf(why, whylen, "'%s' is not FILE:LINE", spec);
		return -1;
	}
	line = strtol(colon + 1, &end, 10);
	if (*end || line <= 0) {
		snprintf(why, whylen, "'%s' is not FILE:LINE (bad line number)", spec);
		return -1;
	}
	snprintf(file, sizeof(file), "%.*s", (int)(colon - spec), spec);
	for (int i = 0; i < n; i++) {
		struct bcoz_line *l = linemap_line(i);

		if (!suffix_match(l->file, file))
			continue;
		files_seen++;
		if (l->line == line) {
			found = i;
			break;
		}
		if (near < 0 || labs(l->line - line) < labs(linemap_line(near)->line - line))
			near = i;
	}
	if (found >= 0)
		return found;
	if (!files_seen)
		snprintf(why, whylen, "no in-scope source file matches '%s' (check -s/-b and -g)",
			 file);
	else
		snprintf(why, whylen, "%s:%ld has no code in scope; nearest line with code: %s:%d",
			 file, line, linemap_line(near)->file, linemap_line(near)->line);
	return -1;
}

/* "file:line", or the function's name at function granularity */
void linemap_label(int idx, char *buf, size_t len)
{
	struct bcoz_line *l = linemap_line(idx);

	if (!l)
		snprintf(buf, len, "?");
	else if (!l->line)
		snprintf(buf, len, "%s", l->file);
	else
		snprintf(buf, len, "%s:%d", l->file, l->line);
}

/* NAME, or NAME without its parameter list (C++: "ns::f" for "ns::f(int)") */
/*
 * 2: @full is @want; 1: @want names it without its parameters, its template
 * arguments or the return type a template instance's name starts with
 * ("rocksdb::Status rocksdb::BlockBasedTable::GetDataBlockFromCache<...>(...)"
 * is named by "rocksdb::BlockBasedTable::GetDataBlockFromCache", or with
 * "<rocksdb::Block>" to pick one instance); 0: no match.
 */
/* the parameter list: the first '(' outside template arguments that does
 * not open "(anonymous namespace)" */
static const char *params_of(const char *full)
{
	static const char anon[] = "(anonymous namespace)";
	int depth = 0;

	for (const char *p = full; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && !depth) {
			if (!strncmp(p, anon, sizeof(anon) - 1)) {
				p += sizeof(anon) - 2;
				continue;
			}
			return p;
		}
	}
	return NULL;
}

/* end of balanced template arguments starting at p ('<'), or NULL */
static const char *skip_targs(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && !--depth)
			return p + 1;
	}
	return NULL;
}

/*
 * 2: @full is @want; 1: @want names it without its parameters, its template
 * arguments or the return type a template instance's name starts with
 * ("rocksdb::Status rocksdb::BlockBasedTable::GetDataBlockFromCache<...>(...)"
 * is named by "rocksdb::BlockBasedTable::GetDataBlockFromCache", or with
 * "<rocksdb::Block>" to pick one instance); 0: no match.
 */
static int name_match(const char *full, const char *want)
{
	size_t lw = strlen(want);
	const char *params = params_of(full), *p = full, *end;

	if (!strcmp(full, want))
		return 2;
	while (p && (!params || p < params)) {
		if (!strncmp(p, want, lw)) {
			end = p + lw;
			if (*end == '<')	/* the instance's template arguments */
				end = skip_targs(end);
			if (end && (!*end || end == params))
				return 1;
		}
		p = strchr(p, ' ');	/* the name after a return type */
		if (p)
			p++;
	}
	return 0;
}

/* edit distance of a and b (up to 63 characters each; longer: 99) */
static int distance(const char *a, size_t la, const char *b, size_t lb)
{
	int row[64];

	if (la > 63 || lb > 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* the function name a user most likely meant by @want, or NULL */
static const char *nearest_function(const char *want)
{
	size_t lw = strlen(want);
	int best = lw / 3 > 2 ? lw / 3 : 2, n = linemap_nlines();
	int qualified = !!strstr(want, "::");
	const char *pick = NULL;

	if (!lw || lw > 63)	/* beyond distance()'s table */
		return NULL;

	for (int i = 0; i < n; i++) {
		const char *full = linemap_line(i)->file, *params, *p, *q;
		int d;

		if (linemap_line(i)->line)
			continue;
		/* after the return type, and the namespaces unless @want has some */
		params = params_of(full);
		p = full;
		for (q = full; *q && (!params || q < params); q++)
			if (*q == ' ' || (!qualified && *q == ':' && q[1] == ':'))
				p = q + (*q == ' ' ? 1 : 2);
		d = distance(want, lw, p, (params ? (size_t)(params - p) : strlen(p)));
		if (d < best) {
			best = d;
			pick = full;
		}
	}
	return pick;
}

int linemap_find_function(const char *name, char *why, size_t whylen)
{
	int n = linemap_nlines(), found = -1, nfound = 0, nfunc = 0, other = -1;

	for (int i = 0; i < n; i++) {
		struct bcoz_line *l = linemap_line(i);
		int m;

		if (l->line)
			continue;
		nfunc++;
		m = name_match(l->file, name);
		if (m == 2)
			return i;
		if (m) {
			if (nfound++)
				other = i;
			else
				found = i;
		}
	}
	if (nfound == 1)
		return found;
	if (nfound > 1)
		snprintf(why, whylen, "'%s' names %d functions (e.g. '%s' and '%s'); give the "
			 "full name with its parameter list", name, nfound,
			 linemap_line(found)->file, linemap_line(other)->file);
	else if (!nfunc)
		snprintf(why, whylen, "the in-scope objects are profiled by line (they have line "
			 "tables); add --granularity function, or use --fixed-line FILE:LINE");
	else if (nearest_function(name))
		snprintf(why, whylen, "no in-scope function is named '%s'; did you mean '%s'?",
			 name, nearest_function(name));
	else
		snprintf(why, whylen, "no in-scope function is named '%s' (%d functions in "
			 "scope; names are demangled, e.g. 'ns::f' or 'ns::f(int)'; check -b)",
			 name, nfunc);
	return -1;
}

int linemap_function_objects(void)
{
	return objects_by_function;
}
