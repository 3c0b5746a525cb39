#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bcoz's start-up on a large binary (a benchmark, not a test): generates a C
# program of F functions of L lines each (default 8000 x 40: about 660k
# line-table rows, 344k source lines), builds it with -O0 -g, and runs it
# under `bcoz run -v --end-to-end` R times (default 3), printing the line
# map's size, the runtime's own start-up time and the process's peak RSS.
#
# usage: tools/bcoz/bench/bigbin.sh [-f FUNCTIONS] [-l LINES] [-r RUNS]
# Needs: make -C tools/bcoz; gcc (the build takes 20-40 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BCOZ_BUILD:-$here/../../../build/bcoz}
[ -x "$build/bcoz" ] || { echo "bigbin.sh: build first: make -C tools/bcoz" >&2; exit 1; }
F=8000 L=40 R=3
while getopts f:l:r:h o; do
	case $o in
	f) F=$OPTARG ;;
	l) L=$OPTARG ;;
	r) R=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$F" "$L" >"$tmp/big.c" <<'PY'
import sys
F, L = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
w("#include <stdlib.h>\nvolatile long sink;\n")
for i in range(F):
    w("long f%d(long x)\n{\n" % i)
    for j in range(L):
        w("\tx = x * %d + %d;\n" % (j + 3, i))
    w("\treturn x;\n}\n")
w("long (*tab[])(long) = {%s};\n" % ",".join("f%d" % i for i in range(F)))
w("int main(int c, char **v)\n{\n\tlong n = c > 1 ? atol(v[1]) : 1000;\n"
  "\tfor (long k = 0; k < n; k++)\n\t\tsink += tab[k %% %d](k);\n\treturn 0;\n}\n" % F)
PY
gcc -O0 -g -o "$tmp/big" "$tmp/big.c"
echo "# $F functions x $L lines: $(readelf --debug-dump=decodedline "$tmp/big" 2>/dev/null | wc -l) line-table rows"
for ((r = 0; r < R; r++)); do
	/usr/bin/time -f "peak RSS %M KB, wall %e s" "$build/bcoz" run -v --end-to-end \
		-o "$tmp/p.coz" --- "$tmp/big" 1 2>&1 | grep -E 'started:|line map:|peak RSS' |
		sed 's/^bcoz: //'
done
