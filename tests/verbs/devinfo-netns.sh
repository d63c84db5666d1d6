#!/usr/bin/env bash
# ibverbs-utils on rxdp, end to end: in a fresh network namespace with a
# veth pair, rxdp attached to one end (rxdp-loader) and rxdpd running,
# Debian's unmodified ibv_devices lists rxdp_<ifname> and `ibv_devinfo -v`
# shows the port ACTIVE, link layer Ethernet, the active MTU and a RoCE v2
# GID table, all through build/lib/libibverbs.so.1.
# Skips (77) when not root or when rxdpd / rxdp-loader are not built yet.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/build/bin"
libdir="$root/build/lib"

[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (network namespaces)"; exit 77; }
for b in rxdpd rxdp-loader; do
	[ -x "$bin/$b" ] || { echo "skip: $bin/$b not built yet"; exit 77; }
done
[ -f "$libdir/libibverbs.so.1" ] || { echo "missing $libdir/libibverbs.so.1"; exit 1; }

ns="rxvns$$"
ifa="rxv$$a"
ifb="rxv$$b"
tmp=$(mktemp -d)

cleanup() {
	local p
	for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	ip netns exec "$ns" "$bin/rxdp-loader" detach "$ifa" >/dev/null 2>&1
	ip netns del "$ns" 2>/dev/null
	[ -n "${RXDP_KEEP:-}" ] && cp -r "$tmp" "$RXDP_KEEP"; rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.out; do
		[ -s "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }
	done
	exit 1
}

nsx() { ip netns exec "$ns" "$@"; }

ip netns add "$ns" || fail "cannot create namespace $ns"
nsx ip link set lo up
nsx ip link add "$ifa" type veth peer name "$ifb" || fail "cannot create veth"
nsx ip addr add 198.18.201.1/24 dev "$ifa"
nsx ip addr add 198.18.201.2/24 dev "$ifb"
nsx ip link set "$ifa" up
nsx ip link set "$ifb" up

nsx "$bin/rxdp-loader" attach "$ifa" --mode skb > "$tmp/loader.log" 2>&1 ||
	fail "rxdp-loader attach $ifa"

nsx "$bin/rxdpd" > "$tmp/rxdpd.log" 2>&1 &

# The daemon is up when ibv_devices lists the device (bounded wait)
dev="rxdp_$ifa"
for _ in $(seq 1 50); do
	LD_LIBRARY_PATH="$libdir" nsx ibv_devices > "$tmp/devices.out" 2>&1
	grep -q "$dev" "$tmp/devices.out" && break
	sleep 0.2
done
grep -q "$dev" "$tmp/devices.out" || fail "ibv_devices does not list $dev"
# ibv_devices prints the node GUID next to the name
grep -qE "^\s*$dev\s+[0-9a-f]{16}\s*$" "$tmp/devices.out" ||
	fail "ibv_devices line for $dev has no node GUID"
echo "ok: ibv_devices lists $dev"

# The link-local address (GID index 0) needs IPv6 DAD to finish: wait for it
for _ in $(seq 1 50); do
	nsx ip -6 addr show dev "$ifa" scope link | grep -q 'inet6' &&
		! nsx ip -6 addr show dev "$ifa" | grep -q tentative && break
	sleep 0.2
done

LD_LIBRARY_PATH="$libdir" nsx ibv_devinfo -v -d "$dev" > "$tmp/devinfo.out" 2>&1 ||
	fail "ibv_devinfo -v -d $dev exited non-zero"
out="$tmp/devinfo.out"
grep -qE "hca_id:\s+$dev" "$out" || fail "devinfo: no hca_id $dev"
grep -qE 'transport:\s+InfiniBand \(0\)' "$out" || fail "devinfo: transport"
grep -qE 'state:\s+PORT_ACTIVE \(4\)' "$out" || fail "devinfo: port not PORT_ACTIVE"
grep -qE 'link_layer:\s+Ethernet' "$out" || fail "devinfo: link_layer not Ethernet"
grep -qE 'active_mtu:\s+(256|512|1024|2048|4096) \([1-5]\)' "$out" || fail "devinfo: active_mtu"
grep -qE 'max_qp_rd_atom:\s+[1-9]' "$out" || fail "devinfo: max_qp_rd_atom"
grep -qE 'gid_tbl_len:\s+[1-9]' "$out" || fail "devinfo: gid_tbl_len"
# GID 0: the link-local GID from the MAC; the IPv4 address in an
# IPv4-mapped GID; both RoCE v2
grep -qE 'GID\[\s*0\]:\s+fe80::.*, RoCE v2' "$out" || fail "devinfo: GID[0] not link-local RoCE v2"
grep -qE 'GID\[\s*[0-9]+\]:\s+::ffff:198\.18\.201\.1, RoCE v2' "$out" || fail "devinfo: no GID for 198.18.201.1"
# the device's node GUID matches what ibv_devices printed
guid=$(awk -v d="$dev" '$1 == d {print $2}' "$tmp/devices.out")
g=$(grep -E 'node_guid:' "$out" | awk '{print $2}' | tr -d ':')
[ "$g" = "$guid" ] || fail "node_guid $g differs from ibv_devices' $guid"
echo "ok: ibv_devinfo -v: PORT_ACTIVE, Ethernet, active_mtu, RoCE v2 GIDs"

# Nothing from the system libibverbs was loaded
LD_DEBUG=files LD_LIBRARY_PATH="$libdir" nsx ibv_devinfo -d "$dev" > /dev/null 2> "$tmp/ld.out"
grep -q "$libdir/libibverbs.so.1" "$tmp/ld.out" || fail "our libibverbs was not loaded"
! grep -q 'x86_64-linux-gnu/libibverbs.so' "$tmp/ld.out" || fail "the system libibverbs was loaded"
echo "ok: rdma-core's libibverbs not loaded (the kernel has no RDMA device)"

# rdma-core's own library beside rxdp's (userspace/verbs/rdmacore.c), made
# to load here: it is loaded in a namespace of its own, lists nothing (no
# kernel RDMA device), says nothing, and every answer stays rxdp's
sys=$(find /usr/lib /usr/lib64 -name libibverbs.so.1 -path '*linux-gnu*' 2>/dev/null | head -n 1)
[ -n "$sys" ] || fail "no rdma-core libibverbs.so.1 on this host"
RXDP_RDMA_CORE=$sys LD_DEBUG=files LD_LIBRARY_PATH="$libdir" \
	nsx ibv_devinfo -v -d "$dev" > "$tmp/devinfo-sys.out" 2> "$tmp/ld-sys.out" ||
	fail "ibv_devinfo -v -d $dev with rdma-core's library beside"
grep -q "file=$sys \[1\];" "$tmp/ld-sys.out" ||
	fail "rdma-core's library was not loaded into a namespace of its own"
grep -v -e '^ *[0-9]*:' -e '^$' "$tmp/ld-sys.out" > "$tmp/stderr-sys.out"
[ ! -s "$tmp/stderr-sys.out" ] || fail "ibv_devinfo said: $(head -n 3 "$tmp/stderr-sys.out")"
diff "$out" "$tmp/devinfo-sys.out" || fail "ibv_devinfo -v differs with rdma-core's library beside"
echo "ok: rdma-core's libibverbs beside rxdp's: loaded apart, nothing changed"

# After detaching, the device disappears from the list (bounded wait)
nsx "$bin/rxdp-loader" detach "$ifa" >> "$tmp/loader.log" 2>&1 || fail "rxdp-loader detach"
gone=0
for _ in $(seq 1 50); do
	LD_LIBRARY_PATH="$libdir" nsx ibv_devices > "$tmp/devices.out" 2>&1
	grep -q "$dev" "$tmp/devices.out" || { gone=1; break; }
	sleep 0.2
done
[ $gone -eq 1 ] || fail "$dev still listed after detach"
echo "ok: $dev gone after detach"
echo "devinfo-netns: passed"
