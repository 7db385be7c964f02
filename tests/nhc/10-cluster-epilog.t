#!/bin/bash
# zonesort-health-check as the Epilog of a real single-node Slurm cluster
# (slurmctld + slurmd), measuring with the real stream-triad probe. Only
# the reboot itself is a stand-in: RebootProgram records that it was called
# and, as no reboot happens, ReturnToService=2 brings the node back after
# ResumeTimeout.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/cluster.sh"
need slurmctld slurmd munged scontrol sinfo squeue sbatch jq timeout flock
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"
need_file "$ZS_STREAM_TRIAD" "the real stream-triad probe (build it: scripts/build)"

# jq_true ARGS...: jq -e, quiet; true when the filter yields true.
jq_true() { jq -e "$@" >/dev/null; }

. "$(dirname "$0")/cluster-fixture.sh"
nhc_cluster_fixture zs-nhc-epilog

ok "cluster starts with the runner as Epilog" cluster_start \
	"Epilog=$ZS_HEALTH_CHECK" "RebootProgram=$T/reboot-program" "ResumeTimeout=5"

hist_of() { [ -f "$HIST" ] && jq -c --arg j "$1" 'select(.job == $j)' "$HIST" | tail -1; }
has_hist() { [ -n "$(hist_of "$1")" ]; }
submit() { sbatch --parsable -N1 -n1 -o /dev/null -e /dev/null "$@"; }
node_field() { scontrol show node "$ZS_NODE" | grep -o "$1=[^ ]*" | head -1; }
node_reason() { sinfo -h -N -n "$ZS_NODE" -o '%E' | head -1; }
reboots() { if [ -f "$T/reboot.calls" ]; then wc -l < "$T/reboot.calls"; else echo 0; fi; }

# --- a threshold below the measurement: the node stays in service --------------------
job=$(submit --wrap true)
ok "the Epilog ran the check for job $job" wait_for 60 has_hist "$job"
line=$(hist_of "$job")
is "$(jq -r .verdict <<< "$line")" pass "job $job: verdict pass"
is "$(jq -r .node <<< "$line")" "$ZS_NODE" "the node is named as Slurm names it"
num_ok "a real triad bandwidth was measured ($(jq -r .triad_best_gbs <<< "$line") GB/s)" \
	"$(jq -r .triad_best_gbs <<< "$line") > 1"
cluster_wait_job_gone "$job"
is "$(cluster_node_state)" idle "the node stays idle"
job2=$(submit --wrap true)
wait_for 60 has_hist "$job2"
is "$(jq -s 'map(select(.verdict == "pass")) | length' "$HIST")" 2 "the history grows by one line per job"
cluster_wait_job_gone "$job2"

# --- far above, reboot requested: drain at once, RebootProgram when idle, back --------
conf -m 100000GB/s -r yes
job=$(submit --wrap true)
ok "the Epilog ran the check for job $job" wait_for 60 has_hist "$job"
line=$(hist_of "$job")
is "$(jq -r '[.verdict, .reboot] | join(" ")' <<< "$line")" "fail requested" "verdict fail, reboot requested"
state=$(node_field State)
like "$state" "DRAIN" "the node drains at once ($state)"
like "$state$(sinfo -h -N -n "$ZS_NODE" -o '%t')" "REBOOT_(REQUESTED|ISSUED)|@|\\^" "with a reboot pending or issued"
reason=$(node_reason)
best=$(jq -r .triad_best_gbs <<< "$line")
like "$reason" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s \([0-9]+ threads, " \
	"the reason names the measured value and the limit"
like "$reason" "triad $(printf '%.1f' "$best" | sed 's/\.0$//; s/\./\\./') GB/s" "the value in the reason is the measured one ($best)"
ok "RebootProgram runs once the node is idle" wait_for 60 test -s "$T/reboot.calls"
is "$(reboots)" 1 "one reboot"
conf -m 1GB/s
nhc_node_back_after_reboot

# --- far above, no reboot: drained with the NHC reason ------------------------------------
conf -m 100000GB/s -r no
job=$(submit --wrap true)
ok "the Epilog ran the check for job $job" wait_for 60 has_hist "$job"
is "$(jq -r '[.verdict, .reboot // "none"] | join(" ")' <<< "$(hist_of "$job")")" "fail none" "verdict fail, no reboot asked"
cluster_wait_job_gone "$job"
ok "the node ends up drained" wait_for 30 _node_is drained
like "$(node_reason)" "^zonesort: check_hw_stream_triad:  triad [0-9.]+ GB/s < 100000 GB/s" "with the runner's zonesort: reason (not Slurm's 'Epilog error')"
is "$(reboots)" 1 "no reboot was asked"
unlike "$(cat "$ZS_CLUSTER/log/slurmd.log")" "epilog failed|error: \[job $job\] epilog" "the Epilog exited 0 although it drained"
scontrol update nodename="$ZS_NODE" state=resume
conf -m 1GB/s
ok "resumed by hand" wait_for 30 _node_is idle

# --- another job on the node while the check runs: skip, no drain -----------------------
long=$(submit --wrap 'sleep 60')
ok "a long job runs" wait_for 30 sh -c "squeue -h -j $long -o %T | grep -q RUNNING"
conf -m 100000GB/s -r yes
job=$(submit --wrap true)
ok "the Epilog of job $job ran" wait_for 60 has_hist "$job"
is "$(jq -r '[.verdict, .reason] | join(": ")' <<< "$(hist_of "$job")")" "skip: other jobs run on $ZS_NODE: $long" \
	"skipped because job $long runs on the node"
cluster_wait_job_gone "$job"
like "$(cluster_node_state)" "^(mixed|allocated)$" "the node is not drained"
is "$(reboots)" 1 "no reboot asked"
conf -m 1GB/s
scancel "$long"
ok "the long job's own Epilog measures once it ends" wait_for 60 has_hist "$long"
is "$(jq -r .verdict <<< "$(hist_of "$long")")" pass "and passes"
ok "the node is idle again" wait_for 30 _node_is idle

ok "every history line is a JSON object with a verdict" jq_true -s 'all(.[]; .verdict | IN("pass", "fail", "skip"))' "$HIST"

done_testing
