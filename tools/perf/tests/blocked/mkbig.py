#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make a large perf.data by repeating the samples of a small one.

  mkbig.py IN OUT NR_SAMPLES

The data section keeps all non-sample records once (in place) and the
sample records are repeated, in order, until NR_SAMPLES samples are
written.  Timestamps are shifted forward by the recording's duration on
each repetition so that they stay ordered.  For benchmarks only.
"""
import struct
import sys

S_TIME = 1 << 2
S_ORDER = [(1 << 16, 'IDENTIFIER'), (1 << 0, 'IP'), (1 << 1, 'TID')]


def main():
    src, dst, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    buf = open(src, 'rb').read()
    attr_size, = struct.unpack_from('<Q', buf, 16)
    a_off, a_size, d_off, d_size = struct.unpack_from('<4Q', buf, 24)
    st = set()
    for i in range(a_size // attr_size):
        st.add(struct.unpack_from('<Q', buf, a_off + i * attr_size + 24)[0])
    st = max(st, key=lambda v: bin(v).count('1'))
    toff = 8 + 8 * sum(1 for bit, _ in S_ORDER if st & bit) if st & S_TIME else None
    head, samples = bytearray(), []
    off, end = d_off, d_off + d_size
    tmin, tmax = None, 0
    while off + 8 <= end:
        typ, _misc, size = struct.unpack_from('<IHH', buf, off)
        rec = buf[off:off + size]
        if typ == 9:
            samples.append(rec)
            if toff is not None:
                t, = struct.unpack_from('<Q', rec, toff)
                tmin = t if tmin is None else min(tmin, t)
                tmax = max(tmax, t)
        elif typ != 3:      # PERF_RECORD_FINISHED_ROUND dropped
            head += rec
        off += size
    if not samples:
        sys.exit('mkbig: no samples in %s' % src)
    span = (tmax - (tmin or 0)) + 1000000
    body = bytearray(head)
    n, rep = 0, 0
    while n < want:
        for rec in samples:
            if n >= want:
                break
            r = bytearray(rec)
            if toff is not None:
                t, = struct.unpack_from('<Q', r, toff)
                struct.pack_into('<Q', r, toff, t + rep * span)
            body += r
            n += 1
        rep += 1
    out = bytearray(buf[:d_off]) + body
    feat_off = len(out)
    # feature sections follow the data: copy them and fix their offsets
    tail = buf[d_off + d_size:]
    out += tail
    struct.pack_into('<Q', out, 48, len(body))
    shift = feat_off - (d_off + d_size)
    # perf_file_section table of the features starts right after the data
    # in the original file; each entry is (offset, size) into the file
    bits = buf[72:104]
    nfeat = sum(bin(b).count('1') for b in bits)
    for i in range(nfeat):
        p = feat_off + 16 * i
        o, s = struct.unpack_from('<2Q', out, p)
        struct.pack_into('<Q', out, p, o + shift)
    open(dst, 'wb').write(out)
    print('%d samples, %d bytes' % (n, len(out)))


if __name__ == '__main__':
    main()
