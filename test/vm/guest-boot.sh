#!/bin/sh
# PID 1 of the make vmtest guest (installed as /sbin/xrcbench-init by
# image.sh; the kernel runs it through init=). No systemd: mount what the
# checks need, mount the payload disk (the binary and the checks, new at
# every run), run the checks, power off. Whatever happens, the machine
# powers off, so QEMU exits and the host's timeout is only a backstop.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
off() {
	sync
	umount /payload 2>/dev/null
	mount -o remount,ro / 2>/dev/null
	echo o > /proc/sysrq-trigger
	sleep 30
}
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/shm /run /tmp
mountpoint -q /dev/shm || mount -t tmpfs -o mode=1777 shm /dev/shm
mountpoint -q /run || mount -t tmpfs run /run
mountpoint -q /tmp || mount -t tmpfs -o mode=1777 tmp /tmp
echo 1 > /proc/sys/kernel/sysrq
if ! mount -o ro /dev/vdb /payload; then
	echo "xrcbench-init: no payload disk at /dev/vdb" > /dev/ttyS1
	off
fi
/bin/bash /payload/guest-check.sh
off
