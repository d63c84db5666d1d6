#!/usr/bin/env bash
# rxdp-lossyhop, the benchmark's lossy forwarding hop, between two hosts:
#
#   host A [IF_A] ---- [PA] rxdp-lossyhop in R [PB] ---- [IF_B] host B
#
# UDP datagrams from A reach B through it: all of them with --loss 0, about
# half with --loss 50 (and the hop counts what it dropped); the program is
# gone from the ports when it exits; bad usage is one line and exit 2.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd ethtool
hop=$root/build/bin/rxdp-lossyhop
[ -x "$hop" ] || fail "$hop not built"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

out=$("$hop" --loss 200 a b 2>&1)
[ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] ||
	fail "bad usage: want one line and exit 2, got: $out"

netns_hop
# the far ends take redirected frames only with an XDP program of their own
ip netns exec "$NS_A" "$hop" --pass "$IF_A" || fail "--pass $IF_A"
ip netns exec "$NS_B" "$hop" --pass "$IF_B" || fail "--pass $IF_B"

N=2000
# received LOSS: how many of N datagrams from A reach B through the hop
received() {
	local pid n
	ip netns exec "$NS_R" "$hop" --loss "$1" "$PA" "$PB" >"$tmp/hop" 2>&1 &
	pid=$!
	wait_until 5 grep -q ready "$tmp/hop" || { cat "$tmp/hop"; fail "the hop did not start"; }
	ip netns exec "$NS_B" /usr/bin/python3 - "$ADDR_B" >"$tmp/got" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((sys.argv[1], 9999))
# the first datagram may be a while coming (a sender starting on a busy
# machine); then 2 s without one is the end
s.settimeout(30)
n = 0
try:
    while True:
        s.recv(2048)
        n += 1
        s.settimeout(2)
except socket.timeout:
    pass
print(n)
EOF
	local rcv=$!
	wait_until 5 bash -c "ip netns exec $NS_B ss -lun | grep -q ':9999 '" ||
		fail "the receiver did not bind"
	ip netns exec "$NS_A" /usr/bin/python3 - "$ADDR_B" "$N" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(b"x" * 100, (sys.argv[1], 9999))
    if i % 100 == 99:
        time.sleep(0.01)  # no receive queue overflows
EOF
	wait $rcv
	kill $pid
	wait $pid
	cat "$tmp/got"
}

n=$(received 0)
[ "$n" = $N ] || fail "loss 0: $n of $N datagrams arrived"
grep -q "dropped=0$" "$tmp/hop" || fail "loss 0: $(tail -n 1 "$tmp/hop")"
n=$(received 50)
# binomial, p = 0.5: outside [0.4, 0.6] N has a chance far below 1e-15
[ "$n" -gt $((N * 4 / 10)) ] && [ "$n" -lt $((N * 6 / 10)) ] ||
	fail "loss 50%: $n of $N datagrams arrived"
dropped=$(sed -n 's/.*dropped=\([0-9]*\).*/\1/p' "$tmp/hop")
[ "${dropped:-0}" -ge $((N - n)) ] || fail "loss 50%: $n arrived, the hop says: $(tail -n 1 "$tmp/hop")"
ip -n "$NS_R" link show "$PA" | grep -q "prog/xdp" && fail "the hop's program left on $PA"
echo "PASS: rxdp-lossyhop forwards, and drops at the rate asked ($n of $N at 50%)"
