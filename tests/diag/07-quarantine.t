#!/bin/bash
# zonesort status shows, per NUMA node, what this project's module holds in
# its quarantine against its limit, and when the sorter last compacted the
# node because the quarantine was full: in words, in JSON and as
# Prometheus gauges that promtool accepts; the site's quarantine settings
# reach the module; a module of another interface version is refused. No
# module on this machine: the kernel interface is a stand-in directory
# with the module's files as kmod/zonesort_abi.h names them, and the
# compaction stamp is the one the sorter writes (lib/sorter.c); the real
# module's files are read by the QEMU tests (tests/kmod/51-quarantine-vm.t).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq promtool
need_file "$ZS_ZONESORT" "zonesort command"
[ "$(id -u)" = 0 ] || { ok "runs as root" false; done_testing; exit 1; }

T=$(mktemp -d /tmp/zs-diag07.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/sysfs/quarantine" "$T/sysfs/node0" "$T/state" "$T/prom"
: > "$T/sysfs/nodeid"
echo 3 > "$T/sysfs/interface_version"
printf 'last_conflict_ppm_after=0
' > "$T/sysfs/stats"
printf 'last_node=0
last_short_pages=0
' > "$T/sysfs/quarantine/stats"
# A configured cache (this machine has none, and without one there is
# nothing to sort and no quarantine to show); without ways= status skips
# the free-memory scan (a second or more here), which this test has no
# use for and which would stretch its "42 s ago".
ARGS=(sorter=kernel "sysfs=$T/sysfs" "statedir=$T/state" nodes=0 cache_size=64MiB)
Z=$ZS_ZONESORT

# quarantine_node HELD MAX PEAK: node 0's files as the module
# (interface version 3, kmod/zonesort_abi.h) has them.
quarantine_node() {
	echo "$1" > "$T/sysfs/node0/quarantine_held_pages"
	echo 17 > "$T/sysfs/node0/quarantine_held_blocks"
	echo "$2" > "$T/sysfs/node0/quarantine_max_pages"
	echo "$3" > "$T/sysfs/node0/quarantine_peak_pages"
}

# Held pages, no compaction this boot.
quarantine_node 1234 32768 2000
out=$("$Z" status "${ARGS[@]}" 2>&1)
is "$?" 0 "status runs against the stand-in module"
like "$out" $'\n  quarantine: 1234 pages held \\(4\\.8 MiB\\), at most 32768 \\(128\\.0 MiB, quarantine_max_permille\\), 2000 at the most so far; last compaction for a full quarantine: none this boot' \
	"node 0 shows its quarantine against its bound, and no compaction"
json=$("$Z" status --json "${ARGS[@]}")
is "$(jq -c '.nodes[] | select(.node == 0) | .quarantine' <<< "$json")" \
	'{"held_pages":1234,"max_pages":32768,"peak_pages":2000,"compacted_ago_s":null}' \
	"JSON: the same, compacted_ago_s null"

# A compaction 42 s ago, stamped as the sorter stamps it (boot id, then
# CLOCK_BOOTTIME in ns; /proc/uptime counts the same clock).
boot=$(cat /proc/sys/kernel/random/boot_id)
now_ns=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
echo "boot $boot $((now_ns - 42000000000))" > "$T/state/node0.compacted"
quarantine_node 32768 32768 32768
out=$("$Z" status "${ARGS[@]}" 2>&1)
like "$out" 'quarantine: 32768 pages held .*, at most 32768 .*; last compaction for a full quarantine: 4[2-4] s ago' \
	"a full quarantine and the compaction 42 s ago"
json=$("$Z" status --json "${ARGS[@]}")
num_ok "JSON: compacted_ago_s about 42 ($(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json"))" \
	"$(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json") >= 42 && $(jq '.nodes[0].quarantine.compacted_ago_s' <<< "$json") < 45"

# Prometheus: held and maximum in bytes of the machine's pages.
page=$(getconf PAGESIZE)
"$Z" status --prometheus "$T/prom" "${ARGS[@]}" > /dev/null
is "$?" 0 "status --prometheus runs"
prom=$T/prom/zonesort-status.prom
like "$(grep '^zonesort_quarantine_held_bytes' "$prom")" "numa_node=\"0\"\\} $((32768 * page))\$" \
	"zonesort_quarantine_held_bytes of node 0"
is "$(grep -c 'zonesort_quarantine_limit' "$prom")" 0 "no limit gauge: the module bounds a node by its maximum only"
like "$(grep '^zonesort_quarantine_max_bytes' "$prom")" "numa_node=\"0\"\\} $((32768 * page))\$" \
	"zonesort_quarantine_max_bytes of node 0"
ok "promtool accepts the file" sh -c "promtool check metrics < '$prom'"

# A stamp from another boot is not this boot's compaction.
echo "boot 00000000-0000-0000-0000-000000000000 5" > "$T/state/node0.compacted"
like "$("$Z" status "${ARGS[@]}" 2>&1)" 'last compaction for a full quarantine: none this boot' \
	"a stamp from another boot is ignored"

# The site's quarantine settings reach the module's files before a sort.
printf '0\n' > "$T/sysfs/quarantine/enabled"
: > "$T/sysfs/quarantine/max_permille"
out=$("$Z" sort quarantine=yes quarantine_max_permille=600 "${ARGS[@]}" 2>&1)
is "$(cat "$T/sysfs/quarantine/enabled")/$(cat "$T/sysfs/quarantine/max_permille")" \
	"1/600" "zonesort sort writes quarantine= and quarantine_max_permille= to the module ($out)"
"$Z" sort quarantine=no "${ARGS[@]}" > /dev/null 2>&1
is "$(cat "$T/sysfs/quarantine/enabled")" 0 "... quarantine=no switches it off"
out=$("$Z" sort quarantine_max_permille=1001 "${ARGS[@]}" 2>&1)
is "$?" 2 "quarantine_max_permille=1001 is a usage error"
like "$out" "quarantine_max_permille.*1001" "... naming the value"

# A module of another interface version is refused, naming both.
echo 2 > "$T/sysfs/interface_version"
out=$("$Z" status "${ARGS[@]}" 2>&1)
like "$out" "interface version 2, this zonesort needs 3" "a module of interface version 2 is refused, both versions named"
unlike "$out" 'quarantine:' "... and nothing of it is shown"
echo 3 > "$T/sysfs/interface_version"

# A module without a quarantine (Intel's: no interface_version): no
# line, JSON null, no gauge.
rm -r "$T/sysfs/quarantine" "$T/sysfs/node0" "$T/sysfs/interface_version"
out=$("$Z" status "${ARGS[@]}" 2>&1)
unlike "$out" 'quarantine:' "without a quarantine no quarantine line"
is "$("$Z" status --json "${ARGS[@]}" | jq -c '.nodes[0].quarantine')" null "JSON: quarantine null"
"$Z" status --prometheus "$T/prom" "${ARGS[@]}" > /dev/null
is "$(grep -c '^zonesort_quarantine_held_bytes{' "$prom")" 0 "no gauge without a quarantine"

# The compaction backend has no quarantine either.
mkdir -p "$T/nodes/node0" && : > "$T/nodes/node0/compact"
out=$("$Z" status sorter=compact "node_sysfs=$T/nodes" "statedir=$T/state" nodes=0 cache_size=64MiB 2>&1)
like "$out" "sorter: compact" "the compaction backend sorts the configured cache's node"
unlike "$out" 'quarantine:' "the compaction backend shows no quarantine"
done_testing
