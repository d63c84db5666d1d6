#!/usr/bin/env bash
# On-demand paging (IBV_ACCESS_ON_DEMAND) through odp (a verbs program,
# RDMA operations between two QPs of one process looped back through
# rxdpd): the capabilities, an ODP MR over untouched memory past
# RLIMIT_MEMLOCK (faulted in on access, never re-backed nor pinned), a page
# unmapped inside one (access errors, never a crash), implicit ODP over the
# whole address space, ibv_advise_mr and its errors. ODP memory takes the
# batched path: payload_syscalls must move. Then untouched, munmap, implicit
# and rereg again with the requester on the other host (an agent:
# tests/lib/vtest.h), its WRs across the wire into ODP memory.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
prog=$root/build/tests/rc/odp
[ -x "$prog" ] || fail "$prog not built"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
errors=0
syscalls0=$(rxdp_counter "$NS_A" payload_syscalls)
for t in ${ODP_TESTS:-caps untouched munmap implicit transports rereg advise}; do
	if verbs "$NS_A" "$prog" "$devA" "$gidA" "$t"; then
		:
	else
		echo "FAIL odp $t" >&2
		errors=$((errors + 1))
	fi
done
syscalls1=$(rxdp_counter "$NS_A" payload_syscalls)
if [ "$syscalls1" -gt "$syscalls0" ]; then
	echo "ok   ODP memory took the batched path: $((syscalls1 - syscalls0)) payload system calls"
else
	echo "FAIL ODP memory took no payload system call" >&2
	errors=$((errors + 1))
fi
# rxdpd is still there and serving
verbs "$NS_A" "$prog" "$devA" "$gidA" caps >/dev/null ||
	{ echo "FAIL rxdpd after the ODP tests" >&2; errors=$((errors + 1)); }
# across the wire: the requester an agent on B, its WRs through XDP and
# AF_XDP into A's ODP memory
for t in untouched munmap implicit rereg; do
	if vt_across "$NS_A" "$prog" "$devA" "$gidA" "$t"; then
		:
	else
		echo "FAIL odp $t across the wire" >&2
		errors=$((errors + 1))
	fi
done
[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
