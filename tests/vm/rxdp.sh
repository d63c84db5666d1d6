#!/usr/bin/env bash
# rxdp to rxdp in two Debian 12 guests on Debian's stock kernel
# (tests/vm/lib.sh): native XDP and copy-mode AF_XDP on virtio-net, which
# the namespace tests (veth) do not reach. Checked RC, UC and UD streams
# (wirecheck: every byte checked at the receiver), the stock pingpongs,
# perftest (ib_send_bw with 300 messages of 64 KiB, where a user saw the client end
# in RETRY_EXC_ERR: each timeout resent the window to a responder that was
# only slow, until it fell hopelessly behind; test_rc's
# test_slow_responder checks the requester now asks with one packet), and
# rc_ops with every RC operation and the error completions, byte-checked.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout
vm_built

vm_guests
vm_stack A rxdp
vm_stack B rxdp
# 300 sends: the slow-responder case of the header
vm_rxdp_traffic 300
# the data path rxdpd set up on virtio-net: native XDP, AF_XDP sockets
vm_run A 30 '/rxdp/build/bin/rxdp-loader status eth0 | head -n 2; grep "data path up" /tmp/rxdpd.log' |
	tee "$VM_DIR/status"
grep -q "mode native" "$VM_DIR/status" || VM_FAILED+=("native XDP")
grep -q "data path up" "$VM_DIR/status" || VM_FAILED+=("AF_XDP data path")

if [ ${#VM_FAILED[@]} -gt 0 ]; then
	echo "failed: ${VM_FAILED[*]}"
	exit 1
fi
echo "PASS: rxdp to rxdp over virtio-net (kernel $(cat "$VM_DIR/A/job/ready"))"
