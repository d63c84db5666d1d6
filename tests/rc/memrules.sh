#!/usr/bin/env bash
# The rules registered memory keeps now that its pages are shared with
# rxdpd (userspace/verbs/regmem.c), through memrules (a verbs program, RDMA
# Writes between two QPs of one process looped back through rxdpd):
#  - writes by other threads while a region is registered and deregistered
#    are not lost (and, to show the check can fail, they are when the
#    library re-backs without holding writers: RXDP_SHARE_MEM=nowp)
#  - fork(), with and without RDMAV_FORK_SAFE: the child has its own copy,
#    the parent's buffer stays the HCA's
#  - MADV_DONTNEED, munmap and a new mmap over a registered range
#  - deregistration gives back private anonymous memory
#  - an MR over a shared file mapping takes the batched path: counted in
#    payload_syscalls, fewer than one per packet
#  - normal memory costs no payload system call at all
#  - fork, MADV_DONTNEED, munmap and the shared file mapping again with the
#    requester on the other host (an agent: tests/lib/vtest.h), its WRs
#    across the wire, XDP and AF_XDP (A's XDP program redirected them)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
prog=$root/build/tests/rc/memrules
[ -x "$prog" ] || fail "$prog not built"

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
errors=0
run() { # NAME ENV... -- ARGS: memrules in NS_A
	local name=$1
	shift
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	if verbs "$NS_A" env "${env[@]}" "$prog" "$devA" "$gidA" "$@"; then
		:
	else
		echo "FAIL memrules $name" >&2
		errors=$((errors + 1))
	fi
}

syscalls0=$(rxdp_counter "$NS_A" payload_syscalls)
run race -- race
run fork -- fork
run fork-safe RDMAV_FORK_SAFE=1 -- fork
run dontneed -- dontneed
run munmap -- munmap
run private -- private
syscalls1=$(rxdp_counter "$NS_A" payload_syscalls)
if [ "$syscalls1" = "$syscalls0" ]; then
	echo "ok   normal memory: no payload system call"
else
	echo "FAIL normal memory: $((syscalls1 - syscalls0)) payload system calls" >&2
	errors=$((errors + 1))
fi

# the check for lost writes can fail: without the write protection it does
if verbs "$NS_A" env RXDP_SHARE_MEM=nowp "$prog" "$devA" "$gidA" race \
	>"$tmp/nowp" 2>&1; then
	echo "FAIL race without write protection lost nothing: the check cannot fail" >&2
	errors=$((errors + 1))
else
	echo "ok   race without write protection: $(grep -o '[0-9]* of [0-9]* writes lost' "$tmp/nowp")"
fi

# the batched path: 16 writes of 256 KiB (4096 packets at MTU 1024)
bytes0=$(rxdp_counter "$NS_A" payload_syscall_bytes)
run shared -- shared "/dev/shm/memrules.$$"
syscalls2=$(rxdp_counter "$NS_A" payload_syscalls)
bytes1=$(rxdp_counter "$NS_A" payload_syscall_bytes)
calls=$((syscalls2 - syscalls1)) moved=$((bytes1 - bytes0))
if [ "$moved" -ge $((16 * 262144)) ] && [ "$calls" -gt 0 ] && [ "$calls" -lt 4096 ]; then
	echo "ok   shared file mapping: $calls payload system calls for $moved bytes (4096 packets)"
else
	echo "FAIL shared file mapping: $calls payload system calls for $moved bytes (4096 packets)" >&2
	errors=$((errors + 1))
fi

# the same rules across the wire: the requester an agent on B, its WRs
# through XDP and AF_XDP into A's memory
for t in fork dontneed munmap "shared /dev/shm/memrules-wire.$$"; do
	# shellcheck disable=SC2086
	if vt_across "$NS_A" "$prog" "$devA" "$gidA" $t; then
		:
	else
		echo "FAIL memrules ${t%% *} across the wire" >&2
		errors=$((errors + 1))
	fi
done
[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
