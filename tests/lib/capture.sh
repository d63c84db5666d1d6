# shellcheck shell=bash
# A RoCEv2 capture checked by Wireshark and by our ICRC checker: source
# after tests/lib/netns.sh.
#
#   capture_check PCAP MIN   fail unless PCAP holds at least MIN frames,
#                            tshark decodes every one as InfiniBand with no
#                            malformed frame and no expert note, warning or
#                            error, and every ICRC is
#                            right (tests/rc/icrc_check.py); sets
#                            CAPTURE_OPS to " op op ... " (the BTH opcodes
#                            seen) and CAPTURE_TXT to a file with one line
#                            per frame, tab-separated: number, opcode,
#                            source IP address, malformed, expert severity,
#                            IPv4 TTL
#   capture_has_ops OP...    fail unless each BTH opcode OP was seen
#   capture_start NS IF PCAP SNAPLEN
#                            tcpdump of RoCEv2 (UDP 4791) on IF in NS into
#                            PCAP, SNAPLEN bytes a frame (0: a whole frame of
#                            the largest MTU here, 9000, and no more: in
#                            immediate mode libpcap's ring has a slot of the
#                            snap length a frame, and its default, 256 KiB,
#                            leaves a few hundred slots where thousands of
#                            frames arrive at once), returning once it captures; in immediate
#                            mode, so a frame is written as it comes (else
#                            libpcap holds frames up to a second in its
#                            ring's block, and a capture stopped right after
#                            the traffic misses its end), with a 64 MiB
#                            buffer (a tcpdump starved of CPU, beside two
#                            emulated guests, catches up later)
#   capture_stop             stop it; fail if the kernel dropped a frame
#                            it should have had
#   capture_stop_whole       stop it; return 1 (and say so) if the kernel
#                            dropped a frame, for a test that can run its
#                            captured traffic again (a tcpdump starved of
#                            CPU by a busy forwarder on a loaded machine)
#
# Only the transport is checked: the heuristic dissectors Wireshark tries on
# InfiniBand payloads (RPC-over-RDMA, SMB Direct, iSER, IPoIB...) take test
# patterns for their protocols and call them malformed (a 0-byte Send Only
# is "Malformed Packet: RPCoRDMA").

_capture_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CAPTURE_TSHARK_OPTS=()
for _p in rpcordma smc smb_direct nvme-rdma lnet iser fcoib infiniband_sdp ipoib \
	infiniband.eoib; do
	CAPTURE_TSHARK_OPTS+=(--disable-protocol "$_p")
done
# Ethernet over IB: a 2-byte RDMA Write whose bytes name a PPP ethertype
# is "Malformed Packet: CRTP" (139 of the 65536 possible payloads)
CAPTURE_TSHARK_OPTS+=(--disable-heuristic eth_over_ib)

capture_check() {
	local pcap=$1 min=$2 total undecoded bad n icrc
	CAPTURE_TXT=$pcap.txt
	tshark -r "$pcap" "${CAPTURE_TSHARK_OPTS[@]}" -T fields -e frame.number \
		-e infiniband.bth.opcode -e ip.src -e _ws.malformed \
		-e _ws.expert.severity -e ip.ttl >"$CAPTURE_TXT" 2>"$pcap.err" ||
		{ cat "$pcap.err"; fail "tshark cannot read the capture"; }
	total=$(wc -l <"$CAPTURE_TXT")
	undecoded=$(awk -F'\t' '$2 == ""' "$CAPTURE_TXT" | wc -l)
	# _ws.expert.severity: 4194304 is a note ("Time To Live only 1"),
	# 6291456 a warning, 8388608 an error: all three fail
	bad=$(awk -F'\t' '$4 != "" || $5 ~ /4194304|6291456|8388608/' "$CAPTURE_TXT" | wc -l)
	echo "capture: $total frames, $undecoded not decoded as InfiniBand, $bad malformed or with expert notes"
	[ "$total" -ge "$min" ] || fail "capture: only $total frames"
	[ "$undecoded" -eq 0 ] || {
		awk -F'\t' '$2 == ""' "$CAPTURE_TXT" | head
		fail "capture: frames not decoded as InfiniBand"
	}
	[ "$bad" -eq 0 ] || {
		n=$(awk -F'\t' '$4 != "" || $5 ~ /4194304|6291456|8388608/ {print $1; exit}' "$CAPTURE_TXT")
		tshark -r "$pcap" "${CAPTURE_TSHARK_OPTS[@]}" -V -Y "frame.number == $n" |
			grep -B2 -A2 -i -e expert -e severity -e malformed | head -n 40
		[ -n "${RXDP_KEEP:-}" ] && cp "$pcap" "$RXDP_KEEP"
		fail "capture: malformed frames or expert notes (first: $n)"
	}
	CAPTURE_OPS=" $(cut -f2 "$CAPTURE_TXT" | sort -nu | tr '\n' ' ')"
	echo "capture: opcodes seen:$CAPTURE_OPS"
	# the dissector does not verify the ICRC: icrc_check.py does
	icrc=$(/usr/bin/python3 "$_capture_root/tests/rc/icrc_check.py" "$pcap") ||
		{ echo "$icrc"; fail "capture: bad ICRC"; }
	echo "capture: $icrc"
}

capture_has_ops() {
	local op
	for op in "$@"; do
		[[ "$CAPTURE_OPS" == *" $op "* ]] || fail "capture: no opcode $op seen"
	done
}

capture_start() {
	CAPTURE_LOG=$3.log
	local snap=$4
	[ "$snap" = 0 ] && snap=9100
	ip netns exec "$1" tcpdump -i "$2" -w "$3" -U --immediate-mode -B 65536 -s "$snap" \
		udp port 4791 >"$CAPTURE_LOG" 2>&1 &
	CAPTURE_PID=$!
	on_exit "kill $CAPTURE_PID 2>/dev/null"
	wait_until 10 grep -q "listening on" "$CAPTURE_LOG" ||
		{ cat "$CAPTURE_LOG"; fail "tcpdump did not start"; }
}

capture_stop() {
	capture_stop_whole || fail "the capture is not whole"
}

capture_stop_whole() {
	kill -INT "$CAPTURE_PID"
	wait "$CAPTURE_PID" 2>/dev/null
	grep -q "^0 packets dropped by kernel" "$CAPTURE_LOG" && return 0
	echo "capture: not whole: $(grep dropped "$CAPTURE_LOG")"
	return 1
}
