#!/usr/bin/env bash
# Many pairs at once, all finishing: 8 `ib_write_bw -D` pairs (64 KiB, one
# QP each) and 8 checked streams (wirecheck for 2 s each: RC, UC and UD,
# every operation, sizes up to 64 KiB, every byte checked at the receiver)
# run together between two rxdp hosts over a veth with 4 queues, MTU 9000;
# then all of it again with a CPU hog (a spinning process) on every CPU.
# Every process must exit 0, every ib_write_bw client report its figure,
# and every stream arrive whole. The devices' counters (retransmissions,
# duplicates, the AF_XDP rings' drops) are printed for whoever reads a
# failure.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
PAIRS=${RXDP_PAIRS:-8}

NETNS_QUEUES=4 NETNS_MTU=9000 NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
rxdp_hosts "$tmp"

counters() {
	for ns in "$NS_A" "$NS_B"; do
		echo "--- counters in $ns (not 0)"
		ip netns exec "$ns" "$RXDP_BIN/rxdp-ctl" counters 2>&1 |
			grep -v ' 0$' | head -n 30
	done
	# frames the veths dropped (their queues full) before any XDP program
	ip -n "$NS_A" -s link show dev "$IF_A" | sed -n '/RX:\|TX:/{n;p}' |
		awk '{print "--- veth in A, RX then TX: packets " $2 ", dropped " $4}'
	ip -n "$NS_B" -s link show dev "$IF_B" | sed -n '/RX:\|TX:/{n;p}' |
		awk '{print "--- veth in B, RX then TX: packets " $2 ", dropped " $4}'
}

listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }

# the checked streams, one per pair (cycled): the servers in A, as
# ib_write_bw's. 16 pairs overrun the receivers' AF_XDP rings at times
# (out_of_buffer): RC recovers every packet, UC and UD lose messages as
# they may (--lossy: counted; what arrives is checked all the same).
streams=(
	"-t rc -o all -s 0-65536"
	"-t uc -o all -s 0-65536 --sge 2 --lossy"
	"-t ud -o all -s 0-4096 --lossy"
	"-t rc -o send,write -s 1-9000 -q 2"
	"-t rc -o read,write_imm -s 1-65536"
	"-t uc -o send,write -s 1-9000 --lossy"
	"-t rc -o send -s 1-65536 --srq -q 2"
	"-t ud -o send -s 1-4096 --sge 3 --lossy"
)
WK_DIR=$tmp
wirecheck_from_b

# round NAME: every pair at once; 0 if all finished
round() {
	local name=$1 pids=() i ok=1 p
	for i in $(seq "$PAIRS"); do
		verbs "$NS_A" ib_write_bw -d "$devA" -x "$gid" -F -s 65536 -D 2 \
			-p $((18600 + i)) --report_gbits >"$tmp/ws$i" 2>&1 &
		pids+=($!)
	done
	# the servers listen on TCP before they make their verbs objects
	for i in $(seq "$PAIRS"); do
		wait_until 10 listening $((18600 + i)) ||
			fail "$name: ib_write_bw server of pair $i did not listen"
	done
	for i in $(seq "$PAIRS"); do
		verbs "$NS_B" ib_write_bw -d "$devB" -x "$gid" -F -s 65536 -D 2 \
			-p $((18600 + i)) --report_gbits "$ADDR_A" >"$tmp/wc$i" 2>&1 &
		pids+=($!)
		# shellcheck disable=SC2086
		wirecheck_bg "s$i" $((18700 + i)) -D 2 ${streams[(i - 1) % ${#streams[@]}]}
	done
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	local sum
	sum=$(awk '/^ *65536 /{s += $4; n++} END {printf "%.2f Gbit/s from %d pairs", s, n}' "$tmp"/wc*)
	echo "$name: ib_write_bw $sum"
	for i in $(seq "$PAIRS"); do
		grep -q '^ *65536 ' "$tmp/wc$i" || { ok=0; echo "ib_write_bw pair $i reported nothing"; }
		wirecheck_wait "s$i" || { ok=0; echo "stream $i (${streams[(i - 1) % ${#streams[@]}]}) failed"; }
	done
	if [ $ok = 0 ]; then
		for f in "$tmp"/w[sc]*; do
			grep -q '^ *65536 ' "$f" && continue
			echo "--- $f"
			tail -n 6 "$f"
		done
		# what the engines said of their QPs (resends, errors)
		for f in "$tmp"/rxdpd-[AB].log; do
			echo "--- ${f##*/}: $(grep -c "resend from" "$f") resends, the last:"
			grep -v "client pid\|context on\|created for\|modified\|destroyed" "$f" |
				tail -n 15
		done
	fi
	counters
	[ $ok = 1 ]
}

round "$PAIRS+$PAIRS pairs" || fail "pairs failed"

hogs=()
for _ in $(seq "$(nproc)"); do
	(while :; do :; done) &
	hogs+=($!)
done
on_exit "kill ${hogs[*]} 2>/dev/null"
round "$PAIRS+$PAIRS pairs, a CPU hog on each of $(nproc) CPUs" ||
	fail "pairs failed beside the CPU hogs"
kill "${hogs[@]}" 2>/dev/null
echo PASS
