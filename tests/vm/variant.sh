#!/usr/bin/env bash
# Guest images derived from the Debian 12 one (tests/vm/image.sh), built
# once from Debian's packages and cached beside it:
#
#   tests/vm/variant.sh systemd    build it unless cached; print its directory
#   tests/vm/variant.sh bullseye
#   tests/vm/variant.sh backports
#   tests/vm/variant.sh jammy
#
#   systemd   systemd as PID 1 (bookworm's), which starts the image's
#             /sbin/rxdp-init as a service (rxdp-guest.service): the jobs
#             run as in the other guests, and units can be installed,
#             started and stopped (tests/vm/service.sh)
#   bullseye  Debian 11's kernel (linux-image-amd64 of bullseye, 5.10) and
#             its initramfs, on the same root file system: a kernel older
#             than rxdp supports (tests/vm/oldkernel.sh)
#   backports the kernel of trixie-backports (Debian 13's backports:
#             linux-image-amd64 there, 7.3 in 2026) and an initramfs,
#             on the same root file system: virtio-net with AF_XDP
#             zero-copy, which needs Linux 6.13 (tests/vm/zerocopy.sh);
#             bookworm-backports' 6.12 has the driver's zero-copy receive
#             path but does not offer zero-copy (its xdp_features lack
#             XSK_ZEROCOPY: bind() with XDP_ZEROCOPY is EOPNOTSUPP)
#   jammy     Ubuntu 22.04's kernel (linux-image-generic of jammy-updates,
#             5.15) and an initramfs, on the same root file system: the
#             oldest kernel rxdp claims (tests/vm/jammy.sh). Ubuntu's
#             archive (archive.ubuntu.com, or $RXDP_VM_UBUNTU) is read
#             over HTTP and checked as apt would: InRelease must carry a
#             good signature by Ubuntu's archive key (fingerprint below,
#             the key from ubuntu-keyring), and every file fetched after it
#             the SHA-256 the signed index gives
#
# The directory holds what image.sh's does, and `init`, the guest's init
# (tests/vm/lib.sh boots it). Named after the base image and a hash of this
# file, so a change to either makes a new one. Root and network
# (deb.debian.org, or $RXDP_VM_MIRROR) are needed to build one (without
# root: exit 77); a cached one needs neither.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:-}
case $name in
systemd | bullseye | backports | jammy) ;;
*)
	echo "usage: variant.sh systemd|bullseye|backports|jammy" >&2
	exit 2
	;;
