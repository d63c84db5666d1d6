#!/usr/bin/env bash
# rdma-core's own test suite (pyverbs, as Debian's python3-pyverbs ships it
# in /usr/share/doc/rdma-core/tests) against rxdp's libibverbs:
#  1. the whole suite on one rxdp host: most tests use two contexts of one
#     device (loopback through rxdpd, off the wire);
#  2. its traffic tests again with their two players on two hosts
#     (pyverbs_across.py: each player on a host of its own, the routes
#     pointed at the other host), so that their data checks (every byte of
#     every message) cross XDP, AF_XDP and the veth; both rxdpds must have
#     sent and received their packets.
# Each passes when nothing errs or fails, the tests of what rxdp offers
# beyond the classic verbs pass (extended QPs and CQs, memory windows,
# on-demand paging: the lists below; the RDMA-CM's on one host), and every
# skip names a feature rxdp does not claim (the allowed reasons below);
# prints the ok/skip counts and the reasons.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
src=/usr/share/doc/rdma-core/tests
[ -f "$src/run_tests.py" ] || skip "needs python3-pyverbs"
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

tmp=$(mktemp -d)
chmod 755 "$tmp"
on_exit "rm -rf '$tmp'"
cp -r "$src" "$tmp/tests"
gunzip -f "$tmp"/tests/*.gz

NETNS_NO_IPV6=1 netns_pair
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd.log"
dev=rxdp_$IF_A
rxdp_wait_port "$NS_A" "$dev"
gid=$(rxdp_ipv4_gid "$NS_A" "$dev")
# The RDMA-CM tests find the device's IP address from its netdev in sysfs
# (/sys/class/infiniband/DEV/device/net/IFNAME), which a kernel RDMA device
# has and rxdp's, made by rxdpd, cannot: the suite runs in a mount
# namespace of its own where /sys/class holds that one entry besides the
# real ones.
cat >"$tmp/sysfs.sh" <<'EOF2'
set -e
mkdir "$1/class"
mount --bind /sys/class "$1/class"
mount -t tmpfs rxdp-sysclass /sys/class
for e in "$1"/class/*; do ln -s "$e" "/sys/class/${e##*/}"; done
mkdir -p "/sys/class/infiniband/$2/device/net/$3"
shift 3
exec "$@"
EOF2
# Features rxdp does not claim, whichever test meets them: other vendors'
# devices and their direct-verbs APIs (timestamp conversion among them),
# device memory, XRC, parent domains, raw packet QPs, dmabuf, CUDA, huge
# pages not set up (the ODP tests over huge pages pass where they are),
# PCI devices, importing a device into another process. And one that only
# these tests may skip for: tag matching (which the extended CQ of the
# tag-matching tests needs). Extended QPs, CQs and SRQs, memory windows,
# IBTA 1.5's Atomic Write and the RDMA-CM (multicast included) are rxdp's:
# never a skip.
allowed="MLX5|mlx5|EFA|Device memory|XRC|Parent Domain|QP type 8|Raw Packet|dmabuf|cuda|huge pages|PCI device|Importing a device|Converting timestamp to nanoseconds"
allowed="$allowed|^test_tm_[a-z_]*: 'Extended CQ is not supported"
# what rxdp offers beyond the classic verbs: extended QPs (every ibv_wr_*
# op pyverbs has, IBTA 1.5's Atomic Write among them), extended CQs (with
# completion timestamps), memory windows of both types with every way to
# invalidate them; on-demand paging: every test of test_odp.py but XRC's
# and those over huge pages (which need huge pages set up)
beyond="test_qp_ex_rc_send test_qp_ex_rc_send_imm test_qp_ex_ud_send
	test_qp_ex_ud_send_imm test_qp_ex_rc_rdma_write test_qp_ex_rc_rdma_write_imm
	test_qp_ex_rc_rdma_read test_qp_ex_rc_atomic_cmp_swp
	test_qp_ex_rc_atomic_fetch_add test_qp_ex_rc_atomic_write
	test_qp_ex_rc_bind_mw
	test_create_rc_qp_ex_with_attr test_create_ud_qp_ex_no_attr
	test_rc_traffic_cq_ex test_ud_traffic_cq_ex test_create_cq_ex
	test_timestamp_real_time_rc_traffic test_mw_type1 test_invalidate_mw_type1
	test_mw_type2 test_mw_type2_invalidate_local test_mw_type2_invalidate_remote
	test_mw_type2_invalidate_dealloc test_reg_mw_wrong_type
	test_odp_rc_traffic test_odp_rc_atomic_cmp_and_swp
	test_odp_rc_atomic_fetch_and_add test_odp_rc_rdma_read
	test_odp_rc_rdma_write test_odp_implicit_rc_traffic test_odp_ud_traffic
	test_odp_rc_srq_traffic test_odp_sync_prefetch_rc_traffic
	test_odp_async_prefetch_rc_traffic test_odp_implicit_sync_prefetch_rc_traffic
	test_odp_implicit_async_prefetch_rc_traffic
	test_odp_prefetch_sync_no_page_fault_rc_traffic
	test_odp_prefetch_async_no_page_fault_rc_traffic"
errors=0

