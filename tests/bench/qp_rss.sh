#!/usr/bin/env bash
# rxdp-qp-rss, the benchmark's QP memory figure: on an rxdp host in a
# namespace, a process holds 1 and 64 RC QPs at RTS and reports its RSS
# (no -x: the tool finds the device's IPv4-mapped GID itself).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
tool=$root/build/bin/rxdp-qp-rss
[ -x "$tool" ] || fail "$tool not built"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
rxdp_wait_port "$NS_A" "rxdp_$IF_A"
verbs "$NS_A" "$tool" -d "rxdp_$IF_A" 1 64 >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "rxdp-qp-rss failed"; }
cat "$tmp/out"
grep -Eq '^baseline rss_kb=[1-9][0-9]*$' "$tmp/out" || fail "no baseline"
for n in 1 64; do
	grep -Eq "^qps=$n rss_kb=[1-9][0-9]* " "$tmp/out" || fail "no figure for $n QPs"
done
echo "PASS: rxdp-qp-rss"
