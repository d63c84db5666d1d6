#!/usr/bin/env bash
# Several engines per device (rxdpd --engines 2 --cpus 0,1 on a veth with 2
# queues): two data-path threads per rxdpd, each on its CPU of the list,
# contexts spread over them, and packets
# that arrive on the other engine's queue handed over to the QP's engine.
# On a veth a frame arrives on the queue the sender sent it from, and an
# engine sends from its own queue, so a pair whose two contexts sit on
# engines of different numbers is crossed: host B holds an idle context
# first, which moves B's contexts one engine along. Three checked streams
# (wirecheck: RC, UC and UD, every operation, every byte checked at the
# receiver) and one ib_write_bw run at once; every one must finish whole,
# and the devices must have handed packets over.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ibv_rc_pingpong timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_QUEUES=2 NETNS_NO_IPV6=1 netns_pair
# engine k on the k-th CPU of --cpus, where there are two
cpus=""
[ "$(nproc)" -ge 2 ] && cpus="--cpus 0,1"
RXDPD_ARGS="--engines 2 $cpus" rxdp_hosts "$tmp"

threads() { # the CPUs each data-path thread of the rxdpd in NS may use
	local t
	for t in $(rxdpd_threads "$1" rxdp-datapath); do
		sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status"
	done | sort | tr '\n' ' '
}
listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }

# B's idle context (a pingpong server nobody calls: it makes its QP, then
# listens) takes B's engine 0
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -p 18990 >/dev/null 2>&1 &
idle=$!
on_exit "kill $idle 2>/dev/null"
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':18990 '" ||
	fail "the idle pingpong server does not listen"

pids=()
streams=(
	"-t rc -o all -s 0-20000 -n 1000"
	"-t uc -o all -s 0-20000 -n 1000 --sge 2"
	"-t ud -o all -s 0-1024 -n 1000 -q 2"
)
# one pair at a time, each side's context open (the server listens, the
# client connected) before the next pair starts: each host's engine with
# the fewest contexts takes the next, so B's idle one keeps every pair
# crossed whatever order the programs would have started in
connected() { ip netns exec "$NS_A" ss -tn state established "( sport = :$1 )" | grep -q ":$1\b"; }
WK_DIR=$tmp
wirecheck_from_b
for i in 1 2 3; do
	wirecheck_target "s$i" $((18990 + i))
	wait_until 10 listening $((18990 + i)) || fail "wirecheck s$i does not listen"
	# shellcheck disable=SC2086
	wirecheck_client "s$i" $((18990 + i)) ${streams[i - 1]}
	# (a stream that ended already has left both sides together)
	wait_until 10 bash -c "$(declare -f connected); connected $((18990 + i)) || ! kill -0 ${_wk_client[s$i]} 2>/dev/null" ||
		fail "wirecheck s$i does not connect"
done
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -s 65536 -n 3000 -p 18995 >"$tmp/ws" 2>&1 &
pids+=($!)
wait_until 10 listening 18995 || fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -s 65536 -n 3000 -p 18995 "$ADDR_A" >"$tmp/wc" 2>&1 &
pids+=($!)

ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
for i in 1 2 3; do
	wirecheck_wait "s$i" || { ok=0; echo "stream $i (${streams[i - 1]}) failed"; }
done
grep -q '^ *65536 ' "$tmp/wc" || { ok=0; echo "ib_write_bw:"; tail -n 4 "$tmp/ws" "$tmp/wc"; }
for h in A B; do
	grep -q "data path up: 2 queue(s), 2 engine(s)" "$tmp/rxdpd-$h.log" ||
		{ ok=0; echo "host $h: not 2 engines:"; grep "data path" "$tmp/rxdpd-$h.log"; }
done
ta=$(threads "$NS_A")
tb=$(threads "$NS_B")
echo "data-path threads' CPUs: A $ta, B $tb"
[ "$(echo "$ta" | wc -w)" = 2 ] && [ "$(echo "$tb" | wc -w)" = 2 ] ||
	{ ok=0; echo "not two data-path threads per rxdpd"; }
if [ -n "$cpus" ]; then
	[ "$ta" = "0 1 " ] && [ "$tb" = "0 1 " ] ||
		{ ok=0; echo "engines not each on its CPU of --cpus 0,1"; }
fi
ha=$(rxdp_counter "$NS_A" rx_handoffs)
hb=$(rxdp_counter "$NS_B" rx_handoffs)
echo "packets handed over between engines: A $ha, B $hb"
[ $((ha + hb)) -gt 0 ] || { ok=0; echo "no packet crossed engines"; }
if [ $ok = 0 ]; then
	for ns in "$NS_A" "$NS_B"; do
		echo "--- counters in $ns (not 0)"
		ip netns exec "$ns" "$RXDP_BIN/rxdp-ctl" counters 2>&1 | grep -v ' 0$'
	done
	fail "engines"
fi
echo PASS
