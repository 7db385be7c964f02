#!/bin/bash
# A wrong plugstack.conf argument is refused with a message naming it,
# before any job starts.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"

work=$(mktemp -d /tmp/zs-t07.XXXXXX)
ZS_PLUGSTACK_ARGS="sorter=none statedir=$work" cluster_start_or_bail
trap 'cluster_stop; rm -rf "$work"' EXIT

check_refused() {	# plugstack-args expected-fragment
	cluster_plugstack "statedir=$work $1"
	local out rc
	out=$(srun --zonesort=on true 2>&1); rc=$?
	cmp_ok "$rc" -ne 0 "srun refuses plugstack.conf '$1'"
	like "$out" "zonesort: plugstack.conf: .*$2" "srun's message for '$1' names it"
	out=$(sbatch --wrap true 2>&1); rc=$?
	cmp_ok "$rc" -ne 0 "sbatch refuses plugstack.conf '$1'"
	like "$out" "zonesort: plugstack.conf: .*$2" "sbatch's message for '$1' names it"
}
check_refused "colour=blue" "unknown argument 'colour=blue'"
check_refused "min_period=abc" "'abc' is not a whole number"
check_refused "sorter=fast" "sorter=fast: expected auto, kernel, compact or none"
check_refused "default=7 min_period=10" "default=7 is below min_period=10"
check_refused "helper=bin/zonesort" "helper=bin/zonesort: expected an absolute path"
check_refused "cache_size=12345" "cache_size=12345: expected a whole number of 4096-byte pages"
check_refused "cache_size=knl[128-001]:16GiB" "cache_size=knl\\[128-001\\]:16GiB: 'knl\\[128-001\\]': the range in \\[128-001\\] is reversed"
check_refused "cache_size=knl*:16GiB,xmax*:64" "cache_size=64: expected a whole number of 4096-byte pages.* \\(entry 'xmax\\*:64' of"
check_refused "nodes=3-1" "nodes=3-1: the range 3-1 is reversed"
check_refused "nodes=0-x" "nodes=0-x"
check_refused "justaword" "'justaword' is not of the form key=value"

cluster_plugstack "statedir=$work sorter=none"
is "$(srun echo fine 2>&1)" "fine" "a correct line works again"
done_testing
