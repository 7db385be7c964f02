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

for c in $(seq 1 "$ZS_AGE_CYCLES"); do
	gn_step "age_$c" 600 gn_age "$c" || exit 1
done
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
gn_step job_off2 900 gn_job off2 off

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
