#!/usr/bin/env bash
# RC over rxdp through a bad link: the two hosts are joined through
# badwire (tests/rc/badwire.c), a forwarder in a third namespace that drops,
# duplicates and reorders RoCEv2 frames (this kernel has no netem, and
# AF_XDP transmits around the hosts' qdiscs anyway).
#
#   host A [IF_A] ---- [PA] badwire in R [PB] ---- [IF_B] host B
#
# 1. A clean run of rc_ops (every RC opcode, sizes 0 to 3 MiB, immediate
#    data, atomics, RNR and access-error NAKs) captured on PA: tshark must
#    decode every frame as InfiniBand, with no malformed or warned frame,
#    and show every RC opcode the run makes.
# 2. rc_ops' large transfers and atomics, checked streams (wirecheck: RC
#    whole, UC and UD Sends with what they lose counted), ibv_rc_pingpong
#    and perftest's write/read/send/atomic bandwidth tests through loss,
#    duplication and reordering: every byte and every atomic result checked
#    (rc_ops, wirecheck), every tool exits 0; badwire must have made each
#    kind of fault.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
. "$root/tests/lib/capture.sh"

require_root
require_cmd tshark tcpdump timeout ibv_rc_pingpong
rc_ops=$root/build/tests/rc/rc_ops
badwire=$root/build/tests/rc/badwire
[ -x "$rc_ops" ] && [ -x "$badwire" ] || fail "rc_ops/badwire not built"

id=$RXDP_TEST_ID
NS_A=rxa$id NS_B=rxb$id NS_R=rxr$id
IF_A=rxva$id IF_B=rxvb$id PA=rxpa$id PB=rxpb$id
ADDR_A=198.18.$(((id >> 8) & 255)).$((id & 255))
ADDR_B=198.19.$(((id >> 8) & 255)).$((id & 255))
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
for ns in $NS_A $NS_B $NS_R; do netns_add "$ns"; done
ip link add "$IF_A" netns "$NS_A" type veth peer name "$PA" netns "$NS_R" || fail "veth A"
ip link add "$IF_B" netns "$NS_B" type veth peer name "$PB" netns "$NS_R" || fail "veth B"
for p in $PA $PB; do
	ip netns exec "$NS_R" sysctl -qw "net.ipv6.conf.$p.disable_ipv6=1"
	ip -n "$NS_R" link set "$p" up
done
ip netns exec "$NS_A" sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
ip netns exec "$NS_B" sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
if [ -n "${NETNS_MTU:-}" ]; then # jumbo frames (tests/rc/jumbo.sh)
	for l in "$NS_A $IF_A" "$NS_B $IF_B" "$NS_R $PA" "$NS_R $PB"; do
		set -- $l
		ip -n "$1" link set "$2" mtu "$NETNS_MTU" || fail "MTU $NETNS_MTU on $2"
	done
fi
ip -n "$NS_A" addr add "$ADDR_A/15" dev "$IF_A"
ip -n "$NS_B" addr add "$ADDR_B/15" dev "$IF_B"
ip -n "$NS_A" link set "$IF_A" up
ip -n "$NS_B" link set "$IF_B" up

wire_pid=
wire_start() { # wire_start BADWIRE-OPTIONS...
	ip netns exec "$NS_R" "$badwire" "$@" "$PA" "$PB" >"$tmp/wire.log" 2>&1 &
	wire_pid=$!
	# it says so once both ports are open
	wait_until 10 grep -q "^badwire: $PA <-> $PB" "$tmp/wire.log" ||
		{ cat "$tmp/wire.log"; fail "badwire did not start"; }
}
wire_stop() { # badwire's counters into $counts (not in a $(...) subshell:
	# badwire is not that subshell's child, its wait would not wait)
	kill -TERM $wire_pid
	wait $wire_pid
	wire_pid=
	counts=$(tail -n 1 "$tmp/wire.log")
}
on_exit '[ -n "$wire_pid" ] && kill $wire_pid'

wire_start
RXDP_VERBS_TIMEOUT=100
rxdp_hosts "$tmp"

# rc_ops_run NAME GROUP...: server in A, client in B; the errors group
# ends by killing the server
rc_ops_run() {
	local name=$1 want=0
	shift
	[[ " $* " == *" errors "* ]] && want=137
	verbs "$NS_A" "$rc_ops" -d "$devA" -g "$gidA" server 18515 \
		>"$tmp/$name.srv" 2>&1 &
	local srv=$!
	if ! verbs "$NS_B" "$rc_ops" -d "$devB" -g "$gidB" client "$ADDR_A" \
		18515 "$@" >"$tmp/$name.cli" 2>&1; then
		grep -v '^ok ' "$tmp/$name.cli" | tail -n 30
		kill $srv 2>/dev/null
		fail "$name: rc_ops client failed"
	fi
	wait $srv
	local rc=$?
	[ $rc = $want ] || { cat "$tmp/$name.srv"; fail "$name: server exit $rc"; }
	echo "ok: $name: $(tail -n 1 "$tmp/$name.cli")"
}

