#!/usr/bin/env bash
# A 4096-byte path MTU on a jumbo-frame veth (MTU 9000): the port reports
# active_mtu 4096, and RC traffic whose packets do not fit one 4096-byte
# AF_XDP frame (multi-buffer AF_XDP, an xdp.frags classifier) arrives whole:
# rc_ops' every operation and size checked byte for byte; RC, UC and UD
# streams (wirecheck) of every operation, sizes around and far past the
# MTU (UD up to 4096, one packet), every byte checked at the receiver; the
# stock ibv_rc_pingpong around the MTU, perftest bandwidth at 4096, and
# badwire.sh (loss, duplication, reordering; a capture tshark decodes) at
# MTU 9000.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong ib_write_bw ibv_devinfo
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
export NETNS_MTU=9000
# the same hosts setup as the other RC tests, on jumbo veths
"$root/tests/rc/rc_ops.sh" basic >"$tmp/rc_ops" 2>&1
rc=$?
cat "$tmp/rc_ops"
[ $rc = 0 ] || fail "rc_ops at MTU 9000: exit $rc"
grep -q "^rc_ops client: .*, MTU 4096," "$tmp/rc_ops" ||
	fail "rc_ops did not run at a 4096-byte MTU"
# checked streams, on hosts of our own
. "$root/tests/lib/rxdp.sh"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
verbs "$NS_A" ibv_devinfo -d "$devA" | grep -q "active_mtu:.*4096 " ||
	fail "$devA: active_mtu is not 4096"
WK_DIR=$tmp
streams=(
	"-t rc -o all -s 0-70000 -n 300 --sge 3"
	"-t uc -o all -s 0-20000 -n 300"
	"-t ud -o all -s 0-4096 -n 300 --sge 2"
)
wirecheck_each 18600 "${streams[@]}"
RXDP_PERFTEST_MTU=4096 "$root/tests/rc/perftest.sh" rc_pingpong \
	rc_pingpong_mtu write_bw read_bw send_bw || fail "perftest at MTU 4096"
# through loss, duplication and reordering, two-descriptor frames and all
"$root/tests/rc/badwire.sh" || fail "badwire at MTU 9000"
echo "PASS: RC at a 4096-byte path MTU over jumbo frames"
