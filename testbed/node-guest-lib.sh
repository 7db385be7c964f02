# Guest side of the cache-node tests and benches (bash, in the guest's
# chroot on the host's read-only root). Source from a guest script; it
# reads the knobs nd_boot wrote (ZS_GUEST_CONF) and the project's shared
# test helpers. Everything the host checks is a serial-console marker:
#   ZSTEST key=value ...                values
#   ZSTEST_BEGIN tag / ZSTEST_DONE tag   a command's output, then "rc=N"
#   ZSTEST step_NAME=RC                  exit status of a guest step
#
#   gn_step NAME LIMIT_S CMD...   runs CMD bounded by LIMIT_S, reports rc
#   gn_cluster_start              single-node Slurm with the installed plugin
#   gn_age CYCLE                  one aging cycle (jobs with --zonesort=off)
#   gn_job TAG MODE               a fresh half-cache job measured three ways
#   gn_long_start / gn_long_round K / gn_long_stop
#                                 a long job with --zonesort=PERIOD whose
#                                 fresh allocations are measured on demand

. "$ZS_GUEST_CONF" || { echo "ZSTEST conf=unreadable"; exit 1; }
. "$ZS_SRCDIR/testbed/tap.sh"
. "$ZS_SRCDIR/testbed/cluster.sh"

M() { echo "ZSTEST $*"; }

# gn_step NAME LIMIT_S CMD...: a guest step that can hang is bounded; its
# status is reported whatever it is, and returned. A shell function runs
# as it is (timeout cannot run one; every wait inside one is bounded).
gn_step() {
	local name=$1 limit=$2 rc
	shift 2
	if [ "$(type -t "$1")" = function ]; then
		"$@"
	else
		timeout --kill-after=5 "$limit" "$@"
	fi
	rc=$?
	M "step_$name=$rc"
	return $rc
}

# gn_cap TAG CMD...: CMD's output between markers, then its exit status.
gn_cap() {
	local tag=$1 rc
	shift
	echo "ZSTEST_BEGIN $tag"
	timeout --kill-after=5 120 "$@" 2>&1
	rc=$?
	echo "rc=$rc"
	echo "ZSTEST_DONE $tag"
	return $rc
}

GN_WORK=/tmp/node
mkdir -p "$GN_WORK/age"
chmod 755 "$GN_WORK"
: "${ZS_HALF:=$((ZS_CACHE_BYTES / 2))}"
# Where the sorter stamps its sorts: the plugin's statedir= or its default
# (under the Slurm node's /run).
GN_STATEDIR=$(tr ' ' '\n' <<< "${ZS_PLUGSTACK:-}" | sed -n 's/^statedir=//p' | tail -1)
: "${GN_STATEDIR:=/run/zonesort}"

# What a site with a small memory-side cache sets (docs/kernel-module.md,
# "Sorting"): per-CPU page lists are handed out before any sorted free list.
if [ -n "${ZS_PCP_FRACTION:-}" ]; then
	echo "$ZS_PCP_FRACTION" > /proc/sys/vm/percpu_pagelist_high_fraction
fi

# gn_cluster_start: munged, slurmctld and slurmd of the host's Debian
# packages; plugstack.conf names the plugin as installed ("zonesort.so",
# found in Slurm's PluginDir) with $ZS_PLUGSTACK.
gn_cluster_start() {
	ZS_PLUGIN=zonesort.so ZS_PLUGSTACK_ARGS="$ZS_PLUGSTACK" cluster_start || return 1
	M "plugstack=$(tr ' ' '|' < "$ZS_CLUSTER/etc/plugstack.conf")"
}

# gn_summary JOB STEP: the plugin's summary line for a step ("step 0").
gn_summary() {
	grep "zonesort: job $1 $2 on " "$ZS_CLUSTER/log/slurmd.log" | tail -1 | sed 's/.*\] //'
}

# gn_jobid NAME: the id of the running job called NAME.
gn_jobid() { squeue -h -n "$1" -o %i 2>/dev/null | head -1; }

