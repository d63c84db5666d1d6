// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * include/rxdp/opcodes.h against IBTA Vol 1 9.2.1 Table 38 (opcodes) and
 * 9.3 Table 39 (extended headers per opcode), written out again here
 * independently, one row per opcode, plus the RoCEv2 CNP (A17.9.3) and
 * IBTA 1.5's FLUSH and ATOMIC WRITE (A19).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rxdp/opcodes.h"

/* Extended headers, one letter each, in wire order (IBTA 9.3) */
enum {
	D = 1 << 0, /* DETH 8 */
	R = 1 << 1, /* RETH 16 */
	A = 1 << 2, /* AtomicETH 28 */
	K = 1 << 3, /* AETH 4 */
	O = 1 << 4, /* AtomicAckETH 8 */
	I = 1 << 5, /* ImmDt 4 */
	V = 1 << 6, /* IETH 4 */
	C = 1 << 7, /* CNP body 16 */
	F = 1 << 8, /* FETH 4 (A19), before the RETH */
};

enum pos {
	NONE,
	FIRST,
	MIDDLE,
	LAST,
	ONLY
};
enum dir {
	DIR_NONE,
	REQ,
	RSP
};
enum kind {
	K_NONE,
	SEND,
	WRITE,
	READ,
	ATOMIC,
	ACK,
	FLUSH, /* A19 */
	ATOMIC_WRITE /* A19 */
};

struct row {
	int opcode;
	unsigned int svc; /* ROCE_OPF_SVC_* */
	unsigned int hdrs;
	int payload;
	enum pos pos;
	enum dir dir;
	enum kind kind;
	int consumes_rwqe; /* SEND, or RDMA WRITE with immediate */
};

#define RC ROCE_OPF_SVC_RC
#define UC ROCE_OPF_SVC_UC
#define UD ROCE_OPF_SVC_UD

static const struct row ibta[] = {
	/* RC, Table 38 00000-10111 */
	{ 0x00, RC, 0, 1, FIRST, REQ, SEND, 1 }, /* SEND First */
	{ 0x01, RC, 0, 1, MIDDLE, REQ, SEND, 1 }, /* SEND Middle */
	{ 0x02, RC, 0, 1, LAST, REQ, SEND, 1 }, /* SEND Last */
	{ 0x03, RC, I, 1, LAST, REQ, SEND, 1 }, /* SEND Last w/ Imm */
	{ 0x04, RC, 0, 1, ONLY, REQ, SEND, 1 }, /* SEND Only */
	{ 0x05, RC, I, 1, ONLY, REQ, SEND, 1 }, /* SEND Only w/ Imm */
	{ 0x06, RC, R, 1, FIRST, REQ, WRITE, 0 }, /* WRITE First */
	{ 0x07, RC, 0, 1, MIDDLE, REQ, WRITE, 0 }, /* WRITE Middle */
	{ 0x08, RC, 0, 1, LAST, REQ, WRITE, 0 }, /* WRITE Last */
	{ 0x09, RC, I, 1, LAST, REQ, WRITE, 1 }, /* WRITE Last w/ Imm */
	{ 0x0a, RC, R, 1, ONLY, REQ, WRITE, 0 }, /* WRITE Only */
	{ 0x0b, RC, R | I, 1, ONLY, REQ, WRITE, 1 }, /* WRITE Only w/ Imm */
	{ 0x0c, RC, R, 0, ONLY, REQ, READ, 0 }, /* READ Request */
	{ 0x0d, RC, K, 1, FIRST, RSP, READ, 0 }, /* READ Response First */
	{ 0x0e, RC, 0, 1, MIDDLE, RSP, READ, 0 }, /* READ Response Middle */
	{ 0x0f, RC, K, 1, LAST, RSP, READ, 0 }, /* READ Response Last */
	{ 0x10, RC, K, 1, ONLY, RSP, READ, 0 }, /* READ Response Only */
	{ 0x11, RC, K, 0, ONLY, RSP, ACK, 0 }, /* Acknowledge */
	{ 0x12, RC, K | O, 0, ONLY, RSP, ATOMIC, 0 }, /* ATOMIC Acknowledge */
	{ 0x13, RC, A, 0, ONLY, REQ, ATOMIC, 0 }, /* CmpSwap */
	{ 0x14, RC, A, 0, ONLY, REQ, ATOMIC, 0 }, /* FetchAdd */
	{ 0x16, RC, V, 1, LAST, REQ, SEND, 1 }, /* SEND Last w/ Invalidate */
	{ 0x17, RC, V, 1, ONLY, REQ, SEND, 1 }, /* SEND Only w/ Invalidate */
	{ 0x1c, RC, F | R, 0, ONLY, REQ, FLUSH, 0 }, /* FLUSH (A19) */
	{ 0x1d, RC, R, 1, ONLY, REQ, ATOMIC_WRITE, 0 }, /* ATOMIC WRITE (A19) */
	/* UC: SEND and RDMA WRITE only, same shapes as RC */
	{ 0x20, UC, 0, 1, FIRST, REQ, SEND, 1 },
	{ 0x21, UC, 0, 1, MIDDLE, REQ, SEND, 1 },
	{ 0x22, UC, 0, 1, LAST, REQ, SEND, 1 },
	{ 0x23, UC, I, 1, LAST, REQ, SEND, 1 },
	{ 0x24, UC, 0, 1, ONLY, REQ, SEND, 1 },
	{ 0x25, UC, I, 1, ONLY, REQ, SEND, 1 },
	{ 0x26, UC, R, 1, FIRST, REQ, WRITE, 0 },
	{ 0x27, UC, 0, 1, MIDDLE, REQ, WRITE, 0 },
	{ 0x28, UC, 0, 1, LAST, REQ, WRITE, 0 },
	{ 0x29, UC, I, 1, LAST, REQ, WRITE, 1 },
	{ 0x2a, UC, R, 1, ONLY, REQ, WRITE, 0 },
	{ 0x2b, UC, R | I, 1, ONLY, REQ, WRITE, 1 },
	/* UD: SEND Only, with and without immediate */
	{ 0x64, UD, D, 1, ONLY, REQ, SEND, 1 },
	{ 0x65, UD, D | I, 1, ONLY, REQ, SEND, 1 },
	/* RoCEv2 CNP: any QP type, 16 reserved bytes, no payload */
	{ 0x81, RC | UC | UD, C, 0, NONE, DIR_NONE, K_NONE, 0 },
};

