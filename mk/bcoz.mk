# bcoz: the causal profiler in tools/bcoz.
#
#   make bcoz          build build/bcoz/{bcoz,libbcoz.so}
#   make bcoz-host     unit, parser fuzz and on-CPU causal tests (any kernel)
#   make bcoz-vm       off-CPU tests on the paper's motivational example and a
#                      sleep-bound loop, in the VM
#   make bcoz-test     both
#   make bcoz-truth    prediction-vs-actual table on the host (a benchmark,
#                      10-20 min; tools/bcoz/bench/truth.sh, --vm for the VM)
#
# `make test` runs both: bcoz-host on the host (any kernel), bcoz-vm in the
# VM on the patched kernel.

TEST_TARGETS += bcoz-host bcoz-vm
# bcoz-host loads `bcoz plot`'s page in headless chromium under Selenium
# (tools/bcoz/tests/plot_browser.py, scripts/headless_chromium.py).
DEPS_PACKAGES += chromium chromium-driver python3-selenium
# glibc's line tables: the -b % test checks that a libc syscall wrapper's
# time lands on its own line (tools/bcoz/tests/run_tests.py).
DEPS_PACKAGES += libc6-dbg

.PHONY: bcoz bcoz-host bcoz-vm bcoz-test bcoz-truth

bcoz-test:
	scripts/run-tests.sh bcoz-host bcoz-vm

bcoz:
	$(MAKE) -C tools/bcoz

bcoz-host:
	$(MAKE) -C tools/bcoz test

bcoz-vm:
	$(MAKE) -C tools/bcoz vm-programs
	scripts/run-vm.sh --timeout 1200 -- tools/bcoz/tests/vm/run.sh \
		-o build/vm-scratch/bcoz /dev/vda

bcoz-truth: bcoz
	tools/bcoz/bench/truth.sh
