// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * include/rxdp/psn.h: 24-bit PSN arithmetic (IBTA 9.7.1), above all at the
 * 2^24 wrap and at the half-space boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rxdp/psn.h"

#define MAXPSN 0xffffffU

static void test_psn_add(void **state)
{
	assert_int_equal(psn_add(0, 1), 1);
	assert_int_equal(psn_add(MAXPSN, 1), 0);
	assert_int_equal(psn_add(MAXPSN, 2), 1);
	assert_int_equal(psn_add(0xfffff0, 0x20), 0x10);
	assert_int_equal(psn_add(5, ROCE_PSN_MOD), 5); /* a full turn */
	assert_int_equal(psn_add(5, ROCE_PSN_MOD - 1), 4); /* i.e. minus one */
	assert_int_equal(psn_add(0, 0), 0);
	assert_int_equal(psn_add(0x123456, 0), 0x123456);
}

static void test_psn_diff(void **state)
{
	assert_int_equal(psn_diff(5, 3), 2);
	assert_int_equal(psn_diff(3, 5), -2);
	assert_int_equal(psn_diff(7, 7), 0);
	/* across the wrap */
	assert_int_equal(psn_diff(0, MAXPSN), 1);
	assert_int_equal(psn_diff(MAXPSN, 0), -1);
	assert_int_equal(psn_diff(2, 0xfffffe), 4);
	assert_int_equal(psn_diff(0xfffffe, 2), -4);
	/* the half-space: 2^23 - 1 ahead is "after", 2^23 is "before" */
	assert_int_equal(psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(psn_diff(0x800000, 0), -0x800000);
	assert_int_equal(psn_diff(0, 0x800000), -0x800000);
	assert_int_equal(psn_diff(0x7fffff, MAXPSN), -0x800000);
	assert_int_equal(psn_diff(0x7ffffe, MAXPSN), 0x7fffff);
	/* every result stays in [-2^23, 2^23) */
	for (uint32_t a = 0; a < ROCE_PSN_MOD; a += 0x10001) {
		int32_t d = psn_diff(a, 0x123456);

		assert_true(d >= -(int32_t)ROCE_PSN_HALF &&
			    d < (int32_t)ROCE_PSN_HALF);
		assert_int_equal(psn_add(0x123456, (uint32_t)d), a);
	}
}

static void test_psn_before_after(void **state)
{
	assert_true(psn_before(1, 2));
	assert_false(psn_after(1, 2));
	assert_true(psn_after(2, 1));
	assert_false(psn_before(2, 1));
	assert_false(psn_before(9, 9));
	assert_false(psn_after(9, 9));
	/* at the wrap: MAXPSN comes before 0 */
	assert_true(psn_before(MAXPSN, 0));
	assert_true(psn_after(0, MAXPSN));
	assert_true(psn_after(0x10, 0xfffff0));
	assert_true(psn_before(0xfffff0, 0x10));
	/* exactly half a ring apart the order is ambiguous: the distance is
	 * -2^23 both ways, so each reads as "before" the other (Soft-RoCE's
	 * psn_compare() does the same) */
	assert_true(psn_before(0x800000, 0));
	assert_true(psn_before(0, 0x800000));
	assert_true(psn_after(0x7fffff, 0));
	assert_true(psn_before(0x800001, 0));
}

static void test_psn_in_window(void **state)
{
	/* plain window [10, 20) */
	assert_false(psn_in_window(9, 10, 20));
	assert_true(psn_in_window(10, 10, 20));
	assert_true(psn_in_window(19, 10, 20));
	assert_false(psn_in_window(20, 10, 20));
	/* window spanning the wrap: [0xfffffe, 2) = {fffffe, ffffff, 0, 1} */
	assert_false(psn_in_window(0xfffffd, 0xfffffe, 2));
	assert_true(psn_in_window(0xfffffe, 0xfffffe, 2));
	assert_true(psn_in_window(MAXPSN, 0xfffffe, 2));
	assert_true(psn_in_window(0, 0xfffffe, 2));
	assert_true(psn_in_window(1, 0xfffffe, 2));
	assert_false(psn_in_window(2, 0xfffffe, 2));
	assert_false(psn_in_window(0x800000, 0xfffffe, 2));
	/* window ending exactly at the wrap: [0xfffff0, 0) */
	assert_true(psn_in_window(MAXPSN, 0xfffff0, 0));
	assert_false(psn_in_window(0, 0xfffff0, 0));
	/* window starting at 0 after the wrap: [0, 3) */
	assert_true(psn_in_window(0, 0, 3));
	assert_false(psn_in_window(MAXPSN, 0, 3));
	/* an empty window holds nothing */
	assert_false(psn_in_window(5, 5, 5));
	assert_false(psn_in_window(6, 5, 5));
	assert_false(psn_in_window(0, 0, 0));
	/* the largest window: everything but the end itself */
	assert_true(psn_in_window(MAXPSN, 1, 0));
	assert_true(psn_in_window(1, 1, 0));
	assert_false(psn_in_window(0, 1, 0));
	/* a window larger than half the ring still works */
	assert_true(psn_in_window(0x900000, 0x100000, 0xa00000));
	assert_false(psn_in_window(0xa00000, 0x100000, 0xa00000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psn_add),
		cmocka_unit_test(test_psn_diff),
		cmocka_unit_test(test_psn_before_after),
		cmocka_unit_test(test_psn_in_window),
	};

	return cmocka_run_group_tests_name("psn.h", tests, NULL, NULL);
}
