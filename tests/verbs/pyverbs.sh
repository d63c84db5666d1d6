#!/usr/bin/env bash
# rdma-core's own test suite (pyverbs, as Debian's python3-pyverbs ships it
# in /usr/share/doc/rdma-core/tests) against rxdp's libibverbs, on one rxdp
# host: most tests use two contexts of one device (loopback through rxdpd).
# Passes when nothing errs or fails and every skip names a feature rxdp does
# not claim (the list below); prints the ok/skip counts and the reasons.
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
cat >"$tmp/sysfs.sh" <<'EOF'
set -e
mkdir "$1/class"
mount --bind /sys/class "$1/class"
mount -t tmpfs rxdp-sysclass /sys/class
for e in "$1"/class/*; do ln -s "$e" "/sys/class/${e##*/}"; done
mkdir -p "/sys/class/infiniband/$2/device/net/$3"
shift 3
exec "$@"
EOF
(cd "$tmp" && RXDP_VERBS_TIMEOUT=600 verbs "$NS_A" unshare -m --propagation private \
	/bin/bash "$tmp/sysfs.sh" "$tmp" "$dev" "$IF_A" /usr/bin/python3 \
	tests/run_tests.py --dev "$dev" --gid "$gid" -v) >"$tmp/out" 2>&1
rc=$?
tail -n 4 "$tmp/out"
nok=$(grep -c '\.\.\. ok$' "$tmp/out")
nskip=$(grep -c '\.\.\. skipped ' "$tmp/out")
echo "pyverbs: $nok ok, $nskip skipped"
echo "skipped for:"
sed -n "s/.*\.\.\. skipped '\(.*\)'$/\1/p; s/.*\.\.\. skipped \"\(.*\)\"$/\1/p" "$tmp/out" |
	sed "s/rxdp_$IF_A/DEV/g" | sort | uniq -c | sort -rn | tee "$tmp/reasons"

# Features rxdp does not claim: other vendors' devices, ODP, device memory,
# XRC, memory windows, extended QPs/CQs, parent domains, raw packet QPs,
# dmabuf, CUDA, huge pages, PCI devices, real-time clocks, multicast.
allowed='MLX5|mlx5|EFA|ODP|Device memory|XRC|MW|memory window|Extended QP|Extended CQ|Parent Domain|QP type 8|Raw Packet|dmabuf|cuda|huge pages|PCI device|real time|Multicast is not supported|extended attrs|without extended attrs|without attrs|with attrs'
unclaimed=$(grep -vE "$allowed" "$tmp/reasons")
errors=0
if grep -qE '^(ERROR|FAIL):' "$tmp/out"; then
	grep -E '^(ERROR|FAIL):' "$tmp/out"
	errors=1
fi
[ -z "$unclaimed" ] || { echo "skips rxdp should not have:"; echo "$unclaimed"; errors=1; }
[ "$nok" -ge 50 ] || { echo "only $nok tests ran and passed"; errors=1; }
# RDMA-CM: every test of test_rdmacm.py that needs no multicast ran and passed
ncm=$(grep -cE '^test_rdmacm_.*\(tests\.test_rdmacm\..*\.\.\. ok$' "$tmp/out")
echo "pyverbs: $ncm RDMA-CM tests passed"
[ "$ncm" -ge 7 ] || { echo "only $ncm RDMA-CM tests passed (7 expected)"; errors=1; }
if [ $rc != 0 ] || [ $errors != 0 ]; then
	tail -n 60 "$tmp/out"
	fail "pyverbs (exit $rc)"
fi
echo PASS
