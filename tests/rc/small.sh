#!/usr/bin/env bash
# Payload costs rxdpd no system call into the owner's memory. Registered
# memory is shared with rxdpd (userspace/verbs/regmem.c): no message
# costs one. Memory that is not shared (RXDP_SHARE_MEM=0 here, as memory
# the library cannot re-back) still costs none for small messages
# (common/hca.h): the library gathers a Send or Write of at most 64 bytes
# into the WQE when it is posted, and ibv_poll_cq scatters a received
# one-packet Send of at most 96 bytes (GRH included on UD) from the CQE's
# data slot. Counted with strace on both rxdpds while pingpongs that check
# every byte (-c) run; a larger message in memory that is not shared,
# which rxdpd must read and write itself, shows the count works.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong ibv_ud_pingpong strace

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

# count SHARE TOOL ARGS...: pingpong TOOL between the hosts under strace
# (RXDP_SHARE_MEM=SHARE); prints the pread64 and pwrite64 calls the two
# rxdpds made meanwhile
count() {
	local share=$1 tool=$2 n=0 sp=() out
	shift 2
	for p in $daemons; do
		strace -f -qq -c -e trace=pread64,pwrite64 -p "$p" \
			-o "$tmp/st.$p.$n" 2>/dev/null &
		sp+=($!)
		n=$((n + 1))
	done
	sleep 0.5 # attached
	verbs "$NS_B" env RXDP_SHARE_MEM="$share" "$tool" -d "$devB" -g "$gidB" "$@" >"$tmp/srv" 2>&1 &
	local s=$!
	wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':18515 '"
	verbs "$NS_A" env RXDP_SHARE_MEM="$share" "$tool" -d "$devA" -g "$gidA" "$@" "$ADDR_B" >"$tmp/cli" 2>&1 &&
		wait $s && grep -q "iters in" "$tmp/cli" ||
		{ echo "FAIL $tool $*: $(tail -n 2 "$tmp/srv" "$tmp/cli")" >&2; errors=$((errors + 1)); }
	kill -INT "${sp[@]}" 2>/dev/null
	wait "${sp[@]}" 2>/dev/null
	out=$(cat "$tmp"/st.* | awk '$NF == "pread64" {r += $4} $NF == "pwrite64" {w += $4}
		END {print r + 0, w + 0}')
	rm -f "$tmp"/st.*
	echo "$out"
}

check() { # check WHAT EXPECT_READS_MIN EXPECT_READS_MAX WRITES_MIN WRITES_MAX -- TOOL ARGS
	local what=$1 rmin=$2 rmax=$3 wmin=$4 wmax=$5 r w
	shift 6
	read -r r w < <(count "$@")
	if [ "$r" -ge "$rmin" ] && [ "$r" -le "$rmax" ] && [ "$w" -ge "$wmin" ] && [ "$w" -le "$wmax" ]; then
		echo "ok   $what: $r reads, $w writes of owner memory"
	else
		echo "FAIL $what: $r reads, $w writes of owner memory (expected $rmin-$rmax, $wmin-$wmax)" >&2
		errors=$((errors + 1))
	fi
}

n=300
# rxdpd reads a message it sends (n pings, n pongs) from its owner, and
# again each time it resends a packet: strace stops the daemons at every
# call it counts, so their round trips reach milliseconds, past the
# transport's adaptive retransmission timeout (userspace/engine/README.md),
# and a few percent are resent (they are duplicates at the receiver: never
# written twice). Reads: up to one more for a quarter of the messages.
rmax=$((n * 2 + n / 2))
check "RC 64 B, not shared: gathered and scattered" 0 5 0 5 -- 0 ibv_rc_pingpong -c -n $n -s 64
check "RC 96 B, not shared: read by rxdpd, scattered" $n $rmax 0 5 -- 0 ibv_rc_pingpong -c -n $n -s 96
check "UD 56 B, not shared: GRH and payload scattered" 0 5 0 5 -- 0 ibv_ud_pingpong -c -n $n -s 56
check "RC 200 B, not shared: read and written by rxdpd" $n $rmax $n $((n * 2 + 10)) -- 0 ibv_rc_pingpong -c -n $n -s 200
check "RC 200 B, shared" 0 0 0 0 -- 1 ibv_rc_pingpong -c -n $n -s 200
check "RC 64 KiB, shared" 0 0 0 0 -- 1 ibv_rc_pingpong -c -n 50 -s 65536
check "UD 1024 B, shared" 0 0 0 0 -- 1 ibv_ud_pingpong -c -n $n -s 1024
[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
