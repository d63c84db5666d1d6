#!/usr/bin/env bash
# Install what rxdp needs on Debian 12, and nothing if it is all there.
# Idempotent; needs root only when something is missing.
set -euo pipefail

pkgs=(
	make gcc clang llvm pkg-config libclang-rt-14-dev
	libbpf-dev libxdp-dev xdp-tools bpftool linux-libc-dev
	libmnl-dev libcmocka-dev libisal-dev libibverbs-dev
	perftest ibverbs-utils python3-pyverbs librdmacm-dev rdmacm-utils
	iproute2 tcpdump tshark python3 python3-scapy python3-fusepy strace
	iperf3 sockperf python3-matplotlib ethtool
	ucx-utils libucx-dev openmpi-bin libopenmpi-dev
	qemu-system-x86 debootstrap e2fsprogs
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no, non-interactively
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
