#!/usr/bin/env bash
# RC over rxdp through a lossy link, and a captured run that Wireshark's
# InfiniBand dissector decodes without error. Through the loss: checked
# streams (wirecheck: RC whole, every byte checked at the receiver; UC and
# UD with --lossy, what arrives checked and what does not counted) and the
# stock tools; the loss itself seen three ways (or nothing was tested):
# counted by the XDP program that makes it, in UC messages lost, and in
# the packets the hosts' RC requesters resent.
#
# The two hosts hang off a bridge in a third namespace; the capture and the
# loss happen on the bridge ports, where every frame passes. (This kernel has
# no netem and no tc actions, and AF_XDP transmits around the hosts' own
# qdiscs, so the loss is an XDP program dropping ~3% of RoCEv2 frames.)
#
#   host A [rxva] ---- [rxpa] bridge in R [rxpb] ---- [rxvb] host B
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
. "$root/tests/lib/capture.sh"

require_root
require_cmd ibv_rc_pingpong ib_write_bw tshark tcpdump bpftool timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
netns_bridged

RXDP_VERBS_TIMEOUT=120
rxdp_hosts "$tmp"

# pair NAME SERVER... -- CLIENT...: server in A, client in B
pair() {
	local name=$1 srv_args=() cli_args=()
	shift
	while [ "$1" != -- ]; do srv_args+=("$1"); shift; done
	shift
	cli_args=("$@")
	verbs "$NS_A" "${srv_args[@]}" >"$tmp/$name.srv" 2>&1 &
	local srv=$! ok=1
	wait_until 5 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
		echo "$name: the server does not listen"
	verbs "$NS_B" "${cli_args[@]}" "$ADDR_A" >"$tmp/$name.cli" 2>&1 || ok=0
	wait $srv || ok=0
	if [ $ok = 1 ]; then
		echo "ok: $name"
		tail -n 2 "$tmp/$name.cli" | sed 's/^/    /'
	else
		echo "--- $name server"; tail -n 15 "$tmp/$name.srv"
		echo "--- $name client"; tail -n 15 "$tmp/$name.cli"
		fail "$name"
	fi
}

# 1. a captured clean run, decoded by tshark
capture_start "$NS_R" "$PA" "$tmp/cap.pcap" 256
pair "capture: rc_pingpong" ibv_rc_pingpong -d "$devA" -g "$gid" -c -n 50 -s 3000 -- \
	ibv_rc_pingpong -d "$devB" -g "$gid" -c -n 50 -s 3000
pair "capture: write_bw" ib_write_bw -d "$devA" -x "$gid" -F -n 50 -s 5000 -- \
	ib_write_bw -d "$devB" -x "$gid" -F -n 50 -s 5000
pair "capture: read_bw" ib_read_bw -d "$devA" -x "$gid" -F -n 50 -s 5000 -- \
	ib_read_bw -d "$devB" -x "$gid" -F -n 50 -s 5000
pair "capture: atomic_bw" ib_atomic_bw -d "$devA" -x "$gid" -F -n 50 -- \
	ib_atomic_bw -d "$devB" -x "$gid" -F -n 50
capture_stop
total=$(tshark -r "$tmp/cap.pcap" 2>/dev/null | wc -l)
ib=$(tshark -r "$tmp/cap.pcap" -Y infiniband 2>/dev/null | wc -l)
bad=$(tshark -r "$tmp/cap.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' 2>/dev/null | wc -l)
echo "capture: $total frames, $ib decoded as InfiniBand, $bad malformed or warned"
[ "$total" -gt 100 ] || fail "capture: only $total frames"
[ "$ib" -eq "$total" ] || fail "capture: $((total - ib)) frames not decoded as InfiniBand"
[ "$bad" -eq 0 ] || {
	tshark -r "$tmp/cap.pcap" -Y '_ws.malformed || _ws.expert.severity >= warning' | head
	fail "capture: malformed frames"
}
ops=" $(tshark -r "$tmp/cap.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -nu | tr '\n' ' ')"
echo "capture: opcodes seen:$ops"
# Send FIRST/MIDDLE/LAST, Write FIRST/MIDDLE/LAST, Read request and
# responses, ACK, Compare&Swap or Fetch&Add and their ACK
for op in 0 1 2 6 7 8 12 13 14 15 17 18 20; do
	[[ "$ops" == *" $op "* ]] || fail "capture: no opcode $op seen"
done

