#!/usr/bin/env bash
# Engines by user (rxdpd --engines 2 on 2-queue veths): a context goes to
# the engine serving the fewest contexts of other users, then the fewest
# contexts (userspace/daemon/README.md "Engines and users"). Idle
# ibv_rc_pingpong servers (each makes its context and QP, then listens),
# one after another, rxdp-ctl qps showing each QP's engine:
#  - on A, user 65534, then 12345, then 12345, then 65534: the two users
#    on different engines, each user's second context beside its first
#    (fewest contexts alone would put 12345's second beside 65534's)
#  - on B, two of root's: one user alone spreads over both engines
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong setpriv python3 timeout
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
chmod 755 "$tmp"

NETNS_QUEUES=2 NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--engines 2" rxdp_hosts "$tmp"

pids=()
on_exit 'kill ${pids[*]} 2>/dev/null'
# serve NS DEV GID PORT [UID]: an idle server, listening before it returns
serve() {
	local as=()
	[ -n "${5:-}" ] && as=(setpriv --reuid="$5" --regid="$5" --clear-groups)
	verbs "$1" "${as[@]}" ibv_rc_pingpong -d "$2" -g "$3" -p "$4" \
		>/dev/null 2>&1 &
	pids+=($!)
	wait_until 10 bash -c "ip netns exec $1 ss -ltn | grep -q ':$4 '" ||
		fail "the pingpong server on port $4 does not listen"
}
serve "$NS_A" "$devA" "$gidA" 19401 65534
serve "$NS_A" "$devA" "$gidA" 19402 12345
serve "$NS_A" "$devA" "$gidA" 19403 12345
serve "$NS_A" "$devA" "$gidA" 19404 65534
serve "$NS_B" "$devB" "$gidB" 19405
serve "$NS_B" "$devB" "$gidB" 19406
for h in A B; do
	grep -q "data path up: 2 queue(s), 2 engine(s)" "$tmp/rxdpd-$h.log" ||
		fail "host $h: not 2 engines: $(grep "data path" "$tmp/rxdpd-$h.log")"
done
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" --json qps >"$tmp/a.json" ||
	fail "rxdp-ctl qps on A"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" --json qps >"$tmp/b.json" ||
	fail "rxdp-ctl qps on B"
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" qps >"$tmp/a.txt"
grep -q "^  device .* class engine$" "$tmp/a.txt" ||
	fail "rxdp-ctl qps: no engine column: $(cat "$tmp/a.txt")"
# a QPN's index (its low 14 bits) rises in the order the QPs were made
# (qp.c, qpn_alloc)
python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' || fail "the contexts' engines"
import json, sys
def engines(path):
    qps = [q for q in json.load(open(path))["qps"] if q["type"] == "RC"]
    return [q["engine"] for q in sorted(qps, key=lambda q: q["qpn"] & 0x3fff)]
a, b = engines(sys.argv[1]), engines(sys.argv[2])
assert len(a) == 4 and a[0] != a[1] and a[2] == a[1] and a[3] == a[0], a
print("ok   A: users 65534, 12345, 12345, 65534 on engines", a)
assert sorted(b) == [0, 1], b
print("ok   B: one user's two contexts on engines", b)
PY
echo PASS
