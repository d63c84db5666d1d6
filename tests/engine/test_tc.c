// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Service classes (userspace/engine/tc.c): rxdpd --tc's specs, the class
 * each SL lands in, the class made for the SLs no spec names, the lists
 * rxdp-ctl shows, and what is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/tc.h"

static void test_default(void **state)
{
	struct eng_tcs t;
	char buf[64];

	(void)state;
	eng_tcs_default(&t);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.tc[0].strict, 0);
	assert_int_equal(t.tc[0].weight, 1);
	for (unsigned int sl = 0; sl < 32; sl++)
		assert_int_equal(eng_tcs_class(&t, (uint8_t)sl), 0);
	assert_int_equal(eng_tcs_finish(&t), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(eng_tcs_sls(&t, 0, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "0-15");
}

/* a latency class and two weighted ones; SL 7-15 in none: a class more */
static void test_classes(void **state)
{
	struct eng_tcs t;
	char buf[64];

	(void)state;
	eng_tcs_default(&t);
	assert_int_equal(eng_tcs_add(&t, "5=strict"), 0);
	assert_int_equal(eng_tcs_add(&t, "0-3,6=60"), 0);
	assert_int_equal(eng_tcs_add(&t, "4=30"), 0);
	assert_int_equal(eng_tcs_finish(&t), 0);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.tc[0].strict, 1);
	assert_int_equal(t.tc[1].strict, 0);
	assert_int_equal(t.tc[1].weight, 60);
	assert_int_equal(t.tc[2].weight, 30);
	assert_int_equal(t.tc[3].strict, 0);
	assert_int_equal(t.tc[3].weight, 1);
	assert_int_equal(eng_tcs_class(&t, 5), 0);
	assert_int_equal(eng_tcs_class(&t, 21), 0); /* 21 % 16 */
	assert_int_equal(eng_tcs_class(&t, 0), 1);
	assert_int_equal(eng_tcs_class(&t, 3), 1);
	assert_int_equal(eng_tcs_class(&t, 6), 1);
	assert_int_equal(eng_tcs_class(&t, 4), 2);
	assert_int_equal(eng_tcs_class(&t, 7), 3);
	assert_int_equal(eng_tcs_class(&t, 15), 3);
	eng_tcs_sls(&t, 1, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,6");
	eng_tcs_sls(&t, 3, buf, sizeof(buf));
	assert_string_equal(buf, "7-15");
	/* a buffer too short: what fits, whole items only */
	assert_int_equal(eng_tcs_sls(&t, 1, buf, 5), 3);
	assert_string_equal(buf, "0-3");
}

/* every SL named: no class more */
static void test_all_named(void **state)
{
	struct eng_tcs t;

	(void)state;
	eng_tcs_default(&t);
	assert_int_equal(eng_tcs_add(&t, "0-7=strict"), 0);
	assert_int_equal(eng_tcs_add(&t, "8-15=1"), 0);
	assert_int_equal(eng_tcs_finish(&t), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(eng_tcs_class(&t, 7), 0);
	assert_int_equal(eng_tcs_class(&t, 8), 1);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",	 "5",	 "=strict", "5=",	 "5=fast", "5=0",
		"5=101", "16=1", "-1=1",    "3-2=1",	 "1,=1",   ",1=1",
		"1-=1",	 "a=1",	 "5=1x",    "5=strict ",
	};
	struct eng_tcs t;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		eng_tcs_default(&t);
		assert_int_equal(eng_tcs_add(&t, bad[i]), -EINVAL);
		/* the default stays */
		assert_int_equal(t.n, 1);
	}
	eng_tcs_default(&t);
	assert_int_equal(eng_tcs_add(&t, "1-3=2"), 0);
	assert_int_equal(eng_tcs_add(&t, "3=strict"), -EEXIST);
	assert_int_equal(eng_tcs_add(&t, "4=1"), 0);
	assert_int_equal(eng_tcs_add(&t, "5=1"), 0);
	assert_int_equal(eng_tcs_add(&t, "6=1"), 0);
	assert_int_equal(eng_tcs_add(&t, "7=1"), -ENOSPC);
	/* four classes and SLs left over: no room for their class */
	assert_int_equal(eng_tcs_finish(&t), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_all_named),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
