# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Demangling checks of the host tests: sourced by run-host-tests.sh (which
# sets BPERF, STOCK, have_stock, here, and the tap.sh functions) in its
# scratch directory.
#
# cxx-work.cpp is built twice (-O2 -g and -O2 without debug info, both with
# frame pointers) and recorded with bperf on the plain task-clock path.  Each
# of its five functions spins for a fixed wall time, so each has samples on
# any machine.  Checked: report, script, annotate, --folded and the flame
# graph show the demangled C++ and Rust names, --no-demangle shows the raw
# symbols, and Debian's perf (when installed) prints the same report.

# raw symbol (an ERE prefix: gcc may add a .constprop suffix) and the
# demangled name perf prints without --verbose (no parameters, no hash)
dm_raw=('_ZN4shop5cache5TableIilE6lookupERKil' '_ZN4shop6refillILi3EEEvl'
	'_ZN12_GLOBAL__N_112housekeepingEl' '_ZN4demo5inner4work17h0123456789abcdefE'
	'_RNvNtCs1234_4demo5inner5serve')
dm_name=('shop::cache::Table<int, long>::lookup' 'shop::refill<3>'
	 '(anonymous namespace)::housekeeping' 'demo::inner::work' 'demo::inner::serve')

# dm_all FILE KIND: every name of KIND (name or raw) occurs in FILE as a
# fixed string; prints the ones missing
dm_all() {
	local -n list=dm_$2
	local n missing=
	for n in "${list[@]}"; do
		grep -qF -- "$n" "$1" || missing+=" '$n'"
	done
	[ -z "$missing" ] || diag "missing in $1:$missing"
	[ -z "$missing" ]
}
# dm_none FILE: no mangled C++/Rust name of the workload occurs in FILE
dm_none() {
	! grep -nE '_ZN(4shop|12_GLOBAL__N|4demo)|_RNvNt' "$1" | head -3 | diag_stdin_nonempty
}
# succeeds (and shows them) when stdin has lines
diag_stdin_nonempty() {
	local l
	IFS= read -r l || return 1
	{ printf '%s\n' "$l"; cat; } | diag
}

# flame graph titles: the frame names, unescaped by the XML parser
fg_titles() {
	python3 -c 'import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
for g in E.parse(sys.argv[1]).getroot().iter(ns + "g"):
    t = g.find(ns + "title")
    if t is not None and t.text:
        print(t.text)' "$1"
}

src=$here/cxx-work.cpp
for v in g nog; do
	case $v in
	g)   flags="-O2 -g -fno-omit-frame-pointer"; what="-O2 -g" ;;
	nog) flags="-O2 -fno-omit-frame-pointer"; what="-O2, no debug info" ;;
	esac
	if ! g++ $flags -o cxx-$v "$src" 2>cc.err; then
		bad "demangle ($what): compile cxx-work.cpp with g++"
		diag <cc.err
		continue
	fi
	"$BPERF" record -g --no-blocked -o cxx-$v.data ./cxx-$v >rec.out 2>&1
	check "demangle ($what): bperf record --no-blocked exits 0" [ $? -eq 0 ] || diag <rec.out

	"$BPERF" report -i cxx-$v.data --stdio -g none --sort sym 2>&1 | notip >rep.out
	check "demangle ($what): report shows the 5 C++/Rust names demangled" dm_all rep.out name
	check "demangle ($what): report shows no mangled name" dm_none rep.out
	"$BPERF" report -i cxx-$v.data --stdio -g none --sort sym --no-demangle 2>&1 | notip >raw.out
	check "demangle ($what): report --no-demangle shows the 5 raw symbols" dm_all raw.out raw
	if [ $have_stock -eq 1 ]; then
		"$STOCK" report -i cxx-$v.data --stdio -g none --sort sym 2>&1 | notip >s.out
		check "demangle ($what): report is identical to Debian's perf's" cmp -s s.out rep.out ||
			diff s.out rep.out | head -5 | diag
	else
		skip "demangle ($what): report is identical to Debian's perf's" "no usable stock perf at $STOCK"
	fi

	"$BPERF" script -i cxx-$v.data >sc.out 2>&1
	check "demangle ($what): script callchains show the 5 names demangled" dm_all sc.out name
	check "demangle ($what): script shows no mangled name" dm_none sc.out
	"$BPERF" script -i cxx-$v.data --no-demangle >scr.out 2>&1
	check "demangle ($what): script --no-demangle shows the 5 raw symbols" dm_all scr.out raw

	"$BPERF" annotate -i cxx-$v.data --stdio2 2>/dev/null | grep -E '^[^ ]' >ann.out
	check "demangle ($what): annotate headers name the 5 functions demangled" dm_all ann.out name
	"$BPERF" annotate -i cxx-$v.data --stdio2 --no-demangle 2>/dev/null | grep -E '^[^ ]' >annr.out
	check "demangle ($what): annotate --no-demangle headers name the 5 raw symbols" dm_all annr.out raw
	"$BPERF" annotate -i cxx-$v.data --stdio 'shop::cache::Table<int, long>::lookup' >ann1.out 2>&1
	check "demangle ($what): annotate finds a function by its demangled name" \
		grep -q 'Percent' ann1.out

	"$BPERF" script -i cxx-$v.data --folded >fo.out 2>/dev/null
	check "demangle ($what): --folded stacks reach the demangled names from main" \
		grep -qF 'main;shop::cache::Table<int, long>::lookup' fo.out
	check "demangle ($what): --folded shows no mangled name" dm_none fo.out
	"$BPERF" script -i cxx-$v.data --folded --no-demangle >for.out 2>/dev/null
	check "demangle ($what): --folded --no-demangle shows the 5 raw symbols" dm_all for.out raw
	"$BPERF" script -i cxx-$v.data --flamegraph cxx-$v.svg >/dev/null 2>&1 &&
		fg_titles cxx-$v.svg >fgt.out 2>fg.err
	check "demangle ($what): flame graph frames carry the 5 demangled names" dm_all fgt.out name ||
		tail -n 3 fg.err | diag
	check "demangle ($what): flame graph shows no mangled name" dm_none fgt.out
	"$BPERF" script -i cxx-$v.data --flamegraph cxx-$v-raw.svg --no-demangle >/dev/null 2>&1 &&
		fg_titles cxx-$v-raw.svg >fgt.out 2>fg.err
	check "demangle ($what): flame graph --no-demangle carries the 5 raw symbols" dm_all fgt.out raw
done
