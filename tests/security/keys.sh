#!/usr/bin/env bash
# Unpredictable keys, end to end on one rxdp host: three fresh processes
# (sec_peer keys) each register an MR; their first R_Keys differ, and not
# only in the key byte (each index is drawn at random, so none follows from
# another). In each, an RDMA Write with any one byte of the R_Key wrong
# completes with a remote access error and writes nothing; the right key
# lands (two RC QPs of the device, connected to each other).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
peer=$root/build/tests/security/sec_peer
[ -x "$peer" ] || fail "$peer not built (make test)"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd.log"
dev=rxdp_$IF_A
rxdp_wait_port "$NS_A" "$dev"
gid=$(rxdp_ipv4_gid "$NS_A" "$dev")

keys=()
for i in 1 2 3; do
	verbs "$NS_A" "$peer" -d "$dev" -g "$gid" keys >"$tmp/k$i" 2>&1 ||
		fail "process $i: $(cat "$tmp/k$i")"
	grep '^ok' "$tmp/k$i"
	keys+=("$(sed -n 's/^rkey //p' "$tmp/k$i")")
done
echo "first R_Keys of three processes: ${keys[*]}"
for i in 0 1 2; do
	for j in 0 1 2; do
		[ $i -lt $j ] || continue
		[ $((keys[i] >> 8)) -ne $((keys[j] >> 8)) ] ||
			fail "processes $((i + 1)) and $((j + 1)) got R_Keys with the same index"
	done
done
echo "PASS: distinct, unguessable first R_Keys; a wrong key byte is a remote access error"
