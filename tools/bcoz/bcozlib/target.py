# SPDX-License-Identifier: GPL-2.0
"""What `bcoz run` can tell about the program before it becomes it.

The runtime reaches a program through the dynamic linker (LD_PRELOAD) and
writes the profile from the C library's exit path.  A program that has
neither gives an empty profile and no message at all, because the runtime
never ran: a statically linked program (busybox, a Go program built
without cgo), and a Go program, whose runtime ends the process with its
own system call (a profile of 33 bytes, its start-up record only, for a
Go program linked with cgo or -linkmode=external).  unprofilable() reads the
ELF headers of the command (and of a script's interpreter) to say so first.
"""
import os
import re
import struct

PT_INTERP = 3
# sections only the Go toolchain writes (kept by strip)
GO_SECTIONS = (b".go.buildinfo", b".note.go.buildid")


class _Elf:
    """The program headers' types and the section names of an ELF file."""

    def __init__(self, f):
        ident = f.read(16)
        if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2):
            raise ValueError("not ELF")
        wide, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
        if wide:
            fmt = end + "HHIQQQIHHHHHH"
        else:
            fmt = end + "HHIIIIIHHHHHH"
        hdr = f.read(struct.calcsize(fmt))
        (_, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
         shstrndx) = struct.unpack(fmt, hdr)
        self.segments = []
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            self.segments.append(struct.unpack(end + "I", f.read(4))[0])
        self.sections = []
        if not shoff or shstrndx >= shnum:
            return
        sh = end + ("IIQQQQ" if wide else "IIIIII")

        def section(i):
            f.seek(shoff + i * shentsize)
            name, _, _, _, off, size = struct.unpack(sh, f.read(struct.calcsize(sh)))
            return name, off, size
        _, stroff, strsize = section(shstrndx)
        f.seek(stroff)
        names = f.read(min(strsize, 1 << 20))
        for i in range(shnum):
            name = section(i)[0]
            self.sections.append(names[name:names.find(b"\0", name)])


def _interpreter(path):
    """The program a '#!' script names, or None."""
    try:
        with open(path, "rb") as f:
            line = f.readline(256)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].split()
    return words[0].decode(errors="replace") if words else None


def unprofilable(path, depth=0):
    """Why bcoz cannot profile the program at PATH, as the rest of a sentence
    whose subject is PATH ("is statically linked, ... Fix: ..."), or None
    when it can, or when PATH is no ELF file that can be read (the exec then
    says what is wrong)."""
    try:
        with open(path, "rb") as f:
            elf = _Elf(f)
    except (OSError, ValueError, struct.error):
        interp = _interpreter(path) if depth == 0 else None
        why = interp and unprofilable(interp, depth + 1)
        return why and "runs with %s, which %s" % (interp, why)
    if any(s in GO_SECTIONS for s in elf.sections):
        return ("is a Go program: its runtime ends the process with its own system "
                "call, not through the C library's exit, where bcoz writes its profile "
                "(and built without cgo it starts its threads so too, unsampled), so "
                "the profile would hold nothing. For its on- and off-CPU time use bperf "
                "record -g instead")
    if PT_INTERP not in elf.segments and not re.match(r"ld[-.].*\.so", os.path.basename(path)):
        # (the dynamic linker run as a program, ld.so ./app, does read LD_PRELOAD)
        return ("is statically linked, and bcoz's runtime (libbcoz.so) is loaded by the "
                "dynamic linker (LD_PRELOAD), which a static program never runs: nothing "
                "would be profiled. Fix: link it dynamically (without -static)")
    return None
