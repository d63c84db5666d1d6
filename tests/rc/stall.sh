#!/usr/bin/env bash
# A receiver whose data path does not run for a while (on a loaded host its
# thread waits for a CPU) loses what came meanwhile only the first time:
# A sends UD Sends to B at 5 000 packets a second (perftest's own rate
# limiter) and B's rxdpd is stopped (SIGSTOP) twice:
#  - 0.8 s: ~4 000 frames come with nothing taking them, more than B's
#    2 048 RX frames in circulation hold: out_of_buffer counts the rest,
#    each once, and B's engine, finding its frames all waiting, doubles them
#  - 0.5 s: ~2 500 frames, which the 4 096 now hold: out_of_buffer stays
# UD, so nothing is sent again: what the frames could not hold is lost and
# counted.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_send_bw python3 timeout
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
pid_b=$(rxdpd_pid "$NS_B")
[ -n "$pid_b" ] || fail "no rxdpd in $NS_B"
# never leave it stopped, whatever happens
on_exit "kill -CONT $pid_b 2>/dev/null"

verbs "$NS_B" ib_send_bw -c UD -d "$devB" -x "$gidB" -s 1024 -D 6 \
	-p 19330 >"$tmp/srv" 2>&1 &
srv=$!
on_exit "kill $srv 2>/dev/null"
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19330 '" ||
	fail "ib_send_bw server does not listen"
verbs "$NS_A" ib_send_bw -c UD -d "$devA" -x "$gidA" -s 1024 -D 6 \
	--rate_limit=5000 --rate_units=p --rate_limit_type=SW \
	-p 19330 "$ADDR_B" >"$tmp/cli" 2>&1 &
cli=$!
on_exit "kill $cli 2>/dev/null"

# under way: A has sent 2 000
sent_past() { [ "$(rxdp_counter "$NS_A" sent_pkts)" -gt "$1" ]; }
wait_until 10 sent_past $(($(rxdp_counter "$NS_A" sent_pkts) + 2000)) ||
	fail "A sends nothing: $(cat "$tmp/cli")"
# stall SECS: B's rxdpd stopped for SECS; "SENT DROPPED": what A sent
# meanwhile, what B's kernel dropped (out_of_buffer) before B took the rest
stall() {
	local o0 s0 s1
	o0=$(rxdp_counter "$NS_B" out_of_buffer)
	s0=$(rxdp_counter "$NS_A" sent_pkts)
	kill -STOP "$pid_b"
	sleep "$1"
	s1=$(rxdp_counter "$NS_A" sent_pkts)
	kill -CONT "$pid_b"
	sleep 0.3
	echo $((s1 - s0)) $(($(rxdp_counter "$NS_B" out_of_buffer) - o0))
}
read -r sent dropped <<<"$(stall 0.8)"
echo "stopped 0.8 s: A sent $sent, B dropped $dropped"
[ "$sent" -gt 2300 ] ||
	fail "A sent $sent packets in 0.8 s, fewer than B's 2 048 frames hold: the test says nothing (A's client: $(tail -n 5 "$tmp/cli" | tr '\n' ' '); its rxdpd: $(tail -n 3 "$tmp/rxdpd-A.log" | tr '\n' ' '))"
[ "$dropped" -gt 0 ] ||
	fail "B dropped nothing of $sent with 2 048 frames: the test says nothing"
# each frame counted once: what did not fit, give or take a burst or so
# of frames in B's engine's hands when it stopped (counted twice, it would
# be about twice as many)
[ "$dropped" -le $((sent - 2048 + 512)) ] ||
	fail "out_of_buffer counted $dropped of $sent, more than the $((sent - 2048)) that did not fit"
echo "ok   the first stall overran B's 2 048 RX frames, each dropped one counted once"
sleep 0.5
read -r sent dropped <<<"$(stall 0.5)"
echo "stopped 0.5 s: A sent $sent, B dropped $dropped"
[ "$sent" -gt 2300 ] && [ "$sent" -lt 3900 ] ||
	fail "A sent $sent packets in 0.5 s, not between 2 048 and 4 096: the test says nothing"
[ "$dropped" = 0 ] ||
	fail "B dropped $dropped of the $sent frames that came while it was stopped the second time"
echo "ok   the second: the $sent frames waited in B's 4 096"
wait "$cli" || fail "ib_send_bw client: $(cat "$tmp/cli")"
wait "$srv" || fail "ib_send_bw server: $(cat "$tmp/srv")"
echo "PASS: a receiver that fell behind once keeps what comes while it waits"
