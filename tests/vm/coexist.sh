#!/usr/bin/env bash
# rxdp beside rdma-core's devices: two Debian 12 guests (tests/vm/lib.sh)
# with two links each, the kernel's Soft-RoCE (rxe0) on eth1 and rxdp
# (rxdp_eth0) on eth0. Every verbs program here runs on rxdp's
# libibverbs.so.1, which loads rdma-core's own library beside it and hands
# rxe0 and everything made from it to it (userspace/verbs/rdmacore.c): in
# guest A through LD_LIBRARY_PATH (guest.sh puts build/lib there), in guest
# B installed system-wide as the README says (its directory in
# /etc/ld.so.conf.d, before the system's; no LD_LIBRARY_PATH):
#   ibv_devices lists both devices (Debian's library alone: rxe0 only);
#   one process (tests/verbs/coexist) moves byte-checked RDMA Writes and
#   Sends on rxe0 and on rxdp_eth0 side by side, round after round;
#   across the guests, a checked stream (wirecheck) and ib_write_bw on each
#   device;
#   rping on rxe0 with Debian's librdmacm in both guests, on rxdp's
#   system-wide libibverbs in B (what a host's RDMA-CM programs keep doing
#   after the install), rping on rxdp_eth0 with rxdp's librdmacm, and
#   rping, ucmatose and udaddy on rxe0 with rxdp's librdmacm, which hands
#   their ids to rdma-core's (userspace/rdmacm/sys.c).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout
vm_built
[ -x "$root/build/tests/verbs/coexist" ] ||
	fail "build/tests/verbs/coexist not built (make build/tests/verbs/coexist)"

VM_NICS=2
vm_net
vm_start A "$VM_ADDR_A" B "$VM_ADDR_B"
vm_run A 90 "/rxdp/tests/vm/guest.sh rxe-up $VM_ADDR1_B eth1 &&
	/rxdp/tests/vm/guest.sh rxdp-up $VM_ADDR_B" | sed 's/^/guest A: /'
[ "${PIPESTATUS[0]}" = 0 ] || fail "guest A: cannot bring Soft-RoCE and rxdp up"
vm_run B 90 "/rxdp/tests/vm/guest.sh rxe-up $VM_ADDR1_A eth1 &&
	/rxdp/tests/vm/guest.sh rxdp-up $VM_ADDR_A" | sed 's/^/guest B: /'
[ "${PIPESTATUS[0]}" = 0 ] || fail "guest B: cannot bring Soft-RoCE and rxdp up"

