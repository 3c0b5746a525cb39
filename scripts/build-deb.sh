#!/bin/bash
# Usage: scripts/build-deb.sh
#
# Builds build/deb/bperf_<version>_amd64.deb from build/bperf (make bperf)
# and build/bcoz (make bcoz) with dpkg-deb: bperf and bcoz for real
# machines, installable next to Debian's linux-perf (no shared file):
#
#   /usr/bin/bperf                      wrapper: PERF_EXEC_PATH, then the binary
#   /usr/lib/bperf/bperf                perf 6.1 + the blocked samples series
#   /usr/lib/bperf/perf-core/           perf's scripts (perl, python) for
#                                       `bperf script -s/-l`, bperf's own copy
#   /usr/bin/bcoz                       the causal profiler (python3)
#   /usr/lib/bcoz/bcozlib/              its package (profile, analysis, report, target, cli)
#   /usr/lib/bcoz/libbcoz.so            its runtime (LD_PRELOADed by bcoz run)
#   /usr/include/bcoz/coz.h             progress points (COZ's API)
#   /usr/share/doc/bperf/               guides, ABI, example transcripts
#
# perf looks for its scripts under a directory fixed at build time (the
# builder's $HOME/libexec/perf-core); the wrapper points PERF_EXEC_PATH at
# the package's copy, so the perf build stays the one the tests use.
# Depends: from dpkg-shlibdeps on the binaries, plus python3.
# Environment: DEB_VERSION (default 6.1.<sublevel>+bperf<commits>).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || die "no arguments expected (usage: scripts/build-deb.sh)"
need dpkg-deb dpkg
need dpkg-shlibdeps dpkg-dev

BPERF_BIN=$BUILD/bperf/perf
BCOZ_DIR=$BUILD/bcoz
PERF_SRC=$BUILD/perf-src/tools/perf
[ -x "$BPERF_BIN" ] || die "no bperf at $BPERF_BIN; run: make bperf"
[ -f "$BCOZ_DIR/libbcoz.so" ] || die "no libbcoz.so in $BCOZ_DIR; run: make bcoz"
[ -d "$PERF_SRC/scripts" ] || die "no perf source at $PERF_SRC (made by scripts/build-bperf.sh); run: make bperf"

OUT=$BUILD/deb
ROOT=$OUT/root
rm -rf "$ROOT"
mkdir -p "$ROOT/DEBIAN" "$ROOT/usr/bin" "$ROOT/usr/lib/bperf/perf-core" "$ROOT/usr/lib/bcoz" \
	"$ROOT/usr/include/bcoz" "$ROOT/usr/share/doc/bperf"

# --- bperf ---------------------------------------------------------------------
install -m 0755 "$BPERF_BIN" "$ROOT/usr/lib/bperf/bperf"
strip --strip-unneeded "$ROOT/usr/lib/bperf/bperf"
cat >"$ROOT/usr/bin/bperf" <<'EOF'
#!/bin/sh
# bperf: perf with blocked samples (package bperf).  perf finds its scripts
# through PERF_EXEC_PATH; this keeps them apart from linux-perf's.  Paths
# are relative to this script, so an unpacked copy (dpkg -x) runs too.
lib=$(dirname "$(readlink -f "$0")")/../lib/bperf
PERF_EXEC_PATH=${PERF_EXEC_PATH:-$lib/perf-core}
export PERF_EXEC_PATH
exec "$lib/bperf" "$@"
EOF
chmod 0755 "$ROOT/usr/bin/bperf"
for lang in perl python; do
	d=$ROOT/usr/lib/bperf/perf-core/scripts/$lang
	mkdir -p "$d"
	(cd "$PERF_SRC/scripts/$lang" && find . \( -name '*.py' -o -name '*.pl' -o -path './bin/*' \
		-o -path './Perf-Trace-Util/lib/*' \) -type f -print0 | cpio -0pdm --quiet "$d")
done
find "$ROOT/usr/lib/bperf/perf-core" -type d -exec chmod 0755 {} +
find "$ROOT/usr/lib/bperf/perf-core" -type f -exec chmod 0644 {} +
find "$ROOT/usr/lib/bperf/perf-core" -path '*/bin/*' -type f -exec chmod 0755 {} +

