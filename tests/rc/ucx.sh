#!/usr/bin/env bash
# UCX (Debian's ucx-utils and libucx0) on rxdp between two hosts, with no
# UCX environment beyond choosing the device and the transport:
#  - ucx_info -d lists rc_verbs and ud_verbs on the rxdp device (UCX wants
#    the device's /dev/infiniband node, which rxdpd makes: a null device;
#    and at the end, the nodes' life: per namespace, removed at exit, a
#    killed rxdpd's by the next one)
#  - ucx_perftest tag_lat, ucp_put_bw (64 KiB) and ucp_add over rc_verbs
#    (UCX_TLS=rc_v: rc_verbs, with ud_verbs to wire it up) and over
#    ud_verbs (UCX_TLS=ud_v), each run checked to have gone through rxdp
#    (its packets counted by both devices)
# Prints UCX's figures (one-way latency in us, bandwidth in MB/s, rate).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ucx_info ucx_perftest python3
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

# nothing of the caller's UCX configuration reaches the runs
for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"

# the node UCX looks for: a null device with the name the device gives
node=$(ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json devices |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["dev_node"])')
[ -n "$node" ] && [ -c "/dev/infiniband/$node" ] ||
	fail "no /dev/infiniband node for $devA (got '$node')"
[ "$(stat -c %t:%T "/dev/infiniband/$node")" = 1:3 ] ||
	fail "/dev/infiniband/$node is not the null device"
echo "ok   /dev/infiniband/$node, a null device"

verbs "$NS_A" ucx_info -d >"$tmp/info" 2>&1 || fail "ucx_info -d"
for tl in rc_verbs ud_verbs; do
	grep -A1 "Transport: $tl\$" "$tmp/info" | grep -q "Device: $devA:1" ||
		{ cat "$tmp/info"; fail "ucx_info -d lists no $tl on $devA"; }
	echo "ok   ucx_info -d: $tl on $devA:1"
done

RXDP_VERBS_TIMEOUT=120
port=$((20000 + RXDP_TEST_ID % 20000))
results=()
run() { # TLS TEST ARGS...: one ucx_perftest pair
	local tls=$1 test=$2 s0a s0b final
	shift 2
	s0a=$(rxdp_counter "$NS_A" sent_pkts)
	s0b=$(rxdp_counter "$NS_B" sent_pkts)
	verbs "$NS_A" env UCX_NET_DEVICES="$devA:1" UCX_TLS="$tls" \
		ucx_perftest -p "$port" >"$tmp/srv" 2>&1 &
	local srv=$!
	# its TCP port, where the client finds it
	wait_until 30 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':$port '" ||
		fail "ucx_perftest server does not listen on $port"
	verbs "$NS_B" env UCX_NET_DEVICES="$devB:1" UCX_TLS="$tls" \
		ucx_perftest -p "$port" "$ADDR_A" -t "$test" "$@" >"$tmp/cli" 2>&1
	local rc=$?
	wait $srv
	local src=$?
	port=$((port + 1))
	final=$(grep '^Final:' "$tmp/cli")
	if [ $rc != 0 ] || [ $src != 0 ] || [ -z "$final" ]; then
		echo "--- client"; tail -20 "$tmp/cli"
		echo "--- server"; tail -20 "$tmp/srv"
		fail "ucx_perftest -t $test over $tls (client $rc, server $src)"
	fi
	[ "$(rxdp_counter "$NS_A" sent_pkts)" -gt "$s0a" ] &&
		[ "$(rxdp_counter "$NS_B" sent_pkts)" -gt "$s0b" ] ||
		fail "ucx_perftest -t $test over $tls: no packet through rxdp"
	# Final: iterations, latency typical/avg/overall (us), bandwidth
	# avg/overall (MB/s), message rate avg/overall (msg/s)
	read -r _ _ lt la _ bw _ mr _ <<<"$final"
	results+=("$(printf '%-8s %-11s %10s %10s %10s %10s' "$tls" "$test" \
		"$lt" "$la" "$bw" "$mr")")
	echo "ok   ucx_perftest -t $test $* over $tls"
}

for tls in rc_v ud_v; do
	run "$tls" tag_lat -n 1000
	run "$tls" ucp_put_bw -s 65536 -n 200
	run "$tls" ucp_add -n 1000
done

# The nodes' life: each rxdpd removes its own when it exits, none of
# another namespace's; a restarted one removes what a killed one left,
# and nothing that is not a null device under its names
nodeB=$(ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" --json devices |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["dev_node"])')
[ -n "$nodeB" ] && [ "$nodeB" != "$node" ] || fail "B's node '$nodeB' (A's '$node')"
pidA=$(for p in $(ip netns pids "$NS_A"); do
	[ "$(cat /proc/$p/comm 2>/dev/null)" = rxdpd ] && echo "$p"
done)
[ -n "$pidA" ] || fail "no rxdpd in $NS_A"
kill -9 "$pidA"
wait_until 5 bash -c "! kill -0 $pidA 2>/dev/null" || fail "rxdpd A survived kill -9"
[ -c "/dev/infiniband/$node" ] || fail "a killed rxdpd removed its node"
prefix=${node%-*}
mknod "/dev/infiniband/$prefix-9999" c 1 3 # a stale one of this namespace
touch "/dev/infiniband/$prefix-9998" # not a null device: not rxdp's
on_exit "rm -f /dev/infiniband/$prefix-9999 /dev/infiniband/$prefix-9998"
ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" >"$tmp/rxdpd-A2.log" 2>&1 &
pidA=$!
on_exit "kill $pidA 2>/dev/null; wait $pidA 2>/dev/null"
rxdp_wait_port "$NS_A" "$devA"
[ ! -e "/dev/infiniband/$prefix-9999" ] || fail "a stale node was left"
[ -f "/dev/infiniband/$prefix-9998" ] || fail "a file not rxdp's was removed"
[ -c "/dev/infiniband/$node" ] || fail "the restarted rxdpd has no node"
kill "$pidA"
wait "$pidA"
[ ! -e "/dev/infiniband/$node" ] || fail "rxdpd left its node at exit"
[ -c "/dev/infiniband/$nodeB" ] || fail "B's node went with A's rxdpd"
echo "ok   device nodes: per namespace, removed at exit, stale ones at start"

echo "UCX over rxdp ($devA <-> $devB)"
printf '%-8s %-11s %10s %10s %10s %10s\n' UCX_TLS test "lat typ us" \
	"lat avg us" "bw MB/s" "msg/s"
printf '%s\n' "${results[@]}"
echo PASS
