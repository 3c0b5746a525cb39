// SPDX-License-Identifier: GPL-2.0
/*
 * The hot/cold flame graph of blocked samples: folded output and SVG
 * from hand-made stacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>

#include "util/blocked.h"
#include "util/blocked-flamegraph.h"
#include "util/debug.h"
#include "util/wait-reason.h"
#include "tests.h"

static char *capture(struct blocked_fg *fg, bool svg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	int err;

	if (!fp)
		return NULL;
	err = svg ? blocked_fg__write_svg(fg, fp, "test <&>") :
		    blocked_fg__fprintf_folded(fg, fp);
	fclose(fp);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int test__blocked_flamegraph(struct test_suite *test __maybe_unused,
				    int subtest __maybe_unused)
{
	static const char * const s1[] = { "app", "main", "compute" };
	static const char * const s2[] = { "app", "main", "do_read", "pread64" };
	static const char * const s3[] = { "app", "main", "take<lock>" };
	/* a looping frame-pointer chain: the repeated unknown frame is drawn once */
	static const char * const s4[] = { "app", "[unknown 0x1234]", "[unknown 0x1234]",
					   "[unknown 0x1234]", "f", "f" };
	struct blocked_fg *fg = blocked_fg__new();
	char *folded = NULL, *svg = NULL;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("no memory", fg);

	if (blocked_fg__add_stack(fg, s1, 3, BLOCKED_ONCPU, 30) ||
	    blocked_fg__add_stack(fg, s2, 4, BLOCKED_IO, 50) ||
	    blocked_fg__add_stack(fg, s2, 4, BLOCKED_ONCPU, 5) ||
	    blocked_fg__add_stack(fg, s3, 3, BLOCKED_LOCK, 15) ||
	    blocked_fg__add_stack(fg, s1, 3, BLOCKED__NR, 1) == 0 ||
	    blocked_fg__add_stack(fg, s1, 3, BLOCKED_IO, 0) == 0)
		goto out;

	if (blocked_fg__total(fg) != 100 ||
	    blocked_fg__class_total(fg, BLOCKED_IO) != 50 ||
	    blocked_fg__class_total(fg, BLOCKED_ONCPU) != 35 ||
	    blocked_fg__class_total(fg, BLOCKED_LOCK) != 15)
		goto out;

	folded = capture(fg, false);
	if (!folded ||
	    !strstr(folded, "app;main;compute 30\n") ||
	    !strstr(folded, "app;main;do_read;pread64;[io] 50\n") ||
	    !strstr(folded, "app;main;do_read;pread64 5\n") ||
	    !strstr(folded, "app;main;take<lock>;[lock] 15\n")) {
		pr_debug("folded output:\n%s", folded ?: "(none)");
		goto out;
	}

	svg = capture(fg, true);
	if (!svg || strncmp(svg, "<?xml", 5) ||
	    !strstr(svg, "test &lt;&amp;&gt;") ||		/* title escaped */
	    !strstr(svg, "take&lt;lock&gt;") ||		/* frames escaped */
	    !strstr(svg, "<title>all (100 samples, 100.00%") ||
	    /* do_read: 50 of 55 points in io, so it is drawn as io */
	    !strstr(svg, "<title>do_read (55 samples, 55.00%; on-cpu 9.1%; io 90.9%)</title><rect class=\"io\"") ||
	    !strstr(svg, "<title>compute (30 samples, 30.00%; on-cpu 100.0%)</title><rect class=\"on-cpu\"") ||
	    !strstr(svg, "class=\"lock\"") ||
	    /* what the script reads: name, points, start, depth, class split */
	    !strstr(svg, "<g class=\"fr\" data-n=\"do_read\" data-v=\"55\" data-s=\"30\" data-d=\"3\" data-c=\"5,50,0,0,0\">") ||
	    !strstr(svg, "<g class=\"fr\" data-n=\"take&lt;lock&gt;\" data-v=\"15\" data-s=\"85\" data-d=\"3\" data-c=\"0,0,15,0,0\">") ||
	    !strstr(svg, "<g class=\"fr\" data-n=\"all\" data-v=\"100\" data-s=\"0\" data-d=\"0\" data-c=\"35,50,15,0,0\">") ||
	    !strstr(svg, "var FG = { width: 1200, ") ||
	    !strstr(svg, "total: 100, classes: [\"on-cpu\", \"io\", \"lock\", \"sched\", \"other\"] };") ||
	    !strstr(svg, "<script type=\"text/ecmascript\"><![CDATA[") ||
	    strstr(strstr(svg, "<![CDATA[") ?: svg, "]]>") != strstr(svg, "]]></script>") ||
	    strstr(svg, "href=") || strstr(svg, "https:")) {
		pr_debug("unexpected SVG:\n%s", svg);
		goto out;
	}
	/* a looping frame-pointer chain is drawn once; recursion is kept */
	blocked_fg__delete(fg);
	free(folded);
	folded = NULL;
	fg = blocked_fg__new();
	if (!fg || blocked_fg__add_stack(fg, s4, 6, BLOCKED_ONCPU, 2))
		goto out;
	folded = capture(fg, false);
	if (!folded || strcmp(folded, "app;[unknown 0x1234];f;f 2\n")) {
		pr_debug("folded output of a looping chain:\n%s", folded ?: "(none)");
		goto out;
	}

	ret = TEST_OK;
