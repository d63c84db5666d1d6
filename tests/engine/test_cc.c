// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * DCQCN (userspace/engine/cc.c): every step of the reaction point, the cut,
 * alpha's update and decay, fast recovery, additive and hyper increase, the
 * clamps, and the notification point's interval, against values computed by
 * hand in the comments. Rates in kbit/s, times in ns, alpha in 1/1024.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cc.h"

#define US 1000ULL
#define LINE_MBPS 1000 /* 1 Gbit/s: 1,000,000 kbit/s */

/* mlx5's names and defaults */
static void test_defaults(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	eng_cc_params_default(&p);
	assert_int_equal(p.rp_clamp_tgt_rate, 0);
	assert_int_equal(p.rp_clamp_tgt_rate_ati, 1);
	assert_int_equal(p.rp_time_reset, 300);
	assert_int_equal(p.rp_byte_reset, 32767);
	assert_int_equal(p.rp_threshold, 1);
	assert_int_equal(p.rp_ai_rate, 5);
	assert_int_equal(p.rp_hai_rate, 50);
	assert_int_equal(p.rp_gd, 11);
	assert_int_equal(p.rp_min_dec_fac, 50);
	assert_int_equal(p.rp_min_rate, 1);
	assert_int_equal(p.rp_rate_to_set_on_first_cnp, 0);
	assert_int_equal(p.rp_dce_tcp_g, 1019);
	assert_int_equal(p.rp_dce_tcp_rtt, 1);
	assert_int_equal(p.rp_rate_reduce_monitor_period, 4);
	assert_int_equal(p.rp_initial_alpha_value, 1023);
	assert_int_equal(p.np_min_time_between_cnps, 4);
	assert_int_equal(p.np_cnp_dscp, 48);
	assert_int_equal(p.np_cnp_prio, 6);
	assert_int_equal(p.delay_target, 500);
	assert_int_equal(p.delay_ai_rate, 10);
	assert_int_equal(p.delay_beta, 819);

	/* before any CNP: at the line rate, not paced, nothing moves */
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	assert_int_equal(rp.rc, 1000000);
	assert_int_equal(rp.rt, 1000000);
	assert_false(eng_cc_rp_paced(&rp));
	eng_cc_rp_sent(&rp, &p, 1000000, 10 * US);
	eng_cc_rp_advance(&rp, &p, 1000000 * US);
	assert_int_equal(rp.rc, 1000000);
	/* line rate unknown: 100 Gbit/s; rp_max_rate overrides both */
	eng_cc_rp_init(&rp, &p, 0, ENG_CC_DCQCN);
	assert_int_equal(rp.max, 100000000);
	p.rp_max_rate = 2000;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	assert_int_equal(rp.max, 2000000);
}

/*
 * rxdpd --cc: each parameter by its mlx5 name sets that field and no other
 * (each name's value written through the setter is read back at the field
 * of that name); an unknown name changes nothing
 */
static void test_param_names(void **state)
{
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
#define F(n) { #n, offsetof(struct eng_cc_params, n) }
		F(rp_clamp_tgt_rate),
		F(rp_clamp_tgt_rate_ati),
		F(rp_time_reset),
		F(rp_byte_reset),
		F(rp_threshold),
		F(rp_ai_rate),
		F(rp_hai_rate),
		F(rp_gd),
		F(rp_min_dec_fac),
		F(rp_min_rate),
		F(rp_max_rate),
		F(rp_rate_to_set_on_first_cnp),
		F(rp_dce_tcp_g),
		F(rp_dce_tcp_rtt),
		F(rp_rate_reduce_monitor_period),
		F(rp_initial_alpha_value),
		F(np_min_time_between_cnps),
		F(np_cnp_dscp),
		F(np_cnp_prio),
		F(delay_target),
		F(delay_ai_rate),
		F(delay_beta),
#undef F
	};
	const size_t n = sizeof(want) / sizeof(want[0]);
	struct eng_cc_params p, d;

	(void)state;
	assert_int_equal(n * sizeof(uint32_t), sizeof(p));
	for (size_t i = 0; i < n; i++) {
		eng_cc_params_default(&p);
		d = p;
		assert_int_equal(eng_cc_param_set(&p, want[i].name, 7777 + i),
				 0);
		*(uint32_t *)((char *)&d + want[i].off) = 7777 + (uint32_t)i;
		assert_memory_equal(&p, &d, sizeof(p));
		assert_string_equal(eng_cc_param_name((unsigned int)i),
				    want[i].name);
	}
	assert_null(eng_cc_param_name((unsigned int)n));
	eng_cc_params_default(&p);
	d = p;
	assert_int_equal(eng_cc_param_set(&p, "rp_time", 1), -ENOENT);
	assert_int_equal(eng_cc_param_set(&p, "", 1), -ENOENT);
	assert_memory_equal(&p, &d, sizeof(p));
}

