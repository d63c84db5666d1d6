#!/usr/bin/env bash
# The RDMA connection manager between two rxdp hosts, with rdma-core's own
# programs on build/lib's librdmacm.so.1 and libibverbs.so.1:
#   rping -V -C 100 (rping compares every ping's data, -V; over IPv6 too;
#   and with rdma-core's
#   libraries loaded beside, channels made epoll sets), ucmatose (4 connections, and a
#   migration to another channel), udaddy (UD: SIDR), rdma_server and
#   rdma_client (rdma_create_ep, synchronous ids), ib_write_bw -R and
#   ib_send_lat -R, rstream (rsockets: latency and bandwidth, verified);
#   a connection to a port nobody listens on is a REJ (reason 8, invalid
#   service ID), a listener that refuses is a REJ (28, consumer defined),
#   a connection whose peer is killed ends with DISCONNECTED, both ways;
#   the CM exchange, captured on the way, decodes in Wireshark's InfiniBand
#   dissector as CM messages (REQ, REP, RTU, DREQ, DREP, REJ, SIDR_REQ,
#   SIDR_REP), without an error.
#
# The hosts hang off a bridge in a third namespace, where the capture is
# taken (AF_XDP frames pass around the hosts' own taps):
#   host A [rxva] ---- [rxpa] bridge in R [rxpb] ---- [rxvb] host B
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
. "$root/tests/lib/capture.sh"

require_root
require_cmd rping ucmatose udaddy rdma_server rdma_client rstream \
	ib_write_bw ib_send_lat tshark tcpdump timeout stdbuf
[ -f "$RXDP_LIB/librdmacm.so.1" ] || fail "build/lib/librdmacm.so.1 not built (make)"

id=$RXDP_TEST_ID
tmp=$(mktemp -d)
[ -n "${RXDP_KEEP:-}" ] || on_exit "rm -rf '$tmp'"
NETNS_IPV6=1 netns_bridged
# and IPv6 (unique local, no duplicate address detection to wait for)
ADDR6_A=fd00:$(printf %x $((id & 0xffff))):1::1
ADDR6_B=fd00:$(printf %x $((id & 0xffff))):1::2
ip -n "$NS_A" addr add "$ADDR6_A/64" dev "$IF_A" nodad
ip -n "$NS_B" addr add "$ADDR6_B/64" dev "$IF_B" nodad

RXDP_VERBS_TIMEOUT=60
rxdp_hosts "$tmp"
for h in A B; do
	wait_until 10 grep -q "QP1 up" "$tmp/rxdpd-$h.log"
done
grep -q "QP1 up" "$tmp/rxdpd-A.log" && grep -q "QP1 up" "$tmp/rxdpd-B.log" ||
	fail "QP1 did not come up: $(cat "$tmp"/rxdpd-*.log)"

capture_start "$NS_R" "$PA" "$tmp/cm.pcap" 512

# listens NS PORT: whether an id of NS listens on PORT (rxdp-ctl cm)
listens() {
	ip netns exec "$1" "$RXDP_BIN/rxdp-ctl" cm 2>/dev/null |
		grep -qE " listen +[^ ]+ +[^ ]*:$2 "
}
# listening NS PORT: wait until one does
listening() { wait_until 10 listens "$1" "$2"; }
no_listener() { ! listens "$1" "$2"; }

# cm_pair NAME PORT SERVER... -- CLIENT...: the server in B, the client in
# A once the server listens on PORT
cm_pair() {
	local name=$1 port=$2 srv_args=() cli_args=() ok=1 rc=0 src=0
	shift 2
	while [ "$1" != -- ]; do srv_args+=("$1"); shift; done
	shift
	cli_args=("$@")
	verbs "$NS_B" stdbuf -oL "${srv_args[@]}" >"$tmp/$name.srv" 2>&1 &
	local srv=$!
	if listening "$NS_B" "$port"; then
		verbs "$NS_A" stdbuf -oL "${cli_args[@]}" >"$tmp/$name.cli" 2>&1 ||
			{ rc=$?; ok=0; }
	else
		echo "$name: the server does not listen on $port"
		ok=0
	fi
	wait $srv || { src=$?; ok=0; }
	# its listener goes with it (rxdpd releases the ids of a client that
	# is gone), before the next pair's server may listen on the same port
	# and its client must not find this one's instead
	wait_until 10 no_listener "$NS_B" "$port" || {
		echo "$name: a listener on $port outlived its server"
		ok=0
	}
	if [ $ok = 1 ]; then
		echo "ok: $name"
	else
		echo "--- $name server (exit $src)"; tail -n 15 "$tmp/$name.srv"
		echo "--- $name client (exit $rc)"; tail -n 15 "$tmp/$name.cli"
		fail "$name"
	fi
}