# B: rxdp's libibverbs system-wide (dist/build.mk's $(libdir)/rxdp/system)
out=$(vm_run B 60 'sys=/usr/lib/x86_64-linux-gnu/rxdp/system
	mkdir -p $sys && ln -s /rxdp/build/lib/libibverbs.so.1 $sys/ &&
	echo $sys >/etc/ld.so.conf.d/000-rxdp.conf && ldconfig &&
	sed -i /LD_LIBRARY_PATH/d /run/vm.env &&
	ldd "$(command -v ibv_devices)" | grep libibverbs') || fail "guest B: system-wide install: $out"
echo "guest B: ibv_devices loads $out"
grep -q "/rxdp/system/libibverbs.so.1" <<<"$out" ||
	fail "guest B: the system-wide libibverbs is not rxdp's"

# one listing, both devices; rdma-core's library alone knows only rxe0
out=$(vm_run A 60 '. /run/vm.env; ibv_devices; echo "--- rdma-core alone";
	env -u LD_LIBRARY_PATH ibv_devices')
echo "$out"
rx=$(sed '/^--- rdma-core alone/q' <<<"$out")
alone=$(sed '1,/^--- rdma-core alone/d' <<<"$out")
grep -qE '^\s+rxe0\s+[0-9a-f]{16}$' <<<"$rx" || fail "rxdp's ibv_devices does not list rxe0"
grep -qE '^\s+rxdp_eth0\s+[0-9a-f]{16}$' <<<"$rx" || fail "rxdp's ibv_devices does not list rxdp_eth0"
grep -q rxe0 <<<"$alone" && ! grep -q rxdp <<<"$alone" ||
	fail "rdma-core's ibv_devices should list rxe0 alone"
echo "ok: ibv_devices on rxdp's library lists rxe0 and rxdp_eth0"

# one process, both devices at once
out=$(vm_run A 300 '. /run/vm.env; /rxdp/build/tests/verbs/coexist rxe0 rxdp_eth0') ||
	fail "coexist rxe0 rxdp_eth0: $out"
echo "$out"
grep -q "^ok: rxe0:" <<<"$out" && grep -q "^ok: rxdp_eth0:" <<<"$out" ||
	fail "coexist did not finish on both devices"

# across the guests, each device, through rxdp's library on both sides
opt=""
[ -n "$VM_QP_TIMEOUT" ] && opt="-u $VM_QP_TIMEOUT"
for dev in rxe0 rxdp_eth0; do
	peer=$VM_ADDR_A
	[ $dev = rxe0 ] && peer=$VM_ADDR1_A
	gid="\$(/rxdp/tests/vm/guest.sh gid $dev)"
	wk=/rxdp/build/tests/lib/wirecheck
	vm_pair "wirecheck on $dev" 300 "$wk -d $dev -g $gid -T 280" \
		"$wk -d $dev -g $gid -T 280 $opt -t rc -o all -s 0-20000 -n 50 $peer"
	vm_pair "ib_write_bw on $dev" 120 \
		"ib_write_bw -d $dev -x $gid -F $opt -n 100 -s 65536 --report_gbits" \
		"ib_write_bw -d $dev -x $gid -F $opt -n 100 -s 65536 --report_gbits $peer"
done

# RDMA-CM on the kernel's device: Debian's librdmacm, over rxdp's
# libibverbs in B (client), rdma-core's alone in A (server)
VM_LISTEN_PORT= VM_LISTEN_CM=7174
vm_pair "rping on rxe0 (rdma-core's librdmacm)" 120 \
	"env -u LD_LIBRARY_PATH /rxdp/tests/lib/rping-run -s -a $VM_ADDR1_A -C 10 -S 1024 -V" \
	"/rxdp/tests/lib/rping-run -c -a $VM_ADDR1_A -C 10 -S 1024 -V"
# and on rxdp's device, rxdp's librdmacm, which its libibverbs' list of
# both devices must not lead astray (it takes rxdp's alone)
vm_pair "rping on rxdp_eth0 (rxdp's librdmacm)" 120 \
	"/rxdp/tests/lib/rping-run -s -a $VM_ADDR_A -C 10 -S 1024 -V" \
	"LD_LIBRARY_PATH=/rxdp/build/lib /rxdp/tests/lib/rping-run -c -a $VM_ADDR_A -C 10 -S 1024 -V"
# rxdp's librdmacm on both sides, on Soft-RoCE's addresses: it hands
# those ids to rdma-core's librdmacm (userspace/rdmacm/sys.c)
rx="LD_LIBRARY_PATH=/rxdp/build/lib"
vm_pair "rping on rxe0 (rxdp's librdmacm)" 120 \
	"/rxdp/tests/lib/rping-run -s -a $VM_ADDR1_A -C 10 -S 1024 -V" \
	"$rx /rxdp/tests/lib/rping-run -c -a $VM_ADDR1_A -C 10 -S 1024 -V"
VM_LISTEN_CM=7471
vm_pair "ucmatose on rxe0 (rxdp's librdmacm)" 120 \
	"ucmatose -b $VM_ADDR1_A -c 2 -C 10" "$rx ucmatose -s $VM_ADDR1_A -c 2 -C 10"
VM_LISTEN_CM=7174
vm_pair "udaddy on rxe0 (rxdp's librdmacm)" 120 \
	"udaddy -b $VM_ADDR1_A -c 2 -C 10" "$rx udaddy -s $VM_ADDR1_A -c 2 -C 10"
VM_LISTEN_PORT=18515 VM_LISTEN_CM=

if [ ${#VM_FAILED[@]} -gt 0 ]; then
	echo "failed: ${VM_FAILED[*]}"
	exit 1
fi
echo "PASS: rxe0 (Soft-RoCE, kernel $(cat "$VM_DIR/A/job/ready")) and rxdp_eth0 side by side through rxdp's library"
