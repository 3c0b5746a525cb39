# shellcheck shell=bash
# Common helpers for the build/VM scripts. Source it; do not run it.
#   . "$(dirname "$0")/lib.sh"
# Sets REPO (repository root), BUILD (REPO/build) and the default paths below.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$REPO/build}
SRC_TARBALL=${SRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
PRISTINE=$BUILD/src/linux-source-6.1      # extracted Debian tree, never modified
TREE=$BUILD/linux                         # pristine + overlay + patches
# KERNEL_FLAVOUR selects a second kernel build beside the default one:
#   (empty)    build/kbuild: scripts/config/vm.config + the selftests' config
#   debug      build/kbuild-debug: + scripts/config/debug.config (KASAN,
#              lockdep, atomic-sleep and list checks, PREEMPT)
#   noblocked  build/kbuild-noblocked: the same kernel without
#              CONFIG_PERF_BLOCKED_SAMPLES (the baseline for hook-cost figures)
#   nolockdep  build/kbuild-nolockdep: the same kernel without lockdep, as
#              production kernels are built (overhead figures, make bench)
KERNEL_FLAVOUR=${KERNEL_FLAVOUR:-}
case $KERNEL_FLAVOUR in
'') KBUILD=${KBUILD_OUT:-$BUILD/kbuild} ;;
debug|noblocked|nolockdep) KBUILD=${KBUILD_OUT:+$KBUILD_OUT-$KERNEL_FLAVOUR}
	KBUILD=${KBUILD:-$BUILD/kbuild-$KERNEL_FLAVOUR} ;;
*) printf '[%s] ERROR: KERNEL_FLAVOUR=%s: use debug, noblocked, nolockdep or leave it empty\n' \
	"$(basename "$0")" "$KERNEL_FLAVOUR" >&2; exit 1 ;;
esac
BZIMAGE_DEFAULT=$KBUILD/arch/x86/boot/bzImage

log()  { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "$(basename "$0")" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# need CMD PACKAGE: fail with the apt package to install when CMD is missing.
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found; install it with: apt-get install -y $2 (or run 'make deps')"
}

# kbuild_args ARGS...: the kernel build scripts' arguments: --no-prepare
# (prepare=0: build build/linux as it is) and --help (the script's header).
kbuild_args() {
	local a
	prepare=1
	for a in "$@"; do
		case $a in
		--no-prepare) prepare=0 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) die "unknown argument '$a' (usage: scripts/$(basename "$0") [--no-prepare])" ;;
		esac
	done
}

# need_kbuild_tools: what building a kernel needs besides the source.
need_kbuild_tools() {
	need gcc gcc
	need make make
	need flex flex
	need bison bison
	need bc bc
	need cpio cpio
}

# need_space MB WHAT: fail before a step that writes about MB megabytes under
# build/ when the file system holding it has less free, instead of failing
# half-way with ENOSPC in rsync, tar or the compiler.
need_space() {
	local avail
	mkdir -p "$BUILD"
	avail=$(df -Pm "$BUILD" | awk 'NR == 2 { print $4 }')
	[ -z "$avail" ] || [ "$avail" -ge "$1" ] && return 0
	die "$2 needs about $1 MB free under $BUILD; its file system has $avail MB free." \
	    "Free some space (e.g. the build/ directories of old clones or other" \
	    "checkouts: 'make distclean' there, or rm -rf them) and re-run"
}

# Seconds since the epoch, with fractions, for timing.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
