#!/bin/bash
# Fuzzes the parsers (libFuzzer, clang from Debian) for a bounded time:
# --zonesort values, plugstack.conf words, sizes, bandwidths, NUMA node
# lists, the periodic helper's report lines and the cache-layout copy.
# ASan and UBSan catch memory errors; each target also checks a property
# (fuzz_parsers.c). ZS_FUZZ_SECONDS sets the time per target (default 5).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need clang
need_file "$ZS_BUILDDIR/config.h" "configured build tree"

seconds=${ZS_FUZZ_SECONDS:-5}
work=$(mktemp -d /tmp/zs-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$ZS_SRCDIR
bin=$work/fuzz_parsers
# shellcheck disable=SC2046
if clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$ZS_BUILDDIR" -I"$src/lib" -I"$src/kmod" $(pkg-config --cflags hwloc) \
	-o "$bin" "$src/tests/fuzz/fuzz_parsers.c" "$src"/lib/*.c \
	$(pkg-config --libs hwloc) -lnuma -lm > "$work/build.log" 2>&1; then
	ok "the fuzzer builds" true
else
	ok "the fuzzer builds" false
	sed 's/^/# /' "$work/build.log" | tail -20
	done_testing
	exit 1
fi
names=(zonesort-values policy-words sizes bandwidths node-lists report-lines memcache-copy)
seeds=("on" "min_period=10" "1.5GiB" "300GB/s" "0-3,6" "rounds=1 sorted=1 recent=0 busy=0 failed=0 seconds=0.1 compacted=0 fallback=0 degraded=0 churn=0"
	"boot b v2
0 17179869184 64 1 1 0 0
")
for i in "${!names[@]}"; do
	corpus=$work/corpus-$i
	mkdir -p "$corpus"
	printf '%s' "${seeds[$i]}" > "$corpus/seed"
	ZS_FUZZ_TARGET=$i "$bin" -max_total_time="$seconds" -max_len=256 -timeout=5 "$corpus" \
		> "$work/run-$i.log" 2>&1
	rc=$?
	runs=$(grep -Eo 'Done [0-9]+ runs' "$work/run-$i.log" | grep -Eo '[0-9]+')
	if ! is "$rc" 0 "fuzzing ${names[$i]} for $seconds s finds nothing (${runs:-0} inputs)"; then
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$work/run-$i.log" | head -5 | sed 's/^/# /'
	fi
done
done_testing
