# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The text that profile viewers import, sourced by run-host-tests.sh after
# its section 4b (uses $BPERF, blk.data, expect.txt, $total).
#
# Firefox Profiler ("perf script" importer) and speedscope ("linux perf"
# importer) read `perf script` text: a sample is a header line (thread
# name, optional pid/, tid, optional [cpu], a timestamp "123.456789:",
# then anything), then one line per frame, leaf first ("<spaces>ADDRESS
# SYMBOL (DSO)": a word, a symbol, a parenthesised module), and a blank
# line.  They count each sample once (Firefox) or weigh it by the time to
# the next one (speedscope), so `--blocked-expand` gives them one sample
# per sampling point, one period apart, and `--blocked-leaf` a first frame
# "[class:wait] ([blocked])".  Both also read folded stacks ("a;b;c N",
# Firefox's flame graph importer, speedscope's collapsed stacks): that is
# `--folded`.  Checked here: the shape those importers parse, restated from
# their documented rules, and that what they would count per class is the
# recording's exact points per class.

"$BPERF" script -i blk.data --blocked-expand --blocked-leaf >viewer.txt 2>viewer.err
rc=$?
if python3 - viewer.txt expect.txt >viewer.res 2>&1 <<'EOF'; then
import re, sys
text = open(sys.argv[1]).read()
want = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2]) if len(l.split()) == 2}
# a sample header: name, [pid/]tid, [cpu], time "N.N:"
head = re.compile(r'^(\S.*?)\s+(?:(\d+)/)?(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):')
frame = re.compile(r'^\s+(\w+)\s*(.+) \(([^)]*)\)$')
got = {}
n = 0
for block in text.split('\n\n'):
    lines = [l for l in block.split('\n') if l and not l.startswith('#')]
    if not lines:
        continue
    m = head.match(lines[0])
    assert m, 'header does not parse: %r' % lines[0]
    assert m.group(1) == 'work', lines[0]
    frames = [frame.match(l) for l in lines[1:]]
    assert frames and all(frames), 'frame lines do not parse: %r' % lines[1:]
    # the blocked field of the header: "io:1" (expanded: one point each)
    cls, pts = re.search(r'\s(on-cpu|io|lock|sched|other):(\d+)', lines[0]).groups()
    assert pts == '1', lines[0]
    leaf = frames[0]
    if cls == 'on-cpu':
        assert leaf.group(3) != '[blocked]', block
    else:
        assert leaf.group(3) == '[blocked]' and leaf.group(2).startswith('[' + cls), block
        # the rest of the stack is the sample's own, down to main
        assert any(f.group(2).startswith('main') for f in frames[1:]), block
    got[cls] = got.get(cls, 0) + 1
    n += 1
for c in ('on-cpu', 'io', 'lock', 'sched', 'other'):
    assert got.get(c, 0) == want[c], (c, got.get(c, 0), want[c])
print('%d samples; per class %s' % (n, ' '.join('%s %d' % (c, got.get(c, 0)) for c in sorted(got))))
EOF
	ok "script --blocked-expand --blocked-leaf: the perf script shape viewers import, points per class exact ($(cat viewer.res))"
else
	bad "script --blocked-expand --blocked-leaf: the perf script shape viewers import (rc=$rc)"
	tail -n 4 viewer.res | diag
fi
# without --blocked-leaf, no [blocked] frame (the default output is perf's)
check "script without --blocked-leaf prints no [blocked] frame" \
	bash -c "! '$BPERF' script -i blk.data 2>/dev/null | grep -q '(\[blocked\])'"

# folded stacks: Firefox's flame graph importer checks the first line
# against "frames count", speedscope's collapsed importer takes lines
# "STACK N" (N an integer); the leaves name the class
"$BPERF" script -i blk.data --folded >folded.txt 2>/dev/null
if python3 - folded.txt expect.txt >folded.res 2>&1 <<'EOF'; then
import re, sys
lines = open(sys.argv[1]).read().split('\n')
assert lines[-1] == '', 'no final newline'
want = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2]) if len(l.split()) == 2}
got = {}
for l in lines[:-1]:
    m = re.match(r'^(.*) (\d+)$', l)
    assert m and ';' in m.group(1), l
    leaf = m.group(1).split(';')[-1]
    c = re.match(r'^\[(io|lock|sched|other):', leaf)
    c = c.group(1) if c else 'on-cpu'
    got[c] = got.get(c, 0) + int(m.group(2))
for c in ('on-cpu', 'io', 'lock', 'sched', 'other'):
    assert got.get(c, 0) == want[c], (c, got.get(c, 0), want[c])
print(' '.join('%s %d' % (c, got[c]) for c in sorted(got)))
EOF
	ok "script --folded: the collapsed-stack shape viewers import, class leaves, points per class exact ($(cat folded.res))"
else
	bad "script --folded: the collapsed-stack shape viewers import"
	tail -n 4 folded.res | diag
fi
