# A throwaway single-node Slurm cluster on localhost: munged on its own
# socket, slurmctld and slurmd in the foreground of background jobs, all
# state under one directory. Starts in about a second.
#
#   cluster_start [slurm.conf lines...]   start; exports SLURM_CONF, ZS_CLUSTER;
#                                         loads the plugin with $ZS_PLUGSTACK_ARGS
#                                         when that variable is set
#   cluster_start_or_bail [lines...]      cluster_start, or fail the test file
#                                         ("cluster starts") and exit
#   cluster_plugstack [args...]           (re)write plugstack.conf with the plugin
#   cluster_no_plugstack                  an empty plugstack.conf
#   cluster_reconfigure                   scontrol reconfigure and wait
#   cluster_wait_idle [timeout]           wait until the node is idle
#   cluster_wait_job_gone JOBID [timeout] wait until the job and its epilog ended
#   cluster_node_state                    the node's state, e.g. IDLE, DRAINED
#   cluster_stop                          shut everything down; keeps the logs
#                                         only when a test failed
#
# Logs: $ZS_CLUSTER/log/{slurmctld,slurmd,munged}.log. Node name: $ZS_NODE.

ZS_NODE=zsnode

_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cluster_start() {
	local d cpus mem
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null || {
		echo "# slurmctld, slurmd or munged missing: run scripts/install-deps" >&2
		return 1
	}
	d=$(mktemp -d /tmp/zs-cluster.XXXXXX)
	chmod 755 "$d"
	mkdir -p "$d"/{etc,log,state,spool,munge,run}
	chmod 755 "$d"/{etc,log,munge,run}
	export ZS_CLUSTER=$d
	export SLURM_CONF=$d/etc/slurm.conf

	mungekey -c -k "$d/munge/munge.key" 2>/dev/null ||
		dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 600 "$d/munge/munge.key"
	munged -f --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge/seed" || return 1

	cpus=$(nproc)
	mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
	mem=$((mem * 9 / 10))
	cat > "$SLURM_CONF" <<CONF
ClusterName=zstest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(_free_port)
SlurmdPort=$(_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$d/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
CONF
	local line
	for line in "$@"; do
		echo "$line" >> "$SLURM_CONF"
	done
	cat >> "$SLURM_CONF" <<CONF
NodeName=$ZS_NODE NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$ZS_NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
	# slurmd decides at start whether any plugin has a job prolog, so the
	# plugin line must be there before it starts.
	if [ -n "${ZS_PLUGSTACK_ARGS+set}" ]; then
		echo "required $ZS_PLUGIN $ZS_PLUGSTACK_ARGS" > "$d/etc/plugstack.conf"
	else
		: > "$d/etc/plugstack.conf"
	fi
	chmod 644 "$d"/etc/*

	slurmctld -D -c -f "$SLURM_CONF" >> "$d/log/slurmctld.out" 2>&1 &
	ZS_CLUSTER_PIDS=$!
	# ZS_SLURMD_WRAP: a command slurmd runs under (a test's pid namespace).
	${ZS_SLURMD_WRAP:-} slurmd -D -N "$ZS_NODE" -f "$SLURM_CONF" >> "$d/log/slurmd.out" 2>&1 &
	ZS_CLUSTER_PIDS="$ZS_CLUSTER_PIDS $!"
	cluster_wait_idle 30 || {
		echo "# cluster did not come up; slurmctld.log tail:" >&2
		tail -5 "$d/log/slurmctld.log" "$d/log/slurmd.log" 2>/dev/null | sed 's/^/# /' >&2
		return 1
	}
}

cluster_start_or_bail() {
	cluster_start "$@" && return 0
	ok "cluster starts" false
	done_testing
	exit 1
}

cluster_node_state() {
	sinfo -h -N -n "$ZS_NODE" -o '%T' 2>/dev/null | head -1
}

_node_is() { [[ "$(cluster_node_state)" == $1 ]]; }

cluster_wait_idle() {
	wait_for "${1:-30}" _node_is idle
}

cluster_plugstack() {
	echo "required $ZS_PLUGIN $*" > "$ZS_CLUSTER/etc/plugstack.conf"
}

cluster_no_plugstack() {
	: > "$ZS_CLUSTER/etc/plugstack.conf"
}

cluster_reconfigure() {
	scontrol reconfigure && sleep 1 && cluster_wait_idle 30
}

_job_gone() {
	local state
	state=$(squeue -h -j "$1" -o '%T' 2>/dev/null)
	[ -z "$state" ] && ! _node_is '*completing*'
}

cluster_wait_job_gone() {
	wait_for "${2:-60}" _job_gone "$1"
}

cluster_stop() {
	[ -n "${ZS_CLUSTER:-}" ] || return 0
	scontrol shutdown >/dev/null 2>&1
	local pid
	# The daemons' pids are kept in memory: a test's files may be gone.
	for pid in ${ZS_CLUSTER_PIDS:-}; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	munged -s --socket="$ZS_CLUSTER/munge/munge.socket" >/dev/null 2>&1 ||
		kill "$(cat "$ZS_CLUSTER/run/munged.pid" 2>/dev/null)" 2>/dev/null
	# Keep the logs of a failed test, drop the rest.
	if [ "${tap_failed:-0}" -gt 0 ] || [ -n "${ZS_KEEP_CLUSTER:-}" ]; then
		echo "# cluster logs kept in $ZS_CLUSTER/log"
	else
		rm -rf "$ZS_CLUSTER"
	fi
	ZS_CLUSTER=
	ZS_CLUSTER_PIDS=
}
