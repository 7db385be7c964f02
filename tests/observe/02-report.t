#!/bin/bash
# zonesort report: each user sees what zonesort did for their own job, on
# the node, without root; another user's job looks like one that never ran
# here; the records are root's files their user may only read (an ACL), so
# the user can neither grow them nor keep them past expiry; another user
# learns only that a user's directory exists, never when their jobs ran or
# how many (the records sit one level further, in UID/jobs); the records
# hold no frame numbers; old records are removed by the next job's prolog. Real slurmctld + slurmd, jobs of the unprivileged
# users nobody and daemon. The sorts go to the counting stand-in of the
# kernel interface (testbed/sortcount.sh) and cache_size= assumes a
# cache: this machine has neither a module nor a memory-side cache.
# needs: a quiet host (its sampled conflicts follow a periodic sort, which waits for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
source "$(dirname "$0")/../diag/diag-lib.sh"
need srun runuser jq gcc stat
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-obs-report min_period=1 sample_conflicts=yes cache_size=64M ways=1
ok "alloc-touch builds" build_alloc "$work"
chmod 755 "$ALLOC"
# The plugin's state is in the node's own /run: the report command runs
# there, as it would on the node, and the test looks at the files from here.
reports=$(_sortcount_path "$ZS_NODE" "$SC_STATE")/reports
as() { local u=$1; shift; (cd / && cluster_on_node "$ZS_NODE" runuser -u "$u" -- "$@"); }
report() { local u=$1; shift; as "$u" "$ZS_ZONESORT" report "$@" statedir="$SC_STATE"; }

nobody_uid=$(id -u nobody)
daemon_uid=$(id -u daemon)
# Records left from earlier jobs of nobody: one past the 7 days kept, one
# within, one stamped a year ahead.
old=$reports/$nobody_uid/jobs
mkdir -p "$old"
for j in 900001 900002 900003; do printf 'time=1\tjob=%s\twhere=step 0\n' "$j" > "$old/$j"; done
touch -d '8 days ago' "$old/900001"
touch -d '6 days ago' "$old/900002"
touch -d '1 year' "$old/900003"

# nobody's job: a periodic step that holds 32 MiB, sampled after each sort.
sortcount_reset
out=$(as nobody srun --zonesort=1 sh -c 'echo $SLURM_JOB_ID; exec '"$ALLOC"' 32 for=3.5' 2>&1)
JOB=$(printf '%s\n' "$out" | head -1)
like "$JOB" '^[0-9]+$' "nobody's job ran ($JOB)"
cluster_wait_job_gone "$JOB" 30
sorts=$(sortcount)

ok "the prolog removed the record older than report_days (7)" test ! -e "$old/900001"
ok "and kept the one within" test -e "$old/900002"
ok "and removed the one stamped a year ahead (root's clock)" test ! -e "$old/900003"
rec=$reports/$nobody_uid/jobs/$JOB
is "$(stat -c '%U %a' "$rec")" "root 440" "the job's record is root's (mode 440: the ACL's mask)"
is "$(stat -c '%U %a' "$reports")" "root 711" "under a directory only root writes and nobody lists"
is "$(stat -c '%U %a' "$reports/$nobody_uid")" "root 710" "in nobody's own directory, root's, which nobody may only pass"
is "$(stat -c '%U %a' "$reports/$nobody_uid/jobs")" "root 750" "... to its jobs directory, root's, which nobody lists"
ok "nobody reads the record itself" as nobody sh -c "cat '$rec' > /dev/null"
fails "nobody cannot list who has reports" as nobody ls "$reports"
fails "nobody cannot make the record writable" as nobody chmod 600 "$rec"
fails "nobody cannot grow it" as nobody sh -c "fallocate -l 1G '$rec' 2>/dev/null || echo x >> '$rec'"
fails "nobody cannot set its time ahead" as nobody touch -d 2099-01-01 "$rec"
fails "nobody cannot add a file to the directory" as nobody sh -c "echo x > '$reports/$nobody_uid/jobs/999'"

text=$(report nobody --job "$JOB"); rc=$?
is "$rc" 0 "nobody reads the report of their job without root"
diag "$text"
like "$text" "^job $JOB:" "it names the job"
like "$text" "prolog +on $ZS_NODE: zonesort=every 1 s, 1 sort," "the prolog's sort"
like "$text" "step 0 +on $ZS_NODE: zonesort=every 1 s, [0-9]+ sorts?, [0-9]+ skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel" \
	"the step's sorts and backend"
like "$text" "cache-slot conflicts: [0-9.]+% of the step's [0-9]+ pages shared a slot; random placement: [0-9.]+%" \
	"the sampled conflicts next to random placement"