# gn_age CYCLE: one aging cycle. A job that faults in $ZS_AGE_MIB and frees
# it in random order, leaving page-cache pages scattered among its own in a
# tmpfs file (long-lived: the file of cycle N is deleted at cycle
# N + $ZS_AGE_WINDOW, which frees them again, scattered).
gn_age() {
	local c=$1 old=$(($1 - ZS_AGE_WINDOW)) out
	rm -f "$GN_WORK/age/file.$old"
	out=$(timeout --kill-after=5 600 srun -J age --zonesort=off "$ZS_NODEJOB" age "$ZS_AGE_MIB" \
		"$ZS_AGE_KEEP" "$GN_WORK/age/file.$c" "$c" 2>&1)
	local rc=$?
	[ $rc -eq 0 ] || { M "step_age_$c=$rc"; echo "$out" | head -5; return $rc; }
}

# _gn_field LINE KEY: value of KEY=... in a NODEJOB line.
_gn_field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p"; }

# _gn_kinds LINE: the other pages of a NODEJOB line by what maps them, as
# JSON without spaces: {"buffer_conflicting_all":N,"exe":[pages,conflicting,
# with_buffer],"lib":[...],"anon":[...],"special":[...]}; null when the
# line has none.
_gn_kinds() {
	local k out
	[ -n "$(_gn_field "$1" exe_pages)" ] || { echo null; return; }
	out="{\"buffer_conflicting_all\":$(_gn_field "$1" buffer_conflicting_all)"
	for k in exe lib anon special; do
		out+=",\"$k\":[$(_gn_field "$1" "${k}_pages"),$(_gn_field "$1" "${k}_conflicting"),$(_gn_field "$1" "${k}_with_buffer")]"
	done
	echo "$out}"
}

# _gn_result_or_gone FILE PID: the job wrote its result, or it is gone.
_gn_result_or_gone() { [ -e "$1" ] || ! kill -0 "$2" 2>/dev/null; }

# gn_job TAG MODE: a fresh job of half the cache with --zonesort=MODE. While
# it holds its memory: its own reading (nodejob), then
# "zonesort conflicts --job"; for a period, the plugin's summary line (the
# helper's last sample, taken after the job allocated: the job holds its
# memory for two periods). Prints
#   ZSTEST job_TAG=ok mode=M job=J srun_rc=N conflicts_rc=N reader=F
#          reader_pages=N reader_all=F reader_all_pages=N random=F
#          prefix2=F prefix4=F prefix8=F (the first 1/2, 1/4, 1/8 of the
#          buffer alone: what a smaller job got from the same lists) tool=F
#          tool_pages=N tool_random=F plugin=F|none plugin_random=F|none
#          module_...=  (the module's figures at its last sort)
# and the job's summary lines between ZSTEST_BEGIN/DONE summary_TAG.
gn_job() {
	local tag=$1 mode=$2 d job line z summary pid rc hold=0
	d=$(mktemp -d "$GN_WORK/job.XXXXXX")
	chmod 755 "$d"
	touch "$d/go.1"
	timeout --kill-after=5 900 srun -J "nj-$tag" -o "$d/out" -e "$d/err" --zonesort="$mode" \
		"$ZS_NODEJOB" hold "$d" "$ZS_HALF" "$ZS_CACHE_BYTES" 1 1 600 "${ZS_JOB_PAGES:-base}" &
	pid=$!
	wait_for 600 _gn_result_or_gone "$d/res.1" $pid
	if [ ! -e "$d/res.1" ]; then
		M "job_$tag=no-result"
		sed 's/^/# /' "$d/err" 2>/dev/null | head -5
		touch "$d/stop"
		wait $pid
		return 1
	fi
	line=$(cat "$d/res.1")
	job=$(gn_jobid "nj-$tag")
	case $mode in [0-9]*) hold=$((2 * mode + 1)) ;; esac
	sleep "$hold"
	z=$(cluster_on_node "$ZS_NODE" timeout 300 zonesort conflicts --job "$job" --json 2> "$d/conflicts.err")
	rc=$?
	local helper
	helper=$(_gn_helper_pages)
	touch "$d/release.1"
	wait $pid
	local src=$?
	cluster_wait_job_gone "$job" 120
	summary=$(gn_summary "$job" "step 0")
	local plugin=none prand=none
	if [[ $summary =~ conflicts\ ([0-9.]+)%\ \(random\ ([0-9.]+)%\) ]]; then
		plugin=$(awk -v v="${BASH_REMATCH[1]}" 'BEGIN { printf "%.4f", v / 100 }')
		prand=$(awk -v v="${BASH_REMATCH[2]}" 'BEGIN { printf "%.4f", v / 100 }')
	fi
	M "job_$tag=ok mode=$mode job=$job srun_rc=$src conflicts_rc=$rc" \
		"reader=$(_gn_field "$line" buffer_fraction) reader_pages=$(_gn_field "$line" buffer_pages)" \
		"reader_all=$(_gn_field "$line" all_fraction) reader_all_pages=$(_gn_field "$line" all_pages) kinds=$(_gn_kinds "$line")" \
		"random=$(_gn_field "$line" random) huge_pages=$(_gn_field "$line" buffer_huge_pages)" \
		"prefix2=$(_gn_field "$line" prefix2_fraction) prefix4=$(_gn_field "$line" prefix4_fraction)" \
		"prefix8=$(_gn_field "$line" prefix8_fraction)" \
		"tool=$(jq -r .conflict_fraction <<< "$z" 2>/dev/null) tool_pages=$(jq -r .pages <<< "$z" 2>/dev/null)" \
		"tool_random=$(jq -r .random_fraction <<< "$z" 2>/dev/null)" \
		"plugin=$plugin plugin_random=$prand helper_pages=$helper" "$(_gn_module_estimate)"
	echo "ZSTEST_BEGIN summary_$tag"
	gn_summary "$job" prolog
	echo "$summary"
	head -3 "$d/conflicts.err"
	echo "ZSTEST_DONE summary_$tag"
	rm -rf "$d"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}

