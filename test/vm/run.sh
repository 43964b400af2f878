#!/usr/bin/env bash
# make vmtest: the rdma provider against a real kernel and a real rdma-core.
# Boots the cached Debian guest (image.sh) under QEMU with soft-RoCE (rxe),
# runs guest-check.sh in it with the bin/xrcbench built here, and has the Go
# test in test/vm judge the transcript the guest sends back.
#
# Where it cannot run (no QEMU, no way to build the image), it says so on one line starting
# "vmtest: SKIP:" and exits 0; VMTEST_REQUIRE=1 makes that exit 1.
# Every step is bounded: VM_BUILD_TIMEOUT for the image, VM_BOOT_TIMEOUT for
# the guest's whole life.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/vm
GO=${GO:-go}
QEMU=${QEMU:-qemu-system-x86_64}

skip() {
	echo "vmtest: SKIP: $*"
	[ "${VMTEST_REQUIRE:-}" = 1 ] && { echo "vmtest: VMTEST_REQUIRE=1: a skip is a failure here" >&2; exit 1; }
	exit 0
}

command -v "$QEMU" >/dev/null || skip "$QEMU not installed (apt-get install qemu-system-x86)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (apt-get install e2fsprogs)"

start=$(date +%s)
set +e
image=$(test/vm/image.sh | tail -n 1)
rc=$?
set -e
case $rc in
0) ;;
2) skip "the guest image cannot be built here (see the line above)" ;;
*) echo "vmtest: building the guest image failed" >&2; exit 1 ;;
esac

rm -rf "$out"
mkdir -p "$out/payload"
# The binary the guest runs is the one built here, against this machine's
# rdma-core: the guest's newer libibverbs must load it as it is.
# make build's flags (the version goes in at link time).
timeout 1800 make -s build BIN="$out/payload/xrcbench" GO="$GO" >/dev/null
cp test/vm/guest-check.sh "$out/payload/"
cp workloads/builtin/storm.yaml "$out/payload/"
# KVM when it works, else TCG (slower, the same kernel). /dev/kvm can
# open and still fail (nested virtualisation refusing an MSR aborts QEMU),
# so a short boot of the guest's kernel decides: KVM works if the kernel
# prints its banner.
# The device is checked first: opening a missing /dev/kvm for writing
# would create it, a plain file, there.
accel=tcg cpu=max why="no usable /dev/kvm"
if [ ! -c /dev/kvm ]; then
	why="no /dev/kvm (a character device) on this host"
elif ( exec 3<>/dev/kvm ) 2>/dev/null; then
	# In a shell of its own, which reports a QEMU that aborts, not ours.
	QEMU=$QEMU IMAGE=$image OUT=$out bash -c 'timeout -k 5 30 "$QEMU" -machine q35,accel=kvm -cpu host -m 256 \
		-nodefaults -display none -no-reboot -nic none -kernel "$IMAGE/vmlinuz" \
		-append "console=ttyS0 earlyprintk=ttyS0 panic=-1" -serial "file:$OUT/kvm-probe.log" \
		>"$OUT/kvm-probe.qemu.log" 2>&1; exit 0' 2>/dev/null
	if grep -q "Linux version" "$out/kvm-probe.log" 2>/dev/null; then
		accel=kvm cpu=host why="/dev/kvm works"
	else
		why="/dev/kvm is there but a KVM guest did not boot: $(grep -m1 -i -E 'error|fail' "$out/kvm-probe.qemu.log" || echo no banner within 30 s)"
	fi
fi
{
	echo "host rdma-core $(dpkg-query -W -f='${Version}' libibverbs-dev 2>/dev/null || echo unknown) (the headers the ABI check compared with; the binary links no libibverbs)"
	echo "host kernel $(uname -r)"
	echo "guest suite $(cat "$image/suite"), kernel $(cat "$image/kernel-version")"
	echo "accel $accel"
} > "$out/payload/host.txt"
size=$(( $(du -sm "$out/payload" | cut -f1) + 16 ))
mkfs.ext4 -q -L xrcpayload -d "$out/payload" "$out/payload.img" "${size}M" >/dev/null

