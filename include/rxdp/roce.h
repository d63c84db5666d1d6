/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 wire formats: the InfiniBand transport headers carried in UDP 4791.
 *
 * Shared by the XDP program and userspace. Every multi-byte field is
 * big-endian on the wire and is read and written only through the accessors
 * below, which do every byte swap. Layouts follow IBTA Vol 1, 9.2-9.3 and
 * RoCEv2 (Annex A17).
 */
#ifndef RXDP_ROCE_H
#define RXDP_ROCE_H

#ifdef __bpf__
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#define rxdp_ntohs bpf_ntohs
#define rxdp_htons bpf_htons
#define rxdp_ntohl bpf_ntohl
#define rxdp_htonl bpf_htonl
#define rxdp_be64_to_cpu bpf_be64_to_cpu
#define rxdp_cpu_to_be64 bpf_cpu_to_be64
#else
#include <linux/types.h>
#include <endian.h>
#include <arpa/inet.h>
#define rxdp_ntohs ntohs
#define rxdp_htons htons
#define rxdp_ntohl ntohl
#define rxdp_htonl htonl
#define rxdp_be64_to_cpu be64toh
#define rxdp_cpu_to_be64 htobe64
#endif

#define ROCE_V2_UDP_PORT 4791
#define ROCE_ICRC_LEN 4
#define ROCE_PSN_MASK 0xffffffU
#define ROCE_QPN_MASK 0xffffffU
#define ROCE_DEFAULT_PKEY 0xffff
#define ROCE_PKEY_MEMBER_BIT 0x8000
#define ROCE_GRH_LEN 40 /* the GRH area at the head of a UD receive buffer */

/* Base Transport Header, IBTA 9.2 */
struct roce_bth {
	__u8 opcode;
	__u8 flags; /* SE:1 M:1 PadCnt:2 TVer:4 */
	__be16 pkey;
	__be32 qpn; /* FECN:1 BECN:1 Resv:6 DestQP:24 */
	__be32 apsn; /* AckReq:1 Resv:7 PSN:24 */
} __attribute__((packed));

#define ROCE_BTH_SE 0x80
#define ROCE_BTH_MIG 0x40
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_PAD_MASK 0x30
#define ROCE_BTH_TVER_MASK 0x0f
#define ROCE_BTH_FECN 0x80000000U
#define ROCE_BTH_BECN 0x40000000U
#define ROCE_BTH_ACKREQ 0x80000000U
/*
 * rxdp's own use of the first reserved bit after AckReq, on a PSN sequence
 * NAK only: "the responder holds the requests after this PSN; resend this
 * one alone" (selective retransmission between rxdp peers). Other peers
 * send it 0, as IBTA 9.2 has reserved bits sent, and ignore it on receipt;
 * the ICRC covers it.
 */
#define ROCE_BTH_RXDP_HELD 0x40000000U

/* RDMA Extended Transport Header, IBTA 9.3.3 */
struct roce_reth {
	__be64 va;
	__be32 rkey;
	__be32 dma_len;
} __attribute__((packed));

/* ACK Extended Transport Header, IBTA 9.3.5 */
struct roce_aeth {
	__be32 smsn; /* Syndrome:8 MSN:24 */
} __attribute__((packed));

/* Atomic Extended Transport Header, IBTA 9.3.4 */
struct roce_atomiceth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __attribute__((packed));

/* Atomic Acknowledge Extended Transport Header, IBTA 9.3.6 */
struct roce_atomicacketh {
	__be64 orig;
} __attribute__((packed));

/* Immediate Data Extended Transport Header, IBTA 9.3.7 */
struct roce_immdt {
	__be32 imm;
} __attribute__((packed));

/* Invalidate Extended Transport Header, IBTA 9.3.8 */
struct roce_ieth {
	__be32 rkey;
} __attribute__((packed));

/* Datagram Extended Transport Header, IBTA 9.3.2 */
struct roce_deth {
	__be32 qkey;
	__be32 sqp; /* Resv:8 SrcQP:24 */
} __attribute__((packed));

/*
 * FLUSH Extended Transport Header (IBTA 1.5, Annex A19 Memory Placement
 * Extensions): between the BTH and the RETH of an RC FLUSH request.
 * Bits 3..0 the placement type, 5..4 the selectivity level, the rest
 * reserved.
 */
struct roce_feth {
	__be32 bits;
} __attribute__((packed));

