#!/bin/bash
# Usage: scripts/build-kernel.sh [--no-prepare]
#
# Builds build/kbuild/arch/x86/boot/bzImage (no modules) from build/linux:
#   make tinyconfig + kvm_guest.config, merge_config.sh with
#   scripts/config/vm.config and tools/testing/selftests/blocked_samples/config
#   (if present), olddefconfig; then checks that every fragment line holds in the
#   final .config; then `make -j2 bzImage` and `make headers` (for selftests'
#   KHDR_INCLUDES = -isystem build/kbuild/usr/include).
# The config is generated in build/kconfig-gen and copied to build/kbuild only
# when it changed, so an unchanged config never forces a rebuild.
# Runs scripts/fetch-source.sh and scripts/prepare-tree.sh first unless
# --no-prepare is given. Uses ccache (CCACHE_DIR, default /root/.cache/ccache).
# Environment: JOBS (default 2), KBUILD_OUT (output dir, default build/kbuild),
# KERNEL_FLAVOUR (debug: + scripts/config/debug.config into build/kbuild-debug;
# noblocked: without CONFIG_PERF_BLOCKED_SAMPLES into build/kbuild-noblocked;
# nolockdep: without lockdep into build/kbuild-nolockdep).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kbuild_args "$@"
need_kbuild_tools
need ccache ccache

if [ "$prepare" = 1 ]; then
	"$REPO/scripts/fetch-source.sh"
	"$REPO/scripts/prepare-tree.sh"
fi
[ -f "$TREE/Makefile" ] || die "$TREE is missing; run scripts/prepare-tree.sh (or make tree)"
[ -f "$KBUILD/vmlinux" ] && need_space 100 "rebuilding the kernel" ||
	need_space 600 "building the kernel into $KBUILD"

export CCACHE_DIR=${CCACHE_DIR:-/root/.cache/ccache}
# A fresh clone elsewhere (CI's, a second checkout) shares the cache: paths
# under the checkout are hashed relative to it, and the working directory
# (in the debug info) is not hashed.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
export KBUILD_BUILD_TIMESTAMP=0 KBUILD_BUILD_USER=ci KBUILD_BUILD_HOST=ci
export PATH=/usr/lib/ccache:$PATH
mkdir -p "$CCACHE_DIR"
JOBS=${JOBS:-2}
GEN=$BUILD/kconfig-gen${KERNEL_FLAVOUR:+-$KERNEL_FLAVOUR}
kmake() { nice make -s -C "$TREE" ARCH=x86_64 CC="ccache gcc" "$@"; }

fragments=("$REPO/scripts/config/vm.config")
st_config=$REPO/tools/testing/selftests/blocked_samples/config
[ -f "$st_config" ] && fragments+=("$st_config")
# A flavour's fragment (scripts/config/<flavour>.config) has the last word:
# the other fragments' lines naming a symbol it sets are dropped, so that
# "every line holds" below stays true (noblocked turns the feature off,
# nolockdep lockdep).
if [ -n "$KERNEL_FLAVOUR" ]; then
	flav=$REPO/scripts/config/$KERNEL_FLAVOUR.config
	[ -f "$flav" ] || die "no $flav for KERNEL_FLAVOUR=$KERNEL_FLAVOUR"
	mkdir -p "$GEN/fragments"
	sed -nE 's/^(# )?(CONFIG_[A-Za-z0-9_]+)(=| is not set$).*/\2/p' "$flav" |
		sort -u >"$GEN/fragments/flavour-symbols"
	kept=()
	for frag in "${fragments[@]}"; do
		# (grep exits 1 when it keeps no line: an empty fragment is fine)
		grep -vwF -f "$GEN/fragments/flavour-symbols" "$frag" \
			>"$GEN/fragments/$(basename "$frag")" || [ $? -eq 1 ]
		kept+=("$GEN/fragments/$(basename "$frag")")
	done
	fragments=("${kept[@]}" "$flav")
