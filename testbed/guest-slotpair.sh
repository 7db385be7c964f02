# Runs inside a vm.sh guest (busybox sh) as /test.sh: slotpair
# (testbed/programs/slotpair.c) with ZS_BUF_MIB, ZS_CACHE_PAGES and
# ZS_ITER from the kernel command line, for a cache model attached to
# QEMU to count.
. /guest-lib.sh
slotpair "${ZS_BUF_MIB:-32}" "$ZS_CACHE_PAGES" "${ZS_ITER:-1000003}"
M step_slotpair=$?
