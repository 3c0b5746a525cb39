#!/bin/bash
# Usage: scripts/test-deb.sh [DEB]
#
# Checks the bperf package (scripts/build-deb.sh; DEB defaults to the one in
# build/deb): its contents and control fields (dpkg-deb -c / -f), that no
# file it ships belongs to Debian's linux-perf (dpkg -L linux-perf) or to any
# other installed package (dpkg -S), then unpacks it into a temporary root
# (dpkg -x) and runs the binaries from there: bperf version, bperf script -l
# (perf's scripts found in the package's own perf-core), bperf record and
# report of a short workload, bcoz --help, and bcoz plot and bcoz run with
# the packaged libbcoz.so and coz.h.  Prints TAP 13.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$repo/tools/perf/tests/blocked/tap.sh"

deb=${1:-$(ls -t "$repo"/build/deb/bperf_*.deb 2>/dev/null | head -n1)}
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
	bad "a bperf package to test (none in build/deb; run: make deb-tools)"
	tap_done
	exit 1
fi
T=$(mktemp -d /tmp/deb-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
diag "package: $deb"

# --- contents ------------------------------------------------------------------
dpkg-deb -c "$deb" >"$T/list" 2>&1
check "dpkg-deb -c reads the package ($(wc -l <"$T/list") entries)" [ -s "$T/list" ]
awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' "$T/list" | sort >"$T/files"
for f in /usr/bin/bperf /usr/bin/bcoz /usr/lib/bperf/bperf /usr/lib/bcoz/libbcoz.so \
	 /usr/lib/bcoz/bcozlib/cli.py /usr/lib/bcoz/bcozlib/profile.py \
	 /usr/include/bcoz/coz.h /usr/share/doc/bperf/copyright /usr/share/doc/bperf/README.md \
	 /usr/share/doc/bperf/install.rst; do
	check "package ships $f" grep -qxF "$f" "$T/files"
done
nscripts=$(grep -c '^/usr/lib/bperf/perf-core/scripts/python/bin/' "$T/files")
check "package ships perf's python scripts under /usr/lib/bperf/perf-core ($nscripts)" [ "$nscripts" -ge 20 ]
nbad=$(awk '$2 != "root/root"' "$T/list" | wc -l)
check "every entry owned by root/root ($nbad not)" [ "$nbad" -eq 0 ]
pkg=$(dpkg-deb -f "$deb" Package) ver=$(dpkg-deb -f "$deb" Version) dep=$(dpkg-deb -f "$deb" Depends)
check "control: Package bperf, Version $ver" bash -c "[ '$pkg' = bperf ] && [ -n '$ver' ]"
check "control: Depends from dpkg-shlibdeps (libc6, libelf1, libdw1, python3)" \
	bash -c "grep -q 'libc6' <<<'$dep' && grep -q 'libelf1' <<<'$dep' && grep -q 'libdw1' <<<'$dep' && grep -q 'python3' <<<'$dep'" ||
	diag "Depends: $dep"

# --- no conflicts with linux-perf or anything installed ---------------------------
if dpkg-query -W -f='${Status}' linux-perf 2>/dev/null | grep -q 'install ok installed'; then
	dpkg -L linux-perf | sort >"$T/perf-files"
	comm -12 "$T/files" "$T/perf-files" >"$T/clash"
	check "no file shared with linux-perf ($(wc -l <"$T/files") files against its $(wc -l <"$T/perf-files"))" \
		[ ! -s "$T/clash" ] || diag <"$T/clash"
	pdiv=$(dpkg-divert --list 2>/dev/null | awk '{ print $3 }' | sort)
	nd=$(comm -12 "$T/files" <(printf '%s\n' $pdiv) | wc -l)
	check "no file of the package is diverted by another package ($nd)" [ "$nd" -eq 0 ]
else
	bad "linux-perf is installed, to compare file lists (run: apt-get install -y linux-perf, or make deps)"
fi
owned=0
while IFS= read -r f; do
	if dpkg -S "$f" >/dev/null 2>&1; then
		owned=$((owned + 1))
		diag "$f belongs to $(dpkg -S "$f" 2>/dev/null | cut -d: -f1)"
	fi
done <"$T/files"
check "no file of the package belongs to an installed package ($owned)" [ "$owned" -eq 0 ]

# --- unpacked, the binaries run ------------------------------------------------
R=$T/root
dpkg -x "$deb" "$R"
check "dpkg -x unpacks it" bash -c "[ -x '$R/usr/bin/bperf' ] && [ -x '$R/usr/bin/bcoz' ]"
out=$("$R/usr/bin/bperf" version 2>&1)
rc=$?
check "unpacked bperf version: exit 0, '$out'" bash -c "[ $rc -eq 0 ] && grep -q '^perf version 6\.1\.' <<<'$out'"
"$R/usr/bin/bperf" script -l >"$T/scripts.out" 2>&1
nl=$(grep -c '^  ' "$T/scripts.out")
check "unpacked bperf script -l: the package's scripts are found ($nl)" \
	bash -c "[ $nl -ge 10 ] && grep -q 'syscall-counts' '$T/scripts.out'" || head -n 5 "$T/scripts.out" | diag
cat >"$T/nap.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
int main(void)
{
	struct timespec a, b, ts = { 0, 20 * 1000000 };
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {	/* 30 ms of this thread's CPU time, then a 20 ms nap */
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 30);
	nanosleep(&ts, NULL);
	return 0;
}
EOF
gcc -O1 -o "$T/nap" "$T/nap.c"
(cd "$T" && "$R/usr/bin/bperf" record -o rec.data ./nap >rec.out 2>&1)
rc=$?
check "unpacked bperf record: exit 0 ($rc)" [ $rc -eq 0 ] || diag <"$T/rec.out"
diag "bperf record says: $(grep -i blocked "$T/rec.out" | head -n 2)"
n=$("$R/usr/bin/bperf" report -i "$T/rec.data" --stdio --no-children -n -g none --sort comm 2>/dev/null |
	awk '/^ +[0-9.]+%/ && $NF == "nap" { print $2 }')
check "unpacked bperf report: the workload's 30 ms of CPU time are >= 20 samples of 1 ms (${n:-none})" \
	[ "${n:-0}" -ge 20 ]
out=$("$R/usr/bin/bcoz" --help 2>&1)
rc=$?
check "unpacked bcoz --help: exit 0, usage" bash -c "[ $rc -eq 0 ] && grep -q 'bcoz run' <<<'$out' && grep -q 'bcoz plot' <<<'$out'"
printf 'startup\ttime=0\n' >"$T/p.coz"
for sp in 0 0.5 1.0; do
	d=$(awk -v s=$sp 'BEGIN { print 100 + 100 * s }')
	printf 'experiment\tselected=x.c:1\tspeedup=%s\tduration=1000000000\tselected-samples=0\nthroughput-point\tname=p\tdelta=%d\n' "$sp" "$d" >>"$T/p.coz"
done
out=$("$R/usr/bin/bcoz" plot -i "$T/p.coz" --text 2>&1)
check "unpacked bcoz plot --text: x.c:1 predicted max +50.0%" grep -q 'x.c:1 .*max +50.0%' <<<"$out" ||
	diag <<<"$out"
# bcoz run with the packaged runtime: a program built against the packaged
# coz.h, 100 progress visits; the runtime reports where it was loaded from
cat >"$T/prog.c" <<'EOF'
#include <coz.h>
#include <time.h>
int main(void)
{
	struct timespec ts = { 0, 2 * 1000000 };
	for (int i = 0; i < 100; i++) {
		nanosleep(&ts, NULL);
		COZ_PROGRESS;
	}
	return 0;
}
EOF
if gcc -O1 -g -I"$R/usr/include/bcoz" -o "$T/prog" "$T/prog.c" -lpthread 2>"$T/cc.err"; then
	ok "a program builds against the packaged coz.h"
else
	bad "a program builds against the packaged coz.h"
	diag <"$T/cc.err"
fi
(cd "$T" && timeout 120 "$R/usr/bin/bcoz" run -o run.coz --- ./prog >bcoz.out 2>&1)
rc=$?
diag "bcoz run: $(grep -i -m1 libbcoz "$T/bcoz.out" || echo "no message about libbcoz.so")"
runs=$(grep -c '^startup' "$T/run.coz" 2>/dev/null)
check "unpacked bcoz run: exit 0 with the package's libbcoz.so, profile written (rc $rc, ${runs:-0} startup)" \
	bash -c "[ $rc -eq 0 ] && [ '${runs:-0}' -ge 1 ] && ! grep -q 'cannot find libbcoz' '$T/bcoz.out'" ||
	tail -n 5 "$T/bcoz.out" | diag
tap_done
