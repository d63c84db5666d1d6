#!/usr/bin/env bash
# Multicast (UD QPs attached to groups) between two rxdp hosts:
#   - mcast_check: ibv_attach_mcast/ibv_detach_mcast errnos as the kernel's
#     and Soft-RoCE's, the device's multicast caps, one QP's groups bounded;
#   - the interface joins a group while a QP of the device is attached to
#     it (ip maddr: the IP group and its Ethernet address) and leaves it
#     when the last one goes, even with a QP destroyed without a detach;
#   - rdma-core's mckey over IPv4 and IPv6 groups: one sender in A, two
#     receivers in B and one in A (the sender's own host: several receivers
#     on one host, and loopback to the sending device), every message
#     received by every receiver, though the sender destroys its QP right
#     after posting them;
#   - a forged datagram from the segment to a group nobody here joined is
#     dropped by B's XDP program and counted (drop_mcast_no_group); three to
#     a group with members are redirected to the data path (redirect grows
#     by them) and not dropped.
# MCKEY_ENGINES=2 (tests/rdmacm/mckey-engines.sh): the same with two
# engines per device on a veth of two queues, where a process's QPs are
# one engine's: each receiver process of a host on its own engine, the
# datagrams copied from the engine that received or sent them to the
# others with members. Without it, rxdpd's defaults on a veth of one
# queue (--engines-per-queue auto: a second engine there, for a second
# user; these are one user's, on the queue's first).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd mckey timeout stdbuf /usr/bin/python3
[ -f "$RXDP_LIB/librdmacm.so.1" ] || fail "build/lib/librdmacm.so.1 not built (make)"
check=$root/build/tests/rdmacm/mcast_check
[ -x "$check" ] || fail "$check not built (make test bins)"

id=$RXDP_TEST_ID
tmp=$(mktemp -d)
[ -n "${RXDP_KEEP:-}" ] || on_exit "rm -rf '$tmp'"
engines=${MCKEY_ENGINES:-1}
[ "$engines" -gt 1 ] && export NETNS_QUEUES=$engines RXDPD_ARGS="--engines $engines"
netns_pair
ADDR6_A=fd00:$(printf %x $((id & 0xffff))):2::1
ADDR6_B=fd00:$(printf %x $((id & 0xffff))):2::2
ip -n "$NS_A" addr add "$ADDR6_A/64" dev "$IF_A" nodad
ip -n "$NS_B" addr add "$ADDR6_B/64" dev "$IF_B" nodad
RXDP_VERBS_TIMEOUT=60
rxdp_hosts "$tmp"
for h in A B; do
	wait_until 10 grep -q "QP1 up" "$tmp/rxdpd-$h.log"
	want="$engines engine(s)"
	[ "$engines" -gt 1 ] || want="up: 1 queue(s)"
	grep -q "$want" "$tmp/rxdpd-$h.log" ||
		fail "host $h: not $want: $(grep 'data path up' "$tmp/rxdpd-$h.log")"
done

# B's XDP verdict counter NAME
verdict() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-loader" status "$IF_B" |
		awk -v n="$1" '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v && $1 == n {print $2}'
}
# joined NS IF PATTERN: the interface's multicast addresses show PATTERN
joined() {
	ip -n "$1" maddr show dev "$2" | grep -q -- "$3"
}

echo "== ibv_attach_mcast / ibv_detach_mcast"
verbs "$NS_B" "$check" "$devB" || fail "mcast_check"

echo "== the interface joins a group while a QP is attached"
G4=239.$((id >> 16 & 255)).$((id >> 8 & 255)).$((id & 255))
G4_MAC=$(printf '01:00:5e:%02x:%02x:%02x' $((id >> 16 & 127)) $((id >> 8 & 255)) $((id & 255)))
joined "$NS_B" "$IF_B" "inet  *$G4\b" && fail "$G4 joined before any attach"
coproc HOLD { verbs "$NS_B" "$check" "$devB" "$G4"; }
# bash unsets HOLD and HOLD_PID when the coprocess ends, which may come
# before this shell reads its last line: keep the pid and the pipes
hold=$HOLD_PID
exec {hold_out}<&"${HOLD[0]}" {hold_in}>&"${HOLD[1]}"
read -r -t 20 line <&"$hold_out" && [ "$line" = attached ] ||
	fail "mcast_check did not attach to $G4"
joined "$NS_B" "$IF_B" "inet  *$G4\b" || {
	ip -n "$NS_B" maddr show dev "$IF_B"
	fail "$IF_B did not join $G4 (IGMP) while a QP was attached"
}
joined "$NS_B" "$IF_B" "link  *$G4_MAC" || fail "$IF_B does not accept $G4_MAC"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-loader" status "$IF_B" |
	grep -q "^multicast groups:.* $G4\b" || fail "rxdp-loader status does not list $G4"
echo "$IF_B joined $G4 ($G4_MAC)"
echo >&"$hold_in"
read -r -t 20 line <&"$hold_out"
exec {hold_out}<&- {hold_in}>&-
wait "$hold" 2>/dev/null
wait_until 5 bash -c "! ip -n $NS_B maddr show dev $IF_B | grep -q 'inet  *$G4\b'"
joined "$NS_B" "$IF_B" "inet  *$G4\b" && fail "$IF_B still in $G4 after its QP was destroyed"
echo "left $G4 with the QP"

