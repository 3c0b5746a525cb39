#!/bin/bash
# Usage: scripts/build-bperf.sh [make args...]
#
# Builds bperf: Debian 6.1's tools/perf plus the project's new files under
# tools/perf/ and the series tools/perf/patches/series.
#
#   1. Source tree: build/perf-src, the pristine Debian tree (extracted once
#      by scripts/fetch-source.sh, or from $SRC_TARBALL) with tools/perf's
#      new files overlaid and tools/perf/patches/series applied.  Only files
#      whose content changed are rewritten, so re-runs rebuild little.  It is
#      separate from build/linux so that building bperf never touches a
#      kernel tree that may be building at the same time.  With
#      BPERF_TREE=prepare, scripts/prepare-tree.sh assembles build/linux
#      (kernel and perf series) and perf is built from there instead.
#   2. make -C tools/perf O=build/bperf with the feature set of Debian's
#      linux-perf 6.1 (its `perf version --build-options`, its shared
#      libraries and what it can do; the host tests compare them):
#      libelf, libdw, libunwind, slang, zlib, lzma, zstd, libnuma, libperl,
#      libpython (Debian's /usr/bin/python3, not a python3 first in PATH),
#      bpf (the in-tree libbpf, linked statically as Debian's is), libcap,
#      libbabeltrace (perf data convert), CoreSight (libopencsd), the PMU
#      event tables (jevents), C++/Rust demangling with libiberty's
#      cplus_demangle (detected by the cplus-demangle feature test), and
#      libtraceevent (the system's); and libprotobuf-c with protoc-c for
#      `perf data convert --to-pprof` (not in Debian's perf).  Off, as in Debian's: libbfd (GPLv3),
#      libcrypto, debuginfod, libpfm4, SDT, BPF skeletons, GTK2, JVMTI.
#   3. build/bperf/bperf -> perf, and the path of the binary on stdout.
#
# Environment: JOBS (default 2), BPERF_TREE=prepare, SRC_TARBALL.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=$BUILD/bperf
JOBS=${JOBS:-2}

need make make
need gcc gcc
need patch patch
need protoc-c protobuf-c-compiler
# headers of the libraries bperf links with (multiarch paths included)
hdrs="libelf.h elfutils/libdw.h libunwind.h slang.h zlib.h traceevent/event-parse.h
	lzma.h zstd.h numa.h sys/capability.h babeltrace/ctf-writer/writer.h
	opencsd/c_api/opencsd_c_api.h libiberty/demangle.h protobuf-c/protobuf-c.h"
pkgs="libelf-dev libdw-dev libunwind-dev libslang2-dev zlib1g-dev libtraceevent-dev
	liblzma-dev libzstd-dev libnuma-dev libcap-dev libbabeltrace-dev libopencsd-dev
	libiberty-dev python3-dev libperl-dev libprotobuf-c-dev protobuf-c-compiler"
