#!/usr/bin/env bash
# rdma-core's RDMA-CM beside rxdp's, without a kernel RDMA device: stand-ins
# for rdma-core's libibverbs and librdmacm (tests/verbs/fake_rdmacore.c,
# tests/rdmacm/fake_rdmacm.c) loaded by build/lib's librdmacm.so.1 with
# RXDP_RDMA_CORE and RXDP_RDMA_CORE_CM, in a namespace whose rxdpd serves the
# veth only. cm_foreign binds an id to lo's 127.0.0.1, which rxdpd does not
# serve: every call on it must reach the stand-in's function of that name,
# value and errno (cm_foreign.c).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
CM_FOREIGN=$root/build/tests/rdmacm/cm_foreign
FAKE_VERBS=$root/build/tests/verbs/fake-rdmacore/libibverbs.so.1
FAKE_CM=$root/build/tests/rdmacm/fake-rdmacm/librdmacm.so.1
for f in "$CM_FOREIGN" "$FAKE_VERBS" "$FAKE_CM"; do
	[ -e "$f" ] || fail "$f not built (make test)"
done

tmp=$(mktemp -d)
[ -n "${RXDP_KEEP:-}" ] || on_exit "rm -rf '$tmp'"
netns_pair
ip -n "$NS_A" link set lo up
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
rxdp_wait_port "$NS_A" "rxdp_$IF_A" || fail "rxdp_$IF_A never came up"

verbs "$NS_A" env RXDP_RDMA_CORE="$FAKE_VERBS" RXDP_RDMA_CORE_CM="$FAKE_CM" \
	"$CM_FOREIGN" 127.0.0.1 >"$tmp/foreign.out" 2>&1 ||
	fail "cm_foreign: $(cat "$tmp/foreign.out")"
cat "$tmp/foreign.out"
echo "cm-foreign: passed"
