#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pprof example of Documentation/bperf/bperf.rst, inside the VM:
#
#   scripts/run-vm.sh -- tools/perf/tests/blocked/vm/pprof-demo.sh
#
# Records vm/phases.c (compute, sleep, O_DIRECT reads, a held mutex, a
# crowded CPU) with bperf, converts it with `bperf data convert --to-pprof`
# and shows it with go tool pprof: time per class, and the top functions
# of the main thread split by class (-tagleaf=class), and where its
# I/O waits are (-tagfocus=class=io).  The profile is
# left in OUT (default build/vm-scratch/bperf/phases-demo.pb.gz).
# Environment: BPERF, SCALE (default 400), DEVICE (default /dev/vda), OUT.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
BPERF=${BPERF:-$repo/build/bperf/bperf}
SCALE=${SCALE:-400}
DEVICE=${DEVICE:-/dev/vda}
OUT=${OUT:-$repo/build/vm-scratch/bperf}
T=$(mktemp -d /tmp/bperf-pprof.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT" 2>/dev/null || OUT=$T
cd "$T" || exit 1
[ -w "${HOME:-/nonexistent}" ] || export HOME=$T
. "$here/../pprof-lib.sh"

gcc -O1 -g -pthread -o phases "$here/phases.c" || exit 1
"$BPERF" record -g -o ph.data ./phases -s "$SCALE" -d "$DEVICE" >expect.txt 2>rec.err ||
	{ cat rec.err; exit 1; }
echo "# phases measured (ms):"; sed 's/^/#   /' expect.txt
"$BPERF" data convert -i ph.data --to-pprof "$OUT/phases-demo.pb.gz" --force || exit 1
echo "\$ bperf report --stdio --no-children -n --sort comm,blocked -g none"
"$BPERF" report -i ph.data --stdio --no-children -n --sort comm,blocked -g none 2>/dev/null |
	grep -v '^#' | grep -v '^$'
echo "\$ go tool pprof -tags -tagshow='class|comm' phases.pb.gz"
gopprof -tags -tagshow='class|comm' "$OUT/phases-demo.pb.gz"
echo "\$ go tool pprof -top -nodecount=5 -tagfocus=comm=ph-main -tagleaf=class phases.pb.gz"
gopprof -top -nodecount=5 -tagfocus=comm=ph-main -tagleaf=class "$OUT/phases-demo.pb.gz"
echo "\$ go tool pprof -top -nodecount=6 -tagfocus=class=io phases.pb.gz"
gopprof -top -nodecount=6 -tagfocus=class=io "$OUT/phases-demo.pb.gz"
