#!/usr/bin/env bash
# rxdpd --poll: each data-path thread spins and never sleeps. Between two
# hosts both in poll mode, an idle data-path thread is always running
# (never S in /proc), traffic runs byte-checked (ibv_rc_pingpong -c, RC
# Send; ib_write_bw and ib_read_bw), and through it the threads make no
# voluntary context switch but the few the control thread causes when it
# takes the engine lock to make or destroy objects (a thread that slept
# between packets would make one per packet).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ib_read_bw ibv_rc_pingpong timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--poll" rxdp_hosts "$tmp"

# the data-path thread of the rxdpd in namespace NS: /proc/PID/task/TID
datapath() {
	local t
	t=$(rxdpd_threads "$1" rxdp-datapath | head -n 1)
	[ -n "$t" ] || fail "no rxdp-datapath thread of the rxdpd in $1"
	echo "$t"
}
tA=$(datapath "$NS_A")
tB=$(datapath "$NS_B")
vcsw() { sed -n 's/^voluntary_ctxt_switches:\s*//p' "$1/status"; }
state() { sed 's/^.*) \(.\).*/\1/' "$1/stat"; }

for _ in $(seq 20); do
	for t in "$tA" "$tB"; do
		s=$(state "$t")
		[ "$s" = R ] || fail "an idle data-path thread in poll mode is $s, not running"
	done
	sleep 0.05
done
echo "ok: idle data-path threads keep running"

a0=$(vcsw "$tA")
b0=$(vcsw "$tB")
# run NAME PORT SERVER-ARGS -- CLIENT-ARGS: server in A, client in B
run() {
	local name=$1 port=$2 srv
	shift 2
	local sa=() ca=()
	while [ "$1" != -- ]; do sa+=("$1"); shift; done
	shift
	ca=("$@")
	verbs "$NS_A" "${sa[@]}" >"$tmp/srv" 2>&1 &
	srv=$!
	wait_until 10 sh -c "ip netns exec $NS_A ss -ltn | grep -q ':$port '" ||
		fail "$name: the server does not listen"
	verbs "$NS_B" "${ca[@]}" >"$tmp/cli" 2>&1 ||
		{ tail -n 8 "$tmp/cli" "$tmp/srv"; fail "$name (client)"; }
	wait "$srv" || { tail -n 8 "$tmp/srv"; fail "$name (server)"; }
	echo "ok: $name"
}
pp="-c -s 4096 -n 300 -p 18811"
run "ibv_rc_pingpong -c" 18811 ibv_rc_pingpong -d "$devA" -g "$gidA" $pp -- \
	ibv_rc_pingpong -d "$devB" -g "$gidB" $pp "$ADDR_A"
for tool in ib_write_bw ib_read_bw; do
	bw="-F -s 65536 -n 2000 -p 18812"
	run "$tool" 18812 "$tool" -d "$devA" -x "$gidA" $bw -- \
		"$tool" -d "$devB" -x "$gidB" $bw "$ADDR_A"
done
a1=$(vcsw "$tA")
b1=$(vcsw "$tB")
echo "voluntary context switches of the data-path threads during the traffic: A $((a1 - a0)), B $((b1 - b0))"
[ $((a1 - a0)) -lt 200 ] && [ $((b1 - b0)) -lt 200 ] ||
	fail "a data-path thread in poll mode slept (300 ping-pongs and 2000 writes and reads)"
echo PASS
