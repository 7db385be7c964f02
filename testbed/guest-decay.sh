# Guest side of bench/cachenode-decay (and its short run in the node
# suite): one curve of the decay figure. The node ages cycle after cycle
# and after each cycle a fresh half-cache allocation is measured, by
# ZS_MODE:
#   off       a fresh job with --zonesort=off, on a node nobody sorts
#   on        a fresh job with --zonesort=on
#   periodic  a long job with --zonesort=ZS_PERIOD that lives through
#             every cycle allocates a fresh buffer after the next periodic
#             sort
# Each mode needs its own guest: a periodic helper sorts the whole node, so
# an "off" job beside it would not be unsorted. One line per cycle:
#   ZSDECAY {"mode":M,"cycle":N,"t":S,"fraction":F,"tool":F,"random":F,...}
# (fraction: the job's own reading of its fresh memory, fraction_all of
# every page it maps, kinds the pages besides the buffer by what maps
# them (_gn_kinds); tool: zonesort conflicts --job; held_pages,
# peak_pages, max_pages: the module's quarantine for node 0
# right after the measurement). Stops after ZS_CYCLES cycles or when
# ZS_WALL_S seconds of guest time have passed at the end of a cycle,
# whichever comes first. Then, for the periodic curve with
# ZS_RECLAIM_PAIRS > 0, what holding costs an allocation that needs the
# memory (gn_reclaim_cost: ZSRECLAIM lines).
# ZS_THP: the transparent huge page setting (always, madvise, never) for
# the whole run; ZS_JOB_PAGES=system lets the measured job's buffer take
# huge pages by that setting.
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"

if [ -n "${ZS_THP:-}" ]; then
	echo "$ZS_THP" > /sys/kernel/mm/transparent_hugepage/enabled || { M "thp=refused:$ZS_THP"; exit 2; }
fi
GD_THP=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
# What this guest runs, for the run's JSON lines.
printf 'ZSDECAY {"guest":{"curve":"%s","kernel":"%s","slurm":"%s","thp":"%s"}}\n' "$ZS_MODE" "$(uname -r)" \
	"$(slurmd -V 2> /dev/null | awk '{ print $2 }')" "$GD_THP"

gn_step cluster 120 gn_cluster_start || exit 1
case $ZS_MODE in
off | on) ;;
periodic) gn_step long_start 600 gn_long_start "$ZS_PERIOD" $((ZS_CYCLES + 1)) || exit 1 ;;
*) M "mode=unknown:$ZS_MODE"; exit 2 ;;
esac

# _field LINE KEY: a value of a "ZSTEST job_...=" or "ZSTEST long_...=" line.
_field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p"; }
_num() { [ -n "$1" ] && [ "$1" != null ] && echo "$1" || echo null; }
_ppm() { _num "$(awk -v v="$1" 'BEGIN { if (v != "") print v / 1e6 }')"; }

start=$SECONDS
failed=0
# Cycle 0 is the node as booted, before any aging.
for c in $(seq 0 "$ZS_CYCLES"); do
	if [ "$c" -gt 0 ]; then
		gn_step "age_$c" 600 gn_age "$c" || { failed=1; break; }
	fi
	# The quarantine's bound, when the run sets it (the module is loaded
	# by the first job that sorts).
	f=/sys/kernel/zone_sort_free_pages/quarantine/max_permille
	if [ -n "${ZS_QUARANTINE_MAX_PERMILLE:-}" ] && [ -e "$f" ]; then
		echo "$ZS_QUARANTINE_MAX_PERMILLE" > "$f" || M "quarantine_max_permille_$c=refused"
	fi
	if [ "$ZS_MODE" = periodic ]; then
		m=$(gn_long_round $((c + 1)))
	else
		m=$(gn_job "${ZS_MODE}_$c" "$ZS_MODE")
	fi
	rc=$?
	echo "$m"
	[ $rc -eq 0 ] || { M "step_measure_$c=$rc"; failed=1; break; }
	line=$(grep '^ZSTEST \(job\|long\)_[^ ]*=ok ' <<< "$m" | head -1)
	printf 'ZSDECAY {"mode":"%s","cycle":%d,"t":%d,"fraction":%s,"fraction_all":%s,"pages_all":%s,"tool":%s,"tool_pages":%s,"random":%s,"module_estimate":%s,"module_floor":%s,"sorts_during":%s,"free_at_go":%s,"freed_during":%s,"reclaimed_during":%s,"compacted_during":%s,"released_during":%s,"sort_ms":%s,"compact_scanned":%s,"held_pages":%s,"peak_pages":%s,"max_pages":%s,"short_pages":%s,"taken_pages":%s,"taken_huge_pages":%s,"taken_total_at_go":%s,"taken_huge_total_at_go":%s,"huge_pages":%s,"delay_ms":%s,"occupied_slots":%s,"kinds":%s}\n' \
		"$ZS_MODE" "$c" $((SECONDS - start)) "$(_num "$(_field "$line" reader)")" \
		"$(_num "$(_field "$line" reader_all)")" "$(_num "$(_field "$line" reader_all_pages)")" \
		"$(_num "$(_field "$line" tool)")" "$(_num "$(_field "$line" tool_pages)")" \
		"$(_num "$(_field "$line" random)")" \
		"$(_ppm "$(_field "$line" module_after_ppm)")" "$(_ppm "$(_field "$line" module_floor_ppm)")" \
		"$(_num "$(_field "$line" sorts_during)")" "$(_num "$(_field "$line" free_at_go)")" \
		"$(_num "$(_field "$line" freed_during)")" "$(_num "$(_field "$line" reclaimed_during)")" \
		"$(_num "$(_field "$line" compacted_during)")" "$(_num "$(_field "$line" released_during)")" \
		"$(_num "$(_field "$line" module_sort_ms)")" "$(_num "$(_field "$line" compact_scanned)")" \
		"$(_num "$(_field "$line" quar_held)")" "$(_num "$(_field "$line" quar_peak)")" \
		"$(_num "$(_field "$line" quar_max)")" \
		"$(_num "$(_field "$line" quar_short)")" "$(_num "$(_field "$line" quar_last_taken)")" \
		"$(_num "$(_field "$line" quar_last_taken_huge)")" "$(_num "$(_field "$line" quar_taken_at_go)")" \
		"$(_num "$(_field "$line" quar_taken_huge_at_go)")" "$(_num "$(_field "$line" huge_pages)")" \
		"$(_num "$(_field "$line" delay_ms)")" "$(_num "$(_field "$line" module_occupied_slots)")" \
		"$(_num "$(_field "$line" kinds)")"
	[ $((SECONDS - start)) -ge "$ZS_WALL_S" ] && break
done
M cycles_done=$c wall_s=$((SECONDS - start))
[ "$ZS_MODE" = periodic ] && gn_long_stop
if [ "$ZS_MODE" = periodic ] && [ "${ZS_RECLAIM_PAIRS:-0}" -gt 0 ] && [ "$failed" = 0 ]; then
	gn_step reclaim 1800 gn_reclaim_cost "$ZS_RECLAIM_PAIRS" || failed=1
fi
gn_cap status_after zonesort status
gn_step cluster_stop 120 cluster_stop
M uptime=$(cut -d' ' -f1 /proc/uptime)
gn_cap dmesg_all dmesg
exit $failed
