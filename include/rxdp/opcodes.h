/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The RoCEv2 opcode table: IBTA Vol 1, 9.2.1 Table 38 (opcodes) and 9.3
 * Table 39 (which extended headers each opcode carries), plus the RoCEv2 CNP.
 *
 * One table drives header offsets on both sides: the XDP program validates
 * against it and the engine builds and parses packets from it.
 */
#ifndef RXDP_OPCODES_H
#define RXDP_OPCODES_H

#include "roce.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Service type: the top three bits of the opcode (IBTA 9.2.1) */
#define ROCE_SVC_RC 0x00
#define ROCE_SVC_UC 0x20
#define ROCE_SVC_RD 0x40
#define ROCE_SVC_UD 0x60
#define ROCE_SVC_CNP 0x80
#define ROCE_SVC_MASK 0xe0

enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0a,
	ROCE_RC_WRITE_ONLY_IMM = 0x0b,
	ROCE_RC_READ_REQUEST = 0x0c,
	ROCE_RC_READ_RESPONSE_FIRST = 0x0d,
	ROCE_RC_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_RC_READ_RESPONSE_LAST = 0x0f,
	ROCE_RC_READ_RESPONSE_ONLY = 0x10,
	ROCE_RC_ACK = 0x11,
	ROCE_RC_ATOMIC_ACK = 0x12,
	ROCE_RC_COMPARE_SWAP = 0x13,
	ROCE_RC_FETCH_ADD = 0x14,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
	ROCE_RC_FLUSH = 0x1c,
	ROCE_RC_ATOMIC_WRITE = 0x1d,

	ROCE_UC_SEND_FIRST = 0x20,
	ROCE_UC_SEND_MIDDLE = 0x21,
	ROCE_UC_SEND_LAST = 0x22,
	ROCE_UC_SEND_LAST_IMM = 0x23,
	ROCE_UC_SEND_ONLY = 0x24,
	ROCE_UC_SEND_ONLY_IMM = 0x25,
	ROCE_UC_WRITE_FIRST = 0x26,
	ROCE_UC_WRITE_MIDDLE = 0x27,
	ROCE_UC_WRITE_LAST = 0x28,
	ROCE_UC_WRITE_LAST_IMM = 0x29,
	ROCE_UC_WRITE_ONLY = 0x2a,
	ROCE_UC_WRITE_ONLY_IMM = 0x2b,

	ROCE_UD_SEND_ONLY = 0x64,
	ROCE_UD_SEND_ONLY_IMM = 0x65,

	ROCE_CNP = 0x81,
};

/* Per-opcode properties. An opcode with flags 0 is unknown/unsupported. */
#define ROCE_OPF_VALID (1U << 0)
#define ROCE_OPF_RETH (1U << 1)
#define ROCE_OPF_AETH (1U << 2)
#define ROCE_OPF_ATOMICETH (1U << 3)
#define ROCE_OPF_ATOMICACKETH (1U << 4)
#define ROCE_OPF_IMMDT (1U << 5)
#define ROCE_OPF_IETH (1U << 6)
#define ROCE_OPF_DETH (1U << 7)
#define ROCE_OPF_CNP (1U << 8) /* 16 reserved bytes after the BTH */
#define ROCE_OPF_PAYLOAD (1U << 9) /* may carry payload */
#define ROCE_OPF_REQUEST (1U << 10) /* requester -> responder */
#define ROCE_OPF_RESPONSE (1U << 11) /* responder -> requester */
#define ROCE_OPF_FIRST (1U << 12) /* first packet of a message */
#define ROCE_OPF_MIDDLE (1U << 13)
#define ROCE_OPF_LAST (1U << 14) /* last packet of a message */
#define ROCE_OPF_SEND (1U << 15) /* consumes a receive WQE */
#define ROCE_OPF_WRITE (1U << 16)
#define ROCE_OPF_READ (1U << 17) /* read request or response */
#define ROCE_OPF_ATOMIC (1U << 18) /* atomic request or ack */
#define ROCE_OPF_ACK (1U << 19) /* plain acknowledge */
#define ROCE_OPF_SVC_RC (1U << 20) /* allowed on this service type */
#define ROCE_OPF_SVC_UC (1U << 21)
#define ROCE_OPF_SVC_UD (1U << 22)
#define ROCE_OPF_FETH (1U << 23)
#define ROCE_OPF_FLUSH (1U << 24) /* a FLUSH request */
#define ROCE_OPF_ATOMIC_WRITE (1U << 25) /* an ATOMIC WRITE request */
/* ONLY = FIRST | LAST */
#define ROCE_OPF_ONLY (ROCE_OPF_FIRST | ROCE_OPF_LAST)
/*
 * Requests answered by a response of their own (read responses, an atomic
 * ACK; a zero-length read response for ATOMIC WRITE and FLUSH, A19), not
 * by the coalesced ACK; each takes a responder resource (max_rd_atomic)
 */
