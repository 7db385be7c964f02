#!/bin/bash
# min_interval is the least time between two sorts of a node, whoever
# sorts; min_period only bounds the periods users may ask for. With
# min_period=3 and min_interval=2: a step that starts 2.1 s after the
# prolog's sort sorts again (min_period alone would have skipped it), and
# two steps' periodic helpers with a period of 3 s, started 1.2 s apart,
# never sort the node less than 2 s apart.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t21 min_period=3 min_interval=2
sortcount_reset
# One job: a step 2.1 s after the prolog, then two steps started 1.2 s
# apart, each sorting every 3 s for 18 s: a due sort waits for a quiet
# node up to 10 s (max(period, 10)), and a busy host (QEMU guests of
# other suites beside this one) keeps the node's counters moving.
job=$(sbatch --parsable -o /dev/null --zonesort=on --wrap "
	sleep 2.1
	srun --zonesort=on -n1 true
	srun --zonesort=3 --overlap -n1 sleep 18 &
	sleep 1.2
	srun --zonesort=3 --overlap -n1 sleep 18 &
	wait")
like "$job" '^[0-9]+' "the job is submitted ($job)"
cluster_wait_job_gone "$job" 90
sleep 0.3
sortcount_times "$ZS_NODE" > "$work/times"
n=$(grep -c . "$work/times")
cmp_ok "$n" -ge 3 "the node was sorted several times ($n)"
gaps=$(awk 'NR > 1 { printf "%.2f ", $1 - prev } { prev = $1 }' "$work/times")
diag "seconds between sorts: $gaps"
min=$(awk 'NR > 1 { g = $1 - prev; if (m == "" || g < m) m = g } { prev = $1 } END { print m + 0 }' "$work/times")
num_ok "no two sorts closer than min_interval=2 s (closest $min s)" "$min >= 1.95"
first=$(awk 'NR == 2 { print $1 - prev } { prev = $1 }' "$work/times")
num_ok "the step 2.1 s after the prolog sorted: min_interval, not min_period=3, applies ($first s)" \
	"$first >= 1.95 && $first < 2.95"
done_testing
