/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The memory a verbs context shares with rxdpd: rxdp's "hardware" queues.
 *
 * rxdpd is the HCA: it runs the transport for every process. What an
 * application and rxdpd share are the queues, in memfds rxdpd creates, sizes,
 * seals (no shrinking or growing) and maps before it hands the fd over:
 *
 *   CQ   struct rxdp_hca_cq + ring of struct ibv_wc. rxdpd produces (prod),
 *        the application consumes (cons) and arms (armed).
 *   QP   struct rxdp_hca_qp, then the SQ ring, then the RQ ring. The
 *        application produces WQEs (prod); rxdpd takes them (cons) into its
 *        own memory, checks them there, and tells when their slots are free
 *        again (done: SQ WQEs retired, RQ WQEs consumed by a message).
 *   SRQ  struct rxdp_hca_wq, then its ring, as a QP's RQ.
 *   device page  struct rxdp_hca_dev, read-only for applications: whether
 *        the data-path thread sleeps (then a post writes the doorbell fd).
 *
 * rxdpd trusts nothing it reads here: a WQE is copied out of the ring before
 * it is checked, and a bad index or WQE hurts only the QP it belongs to.
 * Each index is written by one side only (named beside it), with release
 * stores after the entries they publish, read with acquire loads.
 */
#ifndef RXDP_COMMON_HCA_H
#define RXDP_COMMON_HCA_H

#include <infiniband/verbs.h>
#include <linux/types.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ibta15.h"
#include "rxdp/opcodes.h"

#define RXDP_HCA_LINE 64
#define RXDP_HCA_MAX_CQE 65536 /* entries in one CQ */

/* A CQ: header, then size entries (size a power of two) */
struct rxdp_hca_cq {
	_Atomic __u32 prod; /* rxdpd: entries written */
	_Atomic __u32 overflow; /* rxdpd: 1 once a completion was lost */
	__u8 pad0[RXDP_HCA_LINE - 8];
	_Atomic __u32 cons; /* application: entries read */
	/*
	 * application: 1 (next completion) or 2 (next solicited or error
	 * one) arms the CQ; rxdpd swaps it back to 0 when it sends the event
	 */
	_Atomic __u32 armed;
	__u8 pad1[RXDP_HCA_LINE - 8];
	struct ibv_wc ring[];
};

/* A work queue (SQ, RQ or SRQ) ring: slots of a fixed stride */
struct rxdp_hca_wq {
	_Atomic __u32 prod; /* application: WQEs posted */
	/*
	 * application: the CPU it last posted from, a hint (rxdpd keeps its
	 * data-path thread off the CPUs of clients that post, so both run)
	 */
	_Atomic __u32 cpu;
	__u8 pad0[RXDP_HCA_LINE - 8];
	_Atomic __u32 cons; /* rxdpd: WQEs taken into its memory */
	_Atomic __u32 done; /* rxdpd: WQEs whose slots may be reused */
	__u32 size; /* rxdpd, fixed: slots (a power of two) */
	__u32 stride; /* rxdpd, fixed: bytes per slot */
	__u8 pad1[RXDP_HCA_LINE - 16];
};

struct rxdp_hca_qp {
	struct rxdp_hca_wq sq;
	struct rxdp_hca_wq rq;
	_Atomic __u32 state; /* rxdpd: enum ibv_qp_state, as the engine has it */
	__u8 pad[RXDP_HCA_LINE - 4];
	/* then the SQ ring at sq_off, the RQ ring at rq_off (rxdp_hca_qp_layout) */
};

/* The device page: one per device, mapped read-only by applications */
struct rxdp_hca_dev {
	_Atomic __u32 sleeping; /* rxdpd: 1 while the data-path thread blocks */
	/* rxdpd: 1 while that thread serves a stream, spinning (not FIFO) */
	_Atomic __u32 streaming;
	__u8 pad[RXDP_HCA_LINE - 8];
};

/*
 * What rxdpd writes to a context's async event pipe (one record per
 * event): cookie is the object the library named when it created it (0
 * for port and device events).
 */
struct rxdp_hca_event {
	__u32 type; /* enum ibv_event_type */
	__u32 port; /* port events: 1 */
	__u64 cookie;
};

/*
 * Small sends are gathered by the library: when the SGEs of a Send or an
 * RDMA Write (with immediate or not) hold at most RXDP_HCA_GATHER_MAX bytes
 * and lie in MRs the library registered on the QP's PD, it copies the bytes
 * after the SGE list and sets RXDP_HCA_SEND_GATHERED. rxdpd checks the SGEs
 * (keys, bounds, PD) as for any WQE and sends the bytes from the slot: it
 * need not read the owner's memory (a system call) for them. Reading the
 * buffers when the WR is posted is what an HCA may do too (IBTA 10.7.2.2:
 * they must not change until the WR completes).
 */
