#!/usr/bin/env bash
# Integration test of rxdpd in two network namespaces joined by a veth pair,
# rxdp attached on A's end by rxdp-loader, rxdpd running in A:
#  - a second rxdpd in the same namespace refuses to start
#  - addresses added/removed -> GIDs appear/disappear (rxdp_ctl_query_gid)
#  - link down -> port DOWN, up -> ACTIVE
#  - RC/UC/UD QPs walked RESET->INIT->RTR->RTS against B's address, checked
#    in the pinned maps; bad modifies refused; unreachable peer EHOSTUNREACH
#  - hostile requests answered, daemon unharmed
#  - a client killed -> its QPs gone from qp_ctx; a daemon that exits or is
#    killed leaves none behind for the next one
#  - a verbs context: its fds (no AF_XDP socket), the device page read-only,
#    another client's objects out of its reach
# Root only (exit 77 otherwise). Runs in a private mount namespace; everything
# made is removed on exit, pass or fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd ip bpftool unshare tcpdump
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

if [ "${RXDP_DAEMON_PRIVATE_MNT:-}" != 1 ]; then
	trap - EXIT
	exec unshare --mount --propagation private \
		env RXDP_DAEMON_PRIVATE_MNT=1 "$0" "$@"
fi

B=$root/build
LOADER=$B/bin/rxdp-loader
RXDPD=$B/bin/rxdpd
CTL=$B/bin/rxdp-ctl
T=$B/tests/daemon/ctl_client_test
for x in "$LOADER" "$RXDPD" "$CTL" "$T"; do
	[ -x "$x" ] || fail "$x not built"
done
tmp=$(mktemp -d /tmp/rxdpd-test.XXXXXX)
on_exit "rm -rf '$tmp'"

step() { printf '# %s\n' "$*"; }
errors=0
check() { # check DESCRIPTION CMD...: run CMD, count a failure
	local what=$1
	shift
	if "$@"; then
		echo "ok   $what"
	else
		echo "FAIL $what" >&2
		errors=$((errors + 1))
	fi
}

rxdp_bpffs_mount || skip "cannot mount a bpffs at $RXDP_BPFFS_ROOT"
netns_pair
nsa "$LOADER" attach "$IF_A" >/dev/null || fail "rxdp-loader attach $IF_A"
on_exit "ip netns exec $NS_A $LOADER detach $IF_A"
PIN=$(rxdp_pin_dir "$NS_A" "$IF_A")

daemon_pid=
start_daemon() {
	# not through nsa (a function): $! must be the daemon itself
	ip netns exec "$NS_A" env RXDPD_NETLINK_RCVBUF="${NLBUF:-}" \
		"$RXDPD" --verbose 2>>"$tmp/rxdpd.log" &
	daemon_pid=$!
	wait_until 10 nsa "$T" port "$IF_A" >/dev/null 2>&1 ||
		fail "rxdpd did not come up: $(tail -5 "$tmp/rxdpd.log")"
}
stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill "$daemon_pid" 2>/dev/null
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
}
on_exit 'stop_daemon'
on_exit "[ \$errors -eq 0 ] || { echo '--- rxdpd log'; tail -40 '$tmp/rxdpd.log'; } >&2"

step "start rxdpd in $NS_A"
start_daemon
nsa "$CTL" all

step "a second rxdpd in the same namespace refuses to start"
out=$(nsa timeout 5 "$RXDPD" 2>&1)
rc=$?
check "second daemon exits 1" [ $rc -eq 1 ]
check "second daemon says why" grep -q "already runs" <<<"$out"

