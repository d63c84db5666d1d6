/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Layouts of the BPF maps that the XDP program, the daemon and the engine
 * share. Fixed-width fields and explicit padding only: these bytes are read
 * by three programs and by bpftool.
 *
 * Every field has one writer: the XDP program, or in userspace the engine's
 * qpmap.c (the engine's QP is the one record of a QP; rxdpd calls the
 * engine to create, modify and destroy it, and cleans a previous daemon's
 * entries through the same file).
 *
 * qp_ctx  (HASH, QPN -> struct rxdp_qp_ctx): a QP's configuration. Written
 *         by qpmap.c only, and only by whole-element replacement
 *         (bpf_map_update_elem on a hash map swaps in a new element under
 *         RCU), so the XDP program never sees a half-written context.
 * qp_psn  (ARRAY, BPF_F_MMAPABLE, QPN & RXDP_QP_INDEX_MASK -> struct
 *         rxdp_qp_psn): the sequence state that changes per packet.
 *         qpmap.c claims the slot (qpn) and seeds epsn at RTR, before any
 *         request can pass; after that the XDP program alone advances epsn
 *         as in-order requests pass (the engine sees them later, so its view
 *         lags the wire) and sets flags. The engine keeps una_psn/next_psn
 *         current through a shared mapping with plain aligned 32-bit stores
 *         (no syscall per packet), and each QP's rate and alpha beside
 *         them. The rules both sides apply to a packet are
 *         include/rxdp/rules.h.
 * qp_stats (PERCPU_ARRAY, same index -> struct rxdp_qp_stats)
 * stats   (PERCPU_ARRAY, enum rxdp_verdict -> __u64 packets)
 * xsks    (XSKMAP, owner_slot * RXDP_MAX_QUEUES + rx queue -> AF_XDP socket):
 *         rxdpd's sockets, slot 0 one per queue; an engine beyond one per
 *         queue has its own slot (its sockets share a slot-0 socket's
 *         queue). A QP's packets go to its engine's slot, else slot 0.
 * mcast   (HASH, struct rxdp_mcast_key -> struct rxdp_mcast_grp): the
 *         multicast groups with members on this device. Written by the
 *         engine's qpmap.c only (an entry while the group has an attached
 *         QP); the program accepts datagrams to QPN 0xFFFFFF only for
 *         these groups' addresses and drops the rest (drop_mcast_no_group).
 */
#ifndef RXDP_MAPS_H
#define RXDP_MAPS_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#endif

/* Transport types; the numbers are libibverbs' enum ibv_qp_type */
enum rxdp_qp_type {
	RXDP_QPT_RC = 2,
	RXDP_QPT_UC = 3,
	RXDP_QPT_UD = 4,
};

/* QP states; the numbers are libibverbs' enum ibv_qp_state (IBTA 10.3.1) */
enum rxdp_qp_state {
	RXDP_QPS_RESET = 0,
	RXDP_QPS_INIT = 1,
	RXDP_QPS_RTR = 2,
	RXDP_QPS_RTS = 3,
	RXDP_QPS_SQD = 4,
	RXDP_QPS_SQE = 5,
	RXDP_QPS_ERR = 6,
};

/* rxdp_qp_ctx.flags */
#define RXDP_QPF_SQ_DRAINING (1U << 0)
#define RXDP_QPF_PEER_IPV6 (1U << 1) /* peer_ip/local_ip are IPv6 addresses */
#define RXDP_QPF_PEER_MAC (1U << 2) /* peer_mac is checked too */

struct rxdp_qp_ctx {
	__u32 qpn;
	__u8 qp_type; /* enum rxdp_qp_type */
	__u8 state; /* enum rxdp_qp_state */
	__u16 pkey; /* P_Key of the QP's pkey_index */
	__u32 dest_qpn; /* RC/UC: the connected peer's QPN */
	__u32 qkey; /* UD: Q_Key checked against the DETH */
	__u32 owner_slot; /* which engine's XSKs receive this QP's packets */
	__u32 owner_pid;
	__u32 flags; /* RXDP_QPF_* */
	__u8 path_mtu; /* enum ibv_mtu of its packets: 1=256 ... 5=4096 */
	__u8 pad0[3];
	__u32 access_flags; /* enum ibv_access_flags granted to remote peers */
	__u32 pad1;
	/*
	 * RC/UC, from RTR on: the only source the QP takes packets from, as
	 * Soft-RoCE's check_addr() and hardware HCAs have it. A packet must
	 * come from peer_ip to local_ip (the path's destination and source
	 * addresses; IPv4 in the last 4 bytes of each unless
	 * RXDP_QPF_PEER_IPV6) and, with RXDP_QPF_PEER_MAC, from peer_mac (the
	 * MAC the path resolved to on the same link). Anything else is
	 * dropped as drop_bad_source before it touches the PSN state; the
	 * engine checks again. All zero before RTR: nothing matches.
	 */
	__u8 peer_ip[16];
	__u8 local_ip[16];
	__u8 peer_mac[6];
	__u8 pad2[2];
};

/*
 * A multicast group: its GID, the destination address of its datagrams
 * (IPv6, or IPv4 mapped ::ffff:a.b.c.d as a RoCE v2 GID has it)
 */
struct rxdp_mcast_key {
	__u8 gid[16];
};

struct rxdp_mcast_grp {
	__u32 members; /* QPs attached (informational: the engine counts) */
	__u32 pad;
};

/* rxdp_qp_psn.flags, set by the XDP program with atomic ops */
#define RXDP_PSNF_NAK_SENT (1U << 0) /* an OOS request was let through */
/*
 * set by the engine: its responder holds requests that arrive past a gap
 * (selective retransmission), so every request up to RXDP_HOLD_WINDOW
 * PSNs ahead of epsn passes
 */