fi

# --- configuration -------------------------------------------------------------
t0=$(now)
mkdir -p "$GEN" "$KBUILD"
: >"$GEN/config.log"
for t in tinyconfig kvm_guest.config; do
	kmake O="$GEN" "$t" >>"$GEN/config.log" 2>&1 ||
		{ cat "$GEN/config.log" >&2; die "make $t failed (output above)"; }
done
"$TREE/scripts/kconfig/merge_config.sh" -m -O "$GEN" "$GEN/.config" "${fragments[@]}" \
	>"$GEN/merge.log" 2>&1 || { cat "$GEN/merge.log" >&2; die "merge_config.sh failed"; }
kmake O="$GEN" olddefconfig >>"$GEN/config.log" 2>&1 ||
	{ cat "$GEN/config.log" >&2; die "make olddefconfig failed (output above)"; }

# Every line of every fragment must hold in the final .config.
series_nonempty=0
[ -f "$REPO/patches/series" ] && grep -qv '^[[:space:]]*\(#.*\)\{0,1\}$' "$REPO/patches/series" && series_nonempty=1
missing=() undefined=()
for frag in "${fragments[@]}"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*}; want=$line ;;
		'# CONFIG_'*' is not set') sym=${line#'# '}; sym=${sym%% *}; want=$line ;;
		*) continue ;;
		esac
		if [ "$want" = "# $sym is not set" ]; then
			grep -qx "$sym=.*" "$GEN/.config" || continue
		elif grep -qxF "$want" "$GEN/.config"; then
			continue
		fi
		name=${sym#CONFIG_}
		if ! grep -rqE "^[[:space:]]*(menu)?config[[:space:]]+$name[[:space:]]*\$" \
			--include='Kconfig*' "$TREE"; then
			undefined+=("$want ($(basename "$frag"))")
		else
			got=$(grep -E "^($sym=|# $sym is not set)" "$GEN/.config" || echo "$sym unset")
			missing+=("$want (got: $got; from $(basename "$frag"))")
		fi
	done <"$frag"
done
if [ ${#undefined[@]} -gt 0 ]; then
	if [ "$series_nonempty" = 1 ]; then
		die "config symbols not defined anywhere in build/linux (is the patch that adds them in patches/series?): ${undefined[*]}"
	fi
	warn "config symbols not defined in this tree (patches/series is empty, so expected): ${undefined[*]}"
fi
if [ ${#missing[@]} -gt 0 ]; then
	printf '  %s\n' "${missing[@]}" >&2
	die "the final .config lacks the symbols above (a dependency is missing); fix scripts/config/vm.config. Merge log: $GEN/merge.log"
fi
if ! cmp -s "$GEN/.config" "$KBUILD/.config"; then
	cp "$GEN/.config" "$KBUILD/.config"
	log "new .config installed in $KBUILD"
fi
log "config ready in $(elapsed "$t0") s ($(grep -c '=y$' "$KBUILD/.config") symbols =y)"

# --- build ---------------------------------------------------------------------
t1=$(now)
log "building ${KERNEL_FLAVOUR:-default} bzImage in $KBUILD with -j$JOBS (cold: 12-15 min, debug 25-35 min, warm ccache: about 1-2 min)"
kmake O="$KBUILD" olddefconfig >/dev/null
kmake O="$KBUILD" -j"$JOBS" bzImage || die "kernel build failed (see the compiler errors above)"
build_s=$(elapsed "$t1")
t2=$(now)
kmake O="$KBUILD" -j"$JOBS" headers >/dev/null || die "make headers failed"
log "bzImage built in $build_s s, headers in $(elapsed "$t2") s: $BZIMAGE_DEFAULT"
log "build time: $build_s s; ccache: $(ccache -s 2>/dev/null | grep -iE 'hits|cache hit \(rate\)' | head -1 | tr -s ' ' || true)"