#define RXDP_HCA_GATHER_MAX 64
#define RXDP_HCA_SEND_GATHERED (1U << 31) /* in rxdp_hca_swqe.send_flags */

/*
 * A send WQE as posted: 64 bytes, then SGEs or inline data. The memory
 * window operations carry no SGEs and use the fields thus:
 *   IBV_WR_SEND_WITH_INV, IBV_WR_LOCAL_INV: imm_data is the R_Key to
 *     invalidate (ibv_send_wr's invalidate_rkey, host order)
 *   IBV_WR_BIND_MW: rkey the window's new R_Key, remote_qpn its R_Key now
 *     (it finds the window), remote_qkey the region's L_Key (0: unbind, a
 *     type 1 window), remote_addr and compare_add the window's address and
 *     length, swap its access flags
 * IBTA 1.5's operations carry their arguments in the WQE, no SGEs (only
 * ibv_wr_atomic_write and ibv_wr_flush make them: ibv_send_wr has no place
 * for what they need):
 *   IBV_WR_ATOMIC_WRITE: remote_addr and rkey; compare_add holds the 8
 *     bytes to write as the application gave them (they go on the wire and
 *     into the target in that order)
 *   RXDP_WR_FLUSH: remote_addr and rkey; compare_add the length, swap the
 *     placement type (bits 7..0) and the selectivity level (bits 15..8)
 */
struct rxdp_hca_swqe {
	__u64 wr_id;
	__u32 opcode; /* enum ibv_wr_opcode */
	__u32 send_flags; /* enum ibv_send_flags */
	__u32 imm_data; /* network order */
	__u32 num_sge; /* with IBV_SEND_INLINE: the inline length in bytes */
	__u64 remote_addr; /* RDMA: remote address; atomics: remote address */
	__u32 rkey;
	__u32 ah; /* UD: the address handle's handle */
	__u32 remote_qpn; /* UD */
	__u32 remote_qkey; /* UD */
	__u64 compare_add; /* atomics */
	__u64 swap;
	struct ibv_sge sge[]; /* or the inline bytes */
};

/* A receive WQE: 16 bytes, then SGEs */
struct rxdp_hca_rwqe {
	__u64 wr_id;
	__u32 num_sge;
	__u32 pad;
	struct ibv_sge sge[];
};

/* rxdp_wr_opcode_info[] names Flush by its number */
_Static_assert(RXDP_WR_FLUSH == 14 && RXDP_WR_FLUSH < RXDP_WR_OPCODE_N,
	       "flush");
_Static_assert(sizeof(struct rxdp_hca_cq) == 2 * RXDP_HCA_LINE, "cq header");
_Static_assert(sizeof(struct rxdp_hca_wq) == 2 * RXDP_HCA_LINE, "wq header");
_Static_assert(sizeof(struct rxdp_hca_qp) == 5 * RXDP_HCA_LINE, "qp header");
_Static_assert(sizeof(struct rxdp_hca_swqe) == 64, "send wqe");
_Static_assert(sizeof(struct rxdp_hca_rwqe) == 16, "recv wqe");

static inline __u32 rxdp_hca_pow2(__u32 n)
{
	__u32 s = 1;

	while (s < n)
		s <<= 1;
	return s;
}

static inline __u32 rxdp_hca_align(__u32 n)
{
	return (n + RXDP_HCA_LINE - 1) & ~(__u32)(RXDP_HCA_LINE - 1);
}

/*
 * Small receives are scattered by the library ("scatter to CQE", as HCAs
 * do it): the bytes of a one-packet Send (on UD, the GRH first), at most
 * RXDP_HCA_SCATTER_MAX of them landing in at most RXDP_HCA_SCATTER_SGES
 * pieces of the receive WQE's buffers, go into the CQE's data slot with
 * where they belong (buffers rxdpd checked against the WQE's MRs as for any
 * write), and the CQE's vendor_err says so. ibv_poll_cq copies them there
 * and clears vendor_err before it returns the CQE. An application learns
 * of a receive only from its CQE, so what it sees is the same; rxdpd saves
 * a write into the owner's memory (a system call) per small message.
 */
#define RXDP_HCA_SCATTER_MAX 96
#define RXDP_HCA_SCATTER_SGES 2
#define RXDP_HCA_WC_SCATTER 0x5ca7u /* vendor_err of a successful CQE */

struct rxdp_hca_cqd {
	__u64 addr[RXDP_HCA_SCATTER_SGES]; /* the owner's addresses */
	__u32 len[RXDP_HCA_SCATTER_SGES]; /* bytes of data for each, in turn */
	__u8 data[RXDP_HCA_SCATTER_MAX];
	__u8 pad[8];
};

