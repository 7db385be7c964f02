#!/bin/bash
# zonesort.ko on Debian's 6.12 kernel in QEMU (TCG) with a 256 MiB
# direct-mapped memory-side cache described by ACPI HMAT: the guest sees
# the cache, the zonesort command finds it and loads the module, sorting
# removes cache-slot collisions of fresh allocations (measured through
# /proc/self/pagemap), bad input is refused, the interval timer works, and
# a minute of sorting under allocation stress leaves the kernel clean.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/env.sh"
. "$(dirname "$0")/vm.sh"
. "$(dirname "$0")/vm-main.sh"

km_main_test 6.12
done_testing