# 2. loss on both directions of the bridge (an XDP program on its ports,
# sparing RC ACKs, see lossy.bpf.c; duplication, reordering and ACK loss
# are badwire.sh's and the engine's in-memory wire's)
for p in $PA $PB; do
	ip -n "$NS_R" link set dev "$p" xdpdrv obj "$root/build/gen/lossy.bpf.o" sec xdp ||
		fail "cannot attach the lossy XDP program to $p"
done
# lossy N: what the lossy programs on both ports counted under key N (0
# dropped, 1 passed), summed
lossy() {
	local p prog map sum=0
	for p in $PA $PB; do
		prog=$(ip -n "$NS_R" -d link show dev "$p" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
		map=$(bpftool prog show id "$prog" -j | python3 -c 'import json,sys; print(json.load(sys.stdin)["map_ids"][0])')
		sum=$((sum + $(bpftool map lookup id "$map" key "$1" 0 0 0 -j |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["formatted"]["value"])')))
	done
	echo "$sum"
}
[ "$(lossy 0)" = 0 ] || fail "the lossy programs counted drops before any traffic"
# what the hosts resent: the loss seen by the transport, not only by the
# program that claims to make it
resent() { echo $(($(rxdp_counter "$NS_A" retransmitted_pkts) + $(rxdp_counter "$NS_B" retransmitted_pkts))); }
resent0=$(resent)
WK_DIR=$tmp
wirecheck_from_b
streams=(
	"-t rc -o all -s 0-300000 -n 200 --sge 2"
	"-t uc -o all -s 0-20000 -n 300 --lossy --settle 1000"
	"-t ud -o all -s 0-1024 -n 500 --lossy --settle 1000"
)
wirecheck_each 18600 "${streams[@]}"
# 300 UC messages of up to 20 packets through ~3% loss: hundreds of
# packets dropped, dozens of messages lost
uc_lost=$(wirecheck_summary s1 lost)
echo "lossy: the UC stream lost $uc_lost of 300 messages"
[ "$uc_lost" -gt 0 ] || fail "lossy: the UC stream lost nothing: the link was not lossy"
pair "lossy: rc_pingpong 1 MiB" ibv_rc_pingpong -d "$devA" -g "$gid" -c -n 20 -s 1048576 -- \
	ibv_rc_pingpong -d "$devB" -g "$gid" -c -n 20 -s 1048576
pair "lossy: write_bw 256 KiB" ib_write_bw -d "$devA" -x "$gid" -F -n 100 -s 262144 -- \
	ib_write_bw -d "$devB" -x "$gid" -F -n 100 -s 262144
pair "lossy: read_bw 256 KiB" ib_read_bw -d "$devA" -x "$gid" -F -n 100 -s 262144 -- \
	ib_read_bw -d "$devB" -x "$gid" -F -n 100 -s 262144
pair "lossy: send_bw 64 KiB" ib_send_bw -d "$devA" -x "$gid" -F -n 200 -s 65536 -- \
	ib_send_bw -d "$devB" -x "$gid" -F -n 200 -s 65536
pair "lossy: atomic_bw" ib_atomic_bw -d "$devA" -x "$gid" -F -n 500 -- \
	ib_atomic_bw -d "$devB" -x "$gid" -F -n 500
dropped=$(lossy 0)
passed=$(lossy 1)
resent=$(($(resent) - resent0))
echo "the lossy link dropped $dropped of $((dropped + passed)) RoCEv2 frames; the hosts resent $resent packets"
[ "$dropped" -gt 0 ] && [ "$passed" -gt 0 ] || fail "the lossy link dropped $dropped, passed $passed"
[ "$resent" -gt 0 ] || fail "the hosts resent nothing: no loss reached RC"
# two rxdp hosts repair a loss selectively: the responders held what came
# past the gaps (the XDP programs let it through), the requesters resent
# packets alone
held=$(($(rxdp_counter "$NS_A" held_requests) + $(rxdp_counter "$NS_B" held_requests)))
alone=$(($(rxdp_counter "$NS_A" sr_resent_pkts) + $(rxdp_counter "$NS_B" sr_resent_pkts)))
echo "the responders held $held requests past gaps; the requesters resent $alone packets alone"
[ "$held" -gt 0 ] && [ "$alone" -gt 0 ] || fail "no selective retransmission between the rxdp hosts"
echo "PASS: RC over a lossy link, and a capture tshark decodes"