/*
 * The delay algorithm (Swift's rule on a rate) against hand-computed
 * values, with the defaults (target 500 us, ai 10 Mbit/s, beta 819/1024,
 * rp_min_dec_fac 50%) at 1 Gbit/s
 */
static void test_delay(void **state)
{
	static const struct {
		uint64_t rtt_us, at_us;
		uint64_t rc; /* kbit/s after the sample */
		bool cut;
	} step[] = {
		/* under the target: an increase, already at the line rate */
		{ 400, 0, 1000000, false },
		/* over: 1,000,000 * 819 * (1000 - 500) / 1000 / 1024 = 399,902.3 */
		{ 1000, 1000, 600098, true },
		/* 0.5 ms after that cut, less than this round trip: none */
		{ 2000, 1500, 600098, false },
		/*
		 * a round trip after it: 600,098 * 819 * 1500 / 2000 / 1024 =
		 * 359,970.9 would leave less than half: rp_min_dec_fac keeps
		 * 300,049
		 */
		{ 2000, 3000, 300049, true },
		/* under the target, and at it: + 10,000 each */
		{ 300, 4000, 310049, false },
		{ 500, 4100, 320049, false },
	};
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	eng_cc_params_default(&p);
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DELAY);
	for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		assert_int_equal(eng_cc_rp_rtt(&rp, &p, step[i].rtt_us * US,
					       step[i].at_us * US),
				 step[i].cut);
		assert_int_equal(rp.rc, step[i].rc);
		assert_int_equal(rp.rt, step[i].rc);
		assert_int_equal(eng_cc_rp_paced(&rp), i > 0);
	}
	assert_int_equal(rp.cuts, 2);
	/* CNPs, the byte counter and the timer move nothing here */
	assert_false(eng_cc_rp_cnp(&rp, &p, 5000 * US));
	eng_cc_rp_sent(&rp, &p, 1000000, 5000 * US);
	eng_cc_rp_advance(&rp, &p, 100000 * US);
	assert_int_equal(rp.rc, 320049);
	assert_int_equal(rp.cnps, 0);

	/* rp_min_rate holds: 900 Mbit/s over a cut to 600,098 */
	p.rp_min_rate = 900;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DELAY);
	eng_cc_rp_rtt(&rp, &p, 1000 * US, 0);
	assert_int_equal(rp.rc, 900000);

	/* RTT samples move neither DCQCN's rate nor an algorithm off's */
	eng_cc_params_default(&p);
	for (int a = ENG_CC_DCQCN; a <= ENG_CC_OFF; a += 2) {
		eng_cc_rp_init(&rp, &p, LINE_MBPS, (enum eng_cc_algo)a);
		assert_false(eng_cc_rp_rtt(&rp, &p, 5000 * US, 0));
		assert_int_equal(rp.rc, 1000000);
		assert_false(eng_cc_rp_paced(&rp));
	}
	/* an algorithm off takes no CNP either */
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_OFF);
	assert_false(eng_cc_rp_cnp(&rp, &p, 0));
	assert_int_equal(rp.rc, 1000000);
}

/* The algorithms by name, as rxdpd --cc-algo takes them */
static void test_algo_names(void **state)
{
	enum eng_cc_algo a = ENG_CC_OFF;

	(void)state;
	assert_int_equal(eng_cc_algo_parse("dcqcn", &a), 0);
	assert_int_equal(a, ENG_CC_DCQCN);
	assert_int_equal(eng_cc_algo_parse("delay", &a), 0);
	assert_int_equal(a, ENG_CC_DELAY);
	assert_int_equal(eng_cc_algo_parse("off", &a), 0);
	assert_int_equal(a, ENG_CC_OFF);
	assert_int_equal(eng_cc_algo_parse("timely", &a), -ENOENT);
	assert_int_equal(eng_cc_algo_parse("", &a), -ENOENT);
	assert_int_equal(a, ENG_CC_OFF);
	assert_string_equal(eng_cc_algo_name(ENG_CC_DCQCN), "dcqcn");
	assert_string_equal(eng_cc_algo_name(ENG_CC_DELAY), "delay");
	assert_string_equal(eng_cc_algo_name(ENG_CC_OFF), "off");
	assert_null(eng_cc_algo_name((enum eng_cc_algo)3));
}