out:
	free(folded);
	free(svg);
	blocked_fg__delete(fg);
	return ret;
}

/*
 * Leaves by wait reason: "[class:reason]" frames, one per reason under the
 * same caller, coloured by the reason's kind; NULL keeps the class frame.
 */
static int test__blocked_flamegraph_waits(struct test_suite *test __maybe_unused,
					  int subtest __maybe_unused)
{
	static const char * const s1[] = { "app", "main", "take<lock>" };
	static const char * const s2[] = { "app", "main", "pread64" };
	struct blocked_fg *fg = blocked_fg__new();
	char *folded = NULL, *svg = NULL;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("no memory", fg);
	wait_rules__reset();
	if (blocked_fg__add_wait_stack(fg, s1, 3, BLOCKED_LOCK, "mutex", 15) ||
	    blocked_fg__add_wait_stack(fg, s1, 3, BLOCKED_LOCK, "condition", 20) ||
	    blocked_fg__add_wait_stack(fg, s1, 3, BLOCKED_LOCK, "mutex", 5) ||
	    blocked_fg__add_wait_stack(fg, s2, 3, BLOCKED_IO, "io-read", 40) ||
	    blocked_fg__add_wait_stack(fg, s2, 3, BLOCKED_IO, NULL, 10) ||
	    blocked_fg__add_wait_stack(fg, s2, 3, BLOCKED_ONCPU, "ignored", 10))
		goto out;

	folded = capture(fg, false);
	if (!folded ||
	    !strstr(folded, "app;main;take<lock>;[lock:mutex] 20\n") ||
	    !strstr(folded, "app;main;take<lock>;[lock:condition] 20\n") ||
	    !strstr(folded, "app;main;pread64;[io:io-read] 40\n") ||
	    !strstr(folded, "app;main;pread64;[io] 10\n") ||
	    !strstr(folded, "app;main;pread64 10\n")) {
		pr_debug("folded output:\n%s", folded ?: "(none)");
		goto out;
	}

	svg = capture(fg, true);
	if (!svg ||
	    !strstr(svg, "<title>[lock:mutex] (20 samples, 20.00%; lock 100.0%; wait contended)</title><rect class=\"lock wait-contended\"") ||
	    !strstr(svg, "<title>[lock:condition] (20 samples, 20.00%; lock 100.0%; wait idle)</title><rect class=\"lock wait-idle\"") ||
	    !strstr(svg, "<title>[io:io-read] (40 samples, 40.00%; io 100.0%; wait io)</title><rect class=\"io wait-io\"") ||
	    !strstr(svg, "<title>[io] (10 samples, 10.00%; io 100.0%)</title><rect class=\"io\"") ||
	    /* the caller keeps the colour of its class */
	    !strstr(svg, "<title>take&lt;lock&gt; (40 samples, 40.00%; lock 100.0%)</title><rect class=\"lock\"") ||
	    !strstr(svg, "[class:wait] leaves:") ||
	    /* only the leaves of waits have a kind: not the root */
	    !strstr(svg, "<title>all (100 samples, 100.00%; on-cpu 10.0%; io 50.0%; lock 40.0%)</title><rect class=\"io\"") ||
	    strstr(svg, "wait-on-cpu")) {
		pr_debug("unexpected SVG:\n%s", svg ?: "(none)");
		goto out;
	}
	ret = TEST_OK;
out:
	free(folded);
	free(svg);
	blocked_fg__delete(fg);
	wait_rules__reset();
	return ret;
}

DEFINE_SUITE("Blocked samples: hot/cold flame graph", blocked_flamegraph);
DEFINE_SUITE("Blocked samples: flame graph leaves by wait reason", blocked_flamegraph_waits);
