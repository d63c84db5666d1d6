// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * include/rxdp/roce.h: every accessor, against wire bytes written out by hand
 * from the IBTA Vol 1 9.2-9.3 layouts, and the P_Key match rules (10.9.3).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rxdp/roce.h"

static void expect_bytes(const void *got, const uint8_t *want, size_t n)
{
	assert_memory_equal(got, want, n);
}

static void test_bth_init_bytes(void **state)
{
	struct roce_bth b;
	/* opcode 0x0a, SE, PadCnt 3, TVer 0, P_Key 0xffff, QPN 0x123456,
	 * AckReq, PSN 0xabcdef */
	static const uint8_t want[12] = { 0x0a, 0xb0, 0xff, 0xff, 0x00, 0x12,
					  0x34, 0x56, 0x80, 0xab, 0xcd, 0xef };

	memset(&b, 0x5a, sizeof(b));
	bth_init(&b, 0x0a, 1, 3, 0xffff, 0x123456, 1, 0xabcdef);
	expect_bytes(&b, want, sizeof(want));
	assert_int_equal(bth_opcode(&b), 0x0a);
	assert_int_equal(bth_se(&b), 1);
	assert_int_equal(bth_mig(&b), 0);
	assert_int_equal(bth_pad(&b), 3);
	assert_int_equal(bth_tver(&b), 0);
	assert_int_equal(bth_pkey(&b), 0xffff);
	assert_int_equal(bth_qpn(&b), 0x123456);
	assert_int_equal(bth_fecn(&b), 0);
	assert_int_equal(bth_becn(&b), 0);
	assert_int_equal(bth_ackreq(&b), 1);
	assert_int_equal(bth_psn(&b), 0xabcdef);
}

static void test_bth_init_masks(void **state)
{
	struct roce_bth b;
	/* no SE, pad 1, P_Key 0x8001, QPN and PSN with bits above 24 that
	 * must not leak into the reserved/FECN/BECN/AckReq bits */
	static const uint8_t want[12] = { 0x04, 0x10, 0x80, 0x01, 0x00, 0xff,
					  0xff, 0xff, 0x00, 0x00, 0x00, 0x01 };

	bth_init(&b, 0x04, 0, 1, 0x8001, 0xffffffff, 0, 0x1000001);
	expect_bytes(&b, want, sizeof(want));
	assert_int_equal(bth_se(&b), 0);
	assert_int_equal(bth_pad(&b), 1);
	assert_int_equal(bth_ackreq(&b), 0);
	assert_int_equal(bth_qpn(&b), 0xffffff);
	assert_int_equal(bth_psn(&b), 1);
	assert_int_equal(bth_fecn(&b), 0);
	assert_int_equal(bth_becn(&b), 0);
}

static void test_bth_read_raw(void **state)
{
	/* SE|M|Pad 2|TVer 5, FECN|BECN|reserved bits|QPN 0x000001,
	 * AckReq|reserved|PSN 0xffffff */
	static const uint8_t raw[12] = { 0x81, 0xe5, 0x7f, 0xff, 0xff, 0x00,
					 0x00, 0x01, 0xff, 0xff, 0xff, 0xff };
	struct roce_bth b;

	memcpy(&b, raw, sizeof(b));
	assert_int_equal(bth_opcode(&b), 0x81);
	assert_int_equal(bth_se(&b), 1);
	assert_int_equal(bth_mig(&b), 1);
	assert_int_equal(bth_pad(&b), 2);
	assert_int_equal(bth_tver(&b), 5);
	assert_int_equal(bth_pkey(&b), 0x7fff);
	assert_int_equal(bth_qpn(&b), 1);
	assert_int_equal(bth_fecn(&b), 1);
	assert_int_equal(bth_becn(&b), 1);
	assert_int_equal(bth_ackreq(&b), 1);
	assert_int_equal(bth_psn(&b), 0xffffff);

	/* only FECN, only BECN */
	b.qpn = htonl(0x80000002);
	assert_int_equal(bth_fecn(&b), 1);
	assert_int_equal(bth_becn(&b), 0);
	assert_int_equal(bth_qpn(&b), 2);
	b.qpn = htonl(0x40000003);
	assert_int_equal(bth_fecn(&b), 0);
	assert_int_equal(bth_becn(&b), 1);
	assert_int_equal(bth_qpn(&b), 3);
}

static void test_reth(void **state)
{
	struct roce_reth r;
	static const uint8_t want[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
					  0xcd, 0xef, 0xde, 0xad, 0xbe, 0xef,
					  0x00, 0x01, 0x00, 0x00 };

	reth_init(&r, 0x0123456789abcdefULL, 0xdeadbeef, 0x10000);
	expect_bytes(&r, want, sizeof(want));
	assert_true(reth_va(&r) == 0x0123456789abcdefULL);
	assert_int_equal(reth_rkey(&r), 0xdeadbeef);
	assert_int_equal(reth_len(&r), 0x10000);
}

static void test_aeth(void **state)
{
	struct roce_aeth a;
	static const uint8_t want[4] = { 0x61, 0xfe, 0xdc, 0xba };

	/* NAK, code 1 (invalid request), MSN 0xfedcba */
	aeth_init(&a, ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ, 0xfedcba);
	expect_bytes(&a, want, sizeof(want));
	assert_int_equal(aeth_syndrome(&a), 0x61);
	assert_int_equal(aeth_syndrome(&a) & ROCE_AETH_TYPE_MASK,
			 ROCE_AETH_NAK);
	assert_int_equal(aeth_msn(&a), 0xfedcba);

	/* an MSN wider than 24 bits must not clobber the syndrome */
	aeth_init(&a, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, 0x1000005);
	assert_int_equal(aeth_syndrome(&a), 0x1f);
	assert_int_equal(aeth_msn(&a), 5);
}

