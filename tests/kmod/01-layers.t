#!/bin/bash
# The layers of kmod/ (kmod/README.md's table, between <!-- layers -->
# markers): every zonesort_*.c and .h includes only its own header, the
# headers every layer may use, and headers of files in lower layers, so
# nothing calls upwards or in a circle; every source file has a layer.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"

K=$ZS_SRCDIR/kmod
table=$(sed -n '/<!-- layers -->/,/<!-- \/layers -->/p' "$K/README.md" |
	sed -n 's/^| \([0-9]\) | `\(zonesort_[a-z_]*\)` |.*/\2 \1/p')
cmp_ok "$(printf '%s\n' "$table" | grep -c .)" -ge 10 "kmod/README.md names the layers of at least 10 files"
declare -A layer
while read -r f l; do
	layer[$f]=$l
done <<< "$table"
# Headers without a .c of their own: definitions every layer may use.
base=" zonesort_abi zonesort_compat zonesort_range zonesort_internal zonesort_nodedir "

missing= bad=
for src in "$K"/zonesort_*.c "$K"/zonesort_*.h; do
	f=$(basename "$src")
	f=${f%.*}
	case $base in *" $f "*) continue ;; esac
	if [ -z "${layer[$f]:-}" ]; then
		missing+=" $f"
		continue
	fi
	for inc in $(sed -n 's/^#include "\(zonesort_[a-z_]*\)\.h"/\1/p' "$src"); do
		[ "$inc" = "$f" ] && continue
		case $base in *" $inc "*) continue ;; esac
		if [ -z "${layer[$inc]:-}" ] || [ "${layer[$inc]}" -ge "${layer[$f]}" ]; then
			bad+=" $(basename "$src")(${layer[$f]})->$inc(${layer[$inc]:-none})"
		fi
	done
done
is "${missing# }" "" "every zonesort_*.c and .h has a layer in kmod/README.md"
is "${bad# }" "" "every file includes only headers of lower layers (or its own, or the common ones)"
# Each .c's exported functions are declared in its own header: no file
# declares another's functions privately to get around the table.
priv=$(grep -ln '^extern .*(' "$K"/zonesort_*.c 2> /dev/null)
is "$priv" "" "no .c declares another file's functions"
done_testing