# (rping through tests/lib/rping-run: Debian 12's rping has an exit race)
RPING=$root/tests/lib/rping-run
# -V: rping compares each ping's data with what it sent and fails on a
# mismatch ("data mismatch!"); -v prints each one, which is counted
cm_pair rping 7174 "$RPING" -s -a "$ADDR_B" -v -V -C 100 -- "$RPING" -c -a "$ADDR_B" -v -V -C 100
n=$(grep -c "^ping data: rdma-ping-" "$tmp/rping.cli")
[ "$n" -eq 100 ] || fail "rping: $n of 100 pings came back"
! grep -q "mismatch" "$tmp/rping.cli" "$tmp/rping.srv" || fail "rping: a ping's data differs"
grep -q "DISCONNECT EVENT" "$tmp/rping.srv" || fail "rping: the server saw no DISCONNECTED"

cm_pair "rping (IPv6)" 7174 "$RPING" -s -a "$ADDR6_B" -v -V -C 20 -- \
	"$RPING" -c -a "$ADDR6_B" -v -V -C 20
[ "$(grep -c "^ping data: rdma-ping-" "$tmp/rping (IPv6).cli")" -eq 20 ] ||
	fail "rping over IPv6: not every ping verified"
# rdma-core's libraries loaded beside rxdp's in both programs (as where the
# kernel has RDMA devices; forced here, where it has none): the channels
# become epoll sets of rxdpd's socket and rdma-core's channel, rxdp's ids
# stay rxdp's, and rping's event thread, which blocks in rdma_get_cm_event
# while the main thread loads libraries, neither hangs nor misses an event
sys=$(find /usr/lib /usr/lib64 -name libibverbs.so.1 -path '*linux-gnu*' 2>/dev/null | head -n 1)
[ -n "$sys" ] || fail "no rdma-core libibverbs.so.1 on this host"
cm_pair "rping (rdma-core beside)" 7174 env RXDP_RDMA_CORE="$sys" "$RPING" -s -a "$ADDR_B" -v -V -C 20 -- \
	env RXDP_RDMA_CORE="$sys" "$RPING" -c -a "$ADDR_B" -v -V -C 20
[ "$(grep -c "^ping data: rdma-ping-" "$tmp/rping (rdma-core beside).cli")" -eq 20 ] ||
	fail "rping with rdma-core's libraries beside: not every ping verified"
cm_pair ucmatose 7471 ucmatose -c 4 -C 20 -- ucmatose -s "$ADDR_B" -c 4 -C 20
grep -q "return status 0" "$tmp/ucmatose.cli" || fail "ucmatose client"
cm_pair "ucmatose (migrated)" 7471 ucmatose -m -C 5 -- ucmatose -m -s "$ADDR_B" -C 5
cm_pair udaddy 7174 udaddy -c 2 -C 20 -- udaddy -s "$ADDR_B" -c 2 -C 20
grep -q "return status 0" "$tmp/udaddy.cli" || fail "udaddy client"
cm_pair rdma_server+client 7471 rdma_server -- rdma_client -s "$ADDR_B"
grep -q "rdma_client: end 0" "$tmp/rdma_server+client.cli" ||
	fail "rdma_client: $(cat "$tmp/rdma_server+client.cli")"
cm_pair "ib_write_bw -R" 18515 ib_write_bw -R -d "$devB" -n 200 -- \
	ib_write_bw -R -d "$devA" -n 200 "$ADDR_B"