static const struct {
	unsigned int ours, flag, size;
} hdr_map[] = {
	/* wire order (IBTA 9.3; the FETH before the RETH, A19) */
	{ F, ROCE_OPF_FETH, 4 },  { D, ROCE_OPF_DETH, 8 },
	{ R, ROCE_OPF_RETH, 16 }, { A, ROCE_OPF_ATOMICETH, 28 },
	{ K, ROCE_OPF_AETH, 4 },  { O, ROCE_OPF_ATOMICACKETH, 8 },
	{ I, ROCE_OPF_IMMDT, 4 }, { V, ROCE_OPF_IETH, 4 },
	{ C, ROCE_OPF_CNP, 16 },
};

#define N_HDRS (sizeof(hdr_map) / sizeof(hdr_map[0]))
#define ALL_HDRS                                                              \
	(ROCE_OPF_DETH | ROCE_OPF_RETH | ROCE_OPF_ATOMICETH | ROCE_OPF_AETH | \
	 ROCE_OPF_ATOMICACKETH | ROCE_OPF_IMMDT | ROCE_OPF_IETH |             \
	 ROCE_OPF_CNP | ROCE_OPF_FETH)

/* assert_int_equal that names the opcode under test when it fails */
static int cur_op;
#define EQ(got, want)                                                          \
	do {                                                                   \
		long g_ = (long)(got), w_ = (long)(want);                      \
		if (g_ != w_)                                                  \
			fail_msg("opcode 0x%02x: %s is %ld, want %ld", cur_op, \
				 #got, g_, w_);                                \
	} while (0)

static const struct row *find_row(int opcode)
{
	for (size_t i = 0; i < sizeof(ibta) / sizeof(ibta[0]); i++)
		if (ibta[i].opcode == opcode)
			return &ibta[i];
	return NULL;
}

static void check_row(const struct row *r)
{
	__u32 f = roce_opcode_flags(r->opcode);
	unsigned int hdr_flags = 0, len = 0;

	cur_op = r->opcode;
	EQ(!!(f & ROCE_OPF_VALID), 1);
	for (size_t i = 0; i < N_HDRS; i++) {
		if (r->hdrs & hdr_map[i].ours) {
			hdr_flags |= hdr_map[i].flag;
			len += hdr_map[i].size;
		}
	}
	EQ(f & ALL_HDRS, hdr_flags);
	EQ(roce_ext_hdr_len(f), len);

	EQ(!!(f & ROCE_OPF_PAYLOAD), r->payload);
	EQ(!!(f & ROCE_OPF_FIRST), r->pos == FIRST || r->pos == ONLY);
	EQ(!!(f & ROCE_OPF_LAST), r->pos == LAST || r->pos == ONLY);
	EQ(!!(f & ROCE_OPF_MIDDLE), r->pos == MIDDLE);
	EQ(!!(f & ROCE_OPF_REQUEST), r->dir == REQ);
	EQ(!!(f & ROCE_OPF_RESPONSE), r->dir == RSP);
	EQ(!!(f & ROCE_OPF_WRITE), r->kind == WRITE);
	EQ(!!(f & ROCE_OPF_READ), r->kind == READ);
	EQ(!!(f & ROCE_OPF_ATOMIC), r->kind == ATOMIC);
	EQ(!!(f & ROCE_OPF_ACK), r->kind == ACK);
	EQ(!!(f & ROCE_OPF_FLUSH), r->kind == FLUSH);
	EQ(!!(f & ROCE_OPF_ATOMIC_WRITE), r->kind == ATOMIC_WRITE);
	EQ(!!(f & ROCE_OPF_SEND), r->consumes_rwqe);
	EQ(f & (ROCE_OPF_SVC_RC | ROCE_OPF_SVC_UC | ROCE_OPF_SVC_UD), r->svc);
	EQ(roce_opcode_allowed(r->opcode, ROCE_OPF_SVC_RC), !!(r->svc & RC));
	EQ(roce_opcode_allowed(r->opcode, ROCE_OPF_SVC_UC), !!(r->svc & UC));
	EQ(roce_opcode_allowed(r->opcode, ROCE_OPF_SVC_UD), !!(r->svc & UD));
	/* the top three bits name the service (IBTA 9.2.1) */
	if (r->opcode < 0x80)
		EQ(r->opcode & ROCE_SVC_MASK, r->svc == RC   ? ROCE_SVC_RC
					      : r->svc == UC ? ROCE_SVC_UC
							     : ROCE_SVC_UD);
}

static void test_known_opcodes(void **state)
{
	for (size_t i = 0; i < sizeof(ibta) / sizeof(ibta[0]); i++)
		check_row(&ibta[i]);
}

/* Everything else, RD (010xxxxx) and XRC (101xxxxx) included, is unknown */
static void test_unknown_opcodes(void **state)
{
	unsigned int known = 0;

	for (int op = 0; op < 256; op++) {
		if (find_row(op)) {
			known++;
			continue;
		}
		cur_op = op;
		EQ(roce_opcode_flags(op), 0);
		EQ(roce_opcode_allowed(op, ROCE_OPF_SVC_RC), 0);
		EQ(roce_opcode_allowed(op, ROCE_OPF_SVC_UC), 0);
		EQ(roce_opcode_allowed(op, ROCE_OPF_SVC_UD), 0);
		EQ(roce_ext_hdr_len(roce_opcode_flags(op)), 0);
	}
	EQ(known, sizeof(ibta) / sizeof(ibta[0]));
	/* reserved holes inside the RC and UC ranges */
	EQ(roce_opcode_flags(0x15), 0);
	EQ(roce_opcode_flags(0x18), 0);
	EQ(roce_opcode_flags(0x2c), 0);
	EQ(roce_opcode_flags(0x40), 0); /* RD SEND First */
	EQ(roce_opcode_flags(0x60), 0);
	EQ(roce_opcode_flags(0x80), 0);
	EQ(roce_opcode_flags(0xff), 0);
}

/*
 * roce_ext_hdr_offset: each header sits after the ones before it in wire
 * order (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, CNP), and
 * an opcode without the header gets -1.
 */
static void test_ext_hdr_offsets(void **state)
{
	for (size_t i = 0; i < sizeof(ibta) / sizeof(ibta[0]); i++) {
		const struct row *r = &ibta[i];
		__u32 f = roce_opcode_flags(r->opcode);
		int off = 0;

		cur_op = r->opcode;
		for (size_t h = 0; h < N_HDRS; h++) {
			int got = roce_ext_hdr_offset(f, hdr_map[h].flag);

			if (r->hdrs & hdr_map[h].ours) {
				EQ(got, off);
				off += hdr_map[h].size;
			} else {
				EQ(got, -1);
			}
		}
		EQ(off, roce_ext_hdr_len(f));
		/* not a header at all */
		EQ(roce_ext_hdr_offset(f, ROCE_OPF_PAYLOAD), -1);
	}
	/* a few spelled out */
	EQ(roce_ext_hdr_offset(roce_opcode_flags(0x12), ROCE_OPF_ATOMICACKETH),
	   4);
	EQ(roce_ext_hdr_offset(roce_opcode_flags(0x0b), ROCE_OPF_IMMDT), 16);
	EQ(roce_ext_hdr_offset(roce_opcode_flags(0x65), ROCE_OPF_IMMDT), 8);
	EQ(roce_ext_hdr_len(roce_opcode_flags(0x13)), 28);
	EQ(roce_ext_hdr_len(roce_opcode_flags(0x81)), 16);
	EQ(roce_ext_hdr_offset(0, ROCE_OPF_RETH), -1);
}

/*
 * rxdp_wr_opcode_info[]: each WR opcode's packets are requests that its QP
 * types accept, a message of several packets runs FIRST, MIDDLE, LAST, and
 * the rows below, written out from IBTA Table 38 and ibv_post_send(3).
 */
static void test_wr_opcodes(void **state)
{
	static const struct {
		unsigned int wr, types, only, wc;
	} rows[] = {
		{ IBV_WR_SEND, RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_UD, 0x04,
		  IBV_WC_SEND },
		{ IBV_WR_SEND_WITH_IMM, RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_UD,
		  0x05, IBV_WC_SEND },
		{ IBV_WR_SEND_WITH_INV, RXDP_WR_RC, 0x17, IBV_WC_SEND },
		{ IBV_WR_RDMA_WRITE, RXDP_WR_RC | RXDP_WR_UC, 0x0a,
		  IBV_WC_RDMA_WRITE },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, RXDP_WR_RC | RXDP_WR_UC, 0x0b,
		  IBV_WC_RDMA_WRITE },
		{ IBV_WR_RDMA_READ, RXDP_WR_RC, 0x0c, IBV_WC_RDMA_READ },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, RXDP_WR_RC, 0x13,
		  IBV_WC_COMP_SWAP },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, RXDP_WR_RC, 0x14,
		  IBV_WC_FETCH_ADD },
		{ IBV_WR_ATOMIC_WRITE, RXDP_WR_RC, 0x1d, IBV_WC_ATOMIC_WRITE },
		{ 14 /* IBV_WR_FLUSH */, RXDP_WR_RC, 0x1c,
		  8 /* IBV_WC_FLUSH */ },
	};
	static const __u32 svc[3][2] = {
		{ RXDP_WR_RC, ROCE_SVC_RC },
		{ RXDP_WR_UC, ROCE_SVC_UC },
		{ RXDP_WR_UD, ROCE_SVC_UD },
	};
	static const __u32 svc_flag[3] = { ROCE_OPF_SVC_RC, ROCE_OPF_SVC_UC,
					   ROCE_OPF_SVC_UD };

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct rxdp_wr_opcode_info *w = rxdp_wr_info(rows[i].wr);

		cur_op = (int)rows[i].wr;
		assert_non_null(w);
		EQ(w->flags & (RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_UD),
		   rows[i].types);
		EQ(w->wc_opcode, rows[i].wc);
		EQ(rxdp_wr_wire_opcode(w, ROCE_SVC_RC, true, true),
		   rows[i].only);
		for (int s = 0; s < 3; s++) {
			__u8 only =
				rxdp_wr_wire_opcode(w, svc[s][1], true, true);
			__u32 f = roce_opcode_flags(only);

			if (!(w->flags & svc[s][0]))
				continue;
			EQ(roce_opcode_allowed(only, svc_flag[s]), 1);
			EQ(f & ROCE_OPF_REQUEST, ROCE_OPF_REQUEST);
			/* one packet whatever its length: UD (9.8.4), reads
			 * and atomics */
			if (!(f & ROCE_OPF_PAYLOAD) ||
			    svc[s][0] == RXDP_WR_UD ||
			    (w->flags & RXDP_WR_RESPONSE))
				continue;
			EQ(roce_opcode_flags(rxdp_wr_wire_opcode(w, svc[s][1],
								 true, false)) &
				   ROCE_OPF_ONLY,
			   ROCE_OPF_FIRST);
			EQ(roce_opcode_flags(rxdp_wr_wire_opcode(
				   w, svc[s][1], false, false)) &
				   ROCE_OPF_MIDDLE,
			   ROCE_OPF_MIDDLE);
			EQ(roce_opcode_flags(rxdp_wr_wire_opcode(w, svc[s][1],
								 false, true)) &
				   ROCE_OPF_ONLY,
			   ROCE_OPF_LAST);
		}
	}
	/* local operations send nothing; unknown ones have no entry */
	EQ(rxdp_wr_flags(IBV_WR_BIND_MW),
	   RXDP_WR_RC | RXDP_WR_UC | RXDP_WR_LOCAL);
	EQ(rxdp_wr_flags(IBV_WR_LOCAL_INV), RXDP_WR_RC | RXDP_WR_LOCAL);
	assert_null(rxdp_wr_info(IBV_WR_TSO));
	assert_null(rxdp_wr_info(RXDP_WR_OPCODE_N));
	EQ(rxdp_wr_flags(0xffffffffU), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_opcodes),
		cmocka_unit_test(test_unknown_opcodes),
		cmocka_unit_test(test_ext_hdr_offsets),
		cmocka_unit_test(test_wr_opcodes),
	};

	return cmocka_run_group_tests_name("opcodes.h", tests, NULL, NULL);
}