# --- bcoz ----------------------------------------------------------------------
install -m 0755 "$REPO/tools/bcoz/bcoz" "$ROOT/usr/bin/bcoz"
# /usr/bin/bcoz finds it in ../lib/bcoz
install -d -m 0755 "$ROOT/usr/lib/bcoz/bcozlib"
install -m 0644 "$REPO"/tools/bcoz/bcozlib/*.py "$ROOT/usr/lib/bcoz/bcozlib/"
install -m 0644 "$BCOZ_DIR/libbcoz.so" "$ROOT/usr/lib/bcoz/libbcoz.so"
strip --strip-unneeded "$ROOT/usr/lib/bcoz/libbcoz.so"
install -m 0644 "$REPO/tools/bcoz/include/coz.h" "$ROOT/usr/include/bcoz/coz.h"

# --- docs ----------------------------------------------------------------------
doc=$ROOT/usr/share/doc/bperf
install -m 0644 "$REPO/README.md" "$doc/README.md"
for f in "$REPO"/Documentation/bperf/* "$REPO"/Documentation/bcoz/* \
	 "$REPO"/Documentation/admin-guide/perf/blocked-samples.rst "$REPO"/Documentation/install.rst; do
	[ -f "$f" ] && install -m 0644 "$f" "$doc/$(basename "$f")"
done
gzip -9n "$doc"/*.txt 2>/dev/null || true
cat >"$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: bperf, bcoz (blocked samples)
Comment: perf is Linux 6.1's tools/perf with the project's patch series.

Files: *
License: GPL-2
 On Debian systems, the full text of the GNU General Public License
 version 2 can be found in /usr/share/common-licenses/GPL-2.
EOF

# --- control -------------------------------------------------------------------
sublevel=$(sed -n 's/^SUBLEVEL = //p' "$BUILD/perf-src/Makefile" 2>/dev/null || true)
commits=$(git -C "$REPO" rev-list --count HEAD 2>/dev/null || echo 0)
version=${DEB_VERSION:-6.1.${sublevel:-0}+bperf$commits}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: bperf\n\nPackage: bperf\nArchitecture: any\n' >"$tmp/debian/control"
deps=$(cd "$tmp" && dpkg-shlibdeps -O -e"$ROOT/usr/lib/bperf/bperf" -e"$ROOT/usr/lib/bcoz/libbcoz.so" 2>"$tmp/shlibdeps.err" |
	sed -n 's/^shlibs:Depends=//p') ||
	{ cat "$tmp/shlibdeps.err" >&2; die "dpkg-shlibdeps failed on the binaries"; }
[ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies (messages: $(cat "$tmp/shlibdeps.err"))"
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<EOF
Package: bperf
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: blocked samples project <bperf@localhost>
Installed-Size: $size
Depends: $deps, python3
Recommends: linux-image-6.1.${sublevel:-0}-blocked
Suggests: linux-perf
Section: devel
Priority: optional
Description: on- and off-CPU profiling with blocked samples: bperf and bcoz
 bperf is perf 6.1 that records blocked samples (the time threads spend
 off the CPU, typed I/O, lock, scheduling or other, sampled with the same
 period as the on-CPU samples), weighs reports by time and draws interactive
 hot/cold flame graphs.  bcoz is a COZ-style causal profiler that also
 speeds up off-CPU time.  Blocked samples need the patched kernel
 (CONFIG_PERF_BLOCKED_SAMPLES); on other kernels bperf records on-CPU
 samples only and says so.  Installs beside linux-perf: bperf is
 /usr/bin/bperf with its own scripts under /usr/lib/bperf.
EOF
(cd "$ROOT" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
deb=$OUT/bperf_${version}_$(dpkg --print-architecture).deb
rm -f "$OUT"/bperf_*.deb
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$deb" >/dev/null ||
	die "dpkg-deb --build failed"
log "built $deb ($(du -k "$deb" | cut -f1) KiB)"
echo "$deb"