/* Params whose alpha stays put (one update per 1000 s) at 512 (1/2) */
static void params_fixed_alpha(struct eng_cc_params *p)
{
	eng_cc_params_default(p);
	p->rp_initial_alpha_value = 512;
	p->rp_dce_tcp_rtt = 1000000000;
}

/* The cut: rc -= rc * alpha >> rp_gd, bounded by min_dec_fac and min_rate */
static void test_cut(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	params_fixed_alpha(&p);
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	/* 1,000,000 - 1,000,000 * 512 / 2048 = 1,000,000 - 250,000 */
	assert_true(eng_cc_rp_cnp(&rp, &p, 7 * US));
	assert_int_equal(rp.rc, 750000);
	assert_int_equal(rp.rt, 1000000); /* the first CNP: target = rate */
	assert_int_equal(rp.alpha, 512);
	assert_true(eng_cc_rp_paced(&rp));
	assert_int_equal(rp.cnps, 1);
	assert_int_equal(rp.cuts, 1);

	/*
	 * alpha 1023 (the default): 1,000,000 * 1023 / 2048 = 499,511.7 ->
	 * 499,511 off, 500,489 left; rp_min_dec_fac 60 keeps 600,000
	 */
	eng_cc_params_default(&p);
	p.rp_min_dec_fac = 60;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	assert_int_equal(rp.rc, 600000);
	p.rp_min_dec_fac = 50;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	assert_int_equal(rp.rc, 500489);

	/* rp_min_rate 800 Mbit/s over the cut's 750,000 */
	params_fixed_alpha(&p);
	p.rp_min_rate = 800;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	assert_int_equal(rp.rc, 800000);

	/* rp_rate_to_set_on_first_cnp 200 Mbit/s: both rates, no cut */
	params_fixed_alpha(&p);
	p.rp_rate_to_set_on_first_cnp = 200;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	assert_int_equal(rp.rc, 200000);
	assert_int_equal(rp.rt, 200000);
	/* the second one cuts: 200,000 - 50,000 */
	eng_cc_rp_cnp(&rp, &p, 4 * US);
	assert_int_equal(rp.rc, 150000);
	assert_int_equal(rp.rt, 200000);
}

/* At most one cut per rp_rate_reduce_monitor_period (4 us) */
static void test_monitor_period(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	params_fixed_alpha(&p);
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	assert_true(eng_cc_rp_cnp(&rp, &p, 0));
	assert_int_equal(rp.rc, 750000);
	/* 3.999 us later: handled, no cut */
	assert_false(eng_cc_rp_cnp(&rp, &p, 3999));
	assert_int_equal(rp.rc, 750000);
	assert_int_equal(rp.cnps, 2);
	assert_int_equal(rp.cuts, 1);
	/*
	 * 4 us: 750,000 - 750,000 * 512 / 2048 = 750,000 - 187,500; no
	 * increase since the first cut, so the target stays at 1,000,000
	 */
	assert_true(eng_cc_rp_cnp(&rp, &p, 4 * US));
	assert_int_equal(rp.rc, 562500);
	assert_int_equal(rp.rt, 1000000);
	assert_int_equal(rp.cuts, 2);
}

/*
 * Alpha, every rp_dce_tcp_rtt (1 us) from the first CNP: g = 1019;
 * with a CNP in the period a = a * 1019 / 1024 + 5, without a = a * 1019 / 1024
 * (integer division).
 */