# _gn_helper_pages: resident pages of the periodic helpers running now
# ("zonesort run", periodic or only watching for memory churn), which
# "zonesort conflicts --job" counts among the step's processes.
_gn_helper_pages() {
	local p n=0 r
	for p in $(pgrep -f '/zonesort run --(every|watch) '); do
		read -r _ r _ < "/proc/$p/statm" 2> /dev/null && n=$((n + r))
	done
	echo "$n"
}

# gn_long_start PERIOD ROUNDS: a job that lives across the aging cycles
# with --zonesort=PERIOD and allocates a fresh half-cache buffer whenever
# gn_long_round asks.
gn_long_start() {
	GN_LONG=$GN_WORK/long
	mkdir -p "$GN_LONG"
	chmod 755 "$GN_LONG"
	GN_LONG_PERIOD=$1
	timeout --kill-after=5 "$ZS_LONG_LIMIT_S" srun -J nj-long -o "$GN_LONG/out" -e "$GN_LONG/err" \
		--zonesort="$1" "$ZS_NODEJOB" hold "$GN_LONG" "$ZS_HALF" "$ZS_CACHE_BYTES" 1 "$2" 1800 \
		"${ZS_JOB_PAGES:-base}" &
	GN_LONG_PID=$!
	wait_for 300 _gn_long_running
}
_gn_long_running() { [ "$(squeue -h -n nj-long -o %T)" = RUNNING ]; }

# _gn_module_estimate: the module's own figures for its last sort (the
# project's estimate, reported next to the measurements, never an oracle).
_gn_module_estimate() {
	local f=/sys/kernel/zone_sort_free_pages/stats
	[ -r $f ] || { echo "module=none"; return; }
	echo "$(awk -F= '$1 == "sorts" { s = $2 } $1 == "last_conflict_ppm_after" { a = $2 }
		$1 == "last_conflict_ppm_floor" { fl = $2 } $1 == "last_pcp_pages" { p = $2 }
		$1 == "sort_ns_last" { ms = int($2 / 1000000) } $1 == "last_occupied_slots" { o = $2 }
		END { printf "module_sorts=%s module_after_ppm=%s module_floor_ppm=%s module_pcp_pages=%s module_sort_ms=%s module_occupied_slots=%s", s, a, fl, p, ms, o }' $f)" \
		"$(_gn_quarantine)"
}

