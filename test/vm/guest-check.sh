#!/bin/bash
# The checks make vmtest runs inside the guest, from the payload disk. It
# only runs and records: every step's exit status, stdout and stderr go to
# the host on the second serial port (/dev/ttyS1) as framed sections, and
# the host's Go test (test/vm/vm_test.go) judges them. Framing, one step:
#   XRCVM STEP <name> <exit status>
#   XRCVM BEGIN <name>.out    then its stdout in base64, then XRCVM END
#   XRCVM BEGIN <name>.err    the same for stderr
# and XRCVM DONE last, so a transcript cut short is told from a whole one.
# timeout bounds every step (exit status 124 when it fired).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TMPDIR=/tmp LC_ALL=C.UTF-8
out=/dev/ttyS1
stty -F "$out" raw -echo 2>/dev/null
x=/payload/xrcbench

section() { # name file
	{
		echo "XRCVM BEGIN $1"
		base64 -w 76 < "$2"
		echo "XRCVM END $1"
	} > "$out"
}

step() { # name seconds command...
	local name=$1 secs=$2
	shift 2
	timeout -k 5 "$secs" "$@" > /tmp/step.out 2> /tmp/step.err
	local rc=$?
	echo "XRCVM STEP $name $rc" > "$out"
	section "$name.out" /tmp/step.out
	section "$name.err" /tmp/step.err
	echo "step $name: exit $rc" > /dev/console
	return $rc
}

echo "XRCVM START" > "$out"
step host 5 cat /payload/host.txt
step kernel 5 uname -r
step guest-packages 10 dpkg-query -W -f='${Package} ${Version}\n' rdma-core libibverbs1 ibverbs-providers ibverbs-utils iproute2
step modprobe 60 modprobe rdma_rxe
step dummy-add 20 ip link add dummy0 type dummy
step dummy-up 20 ip link set dummy0 up
step rxe-add 60 rdma link add rxe0 type rxe netdev dummy0
step rdma-link 20 rdma link show
step ibv_devices 30 ibv_devices
step ibv_devinfo 30 ibv_devinfo -v -d rxe0
# What the kernel says of the device's NUMA node and driver, which
# ibv_devinfo does not print ("absent": no such file, as for a device with
# no bus device under it).
step sysfs 10 bash -c 'd=/sys/class/infiniband/rxe0
echo "numa_node $(cat "$d/device/numa_node" 2>/dev/null || echo absent)"
drv=$(readlink "$d/device/driver") && echo "driver ${drv##*/}" || echo "driver absent"'
step version 30 "$x" version
# A QP of a user process beside the kernel's own (QP 1, GSI): an RC
# pingpong server creates its QP, then waits for a client that never comes.
ibv_rc_pingpong -d rxe0 -g 0 > /tmp/holder.out 2>&1 &
holder=$!
sleep 2
step qp-holder 5 bash -c "cat /tmp/holder.out; kill -0 $holder && echo pid $holder"
# The kernel's list of QPs as iproute2 reads it, and xrcbench's own view of
# the same list (its netlink reader), while nothing else changes it.
step rdma-res-qp 20 rdma resource show qp
step rdma-res-qp-json 20 rdma -j resource show qp
step devices 60 "$x" devices
step devices-json 60 "$x" devices --json
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
step conform-rdma 120 "$x" conform --provider rdma --device rxe0
step conform-rdma-json 120 "$x" conform --provider rdma --device rxe0 --json
step run-rdma 120 "$x" run --provider rdma --device rxe0 --duration 2s --warmup 0s --out /tmp/run-rdma
step run-rdma-result 5 cat /tmp/run-rdma/result.json
step run-legacy 120 "$x" run --provider legacy --device rxe0 --duration 2s --warmup 0s --out /tmp/run-legacy
step conform-legacy 120 "$x" conform --provider legacy --device rxe0
echo "XRCVM DONE" > "$out"
