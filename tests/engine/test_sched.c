// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The progress thread's scheduling rules: which streams it coalesces
 * (eng_stream_in), where it may run (eng_place_choose), when it spins
 * (eng_spin_backoff).
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "engine/engine_int.h"

/* a set from a mask of CPUs 0..63 */
static cpu_set_t set(uint64_t mask)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	for (int c = 0; c < 64; c++)
		if (mask & (1ULL << c))
			CPU_SET(c, &s);
	return s;
}

static uint64_t choose(uint64_t allowed, uint64_t busy, uint64_t rx)
{
	cpu_set_t a = set(allowed), b = set(busy), r = set(rx), w;
	uint64_t mask = 0;

	eng_place_choose(&a, &b, &r, &w);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &w)) {
			assert_true(c < 64);
			mask |= 1ULL << c;
		}
	return mask;
}

static void test_place_choose(void **state)
{
	(void)state;
	/* nothing to keep off */
	assert_int_equal(choose(0x3, 0, 0), 0x3);
	/* the client's CPU, the receive work's CPU */
	assert_int_equal(choose(0x3, 0x2, 0), 0x1);
	assert_int_equal(choose(0x3, 0, 0x1), 0x2);
	/* both on different CPUs of two: the clients' come first */
	assert_int_equal(choose(0x3, 0x2, 0x1), 0x1);
	/* four CPUs: off both */
	assert_int_equal(choose(0xf, 0x1, 0x2), 0xc);
	/* the clients on every CPU: anywhere */
	assert_int_equal(choose(0x3, 0x3, 0x1), 0x3);
	/* CPUs it may not use are no reason to move */
	assert_int_equal(choose(0xc, 0x1, 0x20), 0xc);
	assert_int_equal(choose(0xc, 0x4, 0x8), 0x8);
	/* one CPU: there */
	assert_int_equal(choose(0x4, 0x4, 0x4), 0x4);
}

/*
 * A window of a stream coalesces when payload only comes in, as RDMA Write
 * packets of which fewer than one in ENG_STREAM_DEEP (32) asked for an
 * answer
 */
static void test_stream_in(void **state)
{
	(void)state;
	/* a deep stream of writes (as measured: every 64th packet asks) */
	assert_true(eng_stream_in(1152, 0, 1152, 18));
	assert_true(eng_stream_in(1000, 0, 1000, 31));
	/* its sender: payload goes out */
	assert_false(eng_stream_in(0, 1024, 0, 0));
	/* shallow: its requester waits on an answer every 10 */
	assert_false(eng_stream_in(200, 0, 200, 20));
	assert_false(eng_stream_in(1000, 0, 1000, 32));
	/* payload both ways */
	assert_false(eng_stream_in(1000, 100, 1000, 0));
	/* read responses (or sends) coming in: no writes */
	assert_false(eng_stream_in(1000, 0, 0, 0));
	/* too few requests to tell */
	assert_false(eng_stream_in(40, 0, 20, 0));
}

/* n sleeps without a spin: the backoff counts down */
static void sleeps(bool fifo, int n, uint32_t *backoff, uint32_t *next)
{
	for (int i = 0; i < n; i++)
		eng_spin_backoff(fifo, false, false, backoff, next);
}

/*
 * A spin another thread took the core from backs off: for ENG_SPIN_BACKOFF
 * sleeps under SCHED_FIFO (which spins only in streams), and without FIFO
 * four times as long each time it happens again, up to
 * ENG_SPIN_BACKOFF_MAX, until a spin keeps its core
 */
static void test_spin_backoff(void **state)
{
	uint32_t backoff = 0, next = ENG_SPIN_BACKOFF;

	(void)state;
	/* a spin that kept its core: spin on */
	eng_spin_backoff(false, true, false, &backoff, &next);
	assert_int_equal(backoff, 0);
	assert_int_equal(next, ENG_SPIN_BACKOFF);
	/* FIFO: the same backoff each time */
	for (int i = 0; i < 3; i++) {
		eng_spin_backoff(true, true, true, &backoff, &next);
		assert_int_equal(backoff, ENG_SPIN_BACKOFF);
		assert_int_equal(next, ENG_SPIN_BACKOFF);
		sleeps(true, ENG_SPIN_BACKOFF - 1, &backoff, &next);
		assert_int_equal(backoff, 1);
		sleeps(true, 1, &backoff, &next);
		assert_int_equal(backoff, 0);
	}
	/* without FIFO: longer each time, up to the most */
	for (uint32_t want = ENG_SPIN_BACKOFF;; want *= 4) {
		eng_spin_backoff(false, true, true, &backoff, &next);
		assert_int_equal(backoff, want);
		sleeps(false, (int)want, &backoff, &next);
		assert_int_equal(backoff, 0);
		if (want == ENG_SPIN_BACKOFF_MAX) {
			assert_int_equal(next, ENG_SPIN_BACKOFF_MAX);
			break;
		}
		assert_int_equal(next, 4 * want);
	}
	/* ... until a spin keeps its core */
	eng_spin_backoff(false, true, false, &backoff, &next);
	assert_int_equal(backoff, 0);
	assert_int_equal(next, ENG_SPIN_BACKOFF);
	eng_spin_backoff(false, true, true, &backoff, &next);
	assert_int_equal(backoff, ENG_SPIN_BACKOFF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_in),
		cmocka_unit_test(test_place_choose),
		cmocka_unit_test(test_spin_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
