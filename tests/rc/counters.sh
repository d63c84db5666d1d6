#!/usr/bin/env bash
# The transport's counters, named as Soft-RoCE's hw_counters, through
# rxdp-ctl (text and --json) while an ib_write_bw pair runs (what each
# counter counts is checked in the engine's tests, test_rc):
#  - every name rxe has, per device and per QP, valid JSON
#  - a running RC QP's own counters moved (sent_pkts, rcvd_pkts,
#    rdma_sends, sent_bytes), and its device's counted them too
#  - another user reads the device's counters, but not a QP's of root's
#    (null: rxdpd does not tell whether it exists)
#  - the stream's receiver coalesced (rx_coalesced), its sender did not;
#    the sender's data-path thread went SCHED_OTHER for the stream (it
#    spins there), and both sides' slept between packets (datapath_sleeps:
#    tests/rc/poll.sh has it 0 with --poll)
#  - a stream looped back on one device keeps its thread SCHED_FIFO
#  - link_downed counts the port going down
#  - rxdpd --cc reaches the engine: a QP's DCQCN rate starts at rp_max_rate
#    (rxdp-ctl, and its qp_psn slot through bpftool with the same alpha);
#    --cc-algo gives each device its algorithm (every one's, and one
#    interface's of its own), as rxdp-ctl devices shows it; the sender's QP
#    shows its smoothed RTT
#  - each AF_XDP socket's mode, copy mode on veth (no zero-copy there:
#    tests/vm/zerocopy.sh has it), as rxdp-ctl devices (text and --json)
#    and rxdp-loader status (the kernel's sock_diag) show it
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw setpriv python3 timeout bpftool
tmp=$(mktemp -d)
chmod 755 "$tmp"
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
# DCQCN's rate starts at rp_max_rate where set (rxdpd --cc): a QP's rate
# says the option reached the engine (above veth's 10 Gbit/s, never paced:
# B, the sender, has the algorithm off; A, the receiver, sends no request
# whose RTT the delay algorithm would take)
RXDPD_ARGS="--cc rp_max_rate=123456 --cc-algo delay,$IF_B=off" rxdp_hosts "$tmp"
ctl() { ip netns exec "$1" "${@:3}" "$RXDP_BIN/rxdp-ctl" --json "$2"; }

names='sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_rnr_err
send_rnr_err rcvd_seq_err ack_deferred retry_exceeded_err
retry_rnr_exceeded_err completer_retry_err send_err link_downed rdma_sends
rdma_recvs sent_bytes rcvd_bytes payload_syscalls payload_syscall_bytes
payload_direct_bytes out_of_buffer rx_handoffs rx_coalesced datapath_sleeps
retransmitted_pkts np_ecn_marked_roce_packets np_cnp_sent rp_cnp_handled
rp_cnp_ignored np_rx_congested_packets held_requests sr_resent_pkts
rx_handoff_runs'

# A stream that lasts while the counters are read
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -D 6 -p 19300 >"$tmp/srv" 2>&1 &
srv=$!
on_exit "kill $srv 2>/dev/null"
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':19300 '" ||
	fail "ib_write_bw server does not listen"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -D 6 -p 19300 "$ADDR_A" \
	>"$tmp/cli" 2>&1 &
cli=$!
on_exit "kill $cli 2>/dev/null"
# the scheduling class (ps: FF for SCHED_FIFO, TS) of each data-path
# thread of the rxdpd in netns $1 (a device of one queue has two engines)
dp_class() {
	for p in $(ip netns pids "$1"); do
		ps -L -o comm=,cls= -p "$p" | awk '$1 == "rxdp-datapath" { print $2 }'
	done
}
# the stream runs: the sender's thread leaves FIFO for it
wait_until 20 bash -c "[ \"\$(ip netns exec $NS_B $RXDP_BIN/rxdp-ctl counters | awk '\$1 == \"rdma_sends\" {print \$2}')\" -gt 1000 ]" ||
	fail "the stream does not run"
