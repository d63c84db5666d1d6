#!/usr/bin/env bash
# More engines than queues (rxdpd --engines-per-queue auto, the default:
# 2 on 1-queue veths where the engines may use two CPUs): both engines bind a socket on the one queue, the second sharing
# the first's UMEM and its fill and completion rings (XDP_SHARED_UMEM on
# the same queue id), and the XDP program sends each QP's packets straight to its
# engine's socket (the QP context's owner slot; engine/xsk.c, "A queue's
# fill and completion rings"). Two checked streams at once (wirecheck:
# every operation, every byte checked at the receiver), RC with Writes,
# Reads and Sends as root and UD as another user (65534): each user's
# contexts on another engine of each host (users sit apart; the engine
# beyond the queue's first is for a second user); both finish whole,
# rxdp-ctl qps shows the QPs of each host on engines 0 and 1, no packet
# was handed from one engine to the other (each came to its own engine's
# socket), and the XDP program found a socket for every one. Then a
# looped-back stream on host A of one user alone: both its contexts on the
# queue's first engine, so nothing is handed over (a user's own contexts
# on two engines would hand every packet over), every byte checked.
# Last, auto with --poll: one engine (a second would spin a second CPU).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd python3 timeout
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_QUEUES=1 NETNS_NO_IPV6=1 netns_pair
# two engines whatever this machine's CPUs; the engines a queue: auto's
RXDPD_ARGS="--engines 2" rxdp_hosts "$tmp"
for h in A B; do
	grep -q "data path up: 1 queue(s), 2 engine(s)" "$tmp/rxdpd-$h.log" ||
		fail "host $h: not 2 engines on 1 queue: $(grep "data path" "$tmp/rxdpd-$h.log")"
done

WK_DIR=$tmp
rts() { # rts NS FILE N: N QPs of NS in RTS, written to FILE
	ip netns exec "$1" "$RXDP_BIN/rxdp-ctl" --json qps >"$2" &&
		[ "$(grep -o '"state":"RTS"' "$2" | wc -l)" -ge "$3" ]
}
engines_of() { # engines_of FILE: its RTS QPs' engines, sorted
	python3 - "$1" <<'PY'
import json, sys
qps = [q for q in json.load(open(sys.argv[1]))["qps"] if q["state"] == "RTS"]
print(*sorted(q["engine"] for q in qps))
PY
}
hA0=$(rxdp_counter "$NS_A" rx_handoffs)
hB0=$(rxdp_counter "$NS_B" rx_handoffs)
nA0=$(rxdp_verdict "$NS_A" drop_no_xsk)
nB0=$(rxdp_verdict "$NS_B" drop_no_xsk)
streams=("-t rc -o all -s 0-20000 -D 4" "-t ud -o all -s 0-1024 -D 4")
as=("" "setpriv --reuid=65534 --regid=65534 --clear-groups")
chmod 755 "$tmp"
for i in 0 1; do
	# shellcheck disable=SC2086 # the options: words
	WK_TWRAP=${as[i]} WK_CWRAP=${as[i]} \
		wirecheck_bg "s$i" $((19450 + i)) ${streams[i]}
	wait_until 10 rts "$NS_A" "$tmp/a.json" $((i + 1)) ||
		fail "${streams[i]}: its QP on A not in RTS: $(cat "$tmp/s$i.client")"
done
wait_until 10 rts "$NS_B" "$tmp/b.json" 2 || fail "not two QPs in RTS on B"
rts "$NS_A" "$tmp/a.json" 2 || fail "not two QPs in RTS on A"
for h in a b; do
	e=$(engines_of "$tmp/$h.json")
	[ "$e" = "0 1" ] || fail "host $h: the streams' QPs on engines '$e', not 0 and 1"
done
echo "ok   each host's two streams on engines 0 and 1"
for i in 0 1; do
	wirecheck_wait "s$i" || fail "wirecheck ${streams[i]}"
	echo "ok   ${streams[i]}: every byte checked"
done
for h in A B; do
	ns=NS_$h h0=hA0 n0=nA0
	[ $h = B ] && h0=hB0 n0=nB0
	hn=$(rxdp_counter "${!ns}" rx_handoffs)
	[ "$hn" = "${!h0}" ] ||
		fail "host $h: $((hn - ${!h0})) packets handed between engines: the XDP program did not steer them"
	nn=$(rxdp_verdict "${!ns}" drop_no_xsk)
	[ "$nn" = "${!n0}" ] || fail "host $h: $((nn - ${!n0})) packets found no socket"
done
echo "ok   every packet came to its own engine's socket (no handoff, no drop_no_xsk)"

# looped back on A, one user alone: target and client on engine 0
WK_TNS=$NS_A WK_TDEV=$devA WK_TGID=$gidA WK_ADDR=$ADDR_A
h0=$(rxdp_counter "$NS_A" rx_handoffs)
wirecheck_bg loop 19460 -t rc -o all -s 0-20000 -D 3
wait_until 10 rts "$NS_A" "$tmp/a.json" 2 || fail "looped back: not two QPs in RTS"
e=$(engines_of "$tmp/a.json")
[ "$e" = "0 0" ] || fail "looped back, one user: its QPs on engines '$e', not both on 0"
wirecheck_wait loop || fail "wirecheck looped back on one engine"
h=$(rxdp_counter "$NS_A" rx_handoffs)
[ "$h" = "$h0" ] || fail "looped back on one engine: $((h - h0)) packets handed over"
echo "ok   one user's looped-back stream on the queue's first engine: every byte checked, none handed over"

RXDPD_ARGS="--engines 2 --poll" rxdp_restart "$NS_A" "$devA" "$tmp/rxdpd-A2.log"
wait_until 5 grep -q "data path up" "$tmp/rxdpd-A2.log" || fail "polling: no data path"
grep -q "data path up: 1 queue(s), 1 engine(s)" "$tmp/rxdpd-A2.log" ||
	fail "auto with --poll: $(grep "data path" "$tmp/rxdpd-A2.log"), not 1 engine"
echo "ok   auto with --poll: one engine on the queue"
echo PASS
