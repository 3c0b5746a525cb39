// SPDX-License-Identifier: GPL-2.0
/*
 * Hot/cold flame graph of blocked samples, written as SVG by perf itself.
 *
 * The tree is built from root ("all") to leaves.  Every node keeps how many
 * sampling points of each class (on-cpu, io, lock, sched, other) passed
 * through it; the node is drawn in the palette of the class with most.  A
 * leaf that names a wait reason ("[lock:mutex]") is drawn in the palette
 * of the reason's kind instead (idle, contended, io, runnable, other).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/zalloc.h>

#include "blocked.h"
#include "blocked-flamegraph.h"
#include "callchain.h"
#include "debug.h"
#include "dso.h"
#include "event.h"
#include "evsel.h"
#include "map.h"
#include "symbol.h"
#include "thread.h"
#include "wait-reason.h"

#define FG_MAX_DEPTH	512
#define FG_WIDTH	1200
#define FG_FRAME_H	16
#define FG_PAD_TOP	80
#define FG_PAD_BOTTOM	50
#define FG_PAD_SIDE	10
#define FG_FONT_W	6.6	/* average glyph width at font-size 11 */
#define FG_MIN_W	0.1	/* narrower frames are not drawn */

struct fg_node {
	char		*name;
	u64		total;
	u64		self;
	u64		cls[BLOCKED__NR];
	struct fg_node	*children;	/* singly linked, unsorted */
	struct fg_node	*next;
	u32		nr_children;
	int		kind;		/* leaf of a wait reason: its wait_kind, else -1 */
};

struct blocked_fg {
	struct fg_node	root;
	int		max_depth;
	bool		waits;		/* some leaf names a wait reason */
};

static const char * const class_frame[BLOCKED__NR] = {
	[BLOCKED_ONCPU]	= NULL,
	[BLOCKED_IO]	= "[io]",
	[BLOCKED_LOCK]	= "[lock]",
	[BLOCKED_SCHED]	= "[sched]",
	[BLOCKED_OTHER]	= "[other]",
};

struct blocked_fg *blocked_fg__new(void)
{
	struct blocked_fg *fg = zalloc(sizeof(*fg));

	if (fg) {
		fg->root.kind = -1;
		fg->root.name = strdup("all");
		if (!fg->root.name)
			zfree(&fg);
	}
	return fg;
}

static void fg_node__free_children(struct fg_node *node)
{
	struct fg_node *c = node->children, *next;

	while (c) {
		next = c->next;
		fg_node__free_children(c);
		free(c->name);
		free(c);
		c = next;
	}
	node->children = NULL;
}

void blocked_fg__delete(struct blocked_fg *fg)
{
	if (!fg)
		return;
	fg_node__free_children(&fg->root);
	free(fg->root.name);
	free(fg);
}

static struct fg_node *fg_node__child(struct fg_node *parent, const char *name)
{
	struct fg_node *c, **prev = &parent->children;

