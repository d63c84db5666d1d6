# The guest tests: two Debian 12 guests under QEMU (tests/vm/lib.sh) on
# Debian's stock kernel, joined by virtio-net; last, as they take longest.
#  image.sh  builds the guests' image from Debian's packages once (cached in
#            /var/cache/rxdp-vm; 2 to 4 minutes, then nothing)
#  rxe.sh    rxdp against the kernel's Soft-RoCE, each in each role, and a
#            capture tshark decodes
#  rxdp.sh   rxdp to rxdp over virtio-net with native XDP
#  oldkernel.sh  Debian 11's 5.10 (variant.sh bullseye): rxdp-loader refuses
#            it in one line naming the BPF atomics it lacks
#  jammy.sh  Ubuntu 22.04's 5.15 (variant.sh jammy), the oldest kernel
#            rxdp claims: rxdp to rxdp on the single-buffer XDP program
#  zerocopy.sh  rxdp to rxdp with zero-copy AF_XDP, on trixie-backports'
#            kernel (variant.sh backports: virtio-net has zero-copy from
#            Linux 6.13) and virtio-net devices with the DMA API
#            (iommu_platform=on) and two queue pairs: every socket's mode
#            seen three ways, RC/UC/UD streams byte-checked
#            (wirecheck), perftest's figures, RC through loss
#  coexist.sh  rxdp beside Soft-RoCE in the same guests (a second link
#            each): one ibv_devices listing both, one process using both,
#            traffic on each through rxdp's library (LD_LIBRARY_PATH in
#            one guest, installed system-wide in the other), rping on
#            Soft-RoCE with Debian's librdmacm over rxdp's libibverbs,
#            and rping, ucmatose, udaddy on Soft-RoCE through rxdp's
#  service.sh  the Debian package in guests whose PID 1 is systemd
#            (variant.sh systemd): rxdp.service configured, started, a
#            pingpong through the installed files, restarted when killed,
#            stopped
TESTS += tests/vm/image.sh tests/vm/rxe.sh tests/vm/rxdp.sh tests/vm/oldkernel.sh \
	 tests/vm/jammy.sh tests/vm/zerocopy.sh tests/vm/coexist.sh tests/vm/service.sh
