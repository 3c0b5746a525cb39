# SPDX-License-Identifier: GPL-2.0
"""What `bcoz run` can tell about the program before it becomes it.

The runtime reaches a program through the dynamic linker (LD_PRELOAD) and
writes the profile from the C library's exit path.  A program that has
neither leaves no profile and no message at all, because the runtime never
ran or never ended: a statically linked program (busybox, a Go program
built without cgo), and a Go program, whose runtime ends the process with
its own system call (a profile of 33 bytes, its start-up record only, for a
Go program linked with cgo or -linkmode=external).  unreached() reads the
ELF headers of the command (and of a script's interpreter) to say so first.

It warns and does not refuse: a static program that only starts the one
to profile (busybox env, a container's init, a `#!/bin/busybox sh`
wrapper that execs it) passes LD_PRELOAD on, and that program is profiled.
"""
import os
import re
import stat
import struct

ET_EXEC, ET_DYN = 2, 3
PT_INTERP = 3
# sections only the Go toolchain writes (kept by strip); a C program that
# links a Go c-archive has them too, hence "holds Go code"
GO_SECTIONS = (b".go.buildinfo", b".note.go.buildid")
# the dynamic linker run as a program (ld.so ./app) does read LD_PRELOAD
DYNAMIC_LINKER = re.compile(r"ld(64)?(-[^/]*)?\.so(\.\d+)*$")


class _Elf:
    """The type, the program headers' types and the section names of an
    ELF file (no section names where their table is out of reach)."""

    def __init__(self, f):
        ident = f.read(16)
        if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2):
            raise ValueError("not ELF")
        wide, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
        fmt = end + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH")
        (self.type, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
         shstrndx) = struct.unpack(fmt, f.read(struct.calcsize(fmt)))
        self.segments = []
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            self.segments.append(struct.unpack(end + "I", f.read(4))[0])
        self.sections = []
        try:
            self._read_sections(f, wide, end, shoff, shentsize, shnum, shstrndx)
        except (struct.error, ValueError, OSError):
            self.sections = []

    def _read_sections(self, f, wide, end, shoff, shentsize, shnum, shstrndx):
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
        for i in range(min(shnum, 1 << 16)):
            name = section(i)[0]
            self.sections.append(names[name:names.find(b"\0", name)])


def _open_regular(path):
    """PATH opened for reading if it is a regular file, else None: a FIFO
    is never opened (the read would block, and a close would hand its
    writer a SIGPIPE), nor a device.  O_NONBLOCK for a file swapped for a
    FIFO in between; the type is checked again once open."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def _interpreter(f):
    """The program a '#!' script names, or None."""
    f.seek(0)
    line = f.readline(256)
    if not line.startswith(b"#!"):
        return None
    words = line[2:].split()
    return words[0].decode(errors="replace") if words else None


def _load(path):
    """(ELF headers, None) of the executable or shared object at PATH, or
    (None, the '#!' interpreter or None) of anything else."""
    f = _open_regular(path)
    if f is None:
        return None, None
    with f:
        try:
            elf = _Elf(f)
        except (ValueError, struct.error, OSError):
            return None, _interpreter(f)
    return (elf, None) if elf.type in (ET_EXEC, ET_DYN) else (None, None)


def _static(elf, path):
    return PT_INTERP not in elf.segments and not DYNAMIC_LINKER.match(os.path.basename(path))


def unreached(path):
    """Why bcoz's runtime would not profile the program at PATH, as the rest
    of a sentence whose subject is PATH ("is statically linked, ... Fix:
    ..."), or None when nothing says so (also when PATH is no readable
    regular ELF file or script: the exec then says what is wrong)."""
    elf, interp = _load(path)
    if interp:
        ielf = _load(interp)[0]
        if ielf is None or not _static(ielf, interp):
            return None
        return ("runs with %s, a statically linked interpreter, which never loads "
                "bcoz's runtime (LD_PRELOAD is read by the dynamic linker): the script "
                "is not profiled, only a dynamically linked program it execs would be. "
                "Fix: run it with a dynamically linked interpreter, or put the program "
                "it starts after --- instead" % interp)
    if elf is None:
        return None
    if any(s in GO_SECTIONS for s in elf.sections):
        return ("holds Go code (Go's .go.buildinfo section): the Go runtime ends a "
                "process with its own system call, not through the C library's exit "
                "where bcoz writes its profile, so a Go program's profile holds its "
                "start-up record only (a C program that links a Go c-archive exits "
                "through the C library and is profiled as usual). For a Go program's "
                "on- and off-CPU time use bperf record -g instead")
    if _static(elf, path):
        return ("is statically linked, and bcoz's runtime (libbcoz.so) is loaded by the "
                "dynamic linker (LD_PRELOAD), which a static program never runs: it is "
                "not profiled, only a dynamically linked program it execs would be. Fix: "
                "link it dynamically, or if it only starts the program to profile, put "
                "that program after --- instead")
    return None