grep -A1 "#bytes" "$tmp/ib_write_bw -R.cli" | tail -n 1 | sed 's/^/    /'
cm_pair "ib_send_lat -R" 18515 ib_send_lat -R -d "$devB" -n 500 -- \
	ib_send_lat -R -d "$devA" -n 500 "$ADDR_B"
grep -A1 "#bytes" "$tmp/ib_send_lat -R.cli" | tail -n 1 | sed 's/^/    /'

# rsockets: latency (ping-pong) and bandwidth (streams each way), data
# verified; blocking, non-blocking (spinning) and rpoll-driven calls
cm_pair "rstream latency" 7471 rstream -S 64 -I 500 -C 1 -T v -T b -- \
	rstream -s "$ADDR_B" -S 64 -I 500 -C 1 -T v -T b
cm_pair "rstream latency (non-blocking)" 7471 rstream -S 100 -I 100 -C 1 -T v -- \
	rstream -s "$ADDR_B" -S 100 -I 100 -C 1 -T v
cm_pair "rstream bandwidth (rpoll)" 7471 rstream -S 65536 -I 1 -C 300 -T v -T a -- \
	rstream -s "$ADDR_B" -S 65536 -I 1 -C 300 -T v -T a
cm_pair "rstream bandwidth" 7471 rstream -S 1000000 -I 1 -C 20 -T v -T b -- \
	rstream -s "$ADDR_B" -S 1000000 -I 1 -C 20 -T v -T b
for m in "rstream latency" "rstream bandwidth (rpoll)" "rstream bandwidth"; do
	grep -q "^custom" "$tmp/$m.cli" || fail "$m: no result"
	grep "^custom" "$tmp/$m.cli" | sed "s/^custom/    $m:/"
done

# Refusals: a REJ, at once, not a timeout
verbs "$NS_A" rping -c -a "$ADDR_B" -p 9 -C 1 >"$tmp/unused.out" 2>&1
grep -q "RDMA_CM_EVENT_REJECTED, error 8" "$tmp/unused.out" ||
	fail "a connection to an unused port: $(cat "$tmp/unused.out")"
echo "ok: a connection to an unused port is rejected (reason 8)"
# (cm_check: the listener refuses the first request with private data,
# takes the second without a QP; the client establishes and disconnects)
CM_CHECK=$root/build/tests/rdmacm/cm_check
[ -x "$CM_CHECK" ] || fail "$CM_CHECK not built (make test)"
cm_pair "cm_check: REJ, then accepted with no QP" 7777 "$CM_CHECK" server 7777 -- \
	"$CM_CHECK" client "$ADDR_B" 7777
grep -q "rejected: status 28" "$tmp/cm_check: REJ, then accepted with no QP.cli" ||
	fail "the listener's REJ"
echo "ok: a connection the listener refuses is rejected (reason 28, its private data)"
verbs "$NS_A" "$CM_CHECK" api "$ADDR_A" >"$tmp/api.out" 2>&1 ||
	fail "cm_check api: $(cat "$tmp/api.out")"
echo "ok: non-blocking and polled channels, bind conflicts, synchronous ids"

# kill_prog PID NAME: kill -9 the process NAME that runs under PID (a
# `verbs ... &` job: a subshell, then ip, env, timeout, then NAME)
kill_prog() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ]; then
			kill -9 "$c"
			return 0
		fi
		kill_prog "$c" "$2" && return 0
	done
	return 1
}

