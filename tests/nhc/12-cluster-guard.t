#!/bin/bash
# The health-check runner on a real cluster of four slurmd nodes (each in
# its own mount and UTS namespace, so each has its own /run and its own
# options file /run/zs-hc.conf), measuring with the real stream-triad
# probe. Two nodes get a limit they cannot meet. With the drain guard at
# one node (-G 1), the first is drained, the second is held: it stays in
# service and says so. sdiag counts what each check costs slurmctld: a
# passing check sends it nothing, a drain a few RPCs (the guard's two
# sinfo and the drain).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
ZS_NODES=4
. "$(dirname "$0")/../../testbed/cluster.sh"
need slurmctld slurmd munged scontrol sinfo sdiag sbatch jq timeout flock nsenter
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"
need_file "$ZS_STREAM_TRIAD" "the real stream-triad probe (build it: scripts/build)"

. "$(dirname "$0")/cluster-fixture.sh"
nhc_cluster_fixture zs-nhc-guard
# Every node reads /run/zs-hc.conf: its own file.
export ZS_HEALTH_CHECK_CONF=/run/zs-hc.conf
# node_conf NODE OPTIONS...: NODE's options; a small footprint keeps the
# probe short on this shared machine.
node_conf() {
	local node=$1; shift
	printf '%s\n' "-P $ZS_STREAM_TRIAD -H $HIST -b $T/state/ -l $T/runner.log -s 256MiB -T 20 -L 60" "$*" \
		> "$ZS_CLUSTER/nodes/$node/run/zs-hc.conf"
}

ok "a cluster of four nodes starts with the runner as Epilog" cluster_start "Epilog=$ZS_HEALTH_CHECK"
node_conf zsnode1 -m 100000GB/s -k 1 -w 1 -G 1 -r no
node_conf zsnode2 -m 100000GB/s -k 1 -w 1 -G 1 -r no
node_conf zsnode3 -m 1GB/s -G 1
node_conf zsnode4 -m 1GB/s -G 1

# rpcs: slurmctld's RPC counts by message type (sdiag), without sdiag's own
# request and slurmd's periodic registration, which no check sends.
rpcs() {
	sdiag | sed -n '/by message type/,/by user/p' |
		sed -n 's/^[[:space:]]*\([A-Z_]*\)[[:space:]]*([[:space:]]*[0-9]*) count:\([0-9]*\).*/\1 \2/p' |
		grep -v -e '^REQUEST_STATS_INFO ' -e '^MESSAGE_NODE_REGISTRATION_STATUS ' | sort
}
# rpcs_since FILE: "TYPE:N ..." sent since FILE was written, empty for none.
rpcs_since() {
	join -a 2 -e 0 -o 0,1.2,2.2 "$1" <(rpcs) | awk '$3 != $2 { printf "%s%s:%d", sep, $1, $3 - $2; sep = " " }'
}
# runner NODE: the runner in NODE's namespaces, as HealthCheckProgram
# starts it (SLURMD_NODENAME only; SLURM_CONF from the test).
runner() {
	cluster_on_node "$1" env SLURMD_NODENAME="$1" SLURM_CONF="$SLURM_CONF" "$ZS_HEALTH_CHECK"
}
hist_of_node() { [ -f "$HIST" ] && jq -c --arg n "$1" 'select(.node == $n)' "$HIST" | tail -1; }
node_reason() { sinfo -h -N -n "$1" -o '%E' | head -1; }

# --- a passing check costs slurmctld nothing -------------------------------------------
rpcs > "$T/rpcs.0"
runner zsnode3 2> "$T/pass.err"
is "$?" 0 "zsnode3: the runner passes"
is "$(jq -r .verdict <<< "$(hist_of_node zsnode3)")" pass "zsnode3: verdict pass"
is "$(rpcs_since "$T/rpcs.0")" "" "a passing check sent slurmctld no RPC"
pass_rpcs=$(rpcs_since "$T/rpcs.0")
diag "passing check: RPCs to slurmctld: ${pass_rpcs:-none}"

# --- the first slow node is drained (after one confirmation) -----------------------------
rpcs > "$T/rpcs.1"
runner zsnode1 2> "$T/drain.err"
is "$?" 0 "zsnode1: the runner drains and exits 0"
drain_rpcs=$(rpcs_since "$T/rpcs.1")
line=$(hist_of_node zsnode1)
is "$(jq -c '[.verdict, (.confirm_gbs | length), .guard_drained, .guard_nodes, .guard_limit]' <<< "$line")" \
	'["fail",1,0,4,1]' "zsnode1: fails, confirmed once, no node drained before it (of 4)"
is "$(cluster_node_state zsnode1)" drained "zsnode1 is drained"
like "$(node_reason zsnode1)" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s \([0-9]+ threads, 256 MiB\), confirmed: [0-9.]+ GB/s" \
	"with the check's reason, naming the confirmation"
diag "drain: RPCs to slurmctld: $drain_rpcs"
like "$drain_rpcs" "REQUEST_UPDATE_NODE:1" "the drain is one node update"
# The guard's two sinfo (node and partition information each) and the drain.
num_ok "and a few RPCs in all ($drain_rpcs)" "$(tr ' ' '\n' <<< "$drain_rpcs" | awk -F: '{ s += $2 } END { print s + 0 }') <= 6"

# --- the second slow node is held: a real job's Epilog ---------------------------------
job=$(sbatch --parsable -w zsnode2 -o /dev/null -e /dev/null --wrap true)
ok "job $job runs on zsnode2" test -n "$job"
has_held() { [ "$(jq -r .verdict <<< "$(hist_of_node zsnode2)")" = held ]; }
ok "zsnode2's Epilog records verdict held" wait_for 90 has_held
line=$(hist_of_node zsnode2)
is "$(jq -c '[.job, .guard_drained, .guard_limit]' <<< "$line")" "[\"$job\",1,1]" \
	"held because one node (zsnode1) is already drained for this check, limit 1"
like "$(jq -r .reason <<< "$line")" "held, not drained: 1 of 4 nodes \(cluster\) already drained or rebooting for check_hw_stream_triad, limit -G 1" \
	"the history says why"
cluster_wait_job_gone "$job"
# A "*" (slurmctld missed a ping of the loaded host) is no drain.
like "$(cluster_node_state zsnode2)" '^idle\*?$' "zsnode2 stays in service (idle, not drained, no 'Epilog error')"
like "$(cat "$T/runner.log")" "HELD, not drained: zsnode2" "the runner says so loudly"
is "$(cluster_node_state zsnode1)" drained "zsnode1 stays drained"

# --- the healthy nodes pass their Epilog and stay idle ----------------------------------
job=$(sbatch --parsable -w zsnode4 -o /dev/null -e /dev/null --wrap true)
has_pass4() { [ "$(jq -r .job <<< "$(hist_of_node zsnode4)")" = "$job" ]; }
ok "zsnode4's Epilog ran the check" wait_for 60 has_pass4
is "$(jq -r .verdict <<< "$(hist_of_node zsnode4)")" pass "zsnode4 passes"
cluster_wait_job_gone "$job"
is "$(sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')" "zsnode1 drained zsnode2 idle zsnode3 idle zsnode4 idle " \
	"only zsnode1 is drained"

done_testing
