#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# bcoz off-CPU tests; need a kernel with blocked samples (run them in the VM):
#   scripts/run-vm.sh -- tools/bcoz/tests/vm/run.sh [-o OUTDIR] [--per-level N] [--demo] /dev/vda
# Build first on the host: make -C tools/bcoz vm-programs
# Prints TAP; exit status 1 on failure.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/vm_tests.py" "$@"
