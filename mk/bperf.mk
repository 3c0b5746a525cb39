# bperf: perf 6.1 + tools/perf/patches, built by scripts/build-bperf.sh.
#
#   make bperf         build build/bperf/bperf
#   make bperf-host    parsing/report/script/flame graph tests that need no
#                      special kernel, plus the diff test against stock perf
#   make bperf-vm      record and check a workload with known phases in the VM
#   make bench         the overhead benchmark (the paper's Figure 16) in one VM
#                      boot: none/sampling/bperf/tracing on four workloads,
#                      medians of RUNS (5); see tools/perf/tests/blocked/vm/bench.sh
#   make bench ICOUNT=1  the same on one vCPU with instruction counting
#                      (VM_ICOUNT in scripts/run-vm.sh): time is guest
#                      instructions, repeatable, free of TCG's timer costs
#   make hookcost      the scheduler hooks' cost per context switch, on the
#                      kernel without and with CONFIG_PERF_BLOCKED_SAMPLES
#                      (tools/perf/tests/blocked/hookcost-host.sh)
#
# Both test targets print flat TAP 13 (tools/perf/tests/blocked/tap.sh), sized
# by time and checked against measurements of the same run; `make test` sums
# them with scripts/tap-summary.sh.
# The -dev packages give bperf the feature set of Debian's linux-perf (see
# scripts/build-bperf.sh); linux-perf itself is the reference the host tests
# compare with; g++ builds their C++ workload; rocksdb-tools gives the VM
# suite db_bench, a real C++ server to check wait reasons on.
# libprotobuf-c-dev and protobuf-c-compiler give `bperf data convert
# --to-pprof`; golang-go's `go tool pprof` is the independent reader the host
# tests check it with.
DEPS_PACKAGES += libslang2-dev libunwind-dev zlib1g-dev libtraceevent-dev \
	liblzma-dev libzstd-dev libnuma-dev libperl-dev python3-dev libcap-dev \
	libbabeltrace-dev libopencsd-dev libiberty-dev python3 g++ linux-perf \
	rocksdb-tools libprotobuf-c-dev protobuf-c-compiler golang-go
# bperf-host drives the interactive flame graph in headless chromium
# (tools/perf/tests/blocked/browser.py)
DEPS_PACKAGES += chromium chromium-driver python3-selenium
TEST_TARGETS += bperf-host bperf-vm

.PHONY: bperf bperf-host bperf-vm bench hookcost

bperf:
	scripts/build-bperf.sh

bperf-host: bperf
	tools/perf/tests/blocked/run-host-tests.sh

bperf-vm: bperf
	scripts/run-vm.sh --timeout 900 -- tools/perf/tests/blocked/vm/run-vm-tests.sh

# Not a test (it asserts nothing): not in TEST_TARGETS.  Runs on the
# nolockdep kernel flavour, as production kernels are built (its first build
# takes the time of a cold kernel build).  About 10 min in TCG.
bench: bperf
	$(MAKE) --no-print-directory kernel KERNEL_FLAVOUR=nolockdep
	KERNEL_FLAVOUR=nolockdep VM_ENV="RUNS TARGET_MS MSG_GROUPS LOOPS PIPE_LOOPS DEVICE WORKLOADS PROFILERS" \
		$(if $(ICOUNT),VM_ICOUNT=shift=0) \
		scripts/run-vm.sh $(if $(ICOUNT),--cpus 1) --timeout 2400 -- tools/perf/tests/blocked/vm/bench.sh

# Not a test either: builds the noblocked kernel flavour (about the time of a
# warm kernel build with ccache) and boots both kernels. About 15 min in TCG.
hookcost:
	$(MAKE) --no-print-directory kernel
	tools/perf/tests/blocked/hookcost-host.sh
