#!/bin/bash
# Usage: scripts/run-vm.sh [options] [--] COMMAND [ARGS...]
#
# Boots build/kbuild/arch/x86/boot/bzImage under qemu-system-x86_64, runs ONE
# shell command (joined like "$*", run with /bin/sh -c, as root) and exits with
# its status. The guest's root is the host's root, read-only over 9p; /tmp and
# /run are fresh tmpfs; the scratch directory is shared read-write at the same
# path; the working directory is the current one. The command's stdout+stderr
# come back on this terminal; the kernel console goes to build/vm-logs/<ts>.log
# together with the command output and the guest's dmesg.
#
# Options:
#   --cpus N        guest CPUs (default 2)
#   --mem SIZE      guest memory (default 2G)
#   --disk FILE     raw image attached as /dev/vda (default build/vm-disk.img,
#                   created with 64 MiB if missing)
#   --kernel PATH   bzImage to boot (default build/kbuild/arch/x86/boot/bzImage)
#   --timeout N     kill the VM after N seconds (default 600)
#   --rw DIR        writable shared directory (default build/vm-scratch)
#   --accel MODE    kvm, tcg or auto (default auto: KVM only if a boot probe
#                   succeeds; the result is cached in build/kvm-probe)
#   --log FILE      log file (default build/vm-logs/<timestamp>.log)
# Environment:
#   VM_ENV="NAME1 NAME2"   environment variables passed to the command
#   VM_APPEND="..."        more kernel command-line parameters
#   VM_BADNESS_IGNORE=ERE  console lines matching it are not counted as badness
#   VM_ICOUNT=shift=0      TCG with instruction counting (-icount): the guest's
#                          clock advances 2^shift ns per guest instruction, so a
#                          timing counts what the guest executes, not what
#                          emulating its timers and interrupts costs the host;
#                          repeatable to 1-2 %. One vCPU only (--cpus 1): QEMU
#                          7.2 hangs bringing up a second one in this mode.
#
# Exit status: the command's; 124 on timeout; 125 if the VM did not report a
# status (crash, init error); 1 if the command passed but the console shows a
# kernel BUG/WARNING/Oops/lockdep splat/stall (the offending line is printed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

cpus=2 mem=2G disk= kernel=$BZIMAGE_DEFAULT tmo=600 scratch=$BUILD/vm-scratch
accel=${VM_ACCEL:-auto} logfile=
while [ $# -gt 0 ]; do
	case $1 in
	--cpus) cpus=${2:?--cpus needs a number}; shift 2 ;;
	--mem) mem=${2:?--mem needs a size}; shift 2 ;;
	--disk) disk=${2:?--disk needs a file}; shift 2 ;;
	--kernel) kernel=${2:?--kernel needs a path}; shift 2 ;;
	--timeout) tmo=${2:?--timeout needs seconds}; shift 2 ;;
	--rw) scratch=${2:?--rw needs a directory}; shift 2 ;;
	--accel) accel=${2:?--accel needs kvm, tcg or auto}; shift 2 ;;
	--log) logfile=${2:?--log needs a file}; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (see scripts/run-vm.sh --help)" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "no command given (usage: scripts/run-vm.sh [options] -- COMMAND)"
cmd="$*"
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus $cpus: not a positive number"
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "--timeout $tmo: not a positive number of seconds"
case $accel in kvm|tcg|auto) ;; *) die "--accel $accel: use kvm, tcg or auto" ;; esac

need qemu-system-x86_64 qemu-system-x86
need busybox busybox-static
need cpio cpio
need gzip gzip
need flock util-linux
need timeout coreutils
[ -f "$kernel" ] || die "kernel $kernel not found; build it with 'make kernel' (scripts/build-kernel.sh)"
kernel=$(readlink -f "$kernel")

