#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn an ordinary task-clock perf.data into one with blocked samples.

Hosts without the blocked samples kernel feature cannot record blocked
samples, yet the tools that read them must be tested there.  This rewrites
a perf.data recorded by bperf (task-clock with PERIOD and WEIGHT, which
bperf records even when it falls back to on-CPU sampling): it sets
attr.blocked and turns a deterministic subset of the samples into blocked
samples (subclass bit in header.misc, weight N, period N * sample_period),
as a kernel with the feature would write them.

It prints the expected totals, one "class points" line per subclass
(on-cpu io lock sched other) and "total points", to stdout.

  mkblocked.py IN OUT                  rewrite
  mkblocked.py --corrupt=two-bits IN OUT   also put two subclass bits on one sample
  mkblocked.py --corrupt=huge-weight IN OUT  weight beyond the sane limit
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9
MISC = {'other': 0x08, 'io': 0x10, 'sched': 0x20, 'lock': 0x40}
# sample index % 10 -> (class, weight)
PATTERN = {3: ('io', 7), 5: ('lock', 3), 7: ('sched', 2), 9: ('other', 5)}

S = {  # perf_event_sample_format bits
    'IP': 1 << 0, 'TID': 1 << 1, 'TIME': 1 << 2, 'ADDR': 1 << 3,
    'READ': 1 << 4, 'CALLCHAIN': 1 << 5, 'ID': 1 << 6, 'CPU': 1 << 7,
    'PERIOD': 1 << 8, 'STREAM_ID': 1 << 9, 'RAW': 1 << 10,
    'BRANCH_STACK': 1 << 11, 'REGS_USER': 1 << 12, 'STACK_USER': 1 << 13,
    'WEIGHT': 1 << 14, 'IDENTIFIER': 1 << 16, 'WEIGHT_STRUCT': 1 << 24,
}


def die(msg):
    sys.stderr.write('mkblocked: %s\n' % msg)
    sys.exit(2)


def field_offsets(buf, off, end, st, regs_mask):
    """Offsets (from record start) of the PERIOD and WEIGHT u64s."""
    pos = off + 8
    for name in ('IDENTIFIER', 'IP', 'TID', 'TIME', 'ADDR', 'ID',
                 'STREAM_ID', 'CPU'):
        if st & S[name]:
            pos += 8
    period = None
    if st & S['PERIOD']:
        period = pos
        pos += 8
    if st & (S['READ'] | S['RAW'] | S['BRANCH_STACK']):
        die('unsupported sample_type %#x (READ/RAW/BRANCH_STACK)' % st)
    if st & S['CALLCHAIN']:
        nr, = struct.unpack_from('<Q', buf, pos)
        pos += 8 + 8 * nr
    if st & S['REGS_USER']:
        abi, = struct.unpack_from('<Q', buf, pos)
        pos += 8
        if abi:
            pos += 8 * bin(regs_mask).count('1')
    if st & S['STACK_USER']:
        size, = struct.unpack_from('<Q', buf, pos)
        pos += 8
        if size:
            pos += size + 8
    weight = None
    if st & (S['WEIGHT'] | S['WEIGHT_STRUCT']):
        weight = pos
        pos += 8
    if pos > end:
        die('sample at %#x overruns its record' % off)
    return period, weight


def main(argv):
    corrupt = None
    args = []
    for a in argv[1:]:
        if a.startswith('--corrupt='):
            corrupt = a.split('=', 1)[1]
        else:
            args.append(a)
    if len(args) != 2:
        die('usage: mkblocked.py [--corrupt=two-bits|huge-weight] IN OUT')
    buf = bytearray(open(args[0], 'rb').read())
    if buf[:8] != b'PERFILE2':
        die('%s is not a perf.data file (pipe mode is not supported)' % args[0])
    attr_size, = struct.unpack_from('<Q', buf, 16)
    a_off, a_size, d_off, d_size = struct.unpack_from('<4Q', buf, 24)
    nattr = a_size // attr_size
    if nattr < 1:
        die('no attrs')
    # Find the task-clock attr; other attrs (dummy) must not have samples.
    tc = None
    for i in range(nattr):
        base = a_off + i * attr_size
        typ, _sz, cfg = struct.unpack_from('<IIQ', buf, base)
        if typ == 1 and cfg == 1:
            tc = base
    if tc is None:
        die('no task-clock event in %s' % args[0])
    sample_period, st = struct.unpack_from('<QQ', buf, tc + 16)
    flags, = struct.unpack_from('<Q', buf, tc + 40)
    if flags & (1 << 10):
        die('task-clock was recorded with -F (freq); record with -c')
    if not st & S['PERIOD'] or not st & (S['WEIGHT'] | S['WEIGHT_STRUCT']):
        die('task-clock lacks PERIOD/WEIGHT: record it with bperf')
    regs_mask, = struct.unpack_from('<Q', buf, tc + 56)
    struct.pack_into('<Q', buf, tc + 40, flags | (1 << 38))

    totals = dict((k, 0) for k in ('on-cpu', 'io', 'lock', 'sched', 'other'))
    off, end, idx = d_off, d_off + d_size, 0
    corrupted = False
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', buf, off)
        if size < 8:
            die('bad record size at %#x' % off)
        if typ == PERF_RECORD_SAMPLE:
            p, w = field_offsets(buf, off, off + size, st, regs_mask)
            cls, n = PATTERN.get(idx % 10, ('on-cpu', 1))
            if cls != 'on-cpu':
                misc |= MISC[cls]
                if corrupt == 'two-bits' and not corrupted and idx > 20:
                    misc |= MISC['lock'] if cls != 'lock' else MISC['io']
                    corrupted = True
                if corrupt == 'huge-weight' and not corrupted and idx > 20:
                    n = 1 << 40
                    corrupted = True
                struct.pack_into('<H', buf, off + 4, misc)
            struct.pack_into('<Q', buf, p, n * sample_period)
            struct.pack_into('<Q', buf, w, n)
            totals[cls] += n
            idx += 1
        off += size
    if corrupt and not corrupted:
        die('too few samples to corrupt one')
    open(args[1], 'wb').write(buf)
    for k in ('on-cpu', 'io', 'lock', 'sched', 'other'):
        print('%s %d' % (k, totals[k]))
    print('total %d' % sum(totals.values()))
    print('records %d' % idx)


if __name__ == '__main__':
    main(sys.argv)
