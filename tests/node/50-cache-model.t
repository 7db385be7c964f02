#!/bin/bash
# The cache model bench/modelled-bandwidth relies on, short: QEMU's own TCG
# cache plugin (contrib/plugins/cache.c of Debian's qemu source, fetched and
# built by testbed/qemu-cache-plugin.sh against the installed QEMU) must
# index its L2 by guest physical address, or its direct-mapped L2 cannot
# stand for a memory-side cache. One small guest (Linux 6.1) with the
# model attached runs slotpair (testbed/programs/slotpair.c): two pages
# exactly one cache size apart in physical memory read alternately ITER
# times (loop A), two pages one cache size and one page apart 2 * ITER
# times (loop B). The model's per-instruction counts must show loop A's
# two loads missing the L2 on every read and loop B's never after the
# first: collisions follow physical frames. The oracle is the frames the
# guest read from its own pagemap, not the model. The bench's own runs
# (a node guest per mode and workload, minutes each) are not part of CI.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/qemu-cache-plugin.sh"
need qemu-system-x86_64 busybox cpio gcc make depmod xz apt-get pkg-config

# The bench refuses bad options before anything runs, naming the value.
bench=$ZS_SRCDIR/bench/modelled-bandwidth
out=$("$bench" --modes off,sometimes 2>&1)
is "$?" 2 "modelled-bandwidth --modes off,sometimes: usage error"
like "$out" "--modes 'off,sometimes': want a comma-separated list of off, on and periods in seconds" "... naming the value"
like "$("$bench" --miss-gbs 0 2>&1)" "--miss-gbs '0': want GB/s, a positive number" "a bandwidth of 0 is refused"
like "$("$bench" --works stream 2>&1)" "--works 'stream': want a comma-separated list of triad, gups" "an unknown workload is named"

plugin=$(qcp_build)
ok "QEMU's cache plugin built from the installed QEMU's source ($(cat "$QCP_DIR/version" 2> /dev/null))" test -s "$plugin" ||
	{ done_testing; exit 1; }
kver=$(km_kver 6.1)
[ -n "$kver" ] || { _tap_result 1 "a Debian 6.1 kernel with headers is installed"; done_testing; exit 1; }
ko=$(km_build "" "$kver")
ok "module built for $kver (the initramfs carries one)" test -s "$ko"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok "initramfs with slotpair" env KM_GUEST_BINS=slotpair bash -c \
	". '$ZS_SRCDIR/testbed/tap.sh'; . '$ZS_SRCDIR/testbed/env.sh'; . '$ZS_SRCDIR/testbed/vm.sh';
	 km_initramfs '$work/initrd' '$kver' '$ko' '$ZS_SRCDIR/testbed/guest-slotpair.sh'"

iter=1000003 cache_mib=8
log=$work/guest.log counts=$work/model.txt
# L1 of 4 KiB, direct-mapped: the two pages of a pair share its set, so
# every read goes on to the L2; the L2 is the cache the guest's firmware
# describes (8 MiB, direct-mapped, 64-byte lines), one for both vCPUs.
KM_QEMU_ARGS=(-plugin "file=$plugin,cores=1,dcachesize=4096,dassoc=1,dblksize=64,l2=on,l2cachesize=$((cache_mib << 20)),l2assoc=1,l2blksize=64,limit=100000"
	-d plugin -D "$counts")
KM_APPEND="ZS_CACHE_PAGES=$((cache_mib * 256)) ZS_ITER=$iter ZS_BUF_MIB=32"
t0=$SECONDS
km_boot "" "$kver" "$work/initrd" "$log" "192M:${cache_mib}M" 1 900
ok "the guest ran slotpair to its end ($((SECONDS - t0)) s with the model)" grep -q 'ZSTEST step_slotpair=0' <(tr -d '\r' < "$log")
pairs=$(tr -d '\r' < "$log" | sed -n 's/^ZSTEST slotpair_a=\([0-9]*\),\([0-9]*\) slotpair_b=\([0-9]*\),\([0-9]*\) .*/\1 \2 \3 \4/p')
read -r a1 a2 b1 b2 <<< "$pairs"
is "$((a2 - a1)) $((b2 - b1))" "$((cache_mib * 256)) $((cache_mib * 256 + 1))" \
	"the guest's own pagemap: pair A one cache size apart, pair B one page more"
ok "the model printed its per-instruction counts" grep -q '^address, L2 misses, instruction' "$counts"

# section HEADER: "address misses" of the per-instruction list under HEADER.
section() { awk -v h="$1" '$0 == h { on = 1; next } on && /^$/ { exit } on { sub(/,$/, "", $1); sub(/,$/, "", $2); print $1, $2 }' "$counts"; }
section "address, data misses, instruction" > "$work/l1"
section "address, L2 misses, instruction" > "$work/l2"
# Loop A's loads miss the 4 KiB L1 ITER times each, loop B's 2 * ITER
# times (within 1%: interrupts and the loop's first reads).
# Both loops are in slotpair's code: loop A's loads are those of the
# range on the code page of loop B's (another instruction of the guest
# can meet ITER misses by chance, none on that page).
in_range() { awk -v lo="$1" -v hi="$2" '$2 >= lo && $2 <= hi { print $1 }' "$work/l1"; }
loop_b=$(in_range $((2 * iter)) $((2 * iter + iter / 50)))
page=$(printf '%s\n' $loop_b | head -1 | sed 's/...$//')
loop_a=$(in_range "$iter" $((iter + iter / 100)) | grep "^${page:-none}")
is "$(wc -w <<< "$loop_a") $(wc -w <<< "$loop_b")" "2 2" \
	"the model's L1 sees loop A's two loads ITER times and loop B's two 2 * ITER times"
l2_of() { awk -v a="$1" '$1 == a { print $2 }' "$work/l2"; }
for a in $loop_a; do
	v=$(l2_of "$a")
	ok "loop A's load at $a misses the L2 on every read: ${v:-none} of $iter" test -n "$v" -a "${v:-0}" -ge "$iter"
done
for b in $loop_b; do
	v=$(l2_of "$b")
	ok "loop B's load at $b hits the L2 after its first reads: ${v:-none} misses of $((2 * iter))" \
		test -n "$v" -a "${v:-0}" -le $((iter / 100))
done
done_testing
