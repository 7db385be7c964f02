#!/bin/bash
# The plugin binary is hardened as a root-run SPANK plugin should be: only
# the SPANK entry points are exported, full RELRO, stack protector and
# fortified string functions.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need readelf nm
need_file "$ZS_PLUGIN" "SPANK plugin"

exported=$(nm -D --defined-only "$ZS_PLUGIN" | awk '{ print $3 }' | sort | tr '\n' ' ')
# Slurm 25.05 and later read slurm_spank_init_failure_mode from the plugin
# (the release is the one of the headers the plugin was built with).
slurm_hex=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]*\).*/\1/p' /usr/include/slurm/slurm_version.h)
failure_mode=
[ $((0x${slurm_hex:-0})) -ge $(((25 << 16) + (5 << 8))) ] && failure_mode="slurm_spank_init_failure_mode "
is "$exported" "plugin_name plugin_type plugin_version slurm_spank_exit slurm_spank_init ${failure_mode}slurm_spank_init_post_opt slurm_spank_job_epilog slurm_spank_job_prolog slurm_spank_task_exit " \
	"only plugin_* and slurm_spank_* symbols are exported"
dyn=$(readelf -d "$ZS_PLUGIN")
like "$dyn" 'BIND_NOW|FLAGS.*NOW' "bound now (-z now)"
like "$(readelf -l "$ZS_PLUGIN")" 'GNU_RELRO' "RELRO segment present"
undef=$(nm -D --undefined-only "$ZS_PLUGIN")
like "$undef" '__stack_chk_fail' "stack protector in use"
like "$undef" '_chk@' "fortified libc functions in use (_FORTIFY_SOURCE)"
unlike "$(readelf -d "$ZS_PLUGIN" | grep -E 'RPATH|RUNPATH')" '.' "no RPATH/RUNPATH"
like "$(readelf -d "$ZS_PLUGIN" | grep NEEDED)" 'libhwloc' "hwloc linked dynamically from the system"
unlike "$(readelf -d "$ZS_PLUGIN" | grep NEEDED)" 'libzonesort' "the project's own library is linked in statically"
done_testing