#define RXDP_PSNF_HOLD (1U << 1)
#define RXDP_HOLD_WINDOW 256

struct rxdp_qp_psn {
	__u32 qpn; /* the QP this slot belongs to now; 0 when free */
	__u32 epsn; /* responder: next expected request PSN, as XDP saw it */
	__u32 una_psn; /* requester: oldest unacknowledged PSN */
	__u32 next_psn; /* requester: PSN of the next packet to send */
	__u32 flags; /* RXDP_PSNF_* */
	/*
	 * 1 + the CPU the program last passed one of this QP's packets on
	 * (0: none yet): where the interface's receive work for it runs,
	 * which its engine keeps off (engine.c, placement)
	 */
	__u32 rx_cpu;
	/*
	 * the engine's, for bpftool (the program never reads them): the
	 * requester's rate as its congestion control has it (kbit/s, at most
	 * 2^32 - 1) and DCQCN's alpha (1/1024), as of the last ACK that moved
	 * una_psn or the last CNP
	 */
	__u32 cc_rate_kbps;
	__u32 cc_alpha;
};

struct rxdp_qp_stats {
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 rx_drops; /* packets for this QP that the program dropped */
	__u64 pad;
};

/*
 * Every verdict the XDP program can reach. Each packet is counted once,
 * under exactly one of these. Keep rxdp_verdict_names[] in step.
 */
enum rxdp_verdict {
	RXDP_V_PASS_NOT_ROCE = 0, /* not UDP 4791: handed to the kernel */
	RXDP_V_REDIRECT, /* steered to the owner's AF_XDP socket */
	RXDP_V_DROP_TRUNCATED, /* shorter than its headers + pad + ICRC */
	RXDP_V_DROP_BAD_TVER, /* BTH transport version not 0 */
	RXDP_V_DROP_BAD_OPCODE, /* unknown opcode */
	RXDP_V_DROP_OPCODE_QP_TYPE, /* opcode not allowed on the QP's type */
	RXDP_V_DROP_UNKNOWN_QP, /* no QP with the destination QPN */
	RXDP_V_DROP_QP_STATE, /* QP in RESET, INIT or ERR */
	RXDP_V_DROP_BAD_PKEY, /* P_Key does not match the QP's */
	RXDP_V_DROP_BAD_QKEY, /* UD: Q_Key does not match */
	RXDP_V_DROP_PSN_OOS, /* RC request ahead of the expected PSN, NAK already sent */
	RXDP_V_DROP_PSN_STALE_RESP, /* RC response outside the outstanding window */
	RXDP_V_DROP_NO_XSK, /* the owner has no socket on this RX queue */
	RXDP_V_DROP_BAD_UDP, /* UDP length inconsistent with the packet */
	RXDP_V_DROP_IP_FRAGMENT, /* IPv4 fragment: RoCEv2 never fragments */
	RXDP_V_DROP_BAD_SOURCE, /* RC/UC: not from the QP's peer (qp_ctx) */
	RXDP_V_DROP_MCAST_NO_GROUP, /* to QPN 0xFFFFFF: no member on this device */
	RXDP_V_MAX,
};

/* RC PSN classification, for the engine's and the tests' benefit */
enum rxdp_psn_class {
	RXDP_PSN_EXPECTED = 0,
	RXDP_PSN_DUPLICATE,
	RXDP_PSN_AHEAD,
	RXDP_PSN_RESP_INSIDE,
	RXDP_PSN_RESP_OUTSIDE,
};

#ifndef __bpf__
static const char *const rxdp_verdict_names[RXDP_V_MAX] = {
	[RXDP_V_PASS_NOT_ROCE] = "pass_not_roce",
	[RXDP_V_REDIRECT] = "redirect",
	[RXDP_V_DROP_TRUNCATED] = "drop_truncated",
	[RXDP_V_DROP_BAD_TVER] = "drop_bad_tver",
	[RXDP_V_DROP_BAD_OPCODE] = "drop_bad_opcode",
	[RXDP_V_DROP_OPCODE_QP_TYPE] = "drop_opcode_qp_type",
	[RXDP_V_DROP_UNKNOWN_QP] = "drop_unknown_qp",
	[RXDP_V_DROP_QP_STATE] = "drop_qp_state",
	[RXDP_V_DROP_BAD_PKEY] = "drop_bad_pkey",
	[RXDP_V_DROP_BAD_QKEY] = "drop_bad_qkey",
	[RXDP_V_DROP_PSN_OOS] = "drop_psn_oos",
	[RXDP_V_DROP_PSN_STALE_RESP] = "drop_psn_stale_resp",
	[RXDP_V_DROP_NO_XSK] = "drop_no_xsk",
	[RXDP_V_DROP_BAD_UDP] = "drop_bad_udp",
	[RXDP_V_DROP_IP_FRAGMENT] = "drop_ip_fragment",
	[RXDP_V_DROP_BAD_SOURCE] = "drop_bad_source",
	[RXDP_V_DROP_MCAST_NO_GROUP] = "drop_mcast_no_group",
};
#endif

_Static_assert(sizeof(struct rxdp_qp_ctx) == 80, "qp_ctx layout");
_Static_assert(sizeof(struct rxdp_qp_psn) == 32, "qp_psn layout");
_Static_assert(sizeof(struct rxdp_qp_stats) == 32, "qp_stats layout");
_Static_assert(sizeof(struct rxdp_mcast_key) == 16, "mcast key layout");
_Static_assert(sizeof(struct rxdp_mcast_grp) == 8, "mcast layout");

#endif /* RXDP_MAPS_H */
