#!/usr/bin/env bash
# rxdpd --takeover (issue 43, as far as it is built): a running rxdpd hands
# its control socket, its clients with their verbs contexts and objects
# (PDs, shared memory, MRs with their keys, channels, CQs, SRQs, QPs with
# their transport state, AHs) and every device's data path (the UMEM, the
# AF_XDP sockets with what they hold, the engines' pages and counters) to
# a successor and exits; what it cannot hand over yet it names, and goes
# on. Between two hosts:
#   1. with a multicast group joined (an mckey receiver), the successor
#      is refused in one line and exits 2; the running rxdpd is the same
#      process;
#   2. a user other than root is refused, and a successor that reads
#      another state version (the running one goes on); a successor does
#      not take a state from what user 65534 listens as; user 65534's
#      context can neither map the device page writable nor open it so;
#   3. five takeovers on each side, alternating, while checked streams run
#      (RC both ways, two QPs and an SRQ's four, UC and UD, every byte
#      checked at its receiver), ib_write_bw -D 20 runs, ibv_devinfo comes
#      and goes over and over (none may fail), and a client
#      subscribed to A's events asks
#      about the device every 100 ms: each successor takes every context
#      and the data path over (its log says so: nothing made anew), the one
#      before it exits; every stream passes with nothing lost, nothing
#      duplicated, no error completion and no async event; the device's
#      counters go on;
#   4. UCX's ucx_perftest tag_bw (rc_verbs) and rping -V (the RDMA CM,
#      every ping checked) across three takeovers a side;
#   5. the subscribed client, connected to the first rxdpd, hears port
#      events from the last one.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
. "$root/tests/lib/rping.sh"

require_root
require_cmd setpriv rping mckey stdbuf ib_write_bw ucx_perftest
T=$root/build/tests/daemon/ctl_client_test
[ -x "$T" ] || fail "$T not built"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
WK_DIR=$tmp

# 1. a multicast group joined (an mckey receiver): refused, nothing changed
pid=$(rxdpd_pid "$NS_A")
grp=239.$((RXDP_TEST_ID >> 16 & 255)).$((RXDP_TEST_ID >> 8 & 255)).$((RXDP_TEST_ID & 255))
# (exec'd all the way: $! is mckey itself)
ip netns exec "$NS_A" env LD_LIBRARY_PATH="$RXDP_LIB" \
	stdbuf -oL mckey -m "$grp" -b "$ADDR_A" -C 10 >"$tmp/mckey" 2>&1 &