# A peer killed mid-connection: the survivor hears DISCONNECTED (rxdpd sends
# the DREQ for the process it lost)
for victim in client server; do
	verbs "$NS_B" rping -s -a "$ADDR_B" >"$tmp/kill.srv" 2>&1 &
	srv=$!
	listening "$NS_B" 7174 || fail "rping does not listen"
	verbs "$NS_A" stdbuf -oL rping -c -v -a "$ADDR_B" >"$tmp/kill.cli" 2>&1 &
	cli=$!
	# connected, and pinging
	wait_until 10 grep -q "^ping data" "$tmp/kill.cli" ||
		fail "rping client: $(cat "$tmp/kill.cli")"
	if [ $victim = client ]; then
		kill_prog $cli rping; survivor=$srv; out=$tmp/kill.srv
	else
		kill_prog $srv rping; survivor=$cli; out=$tmp/kill.cli
	fi
	start=$(date +%s)
	wait $survivor
	wait $cli $srv 2>/dev/null
	# DISCONNECTED is the DREQ rxdpd sends for the dead process; the
	# survivor may meet the dead QP first (an error completion) and exit
	if grep -q "DISCONNECT EVENT" "$out"; then
		how=DISCONNECTED
	elif grep -q "cq completion failed" "$out"; then
		how="an error completion"
	else
		fail "$victim killed: the peer saw no DISCONNECTED: $(tail -n 5 "$out")"
	fi
	echo "ok: $victim killed: the peer got $how within $(($(date +%s) - start)) s"
done

capture_stop
# the dissectors that guess at what a Send's payload carries (RPC over
# RDMA, EoIB, IPoIB, FCoIB, SDP) read the test programs' data as their
# protocols and call it malformed (as in tests/engine/tshark_decode.sh)
ts() {
	tshark -r "$tmp/cm.pcap" --disable-protocol rpcordma \
		--disable-protocol infiniband.eoib --disable-protocol ipoib \
		--disable-protocol fcoib --disable-protocol infiniband_sdp \
		"$@" 2>/dev/null
}
total=$(ts | wc -l)
mads=$(ts -Y 'infiniband.mad' | wc -l)
bad=$(ts -Y '_ws.malformed || _ws.expert.severity >= warning' | wc -l)
echo "capture: $total frames, $mads management datagrams, $bad malformed or warned"
[ "$bad" -eq 0 ] || {
	ts -Y '_ws.malformed || _ws.expert.severity >= warning' | head
	fail "capture: malformed frames"
}
attrs=" $(ts -Y 'infiniband.mad' -T fields -e infiniband.mad.attributeid | sort -u | tr '\n' ' ')"
echo "capture: CM attributes seen:$attrs"
for a in 0x0010 0x0012 0x0013 0x0014 0x0015 0x0016 0x0017 0x0018; do
	[[ "$attrs" == *" $a "* ]] || fail "capture: no CM attribute $a"
done
# A REQ's or REP's Starting PSN is the PSN its sender will receive from: the
# other side sends from it (Linux's CM: the sender's rq_psn, the receiver's
# sq_psn). A CM that reads it the other way round talks only to itself.
# Checked on the first connection (rping over IPv4): the first request
# packet each way starts at the PSN the other side's message named.
ts -T fields -e ip.src -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e infiniband.cm.req.startpsn \
	-e infiniband.cm.req.localqpn -e infiniband.cm.rep.startpsn \
	-e infiniband.cm.rep.localqpn >"$tmp/psn.tsv"
python3 - "$tmp/psn.tsv" <<'PY' || fail "capture: a Starting PSN the peer did not send from"
import sys
req = rep = None
first = {}
for line in open(sys.argv[1]):
    src, op, dqp, psn, reqpsn, reqqpn, reppsn, repqpn = \
        (line.rstrip("\n").split("\t") + [""] * 8)[:8]
    n = lambda v: int(v, 0)
    if reqpsn and req is None:
        req = (n(reqqpn), n(reqpsn))
    elif reppsn and req and rep is None:
        rep = (n(repqpn), n(reppsn))
    elif rep and op and not 13 <= int(op) <= 18 and n(dqp) in (req[0], rep[0]):
        first.setdefault(n(dqp), int(psn))
ok = True
for name, (qpn, psn) in (("REQ", req), ("REP", rep)):
    got = first.get(qpn)
    print(f"capture: {name} Starting PSN {psn:#x}, first request to QP "
          f"{qpn:#x} at PSN {got:#x}" if got is not None else
          f"capture: no request to QP {qpn:#x}")
    ok &= got == psn
sys.exit(0 if ok else 1)
PY
echo "PASS: RDMA CM between rxdp hosts"
