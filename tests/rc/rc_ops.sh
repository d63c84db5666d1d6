#!/usr/bin/env bash
# rc_ops (tests/rc/rc_ops.c, a verbs program of our own built against the
# system's libibverbs) run on rxdp's libibverbs.so.1 in two namespaces: every
# RC operation and message size with the data checked byte for byte at both
# ends, the extended verbs (every ibv_wr_* operation, ibv_start_poll and
# completion timestamps, ibv_create_srq_ex), one check per memory window
# rule (rc_ops_mw.c), then the error completions, the last of which kills
# the server.
# Usage: rc_ops.sh [GROUP...] (default: basic ext mw errors; see rc_ops.c)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd timeout
rc_ops=$root/build/tests/rc/rc_ops
[ -x "$rc_ops" ] || fail "$rc_ops not built (make build/tests/rc/rc_ops)"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"

groups=("${@:-basic}")
[ $# -eq 0 ] && groups=(basic ext mw errors)
kills=0
[[ " ${groups[*]} " == *" errors "* ]] && kills=1

RXDP_VERBS_TIMEOUT=100
verbs "$NS_A" "$rc_ops" -d "$devA" -g "$gidA" server 18515 >"$tmp/srv" 2>&1 &
srv=$!
on_exit "kill $srv 2>/dev/null"
verbs "$NS_B" "$rc_ops" -d "$devB" -g "$gidB" client "$ADDR_A" 18515 \
	"${groups[@]}" 2>&1 | tee "$tmp/cli"
cli=${PIPESTATUS[0]}
wait $srv
srv_rc=$?
echo "--- server (exit $srv_rc)"
cat "$tmp/srv"
[ "$cli" = 0 ] || fail "rc_ops client: exit $cli"
grep -q '^rc_ops: [0-9]* checks, 0 failed$' "$tmp/cli" || fail "no summary"
if [ $kills = 1 ]; then
	# timeout(1) reports a child killed by SIGKILL as 128+9
	[ "$srv_rc" = 137 ] || fail "the server should have been killed (exit $srv_rc)"
else
	[ "$srv_rc" = 0 ] || fail "rc_ops server: exit $srv_rc"
fi
echo "PASS: rc_ops ${groups[*]}"
