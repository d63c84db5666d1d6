#!/usr/bin/env bash
# No silent broken states (issue 22): what keeps rxdpd from serving is said
# once in its log, and every time in rxdp-ctl (text and --json) and to a
# verbs program that finds no device, until it clears:
#  - rxdpd with nothing attached: "no device: ..."; a verbs program in a
#    namespace without rxdpd: one line saying so
#  - attach: resolved, the device serves
#  - the XDP program taken off behind the loader's back (ip link set dev X
#    xdp off): the port goes DOWN with IBV_EVENT_PORT_ERR (ibv_asyncwatch),
#    rxdp-ctl names it; attached again: ACTIVE
#  - rxdpd without a right it needs (CAP_NET_RAW, CAP_MKNOD): said, and
#    no AF_XDP socket means no data path: port DOWN
# Root only.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ip capsh ibv_devices ibv_asyncwatch ibv_devinfo

B=$root/build
LOADER=$B/bin/rxdp-loader
RXDPD=$B/bin/rxdpd
CTL=$B/bin/rxdp-ctl
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
errors=0
bad() {
	echo "FAIL: $*" >&2
	errors=$((errors + 1))
}

NETNS_NO_IPV6=1 netns_pair
DEV=rxdp_$IF_A
NOTHING="no device: rxdp is attached to no interface in this network namespace (rxdp-loader attach IFNAME)"
GONE="$IF_A: the XDP program is gone (detached behind rxdp-loader's back?): port DOWN; rxdp-loader detach $IF_A and attach $IF_A"

# count LOG LINE: how many times LINE (a fixed string) is in LOG
count() { grep -cF -- "$2" "$1"; }
port_state() { verbs "$NS_A" ibv_devinfo -d "$DEV" | awk '/state:/ {print $2; exit}'; }

# --- a verbs program where no rxdpd runs -------------------------------------
out=$(verbs "$NS_B" ibv_devices 2>&1 >/dev/null)
[ "$(grep -c . <<<"$out")" = 1 ] && grep -q "^libibverbs(rxdp): no RDMA devices: no rxdpd in this network namespace (@rxdp/rxdpd: .*)" <<<"$out" ||
	bad "ibv_devices without rxdpd says: $out"
echo "ok: without rxdpd: $out"

# --- nothing attached ----------------------------------------------------------
ip netns exec "$NS_A" "$RXDPD" 2>"$tmp/d.log" &
pid=$!
on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
wait_until 10 grep -q ready "$tmp/d.log" || fail "rxdpd did not start: $(cat "$tmp/d.log")"
sleep 2.5 # two health checks more: still said once
[ "$(count "$tmp/d.log" "$NOTHING")" = 1 ] ||
	bad "'no device' said $(count "$tmp/d.log" "$NOTHING") times in the log: $(cat "$tmp/d.log")"
# addresses of interfaces rxdpd does not serve are no news
grep -q "GID" "$tmp/d.log" && bad "GID lines for interfaces not served: $(cat "$tmp/d.log")"
out=$(nsa "$CTL")
rc=$?
grep -qx "PROBLEMS (rxdpd)" <<<"$out" && grep -qxF "  $NOTHING" <<<"$out" ||
	bad "rxdp-ctl with nothing attached: $out"
[ $rc = 1 ] || bad "rxdp-ctl exits $rc with PROBLEMS listed"
nsa "$CTL" --json >"$tmp/j"
rc=$?
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["devices"] == [] and len(d["problems"]) == 1 and d["problems"][0].startswith("no device:"), d
' "$tmp/j" || bad "rxdp-ctl --json with nothing attached"
[ $rc = 1 ] || bad "rxdp-ctl --json exits $rc with problems listed"
# metrics carry the problems as samples: a collector keeps its file
nsa "$CTL" metrics >"$tmp/m"
rc=$?
grep -qx "rxdp_problems 1" "$tmp/m" || bad "metrics: rxdp_problems: $(cat "$tmp/m")"
[ $rc = 0 ] || bad "rxdp-ctl metrics exits $rc with problems"
out=$(verbs "$NS_A" ibv_devices 2>&1 >/dev/null)
[ "$out" = "libibverbs(rxdp): no RDMA devices: rxdpd serves none: $NOTHING" ] ||
	bad "ibv_devices with nothing attached says: $out"
echo "ok: nothing attached: said once in the log, in rxdp-ctl, to ibv_devices"