# _gn_quarantine: what the module's quarantine holds for node 0 (held,
# its bound, the most held at any instant since
# load or the last release) and what its last sort took, gave back and
# could not take (figures, never an oracle).
_gn_quarantine() {
	local z=/sys/kernel/zone_sort_free_pages q=/sys/kernel/zone_sort_free_pages/quarantine
	[ -r $q/stats ] || { echo "quar=none"; return; }
	printf 'quar_enabled=%s quar_held=%s quar_max=%s quar_peak=%s ' "$(cat $q/enabled)" \
		"$(cat $z/node0/quarantine_held_pages)" \
		"$(cat $z/node0/quarantine_max_pages)" "$(cat $z/node0/quarantine_peak_pages)"
	awk -F= '
		$1 == "last_taken_pages" { t = $2 } $1 == "last_take_failed" { f = $2 }
		$1 == "not_taken_no_room" { nr = $2 } $1 == "last_short_pages" { sh = $2 }
		$1 == "last_given_back_pages" { g = $2 } $1 == "last_settle_taken_pages" { st = $2 }
		$1 == "last_allcpu_ops" { ac = $2 } $1 == "last_taken_huge_pages" { th = $2 }
		END { printf "quar_last_taken=%s quar_last_taken_huge=%s quar_last_failed=%s quar_not_taken_no_room=%s quar_short=%s quar_given_back=%s quar_settle_taken=%s quar_allcpu=%s", t, th, f, nr, sh, g, st, ac }' $q/stats
}

# _gn_vm: the node's page frees, reclaimed pages, pages isolated for
# compaction and pages the quarantine gave back so far, its free pages
# now, and what the quarantine took so far, all of it and in blocks of
# pageblock order and up: "pgfree pgsteal compact_isolated released
# memfree_pages taken taken_huge".
_gn_vm() {
	awk '$1 == "pgfree" { f = $2 } $1 ~ /^pgsteal_/ { s += $2 } $1 == "compact_isolated" { c = $2 }
		/^released_pages_total=/ { sub(/.*=/, ""); r = $0 }
		/^taken_pages_total=/ { sub(/.*=/, ""); t = $0 }
		/^taken_huge_pages_total=/ { sub(/.*=/, ""); th = $0 }
		$1 == "MemFree:" { m = $2 / 4 }
		END { printf "%d %d %d %d %d %d %d\n", f, s, c, r, m, t, th }' /proc/vmstat /proc/meminfo \
		$(ls /sys/kernel/zone_sort_free_pages/quarantine/stats 2> /dev/null)
}

# _gn_compact_scanned: pages compaction scanned for migration so far,
# kcompactd's own excluded (a sorter compacting a full quarantine's node).
_gn_compact_scanned() {
	awk '$1 == "compact_migrate_scanned" { m = $2 } $1 == "compact_daemon_migrate_scanned" { d = $2 }
		END { print m - d }' /proc/vmstat
}

# _gn_sorts: sorts the module has done so far.
_gn_sorts() { sed -n 's/^sorts=//p' /sys/kernel/zone_sort_free_pages/stats 2>/dev/null; }

# _gn_wait LIMIT_S COMMAND...: waits until COMMAND succeeds, trying once a
# second; 1 after LIMIT_S seconds. The periodic helper holds a due sort
# back, and a full quarantine's compaction with it, while the node
# allocates or frees more than 1/512 of its memory per half second: on a
# 1 GiB guest 512 pages, which wait_for's ten tries a second exceed by
# themselves with the processes each try starts (about 2 500 pages a half
# second, measured on the host), so every round's sort was one the helper
# had to start with memory "busy" and no full quarantine was compacted.
_gn_wait() {
	local limit=$1 t0=$SECONDS
	shift
	until "$@"; do
		[ $((SECONDS - t0)) -lt "$limit" ] || return 1
		sleep 1
	done
}
# _gn_stamp NAME: the time (CLOCK_BOOTTIME ns) in the sorter's stamp
# node0.NAME ("last": the last sort began, "compacted": a full quarantine
# last had the node compacted), or 0; read with shell builtins through the
# Slurm node's root, where the sorter keeps them (no process started).
_gn_stamp() {
	local pid line
	pid=$(_cluster_slurmd_pid "$ZS_NODE") && { read -r line < "/proc/$pid/root$GN_STATEDIR/node0.$1"; } 2> /dev/null &&
		set -- $line
	echo "${3:-0}"
}
# _gn_sorted_since NS: the node's last finished sort began after NS.
_gn_sorted_since() { [ "$(_gn_stamp last)" -gt "$1" ]; }
# _gn_uptime_ns: now in ns of CLOCK_BOOTTIME (/proc/uptime's clock).
_gn_uptime_ns() { awk '{ printf "%.0f\n", $1 * 1e9 }' /proc/uptime; }

