// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The key table (userspace/engine/keys.c): random operations against a
 * plain list, the layout (a random 24-bit index, a key byte), lookups that
 * need every bit, and the limit. No root needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/keys.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Adds, deletes, renewals and lookups, checked against a list */
static void test_random_ops(void **state)
{
	enum {
		N = 20000
	};
	static struct eng_key keys[N];
	struct eng_keytab t;
	uint64_t seed = 7;
	uint32_t live = 0;

	(void)state;
	memset(keys, 0, sizeof(keys));
	assert_int_equal(eng_keytab_init(&t), 0);
	for (int op = 0; op < 400000; op++) {
		uint64_t r = rnd(&seed);
		struct eng_key *k = &keys[r % N];

		switch (r >> 32 & 3) {
		case 0:
		case 1:
			if (k->key)
				break;
			assert_int_equal(eng_key_add(&t, k, ENG_KEY_MR, -1), 0);
			assert_true(k->key >> ENG_KEY_INDEX_SHIFT);
			live++;
			break;
		case 2:
			if (!k->key)
				break;
			if (r >> 40 & 1) {
				uint32_t old = k->key;

				assert_int_equal(eng_key_renew(&t, k), 0);
				assert_int_not_equal(k->key >> 8, old >> 8);
				assert_null(eng_key_find(&t, old));
				break;
			}
			eng_key_del(&t, k);
			assert_int_equal(k->key, 0);
			live--;
			break;
		case 3:
			if (k->key) {
				assert_ptr_equal(eng_key_find(&t, k->key), k);
				/* every other key byte, and a neighbour index */
				assert_null(eng_key_find(&t, k->key ^ 0x01));
				assert_null(eng_key_find(&t, k->key ^ 0x80));
				if (!eng_key_find(&t, k->key ^ 0x100))
					break;
				assert_ptr_not_equal(
					eng_key_find(&t, k->key ^ 0x100), k);
			}
			break;
		}
		assert_int_equal(t.n, live);
	}
	/* every live key is found, every index is distinct */
	for (int i = 0; i < N; i++) {
		if (!keys[i].key)
			continue;
		assert_ptr_equal(eng_key_find(&t, keys[i].key), &keys[i]);
	}
	assert_null(eng_key_find(&t, 0));
	assert_null(eng_key_find(&t, 0xff));
	eng_keytab_free(&t);
}

/*
 * The index is random: 4096 keys in a row are not in sequence, share no
 * index, and their indexes and key bytes take most values of each bit.
 */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void test_unpredictable(void **state)
{
	enum {
		N = 4096
	};
	static struct eng_key keys[N];
	static uint32_t idx[N];
	uint32_t ones[32] = { 0 }, sequential = 0;
	struct eng_keytab t;

	(void)state;
	assert_int_equal(eng_keytab_init(&t), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(eng_key_add(&t, &keys[i], ENG_KEY_MR, -1), 0);
		idx[i] = keys[i].key >> ENG_KEY_INDEX_SHIFT;
		if (i && idx[i] == idx[i - 1] + 1)
			sequential++;
		for (int b = 0; b < 32; b++)
			ones[b] += keys[i].key >> b & 1;
	}
	assert_true(sequential < 4);
	qsort(idx, N, sizeof(idx[0]), cmp_u32);
	for (int i = 1; i < N; i++)
		assert_int_not_equal(idx[i], idx[i - 1]);
	/* each bit set in about half of them (binomial, sd 32: 8 sd) */
	for (int b = 0; b < 32; b++)
		if (ones[b] < N / 2 - 256 || ones[b] > N / 2 + 256)
			fail_msg("key bit %d set in %u of %d keys", b, ones[b],
				 N);
	for (int i = 0; i < N; i++)
		eng_key_del(&t, &keys[i]);
	assert_int_equal(t.n, 0);
	eng_keytab_free(&t);
}

/*
 * A memory window's key byte is its consumer's; the index stays and finds
 * it alone
 */
static void test_mw_key_byte(void **state)
{
	struct eng_key mw = { 0 };
	struct eng_keytab t;
	uint32_t first;

	(void)state;
	assert_int_equal(eng_keytab_init(&t), 0);
	assert_int_equal(eng_key_add(&t, &mw, ENG_KEY_MW, 0x42), 0);
	assert_int_equal(mw.key & 0xff, 0x42);
	assert_int_equal(mw.kind, ENG_KEY_MW);
	first = mw.key;
	eng_key_set_byte(&mw, 0x43);
	assert_int_equal(mw.key, (first & ~0xffU) | 0x43);
	assert_ptr_equal(eng_key_find(&t, mw.key), &mw);
	assert_null(eng_key_find(&t, first));
	/* a bind names its window by the index, whatever the byte */
	assert_ptr_equal(eng_key_find_index(&t, first), &mw);
	assert_ptr_equal(eng_key_find_index(&t, first ^ 0xa5), &mw);
	assert_null(eng_key_find_index(&t, first & 0xffU));
	assert_null(eng_key_find_index(&t, first ^ 0x100));
	eng_key_del(&t, &mw);
	assert_null(eng_key_find(&t, (first & ~0xffU) | 0x43));
	assert_null(eng_key_find_index(&t, first));
	eng_keytab_free(&t);
}

/* ENG_KEY_MAX live keys, then ENOSPC; lookups stay right when full */
static void test_full(void **state)
{
	struct eng_key *keys = calloc(ENG_KEY_MAX + 1, sizeof(*keys));
	struct eng_keytab t;

	(void)state;
	assert_non_null(keys);
	assert_int_equal(eng_keytab_init(&t), 0);
	for (uint32_t i = 0; i < ENG_KEY_MAX; i++)
		assert_int_equal(eng_key_add(&t, &keys[i], ENG_KEY_MR, -1), 0);
	assert_int_equal(eng_key_add(&t, &keys[ENG_KEY_MAX], ENG_KEY_MR, -1),
			 -ENOSPC);
	for (uint32_t i = 0; i < ENG_KEY_MAX; i += 97)
		assert_ptr_equal(eng_key_find(&t, keys[i].key), &keys[i]);
	for (uint32_t i = 0; i < ENG_KEY_MAX; i += 2)
		eng_key_del(&t, &keys[i]);
	for (uint32_t i = 1; i < ENG_KEY_MAX; i += 2)
		assert_ptr_equal(eng_key_find(&t, keys[i].key), &keys[i]);
	eng_keytab_free(&t);
	free(keys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_unpredictable),
		cmocka_unit_test(test_mw_key_byte),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests_name("rxdp key table", tests, NULL, NULL);
}
