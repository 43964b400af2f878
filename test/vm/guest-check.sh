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
	local t0=$SECONDS
	timeout -k 5 "$secs" "$@" > /tmp/step.out 2> /tmp/step.err
	local rc=$?
	echo "XRCVM STEP $name $rc" > "$out"
	section "$name.out" /tmp/step.out
	section "$name.err" /tmp/step.err
	echo "step $name: exit $rc after $((SECONDS - t0)) s" > /dev/console
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

# The softxrc test device (test/vm/softxrc): XRC through the real
# libibverbs, uverbs and ib_core. The image says why where it has none.
sxdbg=/sys/kernel/debug/softxrc/softxrc0
sxpar=/sys/module/softxrc/parameters
# An rdma run on softxrc0; each step adds --out and the workload.
sxrun=("$x" run --provider rdma --device softxrc0 --warmup 0s)
# The known answers' lifecycles run at SCHED_FIFO (xrcbench gives it to
# its measured threads only): a destroy that polls the module's cost for
# milliseconds returns to user space at a preemption point, and under TCG
# any other task runnable there (the harness's own Go runtime threads
# among them) took up to a tick of it, inside the timed unreg_last.
sxrt=(chrt -f 1 "${sxrun[@]}")
if [ -f /softxrc-skip ]; then
	step softxrc-skip 5 cat /softxrc-skip
else
	step softxrc-modprobe 60 modprobe softxrc noxrc_device=1
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	step softxrc-ibv_devinfo 30 ibv_devinfo -v -d softxrc0
	step softxrc-sysfs 10 bash -c 'd=/sys/class/infiniband/softxrc0
