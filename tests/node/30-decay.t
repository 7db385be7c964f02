#!/bin/bash
# The decay bench, short: bench/cachenode-decay runs one aging cycle per
# curve (--zonesort=off, on, and a long periodic job, one guest each, Linux
# 6.1, a 128 MiB cache) and must leave JSON lines whose measurements agree
# with each other and with random placement worked out here, and a PNG.
# The long run (>= 100 cycles) and its figures are in bench/REPORT-cachenode.md.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/env.sh"
. "$(dirname "$0")/node-main.sh"
need qemu-system-x86_64 busybox cpio gcc make depmod modprobe xz jq gnuplot file python3
bench=$ZS_SRCDIR/bench/cachenode-decay

# Bad options are refused before anything runs, naming the value.
out=$("$bench" --cycles 0 2>&1)
is "$?" 2 "--cycles 0: usage error"
like "$out" "--cycles '0': want a positive integer" "... naming the value and what is accepted"
out=$("$bench" --modes off,sometimes 2>&1)
like "$out" "--modes 'off,sometimes': want a comma-separated list of off, on, periodic" "an unknown curve is named"
out=$("$bench" --cache 100K 2>&1)
like "$out" "size '100K': want e.g. 256M or 2G" "a bad size is named"

dir=$ZS_BUILDDIR/node-test/decay
mkdir -p "$(dirname "$dir")"
rm -rf "$dir"
t0=$SECONDS
"$bench" --kernel 6.1 --cycles 1 --wall 900 --mem 1G --cache 128M --age-mib 512 --out "$dir" > "$dir.out" 2>&1
rc=$?
diag "$(cat "$dir.out")"
is "$rc" 0 "the bench ran every curve to a clean end ($((SECONDS - t0)) s)"
jsonl=$(ls "$dir"/decay-*.jsonl 2>/dev/null | head -1)
for m in off on periodic; do
	is "$(jq -c "select(.mode == \"$m\") | .cycle" "$jsonl" 2>/dev/null | tr '\n' ' ')" "0 1 " "$m: one line per cycle, the first before any aging"
done
# Random placement of n = S/2 pages over S = 128 MiB / 4 KiB slots,
# worked out here: 1 - (1 - 1/S)^(n - 1).
want=$(awk 'BEGIN { s = 32768; n = s / 2; printf "%.4f", 1 - exp((n - 1) * log(1 - 1 / s)) }')
is "$(jq -r '.random' "$jsonl" | sort -u | awk '{ printf "%.4f\n", $1 }' | tr '\n' ' ')" "$want " \
	"the job's random-placement figure is $want for half the cache"
while read -r m c f fa pa t tp; do
	num_ok "$m cycle $c: the fraction is a fraction ($f)" "$f >= 0 && $f <= 1"
	nd_agree "$m cycle $c: zonesort conflicts --job agrees with the job's own reading" "$t" "$fa" "$(nd_tolerance "$pa" "$tp")"
done < <(jq -r '[.mode, .cycle, .fraction, .fraction_all, .pages_all, .tool, .tool_pages] | map(tostring) | join(" ")' "$jsonl")
unlike "$(cat "$dir"/decay-*-periodic.log | tr -d '\r')" "long_[0-9]+_sort=none" \
	"the long job's allocations each came after a periodic sort"
like "$(file "$dir"/decay-*.png)" "PNG image data, [0-9]+ x [0-9]+" "a PNG is drawn"
done_testing