# gn_long_round K: waits for the next sort of the node that began after
# this call (the periodic helper's, at most a period away: a sort that
# began before, while the aging job exited, ordered lists its frees then
# overran), then lets the long job allocate and measure; prints
# "ZSTEST long_K=ok reader=F tool=F ..." and frees again (the allocation
# may take ZS_ROUND_LIMIT_S seconds, default 300)
# (sorts_during: sorts the module counted while the job allocated;
# free_at_go: the node's free pages when it was told to go;
# compact_scanned: pages compaction scanned from this call to the result;
# freed_during, reclaimed_during, compacted_during, released_during:
# pages the node freed, reclaim took, compaction isolated and the
# quarantine gave back from then until its result).
gn_long_round() {
	local k=$1 job z at_go c0
	c0=$(_gn_compact_scanned)
	# A sort that compacts a full quarantine's node can take seconds, and
	# the one after it under TCG longer still (11 s seen): a generous bound.
	_gn_wait $((3 * GN_LONG_PERIOD + 120)) _gn_sorted_since "$(_gn_uptime_ns)" || M "long_${k}_sort=none"
	# A job allocates when it needs to, not the instant a sort ends: with
	# ZS_DELAY_MAX_MS the round waits a delay drawn from [0, that) by a
	# sequence seeded with ZS_DELAY_SEED and K (the same seed, the same
	# delays), and reports it.
	local delay_ms=0
	if [ "${ZS_DELAY_MAX_MS:-0}" -gt 0 ]; then
		delay_ms=$(awk -v s="${ZS_DELAY_SEED:-1}" -v k="$k" -v m="$ZS_DELAY_MAX_MS" \
			'BEGIN { srand(s * 100003 + k); printf "%d", rand() * m }')
		sleep "$(awk -v d="$delay_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
	fi
	at_go=$(_gn_sorts)
	local -a vm0 vm1
	_gn_diag_before "$k"
	read -ra vm0 <<< "$(_gn_vm)"
	touch "$GN_LONG/go.$k"
	_gn_wait "${ZS_ROUND_LIMIT_S:-300}" _gn_result_or_gone "$GN_LONG/res.$k" "$GN_LONG_PID"
	if [ ! -e "$GN_LONG/res.$k" ]; then
		M "long_$k=no-result"
		# What the job said about it, into the guest log.
		sed "s/^/# /" "$GN_LONG/err" 2> /dev/null | tail -n 5
		return 1
	fi
	job=$(gn_jobid nj-long)
	z=$(cluster_on_node "$ZS_NODE" timeout 300 zonesort conflicts --job "$job" --json 2>/dev/null)
	local line
	line=$(cat "$GN_LONG/res.$k")
	read -ra vm1 <<< "$(_gn_vm)"
	_gn_diag_after "$k" "$line"
	touch "$GN_LONG/release.$k"
	M "long_$k=ok job=$job delay_ms=$delay_ms reader=$(_gn_field "$line" buffer_fraction)" \
		"reader_all=$(_gn_field "$line" all_fraction) reader_all_pages=$(_gn_field "$line" all_pages) kinds=$(_gn_kinds "$line")" \
		"random=$(_gn_field "$line" random) huge_pages=$(_gn_field "$line" buffer_huge_pages)" \
		"tool=$(jq -r .conflict_fraction <<< "$z" 2>/dev/null)" \
		"tool_pages=$(jq -r .pages <<< "$z" 2>/dev/null)" "sorts_during=$(( $(_gn_sorts) - at_go ))" \
		"free_at_go=${vm0[4]} freed_during=$((vm1[0] - vm0[0])) reclaimed_during=$((vm1[1] - vm0[1]))" \
		"compacted_during=$((vm1[2] - vm0[2])) released_during=$((vm1[3] - vm0[3]))" \
		"compact_scanned=$(($(_gn_compact_scanned) - c0)) compacted_stamp_ns=$(_gn_stamp compacted)" \
		"quar_taken_at_go=${vm0[5]} quar_taken_huge_at_go=${vm0[6]}" \
		"$(_gn_module_estimate)"
}