#define ROCE_OPF_RD_ATOMIC                                         \
	(ROCE_OPF_READ | ROCE_OPF_ATOMIC | ROCE_OPF_ATOMIC_WRITE | \
	 ROCE_OPF_FLUSH)

#define _RC (ROCE_OPF_VALID | ROCE_OPF_SVC_RC)
#define _UC (ROCE_OPF_VALID | ROCE_OPF_SVC_UC)
#define _UD (ROCE_OPF_VALID | ROCE_OPF_SVC_UD)
#define _SREQ (ROCE_OPF_REQUEST | ROCE_OPF_SEND | ROCE_OPF_PAYLOAD)
#define _WREQ (ROCE_OPF_REQUEST | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD)
#define _RRSP (ROCE_OPF_RESPONSE | ROCE_OPF_READ | ROCE_OPF_PAYLOAD)

/*
 * Indexed by opcode. `static const` so the BPF side gets it in .rodata and
 * the verifier sees a constant table.
 */
static const __u32 roce_opcode_table[256] = {
	[ROCE_RC_SEND_FIRST] = _RC | _SREQ | ROCE_OPF_FIRST,
	[ROCE_RC_SEND_MIDDLE] = _RC | _SREQ | ROCE_OPF_MIDDLE,
	[ROCE_RC_SEND_LAST] = _RC | _SREQ | ROCE_OPF_LAST,
	[ROCE_RC_SEND_LAST_IMM] = _RC | _SREQ | ROCE_OPF_LAST | ROCE_OPF_IMMDT,
	[ROCE_RC_SEND_ONLY] = _RC | _SREQ | ROCE_OPF_ONLY,
	[ROCE_RC_SEND_ONLY_IMM] = _RC | _SREQ | ROCE_OPF_ONLY | ROCE_OPF_IMMDT,
	[ROCE_RC_WRITE_FIRST] = _RC | _WREQ | ROCE_OPF_FIRST | ROCE_OPF_RETH,
	[ROCE_RC_WRITE_MIDDLE] = _RC | _WREQ | ROCE_OPF_MIDDLE,
	[ROCE_RC_WRITE_LAST] = _RC | _WREQ | ROCE_OPF_LAST,
	[ROCE_RC_WRITE_LAST_IMM] = _RC | _WREQ | ROCE_OPF_LAST |
				   ROCE_OPF_IMMDT | ROCE_OPF_SEND,
	[ROCE_RC_WRITE_ONLY] = _RC | _WREQ | ROCE_OPF_ONLY | ROCE_OPF_RETH,
	[ROCE_RC_WRITE_ONLY_IMM] = _RC | _WREQ | ROCE_OPF_ONLY | ROCE_OPF_RETH |
				   ROCE_OPF_IMMDT | ROCE_OPF_SEND,
	[ROCE_RC_READ_REQUEST] = _RC | ROCE_OPF_REQUEST | ROCE_OPF_READ |
				 ROCE_OPF_ONLY | ROCE_OPF_RETH,
	[ROCE_RC_READ_RESPONSE_FIRST] = _RC | _RRSP | ROCE_OPF_FIRST |
					ROCE_OPF_AETH,
	[ROCE_RC_READ_RESPONSE_MIDDLE] = _RC | _RRSP | ROCE_OPF_MIDDLE,
	[ROCE_RC_READ_RESPONSE_LAST] = _RC | _RRSP | ROCE_OPF_LAST |
				       ROCE_OPF_AETH,
	[ROCE_RC_READ_RESPONSE_ONLY] = _RC | _RRSP | ROCE_OPF_ONLY |
				       ROCE_OPF_AETH,
	[ROCE_RC_ACK] = _RC | ROCE_OPF_RESPONSE | ROCE_OPF_ACK | ROCE_OPF_ONLY |
			ROCE_OPF_AETH,
	[ROCE_RC_ATOMIC_ACK] = _RC | ROCE_OPF_RESPONSE | ROCE_OPF_ATOMIC |
			       ROCE_OPF_ONLY | ROCE_OPF_AETH |
			       ROCE_OPF_ATOMICACKETH,
	[ROCE_RC_COMPARE_SWAP] = _RC | ROCE_OPF_REQUEST | ROCE_OPF_ATOMIC |
				 ROCE_OPF_ONLY | ROCE_OPF_ATOMICETH,
	[ROCE_RC_FETCH_ADD] = _RC | ROCE_OPF_REQUEST | ROCE_OPF_ATOMIC |
			      ROCE_OPF_ONLY | ROCE_OPF_ATOMICETH,
	[ROCE_RC_SEND_LAST_INV] = _RC | _SREQ | ROCE_OPF_LAST | ROCE_OPF_IETH,
	[ROCE_RC_SEND_ONLY_INV] = _RC | _SREQ | ROCE_OPF_ONLY | ROCE_OPF_IETH,
	/* A19: FLUSH carries no payload; ATOMIC WRITE 8 bytes */
	[ROCE_RC_FLUSH] = _RC | ROCE_OPF_REQUEST | ROCE_OPF_FLUSH |
			  ROCE_OPF_ONLY | ROCE_OPF_FETH | ROCE_OPF_RETH,
	[ROCE_RC_ATOMIC_WRITE] = _RC | ROCE_OPF_REQUEST |
				 ROCE_OPF_ATOMIC_WRITE | ROCE_OPF_ONLY |
				 ROCE_OPF_RETH | ROCE_OPF_PAYLOAD,

	[ROCE_UC_SEND_FIRST] = _UC | _SREQ | ROCE_OPF_FIRST,
	[ROCE_UC_SEND_MIDDLE] = _UC | _SREQ | ROCE_OPF_MIDDLE,
	[ROCE_UC_SEND_LAST] = _UC | _SREQ | ROCE_OPF_LAST,
	[ROCE_UC_SEND_LAST_IMM] = _UC | _SREQ | ROCE_OPF_LAST | ROCE_OPF_IMMDT,
	[ROCE_UC_SEND_ONLY] = _UC | _SREQ | ROCE_OPF_ONLY,
	[ROCE_UC_SEND_ONLY_IMM] = _UC | _SREQ | ROCE_OPF_ONLY | ROCE_OPF_IMMDT,
	[ROCE_UC_WRITE_FIRST] = _UC | _WREQ | ROCE_OPF_FIRST | ROCE_OPF_RETH,
	[ROCE_UC_WRITE_MIDDLE] = _UC | _WREQ | ROCE_OPF_MIDDLE,
	[ROCE_UC_WRITE_LAST] = _UC | _WREQ | ROCE_OPF_LAST,
	[ROCE_UC_WRITE_LAST_IMM] = _UC | _WREQ | ROCE_OPF_LAST |
				   ROCE_OPF_IMMDT | ROCE_OPF_SEND,
	[ROCE_UC_WRITE_ONLY] = _UC | _WREQ | ROCE_OPF_ONLY | ROCE_OPF_RETH,
	[ROCE_UC_WRITE_ONLY_IMM] = _UC | _WREQ | ROCE_OPF_ONLY | ROCE_OPF_RETH |
				   ROCE_OPF_IMMDT | ROCE_OPF_SEND,

	[ROCE_UD_SEND_ONLY] = _UD | _SREQ | ROCE_OPF_ONLY | ROCE_OPF_DETH,
	[ROCE_UD_SEND_ONLY_IMM] = _UD | _SREQ | ROCE_OPF_ONLY | ROCE_OPF_DETH |
				  ROCE_OPF_IMMDT,

	/* CNP is valid on every connected or datagram QP (RoCEv2 A17.9.3) */
	[ROCE_CNP] = ROCE_OPF_VALID | ROCE_OPF_CNP | ROCE_OPF_SVC_RC |
		     ROCE_OPF_SVC_UC | ROCE_OPF_SVC_UD,
};

