#!/bin/bash
# How many sorts each --zonesort value and site default causes per node:
# one in the job prolog, one before each step unless the node was sorted
# less than min_period ago, none for off; one summary line per node.
# Runs on $ZS_NODES nodes (4N-02-counts.t: four), every job on all of them.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t02 min_period=1

# run_job SITE-ARGS OPTION... -> sets JOB and SORTS (the count of each node)
run_job() {
	local site=$1; shift
	cluster_plugstack "$SC_POLICY min_period=1 $site"
	sortcount_reset
	JOB=$(srun -N "$ZS_NODES" "$@" sh -c 'echo $SLURM_JOB_ID' | sort -u)
	cluster_wait_job_gone "$JOB" 30
	SORTS=$(sortcount_each)
}

for site in "default=on" "default=off" "default=30"; do
	want_default=1
	[ "$site" = default=off ] && want_default=0
	run_job "$site" --zonesort=off
	is "$SORTS" "$(each 0)" "$site, --zonesort=off: no sort on any node"
	summaries_like "$JOB" prolog 'zonesort=off, no sort' "$site, off: prolog says off"
	summaries_like "$JOB" 'step 0' 'zonesort=off, no sort' "$site, off: step says off"

	run_job "$site" --zonesort=on
	is "$SORTS" "$(each 1)" "$site, --zonesort=on: one sort per node (prolog; the step start finds it recent)"
	summaries_like "$JOB" prolog 'zonesort=on, 1 sort, 0 skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel' \
		"$site, on: prolog summary"
	summaries_like "$JOB" 'step 0' 'zonesort=on, 0 sorts, 1 skipped \(recent\)' "$site, on: step summary"

	run_job "$site" --zonesort=30
	is "$SORTS" "$(each 1)" "$site, --zonesort=30 on a short step: one sort per node"
	summaries_like "$JOB" 'step 0' 'zonesort=every 30 s, 0 sorts, 1 skipped' "$site, 30: step summary"

	run_job "$site"
	is "$SORTS" "$(each "$want_default")" "$site, no option: $want_default sort(s) per node"
done

# A second step of the same job more than min_period later sorts again.
cluster_plugstack "$SC_POLICY min_period=1"
sortcount_reset
JOB=$(sbatch --parsable -N "$ZS_NODES" -o /dev/null --zonesort=on --wrap 'srun true; sleep 1.5; srun true')
cluster_wait_job_gone "$JOB" 60
is "$(sortcount_each)" "$(each 2)" "sbatch: prolog sort, batch and first step recent, second step sorts again"
summaries_like "$JOB" 'step 1' 'zonesort=on, 1 sort, 0 skipped' "second step summary: 1 sort"
# The batch step runs on the job's first node only.
like "$(summary "$JOB" 'batch step')" 'zonesort=on, 0 sorts, 1 skipped' "batch step summary: recent"

# The real compaction backend of this machine's kernel, asked for on a node
# without a memory-side cache (nocache=compact; 24-nocache.t: by default
# such a node is left alone).
cluster_plugstack "sorter=compact nocache=compact statedir=$SC_STATE nodes=0 min_period=1 helper=$ZS_ZONESORT"
sortcount_reset
scanned_before=$(awk '/^compact_migrate_scanned/ { print $2 }' /proc/vmstat)
JOB=$(srun -N "$ZS_NODES" --zonesort=on sh -c 'echo $SLURM_JOB_ID' | sort -u)
cluster_wait_job_gone "$JOB" 30
scanned_after=$(awk '/^compact_migrate_scanned/ { print $2 }' /proc/vmstat)
summaries_like "$JOB" prolog 'zonesort=on, 1 sort, 0 skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend compact' \
	"compaction backend: the prolog sorted node 0 through nodeN/compact"
cmp_ok "$scanned_after" -gt "$scanned_before" "the kernel compacted (compact_migrate_scanned $scanned_before -> $scanned_after)"
done_testing
