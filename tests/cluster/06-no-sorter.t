#!/bin/bash
# A node without a sorter, or a sorter that fails, never harms a job: the
# job runs normally and one log line says what happened. (EBUSY and EINVAL
# from the real kernel module are tested in the QEMU suite, tests/kmod.)
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/sortcount.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

work=$(mktemp -d /tmp/zs-t06.XXXXXX)
mkdir -p "$work/empty" "$work/state" "$work/broken"
nosorter="sorter=auto sysfs=$work/empty node_sysfs=$work/empty statedir=$work/state min_period=1 helper=$ZS_ZONESORT"
ZS_PLUGSTACK_ARGS="$nosorter" cluster_start_or_bail
trap 'cluster_stop; rm -rf "$work"' EXIT

out=$(srun --zonesort=1 sh -c 'echo $SLURM_JOB_ID; echo output; sleep 1.5; exit 3' 2>&1); rc=$?
JOB=$(printf '%s\n' "$out" | head -1)
is "$rc" 3 "without a sorter the job runs and keeps its own exit status"
like "$out" 'output' "and its output"
unlike "$out" 'zonesort' "the user sees no zonesort noise"
cluster_wait_job_gone "$JOB" 30
like "$(summary "$JOB" 'step 0')" "zonesort=every 1 s, sorting unavailable: no kernel zonesort interface \($work/empty/nodeid\); no compaction interface \($work/empty/node0/compact\)" \
	"one clear line says sorting is unavailable and why"
is "$(grep -c "zonesort: job $JOB step 0" "$ZS_CLUSTER/log/slurmd.log")" 1 "exactly one line for the step"
is "$(pgrep -f "statedir=$work/state" | wc -l)" 0 "no periodic helper was started without a sorter"

# A kernel interface whose writes fail (ENOSPC from /dev/full).
ln -s /dev/full "$work/broken/nodeid"
cluster_plugstack "sorter=kernel sysfs=$work/broken statedir=$work/state nodes=0 min_period=1 helper=$ZS_ZONESORT"
rm -f "$work"/state/node*.last
out=$(srun --zonesort=1 sh -c 'echo $SLURM_JOB_ID; sleep 2.5; echo done' 2>&1); rc=$?
JOB=$(printf '%s\n' "$out" | head -1)
is "$rc" 0 "a failing sorter does not fail the job"
like "$out" 'done' "the job ran to its end"
cluster_wait_job_gone "$JOB" 30
like "$(grep "zonesort: job $JOB: node 0 failed" "$ZS_CLUSTER/log/slurmd.log" | head -1)" \
	"$work/broken/nodeid: write of node 0 failed: No space left on device" "the failure is logged with the file and errno"
like "$(summary "$JOB" 'step 0')" 'zonesort=every 1 s, 0 sorts, 0 skipped \(recent\), 0 busy, [1-9][0-9]* failed' \
	"the summary counts the failed attempts"
like "$(grep "zonesort: job $JOB step 0: periodic helper: error:" "$ZS_CLUSTER/log/slurmd.log" | head -1)" 'No space left' \
	"the periodic helper's failures reach the log"
done_testing