#undef _RC
#undef _UC
#undef _UD
#undef _SREQ
#undef _WREQ
#undef _RRSP

static inline __u32 roce_opcode_flags(__u8 opcode)
{
	return roce_opcode_table[opcode];
}

/*
 * Length of the extended transport headers that follow the BTH, in the
 * order IBTA 9.3 puts them: DETH, FETH (A19), RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH.
 */
static __always_inline __u32 roce_ext_hdr_len(__u32 flags)
{
	__u32 len = 0;

	if (flags & ROCE_OPF_DETH)
		len += sizeof(struct roce_deth);
	if (flags & ROCE_OPF_FETH)
		len += sizeof(struct roce_feth);
	if (flags & ROCE_OPF_RETH)
		len += sizeof(struct roce_reth);
	if (flags & ROCE_OPF_ATOMICETH)
		len += sizeof(struct roce_atomiceth);
	if (flags & ROCE_OPF_AETH)
		len += sizeof(struct roce_aeth);
	if (flags & ROCE_OPF_ATOMICACKETH)
		len += sizeof(struct roce_atomicacketh);
	if (flags & ROCE_OPF_IMMDT)
		len += sizeof(struct roce_immdt);
	if (flags & ROCE_OPF_IETH)
		len += sizeof(struct roce_ieth);
	if (flags & ROCE_OPF_CNP)
		len += sizeof(struct roce_cnp);
	return len;
}

