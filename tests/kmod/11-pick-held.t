#!/bin/bash
# The quarantine policy (kmod/zonesort_quarantine_policy.c, compiled in
# user space) on blocks an earlier sort took and still holds: a held block
# that still collides stays held (taken before any free block), one that
# no longer collides is given back, and a list without held blocks is
# picked as before; in the huge-page lists a block colliding with base
# pages is taken while the base-page allocation still reaches them. Small cases worked out by hand (tests/kmod/pickheld.c).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need gcc

mkdir -p "$KM_WORK"
ok "pickheld builds with the module's policy code (-Wall -Wextra -Werror)" \
	gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$KM_WORK/pickheld" "$ZS_SRCDIR/tests/kmod/pickheld.c" \
	"$ZS_SRCDIR/kmod/zonesort_policy.c" "$ZS_SRCDIR/kmod/zonesort_quarantine_policy.c" || {
	done_testing
	exit 1
}
out=$("$KM_WORK/pickheld")
rc=$?
grep '^# ' <<< "$out" | while read -r l; do diag "${l#\# }"; done
is "$rc" 0 "pickheld exits 0"
while read -r line; do
	case $line in
	"ok "*) ok "${line#ok [0-9]* - }" true ;;
	"not ok "*) ok "${line#not ok [0-9]* - }" false ;;
	esac
done <<< "$out"
cmp_ok "$(grep -c '^ok \|^not ok ' <<< "$out")" -eq 24 "all 24 checks ran"
done_testing
