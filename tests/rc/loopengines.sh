#!/usr/bin/env bash
# Two contexts of one device talking through it, on two engines (rxdpd
# --engines 2 on a 2-queue veth; one user's contexts spread over the
# engines): every looped-back packet is handed to the other engine, whose
# passes the handing thread runs itself (engine.c, eng_handoff_run) rather
# than waking it for each. A checked RC stream (wirecheck: every
# operation, every byte checked at the receiver) and a checked UD one,
# each looped back on host A, finish whole; packets were handed over and
# the handing engines ran the others' passes (rx_handoffs,
# rx_handoff_runs); rxdp-ctl qps shows each stream's two QPs on two
# engines.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd python3 timeout
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_QUEUES=2 NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--engines 2" rxdp_hosts "$tmp"
grep -q "data path up: 2 queue(s), 2 engine(s)" "$tmp/rxdpd-A.log" ||
	fail "not 2 engines: $(grep "data path" "$tmp/rxdpd-A.log")"

# both ends on A: the target's context first (engine 0), the client's
# then on the engine with fewer (engine 1)
WK_DIR=$tmp WK_TNS=$NS_A WK_TDEV=$devA WK_TGID=$gidA WK_ADDR=$ADDR_A
WK_CNS=$NS_A WK_CDEV=$devA WK_CGID=$gidA
listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }
both_rts() {
	ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json qps >"$tmp/qps.json" &&
		[ "$(grep -o '"state":"RTS"' "$tmp/qps.json" | wc -l)" -ge 2 ]
}
i=0
for st in "-t rc -o all -s 0-20000 -D 2" "-t ud -o all -s 0-1024 -D 2"; do
	i=$((i + 1))
	h0=$(rxdp_counter "$NS_A" rx_handoffs)
	wirecheck_target "s$i" $((19410 + i))
	wait_until 10 listening $((19410 + i)) || fail "wirecheck s$i does not listen"
	# shellcheck disable=SC2086 # the options: words
	wirecheck_client "s$i" $((19410 + i)) $st
	wait_until 10 both_rts || fail "$st: not two QPs in RTS: $(cat "$tmp/qps.json" "$tmp"/s*.client)"
	python3 - "$tmp/qps.json" <<'PY' || fail "$st: its QPs' engines"
import json, sys
qps = [q for q in json.load(open(sys.argv[1]))["qps"] if q["state"] == "RTS"]
assert sorted(q["engine"] for q in qps) == [0, 1], qps
PY
	wirecheck_wait "s$i" || fail "wirecheck $st looped back across engines"
	h=$(rxdp_counter "$NS_A" rx_handoffs)
	[ "$h" -gt "$h0" ] || fail "$st: no packet handed over ($h0 -> $h)"
	echo "ok   $st: looped back across engines, every byte checked, $((h - h0)) packets handed over"
done
r=$(rxdp_counter "$NS_A" rx_handoff_runs)
[ "$r" -gt 0 ] || fail "no engine ran another's passes (rx_handoff_runs 0)"
echo "ok   the handing engines ran the others' passes $r times"
echo PASS
