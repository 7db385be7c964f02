#!/bin/bash
# A cache-mode node on Debian's 6.12 kernel: a QEMU guest (TCG) with a 256 MiB
# direct-mapped memory-side cache described by ACPI HMAT runs a real
# single-node Slurm (munged, slurmctld, slurmd of the host's packages) with
# the installed plugin ("required zonesort.so sorter=auto
# modprobe=zonesort sample_conflicts=yes", no cache size given) and the
# project's module. The node is aged by jobs, then the same half-cache job
# runs with --zonesort=off, on and a period; each job's conflict fraction
# is measured by the job itself (its own pagemap, testbed/programs/nodejob.c),
# by "zonesort conflicts --job" and, for the period, by the plugin's
# summary line, and the three must agree; sorting must beat no sorting.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/node.sh"
. "$(dirname "$0")/node-main.sh"

nd_main_test 6.12
done_testing