esac
cache=${RXDP_VM_CACHE:-/var/cache/rxdp-vm}
mirror=${RXDP_VM_MIRROR:-http://deb.debian.org/debian}
base=$("$here/image.sh")
key=$(sha256sum "$0" | cut -c1-12)
img=$base-$name-$key

if [ -f "$img/init" ]; then
	touch "$img/init"
	echo "$img"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: building the $name guest image needs root" >&2
	exit 77
fi
exec 9>"$cache/.lock-$name"
flock 9
if [ -f "$img/init" ]; then
	echo "$img"
	exit 0
fi

work=$(mktemp -d "$cache/build.XXXXXX")
mnt=$work/mnt
cleanup() {
	for m in dev/pts dev proc sys ""; do
		mountpoint -q "$mnt/$m" 2>/dev/null && umount -l "$mnt/$m"
	done
	rm -rf "$work"
}
trap cleanup EXIT
t0=$(date +%s)
mkdir -p "$mnt" "$work/img"
cp --sparse=always "$base/root.img" "$work/img/root.img"
# room for what goes in (a kernel's modules: 400 MiB)
truncate -s +1G "$work/img/root.img"
e2fsck -fy "$work/img/root.img" >/dev/null 2>&1 || true
resize2fs "$work/img/root.img" >/dev/null 2>&1
mount -o loop "$work/img/root.img" "$mnt"
mount --bind /dev "$mnt/dev"
mount --bind /dev/pts "$mnt/dev/pts"
mount -t proc proc "$mnt/proc"
mount -t sysfs sys "$mnt/sys"
cp /etc/resolv.conf "$mnt/etc/resolv.conf"
in_root() { chroot "$mnt" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
# apt_from SUITE: the image's apt reads SUITE of the mirror too, its lists
# fetched (the variant removes the source again)
apt_from() {
	echo "deb $mirror $1 main" >"$mnt/etc/apt/sources.list.d/$1.list"
	in_root apt-get update -qq >"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
}

# kernel_from_debs KVER: the kernel packages in $mnt/tmp/debs unpacked
# rather than installed (their dependencies are another release's; the
# guest needs only the kernel, its modules and an initramfs, which the
# image's depmod and mkinitramfs make), made the variant's kernel
kernel_from_debs() {
	local kver=$1 d mods vmlinuz
	for d in "$mnt"/tmp/debs/*.deb; do
		# /lib is a link to /usr/lib in the image: keep it one
		dpkg-deb --fsys-tarfile "$d" | tar -x --keep-directory-symlink -C "$mnt" || exit 1
	done
	rm -rf "$mnt/tmp/debs"
	# Debian 13's kernels keep the image and its config beside the
	# modules (their maintainer scripts link them into /boot); older
	# ones in /boot. mkinitramfs reads the config.
	mods=$mnt/lib/modules/$kver
	vmlinuz=$mnt/boot/vmlinuz-$kver
	[ -f "$mods/vmlinuz" ] && vmlinuz=$mods/vmlinuz
	[ -f "$mods/config" ] && cp "$mods/config" "$mnt/boot/config-$kver"
	in_root depmod "$kver" &&
		in_root mkinitramfs -o "/boot/initrd.img-$kver" "$kver" >>"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
	[ -f "$vmlinuz" ] && [ -f "$mnt/boot/initrd.img-$kver" ] || {
		echo "variant.sh: no $kver kernel or initramfs" >&2
		exit 1
	}
	cp "$vmlinuz" "$work/img/vmlinuz"
	cp "$mnt/boot/initrd.img-$kver" "$work/img/initrd.img"
	echo "$kver" >"$work/img/version"
	echo /sbin/rxdp-init >"$work/img/init"
}

case $name in
systemd)
	echo "variant.sh: systemd in the guest image" >&2
	in_root apt-get update -qq >"$work/apt.log" 2>&1 &&
		in_root apt-get install -y -qq --no-install-recommends systemd \
			>>"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
	# the jobs of tests/vm/lib.sh, started by systemd instead of the
	# kernel; the console is the test's log, not a login prompt
	cat >"$mnt/etc/systemd/system/rxdp-guest.service" <<-'EOF2'
		[Unit]
		Description=rxdp test guest: the host's jobs (tests/vm/lib.sh)
		DefaultDependencies=no
		After=systemd-journald.socket local-fs.target
		[Service]
		ExecStart=/sbin/rxdp-init
		StandardOutput=journal+console
		[Install]
		WantedBy=multi-user.target
	EOF2
	ln -sf /etc/systemd/system/rxdp-guest.service \
		"$mnt/etc/systemd/system/multi-user.target.wants/rxdp-guest.service"
	for u in serial-getty@ttyS0 getty@ getty-static e2scrub_reap; do
		ln -sf /dev/null "$mnt/etc/systemd/system/$u.service"
	done
	cp "$base/vmlinuz" "$base/initrd.img" "$work/img/"
	cp "$base/version" "$work/img/version"
	echo /lib/systemd/systemd >"$work/img/init"
	;;
bullseye)
	echo "variant.sh: Debian 11's kernel in the guest image" >&2
	apt_from bullseye
	# the kernel bullseye's linux-image-amd64 names (the metapackage
	# itself is bookworm's in the image)
	kpkg=$(in_root apt-cache show linux-image-amd64/bullseye |
		sed -n 's/^Depends: \(linux-image-5\.10[^ ,]*\).*/\1/p' | head -n 1)
	[ -n "$kpkg" ] || { echo "variant.sh: no bullseye kernel package" >&2; exit 1; }
	in_root apt-get install -y -qq --no-install-recommends "$kpkg" \
		>>"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
	rm -f "$mnt/etc/apt/sources.list.d/bullseye.list"
	kver=$(cd "$mnt/lib/modules" && ls -d 5.10.* | sort -V | tail -n 1)
	[ -f "$mnt/boot/vmlinuz-$kver" ] && [ -f "$mnt/boot/initrd.img-$kver" ] || {
		echo "variant.sh: no 5.10 kernel or initramfs in /boot" >&2
		exit 1
	}
	cp "$mnt/boot/vmlinuz-$kver" "$work/img/vmlinuz"
	cp "$mnt/boot/initrd.img-$kver" "$work/img/initrd.img"
	echo "$kver" >"$work/img/version"
	echo /sbin/rxdp-init >"$work/img/init"
	;;
backports)
	echo "variant.sh: trixie-backports' kernel in the guest image" >&2
	apt_from trixie-backports
	# the kernel trixie-backports' linux-image-amd64 names, and the
	# packages that hold its files (image, modules, base files), unpacked
	# rather than installed: their dependencies are Debian 13's
	# (linux-base >= 4.17), the image's user space Debian 12's, and the
	# guest needs only the kernel, its modules and an initramfs, which
	# bookworm's depmod and mkinitramfs make
	kver=$(in_root apt-cache show linux-image-amd64/trixie-backports |
		sed -n 's/^Depends: .*linux-image-\([0-9][^ ,]*\).*/\1/p' | head -n 1)
	[ -n "$kver" ] || { echo "variant.sh: no trixie-backports kernel package" >&2; exit 1; }
	debs=linux-image-$kver
	for p in linux-binary linux-modules linux-base; do
		in_root apt-cache show "$p-$kver" >/dev/null 2>&1 && debs="$debs $p-$kver"
	done
	mkdir -p "$mnt/tmp/debs"
	in_root sh -c "cd /tmp/debs && apt-get download -q $debs" >>"$work/apt.log" 2>&1 || {
		tail -n 30 "$work/apt.log" >&2
		exit 1
	}
	rm -f "$mnt/etc/apt/sources.list.d/trixie-backports.list"
	kernel_from_debs "$kver"
	;;
jammy)
	echo "variant.sh: Ubuntu 22.04's kernel in the guest image" >&2
	ubuntu=${RXDP_VM_UBUNTU:-http://archive.ubuntu.com/ubuntu}
	# Ubuntu Archive Automatic Signing Key (2018)
	ubuntu_fpr=F6ECB3762474EDA9D21B7022871920D1991BC93C
	u=$work/ubuntu
	mkdir -p "$u"
	fetch() { curl -fsS --retry 3 -o "$2" "$ubuntu/$1" || { echo "variant.sh: cannot fetch $ubuntu/$1" >&2; exit 1; }; }
	# sha_ok FILE SUM: FILE's SHA-256 is SUM
	sha_ok() {
		[ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ] ||
			{ echo "variant.sh: $1: SHA-256 mismatch" >&2; exit 1; }
	}
	fetch pool/main/u/ubuntu-keyring/ubuntu-keyring_2021.03.26_all.deb "$u/keyring.deb"
	dpkg-deb --fsys-tarfile "$u/keyring.deb" |
		tar -xO ./usr/share/keyrings/ubuntu-archive-keyring.gpg >"$u/keyring.gpg"
	fetch dists/jammy-updates/InRelease "$u/InRelease"
	gpgv --status-fd 1 --keyring "$u/keyring.gpg" --output "$u/Release" "$u/InRelease" \
		2>/dev/null | grep -q "^\[GNUPG:\] VALIDSIG $ubuntu_fpr " ||
		{ echo "variant.sh: jammy-updates' InRelease has no good signature by $ubuntu_fpr" >&2; exit 1; }
	idx=main/binary-amd64/Packages.xz
	sum=$(awk -v f="$idx" '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == f { print $1 }' "$u/Release")
	[ -n "$sum" ] || { echo "variant.sh: no $idx in jammy-updates' Release" >&2; exit 1; }
	fetch "dists/jammy-updates/$idx" "$u/Packages.xz"
	sha_ok "$u/Packages.xz" "$sum"
	xz -dc "$u/Packages.xz" >"$u/Packages"
	# field PKG NAME: the field NAME of package PKG
	field() {
		awk -v p="$1" -v f="$2:" '$1 == "Package:" { m = ($2 == p) } m && $1 == f { sub(/^[^ ]+ /, ""); print; exit }' "$u/Packages"
	}
	kver=$(field linux-image-generic Depends | grep -o 'linux-image-5\.15[^ ,]*' | head -n 1)
	kver=${kver#linux-image-}
	[ -n "$kver" ] || { echo "variant.sh: no 5.15 kernel in jammy-updates" >&2; exit 1; }
	mkdir -p "$mnt/tmp/debs"
	for p in linux-image-$kver linux-modules-$kver linux-modules-extra-$kver; do
		f=$(field "$p" Filename)
		[ -n "$f" ] || { echo "variant.sh: no $p in jammy-updates" >&2; exit 1; }
		fetch "$f" "$mnt/tmp/debs/$p.deb"
		sha_ok "$mnt/tmp/debs/$p.deb" "$(field "$p" SHA256)"
	done
	kernel_from_debs "$kver"
	;;
esac
rm -rf "$mnt"/var/cache/apt/archives/*.deb "$mnt"/var/lib/apt/lists/*
: >"$mnt/etc/resolv.conf"
cleanup_mounts() {
	for m in dev/pts dev proc sys; do umount "$mnt/$m"; done
	umount "$mnt"
}
cleanup_mounts
mv "$work/img" "$img"
echo "variant.sh: $img: kernel $(cat "$img/version"), init $(cat "$img/init"), built in $(($(date +%s) - t0)) s" >&2

# variants of older images, unused for a day
find "$cache" -maxdepth 1 -name "bookworm-*-$name-*" ! -path "$img" |
	while read -r old; do
		if [ -n "$(find "$old/init" -mmin +1440 2>/dev/null)" ]; then
			rm -rf "$old"
		fi
	done
echo "$img"