static void test_alpha(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	eng_cc_params_default(&p);
	p.rp_rate_reduce_monitor_period = 1000000; /* one cut only */
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	assert_int_equal(rp.alpha, 1023);
	eng_cc_rp_advance(&rp, &p, 999);
	assert_int_equal(rp.alpha, 1023);
	/* the CNP's period: 1023 * 1019 = 1,042,437; / 1024 = 1018; + 5 */
	eng_cc_rp_advance(&rp, &p, 1 * US);
	assert_int_equal(rp.alpha, 1023);
	/* no CNP: 1018 */
	eng_cc_rp_advance(&rp, &p, 2 * US);
	assert_int_equal(rp.alpha, 1018);
	/*
	 * two periods at once: 1018 * 1019 = 1,037,342 -> 1013;
	 * 1013 * 1019 = 1,032,247 -> 1008
	 */
	eng_cc_rp_advance(&rp, &p, 4 * US);
	assert_int_equal(rp.alpha, 1008);
	/* a CNP in [4, 5) us: 1008 * 1019 = 1,027,152 -> 1003; + 5 = 1008 */
	assert_false(eng_cc_rp_cnp(&rp, &p, 4500));
	eng_cc_rp_advance(&rp, &p, 5 * US);
	assert_int_equal(rp.alpha, 1008);
	/* then 1003 at 6 us */
	eng_cc_rp_advance(&rp, &p, 6 * US);
	assert_int_equal(rp.alpha, 1003);
	/* decays to nothing, however long it was (a bounded loop) */
	eng_cc_rp_advance(&rp, &p, 1000000000000ULL);
	assert_int_equal(rp.alpha, 0);
	/* a cut with alpha 0 takes nothing: */
	p.rp_rate_reduce_monitor_period = 4;
	assert_true(eng_cc_rp_cnp(&rp, &p, 1000000000000ULL));
	/* the timer took the rate back to the line rate meanwhile */
	assert_int_equal(rp.rc, 1000000);
}

/*
 * Rate increase after a cut: each rp_time_reset (300 us) and each
 * rp_byte_reset bytes; rp_threshold 1: fast recovery while neither counter
 * reached 1, additive when one did, hyper when both did (i = the smaller
 * count - 1 + 1). Current -> (current + target + 1) / 2 every time.
 */
static void test_increase(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;
	uint64_t t;

	(void)state;
	params_fixed_alpha(&p);
	p.rp_clamp_tgt_rate = 1; /* every cut sets the target: below the max */
	p.rp_byte_reset = 0; /* the timer alone first */
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0); /* rc 750,000, rt 1,000,000 */
	/* rt = 750,000; rc = 750,000 - 187,500 */
	eng_cc_rp_cnp(&rp, &p, 4 * US);
	assert_int_equal(rp.rt, 750000);
	assert_int_equal(rp.rc, 562500);
	t = 4 * US + 300 * US;
	eng_cc_rp_advance(&rp, &p, t - 1);
	assert_int_equal(rp.rc, 562500);
	/* fast recovery: (562,500 + 750,000 + 1) / 2 = 656,250 */
	eng_cc_rp_advance(&rp, &p, t);
	assert_int_equal(rp.rc, 656250);
	assert_int_equal(rp.rt, 750000);
	assert_int_equal(rp.t_stage, 1);
	/* additive: rt 755,000; rc (656,250 + 755,000 + 1) / 2 = 705,625 */
	t += 300 * US;
	eng_cc_rp_advance(&rp, &p, t);
	assert_int_equal(rp.rt, 755000);
	assert_int_equal(rp.rc, 705625);

	/* the byte counter, every 1000 bytes */
	p.rp_byte_reset = 1000;
	eng_cc_rp_sent(&rp, &p, 999, t);
	assert_int_equal(rp.rc, 705625);
	/* t 2, b 0: additive: rt 760,000; rc 1,465,626 / 2 = 732,813 */
	eng_cc_rp_sent(&rp, &p, 1, t);
	assert_int_equal(rp.rt, 760000);
	assert_int_equal(rp.rc, 732813);
	/* t 2, b 1: hyper, i 1: rt 810,000; rc 1,542,814 / 2 = 771,407 */
	eng_cc_rp_sent(&rp, &p, 1000, t);
	assert_int_equal(rp.rt, 810000);
	assert_int_equal(rp.rc, 771407);
	/* t 2, b 2: hyper, i 2: rt 910,000; rc 1,681,408 / 2 = 840,704 */
	eng_cc_rp_sent(&rp, &p, 1000, t);
	assert_int_equal(rp.rt, 910000);
	assert_int_equal(rp.rc, 840704);
	/* t 2, b 3: i 2: rt 1,010,000 -> the max; rc 1,840,705 / 2 = 920,352 */
	eng_cc_rp_sent(&rp, &p, 1000, t);
	assert_int_equal(rp.rt, 1000000);
	assert_int_equal(rp.rc, 920352);
	assert_true(eng_cc_rp_paced(&rp));
	/* the timer brings it back to the line rate, and it is paced no more */
	eng_cc_rp_advance(&rp, &p, t + 1000000000ULL);
	assert_int_equal(rp.rc, 1000000);
	assert_false(eng_cc_rp_paced(&rp));
	/* a cut resets the stages and the counters */
	eng_cc_rp_cnp(&rp, &p, t + 1000000000ULL);
	assert_int_equal(rp.t_stage, 0);
	assert_int_equal(rp.b_stage, 0);
	assert_int_equal(rp.bytes, 0);
}

