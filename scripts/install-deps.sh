#!/usr/bin/env bash
# Install what rxdp needs to build and test on Debian 12 (bookworm), and
# nothing if it is all there. Idempotent; needs root only when something is
# missing. Debian 12 on amd64 is what it supports: the package names, and
# the versions the tests expect (libbpf 1.1, libxdp 1.3, rdma-core 44,
# perftest, Soft-RoCE's user space), are bookworm's. Elsewhere it stops
# with one line before it changes anything; RXDP_DEPS_ANY_OS=1 makes it
# try anyway (an apt-based system with bookworm's package names).
set -euo pipefail

supported="Debian 12 (bookworm) on amd64"
os=unknown
if [ -r /etc/os-release ]; then
	# shellcheck disable=SC1091
	os=$(. /etc/os-release && echo "${ID:-?} ${VERSION_ID:-?}")
fi
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
if [ "$os $arch" != "debian 12 amd64" ] && [ "${RXDP_DEPS_ANY_OS:-}" != 1 ]; then
	echo "install-deps: this is ${os/ / }, $arch; rxdp's dependencies install on $supported only (RXDP_DEPS_ANY_OS=1 tries anyway)" >&2
	exit 1
fi

pkgs=(
	make gcc clang llvm pkg-config libclang-rt-14-dev
	libbpf-dev libxdp-dev xdp-tools bpftool linux-libc-dev
	libmnl-dev libcmocka-dev libisal-dev libibverbs-dev
	perftest ibverbs-utils python3-pyverbs librdmacm-dev rdmacm-utils
	iproute2 tcpdump tshark python3 python3-scapy python3-fusepy strace
	iperf3 sockperf python3-matplotlib ethtool
	ucx-utils libucx-dev openmpi-bin libopenmpi-dev
	qemu-system-x86 debootstrap e2fsprogs curl gpgv xz-utils
	dpkg-dev debhelper lintian systemd man-db python3-prometheus-client gcovr
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