# --- GIDs ---------------------------------------------------------------------
gids() { nsa "$T" gids "$IF_A"; }
has_gid() { gids | grep -q " $1\$"; }
no_gid() { ! gids | grep -q " $1\$"; }
step "GIDs follow addresses"
check "IPv4 GID of $ADDR_A present" has_gid "::ffff:$ADDR_A"
ll_gid() { gids | grep -q '^0 fe80::'; }
check "link-local GID at index 0" ll_gid
V4=198.18.$(((RXDP_TEST_ID >> 8) & 255)).$(((RXDP_TEST_ID & 255) ^ 1))
V6=2001:db8:$(printf %x $((RXDP_TEST_ID & 0xffff)))::7
nsa ip addr add "$V4/32" dev "$IF_A"
nsa ip addr add "$V6/64" dev "$IF_A" nodad
check "added IPv4 $V4 appears" wait_until 5 has_gid "::ffff:$V4"
check "added IPv6 $V6 appears" wait_until 5 has_gid "$V6"
idx_before=$(gids | awk -v g="::ffff:$ADDR_A" '$2 == g {print $1}')
nsa ip addr del "$V4/32" dev "$IF_A"
check "removed IPv4 disappears" wait_until 5 no_gid "::ffff:$V4"
nsa ip addr del "$V6/64" dev "$IF_A"
check "removed IPv6 disappears" wait_until 5 no_gid "$V6"
idx_after=$(gids | awk -v g="::ffff:$ADDR_A" '$2 == g {print $1}')
check "remaining GID keeps its index ($idx_before)" [ "$idx_before" = "$idx_after" ]

# --- port state -------------------------------------------------------------------
step "port state follows the link; subscribers get the events"
ip netns exec "$NS_A" "$T" events "$IF_A" 60 >"$tmp/events.out" 2>&1 &
events_pid=$!
on_exit "kill $events_pid 2>/dev/null"
wait_until 5 grep -q subscribed "$tmp/events.out" || fail "events client did not subscribe"
port_is() { [ "$(nsa "$T" port "$IF_A")" = "$1" ]; }
check "port ACTIVE" port_is ACTIVE
nsa ip link set "$IF_A" down
check "link down -> port DOWN" wait_until 5 port_is DOWN
check "... and IBV_EVENT_PORT_ERR" wait_until 5 grep -q "event PORT_ERR" "$tmp/events.out"
nsa ip link set "$IF_A" up
check "link up -> port ACTIVE" wait_until 10 port_is ACTIVE
check "... and IBV_EVENT_PORT_ACTIVE" wait_until 5 grep -q "event PORT_ACTIVE" "$tmp/events.out"
nsa ip addr add "$V4/32" dev "$IF_A"
check "an address added -> IBV_EVENT_GID_CHANGE" wait_until 5 grep -q "event GID_CHANGE" "$tmp/events.out"
nsa ip addr del "$V4/32" dev "$IF_A"
kill "$events_pid"
wait "$events_pid" 2>/dev/null
check "the events client saw nothing wrong" bash -c "! grep -q FAIL '$tmp/events.out'"
# IPv6 link-local and ND settle after the link comes back: A's address out
# of its duplicate detection
a_ll_ready() { ip -n "$NS_A" -6 addr show dev "$IF_A" scope link | grep -q inet6 &&
	! ip -n "$NS_A" -6 addr show dev "$IF_A" scope link | grep -q tentative; }
wait_until 10 a_ll_ready || check "IPv6 link-local address on $IF_A after the link came back" false

# --- QPs --------------------------------------------------------------------------
DEAD=198.19.254.$(((RXDP_TEST_ID & 127) + 1))
step "QPs: RC/UC/UD to RTS against $ADDR_B, errors, unreachable $DEAD"
check "qp walk and map contents" nsa "$T" qps "$IF_A" "$ADDR_B" "$DEAD"

step "address resolution (ibv_create_ah) over IPv4 and IPv6"
check "IPv4 peer -> $MAC_B" nsa "$T" resolve "$IF_A" "::ffff:$ADDR_B" "$MAC_B"
ll_ready() { ip -n "$NS_B" -6 addr show dev "$IF_B" scope link | grep -q inet6 &&
	! ip -n "$NS_B" -6 addr show dev "$IF_B" scope link | grep -q tentative; }
if wait_until 10 ll_ready; then
	LL_B=$(ip -n "$NS_B" -6 addr show dev "$IF_B" scope link | awk '/inet6/ {sub("/.*", "", $2); print $2; exit}')
	check "IPv6 link-local peer $LL_B -> $MAC_B" nsa "$T" resolve "$IF_A" "$LL_B" "$MAC_B"
else
	check "IPv6 link-local address on $IF_B" false
fi

