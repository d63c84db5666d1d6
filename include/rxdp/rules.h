/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The receive rules the XDP program and the engine both apply to a packet
 * for a QP: the program first, on the wire's frame against qp_ctx, and the
 * engine again on its own record (the map can lag a modify by a packet, and
 * the engine must not trust what it did not check itself). One definition,
 * so the two cannot drift apart.
 */
#ifndef RXDP_RULES_H
#define RXDP_RULES_H

#include "psn.h"
#include "maps.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* IBTA 10.3.1: RESET and INIT take no packets, and neither does ERR */
static __always_inline int rxdp_state_takes_packets(__u32 state)
{
	return state == RXDP_QPS_RTR || state == RXDP_QPS_RTS ||
	       state == RXDP_QPS_SQD || state == RXDP_QPS_SQE;
}

/*
 * RC/UC: a packet comes from the QP's peer to the QP's own address (the
 * path's destination and source; Soft-RoCE's check_addr()). The path's
 * addresses are 16 bytes, IPv4 ones mapped (::ffff:a.b.c.d); the packet's
 * are given as they lie in its header, 16 bytes or 4. A QP before RTR has
 * no peer (all zero): nothing matches.
 */
static __always_inline int
rxdp_source_ip_ok(int pkt_v6, int path_v6, const __u8 *saddr, const __u8 *daddr,
		  const __u8 *peer_ip, const __u8 *local_ip)
{
	int off = pkt_v6 ? 0 : 12;

	if (!pkt_v6 != !path_v6)
		return 0;
	for (int i = 0; i < 16 - off; i++)
		if (saddr[i] != peer_ip[off + i] ||
		    daddr[i] != local_ip[off + i])
			return 0;
	return 1;
}

/*
 * ... and from the peer's MAC where the path resolved a unicast one (not a
 * multicast path's group address, not the zero MAC of an unresolved one)
 */
static __always_inline int rxdp_peer_mac_checked(const __u8 *peer_mac)
{
	return !(peer_mac[0] & 1) && (peer_mac[0] | peer_mac[1] | peer_mac[2] |
				      peer_mac[3] | peer_mac[4] | peer_mac[5]);
}

static __always_inline int rxdp_source_mac_ok(const __u8 *smac,
					      const __u8 *peer_mac)
{
	for (int i = 0; i < 6; i++)
		if (smac[i] != peer_mac[i])
			return 0;
	return 1;
}

/* UD: a datagram carries the receiving QP's Q_Key (IBTA 10.2.5) */
static __always_inline int rxdp_qkey_ok(__u32 pkt_qkey, __u32 qp_qkey)
{
	return pkt_qkey == qp_qkey;
}

/*
 * PSNs an RC request takes: one (IBTA 1.5's Atomic Write and Flush too,
 * whose answer is one zero-length read response), or for an RDMA Read
 * request one per response packet it asks for (IBTA 9.7.1.1); mtu_shift
 * is log2 of the payload bytes per packet.
 */
static __always_inline __u32 rxdp_read_npkts(__u32 len, __u32 mtu_shift)
{
	if (len == 0)
		return 1;
	return (__u32)(((__u64)len + (1U << mtu_shift) - 1) >> mtu_shift);
}

/* enum ibv_mtu (1 = 256 ... 5 = 4096) as a shift; anything else is 256 */
static __always_inline __u32 rxdp_mtu_shift(__u32 path_mtu)
{
	return 7 + (path_mtu >= 1 && path_mtu <= 5 ? path_mtu : 1);
}

/*
 * A response is for a request still outstanding: its PSN lies in the
 * requester's window [una, next) (IBTA 9.7.5.1); anything else is a stale
 * or forged response.
 */
static __always_inline int rxdp_resp_psn_ok(__u32 psn, __u32 una, __u32 next)
{
	return psn_in_window(psn, una, next);
}

#endif /* RXDP_RULES_H */
