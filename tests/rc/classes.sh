#!/usr/bin/env bash
# Service classes (rxdpd --tc) end to end, between two namespaces joined by
# a veth pair:
#  - A has one latency class (SL 5, strict) and the rest; B, by an
#    interface of its own, a strict SL 5, SL 0-4 weight 60 and the rest;
#    rxdp-ctl devices (text and --json) shows each device's
#  - a checked RC stream at SL 5 (wirecheck --sl 5: every operation, every
#    byte at its receiver) runs in SL 5's class, an RDMA Write stream with
#    the default SL 0 in the other at the same time: each class's counters
#    count its own packets and bytes (the stream's 500 x 64 KiB in the bulk
#    class, the checked stream's in the strict one, both ways)
#  - rxdp-ctl qps shows each QP's class: a stream at SL 5 (perftest -S 5)
#    in B's class 0, one at SL 3 in its class 1
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw python3 timeout
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--tc 5=strict --tc $IF_B:5=strict --tc $IF_B:0-4=60" rxdp_hosts "$tmp"

ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" devices >"$tmp/devs-a" ||
	fail "rxdp-ctl devices"
grep -q "^    class 0: SL 5, strict: sent 0 packets" "$tmp/devs-a" &&
	grep -q "^    class 1: SL 0-4,6-15, weight 1: sent 0 packets" "$tmp/devs-a" &&
	[ "$(grep -c "^    class " "$tmp/devs-a")" = 2 ] ||
	fail "rxdp-ctl devices: not A's two classes: $(cat "$tmp/devs-a")"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" devices >"$tmp/devs-b"
grep -q "^    class 0: SL 5, strict" "$tmp/devs-b" &&
	grep -q "^    class 1: SL 0-4, weight 60" "$tmp/devs-b" &&
	grep -q "^    class 2: SL 6-15, weight 1" "$tmp/devs-b" ||
	fail "rxdp-ctl devices: not B's three classes: $(cat "$tmp/devs-b")"
echo "ok   rxdp-ctl devices: A's classes (every interface's), B's (its own)"

verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -s 65536 -n 500 -p 19310 \
	>"$tmp/bw-srv" 2>&1 &
srv=$!
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':19310 '" ||
	fail "the ib_write_bw server does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -s 65536 -n 500 -p 19310 \
	"$ADDR_A" >"$tmp/bw-cli" 2>&1 &
cli=$!
# B sends the checked stream to A, both QPs at SL 5
WK_DIR=$tmp
wirecheck_from_b
wirecheck_run sl5 19311 -t rc -o all -s 1-1024 -n 200 --sl 5 ||
	fail "the checked stream at SL 5"
wait $cli || fail "ib_write_bw: $(cat "$tmp/bw-cli")"
wait $srv || fail "ib_write_bw server: $(cat "$tmp/bw-srv")"

ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json devices >"$tmp/a.json"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" --json devices >"$tmp/b.json"
python3 - "$tmp/a.json" "$tmp/b.json" "$tmp/sl5.client" <<'PY' || fail "the classes' counters"
import json, re, sys
a = json.load(open(sys.argv[1]))["devices"][0]["classes"]
b = json.load(open(sys.argv[2]))["devices"][0]["classes"]
summary = re.search(r"^summary: .* bytes=(\d+) .* read_bytes=(\d+) ",
                    open(sys.argv[3]).read(), re.M)
sent, read = int(summary.group(1)), int(summary.group(2))
assert [(c["sls"], c["strict"], c["weight"]) for c in a] == \
    [("5", True, 0), ("0-4,6-15", False, 1)], a
assert [(c["sls"], c["strict"], c["weight"]) for c in b] == \
    [("5", True, 0), ("0-4", False, 60), ("6-15", False, 1)], b
stream = 500 * 65536
# the checked stream: what wirecheck delivered (B to A) and read (A to B)
# went in the strict class both ways (and, with ACKs, nothing of the
# stream's)
assert b[0]["tx_packets"] >= 200 and a[0]["rx_packets"] >= 200, (a[0], b[0])
assert a[0]["tx_packets"] > 0 and b[0]["rx_packets"] > 0, (a[0], b[0])
for c, least in ((b[0]["tx_bytes"], sent), (a[0]["rx_bytes"], sent),
                 (a[0]["tx_bytes"], read), (b[0]["rx_bytes"], read)):
    assert least <= c < stream // 100, (a[0], b[0], sent, read)
# the stream: B sent it in its SL 0-4 class, A received it in its bulk one
assert b[1]["tx_bytes"] >= stream and a[1]["rx_bytes"] >= stream, (a, b)
assert b[1]["rx_bytes"] < stream // 100 and a[1]["tx_bytes"] < stream // 100
assert b[2]["tx_packets"] == 0 and b[2]["rx_packets"] == 0, b[2]
print("ok   the checked stream (SL 5) in the strict class: %d packets sent "
      "by B, %d by A; the stream (SL 0) in the weighted one: %d bytes" %
      (b[0]["tx_packets"], a[0]["tx_packets"], b[1]["tx_bytes"]))
PY

# each QP's class, as rxdp-ctl qps shows it, while two streams run
for sl in 5 3; do
	port=$((19320 + sl))
	verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -S "$sl" -D 4 \
		-p "$port" >"$tmp/sl$sl-srv" 2>&1 &
	eval "srv$sl=\$!"
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':$port '" ||
		fail "ib_write_bw -S $sl: the server does not listen"
	verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -S "$sl" -D 4 \
		-p "$port" "$ADDR_A" >"$tmp/sl$sl-cli" 2>&1 &
	eval "cli$sl=\$!"
done
on_exit "kill ${srv5:-} ${srv3:-} ${cli5:-} ${cli3:-} 2>/dev/null"
two_rts() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" --json qps >"$tmp/qps.json" &&
		[ "$(grep -o '"state":"RTS"' "$tmp/qps.json" | wc -l)" -ge 2 ]
}
wait_until 10 two_rts || fail "rxdp-ctl qps: not two QPs in RTS: $(cat "$tmp/qps.json")"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" qps >"$tmp/qps.txt"
for p in $cli5 $cli3 $srv5 $srv3; do
	wait "$p" || fail "ib_write_bw -S: $(cat "$tmp"/sl*-cli)"
done
python3 - "$tmp/qps.json" <<'PY' || fail "rxdp-ctl qps: the QPs' classes"
import json, sys
qps = [q for q in json.load(open(sys.argv[1]))["qps"]
       if q["type"] == "RC" and q["state"] == "RTS"]
assert sorted(q["class"] for q in qps) == [0, 1], qps
print("ok   rxdp-ctl qps: the SL 5 stream's QP in class 0, the SL 3 one's in "
      "class 1")
PY
grep -q "^  device .* srtt_us class engine$" "$tmp/qps.txt" || fail "rxdp-ctl qps: no class column: $(cat "$tmp/qps.txt")"
echo PASS
