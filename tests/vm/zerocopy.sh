#!/usr/bin/env bash
# rxdp to rxdp with zero-copy AF_XDP: the data path every other test runs in
# copy mode (veth has no zero-copy), on the one zero-copy driver at hand,
# virtio-net, in two guests (tests/vm/lib.sh) on trixie-backports' kernel
# (tests/vm/variant.sh backports).
#
# virtio-net binds AF_XDP sockets in zero-copy mode from Linux 6.13 (6.12
# refuses XDP_ZEROCOPY with EOPNOTSUPP), and only on a device that offers
#   VIRTIO_F_ACCESS_PLATFORM  the driver maps the UMEM through the DMA API
#                             (without it: EINVAL); QEMU's iommu_platform=on
#   VIRTIO_F_RING_RESET       binding resets the queue pair to fill it from
#                             the UMEM (without it: ENOENT, "reset rx
#                             fail"); QEMU 7.2's queue_reset, on by default
# and not with multi-buffer (its xdp_zc_max_segs is 1): rxdpd binds
# zero-copy alone, as the path MTU (1024 here) needs one frame. The devices
# have two queue pairs: rxdpd binds a socket on each, the second sharing
# the first's UMEM (XDP_SHARED_UMEM), which the kernel binds in the UMEM's
# mode or not at all.
#
# Each socket's mode is checked three ways on both guests: rxdpd's own view
# (rxdp-ctl devices, from XDP_OPTIONS), the kernel's (rxdp-loader status,
# from sock_diag) and iproute2's (ss --xdp: zc:1). Then checked streams
# (wirecheck: RC, UC and UD, every byte checked at the receiver), the
# stock pingpong, perftest's write and read bandwidth tests, and RC (and
# UC, its losses counted) through loss (an XDP program on the host's tap
# devices drops ~3% of the RoCE frames the guests send, ACKs spared:
# tests/rc/lossy.bpf.c), whose recovery the requesters' counters must
# show. Last, A's rxdpd again with --xsk copy: its sockets in copy mode on
# this zero-copy driver, and a checked stream with B's zero-copy ones.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout ip
vm_built
lossy=$root/build/gen/lossy.bpf.o
[ -e "$lossy" ] || fail "$lossy not built (make)"

VM_IMAGE=backports
VM_NIC_OPTS=",disable-legacy=on,iommu_platform=on"
# The taps without virtio-net headers: Linux's virtio_net sends every
# zero-copy frame behind one shared header, a static variable of the module
# that it maps for DMA (dma_map_single(&xsk_hdr)); module memory is not in
# the direct map, so the device reads the header from wherever that address
# translates to. In about one boot in ten (the address moves with KASLR)
# that memory is not zero, the tap refuses every zero-copy frame of the
# guest (QEMU's writev: EINVAL; one run's header said hdr_len 16630) and
# nothing it sends with AF_XDP arrives, while its ordinary traffic does.
# Without vnet headers QEMU reads the guest's header and drops it, whatever
# it holds. (README, "virtio-net in zero-copy mode".)
VM_TAP_OPTS=",vnet_hdr=off"
VM_QUEUES=2
t0=$(date +%s)
vm_guests
vm_stack A rxdp
vm_stack B rxdp

# --- the mode, three ways ------------------------------------------------
for g in A B; do
	vm_run "$g" 30 '/rxdp/build/bin/rxdp-ctl devices | grep "AF_XDP";
		/rxdp/build/bin/rxdp-loader status eth0 | sed -n "/^xsks:/,/^verdicts:/p";
		ss --xdp -e | grep -o "umem(.*zc:[01]";
		grep "data path up" /tmp/rxdpd.log' >"$VM_DIR/mode.$g"
	sed "s/^/guest $g: /" "$VM_DIR/mode.$g"
	for q in 0 1; do
		grep -qx "    AF_XDP socket of queue $q: zero-copy mode" "$VM_DIR/mode.$g" ||
			VM_FAILED+=("guest $g: rxdp-ctl devices: queue $q not zero-copy")
		grep -q "^  queue $q zero-copy (socket inode" "$VM_DIR/mode.$g" ||
			VM_FAILED+=("guest $g: rxdp-loader status: queue $q not zero-copy")
	done
	grep -qx "xsks: 2" "$VM_DIR/mode.$g" ||
		VM_FAILED+=("guest $g: rxdp-loader status: not 2 sockets")
	[ "$(grep -c "zc:1" "$VM_DIR/mode.$g")" = 2 ] && ! grep -q "zc:0" "$VM_DIR/mode.$g" ||
		VM_FAILED+=("guest $g: ss --xdp: not 2 zero-copy sockets")
	grep -q "data path up: 2 queue(s), [0-9]* engine(s), zero-copy mode$" "$VM_DIR/mode.$g" ||
		VM_FAILED+=("guest $g: rxdpd's log: not zero-copy on 2 queues")
