#!/bin/bash
# zonesort conflicts PID agrees exactly with an independent computation from
# the same pagemap (tests/diag/slots-of.py), for several cache geometries,
# with transparent huge pages, and for two processes sharing their pages.
# The processes are stopped (SIGSTOP) while both read, and both reads are
# repeated until the independent one gives the same answer before and
# after zonesort's (compaction by others can move pages meanwhile).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/diag-lib.sh"
need gcc python3 jq pgrep
need_file "$ZS_ZONESORT" "zonesort command"
[ "$(id -u)" = 0 ] || { ok "runs as root (pagemap hides frames from others)" false; done_testing; exit 1; }

T=$(mktemp -d /tmp/zs-diag01.XXXXXX)
trap 'stop_alloc; rm -rf "$T"' EXIT
ok "alloc-touch builds" build_alloc "$T"
ST="statedir=$T/state"

KEYS="pages conflicting_pages excess_pages uncached_pages"
NODE_KEYS="used_slots overfull_slots max_in_slot worst_slots"

# agree DESC CACHE_BYTES WAYS PID...: zonesort and slots-of.py agree.
agree() {
	local desc=$1 cache=$2 ways=$3; shift 3
	local try a b z want got
	for try in 1 2 3 4 5; do
		a=$(python3 "$SLOTS_OF" "$cache" "$ways" "$@") || break
		z=$("$ZS_ZONESORT" conflicts "$@" --cache-size "$cache" --ways "$ways" --json "$ST") || break
		b=$(python3 "$SLOTS_OF" "$cache" "$ways" "$@") || break
		[ "$a" = "$b" ] && break
		diag "pages moved during the reads (try $try); again"
	done
	want=$(json_keys "$a" $KEYS $NODE_KEYS)
	got="$(json_keys "$z" $KEYS)$(json_keys "$(jq -c '.nodes[0]' <<< "$z")" $NODE_KEYS)"
	is "$got" "$want" "$desc: pages, conflicting, excess, slots and worst slots agree exactly"
	num_ok "$desc: the random-placement fraction agrees ($(jq .random_fraction <<< "$z") vs $(jq .random_fraction <<< "$a"))" \
		"$(jq .random_fraction <<< "$z") - $(jq .random_fraction <<< "$a") < 1e-6 && $(jq .random_fraction <<< "$a") - $(jq .random_fraction <<< "$z") < 1e-6"
	local pages conf
	pages=$(jq .pages <<< "$z"); conf=$(jq .conflicting_pages <<< "$z")
	num_ok "$desc: conflict_fraction = conflicting_pages / pages" \
		"$pages > 0 && ($(jq .conflict_fraction <<< "$z") - $conf / $pages)^2 < 1e-12"
}

# --- one process, 256 MiB of 4 KiB pages --------------------------------------
ok "a 256 MiB process is ready" start_alloc 256
kill -STOP "$ALLOC_PID"
agree "64 MiB direct-mapped" 67108864 1 "$ALLOC_PID"
agree "64 MiB 4-way" 67108864 4 "$ALLOC_PID"
agree "1 MiB direct-mapped (256 slots)" 1048576 1 "$ALLOC_PID"
agree "16 GiB direct-mapped (more slots than pages)" 17179869184 1 "$ALLOC_PID"

out=$("$ZS_ZONESORT" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 "$ST")
like "$out" "node 0: cache 64 MiB direct-mapped, 16384 slots of 1 page: [0-9]+ pages" "human output: node, cache and slots"
like "$out" "worst slots: [0-9]+ \([0-9]+\)" "human output: worst slots"
like "$out" "conflicts: [0-9.]+% of the pages share a slot beyond its ways \(random placement: [0-9.]+%\)" \
	"human output: the summary line"
pages=$("$ZS_ZONESORT" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST" | jq .pages)
cmp_ok "$pages" -ge 65536 "all 256 MiB are counted ($pages pages)"
kill -CONT "$ALLOC_PID"
stop_alloc

# --- transparent huge pages -----------------------------------------------------
ok "a 64 MiB process with transparent huge pages is ready" start_alloc 64 thp
kill -STOP "$ALLOC_PID"
thp=$(awk '/^AnonHugePages:/ { print $2 }' /proc/"$ALLOC_PID"/smaps_rollup)
cmp_ok "${thp:-0}" -gt 0 "the kernel backed it with huge pages (AnonHugePages ${thp:-0} kB)"
agree "huge pages, 64 MiB direct-mapped" 67108864 1 "$ALLOC_PID"
# A 2 MiB huge page is 512 consecutive frames: over a 64 MiB direct-mapped
# cache, the 32768 pages of 64 MiB of huge pages cover each slot at most
# as often as 64 MiB / 2 MiB blocks allow; all frames counted.
pages=$("$ZS_ZONESORT" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST" | jq .pages)
cmp_ok "$pages" -ge 16384 "huge pages are counted page by page ($pages pages)"
kill -CONT "$ALLOC_PID"
stop_alloc

# --- two processes sharing their frames -------------------------------------------
ok "a process and its forked child sharing 64 MiB are ready" start_alloc 64 fork
kid=$(children "$ALLOC_PID")
kid=${kid%% *}
like "$kid" '^[0-9]+$' "the child exists ($kid)"
kill -STOP "$ALLOC_PID" "$kid"
agree "two processes" 67108864 1 "$ALLOC_PID" "$kid"
one=$("$ZS_ZONESORT" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST" | jq .pages)
two=$("$ZS_ZONESORT" conflicts "$ALLOC_PID" "$kid" --cache-size 64M --ways 1 --json "$ST" | jq .pages)
num_ok "a frame mapped by both counts once ($one pages for one, $two for both)" "$two < $one * 1.2"
kill -CONT "$ALLOC_PID" "$kid"
stop_alloc

# --- speed --------------------------------------------------------------------------
ok "a 1 GiB process is ready" start_alloc 1024
t0=$(date +%s.%N)
"$ZS_ZONESORT" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST" > "$T/big.json"
rc=$?
t1=$(date +%s.%N)
is "$rc" 0 "conflicts on 1 GiB succeeds"
cmp_ok "$(jq .pages "$T/big.json")" -ge 262144 "all of the 1 GiB is counted"
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
diag "zonesort conflicts on 1 GiB: $secs s (tool's own count $(jq .seconds "$T/big.json") s)"
num_ok "1 GiB is read in well under a second ($secs s)" "$secs < 0.5"
stop_alloc
done_testing
