#!/bin/bash
# Usage: scripts/fetch-source.sh
#
# Makes sure Debian's linux-source-6.1 tarball is installed, compares its
# version and sha256 with patches/BASE (warns "rebase needed" when the base
# moved; the patch step is what fails hard), and extracts it once into
# build/src/linux-source-6.1 (kept pristine; a stamp file records the sha256
# of the tarball it came from, so a new tarball is re-extracted).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || die "no arguments expected (usage: scripts/fetch-source.sh)"

if [ ! -f "$SRC_TARBALL" ]; then
	log "$SRC_TARBALL missing: installing linux-source-6.1"
	[ "$(id -u)" -eq 0 ] || die "$SRC_TARBALL missing and not root; run: sudo apt-get install linux-source-6.1"
	apt-get install -y --no-install-recommends linux-source-6.1 ||
		{ apt-get update && apt-get install -y --no-install-recommends linux-source-6.1; } ||
		die "could not install linux-source-6.1 (check apt sources)"
fi
[ -f "$SRC_TARBALL" ] || die "$SRC_TARBALL still missing after installing linux-source-6.1"

want_ver=$(sed -n 's/^DEBIAN_VERSION=//p' "$REPO/patches/BASE")
want_sha=$(sed -n 's/^TARBALL_SHA256=//p' "$REPO/patches/BASE")
[ -n "$want_ver" ] && [ -n "$want_sha" ] ||
	die "patches/BASE must hold DEBIAN_VERSION=... and TARBALL_SHA256=... lines"

have_ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
have_sha=$(sha256sum "$SRC_TARBALL" | cut -d' ' -f1)
if [ "$have_ver" != "$want_ver" ] || [ "$have_sha" != "$want_sha" ]; then
	warn "base moved: installed linux-source-6.1 $have_ver (sha256 $have_sha)," \
	     "series made for $want_ver (sha256 $want_sha); rebase needed" \
	     "(update patches/*.patch and patches/BASE). Continuing; patches that no longer apply will fail."
else
	log "base OK: linux-source-6.1 $have_ver, sha256 matches patches/BASE"
fi

stamp=$BUILD/src/.extracted
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$have_sha" ] && [ -f "$PRISTINE/Makefile" ]; then
	log "pristine tree up to date: $PRISTINE"
	exit 0
fi

need xz xz-utils
# A cold build: this tree (1.5 GB), build/linux (1.5 GB), perf's sources
# (0.4 GB), a kernel build (0.3 GB) and bperf (0.4 GB).
if [ -d "$BUILD/linux" ]; then
	need_space 1700 "extracting the kernel source"
else
	need_space 4500 "a first build (kernel source, kernel tree, kernel, bperf)"
fi
log "extracting $SRC_TARBALL into $BUILD/src (about 20-60 s)"
t0=$(now)
rm -rf "$BUILD/src.tmp" "$stamp"
mkdir -p "$BUILD/src.tmp"
tar -C "$BUILD/src.tmp" -xJf "$SRC_TARBALL"
[ -f "$BUILD/src.tmp/linux-source-6.1/Makefile" ] ||
	die "$SRC_TARBALL did not contain linux-source-6.1/Makefile"
rm -rf "$BUILD/src"
mv "$BUILD/src.tmp" "$BUILD/src"
echo "$have_sha" >"$stamp"
log "extracted in $(elapsed "$t0") s"
