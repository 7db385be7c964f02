# The cache-node scenario (guest side of 10-node-6.1.t and 11-node-6.12.t):
# the node finds its cache, Slurm runs with the installed plugin, the node
# ages under jobs, and the same fresh half-cache job runs with
# --zonesort=off, on and a period, each measured by itself, by
# "zonesort conflicts --job" and by the plugin's summary line.
# Knobs (nd_boot VAR=VALUE): ZS_AGE_CYCLES, ZS_AGE_MIB, ZS_AGE_KEEP,
# ZS_AGE_WINDOW, ZS_PERIOD, ZS_PLUGSTACK, ZS_PCP_FRACTION, ZS_NODEJOB.
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"
C=/sys/devices/system/node/node0/memory_side_cache/index1

M slurm_version="$(slurmd -V 2> /dev/null | awk '{ print $2 }')"
M hmat_size=$(cat $C/size 2>/dev/null || echo none) hmat_indexing=$(cat $C/indexing 2>/dev/null)
# Before any job: what hwloc finds, and that modprobe finds the module.
gn_cap status_before zonesort status
gn_cap modprobe_dry modprobe --dry-run --verbose zonesort
M module_loaded_at_boot=$([ -d /sys/module/zonesort ] && echo yes || echo no)

gn_step cluster 120 gn_cluster_start || exit 1

t0=$SECONDS
for c in $(seq 1 "$ZS_AGE_CYCLES"); do
	gn_step "age_$c" 600 gn_age "$c" || exit 1
done
M age_s=$((SECONDS - t0))
gn_cap status_aged zonesort status

# The same job three ways, then unsorted once more: aging is still there
# after the sorts (a sort reorders free memory, it does not defragment),
# unless a sort found its quarantine full and compacted the node (pages
# compaction scanned meanwhile, kcompactd's excluded).
gn_step job_off 900 gn_job off off
c0=$(_gn_compact_scanned)
gn_step job_on 900 gn_job on on
gn_step job_period 900 gn_job period "$ZS_PERIOD"
M sorted_compact_scanned=$(($(_gn_compact_scanned) - c0))
t0=$SECONDS
gn_step job_off2 900 gn_job off2 off
M job_off2_s=$((SECONDS - t0))

# A job whose start-up maps, touches and frees a cache's worth of memory
# (half of it kept) 1 s before its half-cache buffer, with --zonesort=on:
# what it freed would be handed out first; the churn watch sorts again in
# between (testbed/programs/churnjob.c reads the module's sorts counter at
# each phase).
_churn_job() {
	local d line job out rc
	d=$(mktemp -d "$GN_WORK/churn.XXXXXX")
	chmod 755 "$d"
	CHURNJOB_SORTS=/sys/kernel/zone_sort_free_pages/stats timeout --kill-after=5 600 srun -J churn \
		-o "$d/out.%j" -e "$d/err" --zonesort=on "$ZS_CHURNJOB" "$d" "$ZS_CACHE_BYTES" 1 "$ZS_HALF" \
		"$ZS_CACHE_BYTES" 1 1000
	rc=$?
	out=$(ls "$d"/out.* 2> /dev/null | head -1)
	job=${out##*.}
	line=$(sed -n 's/^CHURNJOB //p' "$out" 2> /dev/null)
	cluster_wait_job_gone "${job:-0}" 120
	M "churn_on=$rc job=$job $line"
	sed 's/^/# /' "$d/err" | head -5
	echo "ZSTEST_BEGIN summary_churn"
	gn_summary "$job" "step 0"
	echo "ZSTEST_DONE summary_churn"
	rm -rf "$d"
	return $rc
}
if [ -n "${ZS_CHURNJOB:-}" ]; then
	t0=$SECONDS
	gn_step job_churn 600 _churn_job
	M job_churn_s=$((SECONDS - t0))
fi

M param_cache_size=$(cat /sys/module/zonesort/parameters/cache_size 2>/dev/null) \
	param_ways=$(cat /sys/module/zonesort/parameters/ways 2>/dev/null)
# The module's own figures for node 0, read right before status (no job
# runs, nothing sorts in between): held/max/peak pages, and what
# its quarantine took over the run.
Z=/sys/kernel/zone_sort_free_pages/node0
M module_quarantine=$(cat $Z/quarantine_held_pages $Z/quarantine_max_pages \
	$Z/quarantine_peak_pages 2>/dev/null | paste -sd/) \
	module_taken_total=$(sed -n 's/^taken_pages_total=//p' /sys/kernel/zone_sort_free_pages/quarantine/stats 2>/dev/null)
M kreclaimable_kib=$(awk '$1 == "KReclaimable:" { print $2 }' /proc/meminfo)
gn_cap status_after zonesort status
gn_step cluster_stop 120 cluster_stop
M tainted=$(cat /proc/sys/kernel/tainted) uptime=$(cut -d' ' -f1 /proc/uptime)
gn_cap dmesg_all dmesg
exit 0
