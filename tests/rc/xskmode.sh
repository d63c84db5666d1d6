#!/usr/bin/env bash
# rxdpd --xsk: the AF_XDP sockets' mode. A veth has no zero-copy, so host A
# (--xsk copy) binds its sockets in copy mode, and host B (--xsk zero-copy)
# binds none: its verbs context gets an error, its log says the driver
# refuses zero-copy, and rxdp-ctl lists no socket. A bad mode is one line
# and exit status 2.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_devinfo timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

"$RXDP_BIN/rxdpd" --xsk zerocopy >"$tmp/bad" 2>&1
rc=$?
[ $rc = 2 ] || fail "--xsk zerocopy: exit $rc, not 2"
[ "$(wc -l <"$tmp/bad")" = 1 ] && grep -q "copy, zero-copy or auto" "$tmp/bad" ||
	fail "--xsk zerocopy: not one line naming the modes: $(cat "$tmp/bad")"
echo "ok: $(cat "$tmp/bad")"

NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--xsk copy" rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
RXDPD_ARGS="--xsk zero-copy" rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
devA=rxdp_$IF_A
devB=rxdp_$IF_B
rxdp_wait_port "$NS_A" "$devA"
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" devices >"$tmp/devA"
grep "AF_XDP socket" "$tmp/devA"
grep -q "AF_XDP socket of queue 0: copy mode" "$tmp/devA" ||
	fail "A (--xsk copy): queue 0 not in copy mode"

verbs "$NS_B" ibv_devinfo -d "$devB" >"$tmp/infoB" 2>&1 &&
	fail "B (--xsk zero-copy): $devB opened on a veth"
echo "B: ibv_devinfo: $(head -n 3 "$tmp/infoB" | tr '\n' ' ')"
grep -q "the driver refuses zero-copy AF_XDP" "$tmp/infoB" ||
	fail "B (--xsk zero-copy): opening $devB does not say why it failed"
grep "AF_XDP" "$tmp/rxdpd-B.log"
grep -q "the driver refuses zero-copy AF_XDP" "$tmp/rxdpd-B.log" ||
	fail "B (--xsk zero-copy): its log does not say the driver refuses zero-copy"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" devices >"$tmp/devB"
grep -q "AF_XDP socket of queue" "$tmp/devB" &&
	fail "B (--xsk zero-copy): sockets bound on a veth: $(grep AF_XDP "$tmp/devB")"
echo PASS
