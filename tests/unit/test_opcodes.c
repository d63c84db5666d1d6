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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_opcodes),
		cmocka_unit_test(test_unknown_opcodes),
		cmocka_unit_test(test_ext_hdr_offsets),
	};

	return cmocka_run_group_tests_name("opcodes.h", tests, NULL, NULL);
}
