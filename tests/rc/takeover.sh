#!/usr/bin/env bash
# rxdpd --takeover (issue 43, as far as it is built): a running rxdpd hands
# its control socket, its clients and every device's data path (the UMEM,
# the AF_XDP sockets with what they hold, the engines' pages and counters)
# to a successor and exits; what it cannot hand over yet it names, and it
# goes on. Between two hosts:
#   1. with a client holding a verbs context (a checked stream running),
#      the successor is refused in one line and exits 2; the running rxdpd
#      is the same process and the stream passes, every byte checked;
#   2. a user other than root is refused, and a successor that reads
#      another state version (the running one goes on); a successor does
#      not take a state from what user 65534 listens as; user 65534's
#      context can neither map the device page writable nor open it so;
#   3. five takeovers on each side, alternating, a client subscribed to A's
#      events and asking about the device every 100 ms throughout: each
#      successor takes the data path over (its log says so: not made anew),
#      the one before it exits, and RC and UD streams both ways pass after
#      each, every byte checked; the device's counters go on;
#   4. the subscribed client, connected to the first rxdpd, hears port
#      events from the last one.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd setpriv
T=$root/build/tests/daemon/ctl_client_test
[ -x "$T" ] || fail "$T not built"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
WK_DIR=$tmp
n=0

# takeover NS: a successor there; the one before it gone, the successor
# serving on the data path it took over
takeover() {
	local ns=$1 old new log t0 ms
	old=$(rxdpd_pid "$ns")
	n=$((n + 1))
	log=$tmp/succ$n.log
	t0=$(date +%s%N)
	ip netns exec "$ns" "$RXDP_BIN/rxdpd" --takeover >"$log" 2>&1 &
	new=$!
	on_exit "kill $new 2>/dev/null; wait $new 2>/dev/null"
	wait_until 10 grep -q '^rxdpd: ready on' "$log" ||
		{ cat "$log"; fail "takeover $n in $ns: the successor does not serve"; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait_until 10 sh -c "! kill -0 $old 2>/dev/null" ||
		fail "takeover $n: rxdpd $old did not exit"
	[ "$(rxdpd_pid "$ns")" = "$new" ] || fail "takeover $n: not the successor"
	grep -q 'data path taken over' "$log" ||
		{ cat "$log"; fail "takeover $n: the data path was made anew"; }
	echo "ok: takeover $n in $ns: rxdpd $old -> $new in $ms ms"
}

streams() {
	local p=$1
	wirecheck_run "t$p" "$p" -t rc -o all -s 0-20000 -n 200 ||
		fail "an RC stream after takeover $n"
	(wirecheck_from_b; wirecheck_run "u$p" $((p + 1)) -t ud -o all -s 0-1024 -n 200) ||
		fail "a UD stream after takeover $n"
}

# 1. a client with a verbs context: refused, nothing changed
pid=$(rxdpd_pid "$NS_A")
wirecheck_from_b
WK_TIMEOUT=60 wirecheck_bg held 18800 -t rc -o all -s 0-20000 -D 6
wait_until 10 grep -q 'created for pid' "$tmp/rxdpd-A.log" ||
	fail "the stream did not start"
# (bounded: a successor that is accepted serves in the foreground)
timeout 20 ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" --takeover >"$tmp/refused" 2>&1
rc=$?
cat "$tmp/refused"
[ $rc = 2 ] || fail "refused: exit $rc, not 2"
grep -q 'refused: .*verbs context' "$tmp/refused" || fail "refused: no reason"
[ "$(wc -l <"$tmp/refused")" = 1 ] || fail "refused: more than one line"
[ "$(rxdpd_pid "$NS_A")" = "$pid" ] || fail "the running rxdpd changed"
wirecheck_wait held || fail "the stream across the refusal"
unset WK_TNS WK_TDEV WK_TGID WK_ADDR WK_CNS WK_CDEV WK_CGID

# 2. not root; another version
ip netns exec "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$RXDP_BIN/rxdpd" --takeover >"$tmp/nobody" 2>&1
rc=$?
cat "$tmp/nobody"
[ $rc = 2 ] && grep -q 'only root' "$tmp/nobody" || fail "user 65534 was not refused"
ip netns exec "$NS_A" "$T" takeover 99 >"$tmp/v99" || fail "version 99 accepted"
cat "$tmp/v99"
grep -q 'version 99' "$tmp/v99" || fail "version 99: no reason"
[ "$(rxdpd_pid "$NS_A")" = "$pid" ] || fail "the running rxdpd changed"
# a successor believes only root's or its own user's rxdpd: not one that
# user 65534 listens as
imp="@rxdp/impostor$$"
ip netns exec "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("\0" + sys.argv[1][1:]); s.listen(4); print("listening", flush=True)
c, _ = s.accept(); time.sleep(5)' "$imp" >"$tmp/imp" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_until 10 grep -q listening "$tmp/imp" || fail "the impostor does not listen"
timeout 20 ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" --takeover --socket "$imp" >"$tmp/to-imp" 2>&1
rc=$?
cat "$tmp/to-imp"
[ $rc = 1 ] && grep -q "not root's or this user's" "$tmp/to-imp" ||
	fail "a successor took a state from user 65534 (exit $rc)"
# the device page, which a successor maps writable again, is a client's
# to read only: user 65534's context cannot map it writable nor open it so
ip netns exec "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$T" ctx "$IF_A" || fail "user 65534's context and the device page"

# 3. five takeovers a side, a client watching A throughout
ip netns exec "$NS_A" "$T" events "$IF_A" 120 >"$tmp/events" 2>&1 &
ev=$!
on_exit "kill $ev 2>/dev/null"
wait_until 10 grep -q subscribed "$tmp/events" || fail "the events client"
sent0=$(rxdp_counter "$NS_A" sent_pkts)
for i in 1 2 3 4 5; do
	takeover "$NS_A"
	streams $((18810 + 4 * i))
	takeover "$NS_B"
	streams $((18812 + 4 * i))
done
sent1=$(rxdp_counter "$NS_A" sent_pkts)
echo "A's sent_pkts: $sent0 before, $sent1 after"
[ "$sent1" -gt "$sent0" ] || fail "A's counters started again"

# 4. the client connected to the first rxdpd hears the last one's events
ip -n "$NS_A" link set "$IF_A" down
sleep 1
ip -n "$NS_A" link set "$IF_A" up
wait_until 10 grep -q 'event PORT_ACTIVE' "$tmp/events" ||
	{ cat "$tmp/events"; fail "no port event reached the subscribed client"; }
grep -q 'event PORT_ERR' "$tmp/events" || fail "no PORT_ERR event"
grep -q FAIL "$tmp/events" && { cat "$tmp/events"; fail "the events client failed"; }
kill "$ev" 2>/dev/null
echo "PASS: rxdpd taken over ten times: its clients and data path go on"
