#!/usr/bin/env bash
# rxdpd stopped or restarted under running programs: its QPs do not
# survive it (their state and the memory they reach die with the process),
# so every client learns at once, as from an HCA in a fatal state: each
# WQE it did not complete comes back with IBV_WC_WR_FLUSH_ERR and the
# context gets IBV_EVENT_DEVICE_FATAL (tests/rc/fatal.c checks both). Then:
#   1. SIGTERM to one host's rxdpd under ib_write_bw and under a checked
#      stream (wirecheck): both ends of each exit with an error within 10 s
#      (a run that would last 30 s: they hear of it, no timeout of theirs);
#   2. fatal.c: its WQEs all flushed, the fatal event, its QPs in ERR, a
#      later post flushed too, then ibv_poll_cq's EIO;
#   3. a new rxdpd serves: a new ib_write_bw, and a checked stream whole.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw timeout
FATAL=$root/build/tests/rc/fatal
[ -x "$FATAL" ] || fail "$FATAL not built"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"

restart_a() {
	ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" >>"$tmp/rxdpd-A2.log" 2>&1 &
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
	rxdp_wait_port "$NS_A" "$devA"
}
stop_a() { # SIGTERM to A's rxdpd, and wait until it is gone
	local p
	p=$(rxdpd_pid "$NS_A")
	[ -n "$p" ] || fail "no rxdpd in $NS_A"
	kill -TERM "$p"
	wait_until 10 sh -c "! kill -0 $p 2>/dev/null" || fail "rxdpd $p does not exit"
}
listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }

# 1. under ib_write_bw and a checked stream (A the target: its rxdpd goes)
WK_DIR=$tmp
wirecheck_from_b
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -D 30 -p 18900 >"$tmp/srv" 2>&1 &
srv=$!
wait_until 10 listening 18900 || fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -D 30 -p 18900 "$ADDR_A" >"$tmp/cli" 2>&1 &
cli=$!
WK_TIMEOUT=60 wirecheck_bg dying 18902 -t rc -o all -s 0-20000 -D 30
# both run: B's device has completed sends of each
wait_until 20 bash -c "[ \"\$(ip netns exec $NS_B $RXDP_BIN/rxdp-ctl counters | awk '\$1 == \"rdma_sends\" {print \$2}')\" -gt 2000 ]" ||
	fail "the traffic does not run"
t0=$(date +%s%N)
stop_a
wait "$srv"
rs=$?
wait "$cli"
rc=$?
wirecheck_wait dying 2>"$tmp/dying.err"
rw=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "after rxdpd's SIGTERM: ib_write_bw server exit $rs, client exit $rc; wirecheck $rw; all ended after $ms ms"
[ "$rs" != 0 ] && [ "$rs" != 124 ] || { tail -n 5 "$tmp/srv"; fail "the server did not fail at once (exit $rs)"; }
[ "$rc" != 0 ] && [ "$rc" != 124 ] || { tail -n 5 "$tmp/cli"; fail "the client did not fail at once (exit $rc)"; }
[ "$rw" != 0 ] || fail "wirecheck passed through its target's rxdpd going away"
grep -q "out of time" "$tmp/dying.target" "$tmp/dying.client" &&
	fail "wirecheck ran out of time instead of hearing of it: $(cat "$tmp/dying.err")"
[ "$ms" -le 10000 ] || fail "they took $ms ms to notice"

# 2. flushed WQEs and the fatal event
restart_a
coproc FAT { verbs "$NS_A" "$FATAL" "$devA" 2>&1; }
fatpid=$FAT_PID
read -r -t 20 line <&"${FAT[0]}" || fail "fatal did not start"
[ "$line" = ready ] || fail "fatal: $line"
stop_a
echo go >&"${FAT[1]}"
while read -r -t 20 line <&"${FAT[0]}"; do echo "$line"; done
wait "$fatpid" || fail "fatal: the WQEs or the event did not come back"

# 3. a new rxdpd serves
restart_a
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -n 2000 -p 18901 >"$tmp/srv" 2>&1 &
srv=$!
wait_until 10 listening 18901 || fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -n 2000 -p 18901 "$ADDR_A" >"$tmp/cli" 2>&1 ||
	{ tail -n 5 "$tmp/cli"; fail "ib_write_bw on the new rxdpd"; }
wait "$srv" || fail "ib_write_bw server on the new rxdpd"
wirecheck_run new 18903 -t rc -o all -s 0-20000 -n 500 || fail "a checked stream on the new rxdpd"
echo "ok: a new rxdpd serves"
echo PASS
