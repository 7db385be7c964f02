#!/bin/bash
# An sbatch/salloc option reaches the steps inside the job; a step's own
# option overrides it.
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/sortcount.sh"
need srun sbatch salloc scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t04 min_period=1 default=on

sortcount_reset
JOB=$(sbatch --parsable -o /dev/null --zonesort=off --wrap 'srun true; sleep 1.2; srun --zonesort=on true; srun --zonesort=30 true')
cluster_wait_job_gone "$JOB" 60
like "$(summary "$JOB" prolog)" 'zonesort=off, no sort' "sbatch --zonesort=off reaches the prolog"
like "$(summary "$JOB" 'batch step')" 'zonesort=off, no sort' "and the batch step"
like "$(summary "$JOB" 'step 0')" 'zonesort=off, no sort' "and an inner srun without the option"
like "$(summary "$JOB" 'step 1')" 'zonesort=on, 1 sort' "an inner srun --zonesort=on overrides it"
like "$(summary "$JOB" 'step 2')" 'zonesort=every 30 s, 0 sorts, 1 skipped' "an inner srun --zonesort=30 overrides it"
is "$(sortcount)" 1 "one sort in all: step 1's"

sortcount_reset
JOB=$(sbatch --parsable -o /dev/null --zonesort=20 --wrap 'srun true')
cluster_wait_job_gone "$JOB" 60
like "$(summary "$JOB" 'step 0')" 'zonesort=every 20 s' "sbatch --zonesort=20 reaches the inner step"
like "$(summary "$JOB" prolog)" 'zonesort=every 20 s, 1 sort' "and the prolog, which sorts"

sortcount_reset
out=$(salloc --zonesort=off srun sh -c 'echo $SLURM_JOB_ID' 2>/dev/null)
JOB=$(printf '%s' "$out" | tail -1)
cluster_wait_job_gone "$JOB" 60
like "$(summary "$JOB" 'step 0')" 'zonesort=off' "salloc --zonesort=off reaches srun inside the allocation"
is "$(sortcount)" 0 "no sort in the salloc job"
done_testing