done
[ ${#VM_FAILED[@]} = 0 ] || fail "not in zero-copy mode: ${VM_FAILED[*]}"
echo "ok: zero-copy on both guests ($(($(date +%s) - t0)) s)"

# --- traffic --------------------------------------------------------------
vm_wirecheck -t rc -o all -s 0-70000 -n 100 --sge 2
vm_wirecheck -t uc -o all -s 0-20000 -n 100
vm_wirecheck -t ud -o all -s 0-1024 -n 100
vm_pp ibv_rc_pingpong -n 20 -s 4100
vm_pt ib_write_bw -n 100 -s 65536 --report_gbits
vm_pt ib_read_bw -n 100 -s 65536 --report_gbits
echo "traffic: $(($(date +%s) - t0)) s"

# --- through loss ---------------------------------------------------------
# RC's recovery: gaps the responders saw (out_of_seq_request) and the
# sequence-error NAKs the requesters got (rcvd_seq_err), both guests: only
# a lost packet makes either (a slow guest makes duplicates and timeouts)
recovered() {
	local g n=0 v
	for g in A B; do
		v=$(vm_run "$g" 30 '/rxdp/build/bin/rxdp-ctl counters' |
			awk '/^COUNTERS of rxdp_/ { d = 1; next } /^[A-Z]/ { d = 0 }
			d && ($1 == "out_of_seq_request" || $1 == "rcvd_seq_err") { s += $2 }
			END { print s + 0 }')
		n=$((n + v))
	done
	echo "$n"
}
before=$(recovered)
for t in rxta$RXDP_TEST_ID rxtb$RXDP_TEST_ID; do
	ip -n "$VM_NS" link set dev "$t" xdpgeneric obj "$lossy" sec xdp ||
		fail "cannot attach the lossy XDP program to $t"
done
vm_wirecheck -t rc -o all -s 0-70000 -n 60
vm_wirecheck -t uc -o send,send_imm,write -s 4-20000 -n 60 --lossy --settle 3000
vm_pt ib_write_bw -n 100 -s 65536 --report_gbits
after=$(recovered)
echo "recovery: $((after - before)) sequence gaps and NAKs through loss"
[ "$after" -gt "$before" ] || VM_FAILED+=("no recovery counted through loss")

# what each receive queue took (the tap spreads flows by their hash: not
# checked, shown)
for g in A B; do
	vm_run "$g" 30 "awk '/virtio[0-9]+-input/ { s = 0
		for (i = 2; i <= NF && \$i ~ /^[0-9]+\$/; i++) s += \$i
		print \$NF, s, \"interrupts\" }' /proc/interrupts" | sed "s/^/guest $g: /"
done

# still zero-copy after all of it
[ "$(vm_run A 30 'ss --xdp -e' | grep -c "zc:1")" = 2 ] || VM_FAILED+=("no longer zero-copy")

# --xsk copy on the same driver: A's sockets in copy mode (B's stay
# zero-copy), and traffic between the two, without the loss
for t in rxta$RXDP_TEST_ID rxtb$RXDP_TEST_ID; do
	ip -n "$VM_NS" link set dev "$t" xdpgeneric off
done
vm_stack A rxdp "--xsk copy"
vm_run A 30 '/rxdp/build/bin/rxdp-ctl devices | grep "AF_XDP"; ss --xdp -e | grep -o "zc:[01]"' >"$VM_DIR/mode.copy"
sed "s/^/guest A, --xsk copy: /" "$VM_DIR/mode.copy"
[ "$(grep -c "AF_XDP socket of queue [01]: copy mode" "$VM_DIR/mode.copy")" = 2 ] &&
	[ "$(grep -c "zc:0" "$VM_DIR/mode.copy")" = 2 ] ||
	VM_FAILED+=("--xsk copy: not 2 sockets in copy mode")
vm_wirecheck -t rc -o all -s 0-20000 -n 50

if [ ${#VM_FAILED[@]} -gt 0 ]; then
	echo "failed: ${VM_FAILED[*]}"
	exit 1
fi
echo "PASS: rxdp to rxdp with zero-copy AF_XDP over virtio-net (kernel $(cat "$VM_DIR/A/job/ready"), $(($(date +%s) - t0)) s)"
