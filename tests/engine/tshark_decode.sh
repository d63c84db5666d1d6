#!/usr/bin/env bash
# Wireshark's InfiniBand dissector reads every packet the engine sends: run
# the in-memory-wire RC tests with the wire writing a pcap, then check with
# tshark that each frame dissects as RoCEv2 without error and that every RC
# opcode (and the UC and UD ones the tests use) and the ACK/RNR NAK/NAK
# syndromes appear. No root needed.
#
# The dissectors that guess at what a Send payload carries (RPC over RDMA,
# EoIB, IPoIB, FCoIB, SDP) are turned off: they read the test patterns as
# their protocols and call them malformed. The RoCE headers are all ours.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${RXDP_BUILD:-$here/../../build}/tests/engine/test_rc
command -v tshark >/dev/null || { echo "tshark missing: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pcap=$dir/wire.pcap
for t in test_send_sizes test_write_sizes test_read_sizes test_atomics \
	 test_rnr_exhausted test_access_errors test_recv_too_small test_uc \
	 test_ud test_ipv6_vlan test_atomic_write test_flush \
	 test_cc_notification_point test_sr_burst; do
	RXDP_MEMWIRE_PCAP=$pcap RXDP_TEST_FILTER=$t "$bin" >"$dir/log" 2>&1 ||
		{ cat "$dir/log"; echo "FAIL: $t"; exit 1; }
done
ts() {
	tshark -r "$pcap" --disable-protocol rpcordma \
		--disable-protocol infiniband.eoib --disable-protocol ipoib \
		--disable-protocol fcoib --disable-protocol infiniband_sdp \
		"$@" 2>/dev/null
}
total=$(ts | wc -l)
roce=$(ts -Y infiniband.bth | wc -l)
bad=$(ts -Y '_ws.malformed || _ws.expert.severity >= 6291456' | wc -l)
echo "frames $total, dissected as InfiniBand $roce, with errors $bad"
[ "$total" -gt 1000 ] || { echo "FAIL: too few frames captured"; exit 1; }
[ "$roce" -eq "$total" ] || { echo "FAIL: not all frames are RoCEv2"; exit 1; }
[ "$bad" -eq 0 ] || { ts -Y '_ws.malformed || _ws.expert.severity >= 6291456' | head; exit 1; }
# rxdp's sequence NAKs that say the responder holds what followed (the
# BTH's first reserved bit after AckReq, test_sr_burst): dissected, no error
held=$(ts -Y 'infiniband.bth.reserved7 != 0 && infiniband.aeth.syndrome == 96' | wc -l)
echo "sequence NAKs with ROCE_BTH_RXDP_HELD: $held"
[ "$held" -gt 0 ] || { echo "FAIL: no NAK said it held"; exit 1; }
ops=$(ts -T fields -e infiniband.bth.opcode | sort -nu | tr '\n' ' ')
echo "opcodes: $ops"
# RC 0-20, IBTA 1.5's Flush and Atomic Write (28, 29); UC Send First/
# Middle/Last(+imm)/Only+imm, Write First/Middle/Last/Only (32-35, 37-40,
# 42); UD Send Only with immediate (101). Debian 12's Wireshark (4.0) does
# not know 28 and 29: it names them Unknown and shows their FETH, RETH and
# payload as vendor-specific data, without an error (later releases know
# RC_FLUSH and RC_ATOMIC_WRITE). 129: the CNP (RoCEv2 A17.9.3).
for op in $(seq 0 20) 28 29 32 33 34 35 37 38 39 40 42 101 129; do
	case " $ops " in *" $op "*) ;; *) echo "FAIL: opcode $op never seen"; exit 1 ;; esac
done
# ECN: everything but CNPs ECT(0) (or CE, as the test marked it); CNPs
# DSCP 48, not ECN-capable, as ConnectX sends them
notect=$(ts -Y 'infiniband.bth.opcode != 129 && (ip.dsfield.ecn < 2 || ipv6.tclass.ecn < 2)' | wc -l)
cnps=$(ts -Y 'infiniband.bth.opcode == 129 && ip.dsfield.dscp == 48 && ip.dsfield.ecn == 0' | wc -l)
echo "not ECN-capable: $notect; CNPs: $cnps"
[ "$notect" -eq 0 ] || { echo "FAIL: RoCE frames without ECT(0)"; exit 1; }
[ "$cnps" -gt 0 ] || { echo "FAIL: no CNP as ConnectX sends them"; exit 1; }
v6=$(ts -Y 'vlan.id == 42 && ipv6 && infiniband.bth' | wc -l)
echo "IPv6 in VLAN 42: $v6"
[ "$v6" -gt 100 ] || { echo "FAIL: no IPv6/VLAN RoCEv2 frames"; exit 1; }
# IPv6 carries a real UDP checksum (it covers the ICRC): all good
badsum=$(ts -o udp.check_checksum:TRUE -Y 'ipv6 && udp.checksum.status != 1' | wc -l)
echo "IPv6 frames with a bad UDP checksum: $badsum"
[ "$badsum" -eq 0 ] || { echo "FAIL: bad IPv6 UDP checksums"; exit 1; }
badip=$(ts -o ip.check_checksum:TRUE -Y 'ip && ip.checksum.status != 1' | wc -l)
echo "IPv4 headers with a bad checksum: $badip"
[ "$badip" -eq 0 ] || { echo "FAIL: bad IPv4 header checksums"; exit 1; }
# the dissector does not verify the ICRC: icrc_check.py does, on every
# frame, the IPv6/VLAN ones included
icrc=$(/usr/bin/python3 "$here/../rc/icrc_check.py" "$pcap") ||
	{ echo "$icrc"; echo "FAIL: bad ICRC"; exit 1; }
echo "ICRC: $icrc"
syn=$(ts -T fields -e infiniband.aeth.syndrome | sort -nu | tr '\n' ' ')
echo "AETH syndromes: $syn"
# 31: ACK (no credits), 33: RNR NAK, 97/98: NAK invalid request / access
for s in 31 33 97 98; do
	case " $syn " in *" $s "*) ;; *) echo "FAIL: syndrome $s never seen"; exit 1 ;; esac
done
echo PASS