like "$text" "not watched for memory churn: what the step frees after its sort \(its start-up\) is handed out before the sorted pages" \
	"the step was not watched for memory churn (churn_watch=0 here): said, with what it means"

json=$(report nobody --job "$JOB" --json)
is "$(jq -r type <<< "$json")" object "--json is one JSON object"
total=$(jq '[.records[].sorts.sorted] | add' <<< "$json")
is "$total" "$sorts" "its sorts add up to the writes the kernel interface saw ($sorts)"
is "$(jq -r '[.records[].where] | join(",")' <<< "$json")" "prolog,step 0" "one record for the prolog, one for the step"
step_summary=$(summary "$JOB" 'step 0')
conf=$(sed -n 's/.*, conflicts \([0-9.]*\)% (random \([0-9.]*\)%)$/\1 \2/p' <<< "$step_summary")
is "$(jq -r '.records[1].conflicts | "\(.fraction * 1000 | round / 10) \(.random_fraction * 1000 | round / 10)"' <<< "$json" |
	awk '{ printf "%.1f %.1f", $1, $2 }')" "$conf" "the conflicts are those of the slurmd log's summary line ($conf)"
num_ok "random placement of 32 MiB over 64 MiB direct-mapped: 39-64% ($(jq .records[1].conflicts.random_fraction <<< "$json"))" \
	"$(jq .records[1].conflicts.random_fraction <<< "$json") >= 0.39 && $(jq .records[1].conflicts.random_fraction <<< "$json") <= 0.64"
is "$(jq -c '[.records[] | keys] | add | unique' <<< "$json")" \
	'["backend","churn_watch","conflicts","mode","node","sampling","sorts","time","unavailable","where"]' \
	"the records hold only these fields"
unlike "$(cat "$rec")" "pfn|frame|0x[0-9a-f]{6}" "no frame numbers in the stored record"

# Other users' jobs: root's and daemon's.
rjob=$(srun --zonesort=on sh -c 'echo $SLURM_JOB_ID')
djob=$(as daemon srun --zonesort=off sh -c 'echo $SLURM_JOB_ID')
cluster_wait_job_gone "$rjob" 30
cluster_wait_job_gone "$djob" 30
# What another user learns of daemon's records: that daemon's directory
# exists, and nothing of when daemon's jobs ran or how many.
peek() { as nobody stat -c '%Y %Z %s %h %a' "$reports/$daemon_uid" 2>&1; }
before=$(peek)
sleep 1.1
djob2=$(as daemon srun --zonesort=off sh -c 'echo $SLURM_JOB_ID')
cluster_wait_job_gone "$djob2" 30
like "$(report daemon --job "$djob2")" "zonesort=off, no sort" "daemon's next job has its record"
is "$(peek)" "$before" "nobody sees daemon's directory unchanged by it: no time, no count (stat: $before)"
fails "nobody cannot look into daemon's directory" as nobody ls "$reports/$daemon_uid"
out=$(report nobody --job "$djob" 2>&1); rc=$?
is "$rc" 1 "nobody asking for daemon's job fails"
like "$out" "^zonesort report: no record of job $djob of yours on " "with the words for a job that never ran here"
unlike "$out" "daemon|uid" "naming no user"
out=$(report nobody --job "$rjob" 2>&1)
like "$out" "no record of job $rjob of yours on " "root's job is not shown either"
fails "and the file itself is closed to nobody" as nobody sh -c "cat '$reports/$daemon_uid/jobs/$djob' 2>/dev/null"
like "$(report daemon --job "$djob")" "step 0 +on $ZS_NODE: zonesort=off, no sort" "daemon sees their own job, sorting off"
like "$(cluster_on_node "$ZS_NODE" "$ZS_ZONESORT" report --job "$djob" statedir="$SC_STATE")" "zonesort=off" "root sees any job"
out=$(report nobody --job 4000000 2>&1); rc=$?
is "$rc" 1 "a job without a record fails"
like "$out" "no record of job 4000000 of yours on " "saying there is no record of it here"
listing=$(report nobody)
like "$listing" "^job $JOB:" "without --job: nobody's jobs on this node, newest first"
unlike "$listing" "job ($djob|$rjob):" "and none of the others'"
like "$(as nobody env SLURM_JOB_ID="$JOB" "$ZS_ZONESORT" report statedir="$SC_STATE")" "^job $JOB:" \
	"inside a job, the job in SLURM_JOB_ID"
out=$(report nobody --job abc 2>&1); rc=$?
is "$rc" 2 "a bad job id is a usage error"
like "$out" "zonesort report: .*--job.*abc" "naming the value"
done_testing