/*
 * Offset of one extended header after the start of the extended headers
 * (i.e. after the BTH), or -1 if the opcode does not carry it.
 */
static inline int roce_ext_hdr_offset(__u32 flags, __u32 which)
{
	/* wire order, which is not the order of the flag bits; the CNP body
	 * is the only thing after a CNP's BTH */
	static const __u32 order[9] = {
		ROCE_OPF_DETH,	    ROCE_OPF_FETH, ROCE_OPF_RETH,
		ROCE_OPF_ATOMICETH, ROCE_OPF_AETH, ROCE_OPF_ATOMICACKETH,
		ROCE_OPF_IMMDT,	    ROCE_OPF_IETH, ROCE_OPF_CNP,
	};
	static const __u8 size[9] = { 8, 4, 16, 28, 4, 8, 4, 4, 16 };
	int off = 0;

	if (!(flags & which))
		return -1;
	for (int i = 0; i < 9; i++) {
		if (order[i] == which)
			return off;
		if (flags & order[i])
			off += size[i];
	}
	return -1;
}

/* Does a QP of this service type (ROCE_OPF_SVC_*) accept this opcode? */
static inline int roce_opcode_allowed(__u8 opcode, __u32 svc_flag)
{
	return (roce_opcode_table[opcode] & svc_flag) != 0;
}

#ifndef __bpf__
#include <infiniband/verbs.h>
#include <stdbool.h>

/*
 * The work-request opcodes (enum ibv_wr_opcode, the verbs ABI): what each
 * may be posted to, what it does with local and remote memory, which wire
 * opcodes it becomes and how it completes. The one place that knows a WR
 * opcode; the verbs library's checks (common/hca.h), the requester and the
 * completer read it.
 */
