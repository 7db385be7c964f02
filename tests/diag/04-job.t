#!/bin/bash
# zonesort conflicts --job JOBID on a real single-node Slurm cluster
# (proctrack/linuxproc): the processes are the ones "scontrol listpids"
# reports for the job on this node, every step's, and the result agrees
# exactly with the independent computation over the same processes.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/diag-lib.sh"
need sbatch scontrol squeue gcc python3 jq
need_file "$ZS_ZONESORT" "zonesort command"

T=$(mktemp -d /tmp/zs-diag04.XXXXXX)
chmod 755 "$T"
ok "alloc-touch builds" build_alloc "$T"
cluster_start_or_bail
# scontrol listpids asks the slurmd of the host it runs on: run it, and the
# command that calls it, where the node's slurmd is (its host name, its /run).
on_node() { cluster_on_node "$ZS_NODE" "$@"; }
trap 'cluster_stop; rm -rf "$T"' EXIT
ST="statedir=$T/state"

# A batch job with a step of its own: the batch script runs alloc-touch
# (with a forked child sharing its frames), srun runs another.
job=$(sbatch --parsable -o "$T/job.out" --wrap "srun $ALLOC 48 & $ALLOC 64 fork")
job=${job%%;*}
like "$job" '^[0-9]+$' "the job is submitted ($job)"
has_pids() { [ "$(on_node scontrol listpids "$job" 2>/dev/null | awk 'NR > 1' | wc -l)" -ge 4 ] && [ "$(grep -c ready "$T/job.out" 2>/dev/null)" -ge 2 ]; }
ok "the job's processes run and have touched their memory" wait_for 60 has_pids
listed=$(on_node scontrol listpids "$job" | awk 'NR > 1 { print $1 }' | sort -n | tr '\n' ' ')
diag "scontrol listpids $job: $listed"
like "$(on_node scontrol listpids "$job" | awk 'NR > 1 { print $3 }' | sort -u | tr '\n' ' ')" "^0 batch $" \
	"listpids (proctrack/linuxproc) lists the batch step and step 0"

# Stop the job's processes so that their pages stay put while both read.
kill -STOP $listed
for try in 1 2 3 4 5; do
	a=$(python3 "$SLOTS_OF" 67108864 1 $listed)
	z=$(on_node "$ZS_ZONESORT" conflicts --job "$job" --cache-size 64M --ways 1 --json "$ST")
	rc=$?
	b=$(python3 "$SLOTS_OF" 67108864 1 $listed)
	[ "$a" = "$b" ] && break
done
is "$rc" 0 "zonesort conflicts --job $job succeeds"
is "$(jq -r '.pids | sort | map(tostring) | join(" ")' <<< "$z") " "$listed" "it reads exactly the processes listpids reports"
is "$(jq -r .job <<< "$z")" "$job" "the JSON names the job"
is "$(json_keys "$z" pages conflicting_pages excess_pages)$(json_keys "$(jq -c '.nodes[0]' <<< "$z")" used_slots max_in_slot worst_slots)" \
   "$(json_keys "$a" pages conflicting_pages excess_pages used_slots max_in_slot worst_slots)" \
   "the job's collisions agree exactly with the independent computation"
cmp_ok "$(jq .pages <<< "$z")" -ge $(( (48 + 64) * 256 )) "the pages of both steps are counted ($(jq .pages <<< "$z"))"
h=$(on_node "$ZS_ZONESORT" conflicts --job "$job" --cache-size 64M --ways 1 "$ST")
like "$h" "^zonesort: job $job, [0-9]+ processes: [0-9]+ pages" "human output names the job"
kill -CONT $listed

# A step alone: JOB.STEP.
z=$(on_node "$ZS_ZONESORT" conflicts --job "$job.0" --cache-size 64M --ways 1 --json "$ST")
is "$(jq -r '.pids | length' <<< "$z")" "$(on_node scontrol listpids "$job.0" | awk 'NR > 1' | wc -l)" "--job JOB.STEP reads that step's processes"

scancel "$job"
cluster_wait_job_gone "$job" 30
on_node "$ZS_ZONESORT" conflicts --job "$job" --cache-size 64M --ways 1 "$ST" > /dev/null 2> "$T/err"
is "$?" 1 "a job that is gone: fails"
like "$(cat "$T/err")" "^zonesort conflicts: scontrol listpids $job failed: " "and passes on what scontrol says"
done_testing
