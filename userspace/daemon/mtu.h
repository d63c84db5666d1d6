/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The RoCE path MTU an interface supports (pure; unit-tested). */
#ifndef RXDP_DAEMON_MTU_H
#define RXDP_DAEMON_MTU_H

#include <linux/types.h>
#include <stdio.h>

/*
 * The RoCE MTU for an interface MTU. Soft-RoCE's rule (rxe_param.h,
 * eth_mtu_int_to_enum()): subtract RXE_MAX_HDR_LENGTH (rxe_hdr.h: 80 bytes
 * for IP, UDP, BTH, extension headers and ICRC) and take the largest IB MTU
 * that fits. (The true worst case is 84: IPv6 40 + UDP 8 + BTH 12 + RETH 16
 * + ImmDt 4 + ICRC 4; it matters only for an interface MTU within 4 bytes
 * above ib_mtu + 80, and we do what Soft-RoCE does, for interoperability.)
 * Up to cap: 4096 (the largest IB MTU) where the kernel has multi-buffer
 * AF_XDP (XDP_USE_SG, Linux 6.6), which carries a 4096-byte payload with its
 * headers in two 4096-byte frames; 2048 before it (one frame holds that).
 */
#define ROCE_MAX_HDR_LENGTH 80
#define RXDP_MTU_CAP_SG 5 /* IBV_MTU_4096 */
#define RXDP_MTU_CAP_NOSG 4 /* IBV_MTU_2048 */

static inline __u32 rxdp_ib_mtu(__u32 if_mtu, __u32 cap)
{
	__u32 room = if_mtu > ROCE_MAX_HDR_LENGTH ? if_mtu - ROCE_MAX_HDR_LENGTH
						  : 0;
	__u32 mtu = 1; /* IBV_MTU_256: the smallest there is */

	while (mtu < cap && (256U << mtu) <= room)
		mtu++;
	return mtu;
}

/*
 * The largest RoCE frame of a path MTU (enum ibv_mtu), Ethernet header to
 * ICRC: Ethernet (14) and a VLAN tag (4), the true worst case of the
 * headers (84, above) and the payload
 */
static inline __u32 rxdp_roce_max_frame(__u32 ib_mtu)
{
	return 14 + 4 + 84 + (128U << ib_mtu);
}

/* The cap for a kernel release ("6.18.0-rc1", uname -r) */
static inline __u32 rxdp_mtu_cap(const char *release)
{
	unsigned int major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return RXDP_MTU_CAP_NOSG;
	return major > 6 || (major == 6 && minor >= 6) ? RXDP_MTU_CAP_SG
						       : RXDP_MTU_CAP_NOSG;
}

#endif /* RXDP_DAEMON_MTU_H */
