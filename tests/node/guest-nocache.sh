# Guest side of 20-nocache.t: a node whose firmware describes no
# memory-side cache, with the same plugstack.conf line as a cache node.
# Jobs must run, clean, the node must be left alone (no compaction), and
# zonesort status must say what the node has; with nocache=compact added
# the node is compacted.
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"

# Compactions: the kernel counts the pages every compaction scans
# (compact_migrate_scanned), those of kcompactd apart as well, and direct
# compaction in an allocation as compact_stall. Proactive compaction is
# off, so what is left is a write to nodeN/compact.
echo 0 > /proc/sys/vm/compaction_proactiveness
vmstat_compact() {
	awk '$1 ~ /^(compact_migrate_scanned|compact_daemon_migrate_scanned|compact_stall)$/ {
		printf "%s=%s ", p $1, $2 }' p="$1" /proc/vmstat
}

M memory_side_cache=$(ls /sys/devices/system/node/node0/memory_side_cache 2>/dev/null | grep -c index)
gn_cap status_before zonesort status
gn_step cluster 120 gn_cluster_start || exit 1
M $(vmstat_compact before_)

# run_job TAG MODE CMD...: a job's exit status, stderr and summary lines.
run_job() {
	local tag=$1 mode=$2 job rc
	shift 2
	timeout --kill-after=5 300 srun -J "nc-$tag" --zonesort="$mode" \
		sh -c 'echo "$SLURM_JOB_ID" > '"$GN_WORK/$tag.id"'; exec "$@"' sh "$@" > /dev/null 2> "$GN_WORK/$tag.err"
	rc=$?
	job=$(cat "$GN_WORK/$tag.id" 2>/dev/null)
	cluster_wait_job_gone "$job" 120
	M "job_$tag=$rc"
	echo "ZSTEST_BEGIN stderr_$tag"
	cat "$GN_WORK/$tag.err"
	echo "ZSTEST_DONE stderr_$tag"
	echo "ZSTEST_BEGIN summary_$tag"
	grep "zonesort: job $job[ :]" "$ZS_CLUSTER/log/slurmd.log" | sed 's/.*\] //'
	echo "ZSTEST_DONE summary_$tag"
}
run_job on on "$ZS_NODEJOB" age 64 0 "$GN_WORK/scratch" 1
run_job period "$ZS_PERIOD" sleep $((2 * ZS_PERIOD + 1))
run_job off off true
M $(vmstat_compact after_)
M module_loaded=$([ -d /sys/module/zonesort ] && echo yes || echo no)
gn_cap status_after zonesort status

# Compaction asked for: the same node is compacted before the job.
ZS_PLUGIN=zonesort.so cluster_plugstack "$ZS_PLUGSTACK nocache=compact"
run_job compact on true
M $(vmstat_compact compact_)
gn_step cluster_stop 120 cluster_stop
gn_cap dmesg_all dmesg
exit 0
