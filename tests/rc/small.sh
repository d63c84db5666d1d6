#!/usr/bin/env bash
# Payload costs rxdpd no system call into the owner's memory. Registered
# memory is shared with rxdpd (userspace/verbs/regmem.c): no message
# costs one. Memory that is not shared (RXDP_SHARE_MEM=0 here, as memory
# the library cannot re-back) still costs none for small messages
# (common/hca.h): the library gathers a Send or Write of at most 64 bytes
# into the WQE when it is posted, and ibv_poll_cq scatters a received
# one-packet Send of at most 96 bytes (GRH included on UD) from the CQE's
# data slot. Counted with strace on both rxdpds while checked streams run
# (wirecheck, every byte checked at the receiver); a larger message in
# memory that is not shared, which rxdpd must read and write itself, shows
# the count works; every thread of both rxdpds is traced before a stream
# starts, and the sender's sendto() calls (its packets) show its trace saw
# the stream.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd strace

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
errors=0
daemons=$(for ns in "$NS_A" "$NS_B"; do
	for p in $(ip netns pids "$ns"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = rxdpd ] && echo "$p"
	done
done)
[ "$(echo "$daemons" | wc -w)" = 2 ] || fail "rxdpd of $NS_A and $NS_B not found"

# traced PID: every thread of PID is traced (strace -f has attached)
traced() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(sed -n 's/^TracerPid:\s*//p' "$t/status")" != 0 ] || return 1
	done
}
WK_DIR=$tmp
# count SHARE ARGS...: a checked stream ARGS (wirecheck's) from A to B
# under strace (RXDP_SHARE_MEM=SHARE both sides); prints the pread64 and
# pwrite64 calls the two rxdpds made meanwhile and the packets A sent
# again, or "none" if the sender's trace did not see it send (a trace that
# was not there counts nothing)
count() {
	local share=$1 n=0 sp=() out retx
	shift
	retx=$(rxdp_counter "$NS_A" retransmitted_pkts)
	for p in $daemons; do
		strace -f -qq -c -e trace=pread64,pwrite64,sendto -p "$p" \
			-o "$tmp/st.$p" 2>"$tmp/strace.$p.err" &
		sp+=($!)
		wait_until 10 traced "$p" || echo "FAIL strace did not attach to $p: $(cat "$tmp/strace.$p.err")" >&2
	done
	WK_TWRAP="env RXDP_SHARE_MEM=$share" WK_CWRAP="env RXDP_SHARE_MEM=$share" \
		wirecheck_run small 18515 "$@" >/dev/null ||
		{ echo "FAIL wirecheck $*" >&2; errors=$((errors + 1)); }
	kill -INT "${sp[@]}" 2>/dev/null
	wait "${sp[@]}" 2>/dev/null
	awk '$NF == "sendto" {s = $4} END {exit !(s > 0)}' "$tmp/st.$(rxdpd_pid "$NS_A")" ||
		out=none
	retx=$(($(rxdp_counter "$NS_A" retransmitted_pkts) - retx))
	[ -n "${out:-}" ] || out=$(cat "$tmp"/st.* | awk -v x="$retx" '$NF == "pread64" {r += $4} $NF == "pwrite64" {w += $4}
		END {print r + 0, w + 0, x}')
	rm -f "$tmp"/st.*
	echo "$out"
}

# check WHAT READS WRITES -- SHARE ARGS: READS the reads of owner memory
# the messages take, 0 or at least one each (a packet sent again, or one
# whose sending was put off, is read again: the control cases read at
# least once a message, they need no upper bound); WRITES the writes,
# exactly (a duplicate is never written twice)
check() {
	local what=$1 reads=$2 writes=$3 r w x
	shift 4
	read -r r w x < <(count "$@")
	if [ "$r" = none ]; then
		echo "FAIL $what: the sending rxdpd's trace saw it send nothing" >&2
		errors=$((errors + 1))
	elif { [ "$reads" = 0 ] && [ "$r" = 0 ] || [ "$reads" -gt 0 ] && [ "$r" -ge "$reads" ]; } &&
		[ "$w" = "$writes" ]; then
		echo "ok   $what: $r reads ($x packets sent again), $w writes of owner memory"
	else
		echo "FAIL $what: $r reads, $w writes of owner memory, $x packets sent again (expected $([ "$reads" = 0 ] && echo 0 || echo "$reads or more") reads, $writes writes)" >&2
		errors=$((errors + 1))
	fi
}

n=300
# rxdpd reads a message it sends (n, A to B) from its owner, and again each
# time it resends a packet: strace stops the daemons at every call it
# counts, so their round trips reach milliseconds, past the transport's
# adaptive retransmission timeout (userspace/engine/README.md), and a few
# percent are resent (duplicates at the receiver: never written twice)
check "RC 64 B, not shared: gathered and scattered" 0 0 -- 0 -t rc -n $n -s 64
check "RC 96 B, not shared: read by rxdpd, scattered" $n 0 -- 0 -t rc -n $n -s 96
check "UD 56 B, not shared: GRH and payload scattered" 0 0 -- 0 -t ud -n $n -s 56
check "RC 200 B, not shared: read and written by rxdpd" $n $n -- 0 -t rc -n $n -s 200
check "RC 200 B, shared" 0 0 -- 1 -t rc -n $n -s 200
check "RC 64 KiB, shared" 0 0 -- 1 -t rc -n 50 -s 65536
check "UD 1024 B, shared" 0 0 -- 1 -t ud -n $n -s 1024
[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
