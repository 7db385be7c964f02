# A throwaway Slurm cluster on localhost: munged on its own socket,
# slurmctld, and ZS_NODES slurmd daemons (1 unless set), all state under one
# directory. Every slurmd runs in a mount and UTS namespace of its own: its
# host name is its node name and its /run is a directory of its own
# ($ZS_CLUSTER/nodes/NODE/run), so /run/zonesort, the spool and the pid
# file are per node, as on separate machines. Everything talks over
# 127.0.0.1 on free ports. One node starts in about a second, four in two.
#
#   cluster_start [slurm.conf lines...]   start; exports SLURM_CONF, ZS_CLUSTER;
#                                         loads the plugin with $ZS_PLUGSTACK_ARGS
#                                         when that variable is set, or makes
#                                         $ZS_PLUGSTACK_TEXT plugstack.conf (a
#                                         site's include line). A cluster
#                                         whose nodes are not all idle within
#                                         $ZS_CLUSTER_TIMEOUT s (60) is stopped
#                                         like any other before it returns 1
#   cluster_start_or_bail [lines...]      cluster_start, or fail the test file
#                                         ("cluster starts") and exit
#   cluster_plugstack [args...]           (re)write plugstack.conf with the plugin
#   cluster_no_plugstack                  an empty plugstack.conf
#   cluster_reconfigure                   scontrol reconfigure and wait
#   cluster_wait_idle [timeout]           wait until every node is idle
#   cluster_wait_job_gone JOBID [timeout] wait until the job and its epilogs ended
#   cluster_node_state [NODE]             a node's state, e.g. idle, drained
#                                         (NODE: the first node unless given)
#   cluster_node_run NODE                 the directory that is NODE's /run
#   cluster_slurmd_log NODE               NODE's slurmd log
#   cluster_node_of_pid PID               the node a process runs on, if any
#   cluster_on_node NODE CMD...           run CMD in NODE's mount and UTS
#                                         namespaces (its /run, its host name)
#   cluster_daemon_pids                   munged, slurmctld and slurmd pids
#   cluster_slurm_release                 the daemons' Slurm release, 2411 for 24.11
#   cluster_stop                          shut everything down, including what
#                                         is left of jobs in the node namespaces;
#                                         keeps the logs only when a test failed
#
# Node names: $ZS_NODE_NAMES (zsnode1 ... zsnodeN); $ZS_NODE is the first.
# Logs: $ZS_CLUSTER/log/{slurmctld,munged,slurmd-NODE}.log; a single node's
# log is also log/slurmd.log.

: "${ZS_NODES:=1}"

_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# _cluster_node_names N: zsnode1 ... zsnodeN.
_cluster_node_names() {
	local i
	ZS_NODE_NAMES=( )
	for ((i = 1; i <= $1; i++)); do ZS_NODE_NAMES+=( "zsnode$i" ); done
	ZS_NODE=${ZS_NODE_NAMES[0]}
}
_cluster_node_names "$ZS_NODES"

cluster_start() {
	local d cpus mem node i
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null &&
		command -v unshare >/dev/null || {
		echo "# slurmctld, slurmd, munged or unshare missing: run scripts/install-deps" >&2
		return 1
	}
	case $ZS_NODES in
	[1-9]|[1-9][0-9]) ;;
	*) echo "# ZS_NODES='$ZS_NODES': expected a node count from 1 to 99" >&2; return 1 ;;
	esac
	_cluster_node_names "$ZS_NODES"
	d=$(mktemp -d /tmp/zs-cluster.XXXXXX)
	chmod 755 "$d"
	mkdir -p "$d"/{etc,log,state,munge,run}
	chmod 755 "$d"/{etc,log,munge,run}
	for node in "${ZS_NODE_NAMES[@]}"; do
		mkdir -p "$d/nodes/$node/run"
		chmod 755 "$d/nodes/$node/run"
	done
	export ZS_CLUSTER=$d
	export SLURM_CONF=$d/etc/slurm.conf
	ZS_CLUSTER_PIDS=
	ZS_CLUSTER_NS=
	ZS_CLUSTER_START=( )

	mungekey -c -k "$d/munge/munge.key" 2>/dev/null ||
		dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 600 "$d/munge/munge.key"
	# In the foreground of a background job, so that its pid is known.
	munged -F -f --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
		--pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge/seed" >> "$d/log/munged.out" 2>&1 &
	ZS_CLUSTER_PIDS=$!
	_cluster_note_start $!
	if ! wait_for 10 test -S "$d/munge/munge.socket"; then
		echo "# munged did not start; munged.log:" >&2
		tail -5 "$d/log/munged.log" "$d/log/munged.out" 2>/dev/null | sed 's/^/# /' >&2
		cluster_stop
		return 1
	fi

	cpus=$(nproc)
	mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
	mem=$((mem * 9 / 10))
	cat > "$SLURM_CONF" <<CONF
