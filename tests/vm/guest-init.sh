#!/bin/bash
# PID 1 of a test guest (tests/vm/lib.sh), exec'd by the image's
# /sbin/rxdp-init with the project's tree mounted read-only at /rxdp.
#
# Sets up the guest from its kernel command line (rxdp.addr=ADDR/PLEN: the
# address of eth0, the virtio-net link to the other guest; rxdp.addr1=: of
# eth1, a second link where the test asked for one), mounts the
# host's job folder (9p tag "job", read-write) at /job and runs the jobs the
# host drops there: N.sh is renamed N.run and run by bash in the background
# (stdout and stderr to N.out); its exit code lands in N.rc when it ends.
# Nothing else runs: no udev, no systemd, so modules are loaded here.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C.UTF-8

addr= addr1=
read -ra cmdline </proc/cmdline
for a in "${cmdline[@]}"; do
	case $a in
	rxdp.addr=*) addr=${a#rxdp.addr=} ;;
	rxdp.addr1=*) addr1=${a#rxdp.addr1=} ;;
	esac
done

mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
# no udev: what it would load for the devices and for libibverbs
modprobe -a virtio_net ib_uverbs
sysctl -qw kernel.printk="4 4 1 7"
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip link set lo up
ip link set eth0 up
[ -n "$addr" ] && ip addr add "$addr" dev eth0
if [ -n "$addr1" ]; then
	ip link set eth1 up
	ip addr add "$addr1" dev eth1
fi

mkdir -p /job
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 job /job; then
	echo "guest-init: cannot mount the job folder" >&2
	exec sh
fi
uname -r >/job/ready.tmp && mv /job/ready.tmp /job/ready

shopt -s nullglob
while :; do
	for f in /job/*.sh; do
		j=${f%.sh}
		mv "$f" "$j.run" || continue
		(
			cd /tmp || exit 1
			bash "$j.run" >"$j.out" 2>&1 </dev/null
			echo $? >"$j.rc.tmp"
			mv "$j.rc.tmp" "$j.rc"
		) &
	done
	sleep 0.1
done
