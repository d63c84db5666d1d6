# shellcheck shell=bash
# Shell helpers for rxdp's tests in network namespaces. Source this file:
#
#   . "$(dirname "$0")/../lib/netns.sh"
#   require_root                     # exit 77 unless root
#   require_cmd ip bpftool           # exit 77 if a tool is missing
#   netns_pair                       # two namespaces joined by a veth pair
#   nsa ping -c1 "$ADDR_B"           # run in namespace A (nsb: in B)
#   on_exit "echo bye"               # more cleanup, run in reverse order
#
# Names and addresses carry RXDP_TEST_ID (default: the test's pid), so tests
# run side by side never meet. Everything made here is removed when the test
# exits, pass or fail (EXIT trap; INT/TERM/HUP exit through it too).
#
# After netns_pair:
#   NS_A NS_B        namespace names ("rxa<id>", "rxb<id>")
#   IF_A IF_B        the veth ends, in NS_A and NS_B ("rxva<id>", "rxvb<id>";
#                    NETNS_SAME_IFNAME=1 names both ends "rxv<id>")
#   ADDR_A ADDR_B    IPv4 addresses, in 198.18.0.0/15 (RFC 2544 test range)
#   MAC_A MAC_B      the ends' MAC addresses
#   PLEN             prefix length (15)
# Options (environment, read by netns_pair):
#   NETNS_NO_IPV6=1      disable IPv6 on the veth ends (no ND/MLD chatter)
#   NETNS_MTU=N          the veth MTU (9000: jumbo frames)
#   NETNS_STATIC_NEIGH=1 permanent neighbour entries both ways (no ARP)
#   NETNS_QUEUES=N       veth with N RX and TX queues
# netns_bridged, netns_hop and netns_switch (below) make bigger topologies.

RXDP_TEST_ID=${RXDP_TEST_ID:-$$}
_rxdp_cleanups=()

# on_exit CMD...: run CMD (eval'd) at exit, after the ones added later.
on_exit() {
	_rxdp_cleanups+=("$*")
}

