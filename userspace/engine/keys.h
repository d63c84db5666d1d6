/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * L_Keys and R_Keys: one layout and one table for memory regions and memory
 * windows (IBTA 10.6.3, 10.6.7.2).
 *
 *    31                                 8 7            0
 *   +------------------------------------+--------------+
 *   | index: 24 bits from getrandom()    |  key byte    |
 *   +------------------------------------+--------------+
 *
 * - The index names the object among the live ones of an engine: drawn
 *   from the kernel's CSPRNG, never 0, unique while the object lives, and
 *   found in O(1) (open addressing on its low bits, which are random, so
 *   no one can make them collide). Knowing other keys, the QPN or the
 *   order of registrations tells nothing about it.
 * - The key byte is the part a type 2 memory window's consumer owns: the
 *   low 8 bits it may change at each bind (ibv_inc_rkey(), IBTA
 *   10.6.7.2.1). An MR's key byte is random too: an MR's key carries 32
 *   unpredictable bits, an MW's 24 plus whatever its consumer puts there.
 * - A key matches only whole, index and key byte: a wrong byte anywhere is
 *   a wrong key (a remote access error, an L_Key violation).
 * - An index is never reused for the same object: eng_key_renew() draws
 *   a new one (a reregistration that moves an MR, changes its PD or takes
 *   a right away: rxdp_engine_rereg_mr()). An MW that rebinds with a new
 *   key byte keeps its index: eng_key_set_byte().
 *
 * The MR and MW objects embed a struct eng_key; the table holds pointers
 * to them, so a lookup gives the object (container_of by kind). Everything
 * here runs under the engine lock.
 */
#ifndef RXDP_ENGINE_KEYS_H
#define RXDP_ENGINE_KEYS_H

#include <stdint.h>

#define ENG_KEY_INDEX_SHIFT 8
#define ENG_KEY_BYTE_MASK 0xffU
#define ENG_KEY_MAX (1U << 16) /* live keys (MRs and MWs) per engine */

enum eng_key_kind {
	ENG_KEY_MR = 1,
	ENG_KEY_MW,
};

struct eng_key {
	uint32_t key; /* 0: not in the table */
	uint8_t kind; /* enum eng_key_kind */
};

struct eng_keytab {
	struct eng_key **slot; /* 2 * ENG_KEY_MAX of them: at most half full */
	uint32_t n;
};

int eng_keytab_init(struct eng_keytab *t);
void eng_keytab_free(struct eng_keytab *t);
/*
 * Give k a new index and enter it. byte: the key byte, or -1 for a random
 * one. 0, -ENOSPC (ENG_KEY_MAX keys live) or the error of getrandom().
 */
int eng_key_add(struct eng_keytab *t, struct eng_key *k, uint8_t kind,
		int byte);
/* A live key's replacement: a new index and a random key byte; on error
 * the old key stays */
int eng_key_renew(struct eng_keytab *t, struct eng_key *k);
/*
 * A live key replaced by exactly key (the one it had in a predecessor's
 * engine: a takeover): 0, -EEXIST if another object has its index,
 * -EINVAL for index 0 or an object not in the table
 */
int eng_key_set(struct eng_keytab *t, struct eng_key *k, uint32_t key);
void eng_key_del(struct eng_keytab *t, struct eng_key *k);
/* The object holding exactly this key, or NULL */
struct eng_key *eng_key_find(const struct eng_keytab *t, uint32_t key);
/*
 * The object whose key has this key's index, whatever its key byte (an MW
 * named by a bind whose ibv_mw may not know the byte its last bind gave
 * it), or NULL
 */
struct eng_key *eng_key_find_index(const struct eng_keytab *t, uint32_t key);
/* An MW's rebind: same index, the consumer's new key byte */
void eng_key_set_byte(struct eng_key *k, uint8_t byte);

#endif /* RXDP_ENGINE_KEYS_H */