cwd=$(pwd -P)
# /tmp and /run are fresh tmpfs in the guest: a checkout there (CI clones
# often live in /tmp) is shared into the guest at the same path, read-only.
repo_share=
case $REPO/ in
/tmp/*|/run/*)
	repo_share=$(cd "$REPO" && pwd -P)
	[[ $repo_share =~ ^/[A-Za-z0-9/._+-]+$ ]] ||
		die "the checkout $repo_share is under /tmp or /run and its path has characters the kernel command line cannot carry; clone it elsewhere" ;;
esac
case $cwd/ in
"$repo_share"/*) ;;
/tmp/*|/run/*|/proc/*|/sys/*|/dev/*)
	die "the current directory $cwd is not visible in the guest (/tmp, /run, /dev are fresh there); cd elsewhere or use --rw" ;;
esac
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd -P)
[[ $scratch =~ ^/[A-Za-z0-9/._+-]+$ ]] ||
	die "--rw $scratch: use a path made of letters, digits and /._+- only (it goes on the kernel command line)"
case $scratch/ in
/proc/*|/sys/*|/dev/*|/) die "--rw $scratch: choose a normal directory" ;;
esac

mkdir -p "$BUILD/vm-logs"

# --- one VM at a time (2 cores; parallel TCG guests starve each other); the lock
# also covers the initramfs and disk set-up below ------------------------------
exec 9>"$BUILD/vm.lock"
if ! flock -n 9; then
	log "another VM is running (lock $BUILD/vm.lock); waiting for it"
	flock 9
fi

# --- initramfs: busybox-static + scripts/vm-init.sh ----------------------------
initrd=$BUILD/vm-initramfs.cpio.gz
bb=$(readlink -f "$(command -v busybox)")
file -b "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ ldd "$bb" 2>&1 | grep -q 'not a dynamic' || die "$bb is not static; install busybox-static"; }
if [ ! -s "$initrd" ] || [ "$REPO/scripts/vm-init.sh" -nt "$initrd" ] || [ "$bb" -nt "$initrd" ]; then
	log "building $initrd"
	stage=$BUILD/vm-initramfs
	rm -rf "$stage"; mkdir -p "$stage"/{bin,dev,proc,sys,newroot}
	cp "$bb" "$stage/bin/busybox"
	for app in sh mount umount mkdir cat echo chroot poweroff sleep dmesg sync stty ls ln timeout; do
		ln -s busybox "$stage/bin/$app"
	done
	install -m 755 "$REPO/scripts/vm-init.sh" "$stage/init"
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -9) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
fi

# --- disk ---------------------------------------------------------------------
if [ -z "$disk" ]; then
	disk=$BUILD/vm-disk.img
	[ -f "$disk" ] || truncate -s 64M "$disk"
fi
[ -f "$disk" ] || [ -b "$disk" ] || die "--disk $disk: no such file"

qemu_base=(qemu-system-x86_64 -nodefaults -no-user-config -M q35 -m "$mem"
	-display none -monitor none -no-reboot -kernel "$kernel" -initrd "$initrd")

# --- acceleration: KVM only if a probe boot works ------------------------------
probe_kvm() {
	local plog=$BUILD/kvm-probe.log
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		echo "tcg (no usable /dev/kvm)"; return
	fi
	log "probing KVM (boots the kernel under -accel kvm for at most 20 s; cached in $BUILD/kvm-probe)"
	rm -f "$plog"
	# (in a subshell so that a crashing qemu does not make bash print "Aborted")
	( timeout -k 5 20 "${qemu_base[@]}" -accel kvm -cpu host -smp 1 -serial "file:$plog" \
		-append "console=ttyS0 panic=-1 vmrun.probe=1" </dev/null 2>"$plog.err" || true ) \
		>/dev/null 2>&1
	if grep -aq VM_PROBE_OK "$plog" 2>/dev/null; then
		echo "kvm"
	else
		echo "tcg (KVM probe boot printed no marker within 20 s${plog:+; qemu said: $(head -n1 "$plog.err" 2>/dev/null)})"
	fi
}
if [ -n "${VM_ICOUNT:-}" ]; then
	[ "$accel" != kvm ] || die "VM_ICOUNT is a TCG mode; drop --accel kvm or VM_ICOUNT"
	accel=tcg
fi
if [ "$accel" = auto ]; then
	probe=$BUILD/kvm-probe
	if [ ! -s "$probe" ]; then     # a host property: probed once; rm build/kvm-probe to redo
		probe_kvm >"$probe"
	fi
	accel=$(cut -d' ' -f1 "$probe")
	[ "$accel" = kvm ] || log "using TCG: $(cat "$probe")"
fi
if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu host)
else
	if [ -n "${VM_ICOUNT:-}" ]; then
		[ "$cpus" = 1 ] || die "VM_ICOUNT needs --cpus 1 (QEMU hangs bringing up a second vCPU under -icount); got --cpus $cpus"
		accel_args=(-accel tcg,thread=single -icount "$VM_ICOUNT" -cpu max)
	else
		accel_args=(-accel tcg,thread=multi -cpu max)
	fi
	# Under TCG every vCPU reads the host's TSC, but the guest's boot-time
	# sync check finds "warps" (its two-CPU handshake is slow under
	# emulation), marks the TSC unstable and falls back to the HPET: each
	# clock_gettime() is then a system call and an emulated MMIO read,
	# 4.5 us instead of 0.07 us, and every hrtimer interrupt pays for it.
	# Real machines run on the TSC; so does this guest.
	tcg_append=" tsc=reliable"
fi

# --- job ----------------------------------------------------------------------
ts=$(date -u +%Y%m%d-%H%M%S)
job=$ts-$$
jobdir=$scratch/.vm-jobs/$job
[ -n "$logfile" ] || logfile=$BUILD/vm-logs/$ts-$$.log
mkdir -p "$jobdir" "$(dirname "$logfile")"
console=$jobdir/console.log
outfile=$jobdir/output.log
cleanup() { rm -rf "$jobdir"; }
trap cleanup EXIT

shquote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
printf '%s\n' "$cmd" >"$jobdir/cmd"
echo 130 >"$jobdir/status"          # default: failure unless the guest says otherwise
{
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root TERM=dumb LANG=C.UTF-8"
	for name in ${VM_ENV:-}; do
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "VM_ENV: '$name' is not a variable name"
		if [ -n "${!name+set}" ]; then
			echo "export $name=$(shquote "${!name}")"
		fi
	done
	echo "cd $(shquote "$cwd") || { echo 'run-vm: cannot cd to $cwd in the guest' >&2; exit 125; }"
	echo "exec /bin/sh -c \"\$(cat $(shquote "$jobdir/cmd"))\""
} >"$jobdir/run.sh"

# random.trust_cpu=on: the config leaves RANDOM_TRUST_CPU off, so the guest's
# crng, fed only by interrupts, came ready about 5 s after boot, and until then
# the first getrandom() (Python's, perf's) ran try_to_generate_entropy(), a
# timer-driven spin that took a CPU for the first 3-4 s of every command.  Both
# QEMU's TCG (-cpu max) and KVM (-cpu host) give the guest RDRAND.
append="console=ttyS0 loglevel=7 printk.time=1 printk.devkmsg=on panic=-1 rcupdate.rcu_cpu_stall_timeout=100"
append+=" random.trust_cpu=on"
append+="${tcg_append:-} vmrun.scratch=$scratch vmrun.job=$job${VM_APPEND:+ $VM_APPEND}"
repo_args=()
if [ -n "$repo_share" ]; then
	append+=" vmrun.repo=$repo_share"
	repo_args=(-fsdev "local,id=repo,path=$repo_share,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=repo,mount_tag=repo)
fi

log "booting $(basename "$kernel") (${accel_args[1]%%,*}, $cpus CPUs, $mem, timeout ${tmo}s); log: $logfile"
t0=$(now)
set +e
timeout -k 15 "$tmo" "${qemu_base[@]}" "${accel_args[@]}" -smp "$cpus" \
	-append "$append" \
	-serial "file:$console" \
	-device virtio-serial-pci -chardev stdio,id=out,signal=off -device virtconsole,chardev=out \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=scratch,path="$scratch",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=scratch,mount_tag=scratch \
	"${repo_args[@]}" \
	-drive file="$disk",format=raw,if=virtio \
	</dev/null 2>"$jobdir/qemu.err" | tee "$outfile"
qrc=${PIPESTATUS[0]}
set -e
wall=$(elapsed "$t0")

{
	echo "### run-vm: $cmd"
	echo "### cwd $cwd, kernel $kernel, accel ${accel_args[*]}, $cpus CPUs, $mem, qemu rc $qrc, wall ${wall}s"
	echo "### ---- console (ttyS0) ----"
	cat "$console" 2>/dev/null || echo "(none)"
	echo "### ---- command output (hvc0) ----"
	cat "$outfile" 2>/dev/null || echo "(none)"
	echo "### ---- qemu stderr ----"
	cat "$jobdir/qemu.err" 2>/dev/null || echo "(none)"
	echo "### ---- guest dmesg ----"
	cat "$jobdir/dmesg" 2>/dev/null || echo "(none)"
} >"$logfile"

if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	tail -n 25 "$console" 2>/dev/null | sed 's/^/  console| /' >&2
	log "ERROR: the VM timed out after ${tmo}s and was killed (last console lines above)." \
	    "Raise the limit with --timeout N if the command is just slow; full log: $logfile"
	exit 124
fi
if [ -s "$jobdir/qemu.err" ]; then
	sed 's/^/  qemu| /' "$jobdir/qemu.err" >&2
fi

rc=$(grep -ao 'VM_EXIT_STATUS=[0-9]*' "$console" 2>/dev/null | tail -n1 | cut -d= -f2 || true)
if grep -aq 'VM_INIT_ERROR' "$console" 2>/dev/null; then
	log "ERROR: the VM's init failed: $(grep -a 'VM_INIT_ERROR' "$console" | head -n1 | sed 's/.*VM_INIT_ERROR: //')"
	log "full log: $logfile"
	exit 125
fi
if [ -z "$rc" ]; then
	tail -n 25 "$console" 2>/dev/null | sed 's/^/  console| /' >&2
	log "ERROR: the VM ended (qemu rc $qrc) without reporting the command's exit status" \
	    "(kernel panic or crash? last console lines above); full log: $logfile"
	exit 125
fi

boot_s=$(grep -a 'VM_COMMAND_START' "$console" | head -n1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
end_s=$(grep -a 'VM_COMMAND_END' "$console" | head -n1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')

# --- console badness ------------------------------------------------------------
bad_re='BUG:|WARNING:|Oops|Call Trace:|(^|[^a-z_])stalls?([^a-z_]|$)|Kernel panic|possible recursive locking|inconsistent lock state|circular locking|possible irq lock inversion|suspicious RCU usage|lock held when returning to user space|turning off the locking correctness validator|soft lockup|hard LOCKUP|blocked for more than'
benign_re='VM_(INIT_WARNING|EXIT_STATUS|COMMAND)|RCU CPU stall warnings timeout set|ommand line:'
bad=$(grep -aE "$bad_re" "$console" | grep -avE "$benign_re" |
	{ if [ -n "${VM_BADNESS_IGNORE:-}" ]; then grep -avE "$VM_BADNESS_IGNORE"; else cat; fi; } || true)
log "command exit status $rc; boot-to-command ${boot_s:-?}s, command $(awk -v a="${boot_s:-0}" -v b="${end_s:-0}" 'BEGIN{printf "%.1f", b-a}')s (guest clock), total ${wall}s wall"
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/  console| /' >&2
	log "ERROR: kernel console badness (lines above): $(printf '%s\n' "$bad" | head -n1)"
	log "full log with the complete splat: $logfile"
	[ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