_rxdp_run_cleanups() {
	local rc=$? i
	# every cleanup runs: an unset variable in one (set -u) must not end
	# the shell before the rest
	set +eu
	trap - EXIT
	for ((i = ${#_rxdp_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_rxdp_cleanups[i]}" >/dev/null 2>&1
	done
	exit "$rc"
}
trap _rxdp_run_cleanups EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# skip (exit 77, the automake convention run-tests.sh counts as a skip)
skip() {
	echo "SKIP: $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs $c"
	done
}

# netns_add NAME: a namespace with lo up, deleted at exit
netns_add() {
	ip netns add "$1" || fail "ip netns add $1"
	on_exit "ip netns del '$1'"
	ip -n "$1" link set lo up
}

nsa() { ip netns exec "$NS_A" "$@"; }
nsb() { ip netns exec "$NS_B" "$@"; }

_netns_v4() { # _netns_v4 SECOND_OCTET: 198.<n>.<id high>.<id low>
	echo "198.$1.$(((RXDP_TEST_ID >> 8) & 255)).$((RXDP_TEST_ID & 255))"
}

netns_pair() {
	local q=${NETNS_QUEUES:-1}
	NS_A=rxa$RXDP_TEST_ID
	NS_B=rxb$RXDP_TEST_ID
	if [ "${NETNS_SAME_IFNAME:-0}" = 1 ]; then
		IF_A=rxv$RXDP_TEST_ID
		IF_B=$IF_A
	else
		IF_A=rxva$RXDP_TEST_ID
		IF_B=rxvb$RXDP_TEST_ID
	fi
	[ ${#IF_A} -le 15 ] && [ ${#IF_B} -le 15 ] || fail "interface name too long"
	ADDR_A=$(_netns_v4 18)
	ADDR_B=$(_netns_v4 19)
	PLEN=15
	netns_add "$NS_A"
	netns_add "$NS_B"
	# made directly inside the namespaces: no name ever exists in ours
	ip link add "$IF_A" netns "$NS_A" numtxqueues "$q" numrxqueues "$q" \
		type veth peer name "$IF_B" netns "$NS_B" \
		numtxqueues "$q" numrxqueues "$q" || fail "cannot create the veth pair"
	if [ "${NETNS_NO_IPV6:-0}" = 1 ]; then
		nsa sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
		nsb sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	fi
	ip -n "$NS_A" addr add "$ADDR_A/$PLEN" dev "$IF_A"
	ip -n "$NS_B" addr add "$ADDR_B/$PLEN" dev "$IF_B"
	MAC_A=$(ip -n "$NS_A" -br link show "$IF_A" | awk '{print $3}')
	MAC_B=$(ip -n "$NS_B" -br link show "$IF_B" | awk '{print $3}')
	if [ "${NETNS_STATIC_NEIGH:-0}" = 1 ]; then
		ip -n "$NS_A" neigh replace "$ADDR_B" lladdr "$MAC_B" dev "$IF_A" nud permanent
		ip -n "$NS_B" neigh replace "$ADDR_A" lladdr "$MAC_A" dev "$IF_B" nud permanent
	fi
	if [ -n "${NETNS_MTU:-}" ]; then
		ip -n "$NS_A" link set "$IF_A" mtu "$NETNS_MTU" &&
			ip -n "$NS_B" link set "$IF_B" mtu "$NETNS_MTU" ||
			fail "cannot set MTU $NETNS_MTU"
	fi
	ip -n "$NS_A" link set "$IF_A" up
	ip -n "$NS_B" link set "$IF_B" up
}

# netns_bridged: like netns_pair, but the two hosts hang off a bridge in a
# third namespace, where every frame passes (a capture or an XDP program on
# the bridge ports sees what AF_XDP sends around the hosts' own taps):
#   host A [IF_A] ---- [PA] bridge BR in NS_R [PB] ---- [IF_B] host B
# Sets NS_A NS_B NS_R IF_A IF_B PA PB BR ADDR_A ADDR_B (IPv4, /15); IPv6 is
# off on IF_A and IF_B unless NETNS_IPV6=1.
netns_bridged() {
	_netns_three
	ip -n "$NS_R" link add "$BR" type bridge
	for p in $PA $PB; do
		ip -n "$NS_R" link set "$p" master "$BR"
		ip -n "$NS_R" link set "$p" up
	done
	ip -n "$NS_R" link set "$BR" up
	if [ "${NETNS_IPV6:-0}" != 1 ]; then
		nsa sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
		nsb sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	fi
	_netns_three_up
}

# netns_hop: the same three namespaces, with nothing joining PA and PB: a
# forwarding XDP program in NS_R does (bench/lossyhop.c, with --pass on the
# hosts' ends so that they take redirected frames). IPv6 is off on all four
# ends, NETNS_MTU sets their MTU, the hosts' neighbours are static (MAC_A,
# MAC_B) and they fill their own checksums: a redirect carries frames as
# they were built, and one left for the NIC would arrive unfilled.
netns_hop() {
	local p
	_netns_three
	for p in "$NS_A $IF_A" "$NS_B $IF_B" "$NS_R $PA" "$NS_R $PB"; do
		# shellcheck disable=SC2086
		set -- $p
		ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
		[ -z "${NETNS_MTU:-}" ] || ip -n "$1" link set "$2" mtu "$NETNS_MTU" ||
			fail "cannot set MTU $NETNS_MTU"
		ip -n "$1" link set "$2" up
	done
	_netns_three_up
	ip -n "$NS_A" neigh replace "$ADDR_B" lladdr "$MAC_B" dev "$IF_A" nud permanent
	ip -n "$NS_B" neigh replace "$ADDR_A" lladdr "$MAC_A" dev "$IF_B" nud permanent
	nsa ethtool -K "$IF_A" tx off >/dev/null
	nsb ethtool -K "$IF_B" tx off >/dev/null
}

# host A [IF_A] -- [PA] NS_R [PB] -- [IF_B] host B: the namespaces and veths
_netns_three() {
	local id=$RXDP_TEST_ID p
	NS_A=rxa$id NS_B=rxb$id NS_R=rxr$id
	IF_A=rxva$id IF_B=rxvb$id PA=rxpa$id PB=rxpb$id BR=rxbr$id
	ADDR_A=$(_netns_v4 18)
	ADDR_B=$(_netns_v4 19)
	PLEN=15
	for p in $NS_A $NS_B $NS_R; do netns_add "$p"; done
	ip link add "$IF_A" netns "$NS_A" type veth peer name "$PA" netns "$NS_R" ||
		fail "veth A"
	ip link add "$IF_B" netns "$NS_B" type veth peer name "$PB" netns "$NS_R" ||
		fail "veth B"
}

# netns_switch N: N hosts on one switch, a bridge in NS_R (NS_R, BR):
#   host i [SW_IF[i]] ---- [SW_PORT[i]] bridge BR in NS_R, i = 1..N
# SW_NS[i] the hosts' namespaces ("rxs<i>h<id>"), SW_ADDR[i] their IPv4
# addresses (10.<i>.<id>/8), IPv6 off, every end up. A switch port's
# queue is a qdisc on SW_PORT[i] (toward host i): tc ... dev SW_PORT[i].
netns_switch() {
	local id=$((RXDP_TEST_ID & 65535)) i
	NS_R=rxr$id BR=rxbr$id PLEN=8
	SW_NS=() SW_IF=() SW_PORT=() SW_ADDR=()
	netns_add "$NS_R"
	ip -n "$NS_R" link add "$BR" type bridge || fail "bridge"
	for i in $(seq 1 "$1"); do
		SW_NS[i]=rxs${i}h$id SW_IF[i]=rxs${i}v$id SW_PORT[i]=rxs${i}p$id
		SW_ADDR[i]=10.$i.$((id >> 8)).$((id & 255))
		netns_add "${SW_NS[i]}"
		ip link add "${SW_IF[i]}" netns "${SW_NS[i]}" type veth \
			peer name "${SW_PORT[i]}" netns "$NS_R" || fail "veth $i"
		ip netns exec "${SW_NS[i]}" sysctl -qw "net.ipv6.conf.${SW_IF[i]}.disable_ipv6=1"
		ip netns exec "$NS_R" sysctl -qw "net.ipv6.conf.${SW_PORT[i]}.disable_ipv6=1"
		ip -n "$NS_R" link set "${SW_PORT[i]}" master "$BR" up
		ip -n "${SW_NS[i]}" addr add "${SW_ADDR[i]}/$PLEN" dev "${SW_IF[i]}"
		ip -n "${SW_NS[i]}" link set "${SW_IF[i]}" up
	done
	ip -n "$NS_R" link set "$BR" up
}

# the hosts' addresses, MACs, and their ends up
_netns_three_up() {
	ip -n "$NS_A" addr add "$ADDR_A/$PLEN" dev "$IF_A"
	ip -n "$NS_B" addr add "$ADDR_B/$PLEN" dev "$IF_B"
	ip -n "$NS_A" link set "$IF_A" up
	ip -n "$NS_B" link set "$IF_B" up
	MAC_A=$(ip -n "$NS_A" -br link show "$IF_A" | awk '{print $3}')
	MAC_B=$(ip -n "$NS_B" -br link show "$IF_B" | awk '{print $3}')
}

# netns_inode NS: the inode of NS's network namespace (rxdp's pin dirs use it)
netns_inode() {
	ip netns exec "$1" stat -L -c %i /proc/self/ns/net
}

# rxdp_bpffs_mount: make /run/rxdp/bpffs a bpffs in this mount namespace,
# before any `ip netns exec`, so that every command started afterwards sees
# the same one (rxdp-loader would otherwise mount it itself, in the mount
# namespace of its nearest ancestor outside `ip netns exec`).
RXDP_BPFFS_ROOT=/run/rxdp/bpffs
rxdp_bpffs_mount() {
	[ "$(stat -f -c %T "$RXDP_BPFFS_ROOT" 2>/dev/null)" = bpf_fs ] && return 0
	mkdir -p "$RXDP_BPFFS_ROOT" &&
		mount -t bpf -o mode=0700 bpf "$RXDP_BPFFS_ROOT"
}

# rxdp_pin_dir NS IFNAME: where rxdp-loader pins IFNAME's maps in NS
rxdp_pin_dir() {
	echo "$RXDP_BPFFS_ROOT/net$(netns_inode "$1")/$2"
}

# wait_until SECONDS CMD...: retry CMD every 0.1 s until it succeeds
wait_until() {
	local t=$(($1 * 10))
	shift
	while ! "$@"; do
		t=$((t - 1))
		[ $t -gt 0 ] || return 1
		sleep 0.1
	done
}