other_b=0
wait_until 3 bash -c "$(declare -f dp_class); dp_class $NS_B | grep -qx TS" && other_b=1
ctl "$NS_B" all >"$tmp/b.json" || fail "rxdp-ctl --json all"
# the same QP's rate and alpha in its qp_psn slot, through bpftool (key:
# the QPN's index bits, little-endian)
qpn=$(python3 -c 'import json, sys
print([q["qpn"] for q in json.load(open(sys.argv[1]))["qps"]
       if q["type"] == "RC" and q["state"] == "RTS"][0])' "$tmp/b.json") ||
	fail "no RC QP in RTS"
idx=$((qpn & ((1 << 14) - 1))) # RXDP_QP_INDEX_BITS (include/rxdp/params.h)
# shellcheck disable=SC2046 # four bytes, four words
bpftool -j map lookup pinned "$(rxdp_pin_dir "$NS_B" "$IF_B")/qp_psn" \
	key $((idx & 255)) $((idx >> 8 & 255)) 0 0 >"$tmp/slot.json" ||
	fail "bpftool: no qp_psn slot for QP $qpn"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" counters >"$tmp/b.txt" ||
	fail "rxdp-ctl counters"
ctl "$NS_B" counters setpriv --reuid=65534 --regid=65534 --clear-groups \
	>"$tmp/b-nobody.json" ||
	fail "rxdp-ctl --json counters as another user"
wait $cli || fail "ib_write_bw client"
wait $srv || fail "ib_write_bw server"
ctl "$NS_B" counters >"$tmp/b-after.json" || fail "rxdp-ctl --json counters"
# a deep stream of 64 KiB writes (128 in flight) asks for few ACKs: its
# receiver sleeps on its coalescing timer, its sender never does
co_a=$(rxdp_counter "$NS_A" rx_coalesced)
co_b=$(rxdp_counter "$NS_B" rx_coalesced)
[ "${co_a:-0}" -gt 0 ] && [ "$co_b" = 0 ] ||
	fail "rx_coalesced: receiver ${co_a:-none}, sender ${co_b:-none}"
echo "ok   the stream's receiver coalesced ($co_a sleeps), its sender did not"
# the sender spins through the stream as SCHED_OTHER (under FIFO it would
# starve the applications of its core)
[ $other_b = 1 ] || fail "during the stream the sender's data-path thread never ran SCHED_OTHER"
echo "ok   the sender's data-path thread ran SCHED_OTHER in the stream"
# without --poll, a data-path thread sleeps when it runs out of work
sl_a=$(rxdp_counter "$NS_A" datapath_sleeps)
sl_b=$(rxdp_counter "$NS_B" datapath_sleeps)
[ "${sl_a:-0}" -gt 0 ] && [ "${sl_b:-0}" -gt 0 ] ||
	fail "datapath_sleeps: A ${sl_a:-none}, B ${sl_b:-none}"
echo "ok   both sides' data-path threads slept for work ($sl_a, $sl_b times)"

python3 - "$tmp/b.json" "$tmp/b-nobody.json" "$tmp/b-after.json" "$names" \
	"$tmp/slot.json" <<'EOF' || fail "counters"
import json, sys
d = json.load(open(sys.argv[1]))
other = json.load(open(sys.argv[2]))
after = json.load(open(sys.argv[3]))["devices"][0]["counters"]
names = sys.argv[4].split()
slot = json.load(open(sys.argv[5]))["formatted"]["value"]
dev = d["devices"][0]
assert list(dev["counters"]) == names, dev["counters"]
rc = [q for q in d["qps"] if q["type"] == "RC" and q["state"] == "RTS"]
assert rc, "no RC QP in RTS: %s" % d["qps"]
assert rc[0]["rate_kbps"] == 123456000, rc[0]["rate_kbps"]
# bpftool reads the rate and alpha rxdp-ctl shows
assert slot["qpn"] == rc[0]["qpn"], slot
assert slot["cc_rate_kbps"] == 123456000, slot
assert slot["cc_alpha"] == rc[0]["alpha"], (slot, rc[0]["alpha"])
print("ok   bpftool: QP %d's qp_psn slot has its rate (%d kbit/s) and alpha "
      "(%d)" % (slot["qpn"], slot["cc_rate_kbps"], slot["cc_alpha"]))
assert 0 < rc[0]["srtt_us"] < 1000000, rc[0]["srtt_us"]
assert dev["cc_algo"] == "off", dev["cc_algo"]
q = rc[0]["counters"]
assert list(q) == names, q
for n in ("sent_pkts", "rcvd_pkts", "rdma_sends", "sent_bytes"):
    assert q[n] > 0, "QP %s: %d" % (n, q[n])
    assert after[n] >= q[n], n
assert other["devices"][0]["counters"]["sent_pkts"] > 0
# registered memory is shared with rxdpd: the payload costs no system call
c = dev["counters"]
assert c["payload_syscalls"] == 0 and c["payload_syscall_bytes"] == 0, c
assert c["payload_direct_bytes"] >= c["sent_bytes"] > 0, c
assert all(x["counters"] is None for x in other["qps"]), other["qps"]
print("ok   %d counters per device and per QP; the QP sent %d packets "
      "(%d bytes), its device %d" % (len(names), q["sent_pkts"],
      q["sent_bytes"], after["sent_pkts"]))
print("ok   another user reads the device's counters, not root's QPs'")
EOF
grep -q '^  rdma_sends  *[1-9]' "$tmp/b.txt" || fail "rxdp-ctl counters (text)"

# the data path's sockets: copy mode, every one, seen by rxdpd and by the
# kernel
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" devices >"$tmp/devs" ||
	fail "rxdp-ctl devices"
grep -qx "    congestion control off" "$tmp/devs" ||
	fail "rxdp-ctl devices: B's algorithm is not off (--cc-algo $IF_B=off): $(cat "$tmp/devs")"
ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" devices | grep -qx "    congestion control delay" ||
	fail "rxdp-ctl devices: A's algorithm is not --cc-algo's delay"
echo "ok   --cc-algo: A delay (every interface's), B off (its own)"
ip netns exec "$NS_B" "$RXDP_BIN/rxdp-loader" status "$IF_B" >"$tmp/status" ||
	fail "rxdp-loader status"
grep -E "AF_XDP|^xsks|^  queue" "$tmp/devs" "$tmp/status"
n=$(grep -c "^    AF_XDP socket of queue [0-9]*: " "$tmp/devs")
[ "$n" -ge 1 ] && grep -qx "    AF_XDP socket of queue 0: copy mode\(, multi-buffer\)\?" "$tmp/devs" ||
	fail "rxdp-ctl devices: no copy-mode socket of queue 0: $(cat "$tmp/devs")"
[ "$(grep -c "^    AF_XDP socket of queue [0-9]*: copy mode" "$tmp/devs")" = "$n" ] ||
	fail "rxdp-ctl devices: a socket not in copy mode: $(cat "$tmp/devs")"
# the kernel's list (sock_diag), or rxdpd's where the kernel has none
# (CONFIG_XDP_SOCKETS_DIAG off, as on the 2-core VM's kernel)
grep -qx "xsks: $n\( (as rxdpd bound them; .*)\)\?" "$tmp/status" ||
	fail "rxdp-loader status lists other than the $n sockets: $(cat "$tmp/status")"
[ "$(grep -cE "^  queue [0-9]+ copy \((socket inode [0-9]+, UMEM [0-9]+ of 4096-byte frames|multi-buffer|one frame a packet)\)$" \
	"$tmp/status")" = "$n" ] ||
	fail "rxdp-loader status: not $n copy-mode sockets: $(cat "$tmp/status")"
python3 - "$tmp/b.json" "$n" <<'EOF2' || fail "rxdp-ctl --json: xsks"
import json, sys
x = json.load(open(sys.argv[1]))["devices"][0]["xsks"]
assert len(x) == int(sys.argv[2]), x
assert [s["queue"] for s in x] == list(range(len(x))), x
assert all(s["mode"] == "copy" for s in x), x
print("ok   %d AF_XDP socket(s) in copy mode (rxdp-ctl, --json, rxdp-loader "
      "status)" % len(x))
EOF2

# a stream looped back on one device (another QP of A's) keeps A's thread
# FIFO: no other host pays for its wake-ups, and out of FIFO beside the
# applications that spin it starved (engine.c, eng_stream_check)
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -s 4096 -t 8 -D 4 -p 19301 \
	>"$tmp/lsrv" 2>&1 &
lsrv=$!
on_exit "kill $lsrv 2>/dev/null"
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':19301 '" ||
	fail "loopback ib_write_bw server does not listen"
sends0=$(rxdp_counter "$NS_A" rdma_sends)
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -s 4096 -t 8 -D 4 -p 19301 \
	"$ADDR_A" >"$tmp/lcli" 2>&1 &
lcli=$!
on_exit "kill $lcli 2>/dev/null"
classes=""
for _ in $(seq 20); do
	sleep 0.2
	classes+=" $(dp_class "$NS_A")"
done
wait $lcli || fail "loopback ib_write_bw client"
wait $lsrv || fail "loopback ib_write_bw server"
sends=$(($(rxdp_counter "$NS_A" rdma_sends) - sends0))
[ "$sends" -gt 10000 ] || fail "the loopback stream wrote only $sends times"
case "$classes" in
*TS*) fail "a loopback stream took A's data-path thread out of FIFO:$classes" ;;
*FF*) ;;
*) fail "no class of A's data-path thread seen:$classes" ;;
esac
echo "ok   a loopback stream ($sends writes) kept its thread SCHED_FIFO"

ip -n "$NS_A" link set "$IF_A" down
link_downed_is() { [ "$(rxdp_counter "$NS_A" link_downed)" = "$1" ]; }
wait_until 5 link_downed_is 1 || fail "link_downed is not 1 after the port went down"
ip -n "$NS_A" link set "$IF_A" up
echo "ok   link_downed counts the port going down"
echo PASS
