# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Parity checks of the host tests: sourced by run-host-tests.sh (which sets
# BPERF, STOCK, have_stock and the tap.sh functions) in its scratch
# directory, after "work" and bperf.data were made.
#
# Debian's linux-perf is the reference.  Each feature its
# `perf version --build-options` lists as on must be on in bperf's (one
# result per feature, naming it); then the features that list does not show
# are probed by using them: Python and Perl scripts, zstd-compressed
# recordings, CTF conversion (libbabeltrace), the PMU event tables (jevents)
# and the BPF loader (bpf).

# opts PERF: "name on|OFF" per line of PERF version --build-options
opts() {
	"$1" version --build-options 2>/dev/null |
		sed -n 's/^ *\([^ :][^:]*\): \[ *\([a-zA-Z]*\) *\].*/\1 \2/p'
}

if [ $have_stock -eq 0 ]; then
	skip "parity with Debian's perf" "no usable stock perf at $STOCK; run 'make deps' (installs linux-perf)"
else
	opts "$STOCK" >deb.opts
	opts "$BPERF" >bp.opts
	n_deb=$(grep -c ' on$' deb.opts)
	check "parity: Debian's perf lists its build options ($n_deb on)" [ "$n_deb" -gt 5 ] ||
		"$STOCK" version --build-options 2>&1 | head -5 | diag
	while read -r name state; do
		[ "$state" = on ] || continue
		got=$(awk -v n="$name" '$1 == n { print $2 }' bp.opts)
		check "parity: $name is on in Debian's perf and in bperf (bperf: ${got:-not listed})" \
			[ "$got" = on ] ||
			diag "turn $name on in scripts/build-bperf.sh and add its -dev package to mk/bperf.mk (make deps)"
	done <deb.opts

	# features without a line in --build-options
	cat >s.py <<'EOF'
n = 0
def process_event(param_dict):
    global n
    n += 1
def trace_end():
    print("python-events %d" % n)
EOF
	cat >s.pl <<'EOF'
my $n = 0;
sub process_event { $n++; }
sub trace_end { print "perl-events $n\n"; }
EOF
	nsamp=$("$BPERF" script -i bperf.data -F comm 2>/dev/null | wc -l)
	for lang in python perl; do
		ext=py; [ $lang = perl ] && ext=pl
		"$BPERF" script -i bperf.data -s s.$ext >s.out 2>&1
		got=$(sed -n "s/^$lang-events //p" s.out)
		check "parity: script -s s.$ext ($lang) sees every sample (${got:-none} of $nsamp)" \
			[ "${got:-x}" = "$nsamp" ] || tail -n 3 s.out | diag
	done
	"$BPERF" record -z -o z.data ./work >z.rec 2>&1
	zn=$("$BPERF" script -i z.data -F comm 2>/dev/null | wc -l)
	check "parity: record -z (zstd) writes a compressed file that reads back ($zn samples)" \
		bash -c "grep -qi compressed z.rec && [ $zn -gt 0 ]" || tail -n 3 z.rec | diag
	"$BPERF" data convert --to-ctf ctf -i bperf.data >ctf.out 2>&1
	check "parity: data convert --to-ctf (libbabeltrace)" \
		bash -c "[ -f ctf/metadata ] && grep -q 'Converted and wrote' ctf.out" || tail -n 3 ctf.out | diag
	md=$("$STOCK" list --raw-dump metric 2>/dev/null | wc -w)
	mb=$("$BPERF" list --raw-dump metric 2>/dev/null | wc -w)
	check "parity: PMU event tables (jevents): bperf lists the metrics Debian's does ($mb of $md)" \
		[ "$mb" -eq "$md" ]
	"$BPERF" test -v 'Basic BPF filtering' >bpf.out 2>&1
	check "parity: the BPF loader is compiled in (perf test 'Basic BPF filtering' does not say otherwise)" \
		bash -c "grep -q 'Basic BPF filtering' bpf.out && ! grep -qi 'not compiled in\|not compiled' bpf.out" ||
		grep -i 'compiled\|skip' bpf.out | head -3 | diag
fi
