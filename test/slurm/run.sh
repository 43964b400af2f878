#!/usr/bin/env bash
# make slurmtest: a fleet run through a real Slurm, on this one machine.
#
# Builds a three-node Slurm cluster: each node a network and UTS namespace
# made here (its own host name, a veth into a bridge on a private test
# subnet), running its own slurmd; slurmctld and munged run in the root
# namespace. Then
#
#   srun -N 3 --ntasks-per-node=1 xrcbench run --fleet --fleet-sync ...
#
# on the sim provider into a shared folder, one node made slower: Slurm's
# TaskProlog, which slurmd runs on each node, exports XRCBENCH_NODE_SIM_COST
# on that node only, and the task's wrapper (node-run.sh) turns it into
# --sim-cost. Finally `xrcbench report --fleet --fail-on-outlier` must exit
# 1 and flag exactly that node, and every node's result must be complete.
#
# Everything (namespaces, bridge, daemons, files) is torn down on exit,
# failure, ^C, SIGTERM and SIGHUP included; what a SIGKILL left behind is
# torn down by the next run, before it starts (see records below). Skips, exit 0 with the reason, where it cannot run:
# not root, no unshare/ip, no Slurm or munge installed
# (apt-get install slurmctld slurmd slurm-client munge).
#
# Usage: test/slurm/run.sh [path/to/xrcbench]   (default bin/xrcbench)
# SLURMTEST_KEEP=1 keeps the work folder (logs, configs, the fleet's runs).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-bin/xrcbench}")
skip() { echo "slurmtest: SKIP: $*"; exit 0; }
fail() { echo "slurmtest: FAIL: $*" >&2; exit 1; }
say() { echo "slurmtest: $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, slurmd)"
for c in unshare nsenter ip slurmctld slurmd srun sinfo scontrol munged; do
	command -v "$c" >/dev/null || skip "no $c here (apt-get install slurmctld slurmd slurm-client munge iproute2 util-linux)"
done
[ -x "$bin" ] || fail "no xrcbench binary at $bin (make build)"

# Every instance records what it makes (pids with their start times,
# namespaces, links, its work folder) in a file of its own here, before
# making each: its teardown undoes exactly that, and an instance that
# could not tear down (SIGKILL, a crash of the machine's shell) is undone
# by the next one. /run is emptied at boot, as the namespaces are.
records=/run/xrcbench-slurmtest
mkdir -p -m 700 "$records"

# starttime PID: the process's start time in clock ticks since boot
# (/proc/PID/stat, field 22), which tells it from a later process that
# reuses its pid. Nothing when there is no such process.
starttime() {
	local s f
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) } # past the command name, which may hold spaces
	read -r -a f <<<"$s"
	echo "${f[19]}"
}
same() { [ -n "$2" ] && [ "$(starttime "$1")" = "$2" ]; }