# outcomes RUN MIN: RUN's output ($tmp/RUN) read: its counts and skip
# reasons printed, $tmp/RUN.results with each test's outcome as
# "test_name: outcome" (a docstring may stand between the name and the
# outcome); an error, a failure, a skip rxdp should not have, fewer than
# MIN passes, or a test of $beyond that did not pass counts in $errors
outcomes() {
	local out=$tmp/$1 res=$tmp/$1.results nok nskip unclaimed t
	tail -n 4 "$out"
	nok=$(grep -c '\.\.\. ok$' "$out")
	nskip=$(grep -c '\.\.\. skipped ' "$out")
	echo "pyverbs $1: $nok ok, $nskip skipped"
	echo "skipped for:"
	sed -n "s/.*\.\.\. skipped '\(.*\)'$/\1/p; s/.*\.\.\. skipped \"\(.*\)\"$/\1/p" "$out" |
		sed "s/rxdp_$IF_A/DEV/g" | sort | uniq -c | sort -rn
	awk '/^test_[A-Za-z0-9_]* \(/ { t = $1 }
	     /\.\.\. / { r = $0; sub(/.*\.\.\. /, "", r); print t ": " r }' "$out" >"$res"
	unclaimed=$(sed -n 's/^\([^:]*\): skipped /\1: /p' "$res" | grep -vE "$allowed")
	if grep -qE '^(ERROR|FAIL):' "$out"; then
		grep -E '^(ERROR|FAIL):' "$out"
		errors=1
	fi
	[ -z "$unclaimed" ] || { echo "skips rxdp should not have:"; echo "$unclaimed"; errors=1; }
	[ "$nok" -ge "$2" ] || { echo "$1: only $nok tests ran and passed"; errors=1; }
	for t in $beyond; do
		grep -q "^$t: ok$" "$res" || { echo "$1: $t did not pass"; errors=1; }
	done
}

# 1. one host
(cd "$tmp" && RXDP_VERBS_TIMEOUT=600 verbs "$NS_A" unshare -m --propagation private \
	/bin/bash "$tmp/sysfs.sh" "$tmp" "$dev" "$IF_A" /usr/bin/python3 \
	tests/run_tests.py --dev "$dev" --gid "$gid" -v) >"$tmp/one" 2>&1
rc=$?
outcomes one 80
# RDMA-CM: every test of test_rdmacm.py ran and passed, the multicast ones
# (join, join_ex, traffic, leave) among them
for t in test_rdmacm_async_multicast_traffic \
	test_rdmacm_async_ex_multicast_traffic \
	test_rdmacm_async_ex_leave_multicast_traffic; do
	grep -q "^$t: ok$" "$tmp/one.results" || { echo "$t did not pass"; errors=1; }
done
ncm=$(grep -c '^test_rdmacm_[A-Za-z0-9_]*: ok$' "$tmp/one.results")
echo "pyverbs: $ncm RDMA-CM tests passed"
[ "$ncm" -ge 10 ] || { echo "only $ncm RDMA-CM tests passed (10 expected)"; errors=1; }
if [ $rc != 0 ] || [ $errors != 0 ]; then
	tail -n 60 "$tmp/one"
	fail "pyverbs on one host (exit $rc)"
fi

# 2. two hosts: the modules with traffic between two players (not the
# RDMA-CM's, which find their address through the device's netdev)
rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
devB=rxdp_$IF_B
rxdp_wait_port "$NS_B" "$devB"
declare -A before
for c in sent_pkts rcvd_pkts; do
	before[A.$c]=$(rxdp_counter "$NS_A" $c)
	before[B.$c]=$(rxdp_counter "$NS_B" $c)
done
across="atomic cq cqex cq_events mr odp qp qpex relaxed_ordering shared_pd mlx5_timestamp"
# shellcheck disable=SC2046,SC2086
(cd "$tmp" && RXDP_VERBS_TIMEOUT=600 verbs "$NS_A" /usr/bin/python3 \
	"$root/tests/verbs/pyverbs_across.py" --suite "$tmp/tests" --ns-b "/run/netns/$NS_B" \
	--dev-b "$devB" --dev "$dev" --gid "$gid" -v $(printf 'tests.test_%s ' $across)) \
	>"$tmp/across" 2>&1
rc=$?
head -n 1 "$tmp/across"
outcomes across 80
nboth=$(sed -n 's/^pyverbs_across: \([0-9]*\) tests had a player on each host$/\1/p' "$tmp/across")
[ "${nboth:-0}" -ge 50 ] || { echo "across: only ${nboth:-no} tests had a player on each host"; errors=1; }
for c in sent_pkts rcvd_pkts; do
	a=$(rxdp_counter "$NS_A" $c)
	b=$(rxdp_counter "$NS_B" $c)
	a=$((a - ${before[A.$c]})) b=$((b - ${before[B.$c]}))
	echo "across: host A $c +$a, host B $c +$b"
	if [ "$a" -lt 2000 ] || [ "$b" -lt 2000 ]; then
		echo "across: too few packets on the wire"
		errors=1
	fi
done
if [ $rc != 0 ] || [ $errors != 0 ]; then
	tail -n 60 "$tmp/across"
	fail "pyverbs across two hosts (exit $rc)"
fi
echo PASS