# _gn_diag_before K, _gn_diag_after K RESULT: for the rounds of the cycles
# (K - 1) listed in ZS_DIAG_CYCLES, a diagnosis: the free lists as the
# module's debugfs dump shows them right before the allocation, the frames
# the job got, and zsbound's (ZS_ZSBOUND, testbed/programs) reading of both:
# "predicted", what the lists in their dumped order would have given,
# against "measured", what the job got; with the quarantine's figures of
# the sort before and how long the dump held the allocation back
# (dump_ms). Only the free lists are dumped (zsbound's checks against
# /proc/pagetypeinfo and kpageflags get empty files): reading kpageflags
# takes long enough under TCG to change what it looks at. Prints
# "ZSTEST diag_K=..." lines (not "long_K=", which the decay figures read).
_gn_diag_wanted() { [[ " ${ZS_DIAG_CYCLES//,/ } " == *" $(($1 - 1)) "* ]] && [ -x "${ZS_ZSBOUND:-}" ]; }
_gn_diag_before() {
	local d=$GN_LONG/diag.$1 t0
	_gn_diag_wanted "$1" || return 0
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	mkdir -p "$d" && touch "$GN_LONG/keep-pfns"
	t0=$(_gn_uptime_ns)
	cp /sys/kernel/debug/zonesort/freelists "$d/freelists" || M "diag_$1=dump-failed"
	GN_DIAG_MS=$((($(_gn_uptime_ns) - t0) / 1000000))
	cp /sys/kernel/zone_sort_free_pages/quarantine/stats "$d/quarantine"
	: > "$d/pagetypeinfo"
	: > "$d/kpageflags"
}
_gn_diag_after() {
	local d=$GN_LONG/diag.$1 cpu
	_gn_diag_wanted "$1" || return 0
	rm -f "$GN_LONG/keep-pfns"
	cpu=$(_gn_field "$2" cpu0)
	mv "$GN_LONG/pfns.$1" "$d/pfns" || { M "diag_$1=no-pfns"; return 0; }
	M "diag_$1=ok cpu=$cpu dump_ms=$GN_DIAG_MS $("$ZS_ZSBOUND" "$d" $((ZS_CACHE_BYTES / 4096)) 1 $((ZS_HALF / 4096)) "${cpu:-0}" base 2>&1 | tr '\n' ' ')"
	M "diag_$1_quarantine $(grep -E '^last_' "$d/quarantine" | tr '\n' ' ')"
	rm -rf "$d"
}

# gn_long_stop: ends the long job and reports its summary line.
gn_long_stop() {
	local job
	job=$(gn_jobid nj-long)
	touch "$GN_LONG/stop"
	wait "$GN_LONG_PID"
	M "step_long=$?"
	cluster_wait_job_gone "$job" 120
	echo "ZSTEST_BEGIN summary_long"
	gn_summary "$job" "step 0"
	echo "ZSTEST_DONE summary_long"
}