_Static_assert(sizeof(struct rxdp_hca_cqd) == 2 * RXDP_HCA_LINE, "cqe data");

/* A CQ's memfd: the header, the ring, then a data slot per entry */
static inline size_t rxdp_hca_cq_data_off(__u32 size)
{
	return rxdp_hca_align((__u32)sizeof(struct rxdp_hca_cq) +
			      size * (__u32)sizeof(struct ibv_wc));
}

static inline size_t rxdp_hca_cq_bytes(__u32 size)
{
	return rxdp_hca_cq_data_off(size) +
	       (size_t)size * sizeof(struct rxdp_hca_cqd);
}

static inline struct rxdp_hca_cqd *rxdp_hca_cq_data(struct rxdp_hca_cq *cq,
						    __u32 size)
{
	return (struct rxdp_hca_cqd *)((char *)cq + rxdp_hca_cq_data_off(size));
}

/*
 * A CQ with completion timestamps (ibv_create_cq_ex): after its data slots,
 * one __u64 per entry, written by rxdpd before the entry is published.
 */
static inline size_t rxdp_hca_cq_ts_bytes(__u32 size)
{
	return rxdp_hca_cq_bytes(size) + (size_t)size * sizeof(__u64);
}

static inline __u64 *rxdp_hca_cq_ts(struct rxdp_hca_cq *cq, __u32 size)
{
	return (__u64 *)((char *)cq + rxdp_hca_cq_bytes(size));
}

/*
 * Bytes of a send WQE slot for max_sge SGEs and what they gather, or
 * max_inline bytes inline
 */
static inline __u32 rxdp_hca_swqe_stride(__u32 max_sge, __u32 max_inline)
{
	__u32 s = max_sge * (__u32)sizeof(struct ibv_sge) + RXDP_HCA_GATHER_MAX;

	if (max_inline > s)
		s = max_inline;
	return rxdp_hca_align((__u32)sizeof(struct rxdp_hca_swqe) + s);
}

static inline __u32 rxdp_hca_rwqe_stride(__u32 max_sge)
{
	return (__u32)sizeof(struct rxdp_hca_rwqe) +
	       (max_sge ? max_sge : 1) * (__u32)sizeof(struct ibv_sge);
}

/* Where the rings of a QP's memfd are, and its size; rq_size 0: no RQ */
struct rxdp_hca_qp_layout {
	size_t sq_off, rq_off, bytes;
};

static inline void rxdp_hca_qp_layout(__u32 sq_size, __u32 sq_stride,
				      __u32 rq_size, __u32 rq_stride,
				      struct rxdp_hca_qp_layout *l)
{
	l->sq_off = sizeof(struct rxdp_hca_qp);
	l->rq_off = l->sq_off + (size_t)sq_size * sq_stride;
	l->rq_off = (l->rq_off + RXDP_HCA_LINE - 1) &
		    ~(size_t)(RXDP_HCA_LINE - 1);
	l->bytes = l->rq_off + (size_t)rq_size * rq_stride;
}

/*
 * Slot idx of a ring. rxdpd passes the size and stride it keeps itself:
 * the copies in struct rxdp_hca_wq are the application's to read.
 */
static inline void *rxdp_hca_slot(void *ring, __u32 idx, __u32 size,
				  __u32 stride)
{
	return (char *)ring + (size_t)(idx & (size - 1)) * stride;
}

/* Opcodes whose local buffers are only read: their bytes may be gathered */
static inline int rxdp_hca_gatherable(__u32 opcode)
{
	return (rxdp_wr_flags(opcode) & RXDP_WR_GATHER) != 0;
}

/*
 * The rules a send WR must keep, checked by the verbs library when it is
 * posted (EINVAL, libibverbs' way) and by rxdpd again when it takes it.
 * total: the sum of the SGE lengths (the inline length when inline; rxdpd
 * passes num_sge 0 for an inline WQE, whose SGEs were gathered already).
 */
struct rxdp_hca_qp_caps {
	enum ibv_qp_type qp_type;
	__u32 max_send_sge;
	__u32 max_inline;
};