# 1. a clean captured run (again where tcpdump, beside badwire on a busy
# machine, could not keep up: the capture checked is whole)
for try in 1 2 3; do
	capture_start "$NS_R" "$PA" "$tmp/cap.pcap" 0
	rc_ops_run capture basic errors
	capture_stop_whole && break
	[ $try = 3 ] && fail "the capture is not whole in three runs"
done
wire_stop
echo "clean wire: $counts"
capture_check "$tmp/cap.pcap" 1000
# every RC opcode (IBTA 9.2, table 39): Send/Write FIRST..ONLY with and
# without immediate, Read request and responses, ACK, atomic ACK, CmpSwap,
# FetchAdd
capture_has_ops $(seq 0 20)

# 2. through loss, duplication and reordering
wire_start -l 1 -d 1 -r 2 -s "$id"
RXDP_RC_OPS_ROUNDS=3 rc_ops_run "faults: rc_ops bulk" bulk
# checked streams: RC whole; UC and UD lose, and may deliver a duplicate
# or a late one (a UC responder starts a message at any first packet):
# counted. Their streams are Sends, whose every arrival has a completion,
# of 4 bytes or more (a shorter one names nobody: out of order, it would
# be taken for another).
WK_DIR=$tmp WK_TIMEOUT=200
wirecheck_from_b
streams=(
	"-t rc -o all -s 0-100000 -n 300 --sge 2"
	"-t uc -o send,send_imm -s 4-20000 -n 300 --lossy --settle 1000"
	"-t ud -o all -s 4-1024 -n 500 --lossy --settle 1000"
)
wirecheck_each 18600 "${streams[@]}"
# perftest checks its completions, not the data: still, every WR must end
for t in "ib_write_bw -s 262144" "ib_read_bw -s 262144" "ib_send_bw -s 65536" \
	"ib_atomic_bw"; do
	# shellcheck disable=SC2086
	verbs "$NS_A" $t -d "$devA" -x "$gidA" -F -n 100 >"$tmp/pt.srv" 2>&1 &
	srv=$!
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
		fail "$t: the server does not listen"
	# shellcheck disable=SC2086
	verbs "$NS_B" $t -d "$devB" -x "$gidB" -F -n 100 "$ADDR_A" \
		>"$tmp/pt.cli" 2>&1 || { tail "$tmp/pt.srv" "$tmp/pt.cli"; fail "$t"; }
	wait $srv || { tail "$tmp/pt.srv"; fail "$t (server)"; }
	echo "ok: faults: $t -n 100: $(grep -A1 '#bytes' "$tmp/pt.cli" | tail -n 1 | tr -s ' ')"
done
wire_stop
echo "faulty wire: $counts"
for what in dropped duplicated reordered; do
	n=$(sed -n "s/.* $what \([0-9]*\).*/\1/p" <<<"$counts")
	[ "${n:-0}" -gt 0 ] || fail "badwire made no frame $what"
done
# ibv_rc_pingpong has no closing handshake: each side exits once its own
# last WRs are done, so when an ACK of the last exchange is lost the other
# side retries into a QP that is gone and ends in RETRY_EXC_ERR, on any
# RDMA stack. Its data frames are faulted both ways, its ACKs spared; rc_ops
# and perftest above, which end with a handshake, lose ACKs too.
wire_start -a -l 1 -d 1 -r 2 -s "$id"
for s in 1 4096 1048576; do
	verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 50 -s $s \
		>"$tmp/pp.srv" 2>&1 &
	srv=$!
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
		fail "rc_pingpong -s $s: the server does not listen"
	verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -c -n 50 -s $s "$ADDR_A" \
		>"$tmp/pp.cli" 2>&1 || { cat "$tmp/pp.srv" "$tmp/pp.cli"; fail "rc_pingpong -s $s"; }
	wait $srv || { cat "$tmp/pp.srv"; fail "rc_pingpong server -s $s"; }
	echo "ok: faults: ibv_rc_pingpong -c -n 50 -s $s: $(tail -n 1 "$tmp/pp.cli")"
done
wire_stop
echo "faulty wire, ACKs spared: $counts"
echo "PASS: RC through a lossy, duplicating, reordering link; a capture tshark decodes"
