# The paper's RocksDB case study (section 4.2) scaled to the VM:
#
#   make case-study   opt1 block cache contention, opt2 block reads, opt3
#                     writes: bperf's view, bcoz's predictions and the real
#                     changes, one "case-study: NAME predicted +X% actual +Y%"
#                     line per prediction (tools/case-study/rocksdb.sh;
#                     Documentation/case-study-rocksdb.rst). Outputs in
#                     build/vm-scratch/case-study/. About 20-30 min under TCG.
#
# Not a test (single runs of a real server under TCG are noisy; the doc
# discusses the numbers): not in TEST_TARGETS. The databases live on a
# 1 GiB scratch image of their own, build/case-study-disk.img.
# Environment passed to the guest: RUNS, TARGET_S, KEYS, THREADS, WRITERS.

CASE_STUDY_DISK := build/case-study-disk.img

.PHONY: case-study

case-study: bperf
	$(MAKE) --no-print-directory kernel
	$(MAKE) --no-print-directory -C tools/bcoz
	@mkdir -p build/vm-scratch/case-study
	@[ -f $(CASE_STUDY_DISK) ] || truncate -s 1G $(CASE_STUDY_DISK)
	VM_ENV="RUNS TARGET_S KEYS THREADS WRITERS" scripts/run-vm.sh --timeout 3600 \
		--disk $(CASE_STUDY_DISK) -- tools/case-study/rocksdb.sh /dev/vda \
		2>&1 | tee build/vm-scratch/case-study/transcript.txt; \
		exit $${PIPESTATUS[0]}
