#!/bin/bash
# The churn watch (churn_watch=SECONDS): a step whose start-up maps,
# touches and unmaps memory after its sort is sorted again once the node is
# quiet, with --zonesort=on (a helper that only watches) and with a period;
# churn_watch=0 starts no helper for --zonesort=on; a sorter whose writes
# fail fails no job and is counted and logged; bad values are refused
# before a job exists. The sorts are counted by the stand-in interface
# (testbed/sortcount.sh: this host has no memory-side cache) with the time
# each arrived, against the time the job's tasks freed their memory. The
# node's page counters are the host's own: other processes on a shared
# host can delay the quiet moment, so the job waits (at most 20 s) for the
# sort instead of assuming a delay.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun scontrol python3
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

# The helper's own usage errors, before any cluster.
out=$("$ZS_ZONESORT" run --parent 1 2>&1)
is "$?" 2 "zonesort run without --every or --watch: usage error"
like "$out" "--every SECONDS or --watch SECONDS is required \(1-86400\)" "... naming both options"
out=$("$ZS_ZONESORT" run --watch 0 2>&1)
is "$?" 2 "zonesort run --watch 0: usage error"
like "$out" "--watch" "... naming the option"

sortcount_cluster zs-t25
node=${SC_NODES[0]}
writes=$work/writes.$node
watch="${SC_POLICY/$SC_NO_CHURN_WATCH/} churn_watch=30"

# churn JOBFILE: what each step runs: 128 MiB mapped, touched and freed
# (twice the stand-in cache; a sort is due after 1/16 of it), the time of
# the free written to JOBFILE, then a wait for the sort that should follow
# (the stand-in's second write: the prolog's was the first).
cat > "$work/churn.py" <<'PY'
import mmap, os, sys, time
m = mmap.mmap(-1, 128 << 20)
for off in range(0, len(m), 4096):
    m[off] = 1
m.close()
with open(sys.argv[1], "w") as f:
    f.write("%.6f %s\n" % (time.time(), os.environ["SLURM_JOB_ID"]))
end = time.time() + 20
while time.time() < end:
    with open(sys.argv[2]) as f:
        if len(f.readlines()) >= 2:
            break
    time.sleep(0.1)
PY
churn_job() {
	rm -f "$work/freed"
	srun "$@" python3 "$work/churn.py" "$work/freed" "$writes" > /dev/null
	JOB=$(cut -d' ' -f2 "$work/freed" 2> /dev/null)
	FREED=$(cut -d' ' -f1 "$work/freed" 2> /dev/null)
	cluster_wait_job_gone "${JOB:-0}" 30
}

# 1. --zonesort=on: the prolog sorts, the step's own sort finds that
# recent, and the watch sorts again after the churn.
cluster_plugstack "$watch"
sortcount_reset
churn_job --zonesort=on
n=$(sortcount)
cmp_ok "$n" -ge 2 "--zonesort=on with churn_watch=30: the prolog's sort and one after the churn ($n)"
after=$(sortcount_times "$node" | awk -v t="${FREED:-0}" '$1 >= t' | head -1)
ok "... the second came after the job freed its memory (freed at ${FREED:-none}, sorted at ${after:-never})" \
	test -n "$after" -a -n "$FREED"
summaries_like "$JOB" 'step 0' 'zonesort=on, [1-9][0-9]* sorts? \([1-9][0-9]* after memory churn\), 1 skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel' \
	"the step's summary counts the sort after memory churn"
unlike "$(grep "job $JOB" "$(cluster_slurmd_log "$node")")" 'did not run|periodic helper:' \
	"no helper error in the node's log"
report=$(cluster_on_node "$node" "$ZS_ZONESORT" report --job "$JOB" statedir="$SC_STATE")
like "$report" "step 0 +on $node: zonesort=on, [1-9][0-9]* sorts? \([1-9][0-9]* after memory churn\)" \
	"zonesort report counts the sort after memory churn"