step "a client waiting for an unreachable peer does not hold up the others"
DEAD2=198.19.253.$(((RXDP_TEST_ID & 127) + 1))
ip netns exec "$NS_A" "$T" unreach "$IF_A" "::ffff:$DEAD2" >"$tmp/unreach.out" 2>&1 &
unreach_pid=$!
on_exit "kill $unreach_pid 2>/dev/null"
# rxdpd has asked the kernel to resolve it: the neighbour entry exists
check "rxdpd resolves $DEAD2" wait_until 5 bash -c "ip -n $NS_A neigh show $DEAD2 | grep -q ."
check "another client is served meanwhile" port_is ACTIVE
# resolution takes 3 s; the query above takes milliseconds
check "... while the first still waits" kill -0 "$unreach_pid"
wait "$unreach_pid"
check "the waiting client gets EHOSTUNREACH" [ $? -eq 0 ]
cat "$tmp/unreach.out"

# qpns_in_map: the QPNs in A's qp_ctx, one per line
qpns_in_map() {
	bpftool -j map dump pinned "$PIN/qp_ctx" |
		/usr/bin/python3 -c 'import json,sys
for e in json.load(sys.stdin):
    v = e.get("value") or e.get("formatted", {}).get("value")
    if isinstance(v, dict): print(v["qpn"])
    else: print(int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little"))'
}
all_in_map() { local q m; m=$(qpns_in_map); for q in "$@"; do grep -qx "$q" <<<"$m" || return 1; done; }
none_in_map() { local q m; m=$(qpns_in_map); for q in "$@"; do grep -qx "$q" <<<"$m" && return 1; done; return 0; }

step "many QPs: distinct numbers, the list is paged, all released on exit"
check "1000 QPs created and listed" nsa "$T" many "$IF_A" 1000
# QP1, the device's own (the GSI, on which rxdpd's CM speaks), stays
map_empty() { [ "$(qpns_in_map | grep -vx 1 | wc -l)" -eq 0 ]; }
check "none left in qp_ctx after the client exits" wait_until 5 map_empty
check "but QP1, the device's GSI" all_in_map 1

step "hostile requests"
check "daemon answers malformed input and survives" nsa "$T" hostile "$IF_A"
check "and random CM requests, with another connection's ids out of reach" \
	nsa "$T" cmhostile "$IF_A" "$ADDR_B"
check "daemon still running" kill -0 "$daemon_pid"

start_holder() { # start_holder NAME: a client holding 3 QPs; sets NAME_pid, NAME_qpns
	ip netns exec "$NS_A" "$T" qps "$IF_A" "$ADDR_B" "$DEAD" hold \
		>"$tmp/$1.out" 2>"$tmp/$1.err" &
	eval "$1_pid=$!"
	on_exit "kill -9 \$$1_pid 2>/dev/null"
	wait_until 20 grep -qE '^[0-9]+ [0-9]+ [0-9]+$' "$tmp/$1.out" ||
		fail "holder $1 did not start: $(cat "$tmp/$1.err")"
	eval "$1_qpns=\"$(grep -E '^[0-9]+ [0-9]+ [0-9]+$' "$tmp/$1.out")\""
}

step "a client that is killed loses its QPs"
start_holder h0
# shellcheck disable=SC2154
check "holder's QPs in qp_ctx" all_in_map $h0_qpns
nsa "$CTL" qps
h0_rc=${h0_qpns%% *}

step "least information: another user sees none of root's QPs; root sees all"
nobody() { nsa setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
root_lists_h0() {
	local out q
	out=$(nsa "$CTL" qps) || return 1
	for q in $h0_qpns; do grep -q " $(printf '%#x' "$q") " <<<"$out" || return 1; done
}
nobody_lists_none() { nobody "$CTL" qps | grep -qx 'QPS (0)'; }
check "rxdp-ctl qps as root lists the holder's QPs" root_lists_h0
check "rxdp-ctl qps as uid 65534 lists none" nobody_lists_none
nobody_query_fails() { ! nobody "$T" qpmac "$IF_A" "$h0_rc" 2>/dev/null; }
check "uid 65534 cannot query root's QP" nobody_query_fails
check "uid 65534 lists its own QPs" nobody "$T" many "$IF_A" 5

step "a neighbour's MAC changes: the RC QP's path and its source check follow"
qpmac_is() { [ "$(nsa "$T" qpmac "$IF_A" "$h0_rc")" = "$1" ]; }
# the MAC qp_ctx accepts the RC QP's packets from (bytes 72..77)
ctx_mac_is() {
	bpftool -j map lookup pinned "$PIN/qp_ctx" key $(printf '0x%02x ' \
		$((h0_rc & 255)) $(((h0_rc >> 8) & 255)) $(((h0_rc >> 16) & 255)) 0) |
		/usr/bin/python3 -c 'import json,sys
e = json.load(sys.stdin)
v = e.get("formatted", {}).get("value") or e.get("value")
m = v["peer_mac"] if isinstance(v, dict) else [int(b, 16) for b in v[72:78]]
print(":".join("%02x" % int(b) for b in m))' | grep -qx "$1"
}
check "RC QP path leads to $MAC_B" qpmac_is "$MAC_B"
check "... and qp_ctx takes its packets from $MAC_B" ctx_mac_is "$MAC_B"
nsa ip neigh replace "$ADDR_B" lladdr 02:00:5e:00:00:99 dev "$IF_A" nud permanent
check "after the change it leads to 02:00:5e:00:00:99" wait_until 5 qpmac_is 02:00:5e:00:00:99
check "... and qp_ctx follows" ctx_mac_is 02:00:5e:00:00:99
nsa ip neigh replace "$ADDR_B" lladdr "$MAC_B" dev "$IF_A" nud reachable
check "and back" wait_until 5 qpmac_is "$MAC_B"
kill -9 "$h0_pid"
check "killed client's QPs gone from qp_ctx" wait_until 5 none_in_map $h0_qpns

step "restart: the data path is rxdpd's, so a new rxdpd keeps no QP of the old one"
start_holder h1
stop_daemon
# shellcheck disable=SC2154
check "a daemon that exits removes its clients' QPs" none_in_map $h1_qpns
kill -9 "$h1_pid"
wait "$h1_pid" 2>/dev/null
start_daemon
start_holder h2
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
# shellcheck disable=SC2154
check "after kill -9 of rxdpd its QPs are still in the map" all_in_map $h2_qpns
# the new daemon gets a tiny netlink buffer: the overrun test below needs it
NLBUF=4096 start_daemon
check "a new rxdpd removes them" none_in_map $h2_qpns
kill -9 "$h2_pid"
wait "$h2_pid" 2>/dev/null

step "netlink overrun (ENOBUFS) -> full resync, GIDs right afterwards"
idx_before=$(gids | awk -v g="::ffff:$ADDR_A" '$2 == g {print $1}')
kill -STOP "$daemon_pid"
for i in $(seq 1 40); do echo "addr add 198.19.200.$i/32 dev $IF_A"; done >"$tmp/batch"
for i in $(seq 1 39); do echo "addr del 198.19.200.$i/32 dev $IF_A"; done >>"$tmp/batch"
ip -n "$NS_A" -batch "$tmp/batch"
kill -CONT "$daemon_pid"
check "the daemon noticed the overrun" wait_until 5 grep -q "ENOBUFS" "$tmp/rxdpd.log"
check "the surviving address has a GID" wait_until 5 has_gid "::ffff:198.19.200.40"
only_one() { [ "$(gids | grep -c '::ffff:198\.19\.200\.')" -eq 1 ]; }
check "none of the removed addresses has one" only_one
idx_after=$(gids | awk -v g="::ffff:$ADDR_A" '$2 == g {print $1}')
check "$ADDR_A keeps GID index $idx_before" [ "$idx_before" = "$idx_after" ]
nsa ip addr del 198.19.200.40/32 dev "$IF_A"

# --- data path ---------------------------------------------------------------------
step "a verbs context: an eventfd, a read-only page and a pipe, no AF_XDP socket; other clients' objects out of reach"
check "context fds and isolation" nsa "$T" ctx "$IF_A"

step "a hostile client's garbage in its shared queues: rxdpd survives, the QP goes to ERR"
check "garbage rings" nsa "$T" rings "$IF_A" "$ADDR_B"
check "daemon still running" kill -0 "$daemon_pid"

step "a connection that holds nothing and says nothing for 5 s is closed"
idle_closed() {
	ip netns exec "$NS_A" /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\0rxdp/rxdpd")
s.settimeout(10)
t = time.time()
sys.exit(0 if s.recv(64) == b"" and 4 <= time.time() - t <= 9 else 1)'
}
check "closed after about 5 s" idle_closed

check "daemon alive at the end" kill -0 "$daemon_pid"
[ "$errors" -eq 0 ] || fail "$errors check(s) failed"
echo "PASS"
