#!/bin/bash
# The decay bench, short: bench/cachenode-decay runs one aging cycle per
# curve (--zonesort=off and a long periodic job, one guest each, Linux
# 6.1, a 128 MiB cache, the package's plugstack.conf line, the kernel's
# own per-CPU list setting, each allocation at a seeded random delay after
# its sort; the "on" curve's job is the node suite's 10-node tests') and must leave
# JSON lines whose measurements agree with each other and with random
# placement worked out here, a quarantine never above its bound, one timed
# pair of allocations with and without held pages, the job's other
# pages counted by what maps them, and a PNG. The long
# run (100 cycles) and its figures are in bench/REPORT-cachenode-decay.md.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
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
out=$("$bench" --quarantine-max-permille 1001 2>&1)
like "$out" "--quarantine-max-permille '1001': want 0-1000" "the module's parameters take 0-1000 per mille"
out=$("$bench" --kernel 5.10 2>&1)
like "$out" "--kernel '5.10': want 6.1, 6.12 or 7" "an unknown kernel series is named"

# The job's reader is the independent measurement: it computes slots with
# its own formula and includes nothing of the project.
is "$(grep -c '^#include "' "$ZS_SRCDIR/testbed/programs/nodejob.c")" 0 "nodejob.c includes no project header"

dir=$ZS_BUILDDIR/node-test/decay
mkdir -p "$(dirname "$dir")"
rm -rf "$dir"
t0=$SECONDS
"$bench" --kernel 6.1 --modes off,periodic --cycles 1 --wall 900 --mem 1G --cache 128M --age-mib 512 --reclaim-pairs 1 \
	--seed 7 --out "$dir" > "$dir.out" 2>&1
rc=$?
diag "$(cat "$dir.out")"
is "$rc" 0 "the bench ran every curve to a clean end ($((SECONDS - t0)) s)"
jsonl=$(ls "$dir"/decay-*.jsonl 2>/dev/null | head -1)
is "$(jq -r 'select(.run) | .run.plugstack' "$jsonl" 2>/dev/null)" \
	"$(sed -n 's/^#required [^ ]*zonesort\.so *//p' "$ZS_SRCDIR/etc/plugstack.conf.zonesort.in")" \
	"the run's plugstack.conf arguments are the package's line"
is "$(jq -r 'select(.run) | "\(.run.pcp_fraction) \(.run.delay_max_ms) \(.run.delay_seed)"' "$jsonl" 2>/dev/null)" \
	"kernel default 10000 7" "the run leaves the per-CPU lists alone and records its delays' bound and seed"
# The delays of seed 7 for rounds 1 and 2, worked out here as the guest
# draws them (awk's srand(seed * 100003 + round), one draw, of 10000 ms).
want=$(for k in 1 2; do awk -v s=7 -v k=$k 'BEGIN { srand(s * 100003 + k); printf "%d ", rand() * 10000 }'; done)
is "$(jq -r 'select(.mode == "periodic") | .delay_ms' "$jsonl" 2>/dev/null | tr '\n' ' ')" "$want" \
	"each periodic round allocated at its seeded delay after the sort"
for m in off periodic; do
	is "$(jq -c "select(.mode == \"$m\") | .cycle" "$jsonl" 2>/dev/null | tr '\n' ' ')" "0 1 " "$m: one line per cycle, the first before any aging"
done
# Random placement of n = S/2 pages over S = 128 MiB / 4 KiB slots,
# worked out here: 1 - (1 - 1/S)^(n - 1).
want=$(awk 'BEGIN { s = 32768; n = s / 2; printf "%.4f", 1 - exp((n - 1) * log(1 - 1 / s)) }')
# Only the cycle lines (those with a mode) carry figures; the file also
# holds a line describing the run, the guests' and the host's load.
is "$(jq -r 'select(.mode) | .random' "$jsonl" | sort -u | awk '{ printf "%.4f\n", $1 }' | tr '\n' ' ')" "$want " \
	"the job's random-placement figure is $want for half the cache"
while read -r m c f fa pa t tp; do
	num_ok "$m cycle $c: the fraction is a fraction ($f)" "$f >= 0 && $f <= 1"
	nd_agree "$m cycle $c: zonesort conflicts --job agrees with the job's own reading" "$t" "$fa" "$(nd_tolerance "$pa" "$tp")"
done < <(jq -r 'select(.mode) | [.mode, .cycle, .fraction, .fraction_all, .pages_all, .tool, .tool_pages] | map(tostring) | join(" ")' "$jsonl")
# The job's pages besides its buffer (its libraries, heap, stack: the
# job's own count by what maps them), on the sorted node and the
# unsorted one, for the record: on the sorted node they share a slot with
# the fresh buffer in some runs not at all (0 of 685) and in others more
# than random placement has it (356 of 636, 583 of 651), with and without
# occupied_slots; an unsorted node's job about as random placement has it
# (a buffer page in 39% of the slots). Not asserted until that is
# explained (bench/REPORT-cachenode-decay.md, "The job's other pages").
shared() { jq -r "select(.mode == \"$1\" and .cycle == 1) | .kinds | [.exe, .lib, .anon] |
	\"\\(map(.[2]) | add) \\(map(.[0]) | add)\"" "$jsonl" 2>/dev/null; }
read -r pshared pother <<< "$(shared periodic)"
read -r oshared oother <<< "$(shared off)"
diag "cycle 1, the job's other pages sharing a slot with its buffer: periodic $pshared of $pother, off $oshared of $oother"
num_ok "off cycle 1: the job's other pages were counted by what maps them ($oother)" "\"$oother\" != \"\" && $oother > 100"
# The module's bound holds in every reading (held now, and the most held
# at any instant), for every curve that loaded the module.
is "$(jq -c 'select(.max_pages != null and (.held_pages > .max_pages or .peak_pages > .max_pages)) | .cycle' "$jsonl")" "" \
	"the quarantine never held more than quarantine_max_permille of the cache"
is "$(jq -r 'select(.mode == "periodic") | .max_pages' "$jsonl" | sort -u)" 16384 \
	"... whose default is 500 per mille of the 32768 pages"
reclaim=$(ls "$dir"/reclaim-*.jsonl 2>/dev/null | head -1)
is "$(jq -r 'select(.pair) | "\(.order):\(.state)"' "$reclaim" 2>/dev/null | tr '\n' ' ')" "free-first:free free-first:held " \
	"one allocation timed with nothing held, then one with what a sort took"
num_ok "... which held pages ($(jq -r 'select(.state == "held") | .held_before' "$reclaim" 2>/dev/null))" \
	"$(jq -r 'select(.state == "held") | .held_before' "$reclaim" 2>/dev/null || echo 0) > 0"
num_ok "... each with a time ($(jq -r 'select(.pair) | .ms' "$reclaim" 2>/dev/null | tr '\n' ' ')ms)" \
	"$(jq -s '[.[] | select(.pair) | .ms | select(. > 0)] | length' "$reclaim" 2>/dev/null || echo 0) == 2"
unlike "$(cat "$dir"/decay-*-periodic.log | tr -d '\r')" "long_[0-9]+_sort=none" \
	"the long job's allocations each came after a periodic sort"
like "$(file "$dir"/decay-*.png)" "PNG image data, [0-9]+ x [0-9]+" "a PNG is drawn"
done_testing
