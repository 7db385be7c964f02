#!/bin/bash
# The periodic helper (zonesort run) can be killed by the OOM killer and its
# memory is bounded: it resets a negative oom_score_adj, inherited from
# slurmstepd, to 0, keeps a site's positive one, and limits its address
# space to 512 MiB, and it still samples a step's pages within that bound.
# This machine lacks CAP_SYS_RESOURCE, so no process here can lower its
# oom_score_adj below 0 as slurmstepd does: the inherited -1000 is a file
# bound over the helper's /proc/PID/oom_score_adj in a mount namespace of
# its own, which the helper reads and rewrites like the real one.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/diag-lib.sh"
need unshare choom gcc
need_file "$ZS_ZONESORT" "zonesort command"

work=$(mktemp -d /tmp/zs-diag08.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sysfs" "$work/nodes"
# No sorter: the sorts go nowhere (sorter=none). The cache is configured
# (cache_size=): without one the helper has nothing to sort and ends at
# once, as it does on a cache node without its kernel sorter (degraded)
# where the site keeps compaction out of running steps.
policy=( "statedir=$work/state" "sysfs=$work/sysfs" "node_sysfs=$work/nodes" cache_size=64M ways=1 sorter=none )

echo -1000 > "$work/adj"
unshare --mount sh -c 'mount --bind "$1" /proc/$$/oom_score_adj && shift && exec "$@"' sh "$work/adj" \
	"$ZS_ZONESORT" run --every 1 --count 1 "${policy[@]}" > "$work/out" 2>&1
is "$?" 0 "the helper runs with an inherited oom_score_adj of -1000"
is "$(head -1 "$work/adj")" 0 "and resets it to 0: the OOM killer may choose it"

choom -n 300 -- "$ZS_ZONESORT" run --every 3 --count 1 "${policy[@]}" > "$work/out2" 2>&1 &
pid=$!
wait_for 5 test -e "/proc/$pid/limits"
sleep 0.3
is "$(cat "/proc/$pid/oom_score_adj" 2>/dev/null)" 300 "a site's positive oom_score_adj is kept"
is "$(awk '/^Max address space/ { print $4 }' "/proc/$pid/limits" 2>/dev/null)" 536870912 \
	"the helper's address space is limited to 512 MiB"
wait "$pid"

# Within the bound the sampler still measures a step of 256 MiB.
ok "alloc-touch builds" build_alloc "$work"
# The holder must have touched its pages before the first sample: on a busy
# host that takes longer than any fixed pause.
ok "a holder touches 256 MiB" start_alloc 256 for=60
out=$("$ZS_ZONESORT" run --every 1 --count 2 --sample "$$" "${policy[@]}" 2>&1)
kill "$ALLOC_PID" 2>/dev/null
wait "$ALLOC_PID" 2>/dev/null
like "$out" "conflicts fraction=[0-9.]+ random=[0-9.]+ pages=[0-9]+ samples=[12]" "the sampler measures within the bound"
pages=$(sed -n 's/.*conflicts .* pages=\([0-9]*\).*/\1/p' <<< "$out" | tail -1)
num_ok "of at least the 256 MiB held ($pages pages)" "${pages:-0} >= 65536"
done_testing
