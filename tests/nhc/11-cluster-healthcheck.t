#!/bin/bash
# zonesort-health-check as Slurm's HealthCheckProgram (every 5 s, any node
# state) on a real single-node cluster with the real stream-triad probe.
# slurmd gives it only SLURMD_NODENAME: it must set PATH, find slurm.conf
# (slurmd's -f) and its options file (slurmd's environment) by itself, and
# drain by itself (a failing HealthCheckProgram does not drain). The reboot
# is a stand-in: RebootProgram records its call; ReturnToService=2 brings
# the node back after ResumeTimeout.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/cluster.sh"
need slurmctld slurmd munged scontrol sinfo squeue sbatch jq timeout flock
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"
need_file "$ZS_STREAM_TRIAD" "the real stream-triad probe (build it: scripts/build)"

. "$(dirname "$0")/cluster-fixture.sh"
nhc_cluster_fixture zs-nhc-hc

lines() { if [ -f "$HIST" ]; then wc -l < "$HIST"; else echo 0; fi; }
# more_lines N VERDICT: a history line after the first N has VERDICT.
more_lines() { [ -f "$HIST" ] && tail -n +$(($1 + 1)) "$HIST" | jq -e -s --arg v "$2" 'any(.[]; .verdict == $v)' >/dev/null; }
last_with() { tail -n +$(($1 + 1)) "$HIST" | jq -c --arg v "$2" 'select(.verdict == $v)' | tail -1; }
node_reason() { sinfo -h -N -n "$ZS_NODE" -o '%E' | head -1; }
reboots() { if [ -f "$T/reboot.calls" ]; then wc -l < "$T/reboot.calls"; else echo 0; fi; }
submit() { sbatch --parsable -N1 -n1 -o /dev/null -e /dev/null "$@"; }

ok "cluster starts with the runner as HealthCheckProgram" cluster_start \
	"HealthCheckProgram=$ZS_HEALTH_CHECK" "HealthCheckInterval=5" "HealthCheckNodeState=ANY" \
	"RebootProgram=$T/reboot-program" "ResumeTimeout=5"

# --- healthy: periodic passes, the node stays idle -------------------------------------
n=$(lines)
ok "the health check passes periodically" wait_for 40 more_lines "$n" pass
line=$(last_with "$n" pass)
is "$(jq -r '[.node, .job // "none"] | join(" ")' <<< "$line")" "$ZS_NODE none" \
	"node name from SLURMD_NODENAME, no job"
num_ok "a real measurement ($(jq -r .triad_best_gbs <<< "$line") GB/s)" "$(jq -r .triad_best_gbs <<< "$line") > 1"
is "$(cluster_node_state)" idle "the node stays idle"

# --- a job running: the check skips and does not drain, even with a huge limit ----------
long=$(submit --wrap 'sleep 60')
ok "a job runs" wait_for 30 sh -c "squeue -h -j $long -o %T | grep -q RUNNING"
conf -m 100000GB/s -r no
n=$(lines)
ok "a health check runs while the job runs" wait_for 40 more_lines "$n" skip
is "$(jq -r .reason <<< "$(last_with "$n" skip)")" "other jobs run on $ZS_NODE: $long" \
	"it skips: squeue reached slurmctld with slurmd's slurm.conf (-f)"
like "$(cluster_node_state)" "^(mixed|allocated)$" "the node is not drained"
conf -m 1GB/s
scancel "$long"
cluster_wait_job_gone "$long"

# --- far above, no reboot: drains itself with the NHC reason ----------------------------
conf -m 100000GB/s -r no
ok "the node drains itself" wait_for 40 _node_is drained
like "$(node_reason)" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s \([0-9]+ threads, " \
	"with the runner's zonesort: reason naming value and limit"
is "$(reboots)" 0 "no reboot asked"
conf -m 1GB/s
n=$(lines)
wait_for 40 more_lines "$n" pass
is "$(cluster_node_state)" drained "a later pass does not resume the node (the administrator does)"
scontrol update nodename="$ZS_NODE" state=resume
ok "resumed by hand" wait_for 30 _node_is idle

# --- far above, reboot on: reboot asked, RebootProgram runs, the node returns -------------
conf -m 100000GB/s -r yes
ok "RebootProgram runs" wait_for 60 test -s "$T/reboot.calls"
like "$(scontrol show node "$ZS_NODE" | grep -o 'State=[^ ]*' | head -1)" "DRAIN" "the node is drained for the reboot"
like "$(node_reason)" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s" "the reboot reason is the check's"
conf -m 1GB/s
nhc_node_back_after_reboot
is "$(reboots)" 1 "one reboot"
n=$(lines)
ok "and passes its next health check" wait_for 40 more_lines "$n" pass

done_testing
