#!/bin/bash
# Every bad option value is a usage error: exit 2, nothing on stdout, and a
# message that starts with the program name, names the value and says what
# is accepted.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/probe.sh"

# bad ARGS... -- WORD REGEX: exit 2, WORD (the bad value) in the message,
# REGEX (what is accepted) too.
bad() {
	local args=() word regex
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	word=$2 regex=$3
	run "$S" "${args[@]}"
	local what="${args[*]}"
	is "$rc" 2 "'$what': exit 2"
	is "$out" "" "'$what': nothing on stdout"
	like "$err" '^stream-triad: ' "'$what': the message starts with the program name"
	if printf '%s' "$err" | grep -qF -- "$word"; then
		ok "'$what': the message names '$word'" true
	else
		ok "'$what': the message names '$word'" false
		diag "got: $err"
	fi
	like "$err" "$regex" "'$what': the message says what is accepted"
}

size_ok='expected a number with an optional unit .*e\.g\. 64M or 2GiB'
bad --size abc -- "'abc'" "$size_ok"
bad --size 12Q -- "'12Q'" "$size_ok"
bad --size=-5 -- "'-5'" "$size_ok"
bad --size '' -- "--size" "$size_ok"
bad --size 1.5 -- "'1.5'" "$size_ok"
bad --size 0 -- "'0'" 'expected a size such as'
bad -s 64X -- "'64X'" "$size_ok"
bw_ok='expected a number with a unit GB/s, MB/s, TB/s, GiB/s, MiB/s or TiB/s \(a bare number means GB/s\)'
bad --min-bw 5furlongs/s -- "'5furlongs/s'" "$bw_ok"
bad --min-bw 300GB -- "'300GB'" "$bw_ok"
bad --min-bw 300Gb/s -- "'300Gb/s'" "$bw_ok"
bad --min-bw=-1 -- "'-1'" "$bw_ok"
bad --min-bw 0 -- "'0'" 'expected a bandwidth such as 300GB/s'
bad -m fast -- "'fast'" "$bw_ok"
rep_ok='expected an integer from 1 to 2000'
bad --repeats 0 -- "0" "$rep_ok"
bad --repeats=-3 -- "'-3'" "$rep_ok"
bad --repeats 2001 -- "2001" "$rep_ok"
bad --repeats 1.5 -- "'1.5'" "$rep_ok"
bad --repeats ten -- "'ten'" "$rep_ok"
bad -r 99999999999999999999999 -- "'99999999999999999999999'" "$rep_ok"
k_ok='expected a comma-separated list of triad, copy, scale, add or all'
bad --kernels foo -- "'foo'" "$k_ok"
bad --kernels triad,Copy -- "'Copy'" "$k_ok"
bad --kernels triad,,add -- "'triad,,add'" "$k_ok"
bad --kernels '' -- "''" "$k_ok"
bad -k triad, -- "'triad,'" "$k_ok"
bad --isa sse9 -- "'sse9'" 'expected auto, avx512, avx, sse2 or generic'
bad --numa-cpus remote -- "'remote'" 'expected local or all'
bad --memcache-size 16Q -- "'16Q'" "$size_ok"
bad --memcache-size 0 -- "'0'" 'expected a size such as'
bad --frobnicate -- "'--frobnicate'" "Try 'stream-triad --help'"
bad --json=yes -- "'--json=yes'" "Try 'stream-triad --help'"
bad -Z -- "'-Z'" "Try 'stream-triad --help'"
bad --size -- "'--size' needs a value" "Try 'stream-triad --help'"
bad --json extra -- "'extra'" 'takes options only'
done_testing
