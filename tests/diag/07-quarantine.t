#!/bin/bash
# zonesort status shows, per NUMA node, what this project's module holds in
# its quarantine against its limit, and when the sorter last compacted the
# node because the quarantine was full: in words, in JSON and as
# Prometheus gauges that promtool accepts. No module on this machine: the
# kernel interface is a stand-in directory with the module's nodeid and
# quarantine files as the module writes them, and the compaction stamp is
# the one the sorter writes (lib/sorter.c); the real module's file is read
# by the QEMU tests (tests/kmod/51-quarantine-vm.t).
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
need jq promtool
need_file "$ZS_ZONESORT" "zonesort command"
[ "$(id -u)" = 0 ] || { ok "runs as root" false; done_testing; exit 1; }

T=$(mktemp -d /tmp/zs-diag07.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/sysfs" "$T/state" "$T/prom"
: > "$T/sysfs/nodeid"
# A configured cache (this machine has none, and without one there is
# nothing to sort and no quarantine to show); without ways= status skips
# the free-memory scan (a second or more here), which this test has no
# use for and which would stretch its "42 s ago".
ARGS=(sorter=kernel "sysfs=$T/sysfs" "statedir=$T/state" nodes=0 cache_size=64MiB)
Z=$ZS_ZONESORT

# quarantine_file HELD LIMIT [BOOST_S]: without BOOST_S, as a module
# from before boosts writes it.
quarantine_file() {
	printf 'enabled=1\nlimit_permille=125\nlast_node=0\nlast_short_pages=0\n'
	printf 'node=0 held_pages=%s held_blocks=17 limit_pages=%s%s\n' "$1" "$2" "${3:+ boost_s=$3}"
}

# Held pages, no compaction this boot.
quarantine_file 1234 8192 > "$T/sysfs/quarantine"
out=$("$Z" status "${ARGS[@]}" 2>&1)
is "$?" 0 "status runs against the stand-in module"
like "$out" $'\n  quarantine: 1234 of 8192 pages held \\(15\\.1%\\); last compaction for a full quarantine: none this boot' \
	"node 0 shows its quarantine and no compaction"
json=$("$Z" status --json "${ARGS[@]}")
is "$(jq -c '.nodes[] | select(.node == 0) | .quarantine' <<< "$json")" \
	'{"held_pages":1234,"limit_pages":8192,"boost_s":null,"compacted_ago_s":null}' \
	"JSON: the same, boost_s null (a module without boosts), compacted_ago_s null"
quarantine_file 1234 8192 0 > "$T/sysfs/quarantine"
out=$("$Z" status "${ARGS[@]}" 2>&1)
like "$out" $'\n  quarantine: 1234 of 8192 pages held \\(15\\.1%\\); last compaction for a full quarantine: none this boot\n' \
	"a module with boosts, none running: the same line"
is "$("$Z" status --json "${ARGS[@]}" | jq -c '.nodes[0].quarantine.boost_s')" 0 "JSON: boost_s 0"

# A compaction 42 s ago, stamped as the sorter stamps it (boot id, then
# CLOCK_BOOTTIME in ns; /proc/uptime counts the same clock).
boot=$(cat /proc/sys/kernel/random/boot_id)
now_ns=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
echo "boot $boot $((now_ns - 42000000000))" > "$T/state/node0.compacted"
quarantine_file 16384 16384 > "$T/sysfs/quarantine"
out=$("$Z" status "${ARGS[@]}" 2>&1)
like "$out" 'quarantine: 16384 of 16384 pages held \(100\.0%\); last compaction for a full quarantine: 4[2-4] s ago' \
	"a full quarantine and the compaction 42 s ago"
json=$("$Z" status --json "${ARGS[@]}")
num_ok "JSON: compacted_ago_s about 42 ($(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json"))" \
	"$(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json") >= 42 && $(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json") < 45"

# After the sorter's compaction the module doubles the limit until the
# next one may run ("rebuild 0 SECONDS"): its file says the doubled limit
# and the seconds left.
quarantine_file 20000 32768 250 > "$T/sysfs/quarantine"
out=$("$Z" status "${ARGS[@]}" 2>&1)
like "$out" 'quarantine: 20000 of 32768 pages held \(61\.0%\); last compaction for a full quarantine: 4[2-4] s ago; the limit doubled for 250 s more' \
	"a boosted limit says for how long"
is "$("$Z" status --json "${ARGS[@]}" | jq -c '.nodes[0].quarantine | [.held_pages, .limit_pages, .boost_s]')" \
	'[20000,32768,250]' "JSON: held, the doubled limit, boost_s"
quarantine_file 16384 16384 > "$T/sysfs/quarantine"

# Prometheus: held and limit in bytes of the machine's pages.
page=$(getconf PAGESIZE)
"$Z" status --prometheus "$T/prom" "${ARGS[@]}" > /dev/null
is "$?" 0 "status --prometheus runs"
prom=$T/prom/zonesort-status.prom
like "$(grep '^zonesort_quarantine_held_bytes' "$prom")" "numa_node=\"0\"\\} $((16384 * page))\$" \
	"zonesort_quarantine_held_bytes of node 0"
like "$(grep '^zonesort_quarantine_limit_bytes' "$prom")" "numa_node=\"0\"\\} $((16384 * page))\$" \
	"zonesort_quarantine_limit_bytes of node 0"
ok "promtool accepts the file" sh -c "promtool check metrics < '$prom'"

# A stamp from another boot is not this boot's compaction.
echo "boot 00000000-0000-0000-0000-000000000000 5" > "$T/state/node0.compacted"
like "$("$Z" status "${ARGS[@]}" 2>&1)" 'last compaction for a full quarantine: none this boot' \
	"a stamp from another boot is ignored"

# A module without a quarantine (Intel's, or this one built before it):
# no line, JSON null, no gauge.
rm "$T/sysfs/quarantine"
out=$("$Z" status "${ARGS[@]}" 2>&1)
unlike "$out" 'quarantine:' "without a quarantine file no quarantine line"
is "$("$Z" status --json "${ARGS[@]}" | jq -c '.nodes[0].quarantine')" null "JSON: quarantine null"
"$Z" status --prometheus "$T/prom" "${ARGS[@]}" > /dev/null
is "$(grep -c '^zonesort_quarantine_held_bytes{' "$prom")" 0 "no gauge without a quarantine"

# The compaction backend has no quarantine either.
quarantine_file 5 10 > "$T/sysfs/quarantine"
mkdir -p "$T/nodes/node0" && : > "$T/nodes/node0/compact"
out=$("$Z" status sorter=compact "node_sysfs=$T/nodes" "statedir=$T/state" nodes=0 cache_size=64MiB 2>&1)
like "$out" "sorter: compact" "the compaction backend sorts the configured cache's node"
unlike "$out" 'quarantine:' "the compaction backend shows no quarantine"
done_testing