ClusterName=zstest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=/run/slurmd-spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
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
	# One line per node: each slurmd has a port of its own on 127.0.0.1.
	for node in "${ZS_NODE_NAMES[@]}"; do
		echo "NodeName=$node NodeHostname=$node NodeAddr=127.0.0.1 Port=$(_free_port) CPUs=$cpus RealMemory=$mem State=UNKNOWN"
	done >> "$SLURM_CONF"
	echo "PartitionName=debug Nodes=$(IFS=,; echo "${ZS_NODE_NAMES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$SLURM_CONF"
	# slurmd decides at start whether any plugin has a job prolog, so the
	# plugin line must be there before it starts.
	if [ -n "${ZS_PLUGSTACK_ARGS+set}" ]; then
		echo "required $ZS_PLUGIN $ZS_PLUGSTACK_ARGS" > "$d/etc/plugstack.conf"
	elif [ -n "${ZS_PLUGSTACK_TEXT+set}" ]; then
		printf '%s\n' "$ZS_PLUGSTACK_TEXT" > "$d/etc/plugstack.conf"
	else
		: > "$d/etc/plugstack.conf"
	fi
	_cluster_release_needs "$d/etc"
	chmod 644 "$d"/etc/*
	[ "$ZS_NODES" -eq 1 ] && ln -s "slurmd-$ZS_NODE.log" "$d/log/slurmd.log"

	slurmctld -D -c -f "$SLURM_CONF" >> "$d/log/slurmctld.out" 2>&1 &
	ZS_CLUSTER_PIDS="$ZS_CLUSTER_PIDS $!"
	_cluster_note_start $!
	for node in "${ZS_NODE_NAMES[@]}"; do
		# unshare and sh exec, so $! ends up being slurmd itself (or the
		# command in ZS_SLURMD_WRAP it runs under, such as a pid namespace).
		setsid unshare --mount --uts --propagation private sh -c '
			hostname "$1" && mount --bind "$2" /run && mkdir -p /run/slurmd-spool &&
			exec $4 slurmd -D -N "$1" -f "$3"' sh "$node" "$d/nodes/$node/run" "$SLURM_CONF" \
			"${ZS_SLURMD_WRAP:-}" \
			>> "$d/log/slurmd-$node.out" 2>&1 < /dev/null &
		ZS_CLUSTER_PIDS="$ZS_CLUSTER_PIDS $!"
		_cluster_note_start $!
	done
	if ! wait_for "${ZS_CLUSTER_TIMEOUT:-60}" _cluster_up_or_dead || ! _nodes_all_idle; then
		echo "# cluster $d did not come up within ${ZS_CLUSTER_TIMEOUT:-60} s; node states:" \
			"$(sinfo -h -N -o '%N=%T' 2>/dev/null | tr '\n' ' ')" >&2
		tail -v -n 3 "$d"/log/*.log "$d"/log/*.out 2>/dev/null | sed 's/^/# /' >&2
		cluster_stop
		return 1
	fi
	_cluster_record_namespaces
}

# cluster_slurm_release: the release of the Slurm whose daemons run the
# cluster as a number, 2211 for 22.11 (slurmd -V says "slurm 22.05.8" or
# "slurm-wlm 24.11.5").
cluster_slurm_release() {
	slurmd -V 2>/dev/null | sed -n 's/^[^ ]* \([0-9][0-9]*\)\.\([0-9][0-9]\)\..*/\1\2/p'
}

