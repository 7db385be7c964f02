#!/bin/bash
# An sbatch/salloc option reaches the steps inside the job; a step's own
# option overrides it. Runs on $ZS_NODES nodes (4N-04-inherit.t: four);
# the batch step runs on the first node only, the others on all.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun sbatch salloc scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t04 min_period=1 default=on

sortcount_reset
JOB=$(sbatch --parsable -N "$ZS_NODES" -o /dev/null --zonesort=off --wrap 'srun true; sleep 1.2; srun --zonesort=on true; srun --zonesort=30 true')
cluster_wait_job_gone "$JOB" 60
summaries_like "$JOB" prolog 'zonesort=off, no sort' "sbatch --zonesort=off reaches the prolog"
like "$(summary "$JOB" 'batch step')" 'zonesort=off, no sort' "and the batch step"
summaries_like "$JOB" 'step 0' 'zonesort=off, no sort' "and an inner srun without the option"
summaries_like "$JOB" 'step 1' 'zonesort=on, 1 sort' "an inner srun --zonesort=on overrides it"
summaries_like "$JOB" 'step 2' 'zonesort=every 30 s, 0 sorts, 1 skipped' "an inner srun --zonesort=30 overrides it"
is "$(sortcount_each)" "$(each 1)" "one sort in all on each node: step 1's"

sortcount_reset
JOB=$(sbatch --parsable -N "$ZS_NODES" -o /dev/null --zonesort=20 --wrap 'srun true')
cluster_wait_job_gone "$JOB" 60
summaries_like "$JOB" 'step 0' 'zonesort=every 20 s' "sbatch --zonesort=20 reaches the inner step"
summaries_like "$JOB" prolog 'zonesort=every 20 s, 1 sort' "and the prolog, which sorts"

sortcount_reset
out=$(salloc -N "$ZS_NODES" --zonesort=off srun sh -c 'echo $SLURM_JOB_ID' 2>/dev/null)
JOB=$(printf '%s\n' "$out" | sort -u | tail -1)
cluster_wait_job_gone "$JOB" 60
summaries_like "$JOB" 'step 0' 'zonesort=off' "salloc --zonesort=off reaches srun inside the allocation"
is "$(sortcount_each)" "$(each 0)" "no sort in the salloc job on any node"
done_testing