for f in board_id fw_ver node_guid hca_type; do echo "$f $(cat "$d/$f")"; done
echo "numa_node $(cat "$d/device/numa_node" 2>/dev/null || echo absent)"
drv=$(readlink "$d/device/driver") && echo "driver ${drv##*/}" || echo "driver absent"'
	step softxrc-devices-json 60 "$x" devices --json
	# A process holding an XRC receive QP: xrcbench's netlink reader and
	# iproute2 must list the same QPs for softxrc0, the holder's among them.
	/usr/local/bin/softxrc-loop softxrc0 hold > /tmp/hold.out 2>&1 &
	sxhold=$!
	sleep 2
	step softxrc-hold 5 bash -c "cat /tmp/hold.out; kill -0 $sxhold"
	step softxrc-hold-devices-json 60 "$x" devices --json
	step softxrc-hold-rdma-res-qp 20 rdma -j resource show qp
	kill "$sxhold" 2>/dev/null
	wait "$sxhold" 2>/dev/null
	step softxrc-conform-json 600 "$x" conform --provider rdma --device softxrc0 --json
	step softxrc-qps-conform 5 cat "$sxdbg/qps"
	# The floor: reg/unreg pairs with every cost at zero, by xrcbench and
	# by a plain C loop of the same calls, three rounds in turns (the
	# judge takes each side's fastest round).
	for r in "" -2 -3; do
		step softxrc-steady$r 300 "${sxrun[@]}" --out /tmp/sx-steady$r --workload steady --procs 1 --threads 1 --qps 1 --duration 3s --repetitions 1
		step softxrc-steady$r-result 5 cat /tmp/sx-steady$r/result.json
		step softxrc-loop$r 300 /usr/local/bin/softxrc-loop softxrc0 20000
	done
	# The harness's own per-op work, in the same guest: under TCG every
	# instruction is emulated, so what xrcbench does around a call costs
	# microseconds here that it does not on hardware.
	step softxrc-null 120 "$x" run --provider null --workload steady --procs 1 --threads 1 --qps 1 --duration 2s --warmup 0s --repetitions 1 --quiet --out /tmp/sx-null
	step softxrc-null-result 5 cat /tmp/sx-null/result.json
	# What the kernel answers a second process's unreg of a QP it never
	# opened (the upstream API gives it no handle: a raw DESTROY_QP).
	step softxrc-foreign-unreg 60 /usr/local/bin/softxrc-loop softxrc0 foreign
	# Known answers: the last unreg pays DESTROY_QP's injected cost.
	step softxrc-lifecycle-zero 300 "${sxrt[@]}" --out /tmp/sx-lc0 --workload lifecycle --procs 2 --threads 1 --qp-state init --qps 4 --iterations 50 --repetitions 1
	step softxrc-lifecycle-zero-result 5 cat /tmp/sx-lc0/result.json
	echo 4000 > "$sxpar/destroy_us"
	step softxrc-lifecycle-cost 300 "${sxrt[@]}" --out /tmp/sx-lc1 --workload lifecycle --procs 2 --threads 1 --qp-state init --qps 4 --iterations 50 --repetitions 1
	step softxrc-lifecycle-cost-result 5 cat /tmp/sx-lc1/result.json
	echo 0 > "$sxpar/destroy_us"
	# RTR through the core's transition table; destroying from RTR pays
	# the module's 2RST_QP cost, from INIT not.
	echo 3000 > "$sxpar/destroy_from_rtr_us"
	step softxrc-lifecycle-init 300 "${sxrt[@]}" --out /tmp/sx-init --workload lifecycle --procs 2 --threads 1 --qp-state init --qps 4 --iterations 50 --repetitions 1
	step softxrc-lifecycle-init-result 5 cat /tmp/sx-init/result.json
	for c in "$sxdbg"/commands/*/average; do echo 0 > "$c"; done
	step softxrc-lifecycle-rtr 300 "${sxrt[@]}" --out /tmp/sx-rtr --workload lifecycle --procs 2 --threads 1 --qp-state rtr --qps 4 --iterations 50 --repetitions 1
	step softxrc-lifecycle-rtr-result 5 cat /tmp/sx-rtr/result.json
	step softxrc-commands-rtr 10 bash -c 'for d in '"$sxdbg"'/commands/*; do echo "${d##*/} $(cat "$d/n") $(cat "$d/average")"; done'
	echo 0 > "$sxpar/destroy_from_rtr_us"
	# A storm whose ranks exit holding their QPs: teardown timed through
	# RDMA netlink.
	sed -e 's/^  teardown: unreg$/  teardown: exit/' -e 's/^  nodes: 9$/  nodes: 5/' /payload/storm.yaml > /tmp/storm-exit.yaml
	step softxrc-storm 300 "$x" run --provider rdma --device softxrc0 --out /tmp/sx-storm --workload /tmp/storm-exit.yaml --procs 2 --threads 2 --repetitions 2
	step softxrc-storm-result 5 cat /tmp/sx-storm/result.json
	step softxrc-qps-storm 5 cat "$sxdbg/qps"
	# Today's callers of ibv_open_qp, wired as they wire it, on the real
	# kernel: GASNet-EX's creators elected by compare-and-swap (the losers
	# open, and modify the shared QP to RTR racing the winner) and
	# libfabric's verbs+rxm (one creator per remote process, the rest open).
	step softxrc-gasnet 300 "$x" run --provider rdma --device softxrc0 --out /tmp/sx-gasnet --workload gasnet --nodes 5 --procs 3 --threads 1 --qp-state rtr --repetitions 2
	step softxrc-gasnet-result 5 cat /tmp/sx-gasnet/result.json
	step softxrc-ofi-rxm 300 "$x" run --provider rdma --device softxrc0 --out /tmp/sx-ofi-rxm --workload ofi-rxm --nodes 5 --procs 3 --threads 1 --qp-state rtr --repetitions 2
	step softxrc-ofi-rxm-result 5 cat /tmp/sx-ofi-rxm/result.json
	step softxrc-qps-users 5 cat "$sxdbg/qps"
	# A worker killed with SIGKILL mid-lifecycle: its file is closed by
	# the kernel, which must leave no QP behind.
	step softxrc-kill 180 bash -c '"$0" run --provider rdma --device softxrc0 --warmup 0s --out /tmp/sx-kill \
	--workload lifecycle --procs 2 --threads 1 --qp-state rtr --duration 20s >/tmp/kill.out 2>&1 &
run=$!
w=
for i in $(seq 150); do
	sleep 0.2
	w=$(cat /proc/$run/task/*/children 2>/dev/null | tr " " "\n" | grep -m1 .)
	[ -n "$w" ] && [ "$(cat "$1/qps")" -gt 0 ] && break
done
[ -n "$w" ] || { echo "no worker of $run appeared"; kill $run; exit 1; }
sleep 1
echo "live QPs before the kill $(cat "$1/qps")"
kill -KILL "$w" && echo "killed worker $w"
wait "$run"; echo "xrcbench exited $?"
sleep 1
echo "live QPs after $(cat "$1/qps")"
tail -n 3 /tmp/kill.out' "$x" "$sxdbg"
	step softxrc-rdma-res-qp 20 rdma -j resource show qp
	step softxrc-qps-end 5 cat "$sxdbg/qps"
	step softxrc-rmmod 60 rmmod softxrc
fi
echo "XRCVM DONE" > "$out"