static inline int rxdp_hca_send_check(const struct rxdp_hca_qp_caps *c,
				      __u32 opcode, __u32 send_flags,
				      __u32 num_sge, __u64 total,
				      __u64 remote_addr, __u32 sge0_len)
{
	__u32 f = rxdp_wr_flags(opcode);

	/* the QP types of each opcode: rxdp_wr_opcode_info[] */
	if (!(f & rxdp_wr_qp_type(c->qp_type)))
		return EINVAL;
	/* inline data is payload: only what reads local buffers has any */
	if ((send_flags & IBV_SEND_INLINE) && !(f & RXDP_WR_READS))
		return EINVAL;
	if (f & RXDP_WR_LOCAL) /* no payload, no SGEs */
		return 0;
	/* IBTA 9.4.5 and A19: 8 bytes at an 8-byte aligned address */
	if ((f & RXDP_WR_ATOMIC) && (remote_addr & 7))
		return EINVAL;
	/* the result of a Compare & Swap or a Fetch & Add: 8 bytes, one SGE */
	if ((f & RXDP_WR_ATOMIC) && (f & RXDP_WR_WRITES) &&
	    (num_sge != 1 || sge0_len < 8))
		return EINVAL;
	/* A19: Atomic Write and Flush have no local buffers */
	if (!(f & (RXDP_WR_READS | RXDP_WR_WRITES)) && num_sge)
		return EINVAL;
	if (num_sge > c->max_send_sge || total > (1ULL << 31))
		return EINVAL;
	if ((send_flags & IBV_SEND_INLINE) && total > c->max_inline)
		return EINVAL;
	if ((send_flags & RXDP_HCA_SEND_GATHERED) &&
	    ((send_flags & IBV_SEND_INLINE) || total > RXDP_HCA_GATHER_MAX ||
	     !rxdp_hca_gatherable(opcode)))
		return EINVAL;
	return 0;
}

/*
 * A Flush's own arguments (A19): at most 2^31 bytes (a RETH's DMA length,
 * as any RDMA operation's), one or both placement types and nothing else,
 * selectivity range or region
 */
static inline int rxdp_hca_flush_check(__u64 len, __u32 type, __u32 level)
{
	if (len > (1ULL << 31) || !type ||
	    (type & ~(RXDP_FLUSH_GLOBAL | RXDP_FLUSH_PERSISTENT)) ||
	    level > RXDP_FLUSH_MR)
		return EINVAL;
	return 0;
}

/* --- the owner's side (hca_post.c) -------------------------------------- */

/* A work queue as its poster sees it: the header, its slots, their geometry */
struct rxdp_hca_ring {
	struct rxdp_hca_wq *wq;
	void *slots;
	__u32 size, stride;
};

/*
 * What a poster brings: the handle of a UD WR's address handle (0: not
 * one), and (or NULL) the gathering of a small send's bytes into dst,
 * true if it did (RXDP_HCA_SEND_GATHERED)
 */
struct rxdp_hca_poster {
	__u32 (*ah_handle)(struct ibv_ah *ah);
	bool (*gather)(void *arg, const struct ibv_send_wr *wr, __u8 *dst);
	void *arg;
};

/*
 * The arguments of an Atomic Write (8 bytes at val) and of a Flush into a
 * WQE whose wr_id, opcode and send_flags are set (the layout above)
 */
void rxdp_hca_swqe_atomic_write(struct rxdp_hca_swqe *d, __u32 rkey,
				__u64 remote_addr, const void *val);
void rxdp_hca_swqe_flush(struct rxdp_hca_swqe *d, __u32 rkey, __u64 remote_addr,
			 __u64 len, __u8 type, __u8 level);
/*
 * A WQE built in its slot (the ibv_wr_* calls build them there) checked as
 * ibv_post_send checks a WR: 0 or EINVAL
 */
int rxdp_hca_swqe_check(const struct rxdp_hca_qp_caps *c,
			const struct rxdp_hca_swqe *d);
/* Post one WQE built already, checked so: 0, EINVAL or ENOMEM (full) */
int rxdp_hca_post_swqe(const struct rxdp_hca_ring *r,
		       const struct rxdp_hca_qp_caps *c,
		       const struct rxdp_hca_swqe *s);
/* One send WR into slot d (checked already; total: its SGEs' bytes) */
void rxdp_hca_swqe_fill(struct rxdp_hca_swqe *d, enum ibv_qp_type type,
			const struct ibv_send_wr *wr, __u64 total,
			const struct rxdp_hca_poster *p);
/*
 * ibv_post_send / ibv_post_recv on a ring: each WR checked, written and
 * published in turn; 0, or a positive errno with *bad at the first WR not
 * posted (EINVAL, ENOMEM: full), as libibverbs
 */
int rxdp_hca_post_send(const struct rxdp_hca_ring *r,
		       const struct rxdp_hca_qp_caps *c,
		       const struct rxdp_hca_poster *p, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad);
int rxdp_hca_post_recv(const struct rxdp_hca_ring *r, __u32 max_sge,
		       struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* Up to n CQEs of a CQ of size entries, small receives scattered: count */
int rxdp_hca_poll(struct rxdp_hca_cq *sh, __u32 size, int n, struct ibv_wc *wc);
void rxdp_hca_cq_scatter(const struct rxdp_hca_cqd *d);

#endif /* RXDP_COMMON_HCA_H */
