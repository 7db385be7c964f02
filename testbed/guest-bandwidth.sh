# Guest side of bench/modelled-bandwidth (and its short run in the node
# suite): a cache-mode node whose QEMU runs a cache model (QEMU's TCG
# cache plugin) ages ZS_AGE_CYCLES cycles (gn_age: jobs with
# --zonesort=off), then runs one job with --zonesort=ZS_MODE: membw
# (testbed/programs/membw.c) doing ZS_WORK (triad, gups, or none: the run
# to subtract) over half the cache, ZS_PASSES times. The model counts
# everything the guest did; the host takes a run without the workload
# from one with it. Prints the job's line (ZSTEST membw_...) and
#   ZSTEST bw_rc=N bw_mode=M bw_s=S
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"

printf 'ZSTEST bw_kernel=%s bw_slurm=%s\n' "$(uname -r)" "$(slurmd -V 2> /dev/null | awk '{ print $2 }')"
gn_step cluster 120 gn_cluster_start || exit 1
for c in $(seq 1 "$ZS_AGE_CYCLES"); do
	gn_age "$c" || exit 1
done
M aged="$ZS_AGE_CYCLES"
t0=$(cut -d' ' -f1 /proc/uptime)
out=$(timeout --kill-after=5 "${ZS_JOB_LIMIT_S:-7200}" srun -J bw --zonesort="$ZS_MODE" \
	"$ZS_MEMBW" "$ZS_WORK" "$ZS_HALF" "$ZS_PASSES" "$ZS_CACHE_BYTES" 2>&1)
rc=$?
echo "$out" | grep '^ZSTEST membw_' || echo "$out" | head -5 | sed 's/^/# /'
M bw_rc=$rc bw_mode="$ZS_MODE" bw_s="$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')"
[ $rc -eq 0 ]
