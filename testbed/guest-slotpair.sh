# Runs inside a vm.sh guest (busybox sh) as /test.sh: slotpair reads two
# pages ZS_DELTA frames apart ZS_ITER times each (testbed/programs/slotpair.c),
# for a cache model attached to QEMU to count. Knobs (kernel command line):
# ZS_BUF_MIB, ZS_DELTA, ZS_ITER.
. /guest-lib.sh
slotpair "${ZS_BUF_MIB:-64}" "$ZS_DELTA" "${ZS_ITER:-1000000}"
M step_slotpair=$?
