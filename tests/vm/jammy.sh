#!/usr/bin/env bash
# The oldest kernel rxdp claims, Linux 5.15, as Ubuntu 22.04 runs it:
# two guests on jammy-updates' linux-image-generic (tests/vm/variant.sh
# jammy; Debian 12's user space), rxdp to rxdp over virtio-net. The kernel
# lacks multi-buffer XDP (5.18), so rxdp-loader must load the single-buffer
# program (rxdp_xdp_linear) and rxdpd's port offer 2048 bytes at most (the
# guests' 1500-byte links: 1024); then checked RC, UC and UD streams
# (wirecheck), the stock pingpongs, perftest, rc_ops (every RC operation,
# the error completions, byte-checked) and rping (RDMA-CM).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout
vm_built

VM_IMAGE=jammy
vm_guests
kver=$(cat "$VM_DIR/A/job/ready")
[[ "$kver" == 5.15.* ]] || fail "the guests run $kver, not 5.15"
vm_stack A rxdp
vm_stack B rxdp
out=$(vm_run A 30 '/rxdp/build/bin/rxdp-loader status eth0 | head -n 3;
	. /run/vm.env; ibv_devinfo -d rxdp_eth0 | grep -e max_mtu -e active_mtu')
echo "$out"
grep -q "rxdp_xdp_linear" <<<"$out" ||
	fail "rxdp-loader did not load the single-buffer program on $kver"
grep -qE "max_mtu:\s+(256|512|1024|2048) " <<<"$out" ||
	fail "the port offers more than 2048 bytes without multi-buffer XDP"
vm_rxdp_traffic 100
vm_run A 30 'grep "data path up" /tmp/rxdpd.log' || VM_FAILED+=("AF_XDP data path")

if [ ${#VM_FAILED[@]} -gt 0 ]; then
	echo "failed: ${VM_FAILED[*]}"
	exit 1
fi
echo "PASS: rxdp to rxdp on Linux $kver (Ubuntu 22.04's kernel)"
