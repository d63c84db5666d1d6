#!/usr/bin/env bash
# A hostile host on the segment. Hosts A and B run rxdp; C, the attacker,
# hangs off the same bridge:
#
#   A [IF_A] --+
#   B [IF_B] --+-- bridge in S
#   C [IF_C] --+
#
# B's victim QP (sec_peer server) is connected to A's. C knows, as root on
# the hosts tells it, the QP's number, its expected PSN, the R_Key and the
# buffer's address, and sends RDMA Writes (valid ICRC, scapy) to it:
#  1. from its own address and MAC, and from A's address with its own MAC:
#     none is redirected to rxdpd; each is counted under drop_bad_source in
#     B's XDP program (rxdp-loader status, and bpftool on the pinned map);
#  2. a sweep of 4096 PSNs around the expected one: the same, and B's epsn
#     (qp_psn, rxdp-ctl qps) has not moved;
#  3. while it floods forged writes (from before A starts until after B is
#     done), A's real transfer (RDMA Writes, a Send) completes, and B finds
#     A's bytes exactly and the part the attacker aimed at untouched
#     (sec_peer checks).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
. "$root/tests/lib/capture.sh"

require_root
require_cmd bpftool tcpdump timeout
/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null || skip "needs python3-scapy"
peer=$root/build/tests/security/sec_peer
forge=$root/tests/security/forge.py
[ -x "$peer" ] || fail "$peer not built (make test)"

id=$RXDP_TEST_ID
NS_A=rxa$id NS_B=rxb$id NS_C=rxc$id NS_S=rxs$id
IF_A=rxva$id IF_B=rxvb$id IF_C=rxvc$id BR=rxbr$id
hi=$(((id >> 8) & 255)) lo=$((id & 255))
ADDR_A=198.18.$hi.$lo ADDR_B=198.19.$hi.$lo ADDR_C=198.18.$((hi ^ 128)).$lo
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
for ns in $NS_A $NS_B $NS_C $NS_S; do netns_add "$ns"; done
ip -n "$NS_S" link add "$BR" type bridge || fail "bridge"
for h in A B C; do
	ns=NS_$h ifn=IF_$h addr=ADDR_$h
	ip link add "${!ifn}" netns "${!ns}" type veth peer name "rxp$h$id" \
		netns "$NS_S" || fail "veth $h"
	ip -n "$NS_S" link set "rxp$h$id" master "$BR"
	ip -n "$NS_S" link set "rxp$h$id" up
	ip netns exec "${!ns}" sysctl -qw "net.ipv6.conf.${!ifn}.disable_ipv6=1"
	ip -n "${!ns}" addr add "${!addr}/15" dev "${!ifn}"
	ip -n "${!ns}" link set "${!ifn}" up
done
ip -n "$NS_S" link set "$BR" up
mac_of() { ip -n "$1" -br link show "$2" | awk '{print $3}'; }
MAC_A=$(mac_of "$NS_A" "$IF_A") MAC_B=$(mac_of "$NS_B" "$IF_B")
MAC_C=$(mac_of "$NS_C" "$IF_C")

RXDP_VERBS_TIMEOUT=300 # the victim waits while the attacker works
rxdp_hosts "$tmp"
PIN_B=$(rxdp_pin_dir "$NS_B" "$IF_B")

# B's verdict counter NAME (rxdp-loader status)
verdict() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-loader" status "$IF_B" |
		awk -v n="$1" '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v && $1 == n {print $2}'
}
# the same counter through bpftool: the stats map, key = its index
bpftool_verdict() {
	local idx
	idx=$(awk -v n="RXDP_V_$(tr a-z A-Z <<<"$1")" '
		/^enum rxdp_verdict/ {e = 1; next}
		e && $1 ~ /^RXDP_V_/ {sub(/,$/, "", $1); if ($1 == n) {print i; exit} i++}' \
		"$root/include/rxdp/maps.h")
	[ -n "$idx" ] || fail "no verdict $1 in maps.h"
	bpftool -j map lookup pinned "$PIN_B/stats" key "$idx" 0 0 0 |
		/usr/bin/python3 -c 'import json,sys
e = json.load(sys.stdin)
vals = e.get("formatted", e)["values"]
print(sum(int(v["value"]) if not isinstance(v["value"], list)
          else int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
          for v in vals))'
}
# B's QP's expected PSN as the XDP program keeps it (rxdp-ctl qps, as root)
epsn_of() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" qps |
		awk -v q="$(printf '%#x' "$1")" '$2 == q {print $8}'
}

# --- the victim and its real peer ---------------------------------------------
verbs "$NS_B" "$peer" -d "$devB" -g "$gidB" server 18600 >"$tmp/b.out" 2>&1 &
srv=$!
verbs "$NS_A" "$peer" -d "$devA" -g "$gidA" -w "$tmp/go" client "$ADDR_B" 18600 \
	>"$tmp/a.out" 2>&1 &
cli=$!
on_exit "kill $srv $cli 2>/dev/null"
wait_until 30 grep -qs "^qpn " "$tmp/b.out" ||
	fail "the victim did not connect: $(cat "$tmp/b.out" "$tmp/a.out")"
