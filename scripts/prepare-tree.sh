#!/bin/bash
# Usage: scripts/prepare-tree.sh
#   KSRC=/path/to/linux-6.1.y scripts/prepare-tree.sh   # use your own 6.1.y tree
#
# Builds build/linux from scratch, without touching the pristine source:
#   1. rsync -a --delete of the pristine tree (build/src/linux-source-6.1, or
#      $KSRC; .git excluded). rsync keeps the upstream mtimes, so files that did
#      not change do not rebuild.
#   2. overlay of the repository's NEW files: kernel/, include/, tools/ (except
#      tools/perf/patches and tools/bcoz) and Documentation/ (except *-abi.txt).
#      An overlay file that already exists upstream is refused: change upstream
#      files with a patch in patches/.
#   3. patches/series, then tools/perf/patches/series (if present): one patch
#      file name per line, '#' comments and blank lines allowed, applied with
#      `patch -p1 -F0 -N` from the top of the kernel tree. The whole series is
#      first test-applied (dry run of every patch, in order) on a scratch copy of
#      the files it touches, so a failing patch leaves build/linux un-patched.
# Files whose patched content did not change since the last run get their old
# mtime back, so a re-run does not trigger a rebuild.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || die "no arguments expected (usage: [KSRC=dir] scripts/prepare-tree.sh)"
need rsync rsync
need patch patch

if [ -n "${KSRC:-}" ]; then
	src=$(cd "$KSRC" && pwd) || die "KSRC=$KSRC is not a directory"
	[ -f "$src/Makefile" ] && [ -d "$src/kernel/events" ] ||
		die "KSRC=$src does not look like a Linux source tree (no Makefile / kernel/events)"
	grep -q '^VERSION = 6$' "$src/Makefile" && grep -q '^PATCHLEVEL = 1$' "$src/Makefile" ||
		warn "KSRC=$src is not a 6.1 tree; the patches were made for 6.1 and may not apply"
	[ ! -f "$src/.config" ] ||
		die "KSRC=$src has a .config (in-tree build); run 'make mrproper' there first, builds go to build/kbuild"
else
	src=$PRISTINE
	[ -f "$src/Makefile" ] || "$REPO/scripts/fetch-source.sh"
fi

t0=$(now)
if [ -f "$TREE/Makefile" ]; then need_space 200 "updating build/linux"
else need_space 1700 "assembling build/linux (a copy of the kernel source)"; fi
mkdir -p "$TREE"
log "syncing $src -> $TREE"
rsync -a --delete --exclude=/.git "$src/" "$TREE/"

# --- 2. overlay of new files ---------------------------------------------------
list_repo_files() {
	if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
		# tracked + untracked-but-not-ignored files (so uncommitted work is used)
		git -C "$REPO" ls-files -z --cached --others --exclude-standard -- \
			kernel include tools Documentation | tr '\0' '\n'
	else
		(cd "$REPO" && find kernel include tools Documentation -type f 2>/dev/null || true)
	fi | sort -u | while IFS= read -r f; do
		case $f in
		tools/perf/patches/*|tools/bcoz/*) continue ;;
		Documentation/*-abi.txt) continue ;;
		esac
		[ -f "$REPO/$f" ] && printf '%s\n' "$f"
	done
}
overlay=$(list_repo_files)
n_overlay=0
if [ -n "$overlay" ]; then
	while IFS= read -r f; do
		if [ -e "$src/$f" ]; then
			die "overlay file $f exists upstream ($src/$f); an overlay may only ADD files." \
			    "Change upstream files with a patch in patches/ (use a patch), then delete $REPO/$f"
		fi
		n_overlay=$((n_overlay + 1))
	done <<<"$overlay"
	printf '%s\n' "$overlay" | rsync -a --files-from=- "$REPO/" "$TREE/"
fi
log "overlaid $n_overlay new file(s) from the repository"

# --- 3. patch series -----------------------------------------------------------
# series_patches SERIESFILE: print the absolute patch paths, in order.
series_patches() {
	local series=$1 dir line
	dir=$(dirname "$series")
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(printf '%s' "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ -n "$line" ] || continue
		case $line in
		*' '*) die "$series: '$line': options after the patch name are not supported (always -p1)" ;;
		esac
		[ -f "$dir/$line" ] || die "$series lists $line but $dir/$line does not exist"
		printf '%s\n' "$dir/$line"
	done <"$series"
}

# touched_files PATCH: the tree-relative paths a -p1 patch reads or writes.
touched_files() {
	awk '
	/^(---|\+\+\+) / {
		p = $2; sub(/\t.*/, "", p)
		if (p != "/dev/null") { sub(/^[^\/]*\//, "", p); print p }
	}
	/^(rename|copy) (from|to) / { print $3 }
	' "$1" | sort -u
}

STATE=$BUILD/patch-state        # last patched content of every touched file
WORK=$BUILD/patch-check
applied_total=0

apply_series() {
	local series=$1 label=$2 patches p f out n=0
	if [ ! -f "$series" ]; then
		log "$label: no series file ($series), nothing to apply"
		return 0
	fi
	patches=$(series_patches "$series")
	if [ -z "$patches" ]; then
		log "$label: series is empty, nothing to apply"
		return 0
	fi

	# Dry run of the whole series, in order, on a scratch copy of the files.
	rm -rf "$WORK"; mkdir -p "$WORK"
	while IFS= read -r p; do
		touched_files "$p"
	done <<<"$patches" | sort -u | while IFS= read -r f; do
		if [ -e "$TREE/$f" ]; then
			mkdir -p "$WORK/$(dirname "$f")"
			cp -p "$TREE/$f" "$WORK/$f"
		fi
	done
	while IFS= read -r p; do
		if ! out=$(cd "$WORK" && patch -p1 --dry-run -F0 -N --batch <"$p" 2>&1); then
			printf '%s\n' "$out" | sed 's/^/    /' >&2
			die "$label: $(basename "$p") does not apply (patch output above names the file and hunk)." \
			    "Nothing was applied to build/linux. Rebase the patch on the current base" \
			    "(see patches/BASE) or fix its position in $series"
		fi
		(cd "$WORK" && patch -p1 -F0 -N --batch --no-backup-if-mismatch -s <"$p") >/dev/null
		n=$((n + 1))
	done <<<"$patches"

	# The series applies cleanly: apply it for real.
	while IFS= read -r p; do
		(cd "$TREE" && patch -p1 -F0 -N --batch --no-backup-if-mismatch -s <"$p") ||
			die "$label: $(basename "$p") failed on build/linux after a clean dry run (should not happen); re-run scripts/prepare-tree.sh"
		log "$label: applied $(basename "$p")"
	done <<<"$patches"
	applied_total=$((applied_total + n))

	# Keep mtimes of files whose patched content is unchanged since last run.
	while IFS= read -r p; do touched_files "$p"; done <<<"$patches" | sort -u |
	while IFS= read -r f; do
		[ -f "$TREE/$f" ] || continue
		if [ -f "$STATE/$f" ] && cmp -s "$STATE/$f" "$TREE/$f"; then
			touch -r "$STATE/$f" "$TREE/$f"
		else
			mkdir -p "$STATE/$(dirname "$f")"
			cp -p "$TREE/$f" "$STATE/$f"
		fi
	done
	rm -rf "$WORK"
}

apply_series "$REPO/patches/series" "kernel patches"
apply_series "$REPO/tools/perf/patches/series" "perf patches"

log "build/linux ready: $n_overlay overlay file(s), $applied_total patch(es), $(elapsed "$t0") s"
