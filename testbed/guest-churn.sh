# Guest side of bench/churn-effect (and its short case in the node suite):
# a cache-mode node ages (gn_age: jobs with --zonesort=off), then for each
# churn level in ZS_LEVELS one more aging cycle and one job with
# --zonesort=ZS_MODE whose start-up churns that many times the cache before
# its main buffer (testbed/programs/churnjob.c, ZS_CHURNJOB): chunks of
# 1-512 pages up to LEVEL x the cache, touched, a random half unmapped,
# the rest kept; then ZS_GAP_MS of set-up; then half the cache, measured
# from its pagemap, and a triad over it (ZS_PASSES passes plus a warm-up).
# With ZS_MODEL=1 (a cache model attached to QEMU) each level runs its own
# copy of the program with 5 + its index passes, so the model's
# per-instruction counts of the three jobs stay apart. With ZS_DIAG=1 (a
# test build of the module) the job pauses after its sorts and after its
# churn; the free lists are dumped each time and the module's conflict
# estimate read before the buffer, and testbed/churn-provenance.py says
# where each buffer page came from. One line per job:
#   ZSCHURN {"mode":M,"level":L,"job":{churnjob's fields},"sorts":N,...}
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"

printf 'ZSCHURN {"guest":{"mode":"%s","kernel":"%s","slurm":"%s","thp":"%s","pcp_high_fraction":"%s"}}\n' \
	"$ZS_MODE" "$(uname -r)" "$(slurmd -V 2> /dev/null | awk '{ print $2 }')" \
	"$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)" \
	"$(cat /proc/sys/vm/percpu_pagelist_high_fraction)"

if [ "${ZS_MODEL:-0}" = 1 ]; then
	# A cache model slows the guest down about tenfold: Slurm's messages
	# get the time they need (srun gave up launching at the default 10 s).
	ZS_CLUSTER_TIMEOUT=600 ZS_PLUGIN=zonesort.so ZS_PLUGSTACK_ARGS="$ZS_PLUGSTACK" \
		gn_step cluster 600 cluster_start MessageTimeout=120 || exit 1
else
	gn_step cluster 120 gn_cluster_start || exit 1
fi
Z=/sys/kernel/zone_sort_free_pages
if [ -n "${ZS_OVERFLOW:-}" ]; then
	# The order of pages beyond the cache's capacity (the module's
	# overflow=), set at load, before any sort; with --zonesort=off the
	# module sorts nothing by itself.
	gn_step modprobe_overflow 60 modprobe zonesort overflow="$ZS_OVERFLOW" || exit 1
	M "overflow=$(cat /sys/module/zonesort/parameters/overflow)"
fi
if [ "${ZS_DIAG:-0}" = 1 ]; then
	# The dump needs the module, which an unsorted node would not load:
	# loaded here (the firmware's cache), it sorts nothing by itself.
	gn_step modprobe 60 modprobe zonesort || exit 1
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
fi
for c in $(seq 1 "$ZS_AGE_CYCLES"); do
	gn_step "age_$c" 600 gn_age "$c" || exit 1
done

# _cj_stat KEY: a value of the module's stats (0 without the module).
_cj_stat() { sed -n "s/^$1=//p" $Z/stats 2> /dev/null | grep . || echo 0; }
_cj_qstat() { sed -n "s/^$1=//p" $Z/quarantine/stats 2> /dev/null | grep . || echo 0; }
_cj_json() { tr ' ' '\n' <<< "$1" | awk -F= 'NF == 2 && $1 != "" {
	v = $2; if (v !~ /^-?[0-9]+(\.[0-9]+)?$/) v = "\"" v "\""
	printf "%s\"%s\":%s", n++ ? "," : "", $1, v } END { if (!n) printf "" }'; }
_cj_wait_file() {
	local f=$1 pid=$2 t=0
	until [ -e "$f" ]; do
		kill -0 "$pid" 2> /dev/null || return 1
		sleep 0.1
		t=$((t + 1))
		[ $t -lt 6000 ] || return 1
	done
}