# _cluster_release_needs ETCDIR: what one Slurm release needs beyond the
# common slurm.conf to run on this machine.
_cluster_release_needs() {
	local release
	release=$(cluster_slurm_release)
	# Slurm 24.11's slurmd loads a cgroup plugin whatever the proctrack and
	# task plugins are, and stops when it finds no cgroup file system it
	# can use (a root with only /sys bound; v1 controllers that belong to
	# the host's services). The test nodes share the host's cgroups and
	# limit nothing, so they run without one. CgroupPlugin=disabled came
	# with 24.05; 22.05 needs no such line.
	if [ "${release:-0}" -ge 2405 ]; then
		echo "CgroupPlugin=disabled" > "$1/cgroup.conf"
	fi
}

# _cluster_up_or_dead: every node is idle, or a daemon has exited (then
# waiting longer is pointless).
_cluster_up_or_dead() {
	local pid
	for pid in $ZS_CLUSTER_PIDS; do
		_pid_gone "$pid" && return 0
	done
	_nodes_all_idle
}

cluster_start_or_bail() {
	cluster_start "$@" && return 0
	ok "cluster starts" false
	done_testing
	exit 1
}

# The mount namespace of each slurmd, once it is surely its own (not the
# test's, as before unshare ran): cluster_stop ends what is left in them.
# A descriptor held on each keeps the namespace alive, so its number
# cannot pass to another test's namespace before cluster_stop is done.
_cluster_record_namespaces() {
	local pid ns own fd
	own=$(readlink /proc/self/ns/mnt)
	for pid in $ZS_CLUSTER_PIDS; do
		_pid_gone "$pid" && continue
		ns=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null) || continue
		[ "$ns" != "$own" ] && [[ " $ZS_CLUSTER_NS " != *" $ns "* ]] || continue
		exec {fd}< "/proc/$pid/ns/mnt" || continue
		ZS_CLUSTER_NS="$ZS_CLUSTER_NS $ns"
		ZS_CLUSTER_NS_FDS="${ZS_CLUSTER_NS_FDS:-} $fd"
	done
}

cluster_daemon_pids() {
	echo $ZS_CLUSTER_PIDS
}

cluster_node_run() {
	echo "$ZS_CLUSTER/nodes/$1/run"
}

cluster_slurmd_log() {
	echo "$ZS_CLUSTER/log/slurmd-$1.log"
}

# _cluster_slurmd_pid NODE: the pid started for NODE's slurmd.
_cluster_slurmd_pid() {
	local node
	set -- "$1" $ZS_CLUSTER_PIDS
	local want=$1; shift 3	# the node, munged, slurmctld
	for node in "${ZS_NODE_NAMES[@]}"; do
		[ "$node" = "$want" ] && { echo "$1"; return 0; }
		shift
	done
	return 1
}

cluster_on_node() {
	local pid
	pid=$(_cluster_slurmd_pid "$1") || { echo "cluster_on_node: no node $1" >&2; return 1; }
	shift
	# Entering a mount namespace resets the root and working directories
	# to the namespace's own: keep slurmd's root (a chroot, in the cache-
	# node guest) and this directory.
	nsenter -t "$pid" -m -u -r -w"$PWD" -- "$@"
}

# cluster_node_of_pid PID: the node whose namespace the process runs in
# (its host name there), nothing for a process outside the cluster.
cluster_node_of_pid() {
	local uts node_uts pid node
	uts=$(readlink "/proc/$1/ns/uts" 2>/dev/null) || return 1
	set -- $ZS_CLUSTER_PIDS
	shift 2	# munged, slurmctld
	for node in "${ZS_NODE_NAMES[@]}"; do
		pid=$1; shift
		node_uts=$(readlink "/proc/$pid/ns/uts" 2>/dev/null) || continue
		if [ "$uts" = "$node_uts" ] && [ "$uts" != "$(readlink /proc/self/ns/uts)" ]; then
			echo "$node"
			return 0
		fi
	done
	return 1
}

