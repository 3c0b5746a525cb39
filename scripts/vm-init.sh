#!/bin/sh
# /init of the test VM's busybox initramfs (packed by scripts/run-vm.sh; not run
# on the host). Mounts the host root read-only over 9p (tag hostroot), the
# writable scratch share (tag scratch) at its host path, proc/sys/devtmpfs/tmpfs,
# chroots into the host root and runs the job that scripts/run-vm.sh left in
# <scratch>/.vm-jobs/<id>/run.sh. Command output goes to /dev/hvc0 (virtio
# console, the host terminal); the kernel console is ttyS0 (the log file).
# Ends with "VM_EXIT_STATUS=<rc>" on the console, then powers off.
# Kernel command line: vmrun.scratch=<abs dir> vmrun.job=<id> [vmrun.probe=1]
export PATH=/bin
R=/newroot

kmsg() { echo "$*" >/dev/kmsg 2>/dev/null || echo "$*" >/dev/console; }
finish() {
	kmsg "VM_EXIT_STATUS=$1"
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}
fail() {
	kmsg "VM_INIT_ERROR: $*"
	finish 125
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null

scratch= job= probe= repo=
for arg in $(cat /proc/cmdline); do
	case $arg in
	vmrun.scratch=*) scratch=${arg#vmrun.scratch=} ;;
	vmrun.job=*) job=${arg#vmrun.job=} ;;
	vmrun.repo=*) repo=${arg#vmrun.repo=} ;;
	vmrun.probe=1) probe=1 ;;
	esac
done

if [ -n "$probe" ]; then
	kmsg "VM_PROBE_OK"
	finish 0
fi
[ -n "$scratch" ] && [ -n "$job" ] || fail "vmrun.scratch= or vmrun.job= missing from the kernel command line"

o9p=trans=virtio,version=9p2000.L,msize=262144
mkdir -p $R
mount -t 9p -o $o9p,ro,cache=loose hostroot $R || fail "cannot mount the host root (9p tag hostroot)"
mount -t proc proc $R/proc || fail "cannot mount /proc"
mount -t sysfs sys $R/sys || fail "cannot mount /sys"
mount -t devtmpfs dev $R/dev || fail "cannot mount devtmpfs on /dev"
mount -t tmpfs -o mode=1777 tmp $R/tmp || fail "cannot mount tmpfs on /tmp"
mount -t tmpfs -o mode=755 run $R/run || fail "cannot mount tmpfs on /run"
# devtmpfs lacks the links udev would make; scripts use /dev/stdout and /dev/fd
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 shm $R/dev/shm 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
if [ -n "$repo" ]; then
	# a checkout under /tmp or /run, hidden by the fresh tmpfs
	mkdir -p "$R$repo" 2>/dev/null
	mount -t 9p -o $o9p,ro,cache=loose repo "$R$repo" || fail "cannot mount the checkout (9p tag repo) at $repo"
fi
mkdir -p "$R$scratch" 2>/dev/null
mount -t 9p -o $o9p,rw scratch "$R$scratch" || fail "cannot mount the scratch share at $scratch"

jobdir=$scratch/.vm-jobs/$job
[ -f "$R$jobdir/run.sh" ] || fail "job script $jobdir/run.sh not found"

out=$R/dev/hvc0
if [ -c "$out" ]; then
	stty -F "$out" raw -echo 2>/dev/null
else
	kmsg "VM_INIT_WARNING: /dev/hvc0 missing, command output goes to the console"
	out=/dev/console
fi

kmsg "VM_COMMAND_START"
chroot $R /bin/sh "$jobdir/run.sh" <"$R/dev/null" >"$out" 2>&1
rc=$?
kmsg "VM_COMMAND_END"
# The console marker (in finish) is what the host reads; the files below are
# extras on the 9p share, written under a time limit so a sick share cannot
# keep the VM from powering off.
timeout 10 sh -c "echo $rc >'$R$jobdir/status'; dmesg >'$R$jobdir/dmesg'" 2>/dev/null
finish "$rc"
