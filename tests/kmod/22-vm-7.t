#!/bin/bash
# zonesort.ko on sid's Linux 7.x (built inside the sid release root with sid's gcc; the test fails naming what is missing when that root is not there: scripts/release-root sid makes it) in QEMU (TCG), 1 GiB with a 256 MiB
# direct-mapped memory-side cache described by ACPI HMAT: the guest sees
# the cache, the zonesort command finds it and loads the module, sorted
# allocations come within a point of what any order of the free lists
# allows (an independent bound), bad input is refused, the interval timer
# works, and the module unloads, reloads and sorts again (the stress
# of everything at once is 54-torture.t). See testbed/kmod-main.sh.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/kmod-main.sh"

km_main_test 7
done_testing