/*
 * The target on a cut without rp_clamp_tgt_rate: set to the rate if the rate
 * rose since the last cut by the timer (rp_clamp_tgt_rate_ati) or the byte
 * counter, else kept.
 */
static void test_target(void **state)
{
	struct eng_cc_params p;
	struct eng_cc_rp rp;

	(void)state;
	params_fixed_alpha(&p);
	p.rp_byte_reset = 0;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0); /* rc 750,000, rt 1,000,000 */
	/* fast recovery at 300 us: (750,000 + 1,000,000 + 1) / 2 = 875,000 */
	eng_cc_rp_advance(&rp, &p, 300 * US);
	assert_int_equal(rp.rc, 875000);
	/* a timer increase since: rt 875,000; rc 875,000 - 218,750 */
	eng_cc_rp_cnp(&rp, &p, 400 * US);
	assert_int_equal(rp.rt, 875000);
	assert_int_equal(rp.rc, 656250);
	/* none since: rt kept; 656,250 * 512 / 2048 = 164,062.5 off */
	eng_cc_rp_cnp(&rp, &p, 500 * US);
	assert_int_equal(rp.rt, 875000);
	assert_int_equal(rp.rc, 492188);

	/* rp_clamp_tgt_rate_ati 0: a timer increase leaves the target */
	p.rp_clamp_tgt_rate_ati = 0;
	eng_cc_rp_init(&rp, &p, LINE_MBPS, ENG_CC_DCQCN);
	eng_cc_rp_cnp(&rp, &p, 0);
	eng_cc_rp_advance(&rp, &p, 300 * US);
	assert_int_equal(rp.rc, 875000);
	eng_cc_rp_cnp(&rp, &p, 400 * US);
	assert_int_equal(rp.rt, 1000000);
	assert_int_equal(rp.rc, 656250);
	/* ... a byte-counter increase does: (656,250 + 1,000,000 + 1) / 2 */
	p.rp_byte_reset = 1000;
	eng_cc_rp_sent(&rp, &p, 1000, 400 * US);
	assert_int_equal(rp.rc, 828125);
	eng_cc_rp_cnp(&rp, &p, 500 * US);
	assert_int_equal(rp.rt, 828125);
	assert_int_equal(rp.rc, 621094); /* 828,125 - 207,031 */
}

/* Pacing's arithmetic: 1250 bytes at 1 Gbit/s take 10 us */
static void test_gap(void **state)
{
	(void)state;
	assert_int_equal(eng_cc_gap_ns(1000000, 1250), 10000);
	/* rounded up: 1 byte at 3 kbit/s = 2,666,666.7 ns */
	assert_int_equal(eng_cc_gap_ns(3, 1), 2666667);
	assert_int_equal(eng_cc_gap_ns(0, 1), 8000000);
}

/* The notification point: one CNP per QP per np_min_time_between_cnps */
static void test_np(void **state)
{
	struct eng_cc_params p;
	uint64_t next = 0;

	(void)state;
	eng_cc_params_default(&p);
	assert_true(eng_cc_np_due(&next, &p, 0));
	assert_int_equal(next, 4 * US);
	assert_false(eng_cc_np_due(&next, &p, 1));
	assert_false(eng_cc_np_due(&next, &p, 3999));
	assert_true(eng_cc_np_due(&next, &p, 4000));
	assert_int_equal(next, 8 * US);
	assert_true(eng_cc_np_due(&next, &p, 100 * US));
	assert_int_equal(next, 104 * US);
	/* interval 0: every one */
	p.np_min_time_between_cnps = 0;
	assert_true(eng_cc_np_due(&next, &p, 104 * US));
	assert_true(eng_cc_np_due(&next, &p, 104 * US));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_param_names),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_monitor_period),
		cmocka_unit_test(test_alpha),
		cmocka_unit_test(test_increase),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_np),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_algo_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
