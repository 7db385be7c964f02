#!/bin/bash
# A cache-mode node on the newest stack: sid's Linux 7.x with sid's Slurm
# 26.05, hwloc and C library (the sid release root, scripts/release-root
# sid; the test fails naming it when it is missing), the project built
# inside that root. Otherwise as 10-node-6.1.t: a QEMU guest (TCG) with a
# 256 MiB direct-mapped memory-side cache described by ACPI HMAT runs a
# real single-node Slurm with the installed plugin, which finds the cache
# through hwloc and loads the project's module; the node is aged, the same
# half-cache job runs with --zonesort=off, on and a period, measured three
# ways that must agree, and sorting must beat no sorting.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/node.sh"
. "$(dirname "$0")/node-main.sh"

nd_main_test 7
done_testing