#define ROCE_FETH_PLT_MASK 0x0fU
#define ROCE_FETH_SEL_SHIFT 4
#define ROCE_FETH_SEL_MASK 0x30U
/* placement types (a mask: a FLUSH may ask for both) */
#define ROCE_FLUSH_GLOBAL 0x1U /* globally visible */
#define ROCE_FLUSH_PERSISTENT 0x2U /* in the persistence domain */
/* selectivity levels */
#define ROCE_FLUSH_RANGE 0x0U /* the RETH's range */
#define ROCE_FLUSH_MR 0x1U /* the whole region the R_Key names */

/* Congestion Notification Packet body after the BTH (RoCEv2 A17.9.3) */
struct roce_cnp {
	__u8 reserved[16];
} __attribute__((packed));

_Static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");
_Static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");
_Static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");
_Static_assert(sizeof(struct roce_atomiceth) == 28, "AtomicETH is 28 bytes");
_Static_assert(sizeof(struct roce_atomicacketh) == 8,
	       "AtomicAckETH is 8 bytes");
_Static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");
_Static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");
_Static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");
_Static_assert(sizeof(struct roce_cnp) == 16, "CNP body is 16 bytes");
_Static_assert(sizeof(struct roce_feth) == 4, "FETH is 4 bytes");

/* AETH syndrome, IBTA 9.7.5.1.1: bits 6:5 select ACK / RNR NAK / NAK */
#define ROCE_AETH_TYPE_MASK 0x60
#define ROCE_AETH_ACK 0x00
#define ROCE_AETH_RNR_NAK 0x20
#define ROCE_AETH_NAK 0x60
#define ROCE_AETH_CREDIT_MASK 0x1f /* ACK: credit count; RNR: timer */
#define ROCE_AETH_CREDIT_INVALID 0x1f /* "end-to-end flow control not used" */
/* NAK codes in the low 5 bits when the type is NAK */
#define ROCE_NAK_PSN_SEQ_ERR 0x00
#define ROCE_NAK_INVALID_REQ 0x01
#define ROCE_NAK_REM_ACCESS_ERR 0x02
#define ROCE_NAK_REM_OP_ERR 0x03
#define ROCE_NAK_INVALID_RD_REQ 0x04

/* --- accessors: the only places that swap bytes --- */

static inline __u8 bth_opcode(const struct roce_bth *b)
{
	return b->opcode;
}

static inline int bth_se(const struct roce_bth *b)
{
	return !!(b->flags & ROCE_BTH_SE);
}

static inline int bth_mig(const struct roce_bth *b)
{
	return !!(b->flags & ROCE_BTH_MIG);
}

