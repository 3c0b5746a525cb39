#!/bin/bash
# Usage: scripts/run-selftests.sh [--target NAME] [--no-build] [--timeout N] [run-vm options]
#
# Builds and installs the kselftests of tools/testing/selftests/NAME (default
# blocked_samples) from build/linux into build/kselftest (headers from
# build/kbuild/usr/include, made by scripts/build-kernel.sh), runs them in the
# VM with run_kselftest.sh (the install dir is the VM's writable share), saves
# the TAP in build/kselftest-results/, and prints the per-test results and a
# final "N passed, N failed, N skipped" line (scripts/tap-summary.sh).
# Fails on any "not ok", on missing results, on a VM failure or timeout, and on
# kernel console badness. The VM log (console + guest dmesg) is in build/vm-logs/.
#   --target NAME   selftest directory (default blocked_samples)
#   --no-build      run what is already installed in build/kselftest
#   --build-only    build and install, do not boot the VM (scripts/run-fuzz.sh)
#   --timeout N     VM time limit in seconds (default 900)
#   --runner R      light (default): scripts/kselftest-runner.sh, same TAP as
#                   run_kselftest.sh but ~10 s less per program under TCG;
#                   kselftest: the installed run_kselftest.sh
#   other options (--cpus, --mem, --disk, --kernel, --accel) go to run-vm.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

target=blocked_samples build=1 run=1 tmo=900 vmargs=() runner=light
while [ $# -gt 0 ]; do
	case $1 in
	--target) target=${2:?--target needs a name}; shift 2 ;;
	--no-build) build=0; shift ;;
	--build-only) run=0; shift ;;
	--runner) runner=${2:?--runner needs light or kselftest}; shift 2 ;;
	--timeout) tmo=${2:?--timeout needs seconds}; shift 2 ;;
	--cpus|--mem|--disk|--kernel|--accel) vmargs+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see scripts/run-selftests.sh --help)" ;;
	esac
done

case $runner in
light) run_cmd="sh '$REPO/scripts/kselftest-runner.sh' '$BUILD/kselftest'" ;;
kselftest) run_cmd="./run_kselftest.sh" ;;
*) die "--runner $runner: use light or kselftest" ;;
esac
inst=$BUILD/kselftest
results=$BUILD/kselftest-results
mkdir -p "$BUILD"
# build/kselftest is shared: hold a lock from install to the end of the VM run
exec 8>"$BUILD/kselftest.lock"
if ! flock -n 8; then
	log "another selftest run is using $inst (lock $BUILD/kselftest.lock); waiting for it"
	flock 8
fi
t0=$(now)
if [ "$build" = 1 ]; then
	sdir=$TREE/tools/testing/selftests
	[ -d "$sdir/$target" ] ||
		die "$sdir/$target missing: the selftest sources are overlaid by scripts/prepare-tree.sh (run 'make tree')"
	[ -d "$KBUILD/usr/include/linux" ] ||
		die "kernel headers missing in $KBUILD/usr/include; run 'make kernel' (scripts/build-kernel.sh runs make headers)"
	log "building and installing selftests/$target into $inst"
	rm -rf "$inst"
	export CCACHE_DIR=${CCACHE_DIR:-/root/.cache/ccache}
	nice make -s -C "$sdir" O="$KBUILD" TARGETS="$target" \
		KHDR_INCLUDES="-isystem $KBUILD/usr/include" \
		INSTALL_PATH="$inst" KSFT_INSTALL_PATH="$inst" install >"$BUILD/kselftest-build.log" 2>&1 ||
		{ tail -n 40 "$BUILD/kselftest-build.log" >&2; die "building selftests/$target failed (log: $BUILD/kselftest-build.log)"; }
fi
[ -x "$inst/run_kselftest.sh" ] || die "$inst/run_kselftest.sh missing; run without --no-build"
if [ "$run" = 0 ]; then
	log "installed in $inst in $(elapsed "$t0") s"
	exit 0
fi
[ -s "$inst/kselftest-list.txt" ] || die "$inst/kselftest-list.txt is empty: selftests/$target installed no test program"
nprogs=$(grep -c . "$inst/kselftest-list.txt")
log "$nprogs test program(s): $(cut -d: -f2 "$inst/kselftest-list.txt" | tr '\n' ' ')"

mkdir -p "$results"
tap=$results/$target-$(date -u +%Y%m%d-%H%M%S).tap
set +e
"$REPO/scripts/run-vm.sh" --timeout "$tmo" --rw "$inst" "${vmargs[@]}" -- \
	"cd '$inst' && echo \"# kernel: \$(uname -r -v)\" && echo \"# cpus: \$(nproc)\" && $run_cmd" |
	tee "$tap"
vmrc=${PIPESTATUS[0]}
set -e
cp "$tap" "$results/latest.tap"

echo "==== selftests/$target summary ===="
set +e
"$REPO/scripts/tap-summary.sh" "$tap" "$nprogs" | tee "$results/latest.summary"
sumrc=${PIPESTATUS[0]}
set -e
log "TAP: $tap; total time $(elapsed "$t0") s"
if [ "$vmrc" -ne 0 ]; then
	log "ERROR: the VM run failed (run-vm.sh exit $vmrc: 124 timeout, 125 no status/crash, otherwise" \
	    "console badness or the runner's own status); see the messages above and build/vm-logs/"
	exit 1
fi
[ "$sumrc" -eq 0 ] || { log "ERROR: selftests/$target had failures or missing results"; exit 1; }
log "selftests/$target passed"