# --- attached --------------------------------------------------------------------
on_exit "ip netns exec $NS_A $LOADER detach $IF_A"
nsa "$LOADER" attach "$IF_A" >/dev/null || fail "attach $IF_A"
rxdp_wait_port "$NS_A" "$DEV"
wait_until 5 grep -qF "resolved: $NOTHING" "$tmp/d.log" || bad "not resolved in the log"
out=$(nsa "$CTL")
rc=$?
grep -q PROBLEMS <<<"$out" && bad "rxdp-ctl still has problems: $out"
[ $rc = 0 ] || bad "rxdp-ctl exits $rc without problems"
echo "ok: attached: resolved, no problem left"

# --- the XDP program gone --------------------------------------------------------
verbs "$NS_A" ibv_asyncwatch -d "$DEV" >"$tmp/events" 2>&1 &
aw=$!
on_exit "kill $aw 2>/dev/null"
wait_until 5 grep -q "async event FD" "$tmp/events" || bad "ibv_asyncwatch did not start: $(cat "$tmp/events")"
ip -n "$NS_A" link set dev "$IF_A" xdp off || fail "xdp off"
wait_until 5 grep -q "IBV_EVENT_PORT_ERR" "$tmp/events" ||
	bad "no IBV_EVENT_PORT_ERR after xdp off: $(cat "$tmp/events")"
[ "$(port_state)" = PORT_DOWN ] || bad "port $(port_state) after xdp off"
wait_until 5 nsa "$CTL" devices | grep -qF "  $GONE" || bad "rxdp-ctl after xdp off: $(nsa "$CTL" devices)"
sleep 2
[ "$(count "$tmp/d.log" "$GONE")" = 1 ] ||
	bad "'XDP program gone' said $(count "$tmp/d.log" "$GONE") times: $(cat "$tmp/d.log")"
kill $aw
echo "ok: XDP program gone: port DOWN, IBV_EVENT_PORT_ERR, said once, shown by rxdp-ctl"
nsa "$LOADER" detach "$IF_A" >/dev/null 2>&1
nsa "$LOADER" attach "$IF_A" >/dev/null || fail "attach again"
rxdp_wait_port "$NS_A" "$DEV"
wait_until 5 grep -qF "resolved: $GONE" "$tmp/d.log" || bad "'gone' not resolved"
echo "ok: attached again: ACTIVE"
# a plain detach is a device gone, not a program gone behind the loader
gone0=$(count "$tmp/d.log" "$GONE")
nsa "$LOADER" detach "$IF_A" >/dev/null || bad "detach"
wait_until 5 grep -qF "device $DEV gone (rxdp detached from $IF_A)" "$tmp/d.log" ||
	bad "rxdpd did not see the detach: $(cat "$tmp/d.log")"
sleep 1.5
[ "$(count "$tmp/d.log" "$GONE")" = "$gone0" ] ||
	bad "a plain detach logged as '$GONE': $(cat "$tmp/d.log")"
echo "ok: detached: said as a detach"
nsa "$LOADER" attach "$IF_A" >/dev/null || fail "attach after the detach"
kill $pid
wait $pid

# --- rights missing ----------------------------------------------------------------
# only the bounding set: uid 0 keeps the rest
ip netns exec "$NS_A" capsh --drop=cap_net_raw,cap_mknod -- -c "exec $RXDPD" 2>"$tmp/d2.log" &
pid=$!
on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
wait_until 10 grep -q ready "$tmp/d2.log" || fail "rxdpd (no CAP_NET_RAW) did not start: $(cat "$tmp/d2.log")"
sleep 2
out=$(nsa "$CTL" devices)
for want in "lacks CAP_NET_RAW: cannot open AF_XDP sockets, so no device carries traffic" \
	"lacks CAP_MKNOD: no /dev/infiniband node per device, programs that look for one (UCX) find no device"; do
	grep -qxF "  $want" <<<"$out" || bad "rxdp-ctl does not say '$want': $out"
	[ "$(count "$tmp/d2.log" "$want")" = 1 ] ||
		bad "'$want' said $(count "$tmp/d2.log" "$want") times: $(cat "$tmp/d2.log")"
done
grep -q "^  rxdp_$IF_A: no data path (.*Operation not permitted.*): port DOWN$" <<<"$out" ||
	bad "no data path not shown: $out"
# (ibv_devinfo cannot open a device without a data path: rxdp-ctl says)
grep -q "port 1: DOWN " <<<"$out" || bad "port not DOWN without an AF_XDP socket: $out"
echo "ok: rights missing: said once, shown by rxdp-ctl, port DOWN without a data path"

[ $errors = 0 ] || fail "$errors check(s) failed"
echo "PASS: no silent broken states"
