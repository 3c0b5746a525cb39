# Top-level Makefile: build the patched 6.1 kernel and run the tests in QEMU.
#
#   make deps        install the Debian packages the project needs (skips apt
#                    when everything is already installed)
#   make tree        build/linux = Debian linux-source-6.1 + new files + patches
#   make kernel      build/kbuild/arch/x86/boot/bzImage (+ headers)
#   make selftests   build the blocked_samples kselftests and run them in the VM
#   make test        deps + kernel + every target in TEST_TARGETS; the last line
#                    is "N passed, N failed, N skipped" summed over the targets
#   make vm CMD="…"  run one command in the VM (root, host root read-only)
#   make fuzz        the blocked samples fuzzer in the VM (FUZZ_SECONDS, default 90)
#   KERNEL_FLAVOUR=debug make test
#                    the same on a KASAN + lockdep + PREEMPT kernel
#                    (build/kbuild-debug): the selftests, then the fuzzer
#   make demo        the paper's example under bperf and bcoz, in the VM
#   make clean       remove build output but keep the extracted source
#   make distclean   remove build/ entirely
#
# Hooks for other parts of the project: a file mk/<name>.mk is included
# below; it may add packages to DEPS_PACKAGES, targets to TEST_TARGETS (each
# must print TAP (kselftest's, or flat TAP 13 as tools/bcoz/tests/tap.py and
# tools/perf/tests/blocked/tap.sh print it) and exit non-zero on failure), and
# define its own rules (e.g. a `demo` recipe replacing DEMO_CMD).

SHELL := /bin/bash
.DEFAULT_GOAL := help

DEPS_PACKAGES := qemu-system-x86 busybox-static flex bison bc libelf-dev libdw-dev \
	ccache cpio rsync libssl-dev linux-source-6.1 gcc make libc6-dev patch xz-utils \
	gzip util-linux coreutils file perl

# Test targets run by `make test`, in order, after `deps` and `kernel`.
TEST_TARGETS := selftests

# Which kernel the targets build and boot (scripts/lib.sh): empty for the
# default one, debug, noblocked or nolockdep for build/kbuild-<flavour>.
KERNEL_FLAVOUR ?=
export KERNEL_FLAVOUR

-include $(sort $(wildcard mk/*.mk))

# The debug kernel is for the kernel side only: the selftests and the fuzzer.
ifeq ($(KERNEL_FLAVOUR),debug)
TEST_TARGETS := selftests fuzz
endif

.PHONY: help deps source tree kernel selftests fuzz test vm demo clean distclean

help:
	@sed -n '2,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@missing=$$(for p in $(DEPS_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEPS_PACKAGES)) packages installed"; exit 0; fi; \
	echo "deps: installing $$missing"; \
	if [ "$$(id -u)" -ne 0 ]; then echo "deps: not root; run: sudo make deps" >&2; exit 1; fi; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing

source:
	scripts/fetch-source.sh

tree: source
	scripts/prepare-tree.sh

kernel:
	scripts/build-kernel.sh

selftests:
	scripts/run-selftests.sh

fuzz:
	scripts/run-fuzz.sh

test:
	$(MAKE) --no-print-directory deps
	$(MAKE) --no-print-directory kernel
	scripts/run-tests.sh $(TEST_TARGETS)

# $(value ...) keeps make from expanding "$VAR" inside the command.
vm: export VM_CMD := $(value CMD)
vm:
	@if [ -z "$$VM_CMD" ]; then echo 'usage: make vm CMD="command to run in the VM"' >&2; exit 2; fi
	scripts/run-vm.sh -- "$$VM_CMD"

# The paper's motivational example (two threads at a barrier, one doing
# O_DIRECT I/O) under bperf (per-thread reports like the paper's Figure 7,
# flame graphs) and bcoz (causal profiles like its Figure 9), in the VM.
# bcoz's checks print ok/not ok per prediction; a missed threshold does not
# fail the demo (single runs under TCG are noisy; `make test` is the gate).
DEMO_VM_CMD := tools/perf/tests/blocked/vm/demo.sh && \
	{ tools/bcoz/tests/vm/run.sh --demo -o build/vm-scratch/bcoz /dev/vda || \
	  echo "demo: some bcoz predictions missed their thresholds (see the not ok lines above)"; }

demo:
	$(MAKE) --no-print-directory deps
	$(MAKE) --no-print-directory kernel
	$(MAKE) --no-print-directory bperf
	$(MAKE) --no-print-directory -C tools/bcoz vm-programs
	scripts/run-vm.sh --timeout 1800 -- '$(DEMO_VM_CMD)'
	@echo "demo: outputs (reports, flame graphs, plots) in build/vm-scratch/"

clean:
	rm -rf build/linux build/kbuild build/kbuild-debug build/kbuild-noblocked build/kbuild-nolockdep \
		build/kconfig-gen* \
		build/kselftest build/kselftest-results \
		build/vm-scratch build/vm-logs build/patch-state build/patch-check build/vm-initramfs* \
		build/kvm-probe* build/vm-disk.img build/vm.lock

distclean:
	rm -rf build
