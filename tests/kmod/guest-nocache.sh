# Runs inside a QEMU guest whose firmware describes no memory-side cache
# (/test.sh of 30-nocache.t, 512 MiB): the module must refuse to sort, say
# why, and sort once a cache size is given; its tables are allocated when
# it loads, so a sort on a node short of memory neither fails nor wakes
# the OOM killer, and tables that do not fit make the parameter write fail
# with ENOMEM; a walk that follows a block moved to another list (staged
# by the test build's hook) never moves that block back. Markers: see
# testbed/vm-guest-lib.sh.
. /guest-lib.sh

mount -t debugfs debugfs /sys/kernel/debug
M memory_side_cache=$(ls /sys/devices/system/node/node0/memory_side_cache 2> /dev/null | grep -c index)
step status 60 zonesort status
cap status status
refuse insmod_bad 30 insmod /zonesort.ko cache_size=12345
step insmod 30 insmod /zonesort.ko
step nodeid_nocache 60 zstest write $Z/nodeid 0
M nodeid_nocache=$(out nodeid_nocache) failed=$(stat failed)
step conflicts 30 zstest read $Z/node0/conflicts_half_ppm
M conflicts=$(out conflicts)
step set_size 10 zstest write $P/cache_size 67108864
step nodeid_set 60 zstest write $Z/nodeid 0
M set_size=$(out set_size) nodeid_set=$(out nodeid_set) sorts=$(stat sorts)
step rmmod 30 rmmod zonesort
# 96 MiB: three times a power of two.
step insmod_96m 30 insmod /zonesort.ko cache_size=100663296
step nodeid_96m 60 zstest write $Z/nodeid 0
M nodeid_96m=$(out nodeid_96m) slots_96m=$(stat scratch_slots)
step rmmod_96m 30 rmmod zonesort
step insmod_param 30 insmod /zonesort.ko cache_size=134217728 ways=2
step nodeid_param 60 zstest write $Z/nodeid 0
M nodeid_param=$(out nodeid_param) ways=$(cat $P/ways)
step rmmod_param 30 rmmod zonesort

# Memory pressure. The test build, loaded for a 256 MiB cache, allocates
# its tables now; then one process takes memory until an allocation of the
# kernel has 256 pages left above the min watermarks (the sort of old
# needed 640 for a 256 MiB cache), sorts, asks for a 1 GiB cache (tables
# that cannot fit now) and gives the memory back.
step insmod_hooks 30 insmod /zonesort-hooks.ko cache_size=268435456
M scratch_slots=$(stat scratch_slots)
step pressed 300 zstest pressed 256 $Z/nodeid $P/cache_size 1073741824
M $(sed 's/\([a-z_]*\)=/pressed_\1=/g' $OUT/pressed) cache_size_after_grow=$(cat $P/cache_size)
step grow 30 zstest write $P/cache_size 1073741824
M grow=$(out grow) scratch_slots_grown=$(stat scratch_slots)
step shrink 30 zstest write $P/cache_size 268435456

# A walk resumes from a block that an older kernel moved to another list
# meanwhile (the hook stages it): the block must stay where it was moved.
# Aging first makes lists longer than one lock hold.
bg age 600 zstest age 200 1 5 /tmp/aged
holder=$BG
ready age /tmp/aged $holder 300
# The block can be allocated or merged before the sort ends ("gone": the
# race showed nothing); then the race is staged again, at most four times.
# The quarantine is off here: taking a block isolates its pageblock, and
# the kernel's isolation moves every free block of that pageblock, the
# staged one too, to the list of the pageblock's type. Walks resume every
# 16 entries: without the quarantine's drain the lists can be shorter
# than one lock hold.
step hook_noquarantine 10 zstest write $P/quarantine 0
step hook_batch 10 zstest write $P/test_batch 16
results=
for try in 1 2 3 4; do
	step hook_arm_$try 10 zstest write $P/test_move_resume 1
	step hook_sort_$try 60 zstest write $Z/nodeid 0
	hook_result=$(cat $P/test_result)
	results=$results${results:+,}$hook_result
	[ "$hook_result" = gone ] || break
done
M hook_sort=$(out hook_sort_$try) hook_result=$hook_result hook_results=$results walks_cut=$(stat walks_cut)
stop $holder
step rmmod_hooks 30 rmmod zonesort

echo ZSTEST_BEGIN dmesg_all
dmesg
echo ZSTEST_DONE dmesg_all
exit 0
