#!/usr/bin/env bash
# The engine end to end on rxdp's own stack: two namespaces joined by a veth
# pair, rxdp-loader attached and rxdpd running on each end, and dp_rc (the
# engine on the AF_XDP sockets rxdpd provisions, RC QPs made through rxdpd)
# as server in B and client in A: Send/Write/Read of 0 B .. 1 MiB, a 512 KiB
# Read of the passive side's memory, and fetch-adds, all checked.
# Root only (exit 77 otherwise). Exits 77 as well while the XDP program does
# not steer RoCEv2 packets to the AF_XDP sockets (nothing ever comes back).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd ip unshare

if [ "${RXDP_E2E_PRIVATE_MNT:-}" != 1 ]; then
	trap - EXIT
	exec unshare --mount --propagation private \
		env RXDP_E2E_PRIVATE_MNT=1 "$0" "$@"
fi

B=$root/build
LOADER=$B/bin/rxdp-loader
RXDPD=$B/bin/rxdpd
DP=$B/tests/engine/dp_rc
for x in "$LOADER" "$RXDPD" "$DP"; do
	[ -x "$x" ] || fail "$x not built"
done
tmp=$(mktemp -d /tmp/rxdp-e2e.XXXXXX)
on_exit "rm -rf '$tmp'"

rxdp_bpffs_mount || skip "cannot mount a bpffs at $RXDP_BPFFS_ROOT"
NETNS_STATIC_NEIGH=1 netns_pair
for side in A B; do
	ns=NS_$side if=IF_$side
	ip netns exec "${!ns}" "$LOADER" attach "${!if}" >/dev/null ||
		fail "rxdp-loader attach ${!if}"
	on_exit "ip netns exec ${!ns} $LOADER detach ${!if}"
	ip netns exec "${!ns}" "$RXDPD" 2>>"$tmp/rxdpd-$side.log" &
	pid=$!
	on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
done
# the daemons are up when they answer (dp_rc connects and retries nothing)
sleep 1

ip netns exec "$NS_B" "$DP" server "$IF_B" "$ADDR_A" "$tmp" \
	>"$tmp/server.out" 2>&1 &
server=$!
on_exit "kill $server 2>/dev/null"
ip netns exec "$NS_A" "$DP" client "$IF_A" "$ADDR_B" "$tmp" \
	>"$tmp/client.out" 2>&1
crc=$?
wait $server
src=$?
cat "$tmp/client.out" "$tmp/server.out"
if [ -n "${RXDP_TEST_DEBUG:-}" ]; then
	for side in A B; do
		ns=NS_$side if=IF_$side
		ip -n "${!ns}" -s link show "${!if}" | sed -n '/RX:/,$p'
		echo "--- XDP verdicts on ${!if}"
		bpftool -j map dump pinned "$(rxdp_pin_dir "${!ns}" "${!if}")/stats" |
			/usr/bin/python3 -c 'import json,sys
for e in json.load(sys.stdin):
    v = lambda x: int.from_bytes(bytes(int(b, 16) for b in x), "little") if isinstance(x, list) else int(x)
    k = v(e["key"])
    n = sum(v(x["value"]) for x in e["values"])
    if n: print("verdict", k, n)' 
	done
fi
if [ $crc -eq 3 ] || [ $src -eq 3 ]; then
	skip "no RoCEv2 packet reached an AF_XDP socket (is the XDP classifier in?)"
fi
if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
	for l in "$tmp"/rxdpd-*.log; do tail -n 20 "$l"; done
	fail "client exit $crc, server exit $src"
fi
echo PASS