mk=$!
on_exit "kill $mk 2>/dev/null"
wait_until 20 grep -q 'joined dgid' "$tmp/mckey" || fail "mckey did not join"
timeout 20 ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" --takeover >"$tmp/refused" 2>&1
rc=$?
cat "$tmp/refused"
[ $rc = 2 ] || fail "refused: exit $rc, not 2"
grep -q 'refused: .*multicast' "$tmp/refused" || fail "refused: no reason"
[ "$(wc -l <"$tmp/refused")" = 1 ] || fail "refused: more than one line"
[ "$(rxdpd_pid "$NS_A")" = "$pid" ] || fail "the running rxdpd changed"
kill "$mk"
wait "$mk" 2>/dev/null
# its group left with its QP and CM id
wait_until 10 sh -c "! ip netns exec $NS_A $RXDP_BIN/rxdp-ctl cm | grep -q mckey" ||
	{ ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" cm; fail "mckey's CM id stays"; }

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

# 3. five takeovers a side under checked streams, a client watching A
ip netns exec "$NS_A" "$T" events "$IF_A" 120 >"$tmp/events" 2>&1 &
ev=$!
on_exit "kill $ev 2>/dev/null"
wait_until 10 grep -q subscribed "$tmp/events" || fail "the events client"
WK_TIMEOUT=90
wirecheck_bg rc 18800 -t rc -o all -s 0-20000 -q 2 -D 20
wirecheck_bg uc 18801 -t uc -o all -s 0-4000 -D 20
wirecheck_from_b
wirecheck_bg rcb 18802 -t rc -o all -s 0-20000 -q 4 --srq -D 20
wirecheck_bg ud 18803 -t ud -o all -s 0-1024 -D 20
# and perftest, unmodified: ib_write_bw for 20 s, A the server
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -D 20 -p 18804 \
	--report_gbits >"$tmp/bw.srv" 2>&1 &
bws=$!
wait_until 10 sh -c "ip netns exec $NS_A ss -ltn | grep -q ':18804 '" ||
	fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -D 20 -p 18804 \
	--report_gbits "$ADDR_A" >"$tmp/bw.cli" 2>&1 &
bwc=$!
wait_until 10 grep -q 'created for pid' "$tmp/rxdpd-A.log" ||
	fail "the streams did not start"
# and programs that come and go meanwhile: ibv_devinfo connects, opens a
# context (its objects made and destroyed) and leaves, over and over
(
	ok=0 bad=0
	while [ ! -e "$tmp/churn.stop" ]; do
		if verbs "$NS_A" ibv_devinfo -d "$devA" >/dev/null 2>&1; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
		fi
	done
	echo "$ok $bad" >"$tmp/churn"
) &
churn=$!
on_exit "kill $churn 2>/dev/null"
sleep 1
for i in 1 2 3 4 5; do
	# A's counters (the streams going): its successor's start from them
	sent0=$(rxdp_counter "$NS_A" sent_pkts)
	rxdp_takeover "$NS_A"
	sent1=$(rxdp_counter "$NS_A" sent_pkts)
	[ "$sent1" -ge "$sent0" ] ||
		fail "A's counters started again ($sent0, then $sent1)"
	sleep 0.3
	rxdp_takeover "$NS_B"
	sleep 0.3
done
echo "A's sent_pkts: $sent0 before its last takeover, $sent1 after"
touch "$tmp/churn.stop"
wait "$churn"
read -r ok bad <"$tmp/churn"
echo "    ibv_devinfo meanwhile: $ok ran, $bad failed"
[ "$bad" = 0 ] && [ "$ok" -gt 10 ] || fail "programs that came and went: $ok ran, $bad failed"
for st in rc uc rcb ud; do
	wirecheck_wait "$st" || fail "the $st stream across the takeovers"
	echo "    $st: the longest stall $(wirecheck_summary "$st" max_gap_ms) ms"
done
wait "$bws" || { cat "$tmp/bw.srv"; fail "ib_write_bw's server across the takeovers"; }
wait "$bwc" || { cat "$tmp/bw.cli"; fail "ib_write_bw's client across the takeovers"; }
echo "    ib_write_bw -D 20: $(awk '/^ *65536 / {print $4}' "$tmp/bw.cli") Gbit/s"
unset WK_TNS WK_TDEV WK_TGID WK_ADDR WK_CNS WK_CDEV WK_CGID

# 4. UCX, unmodified (rc_verbs, wired up over ud_verbs; its CM event
# channel handed over too) and rping (its CM ids too): ucx_perftest tag_bw
# and rping -V across three takeovers a side, each made while both run
for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
up=$((20000 + RXDP_TEST_ID % 20000))
# (long enough to outlast six takeovers on an idle machine)
RXDP_VERBS_TIMEOUT=150 verbs "$NS_A" env UCX_NET_DEVICES="$devA:1" UCX_TLS=rc_v \
	ucx_perftest -p "$up" >"$tmp/ucx.srv" 2>&1 &
us=$!
wait_until 30 sh -c "ip netns exec $NS_A ss -ltn | grep -q ':$up '" ||
	fail "ucx_perftest does not listen"
RXDP_VERBS_TIMEOUT=150 verbs "$NS_B" env UCX_NET_DEVICES="$devB:1" UCX_TLS=rc_v \
	ucx_perftest -p "$up" "$ADDR_A" -t tag_bw -s 65536 -n 80000 >"$tmp/ucx.cli" 2>&1 &
uc=$!
# and rping, on the RDMA CM, each of its 1 KiB pings checked (-V)
ip netns exec "$NS_A" env LD_LIBRARY_PATH="$RXDP_LIB" timeout 180 \
	rping -s -a "$ADDR_A" -p 18790 -C 40000 -V -S 1024 >"$tmp/rping.srv" 2>&1 &
rs=$!
on_exit "kill $rs 2>/dev/null"
sleep 0.5
ip netns exec "$NS_B" env LD_LIBRARY_PATH="$RXDP_LIB" timeout 180 \
	rping -c -a "$ADDR_A" -p 18790 -C 40000 -V -S 1024 >"$tmp/rping.cli" 2>&1 &
rc=$!
on_exit "kill $rc 2>/dev/null"
wait_until 20 sh -c "ip netns exec $NS_A $RXDP_BIN/rxdp-ctl cm | grep -q established" ||
	{ ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" cm; fail "rping does not connect"; }
sleep 1
for i in 1 2 3; do
	for ns in "$NS_A" "$NS_B"; do
		kill -0 "$uc" 2>/dev/null || fail "ucx_perftest ended before takeover $((RXDP_TKO_N + 1))"
		kill -0 "$rc" 2>/dev/null || fail "rping ended before takeover $((RXDP_TKO_N + 1))"
		rxdp_takeover "$ns"
	done
done
# (what the CM has, should rping still run 120 s after its start)
(
	sleep 110
	for ns in "$NS_A" "$NS_B"; do
		ip netns exec "$ns" "$RXDP_BIN/rxdp-ctl" cm
		ip netns exec "$ns" "$RXDP_BIN/rxdp-ctl" qps
	done >"$tmp/rping.state" 2>&1
) >/dev/null 2>&1 &
on_exit "pkill -P $! 2>/dev/null; kill $! 2>/dev/null"
wait "$rc"
rcc=$?
wait "$rs"
rcs=$?
# (rping's own exit race is no failure: tests/lib/rping.sh)
[ $rcc = 255 ] && rping_race "$tmp/rping.cli" && rcc=0
[ $rcs = 255 ] && rping_race "$tmp/rping.srv" && rcs=0
if [ $rcc != 0 ] || [ $rcs != 0 ]; then
	tail -n 5 "$tmp/rping.cli" "$tmp/rping.srv" "$tmp/rping.state"
	fail "rping across the takeovers: client exit $rcc, server exit $rcs"
fi
echo "    rping -V: 40000 pings of 1 KiB checked, disconnected cleanly"
wait "$uc" || { tail "$tmp/ucx.cli"; fail "ucx_perftest's client across the takeovers"; }
wait "$us" || { tail "$tmp/ucx.srv"; fail "ucx_perftest's server across the takeovers"; }
grep -q '^Final:' "$tmp/ucx.cli" || fail "ucx_perftest: no result"
echo "    ucx_perftest tag_bw 64 KiB: $(awk '/^Final:/ {print $6}' "$tmp/ucx.cli") MB/s"

# 5. the client connected to the first rxdpd hears the last one's events
ip -n "$NS_A" link set "$IF_A" down
sleep 1
ip -n "$NS_A" link set "$IF_A" up
wait_until 10 grep -q 'event PORT_ACTIVE' "$tmp/events" ||
	{ cat "$tmp/events"; fail "no port event reached the subscribed client"; }
grep -q 'event PORT_ERR' "$tmp/events" || fail "no PORT_ERR event"
grep -q FAIL "$tmp/events" && { cat "$tmp/events"; fail "the events client failed"; }
kill "$ev" 2>/dev/null
echo "PASS: rxdpd taken over sixteen times under running programs: nothing lost"