# undo RECORD: ends the recorded processes that are still those processes,
# and every process in the recorded namespaces (tasks, slurmstepd), then
# removes the namespaces, links and work folder, then the record.
undo() {
	local - # set +e for this function only: much of what it undoes may be gone
	set +e
	local rec=$1 kind a b ns=() links=() procs=() pidfiles=() dir="" sig p
	while read -r kind a b; do
		case $kind in
		netns) ns+=("$a") ;;
		link) links+=("$a") ;;
		pid) same "$a" "$b" && procs+=("$a $b") ;;
		pidfile) pidfiles+=("$a") ;;
		work) dir=$a ;;
		esac
	done <"$rec"
	# A daemon that forks away (munged) is known by its pid file, in case
	# the run was killed before it recorded the pid: it counts if its
	# command line names this run's own work folder.
	for f in "${pidfiles[@]}"; do
		p=$(cat "$f" 2>/dev/null) && [ -n "$dir" ] &&
			tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$dir/" &&
			procs+=("$p $(starttime "$p")")
	done
	# And what they started, still theirs (timeout's srun, srun's helper):
	# a process whose parent was killed first would be out of reach.
	local tree=("${procs[@]}") i=0 c
	while [ "$i" -lt "${#tree[@]}" ]; do
		set -- ${tree[$i]}
		for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
			tree+=("$c $(starttime "$c")")
		done
		i=$((i + 1))
	done
	procs=("${tree[@]}")
	for sig in TERM KILL; do
		for n in "${ns[@]}"; do
			ip netns pids "$n" 2>/dev/null | xargs -r kill -"$sig" 2>/dev/null
		done
		for p in "${procs[@]}"; do
			set -- $p
			same "$1" "$2" && kill -"$sig" "$1" 2>/dev/null
		done
		[ "$sig" = TERM ] && { [ ${#ns[@]} -gt 0 ] || [ ${#procs[@]} -gt 0 ]; } && sleep 1
	done
	for p in "${procs[@]}"; do set -- $p; wait "$1" 2>/dev/null; done
	for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null; done
	for l in "${links[@]}"; do ip link del "$l" 2>/dev/null; done
	case $dir in
	/tmp/xrcbench-slurmtest.*) [ -n "${SLURMTEST_KEEP:-}" ] && [ "$rec" = "${record:-}" ] || rm -rf "$dir" ;;
	esac
	rm -f "$rec"
}

# A stale instance: its record's owner is gone (or its pid is another
# process's now). A live one is another run of this test: left alone.
for rec in "$records"/*.rec; do
	[ -f "$rec" ] || continue
	read -r kind owner since <"$rec" || true
	[ "$kind" = owner ] && same "$owner" "$since" && continue
	say "cleaning up after an earlier run (pid $owner) that could not: $(awk 'NR > 1 { n[$1]++ } END { for (k in n) { printf "%s%d %s", s, n[k], k; s = ", " } }' "$rec")"
	undo "$rec"
done

# Names of our own: several runs of this test (or other tests) may share
# the machine. Interface names stay under 15 characters.
tag=xs$(( $$ % 100000 ))
net=10.$(( 64 + $$ % 32 )).$(( $$ % 250 )).0
pfx=${net%.0}
record=$records/$tag.rec
echo "owner $$ $(starttime $$)" >"$record"
# note KIND NAME [ARG]: record what is about to be made.
note() { echo "$*" >>"$record"; }
# started PID: record a process just started.
started() { note pid "$1" "$(starttime "$1")"; }
nodes=(xn1 xn2 xn3)
slow=xn2

teardown() {
	local rc=$?
	set +e
	trap '' INT TERM HUP # a second ^C does not cut the teardown short
	if [ "$rc" != 0 ] && [ -n "${work:-}" ]; then
		for f in "$work"/log/*.log; do
			[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
		done >&2
	fi
	undo "$record"
	[ -n "${SLURMTEST_KEEP:-}" ] && [ -n "${work:-}" ] && say "kept $work"
	exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

work=$(mktemp -d /tmp/xrcbench-slurmtest.XXXXXX)
note work "$work"
# munged wants its socket's folders searchable by all; nothing in it is
# readable by others.
chmod 711 "$work"
mkdir -p "$work"/{log,run,spool,state,shared}

# The network: a bridge in the root namespace, one namespace per node.
note link "$tag-br"
ip link add "$tag-br" type bridge
ip addr add "$pfx.1/24" dev "$tag-br"
ip link set "$tag-br" up
i=10
for n in "${nodes[@]}"; do
	i=$((i + 1))
	note netns "$tag-$n"
	note link "$tag-$n"
	ip netns add "$tag-$n"
	ip link add "$tag-$n" type veth peer name eth0 netns "$tag-$n"
	ip link set "$tag-$n" master "$tag-br" up
	ip -n "$tag-$n" addr add "$pfx.$i/24" dev eth0
	ip -n "$tag-$n" link set eth0 up
	ip -n "$tag-$n" link set lo up
done

# munge, with a key and socket of its own.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
note pidfile "$work/run/munged.pid"
munged --force --key-file="$work/munge.key" --socket="$work/run/munge.sock" \
	--pid-file="$work/run/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/run/munge.seed"
for _ in $(seq 50); do [ -s "$work/run/munged.pid" ] && break; sleep 0.1; done
[ -s "$work/run/munged.pid" ] || fail "munged did not start"
started "$(cat "$work/run/munged.pid")"

# Per-node environment: slurmd runs the TaskProlog on each node before the
# task; what it prints as "export NAME=value" is in the task's environment.
cat >"$work/taskprolog.sh" <<EOF
#!/bin/sh
[ "\$SLURMD_NODENAME" = "$slow" ] && echo "export XRCBENCH_NODE_SIM_COST=reg=200us,unreg=200us"
exit 0
EOF
chmod 755 "$work/taskprolog.sh"

ctl=$(hostname -s)
port=$(( 20000 + $$ % 20000 ))
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=xrcbtest
SlurmctldHost=$ctl($pfx.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/run/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups here: processes tracked by parentage, no task confinement.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
TaskProlog=$work/taskprolog.sh
# The nodes are namespaces of one machine: take their CPUs and memory from
# here, not from the hardware each slurmd would see (all of it, thrice).
SlurmdParameters=config_overrides
NodeName=DEFAULT CPUs=1 RealMemory=64 State=UNKNOWN
NodeName=xn1 NodeHostname=xn1 NodeAddr=$pfx.11
NodeName=xn2 NodeHostname=xn2 NodeAddr=$pfx.12
NodeName=xn3 NodeHostname=xn3 NodeAddr=$pfx.13
PartitionName=fleet Nodes=xn[1-3] Default=YES MaxTime=10 State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
started $!
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping | grep -q UP || fail "slurmctld did not come up"

for n in "${nodes[@]}"; do
	mkdir -p "$work/spool/$n"
	# nsenter, unshare and sh each exec the next: $! is slurmd. (Not ip
	# netns exec: it mounts a fresh /sys, without the cgroup mounts
	# slurmd looks for.)
	nsenter --net="/run/netns/$tag-$n" unshare --uts sh -c 'hostname "$1"; exec slurmd -D -N "$1" -f "$2"' sh "$n" "$SLURM_CONF" \
		>"$work/log/slurmd-$n.out" 2>&1 &
	started $!
done
for _ in $(seq 150); do
	[ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = 3 ] && break
	sleep 0.2
done
[ "$(sinfo -h -N -t idle -o %N | sort -u | wc -l)" = 3 ] || { sinfo -N; fail "the three slurmd did not register"; }
say "cluster up: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"

# The task: xrcbench run, with the node's cost from its environment.
cat >"$work/node-run.sh" <<EOF
#!/bin/sh
exec "$bin" run "\$@" --sim-cost "\${XRCBENCH_NODE_SIM_COST:-reg=2us,unreg=2us}"
EOF
chmod 755 "$work/node-run.sh"

out="$work/shared/fleet"
say "srun -N 3: xrcbench run --fleet --fleet-sync (slow node: $slow)"
# In the background, waited for: a signal to this script is then handled
# at once, not when srun ends.
timeout 180 srun -N 3 --ntasks-per-node=1 --time=5 "$work/node-run.sh" \
	--fleet --fleet-sync=60s --provider sim --workload steady --qps 4 --duration 3s --warmup 200ms \
	--quiet --out "$out" &
srun_pid=$!
started "$srun_pid"
rc=0
wait "$srun_pid" || rc=$?
[ "$rc" = 0 ] || fail "srun exited $rc"

for n in "${nodes[@]}"; do
	grep -q '"status": "ok"' "$out/$n/result.json" || fail "$n: no complete result in $out/$n"
	grep -q "\"node\": \"$n\"" "$out/$n/result.json" || fail "$n: result.json does not name its node"
	grep -q '"start_at"' "$out/$n/result.json" || fail "$n: no common start recorded"
done

set +e
"$bin" report --fleet "$out" --fail-on-outlier >"$work/report.out" 2>&1
rc=$?
set -e
cat "$work/report.out"
[ "$rc" = 1 ] || fail "report --fleet --fail-on-outlier exited $rc, want 1 (a flagged node)"
grep -qx "xrcbench: fleet: flagged: $slow" "$work/report.out" || fail "want exactly $slow flagged"
[ -s "$out/fleet.html" ] && [ -s "$out/fleet.json" ] || fail "fleet.html or fleet.json missing"
say "PASS: report --fleet flags exactly $slow"
