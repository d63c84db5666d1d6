#!/usr/bin/env bash
# rxdpd --fdstore (issue 43): stopped by its service manager (SIGTERM),
# rxdpd hands everything to the manager's file descriptor store and exits
# 3; the next rxdpd the manager starts takes over from the store, as a
# successor of --takeover does. The manager here is tests/lib/fdstore.py
# (systemd's protocol: FDSTORE=1, FDSTOREREMOVE=1, BARRIER=1, $LISTEN_FDS;
# one of each open file kept; the store passed in reverse order);
# tests/vm/service.sh runs the real systemd. Host A's rxdpd under it:
#   1. three restarts under checked streams (RC both ways, an SRQ's QPs,
#      UC, UD; every byte checked at its receiver), ib_write_bw, and a
#      buffer registered in two contexts of one process (twoctx.c: rxdpd
#      holds its memfd twice, which the store keeps once): each
#      rxdpd exits 3, the next takes over (the data path and every object,
#      nothing made anew), the store is empty once it runs; every stream
#      passes with nothing lost, no error completion, no async event;
#   2. a state of another version (a word of it changed in the store): the
#      next rxdpd says so in one line and starts anew, the store emptied;
#      the connections of the one before end at once (a stream fails
#      within 10 s, not by its own timeout), a new stream passes;
#   3. with a multicast group joined: the stop says in one line why it
#      hands nothing over, and exits 0 (today's stop); the next starts anew;
#   4. stopped for good (the manager empties its store): the clients learn
#      at once.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw mckey stdbuf
TWOCTX=$root/build/tests/rc/twoctx
[ -x "$TWOCTX" ] || fail "$TWOCTX not built"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
WK_DIR=$tmp

# A: rxdpd under the manager, which takes commands on a FIFO
on_exit "ip netns exec $NS_A $RXDP_BIN/rxdp-loader detach $IF_A"
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-loader" attach "$IF_A" >/dev/null ||
	fail "rxdp-loader attach $IF_A"
mkfifo "$tmp/ctl"
ip netns exec "$NS_A" /usr/bin/python3 "$root/tests/lib/fdstore.py" "$tmp/mgr" \
	-- "$RXDP_BIN/rxdpd" --fdstore <"$tmp/ctl" >>"$tmp/rxdpd-A.log" 2>&1 &
mgr=$!
exec {ctl}>"$tmp/ctl"
on_exit "echo quit >&$ctl; wait $mgr 2>/dev/null"
rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
devA=rxdp_$IF_A devB=rxdp_$IF_B
rxdp_wait_port "$NS_A" "$devA"
rxdp_wait_port "$NS_B" "$devB"
gidA=$(rxdp_ipv4_gid "$NS_A" "$devA")
gidB=$(rxdp_ipv4_gid "$NS_B" "$devB")
gid=$gidA

readies() { grep -c '^ready ' "$tmp/mgr"; }
# mgr CMD: CMD to the manager; with a start in it, wait for the next ready
mgr() {
	local r0
	r0=$(readies)
	echo "$1" >&"$ctl"
	case $1 in
	restart | start)
		wait_until 30 sh -c "[ \$(grep -c '^ready ' $tmp/mgr) -gt $r0 ]" ||
			{ cat "$tmp/mgr"; tail "$tmp/rxdpd-A.log"; fail "$1: no rxdpd ready"; }
		;;
	stop)
		wait_until 30 sh -c "tail -n 1 $tmp/mgr | grep -qx 'store 0'" ||
			{ cat "$tmp/mgr"; fail "stop: the store is not emptied"; }
		;;
	esac
}
# the last exit status and store size the manager saw
last_exit() { sed -n 's/^exit [0-9]* //p' "$tmp/mgr" | tail -n 1; }
store_size() { sed -n 's/^store //p' "$tmp/mgr" | tail -n 1; }

# 1. three restarts under checked streams
WK_TIMEOUT=90
wirecheck_bg rc 18810 -t rc -o all -s 0-20000 -q 2 -D 12
wirecheck_bg uc 18811 -t uc -o all -s 0-4000 -D 12
wirecheck_bg ud 18812 -t ud -o all -s 0-1024 -D 12
wirecheck_from_b
wirecheck_bg rcb 18813 -t rc -o all -s 0-20000 -q 4 --srq -D 12
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -D 12 -p 18814 \
	--report_gbits >"$tmp/bw.srv" 2>&1 &
bws=$!
wait_until 10 sh -c "ip netns exec $NS_A ss -ltn | grep -q ':18814 '" ||
	fail "ib_write_bw does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -D 12 -p 18814 \
	--report_gbits "$ADDR_A" >"$tmp/bw.cli" 2>&1 &
