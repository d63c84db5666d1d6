#!/usr/bin/env bash
# The rsockets calls rstream does not make (rread, rwrite, their vector and
# message forms, rsendto/rrecvfrom, rselect, rgetsockname/rgetpeername,
# riomap/riounmap/riowrite's refusals), between two rxdp hosts, on
# build/lib's librdmacm.so.1: rsock_check sends 300000 bytes of a pattern
# each way and checks every byte at the receiver (see rsock_check.c).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
[ -f "$RXDP_LIB/librdmacm.so.1" ] || fail "build/lib/librdmacm.so.1 not built (make)"
RSOCK_CHECK=$root/build/tests/rdmacm/rsock_check
[ -x "$RSOCK_CHECK" ] || fail "$RSOCK_CHECK not built (make test)"

tmp=$(mktemp -d)
[ -n "${RXDP_KEEP:-}" ] || on_exit "rm -rf '$tmp'"
netns_pair
rxdp_hosts "$tmp"
# the CM's QP1 must be up before a connection can be asked for
for h in A B; do
	wait_until 10 grep -q "QP1 up" "$tmp/rxdpd-$h.log" ||
		fail "QP1 did not come up on $h: $(cat "$tmp/rxdpd-$h.log")"
done

port=7472
verbs "$NS_B" "$RSOCK_CHECK" server "$ADDR_B" $port "$ADDR_A" >"$tmp/srv" 2>&1 &
srv=$!
wait_until 10 grep -q listening "$tmp/srv" || fail "rsock_check server: $(cat "$tmp/srv")"
# (its rlisten reaches rxdpd before "listening" is printed)
verbs "$NS_A" "$RSOCK_CHECK" client "$ADDR_B" $port "$ADDR_A" >"$tmp/cli" 2>&1 ||
	fail "rsock_check client: $(cat "$tmp/cli"); server: $(cat "$tmp/srv")"
wait $srv || fail "rsock_check server: $(cat "$tmp/srv")"
cat "$tmp/cli" "$tmp/srv"
echo "PASS: rsockets calls between rxdp hosts, every byte checked"