like "$report" "sorted again [1-9][0-9]* times? after memory churn: the step freed memory after its sort \(its start-up\), which is handed out first, in no order" \
	"... and says what it was for"
is "$(cluster_on_node "$node" "$ZS_ZONESORT" report --job "$JOB" --json statedir="$SC_STATE" |
	jq -c '[.records[1].churn_watch, (.records[1].sorts.after_churn > 0)]')" "[30,true]" \
	"--json: the watch and the sorts after churn"
ok "the helper is gone with the step" sh -c "! pgrep -f '^$ZS_ZONESORT run ' > /dev/null"

# 2. A period: the same helper sorts after the churn well before its first
# period is due.
sortcount_reset
churn_job --zonesort=30
n=$(sortcount)
cmp_ok "$n" -ge 2 "--zonesort=30: a sort after the churn before the first period ($n)"
summaries_like "$JOB" 'step 0' 'zonesort=every 30 s, [1-9][0-9]* sorts? \([1-9][0-9]* after memory churn\), 1 skipped \(recent\)' \
	"the periodic step's summary counts it"

# 3. churn_watch=0: --zonesort=on sorts in the prolog only, with no helper.
cluster_plugstack "$SC_POLICY"
sortcount_reset
srun --zonesort=on sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; pgrep -f "^'"$ZS_ZONESORT"' run " > '"$work"'/helpers; python3 -c "
import mmap
m = mmap.mmap(-1, 128 << 20)
for off in range(0, len(m), 4096):
    m[off] = 1
m.close()"; sleep 1'
JOB=$(cat "$work/job")
cluster_wait_job_gone "$JOB" 30
is "$(sortcount)" 1 "churn_watch=0: one sort, the prolog's"
is "$(cat "$work/helpers")" "" "... and no helper ran during the step"
summaries_like "$JOB" 'step 0' 'zonesort=on, 0 sorts, 1 skipped \(recent\), 0 busy' "... its summary has no sort after churn"

# 4. A kernel interface whose writes fail (ENOSPC from /dev/full): the
# watch's sorts fail too, and the job still runs to its end, the failures
# counted in the summary and said in the node's log; the helper ends with
# the step.
broken=$SC_RUN/broken
d=$(cluster_node_run "$node")${broken#/run}
mkdir -p "$d"
ln -sfn /dev/full "$d/nodeid"
cluster_plugstack "${watch/sysfs=$SC_SYSFS/sysfs=$broken}"
srun --zonesort=on sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; python3 -c "
import mmap
m = mmap.mmap(-1, 128 << 20)
for off in range(0, len(m), 4096):
    m[off] = 1
m.close()"; sleep 3; echo done > '"$work"'/done'
is "$?" 0 "a failing sorter under the churn watch does not fail the job"
is "$(cat "$work/done" 2> /dev/null)" done "... which ran to its end"
JOB=$(cat "$work/job")
cluster_wait_job_gone "$JOB" 30
summaries_like "$JOB" 'step 0' 'zonesort=on, 0 sorts, 1 skipped \(recent\), 0 busy, [1-9][0-9]* failed' \
	"the step's summary counts the watch's failed sorts"
like "$(grep "zonesort: job $JOB" "$(cluster_slurmd_log "$node")")" "$broken/nodeid: write of node 0 failed: No space left on device" \
	"... and the node's log names the file and the errno"
ok "the helper is gone with the step" sh -c "! pgrep -f '^$ZS_ZONESORT run ' > /dev/null"

# 5. Bad values stop srun before a job exists, naming the key.
for bad in churn_watch=-1 churn_watch=86401 churn_watch=1m; do
	cluster_plugstack "$SC_POLICY $bad"
	out=$(srun --zonesort=on true 2>&1)
	cmp_ok "$?" -ne 0 "$bad: srun refuses"
	like "$out" "zonesort: plugstack.conf: churn_watch" "... naming the key ($bad)"
done
done_testing
