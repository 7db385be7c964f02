#!/bin/bash
# A bad plugstack.conf line that reaches the nodes after a job was accepted
# (the site edits the file while jobs wait) is the configuration's fault,
# not the node's: the node is never drained for it. From Slurm 25.05 on the
# plugin says so (slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE): the
# job fails, is not requeued, its script never runs. Before 25.05 Slurm
# would drain the node for that error, so there the plugin logs it and the
# job runs unsorted.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
need sbatch scontrol sinfo
need_file "$ZS_PLUGIN" "SPANK plugin"

work=$(mktemp -d /tmp/zs-t10.XXXXXX)
chmod 755 "$work"
ZS_PLUGSTACK_ARGS="sorter=none statedir=$work" cluster_start_or_bail
trap 'cluster_stop; rm -rf "$work"' EXIT
release=$(cluster_slurm_release)
diag "Slurm release of the daemons: $release"

# The job is accepted with a correct line and held; then the line goes bad.
job=$(sbatch --parsable --hold -o "$work/out" --wrap 'srun true; echo script-ran' 2>&1)
like "$job" '^[0-9]+$' "sbatch accepts the held job with a correct plugstack.conf" ||
	{ done_testing; exit 1; }
cluster_plugstack "sorter=none statedir=$work colour=blue"
ok "the held job is released under a bad plugstack.conf line" scontrol release "$job"

# job_state: the job's state, empty once slurmctld has forgotten it.
job_state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
states=
seen_end() {
	local s
	s=$(job_state "$job")
	[ -n "$s" ] && [[ " $states " != *" $s "* ]] && states="$states $s"
	[ -z "$s" ] || [[ $s =~ ^(FAILED|COMPLETED|NODE_FAIL|CANCELLED|TIMEOUT|BOOT_FAIL)$ ]] ||
		[[ $s == PENDING && " $states " == *" RUNNING "* ]] ||
		[[ $s == PENDING && $(scontrol show job -o "$job" 2>/dev/null) == *Restarts=[1-9]* ]]
}
wait_for 60 seen_end
diag "job $job went through:$states"
info=$(scontrol show job -o "$job" 2>/dev/null)
slurmd_log=$(cat "$(cluster_slurmd_log "$ZS_NODE")" 2>/dev/null)

like "$slurmd_log" "zonesort: plugstack.conf: unknown argument 'colour=blue'" \
	"the node's log names the bad argument"
if [ "${release:-0}" -ge 2505 ]; then
	like "$states" 'FAILED' "the job fails"
	unlike "$info" 'Restarts=[1-9]' "the job is not requeued"
	is "$(cat "$work/out" 2>/dev/null | grep -c script-ran)" 0 "the job's script never ran"
else
	like "$states" 'COMPLETED' "the job completes (Slurm before 25.05)"
	is "$(cat "$work/out" 2>/dev/null | grep -c script-ran)" 1 "the job's script ran, unsorted"
fi
cluster_wait_job_gone "$job" 30
is "$(cluster_node_state)" idle "the node stays idle (not drained)"
is "$(sinfo -h -R -o '%E' 2>/dev/null)" "" "no node has a drain reason"

# A correct line again: the next job runs on the same node.
cluster_plugstack "sorter=none statedir=$work"
is "$(timeout 60 srun -N1 -w "$ZS_NODE" echo fine 2>&1)" fine "with a correct line, the next job runs on that node"
done_testing