read -r _ QPN _ RKEY _ VA <"$tmp/b.out"
TARGET=$((VA + 32768)) # the half of the MR that must stay untouched
EPSN=$(epsn_of "$QPN")
[ -n "$EPSN" ] || fail "no QP $QPN in B's rxdp-ctl qps"
echo "victim: QP $QPN, R_Key $RKEY, buffer $VA, expected PSN $EPSN"

attack() { # attack SRC-MAC SRC-IP [forge.py options...]: frames sent
	ip netns exec "$NS_C" /usr/bin/python3 "$forge" "$IF_C" --src-mac "$1" \
		--src-ip "$2" --dst-mac "$MAC_B" --dst-ip "$ADDR_B" --qpn "$QPN" \
		--psn "$EPSN" --rkey "$RKEY" --va "$TARGET" "${@:3}"
}
snapshot() { # every verdict of B's XDP program, NAME VALUE
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-loader" status "$IF_B" |
		awk '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v {print $1, $2}'
}
# check_window BEFORE-FILE WHAT: since the snapshot, nothing reached B but
# the attacker's frames, all dropped as drop_bad_source; sets $dropped
check_window() {
	local k v b
	declare -A before
	while read -r k v; do before[$k]=$v; done <"$1"
	dropped=0
	while read -r k v; do
		b=${before[$k]:-0}
		case $k in
		drop_bad_source) dropped=$((v - b)) ;;
		pass_not_roce) ;; # ARP and the like
		*) [ "$v" = "$b" ] || fail "$2: $k moved by $((v - b))" ;;
		esac
	done < <(snapshot)
}

# 1. forged writes, wrong source; the frames checked as valid RoCEv2
snapshot >"$tmp/v0"
# (wait_for_drops N: until B's XDP program has dropped N more as
# drop_bad_source than at snapshot FILE $2)
wait_for_drops() {
	local b
	b=$(awk '$1 == "drop_bad_source" {print $2}' "$2")
	wait_until 10 bash -c "[ \"\$(ip netns exec $NS_B $RXDP_BIN/rxdp-loader status $IF_B |
		awk '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v && \$1 == \"drop_bad_source\" {print \$2}')\" -ge $((b + $1)) ]"
}
capture_start "$NS_C" "$IF_C" "$tmp/forged.pcap" 0
n1=$(attack "$MAC_C" "$ADDR_C" --len 1024) || fail "forge.py"
n2=$(attack "$MAC_C" "$ADDR_A" --len 1024) || fail "forge.py"
wait_for_drops $((n1 + n2)) "$tmp/v0"
capture_stop
check_window "$tmp/v0" "forged writes"
echo "forged writes from $ADDR_C and from $ADDR_A with $MAC_C: $((n1 + n2)) sent, $dropped dropped as drop_bad_source"
[ "$dropped" = $((n1 + n2)) ] || fail "drop_bad_source counted $dropped of $((n1 + n2))"
icrc=$(/usr/bin/python3 "$root/tests/rc/icrc_check.py" "$tmp/forged.pcap") ||
	fail "the forged frames have bad ICRCs: $icrc"
echo "forged frames as captured: $icrc"
[ "$(bpftool_verdict drop_bad_source)" = "$(verdict drop_bad_source)" ] ||
	fail "bpftool and rxdp-loader disagree on drop_bad_source"

# 2. a PSN sweep around the expected PSN, from both forged sources
snapshot >"$tmp/v1"
n3=$(attack "$MAC_C" "$ADDR_C" --sweep 2048) || fail "forge.py"
n4=$(attack "$MAC_C" "$ADDR_A" --sweep 2048) || fail "forge.py"
wait_for_drops $((n3 + n4)) "$tmp/v1"
check_window "$tmp/v1" "PSN sweep"
echo "PSN sweep of $((n3 + n4)) frames: $dropped dropped as drop_bad_source"
[ "$dropped" = $((n3 + n4)) ] || fail "the sweep: $dropped of $((n3 + n4)) dropped as drop_bad_source"
now=$(epsn_of "$QPN")
[ "$now" = "$EPSN" ] || fail "the sweep moved B's epsn from $EPSN to $now"
echo "B's expected PSN still $now"

# 3. the real transfer while the attacker floods (from when its frames
# arrive until the victim is done)
d0=$(verdict drop_bad_source)
touch "$tmp/flood"
attack "$MAC_C" "$ADDR_A" --sweep 64 --while "$tmp/flood" >/dev/null &
flood=$!
on_exit "rm -f '$tmp/flood'; wait $flood"
flooding() { [ "$(verdict drop_bad_source)" -gt "$d0" ]; }
wait_until 30 flooding || fail "the flood does not arrive: $(snapshot | tr "\n" " ")"
touch "$tmp/go"
wait $cli || fail "the real peer failed: $(cat "$tmp/a.out")"
wait $srv || fail "the victim failed: $(cat "$tmp/b.out")"
rm "$tmp/flood"
wait $flood
echo "the flood around the transfer: $(($(verdict drop_bad_source) - d0)) forged writes dropped as drop_bad_source"
grep '^ok' "$tmp/b.out"
echo "PASS: forged writes and PSN sweeps from another source land nowhere; the real transfer does"