	for (c = parent->children; c; prev = &c->next, c = c->next) {
		if (!strcmp(c->name, name)) {
			/* move to front: hot paths are looked up often */
			*prev = c->next;
			c->next = parent->children;
			parent->children = c;
			return c;
		}
	}
	c = zalloc(sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	if (!c->name) {
		free(c);
		return NULL;
	}
	c->kind = -1;
	c->next = parent->children;
	parent->children = c;
	parent->nr_children++;
	return c;
}

static void fg_node__account(struct fg_node *node, int cls, u64 count)
{
	node->total += count;
	node->cls[cls] += count;
}

int blocked_fg__add_stack(struct blocked_fg *fg, const char * const *frames,
			  int nr, int cls, u64 count)
{
	return blocked_fg__add_wait_stack(fg, frames, nr, cls, NULL, count);
}

int blocked_fg__add_wait_stack(struct blocked_fg *fg, const char * const *frames,
			       int nr, int cls, const char *reason, u64 count)
{
	char leaf[256];
	struct fg_node *node = &fg->root;
	int i, depth = 0;

	if (cls < 0 || cls >= BLOCKED__NR || !count)
		return -EINVAL;

	fg_node__account(node, cls, count);
	for (i = 0; i < nr; i++) {
		if (!frames[i] || !frames[i][0])
			continue;
		/*
		 * The same unresolved address again and again is a frame
		 * pointer chain that loops (code built without frame
		 * pointers), not recursion: draw it once, not as a tower
		 * up to the callchain limit.
		 */
		if (i && frames[i - 1] && !strncmp(frames[i], "[unknown 0x", 11) &&
		    !strcmp(frames[i], frames[i - 1]))
			continue;
		node = fg_node__child(node, frames[i]);
		if (!node)
			return -ENOMEM;
		fg_node__account(node, cls, count);
		depth++;
	}
	if (class_frame[cls]) {
		if (reason)
			snprintf(leaf, sizeof(leaf), "[%s:%s]", blocked__name(cls), reason);
		node = fg_node__child(node, reason ? leaf : class_frame[cls]);
		if (!node)
			return -ENOMEM;
		if (reason) {
			node->kind = wait_reason__kind(reason);
			fg->waits = true;
		}
		fg_node__account(node, cls, count);
		depth++;
	}
	node->self += count;
	if (depth > fg->max_depth)
		fg->max_depth = depth;
	return 0;
}

static const char *frame_name(struct map *map, struct symbol *sym, u64 ip,
			      char *buf, size_t size)
{
	if (sym)
		return sym->name;
	if (map && map->dso) {
		snprintf(buf, size, "[%s]", map->dso->short_name);
		return buf;
	}
	snprintf(buf, size, "[unknown 0x%" PRIx64 "]", ip);
	return buf;
}

int blocked_fg__add_sample(struct blocked_fg *fg, struct perf_sample *sample,
			   struct evsel *evsel, struct addr_location *al,
			   int max_stack)
{
	char *names[FG_MAX_DEPTH + 1];
	const char *frames[FG_MAX_DEPTH + 1];
	char buf[64];
	int nr = 0, i, err;

	if (symbol_conf.use_callchain && sample->callchain &&
	    thread__resolve_callchain(al->thread, &callchain_cursor, evsel,
				      sample, NULL, NULL, max_stack) == 0) {
		struct callchain_cursor_node *node;

		/* the cursor runs from the leaf to the outermost caller */
		callchain_cursor_commit(&callchain_cursor);
		while ((node = callchain_cursor_current(&callchain_cursor)) &&
		       nr < FG_MAX_DEPTH) {
			names[nr] = strdup(frame_name(node->ms.map, node->ms.sym,
						      node->ip, buf, sizeof(buf)));
			if (!names[nr])
				goto out_enomem;
			nr++;
			callchain_cursor_advance(&callchain_cursor);
		}
	}
	if (nr == 0) {
		names[nr] = strdup(frame_name(al->map, al->sym, sample->ip,
					      buf, sizeof(buf)));
		if (!names[nr])
			goto out_enomem;
		nr++;
	}

	frames[0] = thread__comm_str(al->thread) ?: "[unknown]";
	for (i = 0; i < nr; i++)
		frames[i + 1] = names[nr - 1 - i];
	err = blocked_fg__add_wait_stack(fg, frames, nr + 1, sample->blocked,
					 sample->blocked == BLOCKED_ONCPU ? NULL :
					 wait_reason__classify(al, evsel, sample),
					 blocked__points(sample->points));
	for (i = 0; i < nr; i++)
		free(names[i]);
	return err;

out_enomem:
	for (i = 0; i < nr; i++)
		free(names[i]);
	return -ENOMEM;
}

u64 blocked_fg__total(const struct blocked_fg *fg)
{
	return fg->root.total;
}

u64 blocked_fg__class_total(const struct blocked_fg *fg, int cls)
{
	if (cls < 0 || cls >= BLOCKED__NR)
		return 0;
	return fg->root.cls[cls];
}

/* --- folded output --------------------------------------------------------- */

static int fg_node__fprintf_folded(struct fg_node *node, char *path,
				   size_t len, size_t size, FILE *fp)
{
	struct fg_node *c;
	size_t n;

	if (node->self)
		fprintf(fp, "%.*s %" PRIu64 "\n", (int)len, path, node->self);

	for (c = node->children; c; c = c->next) {
		n = strlen(c->name);
		if (len + n + 2 > size)
			return -ENAMETOOLONG;
		if (len)
			path[len] = ';';
		memcpy(path + len + !!len, c->name, n);
		if (fg_node__fprintf_folded(c, path, len + !!len + n, size, fp))
			return -ENAMETOOLONG;
	}
	return 0;
}

int blocked_fg__fprintf_folded(struct blocked_fg *fg, FILE *fp)
{
	size_t size = 1 << 20;
	char *path = malloc(size);
	int err;

	if (!path)
		return -ENOMEM;
	err = fg_node__fprintf_folded(&fg->root, path, 0, size, fp);
	free(path);
	return err;
}

/* --- SVG ----------------------------------------------------------------- */

static int fg_node__cmp_name(const void *a, const void *b)
{
	const struct fg_node *l = *(const struct fg_node * const *)a;
	const struct fg_node *r = *(const struct fg_node * const *)b;

	return strcmp(l->name, r->name);
}

static int fg_node__class(const struct fg_node *node)
{
	int i, best = BLOCKED_ONCPU;

	for (i = 1; i < BLOCKED__NR; i++) {
		if (node->cls[i] > node->cls[best])
			best = i;
	}
	return best;
}

static unsigned int fg_hash(const char *s)
{
	unsigned int h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* on-CPU is warm (red..yellow), each off-CPU class has a cold palette */
static void fg_color(int cls, const char *name, int *r, int *g, int *b)
{
	unsigned int h = fg_hash(name);
	int v1 = h % 64, v2 = (h >> 8) % 64;

	switch (cls) {
	case BLOCKED_IO:	/* blue */
		*r = 40 + v1 / 2;
		*g = 90 + v2;
		*b = 210 + v1 / 2;
		break;
	case BLOCKED_LOCK:	/* purple */
		*r = 150 + v1;
		*g = 70 + v2 / 2;
		*b = 200 + v2 / 2;
		break;
	case BLOCKED_SCHED:	/* green */
		*r = 60 + v1 / 2;
		*g = 170 + v2;
		*b = 80 + v1 / 2;
		break;
	case BLOCKED_OTHER:	/* grey-aqua */
		*r = 110 + v1 / 2;
		*g = 170 + v2 / 2;
		*b = 180 + v1 / 2;
		break;
	default:		/* warm */
		*r = 205 + v1 * 50 / 64;
		*g = (h >> 16) % 200;
		*b = v2 * 55 / 64;
		break;
	}
}

/*
 * Leaf frames of wait reasons, by kind: idle pale grey (nothing to do),
 * contended red-magenta (the waits to look at), io blue, runnable green,
 * other grey-aqua, as their classes.
 */
static void fg_kind_color(int kind, const char *name, int *r, int *g, int *b)
{
	unsigned int h = fg_hash(name);
	int v1 = h % 32, v2 = (h >> 8) % 32;

	switch (kind) {
	case WAIT_KIND_IDLE:
		*r = 200 + v1 / 2;
		*g = 200 + v1 / 2;
		*b = 205 + v2 / 2;
		break;
	case WAIT_KIND_CONTENDED:
		*r = 215 + v1;
		*g = 30 + v2;
		*b = 110 + v1;
		break;
	case WAIT_KIND_IO:
		fg_color(BLOCKED_IO, name, r, g, b);
		break;
	case WAIT_KIND_RUNNABLE:
		fg_color(BLOCKED_SCHED, name, r, g, b);
		break;
	default:
		fg_color(BLOCKED_OTHER, name, r, g, b);
		break;
	}
}

static const char *fg_entity(char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	default:
		return NULL;
	}
}

static void fg_escape(FILE *fp, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		const char *ent = fg_entity(s[i]);

		if (ent)
			fputs(ent, fp);
		else if ((unsigned char)s[i] < 0x20)
			fputc('?', fp);
		else
			fputc(s[i], fp);
	}
}

