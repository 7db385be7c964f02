#!/bin/bash
# Results are validated as STREAM validates them: a wrong element makes the
# probe fail with exit 4 and one line naming it. ZS_STREAM_CORRUPT=1 is the
# probe's test hook that spoils one element after the timed repetitions.
# Every kernel set this CPU can run computes correct results.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq
source "$(dirname "$0")/probe.sh"

for k in triad all copy,scale add; do
	run env ZS_STREAM_CORRUPT=1 "$S" --json --size 96M --repeats 3 --kernels "$k"
	is "$rc" 4 "a corrupted element fails validation with exit 4 (--kernels $k)"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "one line on stderr (--kernels $k)"
	like "$err" '^stream-triad: validation failed: a\[[0-9]+\] = [-0-9.e+]+ but [-0-9.e+]+ was expected \(1 of [0-9]+ elements wrong\)$' \
		"the line names the wrong element, its value and the expected one (--kernels $k)"
	is "$(printf '%s' "$out" | jq -r .validation)" failed "JSON says validation failed (--kernels $k)"
done
run env ZS_STREAM_CORRUPT=1 "$S" --size 96M --repeats 2
is "$rc" 4 "exit 4 with the table too"
like "$out" 'validation FAILED' "the table reports the failure"
run env ZS_STREAM_CORRUPT=1 "$S" --json --size 96M --repeats 2 --isa generic
is "$rc" 4 "the plain C kernels are validated too"
run env ZS_STREAM_CORRUPT=1 "$S" --json --size 96M --repeats 2 --min-bw 1000TB/s
is "$rc" 4 "a validation failure wins over a bandwidth below --min-bw"
run env ZS_STREAM_CORRUPT=0 "$S" --json --size 96M --repeats 2
is "$rc" 0 "ZS_STREAM_CORRUPT=0 leaves the results alone"

# Every kernel set the CPU has, with and without streaming stores, every
# kernel. 999844 bytes are 5207 cache lines per array (an odd number, and
# the 100 bytes left over are dropped): some thread's share then ends with
# a single line, which the kernels finish in their scalar tail.
supported=()
for isa in generic sse2 avx avx512; do
	run "$S" --json --size 1M --repeats 1 --isa "$isa"
	if [ "$rc" -eq 0 ]; then
		supported+=("$isa")
	else
		is "$rc" 2 "--isa $isa refused with exit 2 on this CPU"
		like "$err" "cannot run '$isa' kernels" "the refusal names $isa"
	fi
done
diag "kernel sets this CPU runs: ${supported[*]}"
cmp_ok "${#supported[@]}" -ge 1 "at least the generic kernels run"
for isa in "${supported[@]}"; do
	for nt in "" --no-streaming-stores; do
		for size in 96M 999844; do
			run "$S" --json --size "$size" --repeats 7 --kernels all --isa "$isa" $nt
			is "$rc:$(printf '%s' "$out" | jq -r .validation)" "0:passed" "--isa $isa $nt --size $size: all kernels validate"
		done
		is "$(printf '%s' "$out" | jq -r .isa)" "$isa" "isa reports $isa"
		want=true
		[ "$isa" = generic ] || [ -n "$nt" ] && want=false
		is "$(printf '%s' "$out" | jq .streaming_stores)" "$want" "--isa $isa $nt: streaming_stores $want"
	done
done

# The longest run the validation allows stays finite and valid.
run "$S" --json --size 1M --repeats 2000 --kernels all
is "$rc:$(printf '%s' "$out" | jq -r .validation)" "0:passed" "2000 repetitions of all kernels validate"
done_testing
