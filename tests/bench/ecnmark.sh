#!/usr/bin/env bash
# rxdp-ecnmark, the many-hosts rig's ECN marking, on a real switch port:
#
#   host 2 (ECT(0)), host 3 (not ECT) ---- bridge in R ---- [ecnmark, TBF] ---- host 1
#
# Two UDP floods at once into a 20 Mbit/s port: host 1 sees CE on the ECT
# flow's datagrams, never on the other's, and as many CE as the marker
# says it marked and the TBF let through; a trickle far below the port's
# rate is never marked. The program is gone from the port when it exits;
# bad usage is one line and exit 2. (The rule itself, threshold by
# threshold: build/tests/bpf/test_ecnmark.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd tc
mark=$root/build/bin/rxdp-ecnmark
[ -x "$mark" ] || fail "$mark not built"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

out=$("$mark" --rate 100 --kmin 5 --kmax 4 lo 2>&1)
[ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] ||
	fail "bad usage: want one line and exit 2, got: $out"

netns_switch 3
port=${SW_PORT[1]}
tc -n "$NS_R" qdisc add dev "$port" root tbf rate 20mbit burst 8kb limit 100kb ||
	fail "cannot add a TBF to the receiver's port"

# receive OUT PORT...: count the datagrams to each port and how many came
# CE, until 2 s pass without one; writes "PORT n=N ce=N" per port to OUT
receive() {
	local out=$1
	shift
	ip netns exec "${SW_NS[1]}" /usr/bin/python3 - "${SW_ADDR[1]}" "$@" >"$out" <<'EOF' &
import select, socket, sys
socks = {}
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    s.bind((sys.argv[1], int(p)))
    socks[s] = [p, 0, 0]
while True:
    r, _, _ = select.select(list(socks), [], [], 2)
    if not r:
        break
    for s in r:
        _, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(1))
        socks[s][1] += 1
        for lvl, typ, data in anc:
            if lvl == socket.IPPROTO_IP and typ == socket.IP_TOS and data[0] & 3 == 3:
                socks[s][2] += 1
for p, n, ce in socks.values():
    print(f"{p} n={n} ce={ce}")
EOF
	rcv=$!
	local p
	for p in "$@"; do
		wait_until 5 bash -c "ip netns exec ${SW_NS[1]} ss -lun | grep -q ':$p '" ||
			fail "the receiver did not bind $p"
	done
}

# send HOST PORT TOS N GAP_S: N datagrams of 1200 bytes, GAP_S apart
send() {
	ip netns exec "${SW_NS[$1]}" /usr/bin/python3 - "${SW_ADDR[1]}" "$2" "$3" "$4" "$5" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(sys.argv[3]))
gap = float(sys.argv[5])
for i in range(int(sys.argv[4])):
    try:
        s.sendto(b"x" * 1200, (sys.argv[1], int(sys.argv[2])))
    except OSError:  # a full qdisc on the sender's own veth
        pass
    if gap:
        time.sleep(gap)
EOF
}

# start_marker: rxdp-ecnmark on the port, 20 Mbit/s, K_min 10 KB, K_max
# 40 KB, the TBF's 100 KB limit
start_marker() {
	ip netns exec "$NS_R" "$mark" --rate 20 --kmin 10000 --kmax 40000 --pmax 0.2 --limit 102400 \
		"$port" >"$tmp/mark" 2>&1 &
	marker=$!
	on_exit "kill $marker 2>/dev/null"
	wait_until 5 grep -q ready "$tmp/mark" || { cat "$tmp/mark"; fail "rxdp-ecnmark did not start"; }
}
stop_marker() {
	kill "$marker"
	wait "$marker" || { cat "$tmp/mark"; fail "rxdp-ecnmark failed"; }
	cat "$tmp/mark"
}
field() { sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" "$1" | tail -n 1; }

# --- a trickle: 200 datagrams 10 ms apart, 1 Mbit/s: never marked -----------
start_marker
receive "$tmp/slow" 9001
send 2 9001 2 200 0.01
wait "$rcv"
stop_marker
cat "$tmp/slow"
[ "$(field "$tmp/slow" n)" -ge 190 ] || fail "the trickle did not arrive: $(cat "$tmp/slow")"
[ "$(field "$tmp/slow" ce)" = 0 ] || fail "a trickle far below the port's rate was marked"
[ "$(field "$tmp/mark" marked)" = 0 ] || fail "the marker marked a trickle"
[ "$(field "$tmp/mark" ect)" -ge 190 ] || fail "the marker did not see the ECT trickle"
echo "ok: a trickle below the port's rate is not marked"

# --- two floods at once, ECT(0) and not ECT --------------------------------
start_marker
receive "$tmp/flood" 9001 9002
send 2 9001 2 6000 0 &
s2=$!
send 3 9002 0 6000 0
wait "$s2"
wait "$rcv"
stop_marker
cat "$tmp/flood"
ect_n=$(sed -n 's/^9001 n=\([0-9]*\).*/\1/p' "$tmp/flood")
ect_ce=$(sed -n 's/^9001 .*ce=\([0-9]*\)/\1/p' "$tmp/flood")
not_ce=$(sed -n 's/^9002 .*ce=\([0-9]*\)/\1/p' "$tmp/flood")
[ "${ect_n:-0}" -gt 0 ] && [ "${ect_ce:-0}" -gt 0 ] ||
	fail "no CE on the ECT flood through a full port: $(cat "$tmp/flood")"
[ "${not_ce:-1}" = 0 ] || fail "datagrams that were not ECT came CE: $(cat "$tmp/flood")"
marked=$(field "$tmp/mark" marked)
[ "$(field "$tmp/mark" not_ect)" -gt 0 ] || fail "the marker counted no congested non-ECT packet"
[ "$ect_ce" -le "$marked" ] || fail "$ect_ce CE received, $marked marked"
echo "ok: ECT datagrams marked CE ($ect_ce of $ect_n received, $marked marked before the TBF), none of the others"

tc -n "$NS_R" filter show dev "$port" egress | grep -q . &&
	fail "the program is still on the port after rxdp-ecnmark exited"
tc -n "$NS_R" qdisc show dev "$port" | grep -q clsact &&
	fail "clsact is still on the port after rxdp-ecnmark exited"
echo "ok: the port is as it was when rxdp-ecnmark exits"