# gn_reclaim_cost PAIRS: what holding memory costs a job that needs it.
# Each pair times two allocations of one size (nodejob alloc, base pages
# touched one by one): once with the quarantine holding what a sort took,
# once after "release" (nothing held). The size is the node's free pages
# plus half of what the quarantine holds, less the zones' high watermarks
# and 2 MiB: with the pages held, free memory would end half the
# quarantine below where kswapd stops (the high watermark), so reclaim
# must get pages back; with nothing held it fits. Odd pairs allocate with
# nothing held first, even pairs with pages held first, so the first
# large allocation after aging, whatever it costs by itself, falls on the
# side without held pages. Every pair begins with a fresh sort. The page
# cache is dropped before each allocation (drop_caches=1, no shrinker
# called), so what reclaim gets back comes from the quarantine's shrinker
# rather than from files. Prints per allocation
#   ZSRECLAIM {"pair":K,"order":"free-first"|"held-first","state":"held"|"free",
#     "bytes":B,"ms":T,"held_before":H,"held_after":H,"by_pressure":P,
#     "pgsteal":S,"allocstall":A,"memfree_before":F}
# (pages; by_pressure: what the shrinker gave back during the allocation).
gn_reclaim_cost() {
	local k bytes order
	[ -r /sys/kernel/zone_sort_free_pages/quarantine/stats ] || { M "reclaim=no-module"; return 1; }
	for k in $(seq 1 "$1"); do
		order=held-first
		[ $((k % 2)) = 1 ] && order=free-first
		_gn_release "$k" && _gn_sort "$k" || return 1
		bytes=$(( ($(_gn_memfree_pages) + $(_gn_held_pages) / 2 - $(_gn_high_pages) - 512) * 4096 ))
		if [ $order = free-first ]; then
			_gn_release "$k" && _gn_reclaim_one "$k" $order free "$bytes" &&
				_gn_sort "$k" && _gn_reclaim_one "$k" $order held "$bytes" || return 1
		else
			_gn_reclaim_one "$k" $order held "$bytes" &&
				_gn_release "$k" && _gn_reclaim_one "$k" $order free "$bytes" || return 1
		fi
	done
}
# _gn_release PAIR, _gn_sort PAIR: everything held given back, node 0
# sorted; a refused write ends the measurement with a failed step.
_gn_release() { echo 1 > /sys/kernel/zone_sort_free_pages/quarantine/release || { M "reclaim_$1_release=failed"; return 1; }; }
_gn_sort() { echo 0 > /sys/kernel/zone_sort_free_pages/nodeid || { M "reclaim_$1_sort=failed"; return 1; }; }
_gn_high_pages() { awk '$1 == "high" { s += $2 } END { print s + 0 }' /proc/zoneinfo; }
_gn_memfree_pages() { awk '$1 == "MemFree:" { print int($2 / 4) }' /proc/meminfo; }
_gn_held_pages() { cat /sys/kernel/zone_sort_free_pages/node0/quarantine_held_pages; }
# _gn_reclaim_counters: "pgsteal allocstall by_pressure" so far.
_gn_reclaim_counters() {
	awk '$1 ~ /^pgsteal_/ { s += $2 } $1 ~ /^allocstall/ { a += $2 }
		/^released_by_pressure_pages=/ { sub(/.*=/, ""); p = $0 }
		END { printf "%d %d %d\n", s, a, p }' /proc/vmstat /sys/kernel/zone_sort_free_pages/quarantine/stats
}
_gn_reclaim_one() {
	local k=$1 order=$2 state=$3 bytes=$4 h0 h1 f0 out ms
	local -a c0 c1
	sync
	echo 1 > /proc/sys/vm/drop_caches
	h0=$(_gn_held_pages) f0=$(_gn_memfree_pages)
	read -ra c0 <<< "$(_gn_reclaim_counters)"
	# The allocation, not a daemon, is the one to go if memory runs out.
	out=$(sh -c 'echo 1000 > /proc/self/oom_score_adj && exec "$0" alloc "$1"' "$ZS_NODEJOB" "$bytes" 2>&1)
	read -ra c1 <<< "$(_gn_reclaim_counters)"
	h1=$(_gn_held_pages)
	ms=$(_gn_field "$out" ms)
	[ -n "$ms" ] || { M "reclaim_${k}_$state=failed"; echo "$out" | head -3; return 1; }
	echo "ZSRECLAIM {\"pair\":$k,\"order\":\"$order\",\"state\":\"$state\",\"bytes\":$bytes,\"ms\":$ms,\"held_before\":$h0,\"held_after\":$h1,\"by_pressure\":$((c1[2] - c0[2])),\"pgsteal\":$((c1[0] - c0[0])),\"allocstall\":$((c1[1] - c0[1])),\"memfree_before\":$f0}"
}