echo "== a forged datagram to a group without members"
ip -n "$NS_A" route add 224.0.0.0/4 dev "$IF_A"
before=$(verdict drop_mcast_no_group)
# a UD Send Only (0x64) to QPN 0xFFFFFF with a DETH (Q_Key, source QP)
verbs "$NS_A" /usr/bin/python3 "$root/tests/lib/roce_send.py" "$G4" \
	--opcode 0x64 --qpn 0xffffff --ext 012345670000abcd --payload-len 16 --count 5 ||
	fail "roce_send.py"
wait_until 5 bash -c "[ \$(ip netns exec $NS_B $RXDP_BIN/rxdp-loader status $IF_B |
	awk '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v && \$1 == \"drop_mcast_no_group\" {print \$2}') -ge $((before + 5)) ]"
after=$(verdict drop_mcast_no_group)
[ "$after" -ge $((before + 5)) ] ||
	fail "B's drop_mcast_no_group went $before -> $after, want +5"
echo "drop_mcast_no_group: $before -> $after"

# mckey_run NAME GROUP BIND_A BIND_B COUNT: receivers (two in B, one in A)
# joined first, then the sender in A; every receiver gets COUNT messages
mckey_run() {
	local name=$1 grp=$2 ba=$3 bb=$4 count=$5 r pids=() ok=1
	for r in B1 B2 A1; do
		local ns=$NS_B bind=$bb
		[ "${r:0:1}" = A ] && { ns=$NS_A; bind=$ba; }
		verbs "$ns" stdbuf -oL mckey -m "$grp" -b "$bind" -C "$count" -S 100 \
			>"$tmp/$name.$r" 2>&1 &
		pids+=($!)
	done
	for r in B1 B2 A1; do
		wait_until 20 grep -q "joined dgid" "$tmp/$name.$r" ||
			{ echo "$name: receiver $r did not join"; cat "$tmp/$name.$r"; ok=0; }
	done
	if [ $ok = 1 ]; then
		if [ "${grp#*:}" = "$grp" ]; then
			joined "$NS_B" "$IF_B" "inet  *$grp\b" ||
				{ echo "$name: $IF_B did not join $grp"; ok=0; }
		else
			joined "$NS_B" "$IF_B" "inet6  *$grp\b" ||
				{ echo "$name: $IF_B did not join $grp"; ok=0; }
		fi
		verbs "$NS_A" stdbuf -oL mckey -m "$grp" -b "$ba" -s -C "$count" -S 100 \
			>"$tmp/$name.send" 2>&1 || { echo "$name: sender failed"; ok=0; }
	fi
	for i in 0 1 2; do
		wait "${pids[$i]}" || { echo "$name: a receiver failed"; ok=0; }
	done
	for r in B1 B2 A1; do
		grep -q "data transfers complete" "$tmp/$name.$r" || ok=0
	done
	if [ $ok != 1 ]; then
		head -n 30 "$tmp/$name".*
		fail "$name"
	fi
	echo "$name: 3 receivers got $count messages each"
}

echo "== mckey"
# 300 datagrams: mckey's sender posts them unsignaled and destroys its QP
# at once; every one must still go out (ibv_destroy_qp waits for them)
mckey_run "mckey IPv4" "$G4" "$ADDR_A" "$ADDR_B" 300
mckey_run "mckey IPv6" "ff0e::$(printf %x $((id & 0xffff))):1" "$ADDR6_A" "$ADDR6_B" 20
# the groups are left with their last members
wait_until 5 bash -c "! ip -n $NS_B maddr show dev $IF_B | grep -q 'inet  *$G4\b'"
joined "$NS_B" "$IF_B" "inet  *$G4\b" && fail "$IF_B still in $G4 after mckey"

# datagrams to a group with members here pass the program
echo "== a datagram to a group with members passes"
coproc HOLD2 { verbs "$NS_B" "$check" "$devB" "$G4"; }
hold=$HOLD2_PID
exec {hold_out}<&"${HOLD2[0]}" {hold_in}>&"${HOLD2[1]}"
read -r -t 20 line <&"$hold_out" && [ "$line" = attached ] || fail "attach $G4"
before=$(verdict drop_mcast_no_group)
redirected=$(verdict redirect)
verbs "$NS_A" /usr/bin/python3 "$root/tests/lib/roce_send.py" "$G4" \
	--opcode 0x64 --qpn 0xffffff --ext 012345670000abcd --payload-len 16 --count 3 ||
	fail "roce_send.py"
redirected_by() { [ "$(verdict redirect)" -ge $((redirected + $1)) ]; }
wait_until 5 redirected_by 3 ||
	fail "datagrams to a joined group: redirect went $redirected -> $(verdict redirect), want +3"
after=$(verdict drop_mcast_no_group)
echo >&"$hold_in"
exec {hold_out}<&- {hold_in}>&-
wait "$hold" 2>/dev/null
[ "$after" = "$before" ] || fail "datagrams to a joined group dropped as no group"
echo "redirect: $redirected -> $(verdict redirect); drop_mcast_no_group stays $after"
echo PASS
