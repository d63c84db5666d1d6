/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The RoCE path MTU an interface supports (pure; unit-tested). */
#ifndef RXDP_DAEMON_MTU_H
#define RXDP_DAEMON_MTU_H

#include <linux/types.h>

/*
 * The RoCE MTU for an interface MTU. Soft-RoCE's rule (rxe_param.h,
 * eth_mtu_int_to_enum()): subtract RXE_MAX_HDR_LENGTH (rxe_hdr.h: 80 bytes
 * for IP, UDP, BTH, extension headers and ICRC) and take the largest IB MTU
 * that fits. (The true worst case is 84: IPv6 40 + UDP 8 + BTH 12 + RETH 16
 * + ImmDt 4 + ICRC 4; it matters only for an interface MTU within 4 bytes
 * above ib_mtu + 80, and we do what Soft-RoCE does, for interoperability.)
 * Up to 4096, the largest IB MTU: a 4096-byte payload with its headers does
 * not fit one 4096-byte AF_XDP frame, and the data path carries it as two
 * (multi-buffer AF_XDP, XDP_USE_SG, Linux 6.6). On an older kernel rxdpd
 * binds without it and the engine clamps each QP's path MTU to the 2048
 * its frames hold.
 */
#define ROCE_MAX_HDR_LENGTH 80
#define RXDP_DATAPATH_MAX_MTU 5 /* IBV_MTU_4096 */

static inline __u32 rxdp_ib_mtu(__u32 if_mtu)
{
	__u32 room = if_mtu > ROCE_MAX_HDR_LENGTH ? if_mtu - ROCE_MAX_HDR_LENGTH
						  : 0;
	__u32 mtu = 1; /* IBV_MTU_256: the smallest there is */

	while (mtu < RXDP_DATAPATH_MAX_MTU && (256U << mtu) <= room)
		mtu++;
	return mtu;
}

#endif /* RXDP_DAEMON_MTU_H */
