#!/usr/bin/env bash
# Many hosts on one switch (tests/lib/netns.sh netns_switch): three senders
# stream to one receiver at once through a switch port with a bounded
# queue (a TBF on the bridge port toward the receiver: 200 Mbit/s, 32 KB),
# which drops what overflows it, as a switch does. Checked streams
# (wirecheck: RC with every operation, UD Sends with --lossy), every byte
# at the receiver; RC must deliver every message through the drops. The
# drops must be real: counted by the port's qdisc, and the senders' rxdpds
# must have resent packets.
#
#   host 2, 3, 4 ---- bridge in R ---- [TBF] ---- host 1 (the receiver)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd tc
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
chmod 755 "$tmp"
n=4
netns_switch $n
tc -n "$NS_R" qdisc add dev "${SW_PORT[1]}" root tbf rate 200mbit burst 16kb limit 32kb ||
	fail "cannot add a TBF to the receiver's port"
dev=() gidx=()
for i in $(seq 1 $n); do
	rxdp_host "${SW_NS[i]}" "${SW_IF[i]}" "$tmp/rxdpd-$i.log"
done
for i in $(seq 1 $n); do
	dev[i]=rxdp_${SW_IF[i]}
	rxdp_wait_port "${SW_NS[i]}" "${dev[i]}"
	gidx[i]=$(rxdp_ipv4_gid "${SW_NS[i]}" "${dev[i]}")
done

# sender i's streams to host 1, all at once: RC (every operation, sizes to
# 64 KiB) and UD
WK_DIR=$tmp WK_TNS=${SW_NS[1]} WK_TDEV=${dev[1]} WK_TGID=${gidx[1]} WK_ADDR=${SW_ADDR[1]}
WK_TIMEOUT=200
for i in $(seq 2 $n); do
	WK_CNS=${SW_NS[i]} WK_CDEV=${dev[i]} WK_CGID=${gidx[i]} \
		wirecheck_bg "rc$i" $((18700 + i)) -t rc -o all -s 0-65536 -n 1000 --seed "$i"
	WK_CNS=${SW_NS[i]} WK_CDEV=${dev[i]} WK_CGID=${gidx[i]} \
		wirecheck_bg "ud$i" $((18710 + i)) -t ud -o all -s 4-1024 -n 2000 --lossy --seed "$i"
done
errors=0
for i in $(seq 2 $n); do
	for s in rc ud; do
		if wirecheck_wait "$s$i"; then
			echo "ok: host $i to host 1, $s"
		else
			echo "FAIL: host $i to host 1, $s" >&2
			errors=$((errors + 1))
		fi
	done
done
drops=$(tc -n "$NS_R" -s qdisc show dev "${SW_PORT[1]}" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
resent=0
for i in $(seq 2 $n); do
	resent=$((resent + $(rxdp_counter "${SW_NS[i]}" retransmitted_pkts)))
done
echo "the receiver's port dropped ${drops:-?} packets; the senders resent $resent"
[ "${drops:-0}" -gt 0 ] || fail "the receiver's port dropped nothing: no incast was tested"
[ "$resent" -gt 0 ] || fail "the senders resent nothing"
[ $errors = 0 ] || fail "$errors streams failed"
echo "PASS: three hosts into one through a dropping switch port, every byte checked"