#define RXDP_WR_RC (1U << 0) /* may be posted to an RC QP */
#define RXDP_WR_UC (1U << 1)
#define RXDP_WR_UD (1U << 2)
#define RXDP_WR_READS \
	(1U << 3) /* payload read from local buffers (inline too) */
#define RXDP_WR_WRITES (1U << 4) /* the response written into local buffers */
/* 8 bytes at an 8-byte aligned remote address (IBTA 9.4.5, A19) */
#define RXDP_WR_ATOMIC (1U << 5)
/*
 * answered by a response of its own (a read response, an atomic ACK, a
 * zero-length read response for Atomic Write and Flush, A19): each takes
 * one of max_rd_atomic, a fence waits for them, an ACK past one means its
 * response was lost
 */
#define RXDP_WR_RESPONSE (1U << 6)
#define RXDP_WR_LOCAL (1U << 7) /* done by the requester, no packet */
/* a small payload the library may gather into the WQE (common/hca.h) */
#define RXDP_WR_GATHER (1U << 8)
#define RXDP_WR_OPCODE_N 16

struct rxdp_wr_opcode_info {
	const char *name;
	__u32 flags; /* RXDP_WR_* */
	/*
	 * the RC request opcodes of a message's first, middle and last packet
	 * and of a message of one packet; UC's and UD's are the same in their
	 * service (ROCE_SVC_UC, ROCE_SVC_UD). One packet whatever its length:
	 * all four the same.
	 */
	__u8 wire[4];
	__u8 wc_opcode; /* enum ibv_wc_opcode of its completion */
};

enum rxdp_wr_pos {
	RXDP_WR_FIRST,
	RXDP_WR_MIDDLE,
	RXDP_WR_LAST,
	RXDP_WR_ONLY,
};

#define _WR_SEND_TYPES (RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_UD)
#define _WR_ONE(op)            \
	{                      \
		op, op, op, op \
	}

