# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers to read pprof profiles with `go tool pprof`, sourced by pprof.sh
# (host) and vm/run-vm-tests.sh; need $BPERF and $T (a scratch directory).
#
#   gopprof ARGS...       go tool pprof, offline, no symbolization
#   rawsamples FILE       its samples as "points ns label=value..." lines
#   sumby FILE LABEL...   those summed by labels: "v1,v2 points ns", sorted
#   repsum FILE N KEYS    bperf report --sort KEYS the same way (N keys)

# Debian's go (golang-go) ships pprof built; a newer go in PATH builds it
# on first use, into its build cache
GO=$(ls /usr/lib/go/bin/go 2>/dev/null || command -v go)
gocache=$(GOTOOLCHAIN=local "$GO" env GOCACHE 2>/dev/null)
mkdir -p "$gocache" 2>/dev/null && [ -w "$gocache" ] || gocache=$T/gocache
# never download anything: no toolchain switch, no module proxy
gopprof() {
	GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GOCACHE="$gocache" \
		"$GO" tool pprof -symbolize=none "$@"
}
# pprof -raw of a profile as "points ns label=value..." lines, one per sample
rawsamples() {
	gopprof -raw "$1" 2>"$1.err" | python3 -c '
import re, sys
cur = None
for line in sys.stdin:
    if line.startswith("Locations"):
        break
    m = re.match(r"^\s+(\d+)\s+(\d+):", line)
    if m:
        if cur:
            print(" ".join(cur))
        cur = [m.group(1), m.group(2)]
        continue
    if cur:
        cur += ["%s=%s" % kv for kv in re.findall(r"(\w+):\[([^\]]*)\]", line)]
if cur:
    print(" ".join(cur))'
}
# sum the points (field 1) and ns (field 2) of rawsamples by labels:
# sumby FILE LABEL... -> "value1,value2 points ns" lines, sorted
sumby() {
	local f=$1; shift
	awk -v keys="$*" 'BEGIN { n = split(keys, k, " ") }
	{ delete lab; for (i = 3; i <= NF; i++) { split($i, kv, "="); lab[kv[1]] = kv[2] }
	  key = ""; for (j = 1; j <= n; j++) key = key (j > 1 ? "," : "") lab[k[j]]
	  p[key] += $1; t[key] += $2 }
	END { for (x in p) printf "%s %d %d\n", x, p[x], t[x] }' "$f" | sort
}
# bperf report rows "key1,key2 points ns" of --sort KEYS (-n and the period)
repsum() { # repsum FILE NKEYS
	"$BPERF" report -i "$1" --stdio -n --no-children --show-total-period -g none --sort "$3" 2>/dev/null |
		awk -v nk="$2" '/^ +[0-9.]+%/ { key = ""
			for (j = 1; j <= nk; j++) key = key (j > 1 ? "," : "") $(NF - nk + j)
			print key, $2, $3 }' | sort
}