bwc=$!
coproc TWO { verbs "$NS_A" "$TWOCTX" "$devA" 2>&1; }
two=$TWO_PID
read -r -t 20 line <&"${TWO[0]}" && [ "$line" = ready ] || fail "twoctx: ${line:-no answer}"
sleep 1.5
for i in 1 2 3; do
	: >"$tmp/rxdpd-A.log"
	t0=$(date +%s%N)
	mgr restart
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$(last_exit)" = 3 ] || { cat "$tmp/mgr"; fail "restart $i: rxdpd exit $(last_exit), not 3"; }
	grep -q 'took over from systemd.s descriptor store' "$tmp/rxdpd-A.log" &&
		grep -q 'data path taken over' "$tmp/rxdpd-A.log" ||
		{ cat "$tmp/rxdpd-A.log"; fail "restart $i: not taken over from the store"; }
	grep -q 'not taken over' "$tmp/rxdpd-A.log" &&
		{ cat "$tmp/rxdpd-A.log"; fail "restart $i: an object was not taken over"; }
	wait_until 10 sh -c "[ \"\$(sed -n 's/^store //p' $tmp/mgr | tail -n 1)\" = 0 ]" ||
		{ cat "$tmp/mgr"; fail "restart $i: the store is not emptied"; }
	# the buffer of two contexts: its file held twice, stored once
	grep -q 'descriptors, [1-9][0-9]* more places holding one of their files' "$tmp/rxdpd-A.log" ||
		{ cat "$tmp/rxdpd-A.log"; fail "restart $i: no file held twice"; }
	echo go >&"${TWO[1]}"
	read -r -t 20 line <&"${TWO[0]}" && [ "$line" = "ok $i" ] ||
		fail "twoctx after restart $i: ${line:-no answer}"
	echo "ok: restart $i: $(grep -o 'handed over to systemd.*' "$tmp/rxdpd-A.log" | head -n 1 || true)," \
		"$(grep -m 1 -o 'passed [0-9]*' <(tac "$tmp/mgr")) descriptors passed, $ms ms"
	sleep 1
done
for st in rc uc ud rcb; do
	wirecheck_wait "$st" || fail "the $st stream across the restarts"
	echo "    $st: the longest stall $(wirecheck_summary "$st" max_gap_ms) ms"
done
wait "$bws" || { cat "$tmp/bw.srv"; fail "ib_write_bw's server across the restarts"; }
wait "$bwc" || { cat "$tmp/bw.cli"; fail "ib_write_bw's client across the restarts"; }
exec {TWO[1]}>&-
wait "$two" || fail "twoctx across the restarts"
echo "ok: three restarts under checked streams, ib_write_bw and twoctx: nothing lost"

# 2. another version: starting anew, the connections end at once
WK_TIMEOUT=60 wirecheck_bg dying 18815 -t rc -o all -s 0-20000 -D 30
sleep 1.5
: >"$tmp/rxdpd-A.log"
echo "corrupt 4" >&"$ctl"
t0=$(date +%s%N)
mgr restart
wirecheck_wait dying 2>"$tmp/dying.err" && fail "a stream passed an rxdpd that started anew"
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "out of time" "$tmp/dying.target" "$tmp/dying.client" &&
	fail "the stream ran out of time instead of hearing of it"
[ "$ms" -le 10000 ] || fail "the clients took $ms ms to notice"
grep 'version' "$tmp/rxdpd-A.log"
[ "$(grep -c 'in version 2, this one reads version 1: starting anew' "$tmp/rxdpd-A.log")" = 1 ] ||
	{ cat "$tmp/rxdpd-A.log"; fail "another version: not said in one line"; }
[ "$(store_size)" = 0 ] || fail "another version: the store is not emptied"
rxdp_wait_port "$NS_A" "$devA"
wirecheck_run new 18816 -t rc -o all -s 0-20000 -n 500 || fail "a stream on the rxdpd started anew"
echo "ok: a state of another version: started anew, its clients told in $ms ms, a new stream passes"

# 3. a multicast group joined: stopped as before
grp=239.$((RXDP_TEST_ID >> 16 & 255)).$((RXDP_TEST_ID >> 8 & 255)).$((RXDP_TEST_ID & 255))
ip netns exec "$NS_A" env LD_LIBRARY_PATH="$RXDP_LIB" \
	stdbuf -oL mckey -m "$grp" -b "$ADDR_A" -C 10 >"$tmp/mckey" 2>&1 &
mk=$!
on_exit "kill $mk 2>/dev/null"
wait_until 20 grep -q 'joined dgid' "$tmp/mckey" || fail "mckey did not join"
: >"$tmp/rxdpd-A.log"
mgr restart
grep 'not handing over' "$tmp/rxdpd-A.log"
[ "$(grep -c 'not handing over.*multicast' "$tmp/rxdpd-A.log")" = 1 ] ||
	{ cat "$tmp/rxdpd-A.log"; fail "multicast: no reason given"; }
[ "$(last_exit)" = 0 ] || fail "multicast: rxdpd exit $(last_exit), not 0"
grep -q 'descriptor store' <(grep -v 'not handing over' "$tmp/rxdpd-A.log") &&
	{ cat "$tmp/rxdpd-A.log"; fail "multicast: something went through the store"; }
wait_until 10 sh -c "! kill -0 $mk 2>/dev/null" || fail "mckey did not hear of the stop"
rxdp_wait_port "$NS_A" "$devA"
echo "ok: a multicast group joined: stopped as before, started anew"

# 4. stopped for good: the store emptied, the clients told at once
WK_TIMEOUT=60 wirecheck_bg gone 18817 -t rc -o all -s 0-20000 -D 30
sleep 1.5
t0=$(date +%s%N)
mgr stop
wirecheck_wait gone 2>"$tmp/gone.err" && fail "a stream passed its rxdpd's stop"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$(last_exit)" = 3 ] || fail "stop: rxdpd exit $(last_exit), not 3"
grep -q "out of time" "$tmp/gone.target" "$tmp/gone.client" &&
	fail "the stream ran out of time instead of hearing of the stop"
[ "$ms" -le 10000 ] || fail "the clients took $ms ms to notice the stop"
echo "ok: stopped for good: its clients told in $ms ms"
echo "PASS: rxdpd restarted through a descriptor store under running programs"