for hdr in $hdrs; do
	found=
	for d in /usr/include /usr/include/*-linux-gnu /usr/include/slang; do
		[ -e "$d/$hdr" ] && found=1 && break
	done
	[ -n "$found" ] ||
		die "$hdr not found; install: apt-get install -y" $pkgs "(or run 'make deps')"
done
perl_core=$(perl -MConfig -e 'print "$Config{archlibexp}/CORE"')
[ -e "$perl_core/perl.h" ] && [ -e /usr/bin/python3-config ] ||
	die "perl.h or /usr/bin/python3-config missing; install: apt-get install -y libperl-dev python3-dev (or run 'make deps')"


if [ "${BPERF_TREE:-}" = prepare ] && [ -x "$REPO/scripts/prepare-tree.sh" ]; then
	"$REPO/scripts/prepare-tree.sh" >&2
	src=$TREE
else
	src=$BUILD/perf-src
	need rsync rsync
	if [ ! -f "$PRISTINE/Makefile" ]; then
		if [ -x "$REPO/scripts/fetch-source.sh" ]; then
			"$REPO/scripts/fetch-source.sh" >&2
		else
			need tar tar
			[ -f "$SRC_TARBALL" ] ||
				die "$SRC_TARBALL not found; install it with: apt-get install -y linux-source-6.1"
			log "extracting $SRC_TARBALL"
			mkdir -p "$PRISTINE"
			tar -xf "$SRC_TARBALL" -C "$PRISTINE" --strip-components=1
		fi
	fi
	# Assemble in a staging copy, then copy into $src only the files whose
	# content changed, so that a re-run does not rebuild all of perf.  The
	# staging copy hard-links the pristine files (patch replaces a file it
	# changes, it never writes through the link), and neither copy holds the
	# parts of the kernel perf does not read (drivers, fs, net, sound,
	# Documentation: 1.1 of the tree's 1.5 GB).
	final=$src
	src=$BUILD/perf-stage
	[ -f "$final/Makefile" ] && need_space 100 "updating perf's sources" ||
		need_space 900 "perf's sources and the bperf build"
	log "syncing $PRISTINE -> $src"
	mkdir -p "$src"
	not_perf=(--exclude=/.git --exclude=/drivers --exclude=/fs --exclude=/net
		--exclude=/sound --exclude=/Documentation)
	rsync -a --delete --link-dest="$PRISTINE" "${not_perf[@]}" "$PRISTINE/" "$src/"
	n=0
	while IFS= read -r f; do
		case $f in tools/perf/patches/*) continue ;; esac
		[ -e "$src/$f" ] && die "new file $f exists upstream; change upstream files with a patch"
		mkdir -p "$src/$(dirname "$f")"
		cp -p "$REPO/$f" "$src/$f"
		n=$((n + 1))
	done < <(cd "$REPO" && find tools/perf -type f | sort)
	log "overlaid $n new file(s)"
	series=$REPO/tools/perf/patches/series
	if [ -f "$series" ]; then
		while IFS= read -r p || [ -n "$p" ]; do
			p=${p%%#*}; p=$(printf '%s' "$p" | tr -d '[:space:]')
			[ -n "$p" ] || continue
			patch -d "$src" -p1 -F0 -N -s <"$REPO/tools/perf/patches/$p" ||
				die "tools/perf/patches/$p does not apply to $src"
		done <"$series"
		log "applied tools/perf/patches/series"
	fi
	mkdir -p "$final"
	rsync -rlpc --delete --delete-excluded "${not_perf[@]}" "$src/" "$final/"
	src=$final
fi

mkdir -p "$OUT"
export PATH=/usr/lib/ccache:$PATH
export CCACHE_DIR=${CCACHE_DIR:-/root/.cache/ccache}
# A fresh clone elsewhere (CI's, a second checkout) shares the cache: paths
# under the checkout are hashed relative to it, and the working directory
# (in the debug info) is not hashed.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
cc=gcc
command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
flags=(PYTHON=/usr/bin/python3 PYTHON_CONFIG=/usr/bin/python3-config CORESIGHT=1
	NO_GTK2=1 NO_JVMTI=1 NO_LIBAUDIT=1 NO_LIBCRYPTO=1 NO_LIBDEBUGINFOD=1
	NO_SDT=1 NO_LIBBFD=1 LIBTRACEEVENT_DYNAMIC=1 WERROR=0 "$@")
# perf rebuilds objects whose flags changed, but not pmu-events.c: with
# NO_JEVENTS=1 it is a copy of the empty table, newer than the JSON files it
# is made from.  Drop it when the feature flags differ from the last build.
if [ "$(cat "$OUT/.bperf-flags" 2>/dev/null)" != "${flags[*]}" ]; then
	rm -f "$OUT/pmu-events/pmu-events.c" "$OUT/pmu-events/pmu-events.o"
fi
log "building perf from $src/tools/perf into $OUT"
t0=$(now)
nice make -s -j"$JOBS" -C "$src/tools/perf" O="$OUT" "${flags[@]}" CC="$cc" >&2 ||
	die "perf build failed (see the messages above)"
[ -x "$OUT/perf" ] || die "no binary at $OUT/perf after the build"
# perf builds without an optional library it does not find; this one we need
convert_help=$("$OUT/perf" data convert -h 2>&1 || true)
grep -q -- --to-pprof <<<"$convert_help" ||
	die "bperf built without pprof output (perf data convert --to-pprof): libprotobuf-c was not detected; install: apt-get install -y libprotobuf-c-dev protobuf-c-compiler (or run 'make deps')"
printf '%s\n' "${flags[*]}" >"$OUT/.bperf-flags"
ln -sf perf "$OUT/bperf"
log "built in $(elapsed "$t0") s"
echo "$OUT/bperf"