static void test_atomiceth(void **state)
{
	struct roce_atomiceth a;
	static const uint8_t want[28] = {
		0x00, 0x00, 0x7f, 0xff, 0x00, 0x00, 0x10, 0x00, /* va */
		0x12, 0x34, 0x56, 0x78, /* rkey */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* swap/add */
		0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, /* compare */
	};

	atomiceth_init(&a, 0x00007fff00001000ULL, 0x12345678,
		       0x1122334455667788ULL, 0x99aabbccddeeff00ULL);
	expect_bytes(&a, want, sizeof(want));
	assert_true(atomiceth_va(&a) == 0x00007fff00001000ULL);
	assert_int_equal(atomiceth_rkey(&a), 0x12345678);
	assert_true(atomiceth_swap_add(&a) == 0x1122334455667788ULL);
	assert_true(atomiceth_compare(&a) == 0x99aabbccddeeff00ULL);
}

static void test_atomicacketh(void **state)
{
	struct roce_atomicacketh a;
	static const uint8_t want[8] = { 0xfe, 0xdc, 0xba, 0x98,
					 0x76, 0x54, 0x32, 0x10 };

	atomicacketh_init(&a, 0xfedcba9876543210ULL);
	expect_bytes(&a, want, sizeof(want));
	assert_true(atomicacketh_orig(&a) == 0xfedcba9876543210ULL);
}

static void test_immdt_ieth(void **state)
{
	static const uint8_t raw[4] = { 0xca, 0xfe, 0xba, 0xbe };
	struct roce_immdt i;
	struct roce_ieth e;

	memcpy(&i, raw, 4);
	memcpy(&e, raw, 4);
	/* immediate data stays in network order (opaque, __be32) */
	assert_memory_equal(&(__be32){ immdt_imm(&i) }, raw, 4);
	assert_int_equal(ieth_rkey(&e), 0xcafebabe);
}

static void test_deth(void **state)
{
	struct roce_deth d;
	static const uint8_t want[8] = { 0x80, 0x01, 0x00, 0x00,
					 0x00, 0xab, 0xcd, 0xef };

	deth_init(&d, 0x80010000, 0xffabcdef); /* bits above 24 dropped */
	expect_bytes(&d, want, sizeof(want));
	assert_int_equal(deth_qkey(&d), 0x80010000);
	assert_int_equal(deth_sqp(&d), 0xabcdef);

	/* a set reserved byte on the wire is not part of the source QP */
	d.sqp = htonl(0xff000001);
	assert_int_equal(deth_sqp(&d), 1);
}

static void test_sizes(void **state)
{
	assert_int_equal(sizeof(struct roce_bth), 12);
	assert_int_equal(sizeof(struct roce_reth), 16);
	assert_int_equal(sizeof(struct roce_aeth), 4);
	assert_int_equal(sizeof(struct roce_atomiceth), 28);
	assert_int_equal(sizeof(struct roce_atomicacketh), 8);
	assert_int_equal(sizeof(struct roce_immdt), 4);
	assert_int_equal(sizeof(struct roce_ieth), 4);
	assert_int_equal(sizeof(struct roce_deth), 8);
	assert_int_equal(sizeof(struct roce_cnp), 16);
	/* field offsets as IBTA 9.2 draws them */
	assert_int_equal(offsetof(struct roce_bth, pkey), 2);
	assert_int_equal(offsetof(struct roce_bth, qpn), 4);
	assert_int_equal(offsetof(struct roce_bth, apsn), 8);
	assert_int_equal(offsetof(struct roce_atomiceth, swap_add), 12);
	assert_int_equal(offsetof(struct roce_atomiceth, compare), 20);
}

/* IBTA 10.9.3 */
static void test_pkey_match(void **state)
{
	/* full member with full member, and with a limited member */
	assert_true(roce_pkey_match(0xffff, 0xffff));
	assert_true(roce_pkey_match(0xffff, 0x7fff));
	assert_true(roce_pkey_match(0x7fff, 0xffff));
	assert_true(roce_pkey_match(0x8001, 0x0001));
	assert_true(roce_pkey_match(0x0001, 0x8001));
	assert_true(roce_pkey_match(0x8001, 0x8001));
	/* two limited members never talk */
	assert_false(roce_pkey_match(0x7fff, 0x7fff));
	assert_false(roce_pkey_match(0x0001, 0x0001));
	/* different partitions, whatever the membership */
	assert_false(roce_pkey_match(0x8001, 0x8002));
	assert_false(roce_pkey_match(0xffff, 0xfffe));
	assert_false(roce_pkey_match(0x8001, 0x0002));
	/* the invalid P_Key (0x0000, 0x8000) matches nothing, not even itself */
	assert_false(roce_pkey_match(0x8000, 0x8000));
	assert_false(roce_pkey_match(0x0000, 0x8000));
	assert_false(roce_pkey_match(0x8000, 0x0000));
	assert_false(roce_pkey_match(0x0000, 0x0000));
	assert_false(roce_pkey_match(0x8000, 0xffff));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bth_init_bytes),
		cmocka_unit_test(test_bth_init_masks),
		cmocka_unit_test(test_bth_read_raw),
		cmocka_unit_test(test_reth),
		cmocka_unit_test(test_aeth),
		cmocka_unit_test(test_atomiceth),
		cmocka_unit_test(test_atomicacketh),
		cmocka_unit_test(test_immdt_ieth),
		cmocka_unit_test(test_deth),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_pkey_match),
	};

	return cmocka_run_group_tests_name("roce.h", tests, NULL, NULL);
}