struct fg_svg {
	FILE	*fp;
	double	scale;		/* pixels per sampling point */
	u64	grand_total;
	int	height;
	int	frames;
};

/*
 * Each frame is a <g class="fr"> whose data- attributes give the script
 * what it needs to zoom, search and explain it: name (data-n), sampling
 * points (data-v), first point from the left edge (data-s), depth (data-d)
 * and the points per class (data-c, in enum blocked_class order).  The
 * <title> stays for viewers without script.
 */
static int fg_node__svg(struct fg_svg *svg, struct fg_node *node, double x,
			u64 start, int depth)
{
	struct fg_node **kids, *c;
	double w = node->total * svg->scale, y;
	int r, g, b, cls, i, n = 0, err = 0;
	size_t chars;

	if (w < FG_MIN_W)
		return 0;

	y = svg->height - FG_PAD_BOTTOM - (depth + 1) * FG_FRAME_H;
	cls = fg_node__class(node);
	if (node->kind >= 0)
		fg_kind_color(node->kind, node->name, &r, &g, &b);
	else
		fg_color(cls, node->name, &r, &g, &b);

	fputs("<g class=\"fr\" data-n=\"", svg->fp);
	fg_escape(svg->fp, node->name, 4096);
	fprintf(svg->fp, "\" data-v=\"%" PRIu64 "\" data-s=\"%" PRIu64 "\" data-d=\"%d\" data-c=\"",
		node->total, start, depth);
	for (i = 0; i < BLOCKED__NR; i++)
		fprintf(svg->fp, "%s%" PRIu64, i ? "," : "", node->cls[i]);
	fputs("\"><title>", svg->fp);
	fg_escape(svg->fp, node->name, 4096);
	fprintf(svg->fp, " (%" PRIu64 " samples, %.2f%%",
		node->total, 100.0 * node->total / svg->grand_total);
	for (i = 0; i < BLOCKED__NR; i++) {
		if (node->cls[i])
			fprintf(svg->fp, "; %s %.1f%%", blocked__name(i),
				100.0 * node->cls[i] / node->total);
	}
	if (node->kind >= 0)
		fprintf(svg->fp, "; wait %s", wait_kind__name(node->kind));
	fprintf(svg->fp, ")</title><rect class=\"%s%s%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		blocked__name(cls), node->kind >= 0 ? " wait-" : "",
		node->kind >= 0 ? wait_kind__name(node->kind) : "",
		x, y, w, FG_FRAME_H - 1, r, g, b);
	/* an empty label on narrow frames, for the script to fill on zoom */
	chars = w > 6 ? (size_t)((w - 6) / FG_FONT_W) : 0;
	fprintf(svg->fp, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + 11.5);
	if (chars >= 3) {
		if (strlen(node->name) <= chars) {
			fg_escape(svg->fp, node->name, chars);
		} else {
			fg_escape(svg->fp, node->name, chars - 2);
			fputs("..", svg->fp);
		}
	}
	fputs("</text>", svg->fp);
	fputs("</g>\n", svg->fp);
	svg->frames++;

	if (!node->nr_children)
		return 0;
	kids = calloc(node->nr_children, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (c = node->children; c; c = c->next)
		kids[n++] = c;
	qsort(kids, n, sizeof(*kids), fg_node__cmp_name);
	for (i = 0; i < n && !err; i++) {
		err = fg_node__svg(svg, kids[i], x, start, depth + 1);
		x += kids[i]->total * svg->scale;
		start += kids[i]->total;
	}
	free(kids);
	return err;
}

/* --- interactivity ------------------------------------------------------- */

/*
 * Hover: a tooltip with the frame's name, points, share of all points (and
 * of the zoomed frame) and class split, also on the line at the bottom.
 * Click: zoom to the frame (its ancestors span the width, dimmed); click
 * the root or "Reset zoom", or press Escape, to go back.  Search box
 * (Ctrl-F): a substring, or /regex/; matches turn magenta and the bottom
 * line gives their share of all points, each point counted once however
 * many matching frames (recursion) it passes through.  No external
 * resources: the script is inline and only reads the frames' attributes.
 */
static const char fg_script[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var NS = \"http://www.w3.org/2000/svg\", XNS = \"http://www.w3.org/1999/xhtml\";\n"
	"var svg = document.documentElement, W = FG.width - 2 * FG.pad, FW = 6.6;\n"
	"var frames = [], zoomed = null, term = \"\";\n"
	"var tip, tipBox, tipText = [], details, matched, reset, input;\n"
	"\n"
	"function el(name, attrs, parent) {\n"
	"\tvar e = document.createElementNS(NS, name), k;\n"
	"\tfor (k in attrs)\n"
	"\t\te.setAttribute(k, attrs[k]);\n"
	"\tif (parent)\n"
	"\t\tparent.appendChild(e);\n"
	"\treturn e;\n"
	"}\n"
	"function pct(v, of) {\n"
	"\treturn (of ? 100 * v / of : 0).toFixed(2) + \"%\";\n"
	"}\n"
	"function label(f, w) {\n"
	"\tvar chars = w > 6 ? Math.floor((w - 6) / FW) : 0;\n"
	"\tif (chars < 3)\n"
	"\t\treturn \"\";\n"
	"\treturn f.n.length <= chars ? f.n : f.n.slice(0, chars - 2) + \"..\";\n"
	"}\n"
	"/* the class split of a frame: \"on-cpu 40.00%  io 60.00%\" */\n"
	"function split(f) {\n"
	"\tvar out = [], i;\n"
	"\tfor (i = 0; i < FG.classes.length; i++)\n"
	"\t\tif (f.c[i])\n"
	"\t\t\tout.push(FG.classes[i] + \" \" + pct(f.c[i], f.v));\n"
	"\treturn out.join(\"  \");\n"
	"}\n"
	"function describe(f) {\n"
	"\treturn [f.n, f.v + \" points, \" + pct(f.v, FG.total) + \" of all\" +\n"
	"\t\t(zoomed && zoomed !== frames[0] ? \", \" + pct(f.v, zoomed.v) + \" of \" + zoomed.n : \"\"),\n"
	"\t\tsplit(f)];\n"
	"}\n"
	"\n"
	"function layout() {\n"
	"\tvar z = zoomed || frames[0], sc = W / z.v, i;\n"
	"\tfor (i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i], show, x, w;\n"
	"\t\tif (f.d >= z.d) {\n"
	"\t\t\tshow = f.s >= z.s && f.s + f.v <= z.s + z.v;\n"
	"\t\t\tx = FG.pad + (f.s - z.s) * sc;\n"
	"\t\t\tw = f.v * sc;\n"
	"\t\t} else {\t/* ancestors of the zoomed frame span the width */\n"
	"\t\t\tshow = f.s <= z.s && f.s + f.v >= z.s + z.v;\n"
	"\t\t\tx = FG.pad;\n"
	"\t\t\tw = W;\n"
	"\t\t}\n"
	"\t\tif (show && w < 0.1)\n"
	"\t\t\tshow = false;\n"
	"\t\tf.g.style.display = show ? \"\" : \"none\";\n"
	"\t\tif (!show)\n"
	"\t\t\tcontinue;\n"
	"\t\tf.r.setAttribute(\"x\", x.toFixed(1));\n"
	"\t\tf.r.setAttribute(\"width\", w.toFixed(1));\n"
	"\t\tf.t.setAttribute(\"x\", (x + 3).toFixed(1));\n"
	"\t\tf.t.textContent = label(f, w);\n"
	"\t\tf.g.setAttribute(\"opacity\", f.d < z.d ? \"0.6\" : \"1\");\n"
	"\t}\n"
	"\treset.style.display = zoomed ? \"\" : \"none\";\n"
	"\thighlight();\n"
	"}\n"
	"function zoom(f) {\n"
	"\tzoomed = f === frames[0] ? null : f;\n"
	"\tlayout();\n"
	"}\n"
	"\n"
	"/* \"/re/\" is a regular expression, anything else a substring */\n"
	"function matcher(t) {\n"
	"\tvar m = /^\\/(.*)\\/$/.exec(t);\n"
	"\tif (m) {\n"
	"\t\ttry {\n"
	"\t\t\tvar re = new RegExp(m[1]);\n"
	"\t\t\treturn function (s) { return re.test(s); };\n"
	"\t\t} catch (e) {\n"
	"\t\t\treturn null;\n"
	"\t\t}\n"
	"\t}\n"
	"\treturn function (s) { return s.indexOf(t) >= 0; };\n"
	"}\n"
	"/*\n"
	" * Points of the matching frames, each point once: frames are intervals of\n"
	" * points that nest (a descendant lies inside its ancestor), so walking them\n"
	" * by start, an interval that begins before the end of the last one counted\n"
	" * lies inside it (recursion, or a match under a match) and is skipped.\n"
	" */\n"
	"function highlight() {\n"
	"\tvar hits = [], sum = 0, end = -1, i, match = term ? matcher(term) : null;\n"
	"\tfor (i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i], on = !!(match && match(f.n));\n"
	"\t\tf.r.setAttribute(\"fill\", on ? \"rgb(230,0,230)\" : f.fill);\n"
	"\t\tf.g.setAttribute(\"class\", on ? \"fr hit\" : \"fr\");\n"
	"\t\tif (on)\n"
	"\t\t\thits.push(f);\n"
	"\t}\n"
	"\thits.sort(function (a, b) { return a.s - b.s || a.d - b.d; });\n"
	"\tfor (i = 0; i < hits.length; i++) {\n"
	"\t\tif (hits[i].s < end)\n"
	"\t\t\tcontinue;\n"
	"\t\tsum += hits[i].v;\n"
	"\t\tend = hits[i].s + hits[i].v;\n"
	"\t}\n"
	"\tif (!term)\n"
	"\t\tmatched.textContent = \"\";\n"
	"\telse if (!match)\n"
	"\t\tmatched.textContent = \"bad regular expression\";\n"
	"\telse\n"
	"\t\tmatched.textContent = \"Matched: \" + pct(sum, FG.total) + \" (\" + sum +\n"
	"\t\t\t\" points, \" + hits.length + \" frames)\";\n"
	"\tmatched.setAttribute(\"data-points\", sum);\n"
	"}\n"
	"function search(t) {\n"
	"\tterm = t;\n"
	"\tif (input.value !== t)\n"
	"\t\tinput.value = t;\n"
	"\thighlight();\n"
	"}\n"
	"\n"
	"function show_tip(f, ev) {\n"
	"\tvar lines = describe(f), pt = svg.createSVGPoint(), i, wmax = 0, b, x, y;\n"
	"\tfor (i = 0; i < 3; i++) {\n"
	"\t\ttipText[i].textContent = lines[i];\n"
	"\t\twmax = Math.max(wmax, lines[i].length);\n"
	"\t}\n"
	"\tpt.x = ev.clientX;\n"
	"\tpt.y = ev.clientY;\n"
	"\tb = pt.matrixTransform(svg.getScreenCTM().inverse());\n"
	"\tx = Math.min(b.x + 12, FG.width - wmax * FW - 16);\n"
	"\ty = Math.max(b.y - 60, 0);\n"
	"\ttip.setAttribute(\"transform\", \"translate(\" + Math.max(x, 0).toFixed(0) + \",\" + y.toFixed(0) + \")\");\n"
	"\ttipBox.setAttribute(\"width\", (wmax * FW + 12).toFixed(0));\n"
	"\ttip.style.display = \"\";\n"
	"\tdetails.textContent = lines.join(\"  |  \");\n"
	"}\n"
	"\n"
	"function init() {\n"
	"\tvar gs = svg.querySelectorAll(\"g.fr\"), i, fo, btn;\n"
	"\tfor (i = 0; i < gs.length; i++) {\n"
	"\t\tvar g = gs[i], t = g.querySelector(\"title\"), f = {\n"
	"\t\t\tg: g, r: g.querySelector(\"rect\"), t: g.querySelector(\"text\"),\n"
	"\t\t\tn: g.getAttribute(\"data-n\"), v: +g.getAttribute(\"data-v\"),\n"
	"\t\t\ts: +g.getAttribute(\"data-s\"), d: +g.getAttribute(\"data-d\"),\n"
	"\t\t\tc: g.getAttribute(\"data-c\").split(\",\").map(Number)\n"
	"\t\t};\n"
	"\t\tf.fill = f.r.getAttribute(\"fill\");\n"
	"\t\tif (t)\t/* the script's tooltip replaces the browser's */\n"
	"\t\t\tg.removeChild(t);\n"
	"\t\tg.style.cursor = \"pointer\";\n"
	"\t\tframes.push(f);\n"
	"\t\t(function (f) {\n"
	"\t\t\tg.addEventListener(\"click\", function () { zoom(f); });\n"
	"\t\t\tg.addEventListener(\"mousemove\", function (ev) { show_tip(f, ev); });\n"
	"\t\t\tg.addEventListener(\"mouseout\", function () { tip.style.display = \"none\"; });\n"
	"\t\t})(f);\n"
	"\t}\n"
	"\tdetails = el(\"text\", { id: \"details\", x: FG.pad, y: FG.height - 20, \"class\": \"note\" }, svg);\n"
	"\tmatched = el(\"text\", { id: \"matched\", x: FG.width - FG.pad, y: FG.height - 20,\n"
	"\t\t\"class\": \"note\", \"text-anchor\": \"end\" }, svg);\n"
	"\treset = el(\"text\", { id: \"reset\", x: FG.pad, y: 24, \"class\": \"btn\" }, svg);\n"
	"\treset.textContent = \"Reset zoom\";\n"
	"\treset.addEventListener(\"click\", function () { zoom(frames[0]); });\n"
	"\n"
	"\tfo = el(\"foreignObject\", { x: FG.width - FG.pad - 330, y: 6, width: 330, height: 26 }, svg);\n"
	"\tinput = document.createElementNS(XNS, \"input\");\n"
	"\tinput.setAttribute(\"id\", \"search\");\n"
	"\tinput.setAttribute(\"placeholder\", \"search (text or /regex/), Ctrl-F\");\n"
	"\tinput.setAttribute(\"style\", \"width:240px;font:12px monospace\");\n"
	"\tfo.appendChild(input);\n"
	"\tbtn = document.createElementNS(XNS, \"button\");\n"
	"\tbtn.setAttribute(\"id\", \"clear\");\n"
	"\tbtn.textContent = \"Clear\";\n"
	"\tbtn.setAttribute(\"style\", \"font:12px sans-serif;margin-left:4px\");\n"
	"\tfo.appendChild(btn);\n"
	"\tinput.addEventListener(\"input\", function () { search(input.value); });\n"
	"\tbtn.addEventListener(\"click\", function () { search(\"\"); });\n"
	"\n"
	"\ttip = el(\"g\", { id: \"tip\", \"pointer-events\": \"none\" }, svg);\n"
	"\ttipBox = el(\"rect\", { x: 0, y: 0, width: 100, height: 50, rx: 3, fill: \"#ffffe8\",\n"
	"\t\tstroke: \"#666\", \"stroke-width\": \"0.5\" }, tip);\n"
	"\tfor (i = 0; i < 3; i++) {\n"
	"\t\ttipText.push(el(\"text\", { x: 6, y: 14 + 15 * i, \"class\": \"tip\" + i }, tip));\n"
	"\t}\n"
	"\ttip.style.display = \"none\";\n"
	"\n"
	"\tdocument.addEventListener(\"keydown\", function (ev) {\n"
	"\t\tif ((ev.ctrlKey || ev.metaKey) && (ev.key === \"f\" || ev.key === \"F\")) {\n"
	"\t\t\tev.preventDefault();\n"
	"\t\t\tinput.focus();\n"
	"\t\t\tinput.select();\n"
	"\t\t} else if (ev.key === \"Escape\") {\n"
	"\t\t\tsearch(\"\");\n"
	"\t\t\tzoom(frames[0]);\n"
	"\t\t}\n"
	"\t});\n"
	"\tlayout();\n"
	"\tsvg.setAttribute(\"data-ready\", \"1\");\n"
	"}\n"
	"init();\n"
	"})();\n";

static void fg_write_script(FILE *fp, const struct blocked_fg *fg, int height)
{
	int i;

	fprintf(fp, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var FG = { width: %d, height: %d, pad: %d, total: %" PRIu64 ", classes: [",
		FG_WIDTH, height, FG_PAD_SIDE, fg->root.total);
	for (i = 0; i < BLOCKED__NR; i++)
		fprintf(fp, "%s\"%s\"", i ? ", " : "", blocked__name(i));
	fprintf(fp, "] };\n%s]]></script>\n", fg_script);
}

int blocked_fg__write_svg(struct blocked_fg *fg, FILE *fp, const char *title)
{
	static const int legend[] = {
		BLOCKED_ONCPU, BLOCKED_IO, BLOCKED_LOCK, BLOCKED_SCHED, BLOCKED_OTHER,
	};
	struct fg_svg svg = { .fp = fp, };
	int i, err;
	double lx = FG_PAD_SIDE;

	if (!fg->root.total)
		return -ENODATA;

	svg.height = FG_PAD_TOP + FG_PAD_BOTTOM + (fg->max_depth + 1) * FG_FRAME_H;
	svg.grand_total = fg->root.total;
	svg.scale = (double)(FG_WIDTH - 2 * FG_PAD_SIDE) / fg->root.total;

	fprintf(fp, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 11px; fill: #000; } "
		"rect:hover { stroke: #000; stroke-width: 0.5; } "
		".title { font-size: 16px; text-anchor: middle; } "
		".note { font-size: 11px; fill: #444; } "
		".btn { font-size: 12px; fill: #06c; cursor: pointer; text-decoration: underline; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n",
		FG_WIDTH, svg.height, FG_WIDTH, svg.height);
	fprintf(fp, "<text class=\"title\" x=\"%d\" y=\"24\">", FG_WIDTH / 2);
	fg_escape(fp, title ?: "Hot/cold flame graph", 200);
	fprintf(fp, "</text>\n<text class=\"note\" x=\"%d\" y=\"44\">%" PRIu64
		" sampling points; width = time on and off CPU; colour = where most of a frame's time went:</text>\n",
		FG_PAD_SIDE, fg->root.total);

	/* legend, with each class's share, on its own line */
	lx = FG_PAD_SIDE;
	for (i = 0; i < (int)ARRAY_SIZE(legend); i++) {
		int r, g, b, cls = legend[i];

		fg_color(cls, "legend", &r, &g, &b);
		fprintf(fp, "<rect x=\"%.0f\" y=\"52\" width=\"12\" height=\"12\" fill=\"rgb(%d,%d,%d)\"/>"
			"<text class=\"note\" x=\"%.0f\" y=\"62\">%s %.1f%%</text>\n",
			lx, r, g, b, lx + 15, blocked__name(cls),
			100.0 * fg->root.cls[cls] / fg->root.total);
		lx += 105;
	}
	/* leaves of wait reasons: the two kinds with colours of their own */
	if (fg->waits) {
		static const int kinds[] = { WAIT_KIND_CONTENDED, WAIT_KIND_IDLE, };

		fprintf(fp, "<text class=\"note\" x=\"%.0f\" y=\"62\">[class:wait] leaves:</text>\n",
			lx + 10);
		lx += 10 + 21 * FG_FONT_W;
		for (i = 0; i < (int)ARRAY_SIZE(kinds); i++) {
			int r, g, b;

			fg_kind_color(kinds[i], "legend", &r, &g, &b);
			fprintf(fp, "<rect x=\"%.0f\" y=\"52\" width=\"12\" height=\"12\" fill=\"rgb(%d,%d,%d)\"/>",
				lx, r, g, b);
			fprintf(fp, "<text class=\"note\" x=\"%.0f\" y=\"62\">%s</text>\n",
				lx + 15, wait_kind__name(kinds[i]));
			lx += 90;
		}
	}

	err = fg_node__svg(&svg, &fg->root, FG_PAD_SIDE, 0, 0);
	if (!err)
		fg_write_script(fp, fg, svg.height);
	fprintf(fp, "</svg>\n");
	if (err)
		return err;
	return ferror(fp) ? -EIO : 0;
}
