#!/bin/bash
# stream-triad's human and JSON output: --help and --version, the table, and
# one JSON object with every field the health check reads.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq
source "$(dirname "$0")/probe.sh"

run "$S" --help
is "$rc" 0 "--help exits 0"
for o in --size= --repeats= --kernels= --min-bw= --json --no-streaming-stores --isa= \
	--numa --numa-cpus= --memcache-size= --help --version; do
	like "$out" "(^|[ ,])$o" "--help documents $o"
done
like "$out" "Exit status: 0 ok, 1 triad below --min-bw, 2 usage error, 3 failure to" "--help lists the exit codes"
run "$S" --version
is "$rc" 0 "--version exits 0"
like "$out" '^stream-triad \(zonesort\) [0-9]+\.[0-9]+\.[0-9]+$' "--version names program, package and version"
version=${out##* }

# The readable table.
start=$(date +%s.%N)
run "$S"
end=$(date +%s.%N)
is "$rc" 0 "a default run exits 0"
is "$err" "" "a default run writes nothing on stderr"
like "$out" $'\ntriad +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+' "the table has a triad row with best, median and min GB/s"
like "$out" 'validation passed' "the table reports the validation"
like "$out" '(streaming|ordinary) stores \((avx512|avx|sse2|generic) kernels\)' "the table names the stores and kernels used"
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
diag "default run: $wall s wall"
# Only a guard against a hang: speed is measured in bench/. The default
# footprint is twelve times the CPU caches, up to half of MemAvailable
# (a virtual machine may report hundreds of MiB of L3 per core): arrays
# of 10 GiB run 45 s on a quiet 2-CPU machine and twice that loaded.
num_ok "a default run ends within 300 s (took $wall s; bench/REPORT-stream-vs-likwid.md has its speed)" "$wall < 300"

# JSON.
run "$S" --json
is "$rc" 0 "--json exits 0"
is "$err" "" "--json writes nothing on stderr"
is "$(printf '%s\n' "$out" | wc -l)" 1 "--json prints one line"
is "$(printf '%s' "$out" | jq -s 'length')" 1 "--json prints exactly one JSON value"
is "$(printf '%s' "$out" | jq -r 'type')" object "the value is an object"
j=$out
jt() { printf '%s' "$j" | jq -r "$1"; }
for f in version host threads cpus size_bytes array_elements repeats streaming_stores \
	kernels numa validation elapsed_s; do
	is "$(jt "has(\"$f\")")" true "JSON has $f"
done
is "$(jt .version)" "$version" "version is the program's version"
is "$(jt .host)" "$(hostname)" "host is the host name"
is "$(jt '.threads | type')" number "threads is a number"
cmp_ok "$(jt .threads)" -ge 1 "at least one thread"
is "$(jt '.cpus | type')" array "cpus is an array"
is "$(jt '[.cpus[] | type] | unique | join(",")')" number "cpus holds numbers"
is "$(jt '.cpus == (.cpus | sort | unique)')" true "cpus are sorted and distinct"
is "$(jt '.size_bytes == 24 * .array_elements')" true "size_bytes is the footprint of three arrays of doubles"
is "$(jt '.array_elements % 8')" 0 "arrays hold whole cache lines"
# 20 repetitions by default, fewer (at least 3) when 20 would take the
# timed part past 2 s: the passes are measured here from the best time.
passes=$(jt '.size_bytes / (.kernels.triad.best_gbs * 1e9)')
if awk -v p="$passes" 'BEGIN { exit !(21 * p < 1.5) }'; then
	is "$(jt .repeats)" 20 "20 repetitions by default (a pass takes $passes s)"
else
	num_ok "3 to 20 repetitions by default, within the 2 s budget ($(jt .repeats), a pass $passes s)" \
		"$(jt .repeats) >= 3 && $(jt .repeats) <= 20"
fi
is "$(jt '.streaming_stores | type')" boolean "streaming_stores is a boolean"
is "$(jt '.kernels | keys | join(",")')" triad "only the triad runs by default"
for f in best_gbs median_gbs min_gbs; do
	is "$(jt ".kernels.triad.$f | type")" number "kernels.triad.$f is a number"
done
is "$(jt '.kernels.triad | .best_gbs >= .median_gbs and .median_gbs >= .min_gbs and .min_gbs > 0')" true \
	"best >= median >= min > 0"
is "$(jt '.numa')" "[]" "numa is an empty list without --numa"
is "$(jt .validation)" passed "validation passed"
is "$(jt '.elapsed_s | type')" number "elapsed_s is a number"
num_ok "elapsed_s is plausible ($(jt .elapsed_s) s)" "$(jt .elapsed_s) > 0 && $(jt .elapsed_s) < 60"
is "$(jt .min_bw_gbs)" null "min_bw_gbs is null without --min-bw"
# Bandwidth as STREAM counts it: 24 bytes per triad element, 1 GB = 1e9 bytes.
num_ok "best_gbs = 24 x elements / best_s / 1e9" \
	"$(jt '(24 * .array_elements / .kernels.triad.best_s / 1e9) / .kernels.triad.best_gbs') > 0.99 && $(jt '(24 * .array_elements / .kernels.triad.best_s / 1e9) / .kernels.triad.best_gbs') < 1.01"

# Options that change the report.
run "$S" --json --repeats 3 --size 64M
is "$rc" 0 "--repeats 3 --size 64M exits 0"
is "$(printf '%s' "$out" | jq .repeats)" 3 "repeats reports --repeats"
run "$S" --json --kernels all --size 64M
is "$(printf '%s' "$out" | jq -r '.kernels | keys_unsorted | join(",")')" "triad,copy,scale,add" "--kernels all runs the four kernels, triad first"
is "$(printf '%s' "$out" | jq '[.kernels[] | select(.best_gbs > 0)] | length')" 4 "each kernel has a bandwidth"
# copy and scale move 16 bytes per element, add 24.
for k in copy:16 scale:16 add:24; do
	r=$(printf '%s' "$out" | jq "(${k#*:} * .array_elements / .kernels.${k%:*}.best_s / 1e9) / .kernels.${k%:*}.best_gbs")
	num_ok "${k%:*} counts ${k#*:} bytes per element" "$r > 0.99 && $r < 1.01"
done
run "$S" --json --kernels copy,scale --size 64M
is "$(printf '%s' "$out" | jq -r '.kernels | keys | join(",")')" "copy,scale,triad" "--kernels copy,scale adds them to the triad"
run "$S" --json --no-streaming-stores --size 64M
is "$(printf '%s' "$out" | jq .streaming_stores)" false "--no-streaming-stores reports streaming_stores false"
if grep -qw sse2 /proc/cpuinfo; then
	run "$S" --json --size 64M
	is "$(printf '%s' "$out" | jq .streaming_stores)" true "streaming stores by default on a CPU with SSE2"
fi
done_testing
