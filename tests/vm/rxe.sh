#!/usr/bin/env bash
# rxdp against the Linux kernel's Soft-RoCE (rdma_rxe), in two Debian 12
# guests on Debian's stock kernel (tests/vm/lib.sh), joined by virtio-net:
# rxdp (native XDP on virtio-net) in guest A and Soft-RoCE in guest B, then
# swapped, the servers always in A, so that each stack plays each role:
#   checked RC, UC and UD streams (wirecheck: every operation, every byte
#   checked at the receiver), ibv_rc_pingpong and ibv_ud_pingpong, perftest's
#   RC bandwidth and latency tools, a UD send_bw, rc_ops (tests/rc/rc_ops.c:
#   every RC opcode, sizes around the MTU, byte-checked at both ends, the
#   error completions), RDMA-CM programs (rping, udaddy, ucmatose,
#   ib_send_bw -R) and multicast (mckey: a group joined through each
#   stack's RDMA-CM, datagrams from the other stack);
# the whole exchange captured on the bridge, decoded by tshark, with every
# ICRC checked, frames from both stacks. Counts are small: the guests run
# under TCG where the CPU has no virtualisation.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/capture.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 tcpdump tshark timeout
vm_built

vm_guests
capture_start "$VM_NS" "$VM_BR" "$VM_DIR/cap.pcap" 0

for round in "rxdp rxe" "rxe rxdp"; do
	read -r sa sb <<<"$round"
	vm_stack A "$sa"
	vm_stack B "$sb"
	echo "=== servers on $sa (guest A), clients on $sb (guest B)"
	# checked streams each way: every byte at the receiver, whichever
	# stack it is
	vm_wirecheck -t rc -o all -s 0-70000 -n 100 --sge 2
	vm_wirecheck -t uc -o all -s 0-20000 -n 100
	vm_wirecheck -t ud -o all -s 0-1024 -n 100
	vm_pp ibv_rc_pingpong -n 20 -s 1
	vm_pp ibv_ud_pingpong -n 20 -s 512
	vm_pt ib_send_bw -n 100 -s 65536 --report_gbits
	vm_pt ib_write_bw -n 100 -s 65536 --report_gbits
	vm_pt ib_read_bw -n 100 -s 65536 --report_gbits
	vm_pt ib_atomic_bw -n 100
	vm_pt ib_send_lat -n 100 -s 2
	vm_pt ib_write_lat -n 100 -s 2
	vm_pt ib_read_lat -n 100 -s 2
	vm_pt ib_atomic_lat -n 100
	vm_pt ib_send_bw -c UD -n 100 -s 1024 --report_gbits
	vm_rc_ops wire errors
	# RDMA-CM: the kernel's CM and rxdpd's set the connections up
	vm_cm
	# multicast: the receiver in A, the sender in B
	vm_mckey 239.1.2.3
done

capture_stop
capture_check "$VM_DIR/cap.pcap" 1000
# every RC opcode (IBTA 9.2, table 39) and UD Send Only
capture_has_ops $(seq 0 20) 100
for a in "$VM_ADDR_A" "$VM_ADDR_B"; do
	n=$(awk -F'\t' -v a="$a" '$3 == a' "$CAPTURE_TXT" | wc -l)
	echo "capture: $n frames from $a"
	[ "$n" -gt 100 ] || fail "capture: only $n frames from $a"
done
# both stacks send the route's TTL, whatever hop limit the program asked
# for (the pingpongs and perftest ask for 1): Linux's RoCE devices take it
# from the route, and rxdp does as they do
ttls=$(cut -f6 "$CAPTURE_TXT" | sort -u | tr '\n' ' ')
echo "capture: TTLs seen: $ttls"
[ "$ttls" = "64 " ] || fail "capture: TTLs other than 64"

if [ ${#VM_FAILED[@]} -gt 0 ]; then
	echo "failed: ${VM_FAILED[*]}"
	exit 1
fi
echo "PASS: rxdp and Soft-RoCE (kernel $(cat "$VM_DIR/A/job/ready")), each in each role"
