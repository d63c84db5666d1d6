#!/bin/bash
# The RDMA stack of a test guest (runs inside it, from the shared tree):
#
#   guest.sh rxdp-up PEER   rxdp on eth0: rxdp-loader attach, rxdpd (its
#                           options from $RXDPD_ARGS)
#   guest.sh rxe-up PEER [IFACE]
#                           the kernel's Soft-RoCE on IFACE (rxe0; eth0)
#   guest.sh gid DEV        DEV's IPv4 GID index, once its port is active
#   guest.sh down           whichever is up, removed
#   guest.sh diag           the stack's counters (and rxdpd's log, its
#                           sockets' drops, eth0's and its queues' counts)
#
# PEER is the other guest's address. Each "up" writes /run/vm.env, which
# the test's commands source: DEV and GID (the device and its IPv4 GID
# index), ADDR (eth0's address), PEER, STACK (rxdp or rxe), and for rxdp
# LD_LIBRARY_PATH (the tree's build/lib: rxdp's libibverbs.so.1 and its
# librdmacm.so.1); Soft-RoCE runs on Debian's libibverbs with its rxe
# provider.
set -u
tree=/rxdp
env=/run/vm.env

# the index of DEV's first IPv4-mapped GID (as tests/lib/rxdp.sh finds it)
ipv4_gid() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:.*/\1/p' | head -n 1
}

# the IPv4 address of $1 (eth0)
addr() {
	ip -4 -br addr show dev "${1:-eth0}" | awk '{ sub("/.*", "", $3); print $3 }'
}

# wait_gid DEV: until DEV's port is ACTIVE with an IPv4 GID; prints it
wait_gid() {
	local g
	for _ in $(seq 100); do
		if ibv_devinfo -d "$1" 2>/dev/null | grep -q PORT_ACTIVE; then
			g=$(ipv4_gid "$1")
			[ -n "$g" ] && { echo "$g"; return 0; }
		fi
		sleep 0.2
	done
	echo "guest.sh: $1: no active port with an IPv4 GID" >&2
	ibv_devinfo -v -d "$1" >&2
	return 1
}

case ${1:-} in
rxdp-up)
	mkdir -p /run/rxdp
	"$tree/build/bin/rxdp-loader" attach eth0 || exit 1
	# its own session: a job's timeout does not reach it
	# shellcheck disable=SC2086 # RXDPD_ARGS: rxdpd's options, split
	setsid "$tree/build/bin/rxdpd" --verbose ${RXDPD_ARGS:-} >/tmp/rxdpd.log 2>&1 </dev/null &
	echo $! >/run/rxdpd.pid
	export LD_LIBRARY_PATH=$tree/build/lib
	gid=$(wait_gid rxdp_eth0) || { cat /tmp/rxdpd.log; exit 1; }
	cat >"$env" <<-EOF
		export LD_LIBRARY_PATH=$tree/build/lib
		DEV=rxdp_eth0 GID=$gid ADDR=$(addr) PEER=$2 STACK=rxdp
	EOF
	echo "rxdp: rxdp_eth0 on eth0 ($("$tree/build/bin/rxdp-loader" status eth0 | head -n 1)), GID index $gid"
	;;
rxe-up)
	# what udev and rdma-core's service would load: the RDMA-CM's user
	# access, and Soft-RoCE itself
	modprobe -a rdma_ucm rdma_rxe || exit 1
	rdma link add rxe0 type rxe netdev "${3:-eth0}" || exit 1
	gid=$(wait_gid rxe0) || exit 1
	cat >"$env" <<-EOF
		DEV=rxe0 GID=$gid ADDR=$(addr "${3:-eth0}") PEER=$2 STACK=rxe
	EOF
	echo "Soft-RoCE: rxe0 on ${3:-eth0} (kernel $(uname -r)), GID index $gid"
	;;
down)
	if [ -f /run/rxdpd.pid ]; then
		pid=$(cat /run/rxdpd.pid)
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		"$tree/build/bin/rxdp-loader" detach eth0
		rm -f /run/rxdpd.pid
	fi
	if rdma link show rxe0/1 >/dev/null 2>&1; then
		rdma link del rxe0 || exit 1
	fi
	rm -f "$env"
	;;
gid)
	wait_gid "$2"
	;;
diag)
	# after a failure: what each stack counted, and rxdpd's last words
	if [ -f /run/rxdpd.pid ]; then
		"$tree/build/bin/rxdp-ctl" stats
		# the transport's counters that moved
		"$tree/build/bin/rxdp-ctl" counters | grep -v ' 0$'
		# how its data path started (the tail below may not reach it)
		grep -e "data path up" -e "SCHED_FIFO" /tmp/rxdpd.log | head -n 4
		grep -v "client pid" /tmp/rxdpd.log | tail -n 20
		# the sockets' own drops, and what the link and its queues moved
		ss --xdp -e | grep -e umem -e stats
		ip -s link show dev eth0
		grep "virtio.*-\(input\|output\)" /proc/interrupts
		dmesg | tail -n 12
	fi
	rdma link show rxe0/1 >/dev/null 2>&1 && rdma statistic show link rxe0/1
	;;
*)
	echo "usage: guest.sh rxdp-up PEER | rxe-up PEER [IFACE] | gid DEV | down | diag" >&2
	exit 2
	;;
esac
