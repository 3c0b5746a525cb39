# bperf: perf 6.1 + tools/perf/patches, built by scripts/build-bperf.sh.
#
#   make bperf         build build/bperf/bperf
#   make bperf-host    parsing/report/script/flame graph tests that need no
#                      special kernel, plus the diff test against stock perf
#   make bperf-vm      record and check a workload with known phases in the VM
#
# Both test targets print flat TAP 13 (tools/perf/tests/blocked/tap.sh), sized
# by time and checked against measurements of the same run; `make test` sums
# them with scripts/tap-summary.sh.
DEPS_PACKAGES += libslang2-dev libunwind-dev zlib1g-dev libtraceevent-dev \
	python3 linux-perf
TEST_TARGETS += bperf-host bperf-vm

.PHONY: bperf bperf-host bperf-vm

bperf:
	scripts/build-bperf.sh

bperf-host: bperf
	tools/perf/tests/blocked/run-host-tests.sh

bperf-vm: bperf
	scripts/run-vm.sh --timeout 900 -- tools/perf/tests/blocked/vm/run-vm-tests.sh
