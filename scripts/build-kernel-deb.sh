#!/bin/bash
# Usage: scripts/build-kernel-deb.sh [--no-prepare]
#
# Builds a Debian linux-image package of the patched 6.1 kernel for real
# machines (not the VM's tiny kernel): Debian's own configuration of its 6.1
# kernel (/usr/src/linux-config-6.1/config.amd64_none_amd64.xz from the
# linux-config-6.1 package) plus CONFIG_PERF_BLOCKED_SAMPLES=y, packaged by the
# kernel's own `make bindeb-pkg`. Output: build/kdeb/linux-image-*.deb (and
# linux-headers, linux-libc-dev, linux-image-*-dbg when debug info is on).
#
# The tree is build/linux (scripts/prepare-tree.sh, as for `make kernel`), the
# objects go to build/kdeb/obj. Debian's certificate paths
# (SYSTEM_TRUSTED_KEYS / SYSTEM_REVOCATION_KEYS) point into Debian's packaging
# tree and are cleared; modules are signed with a key generated at build time,
# as a local kernel build does. Everything else is Debian's config.
#
# It is a long build (about 3900 modules): hours on two cores, not part of
# `make test`. Progress and timing go to build/kdeb/build.log.
#
# Environment:
#   JOBS (default: nproc)
#   LOCALVERSION (default -blocked): the release is 6.1.<sublevel><LOCALVERSION>,
#       so it installs beside Debian's 6.1.0-N-amd64 kernels.
#   DEB_DEBUG_INFO=n  drop CONFIG_DEBUG_INFO (and with it BTF): about half
#       the build time, but bpftool/libbpf CO-RE programs lose kernel BTF.
#   DEB_CONFIG=file   use this config instead of Debian's amd64 one.
#   KDEB_OUT=dir      output directory (default build/kdeb; objects in dir/obj)
# --no-prepare: use build/linux as it is (do not re-run prepare-tree.sh, which
# would rewrite files under a build that is running from the same tree).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kbuild_args "$@"
need_kbuild_tools
need dpkg-deb dpkg
need dpkg-buildpackage dpkg-dev
need rsync rsync
need xz xz-utils
need depmod kmod

OUT=${KDEB_OUT:-$BUILD/kdeb}
OBJ=$OUT/obj
LOCALVERSION=${LOCALVERSION:--blocked}
JOBS=${JOBS:-$(nproc)}
DEB_DEBUG_INFO=${DEB_DEBUG_INFO:-y}
config_src=${DEB_CONFIG:-/usr/src/linux-config-6.1/config.amd64_none_amd64.xz}

if [ ! -f "$config_src" ]; then
	[ -n "${DEB_CONFIG:-}" ] && die "DEB_CONFIG=$config_src does not exist"
	die "$config_src missing: Debian's kernel configuration comes with linux-config-6.1; run: apt-get install -y linux-config-6.1"
fi
if [ "$DEB_DEBUG_INFO" = y ]; then
	need pahole dwarves # CONFIG_DEBUG_INFO_BTF
fi

if [ "$prepare" = 1 ]; then
	"$REPO/scripts/fetch-source.sh"
	"$REPO/scripts/prepare-tree.sh"
fi
[ -f "$TREE/Makefile" ] || die "$TREE is missing; run scripts/prepare-tree.sh (or make tree)"

mkdir -p "$OBJ"
exec > >(tee -a "$OUT/build.log") 2>&1
log "$(date -u +%FT%TZ) start: config $config_src, LOCALVERSION=$LOCALVERSION, JOBS=$JOBS, DEB_DEBUG_INFO=$DEB_DEBUG_INFO"

case $config_src in
*.xz) xz -dc "$config_src" >"$OBJ/.config.new" ;;
*) cp "$config_src" "$OBJ/.config.new" ;;
esac
cfg() { "$TREE/scripts/config" --file "$OBJ/.config.new" "$@"; }
cfg --enable PERF_EVENTS --enable PERF_BLOCKED_SAMPLES \
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--set-str LOCALVERSION "$LOCALVERSION" --disable LOCALVERSION_AUTO \
	--set-str BUILD_SALT ""
if [ "$DEB_DEBUG_INFO" != y ]; then
	cfg --disable DEBUG_INFO --disable DEBUG_INFO_BTF --disable DEBUG_INFO_BTF_MODULES \
		--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --disable DEBUG_INFO_DWARF4 \
		--disable DEBUG_INFO_DWARF5 --enable DEBUG_INFO_NONE
fi
if ! cmp -s "$OBJ/.config.new" "$OBJ/.config.in"; then
	cp "$OBJ/.config.new" "$OBJ/.config.in"
	cp "$OBJ/.config.new" "$OBJ/.config"
fi
rm -f "$OBJ/.config.new"

export CCACHE_DIR=${CCACHE_DIR:-/root/.cache/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
export KBUILD_BUILD_USER=${KBUILD_BUILD_USER:-bperf} KBUILD_BUILD_HOST=${KBUILD_BUILD_HOST:-deb}
cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
kmake() { nice -n 19 make -C "$TREE" O="$OBJ" ARCH=x86_64 CC="$cc" "$@"; }

kmake olddefconfig >/dev/null
grep -qx 'CONFIG_PERF_BLOCKED_SAMPLES=y' "$OBJ/.config" ||
	die "CONFIG_PERF_BLOCKED_SAMPLES=y did not hold after olddefconfig (is the kernel patch in patches/series?)"
release=$(kmake -s kernelrelease)
sublevel=$(sed -n 's/^SUBLEVEL = //p' "$TREE/Makefile")
debver=$(sed -n 's/^DEBIAN_VERSION=//p' "$REPO/patches/BASE")
pkgver=${KDEB_PKGVERSION:-${debver}+blocked1}
log "kernel release $release, package version $pkgver ($(grep -c '=m$' "$OBJ/.config") modules, $(grep -c '=y$' "$OBJ/.config") built in)"

t0=$(now)
rm -f "$OUT"/linux-*.deb "$OUT"/linux-*.changes "$OUT"/linux-*.buildinfo
# bindeb-pkg writes the packages into the parent of the object directory,
# i.e. $OUT.
kmake -j"$JOBS" KDEB_PKGVERSION="$pkgver" bindeb-pkg ||
	die "bindeb-pkg failed (compiler or packaging errors above, log in $OUT/build.log)"
secs=$(elapsed "$t0")
log "$(date -u +%FT%TZ) done in $secs s ($sublevel): $(cd "$OUT" && ls linux-*.deb | tr '\n' ' ')"
ls -l "$OUT"/linux-*.deb
