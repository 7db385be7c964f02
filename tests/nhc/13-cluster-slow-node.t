#!/bin/bash
# One four-node job on a real cluster of four slurmd nodes (each in its own
# mount and UTS namespace, with its own /run and options file), the runner
# as every node's Epilog, the real stream-triad probe. One node gets a limit
# it cannot meet and asks for a reboot: exactly that node is drained with
# the check's reason and rebooted, the other three pass and return to idle.
# Only the reboot is a stand-in: RebootProgram runs in the node's namespace
# and records the host name it sees.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
ZS_NODES=4
. "$(dirname "$0")/../../testbed/cluster.sh"
need slurmctld slurmd munged scontrol sinfo sbatch jq timeout flock nsenter
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"
need_file "$ZS_STREAM_TRIAD" "the real stream-triad probe (build it: scripts/build)"

. "$(dirname "$0")/cluster-fixture.sh"
nhc_cluster_fixture zs-nhc-slow
cat > "$T/reboot-program" <<REBOOT
#!/bin/sh
echo "\$(hostname)" >> $T/reboot.calls
REBOOT
export ZS_HEALTH_CHECK_CONF=/run/zs-hc.conf
# node_conf NODE OPTIONS...: NODE's options; its baseline (and the probe's
# lock beside it) in its own /run, as on separate machines.
node_conf() {
	local node=$1; shift
	mkdir -p "$ZS_CLUSTER/nodes/$node/run/zs-hc-state"
	printf '%s\n' "-P $ZS_STREAM_TRIAD -H $HIST -b /run/zs-hc-state/ -l $T/runner.log -s 256MiB -T 30 -k 0 -L 60" "$*" \
		> "$ZS_CLUSTER/nodes/$node/run/zs-hc.conf"
}
hist_of_job_node() { [ -f "$HIST" ] && jq -c --arg j "$1" --arg n "$2" 'select(.job == $j and .node == $n)' "$HIST" | tail -1; }
all_checked() {
	local n
	for n in "${ZS_NODE_NAMES[@]}"; do
		[ -n "$(hist_of_job_node "$1" "$n")" ] || return 1
	done
}

ok "a cluster of four nodes starts with the runner as Epilog" cluster_start \
	"Epilog=$ZS_HEALTH_CHECK" "RebootProgram=$T/reboot-program" "ResumeTimeout=60"
for n in zsnode1 zsnode2 zsnode4; do
	node_conf "$n" -m 1GB/s -r yes
done
node_conf zsnode3 -m 100000GB/s -r yes

job=$(sbatch --parsable -N4 -o /dev/null -e /dev/null --wrap 'srun -N4 true')
ok "a four-node job is submitted ($job)" test -n "$job"
ok "every node's Epilog checked it" wait_for 120 all_checked "$job"
verdicts=
for n in "${ZS_NODE_NAMES[@]}"; do
	verdicts="$verdicts$n=$(jq -r .verdict <<< "$(hist_of_job_node "$job" "$n")") "
done
is "$verdicts" "zsnode1=pass zsnode2=pass zsnode3=fail zsnode4=pass " "only zsnode3 fails its check"
is "$(jq -r .reboot <<< "$(hist_of_job_node "$job" zsnode3)")" requested "zsnode3 asked for a reboot"
ok "RebootProgram ran" wait_for 60 test -s "$T/reboot.calls"
sleep 2
is "$(sort "$T/reboot.calls" | tr '\n' ' ')" "zsnode3 " "it ran once, on zsnode3 alone"
like "$(scontrol show node zsnode3 | grep -o 'State=[^ ]*')" "DRAIN" "zsnode3 is drained"
like "$(sinfo -h -N -n zsnode3 -o '%E')" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s" \
	"with the check's reason"
others_idle() { [ "$(sinfo -h -N -n zsnode1,zsnode2,zsnode4 -o '%N %T' | sort | tr '\n' ' ')" = "zsnode1 idle zsnode2 idle zsnode4 idle " ]; }
ok "the other three return to idle" wait_for 60 others_idle
is "$(sinfo -h -N -n zsnode1,zsnode2,zsnode4 -o '%E' | sort -u)" none "with no reason set"
done_testing
