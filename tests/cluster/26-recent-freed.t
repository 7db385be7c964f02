#!/bin/bash
# recent_freed=sort: a node sorted less than min_interval ago is sorted all
# the same once 1/16 of its cache or more was freed since right after that
# sort, by the kernel's count of pages freed (pages freed after a sort go in
# front of the sorted lists: a job ending frees its memory there, and the
# next job's prolog would get it as it is). Without memory freed, job B's
# prolog within min_interval=60 of job A's sort is skipped as recent. With a
# process on the host holding 2 GiB while A's prolog sorts and exiting
# before B, B's prolog sorts and says why, and B's step finds B's own sort
# recent. recent_freed=skip skips B's prolog either way. The sorts are
# counted by the stand-in interface (testbed/sortcount.sh: this host has no
# memory-side cache).
#
# The count compared is the whole host's, whose other processes free
# several MiB a second: 1/16 of the usual 64 MiB stand-in cache (4 MiB)
# would be crossed by them between two jobs. This test configures a 16 GiB
# stand-in cache instead (1 GiB freed makes a sort due) and frees 2 GiB. A
# busy host (a compiler, a QEMU guest ending) can still free more than 1
# GiB between two jobs: each case is tried up to three times, and the
# attempts that did not count are said.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
source "$(dirname "$0")/../diag/diag-lib.sh"
need srun gcc jq
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

POLICY="min_period=60 min_interval=60 cache_size=16GiB"
sortcount_cluster zs-t26 $POLICY recent_freed=sort
ok "alloc-touch builds" build_alloc "$work"
log=$(cluster_slurmd_log "$ZS_NODE")
trap 'stop_alloc; cluster_stop; sortcount_stop; rm -rf "$work"' EXIT

# job: one step with --zonesort=on on the node; prints the job id.
job() {
	local id
	id=$(srun -w "$ZS_NODE" --zonesort=on sh -c 'echo $SLURM_JOB_ID')
	cluster_wait_job_gone "${id:-0}" 30
	echo "$id"
}

# two_jobs freed|kept: forgets earlier sorts, then job A (its prolog sorts
# with 2 GiB held on the host when freed), the 2 GiB freed, job B. Sets A,
# B and SORTS (the node's sorts of both jobs).
two_jobs() {
	sortcount_reset
	if [ "$1" = freed ]; then
		start_alloc 2048 || diag "alloc-touch 2048 did not get ready"
	fi
	A=$(job)
	stop_alloc
	B=$(job)
	SORTS=$(sortcount)
}

# The line the plugin logs for node 0 of job B's prolog.
b_line() { grep -E "zonesort: job $B: node 0 " "$log" | head -1; }

# 1. Nothing freed: B's prolog is skipped as recent.
for try in 1 2 3; do
	two_jobs kept
	[ "$SORTS" = 1 ] && break
	diag "attempt $try: $SORTS sorts without memory freed on purpose (another process on this host freed more than 1 GiB meanwhile?): $(b_line)"
done
is "$SORTS" 1 "nothing freed between A's sort and B's prolog: one sort, A's"
summaries_like "$B" prolog 'zonesort=on, 0 sorts, 1 skipped \(recent\), 0 busy, 0 failed' "B's prolog summary: skipped as recent"
like "$(b_line)" "node 0 recent: sorted [0-9.]+ s ago, less than 60 s" "... and the node's log says when it was sorted"

# 2. Memory freed since A's sort: B's prolog sorts, says why, counts it.
for try in 1 2 3; do
	two_jobs freed
	[ "$SORTS" = 2 ] && break
	diag "attempt $try: $SORTS sort(s) for 2 GiB freed (another process on this host allocated meanwhile?): $(b_line)"
done
is "$SORTS" 2 "2 GiB freed between A's prolog sort and B's, within min_interval: both prologs sort"
like "$(b_line)" "node 0 sorted: [0-9]+ MiB freed since the sort [0-9.]+ s ago, at least 1/16 of the cache \(1024 MiB\): sorted within min_interval \(60 s\)" \
	"B's prolog logs how much was freed since the recent sort, and against what"
freed=$(b_line | sed -nE 's/.*sorted: ([0-9]+) MiB freed.*/\1/p')
num_ok "... at least the 1/16 of the cache (${freed:-none} MiB)" "${freed:-0} >= 1024"
summaries_like "$B" prolog 'zonesort=on, 1 sort \(1 despite a recent sort: memory freed since\), 0 skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend kernel' \
	"B's prolog summary counts the sort despite a recent one"
summaries_like "$B" 'step 0' 'zonesort=on, 0 sorts, 1 skipped \(recent\)' \
	"B's step finds B's own sort recent: the freed pages are counted from the last sort"
summaries_like "$A" prolog 'zonesort=on, 1 sort, 0 skipped \(recent\)' "A's prolog sorted a node nobody had sorted"
report=$(cluster_on_node "$ZS_NODE" "$ZS_ZONESORT" report --job "$B" statedir="$SC_STATE")
like "$report" "prolog +on $ZS_NODE: zonesort=on, 1 sort \(1 despite a recent sort: memory freed since\)" \
	"zonesort report counts it"
like "$report" "sorted 1 time within min_interval of an earlier sort: memory was freed on the node since, which is handed out first, in no order" \
	"... and says why"
is "$(cluster_on_node "$ZS_NODE" "$ZS_ZONESORT" report --job "$B" --json statedir="$SC_STATE" |
	jq -c '[.records[].sorts.after_freed]')" "[1,0]" "--json: after_freed 1 for the prolog, 0 for the step"

# 3. recent_freed=skip: min_interval alone, however much was freed.
cluster_plugstack "$SC_POLICY $POLICY recent_freed=skip"
two_jobs freed
is "$SORTS" 1 "recent_freed=skip: 2 GiB freed, B's prolog is skipped all the same"
summaries_like "$B" prolog 'zonesort=on, 0 sorts, 1 skipped \(recent\)' "... its summary says so"
done_testing