static inline __u8 bth_pad(const struct roce_bth *b)
{
	return (b->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}

static inline __u8 bth_tver(const struct roce_bth *b)
{
	return b->flags & ROCE_BTH_TVER_MASK;
}

static inline __u16 bth_pkey(const struct roce_bth *b)
{
	return rxdp_ntohs(b->pkey);
}

static inline __u32 bth_qpn(const struct roce_bth *b)
{
	return rxdp_ntohl(b->qpn) & ROCE_QPN_MASK;
}

static inline int bth_fecn(const struct roce_bth *b)
{
	return !!(rxdp_ntohl(b->qpn) & ROCE_BTH_FECN);
}

static inline int bth_becn(const struct roce_bth *b)
{
	return !!(rxdp_ntohl(b->qpn) & ROCE_BTH_BECN);
}

static inline int bth_ackreq(const struct roce_bth *b)
{
	return !!(rxdp_ntohl(b->apsn) & ROCE_BTH_ACKREQ);
}

static inline int bth_rxdp_held(const struct roce_bth *b)
{
	return !!(rxdp_ntohl(b->apsn) & ROCE_BTH_RXDP_HELD);
}

static inline __u32 bth_psn(const struct roce_bth *b)
{
	return rxdp_ntohl(b->apsn) & ROCE_PSN_MASK;
}

/* Fill a whole BTH. TVer is always 0 (IBTA 9.2.1). */
static inline void bth_init(struct roce_bth *b, __u8 opcode, int se, __u8 pad,
			    __u16 pkey, __u32 qpn, int ackreq, __u32 psn)
{
	b->opcode = opcode;
	b->flags = (se ? ROCE_BTH_SE : 0) |
		   ((pad << ROCE_BTH_PAD_SHIFT) & ROCE_BTH_PAD_MASK);
	b->pkey = rxdp_htons(pkey);
	b->qpn = rxdp_htonl(qpn & ROCE_QPN_MASK);
	b->apsn = rxdp_htonl((ackreq ? ROCE_BTH_ACKREQ : 0) |
			     (psn & ROCE_PSN_MASK));
}

static inline __u64 reth_va(const struct roce_reth *r)
{
	return rxdp_be64_to_cpu(r->va);
}

static inline __u32 reth_rkey(const struct roce_reth *r)
{
	return rxdp_ntohl(r->rkey);
}

static inline __u32 reth_len(const struct roce_reth *r)
{
	return rxdp_ntohl(r->dma_len);
}

static inline void reth_init(struct roce_reth *r, __u64 va, __u32 rkey,
			     __u32 len)
{
	r->va = rxdp_cpu_to_be64(va);
	r->rkey = rxdp_htonl(rkey);
	r->dma_len = rxdp_htonl(len);
}

static inline __u8 aeth_syndrome(const struct roce_aeth *a)
{
	return rxdp_ntohl(a->smsn) >> 24;
}

static inline __u32 aeth_msn(const struct roce_aeth *a)
{
	return rxdp_ntohl(a->smsn) & 0xffffffU;
}

static inline void aeth_init(struct roce_aeth *a, __u8 syndrome, __u32 msn)
{
	a->smsn = rxdp_htonl(((__u32)syndrome << 24) | (msn & 0xffffffU));
}

static inline __u64 atomiceth_va(const struct roce_atomiceth *a)
{
	return rxdp_be64_to_cpu(a->va);
}

static inline __u32 atomiceth_rkey(const struct roce_atomiceth *a)
{
	return rxdp_ntohl(a->rkey);
}

static inline __u64 atomiceth_swap_add(const struct roce_atomiceth *a)
{
	return rxdp_be64_to_cpu(a->swap_add);
}

static inline __u64 atomiceth_compare(const struct roce_atomiceth *a)
{
	return rxdp_be64_to_cpu(a->compare);
}

static inline void atomiceth_init(struct roce_atomiceth *a, __u64 va,
				  __u32 rkey, __u64 swap_add, __u64 compare)
{
	a->va = rxdp_cpu_to_be64(va);
	a->rkey = rxdp_htonl(rkey);
	a->swap_add = rxdp_cpu_to_be64(swap_add);
	a->compare = rxdp_cpu_to_be64(compare);
}

static inline __u64 atomicacketh_orig(const struct roce_atomicacketh *a)
{
	return rxdp_be64_to_cpu(a->orig);
}

static inline void atomicacketh_init(struct roce_atomicacketh *a, __u64 orig)
{
	a->orig = rxdp_cpu_to_be64(orig);
}

/*
 * Immediate data is opaque to the transport: verbs hand it over already in
 * network order (ibv_send_wr.imm_data is __be32), so no swap here.
 */
static inline __be32 immdt_imm(const struct roce_immdt *i)
{
	return i->imm;
}

static inline __u32 ieth_rkey(const struct roce_ieth *i)
{
	return rxdp_ntohl(i->rkey);
}

static inline __u32 feth_plt(const struct roce_feth *f)
{
	return rxdp_ntohl(f->bits) & ROCE_FETH_PLT_MASK;
}

static inline __u32 feth_sel(const struct roce_feth *f)
{
	return (rxdp_ntohl(f->bits) & ROCE_FETH_SEL_MASK) >>
	       ROCE_FETH_SEL_SHIFT;
}

static inline void feth_init(struct roce_feth *f, __u32 plt, __u32 sel)
{
	f->bits =
		rxdp_htonl((plt & ROCE_FETH_PLT_MASK) |
			   ((sel << ROCE_FETH_SEL_SHIFT) & ROCE_FETH_SEL_MASK));
}

static inline __u32 deth_qkey(const struct roce_deth *d)
{
	return rxdp_ntohl(d->qkey);
}

static inline __u32 deth_sqp(const struct roce_deth *d)
{
	return rxdp_ntohl(d->sqp) & ROCE_QPN_MASK;
}

static inline void deth_init(struct roce_deth *d, __u32 qkey, __u32 sqp)
{
	d->qkey = rxdp_htonl(qkey);
	d->sqp = rxdp_htonl(sqp & ROCE_QPN_MASK);
}

/*
 * P_Key match, IBTA 10.9.3: the low 15 bits must be equal and at least one
 * of the two must be a full member (bit 15 set).
 */
static inline int roce_pkey_match(__u16 a, __u16 b)
{
	if (!(a & 0x7fff) || !(b & 0x7fff))
		return 0; /* the invalid P_Key never matches */
	return ((a ^ b) & 0x7fff) == 0 && ((a | b) & ROCE_PKEY_MEMBER_BIT) != 0;
}

#endif /* RXDP_ROCE_H */
