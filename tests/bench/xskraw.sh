#!/usr/bin/env bash
# rxdp-xskraw, the benchmark's raw AF_XDP limit, on a veth pair between two
# namespaces: a ping-pong and a stream (standard and jumbo frames) each
# print their figures, non-zero, and a jumbo stream to a sink that copies
# each payload out; with --crc the sink checks the CRC the source wrote in
# every frame. Bad usage is one line and exit 2.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
raw=$root/build/bin/rxdp-xskraw
[ -x "$raw" ] || fail "$raw not built"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

out=$("$raw" --iface lo --stream-source 2>&1)
[ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] ||
	fail "bad usage: want one line and exit 2, got: $out"

NETNS_MTU=9000 NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
peer=(--src-ip "$ADDR_B" --dst-ip "$ADDR_A" --dst-mac "$MAC_A")
# pair SERVER-ARGS -- CLIENT-ARGS: server in A, client in B
pair() {
	local sargs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	ip netns exec "$NS_A" timeout 30 "$raw" --iface "$IF_A" "${sargs[@]}" \
		>"$tmp/srv" 2>&1 &
	local srv=$!
	wait_until 5 grep -q "rxdp-xskraw: ready" "$tmp/srv" ||
		{ cat "$tmp/srv"; fail "server: did not start"; }
	ip netns exec "$NS_B" timeout 30 "$raw" --iface "$IF_B" "$@" "${peer[@]}" \
		>"$tmp/cli" 2>&1 || { cat "$tmp/cli" "$tmp/srv"; fail "client: $*"; }
	wait $srv || { cat "$tmp/srv"; fail "server: ${sargs[*]}"; }
	cat "$tmp/srv" "$tmp/cli"
}
nonzero() { # nonzero FILE KEY: KEY=value in FILE, above 0
	local v
	v=$(grep -o "\<$2=[0-9.]*" "$1" | cut -d= -f2)
	awk -v v="${v:-0}" 'BEGIN {exit !(v > 0)}' || fail "$2 is '${v}' in $(cat "$1")"
}

pair --pingpong-server -- --pingpong-client --count 500 --size 2
nonzero "$tmp/cli" half_rtt_median_us
for size in 1458 8000; do # one frame; a jumbo frame in two (multi-buffer)
	pair --stream-sink --seconds 1 -- --stream-source --seconds 1 --size $size
	nonzero "$tmp/srv" pps
	nonzero "$tmp/srv" gbits
done
pair --stream-sink --copy --seconds 1 -- --stream-source --seconds 1 --size 8000
nonzero "$tmp/srv" pps
# --crc: the sink finds every CRC the source wrote right, in one frame and
# in two (with copies at both ends, and without), and every frame of a
# source that wrote none wrong
for size in 1458 8000; do
	for copy in --copy ""; do
		pair --stream-sink --crc $copy --seconds 1 -- \
			--stream-source --crc $copy --seconds 1 --size $size
		nonzero "$tmp/srv" pps
		grep -q " bad_crc=0$" "$tmp/srv" || fail "CRCs wrong: $(cat "$tmp/srv")"
	done
done
pair --stream-sink --crc --seconds 1 -- --stream-source --seconds 1 --size 8000
frames=$(grep -o "\<frames=[0-9]*" "$tmp/srv" | head -1 | cut -d= -f2)
grep -q " bad_crc=${frames:-x}$" "$tmp/srv" ||
	fail "a source without --crc: want every frame bad, got $(cat "$tmp/srv")"
# the program is gone: the interface takes another
ip -n "$NS_A" link show "$IF_A" | grep -q "xdp" && fail "XDP program left on $IF_A"
echo "PASS: rxdp-xskraw ping-pong and streams"
