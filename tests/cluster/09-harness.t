#!/bin/bash
# The test cluster itself (testbed/cluster.sh): N nodes, each slurmd with
# its own host name and /run; and a cluster that fails to come up is torn
# down like one that did: no munged, slurmctld, slurmd or job process is
# left running, whether slurmctld died at start or the nodes were simply not
# idle in time.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
need srun sinfo scontrol pgrep unshare

work=$(mktemp -d /tmp/zs-t09.XXXXXX)
chmod 755 "$work"
trap 'cluster_stop; rm -rf "$work"' EXIT

# alive PID...: the pids of those still running (zombies are gone).
alive() { local p; for p in "$@"; do _pid_gone "$p" || printf '%s ' "$p"; done; }
# left_over DIR: processes whose command line names the cluster directory.
left_over() { pgrep -f "$1/" | tr '\n' ' '; }

# --- four nodes: names, host names, /run, teardown with a job still running --------
ZS_NODES=4
ok "a four-node cluster starts" cluster_start
is "$(sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')" "zsnode1 idle zsnode2 idle zsnode3 idle zsnode4 idle " \
	"sinfo shows four idle nodes"
is "$(srun -N4 hostname | sort | tr '\n' ' ')" "zsnode1 zsnode2 zsnode3 zsnode4 " \
	"srun -N4 hostname: each task sees its node's host name"
out=$(srun -N4 sh -c 'echo "$(hostname) $(cat /run/slurmd.pid)"; touch /run/zs-t09-mark' | sort)
pids=$(cluster_daemon_pids)
is "$(echo "$out" | awk '{ print $2 }' | tr '\n' ' ')" "$(echo $pids | cut -d' ' -f3-) " \
	"each node's /run holds its own slurmd's pid file"
for node in "${ZS_NODE_NAMES[@]}"; do
	test -e "$(cluster_node_run "$node")/zs-t09-mark" || missing="${missing:-}$node "
done
is "${missing:-}" "" "a file written to /run by a job lands in that node's own directory"
ok "the host's /run is untouched" test ! -e /run/zs-t09-mark
ok "the nodes listen on loopback only" sh -c "! grep -v '^#' '$SLURM_CONF' | grep -E 'Addr|Host' | grep -vq '127.0.0.1'"
printf '#!/bin/sh\nexec sleep 300\n' > "$work/linger"
chmod 755 "$work/linger"
srun -N4 "$work/linger" > /dev/null 2>&1 &
srun_pid=$!
lingering() { [ "$(pgrep -f "sleep 300" | while read -r p; do cluster_node_of_pid "$p"; done | wc -l)" -eq 4 ]; }
ok "a job runs on the four nodes" wait_for 20 lingering
tasks=$(pgrep -f "sleep 300" | while read -r p; do cluster_node_of_pid "$p" >/dev/null && printf '%s ' "$p"; done)
dir=$ZS_CLUSTER
ZS_KEEP_CLUSTER=1 cluster_stop > /dev/null
is "$(alive $pids)" "" "stopped: munged, slurmctld and the four slurmd have exited"
is "$(alive $tasks)" "" "and the job's tasks in the node namespaces were ended"
# srun itself is the test's own process, outside the cluster: it waits for
# a controller that is gone, so the test ends it.
kill -9 "$srun_pid" 2>/dev/null
wait "$srun_pid" 2>/dev/null
is "$(left_over "$dir")" "" "no process names the cluster's directory"
rm -rf "$dir"

# --- slurmctld dies at start (a bad slurm.conf line) -------------------------------------
ZS_NODES=1
t0=$(date +%s)
ZS_CLUSTER_TIMEOUT=20 cluster_start "NoSuchSlurmKey=1" > "$work/out" 2>&1
rc=$?
cmp_ok "$rc" -ne 0 "a cluster whose slurmctld refuses its configuration fails to start"
like "$(cat "$work/out")" "cluster /tmp/zs-cluster\.[A-Za-z0-9]+ did not come up within 20 s" "and says so"
dir=$(sed -n 's|^# cluster \(/tmp/zs-cluster\.[A-Za-z0-9]*\) did not.*|\1|p' "$work/out")
is "$ZS_CLUSTER" "" "it is stopped before cluster_start returns"
like "$dir" "^/tmp/zs-cluster\." "the failure names the cluster's files ($dir)"
is "$(left_over "${dir:-/no-cluster-named}")" "" "no munged, slurmctld or slurmd of it is left"
num_ok "it gives up as soon as slurmctld has exited ($(($(date +%s) - t0)) s)" "$(date +%s) - $t0 < 15"

# --- four nodes that are not idle in time: everything was running ------------------------
# Each slurmd starts 2 s late, so no node can be idle when the time limit
# ends (Slurm 24.11 registers four nodes within the first look otherwise);
# by the time the cluster is stopped they are running.
printf '#!/bin/sh\nsleep 2\nexec "$@"\n' > "$work/late"
chmod 755 "$work/late"
ZS_NODES=4
ZS_SLURMD_WRAP=$work/late ZS_CLUSTER_TIMEOUT=0 cluster_start > "$work/out" 2>&1
rc=$?
cmp_ok "$rc" -ne 0 "a four-node cluster not idle within its time limit fails to start"
dir=$(sed -n 's|^# cluster \(/tmp/zs-cluster\.[A-Za-z0-9]*\) did not.*|\1|p' "$work/out")
like "$dir" "^/tmp/zs-cluster\." "the failure names the cluster's files"
is "$(left_over "${dir:-/no-cluster-named}")" "" "no munged, slurmctld or slurmd of it is left"
is "$ZS_CLUSTER" "" "it is stopped"
done_testing
