#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write N mutants of a perf.data file for crash testing.

  fuzz.py IN OUTDIR N [SEED]

Mutants: truncations at random offsets, random byte flips in the data
section, misc fields of sample records set to random values, record sizes
overwritten.  Deterministic for a given SEED.
"""
import os
import random
import struct
import sys


def records(buf, off, end):
    out = []
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', buf, off)
        if size < 8:
            break
        out.append((off, typ))
        off += size
    return out


def main():
    src, outdir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    orig = open(src, 'rb').read()
    d_off, d_size = struct.unpack_from('<2Q', orig, 40)
    recs = records(orig, d_off, d_off + d_size)
    samples = [o for o, t in recs if t == 9] or [o for o, t in recs]
    os.makedirs(outdir, exist_ok=True)
    for i in range(n):
        buf = bytearray(orig)
        kind = i % 4
        if kind == 0:      # truncation
            buf = buf[:rnd.randrange(0, len(buf))]
        elif kind == 1:    # byte flips in the data section
            for _ in range(rnd.randrange(1, 20)):
                p = rnd.randrange(d_off, min(len(buf), d_off + d_size))
                buf[p] = rnd.randrange(256)
        elif kind == 2:    # misc of samples
            for _ in range(rnd.randrange(1, 10)):
                struct.pack_into('<H', buf, rnd.choice(samples) + 4,
                                 rnd.randrange(65536))
        else:              # record sizes
            off, _ = rnd.choice(recs)
            struct.pack_into('<H', buf, off + 6, rnd.randrange(65536))
        with open(os.path.join(outdir, 'mutant-%03d.data' % i), 'wb') as f:
            f.write(buf)


if __name__ == '__main__':
    main()