static const struct rxdp_wr_opcode_info rxdp_wr_opcode_info[RXDP_WR_OPCODE_N] = {
	[IBV_WR_SEND] = { "SEND",
			  _WR_SEND_TYPES | RXDP_WR_READS | RXDP_WR_GATHER,
			  { ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
			    ROCE_RC_SEND_LAST, ROCE_RC_SEND_ONLY },
			  IBV_WC_SEND },
	[IBV_WR_SEND_WITH_IMM] = { "SEND_WITH_IMM",
				   _WR_SEND_TYPES | RXDP_WR_READS |
					   RXDP_WR_GATHER,
				   { ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
				     ROCE_RC_SEND_LAST_IMM,
				     ROCE_RC_SEND_ONLY_IMM },
				   IBV_WC_SEND },
	/* IBTA Table 38: RC (and XRC) only */
	[IBV_WR_SEND_WITH_INV] = { "SEND_WITH_INV",
				   RXDP_WR_RC | RXDP_WR_READS,
				   { ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE,
				     ROCE_RC_SEND_LAST_INV,
				     ROCE_RC_SEND_ONLY_INV },
				   IBV_WC_SEND },
	/* IBTA Table 38: UD has Send (with immediate) only */
	[IBV_WR_RDMA_WRITE] = { "RDMA_WRITE",
				RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_READS |
					RXDP_WR_GATHER,
				{ ROCE_RC_WRITE_FIRST, ROCE_RC_WRITE_MIDDLE,
				  ROCE_RC_WRITE_LAST, ROCE_RC_WRITE_ONLY },
				IBV_WC_RDMA_WRITE },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { "RDMA_WRITE_WITH_IMM",
					 RXDP_WR_RC | RXDP_WR_UC |
						 RXDP_WR_READS | RXDP_WR_GATHER,
					 { ROCE_RC_WRITE_FIRST,
					   ROCE_RC_WRITE_MIDDLE,
					   ROCE_RC_WRITE_LAST_IMM,
					   ROCE_RC_WRITE_ONLY_IMM },
					 IBV_WC_RDMA_WRITE },
	/* UC has no RDMA Read nor atomics */
	[IBV_WR_RDMA_READ] = { "RDMA_READ",
			       RXDP_WR_RC | RXDP_WR_WRITES | RXDP_WR_RESPONSE,
			       _WR_ONE(ROCE_RC_READ_REQUEST),
			       IBV_WC_RDMA_READ },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { "ATOMIC_CMP_AND_SWP",
					RXDP_WR_RC | RXDP_WR_WRITES |
						RXDP_WR_ATOMIC |
						RXDP_WR_RESPONSE,
					_WR_ONE(ROCE_RC_COMPARE_SWAP),
					IBV_WC_COMP_SWAP },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { "ATOMIC_FETCH_AND_ADD",
					  RXDP_WR_RC | RXDP_WR_WRITES |
						  RXDP_WR_ATOMIC |
						  RXDP_WR_RESPONSE,
					  _WR_ONE(ROCE_RC_FETCH_ADD),
					  IBV_WC_FETCH_ADD },
	/* IBTA 1.5 (A19): RC only, no local buffers */
	[IBV_WR_ATOMIC_WRITE] = { "ATOMIC_WRITE",
				  RXDP_WR_RC | RXDP_WR_ATOMIC |
					  RXDP_WR_RESPONSE,
				  _WR_ONE(ROCE_RC_ATOMIC_WRITE),
				  IBV_WC_ATOMIC_WRITE },
	/* IBV_WR_FLUSH and IBV_WC_FLUSH (common/ibta15.h: RXDP_WR_FLUSH) */
	[14] = { "FLUSH", RXDP_WR_RC | RXDP_WR_RESPONSE, _WR_ONE(ROCE_RC_FLUSH),
		 8 },
	/*
	 * Local operations with no payload, as Soft-RoCE offers them: Local
	 * Invalidate on RC, Bind MW on RC and UC (IBTA 10.6.7.2)
	 */
	[IBV_WR_LOCAL_INV] = { "LOCAL_INV", RXDP_WR_RC | RXDP_WR_LOCAL,
			       _WR_ONE(0), IBV_WC_LOCAL_INV },
	[IBV_WR_BIND_MW] = { "BIND_MW", RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_LOCAL,
			     _WR_ONE(0), IBV_WC_BIND_MW },
};

#undef _WR_ONE
#undef _WR_SEND_TYPES

/* The entry of a WR opcode, or NULL for one rxdp does not know */
static inline const struct rxdp_wr_opcode_info *rxdp_wr_info(__u32 opcode)
{
	if (opcode >= RXDP_WR_OPCODE_N || !rxdp_wr_opcode_info[opcode].name)
		return NULL;
	return &rxdp_wr_opcode_info[opcode];
}

/* Its flags (RXDP_WR_*), 0 for an unknown opcode */
static inline __u32 rxdp_wr_flags(__u32 opcode)
{
	const struct rxdp_wr_opcode_info *i = rxdp_wr_info(opcode);

	return i ? i->flags : 0;
}

/* The RXDP_WR_RC/UC/UD bit of a QP type, 0 for another type */
static inline __u32 rxdp_wr_qp_type(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC   ? RXDP_WR_RC
	       : type == IBV_QPT_UC ? RXDP_WR_UC
	       : type == IBV_QPT_UD ? RXDP_WR_UD
				    : 0;
}

/* The wire opcode of one packet of a WR on a QP of service svc (ROCE_SVC_*) */
static inline __u8 rxdp_wr_wire_opcode(const struct rxdp_wr_opcode_info *i,
				       __u8 svc, bool first, bool last)
{
	enum rxdp_wr_pos pos = first && last ? RXDP_WR_ONLY
			       : first	     ? RXDP_WR_FIRST
			       : last	     ? RXDP_WR_LAST
					     : RXDP_WR_MIDDLE;

	return i->wire[pos] | svc;
}
#endif /* !__bpf__ */

#endif /* RXDP_OPCODES_H */