# Read from the whole node list: Slurm 22.05's "sinfo -n NODE" was seen to
# report a node "mixed" for a while after its last job's Epilog ended,
# while the full list (and scontrol) already said idle.
cluster_node_state() {
	sinfo -h -N -o '%N %T' 2>/dev/null | awk -v n="${1:-$ZS_NODE}" '$1 == n { print $2; exit }'
}

_node_is() { [[ "$(cluster_node_state "${2:-}")" == $1 ]]; }

# _nodes_all_idle: every node of the cluster reports idle.
_nodes_all_idle() {
	local states
	states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | awk '$2 == "idle" { n++ } END { print n + 0 }')
	[ "$states" -eq "${#ZS_NODE_NAMES[@]}" ]
}

cluster_wait_idle() {
	wait_for "${1:-30}" _nodes_all_idle
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
	[ -z "$state" ] && ! sinfo -h -N -o '%T' 2>/dev/null | grep -q completing
}

cluster_wait_job_gone() {
	wait_for "${2:-60}" _job_gone "$1"
}

# _cluster_kill_namespaces: SIGKILL to every process left in the nodes'
# mount namespaces (slurmstepd, job tasks, helpers of an interrupted test).
_cluster_kill_namespaces() {
	local ns p
	[ -n "$ZS_CLUSTER_NS" ] || return 0
	for p in /proc/[0-9]*; do
		ns=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
		[[ " $ZS_CLUSTER_NS " == *" $ns "* ]] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	return 0
}

cluster_stop() {
	[ -n "${ZS_CLUSTER:-}" ] || return 0
	local pid munged_pid fd
	_cluster_record_namespaces
	# munged goes last: slurmctld and slurmd need it to shut down.
	munged_pid=${ZS_CLUSTER_PIDS%% *}
	scontrol shutdown >/dev/null 2>&1
	# The daemons' pids are kept in memory: a test's files may be gone.
	for pid in ${ZS_CLUSTER_PIDS#"$munged_pid"}; do
		wait_for 5 _pid_gone "$pid" || kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	_cluster_kill_namespaces
	for fd in ${ZS_CLUSTER_NS_FDS:-}; do
		exec {fd}<&-
	done
	ZS_CLUSTER_NS_FDS=
	if [ -n "$munged_pid" ]; then
		kill "$munged_pid" 2>/dev/null
		wait_for 5 _pid_gone "$munged_pid" || kill -9 "$munged_pid" 2>/dev/null
		wait "$munged_pid" 2>/dev/null
	fi
	# Keep the logs of a failed test, drop the rest.
	if [ "${tap_failed:-0}" -gt 0 ] || [ -n "${ZS_KEEP_CLUSTER:-}" ]; then
		echo "# cluster logs kept in $ZS_CLUSTER/log"
	else
		rm -rf "$ZS_CLUSTER"
	fi
	ZS_CLUSTER=
	ZS_CLUSTER_PIDS=
	ZS_CLUSTER_NS=
	ZS_CLUSTER_START=( )
}

# Start times (clock ticks since boot) of the daemons by pid. bash reaps a
# background job as soon as it exits, so its pid can name another process
# soon after, on a machine where other clusters start and stop (the release
# matrix runs several at once): such a pid is gone, never to be signalled.
declare -gA ZS_CLUSTER_START=( )

_pid_start_time() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	set -- ${stat##*) }
	echo "${20}"
}

_cluster_note_start() {
	ZS_CLUSTER_START[$1]=$(_pid_start_time "$1")
}

# _pid_gone PID: the process has exited (a zombie child counts as gone, so
# does a pid the cluster started that now names another process).
_pid_gone() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null)
	stat=${stat##*) }
	[ -z "$stat" ] || [ "${stat%% *}" = Z ] && return 0
	[ -n "${ZS_CLUSTER_START[$1]:-}" ] && [ "$(_pid_start_time "$1")" != "${ZS_CLUSTER_START[$1]}" ]
}