# Under TCG the guest's clocksource watchdog can find the emulated TSC
# skewed and switch clocksources mid-run; the switch patches the kernel's
# text live (int3 breakpoints across CPUs), which TCG once turned into an
# oops in sched_clock_cpu and a panic halfway through the checks.
# tsc=reliable keeps the TSC without that watchdog.
cmdline="root=/dev/vda rw console=ttyS0 init=/sbin/xrcbench-init panic=-1 quiet"
[ "$accel" = tcg ] && cmdline="$cmdline tsc=reliable"
# boot: one life of the guest, its transcript in $out/transcript.txt.
boot() {
	echo "vmtest: booting the guest under $accel ($why); image $image"
	local t0 rc
	t0=$(date +%s)
	set +e
	# snapshot=on: the cached image is never written; the guest's changes
	# go to a temporary file QEMU drops at exit.
	timeout -k 10 "${VM_BOOT_TIMEOUT:-900}" "$QEMU" \
		-machine "q35,accel=$accel" -cpu "$cpu" -smp 2 -m 1024 \
		-nodefaults -display none -no-reboot -nic none \
		-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
		-append "$cmdline" \
		-drive "file=$image/rootfs.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$out/payload.img,if=virtio,format=raw,readonly=on" \
		-serial "file:$out/console.log" -serial "file:$out/transcript.txt" \
		>"$out/qemu.log" 2>&1
	rc=$?
	set -e
	echo "vmtest: guest exited with status $rc after $(($(date +%s) - t0)) s (the whole vmtest so far $(($(date +%s) - start)) s); console in $out/console.log"
	if [ $rc -ne 0 ]; then
		[ $rc -eq 124 ] && echo "vmtest: the guest did not power off within ${VM_BOOT_TIMEOUT:-900} s" >&2
		grep -v '^$' "$out/qemu.log" >&2 || true
		tail -n 30 "$out/console.log" >&2 || true
		exit 1
	fi
}
# stopped: why the guest powered off before its checks' last line
# (XRCVM DONE), from its console (the last step it began and what the
# kernel said last), or nothing when it reached it.
stopped() {
	grep -q '^XRCVM DONE' "$out/transcript.txt" 2>/dev/null && return 0
	echo "the guest powered off before its last step; its console ends:"
	grep -v '^$' "$out/console.log" | tail -n 25 | sed 's/^/    /'
}
boot
# -no-reboot turns a guest kernel's panic into QEMU's clean exit, so a
# guest that died mid-checks (TCG's emulation has panicked a guest kernel
# here once) looks like one that finished. It gets one more life, said
# aloud; the Go test judges the second transcript, cut short or not.
why_stopped=$(stopped)
if [ -n "$why_stopped" ]; then
	echo "vmtest: $why_stopped" >&2
	mv "$out/console.log" "$out/console.1.log"
	mv "$out/transcript.txt" "$out/transcript.1.txt"
	echo "vmtest: booting once more (the first life's console and transcript are in $out/console.1.log and transcript.1.txt)" >&2
	boot
fi
set +e
$GO test -count=1 -v -run '^TestGuest$' ./test/vm -args -transcript "$PWD/$out/transcript.txt" | tee "$out/test.log"
rc=${PIPESTATUS[0]}
set -e
# The softxrc part (the soft XRC device) skips where the image could not
# have it; say so as every skip here is said (a failure under
# VMTEST_REQUIRE=1, which the Go test enforces).
why=$(grep -m1 -o 'SKIP: softxrc: .*' "$out/test.log" || true)
[ -n "$why" ] && echo "vmtest: ${why}"
# Said last, where a reader of the failure's tail sees it.
why_stopped=$(stopped)
[ -n "$why_stopped" ] && echo "vmtest: $why_stopped" >&2
[ -f "$out/console.1.log" ] && echo "vmtest: the guest's first boot stopped before its last step ($out/console.1.log); what the test judged is the second's" >&2
exit "$rc"
