#!/usr/bin/env bash
# rxdp on the XDP program's variant for kernels without multi-buffer XDP
# (before Linux 5.18: Ubuntu 22.04's 5.15, RHEL 9's 5.14), forced here with
# `rxdp-loader attach --variant linear`: what `rxdp-loader attach` loads by
# itself on such a kernel. RC, UC and UD streams of every operation, every
# byte checked at the receiver (wirecheck), the stock pingpongs and an RDMA
# Write bandwidth run across it; the program attached is the linear one on
# both ends.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ibv_rc_pingpong ibv_ud_pingpong

export RXDP_LOADER_ARGS="--variant linear"
# perftest.sh builds its own hosts with rxdp_host: the variant goes with it
out=$("$root/tests/rc/perftest.sh" rc_pingpong uc_pingpong ud_pingpong \
	write_bw 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "the stock tools on the linear variant: exit $rc"

# and the variant is the one attached: a host of our own to look at
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
for ns in "$NS_A" "$NS_B"; do
	st=$(ip netns exec "$ns" "$RXDP_BIN/rxdp-loader" status)
	grep -qx "program: rxdp_xdp_linear (one buffer a frame)" <<<"$st" ||
		fail "$ns: not the linear variant: $st"
done
WK_DIR=$tmp
streams=(
	"-t rc -o all -s 0-70000 -n 300 --sge 2"
	"-t uc -o all -s 0-20000 -n 300"
	"-t ud -o all -s 0-1024 -n 300"
)
wirecheck_each 18600 "${streams[@]}"
echo "PASS: rxdp on the XDP program without multi-buffer"