failed=0 k=0
for level in $ZS_LEVELS; do
	k=$((k + 1))
	gn_step "age_level_$k" 600 gn_age $((ZS_AGE_CYCLES + k)) || { failed=1; break; }
	d=$(mktemp -d "$GN_WORK/churn.XXXXXX")
	chmod 755 "$d"
	bin=$ZS_CHURNJOB passes=$ZS_PASSES
	if [ "${ZS_MODEL:-0}" = 1 ]; then
		bin=$GN_WORK/churnjob-$k
		cp "$ZS_CHURNJOB" "$bin" && chmod 755 "$bin"
		passes=$((5 + k))
	fi
	churn=$(awk -v l="$level" -v c="$ZS_CACHE_BYTES" 'BEGIN { printf "%d", l * c }')
	seed=$((ZS_SEED * 1000 + k))
	s0=$(_cj_stat sorts) ns0=$(_cj_stat sort_ns_total) rel0=$(_cj_qstat released_pages_total)
	diag=
	if [ "${ZS_DIAG:-0}" = 1 ]; then
		touch "$d/pause" "$d/keep-pfns"
	fi
	CHURNJOB_SORTS=$Z/stats timeout --kill-after=5 900 srun -J "churn-$k" -o "$d/out" -e "$d/err" --zonesort="$ZS_MODE" \
		"$bin" "$d" "$churn" "$seed" "$ZS_HALF" "$ZS_CACHE_BYTES" "$passes" "${ZS_GAP_MS:-0}" &
	pid=$!
	if [ "${ZS_DIAG:-0}" = 1 ]; then
		held0= ppm1= held1= ppm_ms=
		if _cj_wait_file "$d/started" $pid; then
			cp /sys/kernel/debug/zonesort/freelists "$d/fl0"
			held0=$(cat $Z/node0/quarantine_held_pages 2> /dev/null)
			touch "$d/go.0"
		fi
		if _cj_wait_file "$d/churned" $pid; then
			t0=$(_gn_uptime_ns)
			ppm1=$(cat $Z/node0/conflicts_half_ppm 2> /dev/null)
			ppm_ms=$((($(_gn_uptime_ns) - t0) / 1000000))
			held1=$(cat $Z/node0/quarantine_held_pages 2> /dev/null)
			cp /sys/kernel/debug/zonesort/freelists "$d/fl1"
			touch "$d/go.1"
		fi
	fi
	wait $pid
	rc=$?
	line=$(sed -n 's/^CHURNJOB //p' "$d/out" | tail -1)
	if [ $rc -ne 0 ] || [ -z "$line" ]; then
		M "step_churn_$k=${rc}"
		sed 's/^/# /' "$d/err" | head -5
		failed=1
		continue
	fi
	if [ "${ZS_DIAG:-0}" = 1 ]; then
		prov=$(python3 "$ZS_SRCDIR/testbed/churn-provenance.py" "$d" $((ZS_CACHE_BYTES / 4096)) 2>&1)
		: > "$d/pagetypeinfo"
		: > "$d/kpageflags"
		cp "$d/fl1" "$d/freelists"
		bound=$("$ZS_ZSBOUND" "$d" $((ZS_CACHE_BYTES / 4096)) 1 $((ZS_HALF / 4096)) \
			"$(_gn_field "$line" cpu0)" base 2>&1 | tr '\n' ' ')
		diag=",\"diag\":{$(_cj_json "$prov"),\"fl1\":{$(_cj_json "$bound")},\"conflicts_half_ppm_before_buffer\":${ppm1:-null},\"conflicts_read_ms\":${ppm_ms:-null},\"held_after_sort\":${held0:-null},\"held_before_buffer\":${held1:-null}}"
	fi
	printf 'ZSCHURN {"mode":"%s","level":%s,"churn_bytes":%s,"seed":%s,"gap_ms":%s,"job":{%s},"sorts":%s,"sort_ns":%s,"released_pages":%s,"last_allcpu_ops":%s,"quarantine_held":%s%s}\n' \
		"$ZS_MODE" "$level" "$churn" "$seed" "${ZS_GAP_MS:-0}" "$(_cj_json "$line")" \
		$(($(_cj_stat sorts) - s0)) $(($(_cj_stat sort_ns_total) - ns0)) \
		$(($(_cj_qstat released_pages_total) - rel0)) "$(_cj_qstat last_allcpu_ops)" \
		"$(cat $Z/node0/quarantine_held_pages 2> /dev/null || echo null)" "$diag"
	rm -rf "$d"
done
M levels_done=$k
gn_cap status_after zonesort status
gn_step cluster_stop 120 cluster_stop
M uptime=$(cut -d' ' -f1 /proc/uptime)
exit $failed
