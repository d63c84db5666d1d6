#!/usr/bin/env bash
# A 4096-byte path MTU on a jumbo-frame veth (MTU 9000): the port reports
# active_mtu 4096, and RC traffic whose packets do not fit one 4096-byte
# AF_XDP frame (multi-buffer AF_XDP, an xdp.frags classifier) arrives whole:
# rc_ops' every operation and size checked byte for byte, ibv_rc_pingpong
# with validation around the MTU, perftest bandwidth at 4096, and badwire.sh
# (loss, duplication, reordering; a capture tshark decodes) at MTU 9000.
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
RXDP_PERFTEST_MTU=4096 "$root/tests/rc/perftest.sh" rc_pingpong \
	rc_pingpong_mtu write_bw read_bw send_bw || fail "perftest at MTU 4096"
# through loss, duplication and reordering, two-descriptor frames and all
"$root/tests/rc/badwire.sh" || fail "badwire at MTU 9000"
echo "PASS: RC at a 4096-byte path MTU over jumbo frames"
