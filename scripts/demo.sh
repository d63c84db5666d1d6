#!/usr/bin/env bash
# make demo: rxdp between two "hosts" (network namespaces joined by a veth
# pair), with unmodified verbs programs. Removes everything it made when it
# ends, also on Ctrl-C.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo: needs root (it creates network namespaces and attaches XDP programs)" >&2
	exit 1
fi
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
# the demo is not a test: a missing piece is a failure, not a skip
skip() {
	echo "make demo: $*" >&2
	exit 1
}

total=7
n=0
step() {
	n=$((n + 1))
	printf '\n\033[1m[%d/%d] %s\033[0m\n' "$n" "$total" "$*"
}
die() {
	echo "make demo: $*" >&2
	for f in "$tmp"/*.log; do
		[ -s "$f" ] && { echo "--- $(basename "$f")"; tail -n 15 "$f"; } >&2
	done
	exit 1
}
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

step "Two hosts: network namespaces joined by a veth pair"
NETNS_NO_IPV6=1 netns_pair
echo "host A: namespace $NS_A, $IF_A, $ADDR_A"
echo "host B: namespace $NS_B, $IF_B, $ADDR_B"

step "Attach rxdp's XDP program to both ends (rxdp-loader), start rxdpd on each"
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
echo "rxdp attached to $IF_A and $IF_B, one rxdpd per host"

step "The verbs devices rxdp offers"
devA=rxdp_$IF_A
devB=rxdp_$IF_B
rxdp_wait_port "$NS_A" "$devA"
rxdp_wait_port "$NS_B" "$devB"
echo "verbs devices on host A (unmodified ibv_devices over rxdp):"
verbs "$NS_A" ibv_devices
verbs "$NS_A" ibv_devinfo -d "$devA" | grep -E 'hca_id|state|active_mtu|link_layer'
gid=$(rxdp_ipv4_gid "$NS_A" "$devA")
[ -n "$gid" ] || die "no IPv4 GID on $devA"

step "ibv_rc_pingpong with data validation, host A <-> host B"
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gid" -n 1000 -s 4096 -c \
	>"$tmp/pingpong-server.log" 2>&1 &
srv=$!
sleep 0.5
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gid" -n 1000 -s 4096 -c "$ADDR_A" \
	>"$tmp/pingpong-client.log" 2>&1 || die "ibv_rc_pingpong client failed"
wait $srv || die "ibv_rc_pingpong server failed"
grep -E 'bytes in' "$tmp/pingpong-client.log"

step "ib_write_bw: RDMA Write bandwidth (perftest, 64 KiB messages)"
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gid" -s 65536 -n 2000 -F --report_gbits \
	>"$tmp/write_bw-server.log" 2>&1 &
srv=$!
sleep 0.5
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gid" -s 65536 -n 2000 -F --report_gbits "$ADDR_A" \
	>"$tmp/write_bw-client.log" 2>&1 || die "ib_write_bw client failed"
wait $srv || die "ib_write_bw server failed"
bw=$(awk '/^ *65536 / {print $4; exit}' "$tmp/write_bw-client.log")
sed -n '/#bytes/,/^-/p' "$tmp/write_bw-client.log"

step "ib_write_lat: RDMA Write latency (perftest, 2-byte messages)"
verbs "$NS_A" ib_write_lat -d "$devA" -x "$gid" -s 2 -n 5000 -F \
	>"$tmp/write_lat-server.log" 2>&1 &
srv=$!
sleep 0.5
verbs "$NS_B" ib_write_lat -d "$devB" -x "$gid" -s 2 -n 5000 -F "$ADDR_A" \
	>"$tmp/write_lat-client.log" 2>&1 || die "ib_write_lat client failed"
wait $srv || die "ib_write_lat server failed"
lat=$(awk '/^ *2 / {print $5; exit}' "$tmp/write_lat-client.log")
sed -n '/#bytes/,/^-/p' "$tmp/write_lat-client.log"

step "What rxdp's XDP program counted on host A (rxdp-loader status)"
ip netns exec "$NS_A" "$bin/rxdp-loader" status "$IF_A" |
	awk '/^verdicts:/ {v=1; print; next} /^[a-z]/ {v=0} v && $2 != 0 {print; next} !v {print}' |
	head -n 30

cat <<EOF

Summary
  Two namespaces talked RDMA (RoCEv2 over UDP 4791) through rxdp: XDP steered
  the packets into rxdpd's AF_XDP sockets, rxdpd (each host's HCA) ran the RC
  transport for every process, and unmodified ibv_rc_pingpong and perftest
  ran on rxdp's libibverbs.so.1 (LD_LIBRARY_PATH=$RXDP_LIB).
  ib_write_bw 64 KiB: ${bw:-?} Gbit/s    ib_write_lat 2 B: ${lat:-?} us (typical)
  Everything the demo created is being removed now.
EOF
