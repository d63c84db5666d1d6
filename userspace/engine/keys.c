// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The key table (layout and rules: keys.h): open addressing with linear
 * probing on the index's low bits, kept at most half full, deletion by
 * backward shift (no tombstones, so a probe never runs longer than the
 * cluster it lands in).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "engine/keys.h"

#define SLOTS (2 * ENG_KEY_MAX)
#define MASK (SLOTS - 1)

static uint32_t key_index(uint32_t key)
{
	return key >> ENG_KEY_INDEX_SHIFT;
}

static uint32_t home(uint32_t key)
{
	return key_index(key) & MASK;
}

int eng_keytab_init(struct eng_keytab *t)
{
	t->n = 0;
	t->slot = calloc(SLOTS, sizeof(*t->slot));
	return t->slot ? 0 : -ENOMEM;
}

void eng_keytab_free(struct eng_keytab *t)
{
	free(t->slot);
	t->slot = NULL;
}

/* The slot holding index idx, or the empty slot where it would go */
static uint32_t probe(const struct eng_keytab *t, uint32_t idx)
{
	uint32_t pos = idx & MASK;

	while (t->slot[pos] && key_index(t->slot[pos]->key) != idx)
		pos = (pos + 1) & MASK;
	return pos;
}

static int random_u32(uint32_t *v)
{
	ssize_t n;

	/* blocks only until the kernel's pool is first seeded (boot) */
	do
		n = getrandom(v, sizeof(*v), 0);
	while (n < 0 && errno == EINTR);
	if (n == sizeof(*v))
		return 0;
	return n < 0 ? -errno : -EIO;
}

/* A random index that no live key has; *r: the random word it came from */
static int draw(const struct eng_keytab *t, uint32_t *r, uint32_t *idx)
{
	int err;

	/* at most half full: a fresh index is free with odds >= 1/2 */
	do {
		err = random_u32(r);
		if (err)
			return err;
		*idx = *r >> ENG_KEY_INDEX_SHIFT;
	} while (!*idx || t->slot[probe(t, *idx)]);
	return 0;
}

static void insert(struct eng_keytab *t, struct eng_key *k, uint32_t idx,
		   uint32_t byte)
{
	k->key = idx << ENG_KEY_INDEX_SHIFT | (byte & ENG_KEY_BYTE_MASK);
	t->slot[probe(t, idx)] = k;
	t->n++;
}

int eng_key_add(struct eng_keytab *t, struct eng_key *k, uint8_t kind, int byte)
{
	uint32_t r, idx;
	int err;

	if (t->n >= ENG_KEY_MAX)
		return -ENOSPC;
	err = draw(t, &r, &idx);
	if (err)
		return err;
	k->kind = kind;
	insert(t, k, idx, byte < 0 ? r : (uint32_t)byte);
	return 0;
}

int eng_key_renew(struct eng_keytab *t, struct eng_key *k)
{
	uint32_t r, idx;
	int err;

	err = draw(t, &r, &idx);
	if (err)
		return err;
	eng_key_del(t, k);
	insert(t, k, idx, r);
	return 0;
}

int eng_key_set(struct eng_keytab *t, struct eng_key *k, uint32_t key)
{
	uint32_t idx = key_index(key);

	if (!idx || !k->key)
		return -EINVAL;
	if (k->key == key)
		return 0;
	if (t->slot[probe(t, idx)])
		return -EEXIST;
	eng_key_del(t, k);
	insert(t, k, idx, key);
	return 0;
}

void eng_key_del(struct eng_keytab *t, struct eng_key *k)
{
	uint32_t pos, j;

	if (!k->key)
		return;
	pos = probe(t, key_index(k->key));
	if (t->slot[pos] != k)
		return;
	t->slot[pos] = NULL;
	t->n--;
	k->key = 0;
	/* backward shift: close the gap for the entries behind it */
	for (j = (pos + 1) & MASK; t->slot[j]; j = (j + 1) & MASK) {
		uint32_t h = home(t->slot[j]->key);

		/* leave it if its home lies cyclically in (pos, j] */
		if (pos <= j ? (pos < h && h <= j) : (pos < h || h <= j))
			continue;
		t->slot[pos] = t->slot[j];
		t->slot[j] = NULL;
		pos = j;
	}
}

struct eng_key *eng_key_find(const struct eng_keytab *t, uint32_t key)
{
	struct eng_key *k;

	if (!key_index(key))
		return NULL;
	k = t->slot[probe(t, key_index(key))];
	return k && k->key == key ? k : NULL;
}

struct eng_key *eng_key_find_index(const struct eng_keytab *t, uint32_t key)
{
	if (!key_index(key))
		return NULL;
	return t->slot[probe(t, key_index(key))];
}

void eng_key_set_byte(struct eng_key *k, uint8_t byte)
{
	k->key = (k->key & ~ENG_KEY_BYTE_MASK) | byte;
}
