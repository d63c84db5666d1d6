#!/usr/bin/env bash
# A kernel older than rxdp supports: Debian 11's 5.10 (tests/vm/variant.sh
# bullseye) lacks the BPF atomic operations of the XDP program's PSN filter
# (Linux 5.12). rxdp-loader attach must find that out from the kernel
# itself, say it in one line that names what is missing, and leave the
# interface as it was (no program, no pins).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout
vm_built

VM_IMAGE=bullseye
vm_net
vm_start A "$VM_ADDR_A"
out=$(vm_run A 60 '/rxdp/build/bin/rxdp-loader attach eth0; echo "rc=$?";
	ip -d link show dev eth0 | grep -c "prog/xdp";
	ls /run/rxdp/bpffs/net*/eth0 2>/dev/null | wc -l; uname -r')
echo "$out"
kver=$(tail -n 1 <<<"$out")
[[ "$kver" == 5.10.* ]] || fail "the guest runs $kver, not 5.10"
want="rxdp-loader: eth0: this kernel (Linux $kver) lacks the BPF atomic operations rxdp's XDP program needs (compare-and-exchange, fetch-and-or: Linux 5.12); rxdp runs on Linux 5.15 or later"
[ "$(head -n 1 <<<"$out")" = "$want" ] || fail "attach on $kver said: $(head -n 1 <<<"$out")"
[ "$(sed -n 2p <<<"$out")" = rc=1 ] || fail "attach on $kver: $(sed -n 2p <<<"$out")"
[ "$(sed -n 3p <<<"$out")" = 0 ] || fail "an XDP program is attached after the refusal"
[ "$(sed -n 4p <<<"$out")" = 0 ] || fail "pins left after the refusal"
echo "PASS: Linux $kver refused in one line naming what it lacks, nothing attached"
