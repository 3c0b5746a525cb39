#!/bin/sh
# Usage: scripts/kselftest-runner.sh INSTALL_DIR
#
# Light replacement for kselftest's run_kselftest.sh, run inside the VM by
# scripts/run-selftests.sh. Same TAP as 6.1's runner.sh ("# selftests: dir:
# prog" header, the program's output prefixed with "# ", then "ok N selftests:
# dir: prog", "# SKIP" for exit 4, "not ok ... # TIMEOUT n seconds" for 124,
# "not ok ... # exit=rc" otherwise), but forks a handful of processes per
# program instead of about fifty, which costs ~10 s per program under TCG.
# Per-directory "settings" (timeout=N) are honoured; the default is 45 s.
# Always exits 0, like runner.sh: the caller parses the TAP.
set -u
base=${1:?usage: kselftest-runner.sh INSTALL_DIR}
cd "$base" || exit 1
list=$base/kselftest-list.txt
[ -r "$list" ] || { echo "kselftest-runner: $list missing" >&2; exit 1; }
tmp=${TMPDIR:-/tmp}/kselftest-runner.$$
mkdir -p "$tmp"

echo "TAP version 13"
echo "1..$(grep -c . "$list")"
n=0
while IFS=: read -r dir prog; do
	[ -n "$dir" ] || continue
	n=$((n + 1))
	t=45
	if [ -r "$base/$dir/settings" ]; then
		s=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$base/$dir/settings")
		[ -n "$s" ] && t=$s
	fi
	hdr="selftests: $dir: $prog"
	echo "# $hdr"
	if [ ! -x "$base/$dir/$prog" ]; then
		echo "# Warning: $dir/$prog is missing or not executable"
		echo "not ok $n $hdr"
		continue
	fi
	echo 1 >"$tmp/rc"
	{ (cd "$base/$dir" && timeout -k 10 "$t" "./$prog" 2>&1 </dev/null); echo $? >"$tmp/rc"; } |
		sed -u 's/^/# /'
	rc=$(cat "$tmp/rc")
	case $rc in
	0) echo "ok $n $hdr" ;;
	4) echo "ok $n $hdr # SKIP" ;;
	124) echo "#"; echo "not ok $n $hdr # TIMEOUT $t seconds" ;;
	*) echo "not ok $n $hdr # exit=$rc" ;;
	esac
done <"$list"
rm -rf "$tmp"
exit 0
