#!/usr/bin/env bash
# Engines follow their interface's queues (ethtool -L): host A's veth has 1
# RX queue of 4 when A's data path comes up (one engine, one socket); then
# it gets all 4 while that data path runs (and B's end, for XDP's sake,
# its 4 TX queues). rxdpd (--engines 2, one engine a queue: not auto's
# two on a device of one queue) must start a
# second engine for queue 1 and give queues 2 and 3 to the running engines,
# within the second it looks; host B (--engines 4) sends from all 4 queues
# (its contexts are spread over its 4 engines, each sending from its own
# queue, and on a veth a frame arrives on the queue it was sent from), so
# four checked streams (wirecheck: RC, UC and UD, every byte checked at the
# receiver) and an ib_write_bw at once reach A on every queue, and A's XDP program redirected frames of queues 2 and 3 to
# sockets (veth's per-queue counters) and found none missing. Queues never
# go while rxdpd holds them: the kernel refuses ethtool -L rx 2, and the
# device serves on.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ethtool timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_QUEUES=4 NETNS_NO_IPV6=1 netns_pair
listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }
# checked streams, A the target (wirecheck_bg in tests/lib/rxdp.sh)
WK_DIR=$tmp WK_TNS=$NS_A WK_CNS=$NS_B WK_ADDR=$ADDR_A
streams=(
	"-t rc -o all -s 0-20000 -n 500"
	"-t rc -o send,write -s 1-8192 -n 500 -q 2"
	"-t uc -o all -s 0-8192 -n 500"
	"-t ud -o all -s 0-1024 -n 500"
)
redirected() { # frames A's XDP program redirected to a socket on queue $1
	ip netns exec "$NS_A" ethtool -S "$IF_A" |
		sed -n "s/^ *rx_queue_$1_xdp_redirect: *//p"
}
no_xsk() {
	ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json stats |
		python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['xdp_verdicts']['drop_no_xsk'])"
}

# A's data path comes up with its device (QP1) on one queue: one engine.
# A veth runs its XDP program only on the queues it had when the program
# was attached (a driver reapplies it to every queue it sets up), so A's
# end shrinks after the attach, and B's TX side with it (XDP on a veth
# wants its RX queues no fewer than the peer's TX queues).
on_exit "ip netns exec $NS_A $RXDP_BIN/rxdp-loader detach $IF_A"
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-loader" attach "$IF_A" >/dev/null ||
	fail "rxdp-loader attach $IF_A"
ip netns exec "$NS_B" ethtool -L "$IF_B" tx 1 &&
	ip netns exec "$NS_A" ethtool -L "$IF_A" rx 1 ||
	fail "ethtool -L: this kernel's veth cannot change its queues"
ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" --engines 2 --engines-per-queue 1 \
	>"$tmp/rxdpd-A.log" 2>&1 &
on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
devA=rxdp_$IF_A
rxdp_wait_port "$NS_A" "$devA"
gidA=$(rxdp_ipv4_gid "$NS_A" "$devA")
wait_until 5 grep -q "data path up" "$tmp/rxdpd-A.log" || fail "A's data path is not up"
grep -q "data path up: 1 queue(s), 1 engine(s)" "$tmp/rxdpd-A.log" ||
	fail "A's data path is not one queue, one engine: $(grep 'data path' "$tmp/rxdpd-A.log")"

ip netns exec "$NS_A" ethtool -L "$IF_A" rx 4 || fail "ethtool -L $IF_A rx 4"
wait_until 5 grep -q "RX queue 3 served" "$tmp/rxdpd-A.log" ||
	fail "rxdpd did not take the new queues: $(tail -n 5 "$tmp/rxdpd-A.log")"
# B sends from 4 queues (its sockets bound once its veth end has them)
ip netns exec "$NS_B" ethtool -L "$IF_B" tx 4 || fail "ethtool -L $IF_B tx 4"
RXDPD_ARGS="--engines 4" rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
devB=rxdp_$IF_B
rxdp_wait_port "$NS_B" "$devB"
gidB=$(rxdp_ipv4_gid "$NS_B" "$devB")
wait_until 5 grep -q "data path up" "$tmp/rxdpd-B.log" || fail "B's data path is not up"
grep -q "data path up: 4 queue(s), 4 engine(s)" "$tmp/rxdpd-B.log" ||
	fail "B's data path is not 4 queues, 4 engines"

grep "RX queue" "$tmp/rxdpd-A.log"
grep -q "RX queue 1 served by engine 1: 2 queue(s), 2 engine(s)" "$tmp/rxdpd-A.log" &&
	grep -q "RX queue 2 served by engine 0: 3 queue(s), 2 engine(s)" "$tmp/rxdpd-A.log" &&
	grep -q "RX queue 3 served by engine 1: 4 queue(s), 2 engine(s)" "$tmp/rxdpd-A.log" ||
	fail "queues 1-3 not on a new engine and then the running ones"
threads=$(rxdpd_threads "$NS_A" rxdp-datapath | wc -l)
[ "$threads" = 2 ] || fail "A runs $threads data-path threads, not 2"
nx=$(ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json devices |
	python3 -c "import json,sys; d=json.load(sys.stdin)['devices'][0]; print(d['rx_queues'], len(d['xsks']))")
[ "$nx" = "4 4" ] || fail "rxdp-ctl devices shows A's RX queues and AF_XDP sockets as $nx, not 4 4"

WK_TDEV=$devA WK_TGID=$gidA WK_CDEV=$devB WK_CGID=$gidB
r2=$(redirected 2)
r3=$(redirected 3)
pids=()
for i in 1 2 3 4; do
	# shellcheck disable=SC2086
	wirecheck_bg "s$i" $((18990 + i)) ${streams[i - 1]}
done
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -s 65536 -n 2000 -p 18999 >"$tmp/ws" 2>&1 &
pids+=($!)
wait_until 10 listening 18999 || fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -s 65536 -n 2000 -p 18999 "$ADDR_A" >"$tmp/wc" 2>&1 &
pids+=($!)
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
for i in 1 2 3 4; do
	wirecheck_wait "s$i" || { ok=0; echo "stream ${streams[i - 1]} failed"; }
done
grep -q '^ *65536 ' "$tmp/wc" || { ok=0; echo "ib_write_bw:"; tail -n 4 "$tmp/ws" "$tmp/wc"; }
d2=$(($(redirected 2) - r2))
d3=$(($(redirected 3) - r3))
nx=$(no_xsk)
echo "A redirected on queue 2: $d2, on queue 3: $d3; drop_no_xsk $nx"
[ "$d2" -gt 0 ] && [ "$d3" -gt 0 ] || { ok=0; echo "queues 2 and 3 carried nothing to a socket"; }
[ "$nx" = 0 ] || { ok=0; echo "frames found no socket on their queue"; }
[ $ok = 1 ] || fail "traffic over the queues A gained"

# the kernel keeps a queue while an AF_XDP socket is bound on it
if ip netns exec "$NS_A" ethtool -L "$IF_A" rx 2 2>"$tmp/shrink"; then
	fail "ethtool -L rx 2 went through under rxdpd's sockets (the kernel now allows it: follow it)"
fi
echo "ethtool -L rx 2 refused: $(head -n 1 "$tmp/shrink")"
wirecheck_run after 18998 -t rc -o all -s 0-8192 -n 200 ||
	fail "a checked stream after the refused shrink"
echo PASS
