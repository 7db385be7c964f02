#!/bin/bash
# A node without a sorter, or a sorter that fails, never harms a job: the
# job runs normally and one log line says what happened. The nodes have
# the configured stand-in cache of testbed/sortcount.sh: without one
# there is nothing to sort (24-nocache.t). (EBUSY and EINVAL
# from the real kernel module are tested in the QEMU suite, tests/kmod.)
# Runs on $ZS_NODES nodes (4N-06-no-sorter.t: four); the interfaces are
# per node, under each node's own /run.
# needs: a quiet host (its failing sorter must see a periodic round within a 2.5 s step, and a due round waits for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

work=$(mktemp -d /tmp/zs-t06.XXXXXX)
R=/run/${work##*/}
nosorter="sorter=auto sysfs=$R/empty node_sysfs=$R/empty statedir=$R/state min_period=1 helper=$ZS_ZONESORT $SC_CACHE"
ZS_PLUGSTACK_ARGS="$nosorter" cluster_start_or_bail
trap 'cluster_stop; rm -rf "$work"' EXIT
for node in "${ZS_NODE_NAMES[@]}"; do
	d=$(cluster_node_run "$node")${R#/run}
	mkdir -p "$d/empty" "$d/state" "$d/broken"
	ln -s /dev/full "$d/broken/nodeid"
done

# logs_like JOB REGEX DESCRIPTION: every node's slurmd log has a line
# about JOB matching REGEX.
logs_like() {
	local node missing=
	for node in "${ZS_NODE_NAMES[@]}"; do
		grep "zonesort: job $1" "$(cluster_slurmd_log "$node")" | grep -Eq -- "$2" || missing="$missing $node"
	done
	is "$missing" "" "$3 (on each of $ZS_NODES node(s))"
}

out=$(srun -N "$ZS_NODES" --zonesort=1 sh -c 'echo $SLURM_JOB_ID; echo output; sleep 1.5; exit 3' 2>&1); rc=$?
JOB=$(printf '%s\n' "$out" | head -1)
is "$rc" 3 "without a sorter the job runs and keeps its own exit status"
is "$(printf '%s\n' "$out" | grep -c '^output$')" "$ZS_NODES" "and its output, from every node"
unlike "$out" 'zonesort' "the user sees no zonesort noise"
cluster_wait_job_gone "$JOB" 30
# The nodes have a (configured) cache: without its kernel sorter each is
# degraded, and compaction stands in for it in the prolog alone
# (compact_fallback=prolog), where there is none either.
summaries_like "$JOB" prolog "zonesort=every 1 s, 0 sorts, 0 compacted in place of a sort, 1 left unsorted, .*backend none, degraded: no kernel zonesort interface \($R/empty/nodeid\); no compaction interface \($R/empty/node0/compact\); compaction in its place in the job prolog only \(compact_fallback=prolog\)\$" \
	"one clear prolog line says the node is degraded, why, and that nothing stood in"
summaries_like "$JOB" 'step 0' "zonesort=every 1 s, 0 sorts, 0 compacted in place of a sort, 1 left unsorted, .*backend none, degraded: no kernel zonesort interface \($R/empty/nodeid\); compaction in its place in the job prolog only \(compact_fallback=prolog\)\$" \
	"one clear step line says so too"
is "$(pgrep -f "statedir=$R/state" | wc -l)" 0 "no periodic helper was started without a sorter"

# A kernel interface whose writes fail (ENOSPC from /dev/full).
cluster_plugstack "sorter=kernel sysfs=$R/broken statedir=$R/state nodes=0 min_period=1 helper=$ZS_ZONESORT $SC_CACHE"
out=$(srun -N "$ZS_NODES" --zonesort=1 sh -c 'echo $SLURM_JOB_ID; sleep 2.5; echo done' 2>&1); rc=$?
JOB=$(printf '%s\n' "$out" | head -1)
is "$rc" 0 "a failing sorter does not fail the job"
is "$(printf '%s\n' "$out" | grep -c '^done$')" "$ZS_NODES" "the job ran to its end on every node"
cluster_wait_job_gone "$JOB" 30
logs_like "$JOB" ": node 0 failed.*$R/broken/nodeid: write of node 0 failed: No space left on device" \
	"the failure is logged with the file and errno"
summaries_like "$JOB" 'step 0' 'zonesort=every 1 s, 0 sorts, 0 skipped \(recent\), 0 busy, [1-9][0-9]* failed' \
	"the summary counts the failed attempts"
logs_like "$JOB" "step 0: periodic helper: error:.*No space left" "the periodic helper's failures reach the log"
done_testing
