#!/bin/bash
# sample_conflicts=yes: the periodic helper samples the step's processes
# after each sort round and the plugin's summary line for the step ends in
# ", conflicts X% (random Y%)"; the rest of the line keeps its wording.
# There is no memory-side cache here: cache_size= and ways= assume one
# (without one a node has nothing to sort, and nothing is sampled),
# and the sorts go to the counting stand-in of the kernel interface
# (testbed/sortcount.sh) because no real one exists on this machine.
# needs: a quiet host (its sample follows a periodic sort, which waits for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
source "$(dirname "$0")/diag-lib.sh"
need srun scontrol gcc
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

work=$(mktemp -d /tmp/zs-diag05.XXXXXX)
chmod 755 "$work"
ok "alloc-touch builds" build_alloc "$work"
sortcount_start "$work"
POLICY="$SC_POLICY min_period=1"
ZS_PLUGSTACK_ARGS="$POLICY sample_conflicts=yes cache_size=64M ways=1" cluster_start_or_bail
trap 'cluster_stop; sortcount_stop; rm -rf "$work"' EXIT

# step_line ARGS...: runs one srun and prints the step's summary line.
step_line() {
	local job
	srun "$@" sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; exec '"$ALLOC"' 32 for=4' > /dev/null 2> "$work/srun.err"
	job=$(cat "$work/job")
	cluster_wait_job_gone "$job" 30
	summary "$job" 'step 0'
}

line=$(step_line --zonesort=1)
diag "$line"
like "$line" 'zonesort=every 1 s, [0-9]+ sorts?, [0-9]+ skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel, conflicts [0-9]+\.[0-9]% \(random [0-9]+\.[0-9]%\)$' \
	"the summary keeps its wording and ends with the sampled conflicts"
random=$(sed -n 's/.*(random \([0-9.]*\)%)$/\1/p' <<< "$line")
# 32 MiB and a little more over 16384 slots: 1 - (1 - 1/16384)^(n-1) for
# n from 8192 to 16384 pages lies between 39% and 64%.
num_ok "the random-placement figure fits 32 MiB over a 64 MiB direct-mapped cache ($random%)" \
	"$random >= 39 && $random <= 64"
conf=$(sed -n 's/.*, conflicts \([0-9.]*\)% .*/\1/p' <<< "$line")
num_ok "the conflict fraction is a percentage ($conf%)" "$conf >= 0 && $conf <= 100"

line=$(step_line --zonesort=on)
unlike "$line" "conflicts" "a step without the periodic helper has no sample"
like "$line" 'zonesort=on, [0-9]+ sorts?, [0-9]+ skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel$' \
	"and its summary is as before"

cluster_plugstack "$POLICY"
line=$(step_line --zonesort=1)
like "$line" 'zonesort=every 1 s, .* backend kernel$' "without sample_conflicts=yes: no conflicts in the summary"

# Without a cache: with the defaults nothing is sorted, so no helper runs
# and nothing is sampled; with nocache=compact the node is compacted (a
# stand-in compact file here) and the helper says once why it cannot
# sample.
nocache=${POLICY/$SC_CACHE/}
mkdir -p "$work/nodes/node0" && : > "$work/nodes/node0/compact"
cluster_plugstack "$nocache sample_conflicts=yes"
line=$(step_line --zonesort=1)
like "$line" 'zonesort=every 1 s, no memory-side cache: nothing to sort$' \
	"sample_conflicts=yes without a cache: nothing to sort, no sample"
is "$(grep -c 'periodic helper: error: conflict sampling' "$ZS_CLUSTER/log/slurmd.log")" 0 \
	"... and no helper to complain about it"
cluster_plugstack "$nocache sample_conflicts=yes nocache=compact node_sysfs=$work/nodes"
line=$(step_line --zonesort=1)
like "$line" 'zonesort=every 1 s, .*backend compact$' \
	"sample_conflicts=yes nocache=compact without a cache: compacted, no sample"
like "$(grep 'periodic helper: error: conflict sampling' "$ZS_CLUSTER/log/slurmd.log" | tail -1)" \
	"conflict sampling: no memory-side cache found \(hwloc\) and no cache size given" \
	"the helper's reason is logged once"
like "$(cat "$work/srun.err")" "periodic helper: error: conflict sampling: no memory-side cache" \
	"and the job's stderr shows it too (slurm_error)"
done_testing
