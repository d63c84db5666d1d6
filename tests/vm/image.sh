#!/usr/bin/env bash
# The Debian 12 guest image of the guest tests (tests/vm/), built once from
# Debian's packages and cached:
#
#   tests/vm/image.sh          build it unless cached; print its directory
#
# The directory (under $RXDP_VM_CACHE, default /var/cache/rxdp-vm, named
# after a hash of this file, so a change here makes a new image) holds
#   vmlinuz, initrd.img   the stock bookworm kernel (linux-image-amd64, 6.1)
#                         and its initramfs, booted directly by QEMU
#   root.img              an ext4 root file system (raw; guests open it with
#                         snapshot=on, so it never changes)
#   version               the kernel's release
# Root and network (deb.debian.org, or $RXDP_VM_MIRROR) are needed to build
# it (without root: exit 77, a skip in make check); a cached image needs
# neither. A build takes a lock, so two tests
# starting at once build it once.
#
# What the guest runs comes from the project's tree, shared over 9p: the
# image's own init (/sbin/rxdp-init) only mounts the tree and hands over to
# tests/vm/guest-init.sh, so changing that needs no new image.
set -euo pipefail
cache=${RXDP_VM_CACHE:-/var/cache/rxdp-vm}
mirror=${RXDP_VM_MIRROR:-http://deb.debian.org/debian}
key=$(sha256sum "$0" | cut -c1-12)
img=$cache/bookworm-$key

# The stock kernel; what rxdp needs at run time (ldd build/bin/* build/lib/*);
# the kernel's Soft-RoCE and its user space (rxe provider, rdma tool in
# iproute2); the unmodified programs the tests run on both.
pkgs=(
	linux-image-amd64 kmod iproute2 procps
	libbpf1 libxdp1 libmnl0 libisal2 libelf1 zlib1g
	libibverbs1 ibverbs-providers ibverbs-utils perftest
	librdmacm1 rdmacm-utils
)

if [ -f "$img/version" ]; then
	touch "$img/version" # last used: see the pruning below
	echo "$img"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: building the guest image needs root" >&2
	exit 77
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$img/version" ]; then # built while we waited
	echo "$img"
	exit 0
fi

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
t0=$(date +%s)
echo "image.sh: debootstrap bookworm from $mirror (${pkgs[*]})" >&2
if ! debootstrap --variant=minbase --include="$(
	IFS=,
	echo "${pkgs[*]}"
)" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
	tail -n 30 "$work/debootstrap.log" >&2
	[ -f "$root/debootstrap/debootstrap.log" ] && tail -n 30 "$root/debootstrap/debootstrap.log" >&2
	echo "image.sh: debootstrap failed" >&2
	exit 1
fi

# PID 1 of the guest: the initramfs has mounted /dev, /proc, /sys and /run
# already; mount the tree (9p tag "rxdp", read-only) and run its init.
cat >"$root/sbin/rxdp-init" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
modprobe -a 9pnet_virtio 9p
mkdir -p /rxdp
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro rxdp /rxdp &&
	[ -x /rxdp/tests/vm/guest-init.sh ] && exec /rxdp/tests/vm/guest-init.sh
echo "rxdp-init: cannot mount the project's tree over 9p" >&2
exec sh
EOF
chmod 755 "$root/sbin/rxdp-init"
echo rxdp-guest >"$root/etc/hostname"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

kver=$(ls "$root/lib/modules")
[ -f "$root/boot/vmlinuz-$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] ||
	{ echo "image.sh: no kernel or initramfs in /boot" >&2; exit 1; }
mkdir -p "$work/img"
cp "$root/boot/vmlinuz-$kver" "$work/img/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/img/initrd.img"
size=$(($(du -sm "$root" | cut -f1) + 512))
mkfs.ext4 -q -F -L rxdp-root -d "$root" "$work/img/root.img" "${size}M" >&2
echo "$kver" >"$work/img/version"
mv "$work/img" "$img"
echo "image.sh: $img: kernel $kver, ${size} MiB, built in $(($(date +%s) - t0)) s" >&2

# images of older versions of this file, unused for a day
find "$cache" -maxdepth 1 -name 'bookworm-*' ! -name "bookworm-$key" |
	while read -r old; do
		[ -n "$(find "$old/version" -mmin +1440 2>/dev/null)" ] && rm -rf "$old"
	done
echo "$img"
