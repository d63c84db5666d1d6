#!/usr/bin/env bash
# rxdpd --poll: each data-path thread spins and never sleeps. Between two
# hosts both in poll mode, an idle data-path thread is always running
# (never S in /proc), traffic runs whole (wirecheck: RC, UC and UD streams
# of every operation, every byte checked at the receiver; ib_write_bw and
# ib_read_bw), and through all of it no data-path thread slept waiting for
# work: their datapath_sleeps counters stay 0 (without --poll they count
# a sleep for nearly every packet). Their voluntary context switches are
# printed (the control thread taking the engine lock makes a few).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ib_read_bw timeout

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
sa0=$(rxdp_counter "$NS_A" datapath_sleeps)
sb0=$(rxdp_counter "$NS_B" datapath_sleeps)
[ "$sa0" = 0 ] && [ "$sb0" = 0 ] ||
	fail "data-path threads in poll mode slept before any traffic: A $sa0, B $sb0"
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
WK_DIR=$tmp
streams=(
	"-t rc -o all -s 0-20000 -n 500"
	"-t uc -o all -s 0-8192 -n 500"
	"-t ud -o all -s 0-1024 -n 500"
)
wirecheck_each 18820 "${streams[@]}"
for tool in ib_write_bw ib_read_bw; do
	bw="-F -s 65536 -n 2000 -p 18812"
	run "$tool" 18812 "$tool" -d "$devA" -x "$gidA" $bw -- \
		"$tool" -d "$devB" -x "$gidB" $bw "$ADDR_A"
done
a1=$(vcsw "$tA")
b1=$(vcsw "$tB")
sa=$(rxdp_counter "$NS_A" datapath_sleeps)
sb=$(rxdp_counter "$NS_B" datapath_sleeps)
pk=$(rxdp_counter "$NS_A" rcvd_pkts)
echo "during the traffic ($pk packets to A): data-path threads' sleeps A $sa, B $sb; voluntary context switches A $((a1 - a0)), B $((b1 - b0))"
[ "$sa" = 0 ] && [ "$sb" = 0 ] || fail "a data-path thread in poll mode slept"
[ "$pk" -gt 1500 ] || fail "only $pk packets reached A"
echo PASS
