// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * DCQCN's reaction point, the delay algorithm and the notification point's
 * rule (cc.h): pure, the caller gives the time.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cc.h"

#define NS_PER_US 1000ULL
#define KBPS_PER_MBPS 1000ULL
#define CC_DEFAULT_LINE_MBPS 100000U

void eng_cc_params_default(struct eng_cc_params *p)
{
	*p = (struct eng_cc_params){
		.rp_clamp_tgt_rate = 0,
		.rp_clamp_tgt_rate_ati = 1,
		.rp_time_reset = 300,
		.rp_byte_reset = 32767,
		.rp_threshold = 1,
		.rp_ai_rate = 5,
		.rp_hai_rate = 50,
		.rp_gd = 11,
		.rp_min_dec_fac = 50,
		.rp_min_rate = 1,
		.rp_max_rate = 0,
		.rp_rate_to_set_on_first_cnp = 0,
		.rp_dce_tcp_g = 1019,
		.rp_dce_tcp_rtt = 1,
		.rp_rate_reduce_monitor_period = 4,
		.rp_initial_alpha_value = 1023,
		.np_min_time_between_cnps = 4,
		.np_cnp_dscp = 48,
		.np_cnp_prio = 6,
		/* README "Congestion" says how these were chosen */
		.delay_target = 500,
		.delay_ai_rate = 10,
		.delay_beta = 819,
	};
}

static const char *const cc_algo_name[] = {
	[ENG_CC_DCQCN] = "dcqcn",
	[ENG_CC_DELAY] = "delay",
	[ENG_CC_OFF] = "off",
};

const char *eng_cc_algo_name(enum eng_cc_algo a)
{
	return (unsigned int)a < sizeof(cc_algo_name) / sizeof(cc_algo_name[0])
		       ? cc_algo_name[a]
		       : NULL;
}

int eng_cc_algo_parse(const char *name, enum eng_cc_algo *a)
{
	for (unsigned int i = 0;
	     i < sizeof(cc_algo_name) / sizeof(cc_algo_name[0]); i++)
		if (!strcmp(cc_algo_name[i], name)) {
			*a = (enum eng_cc_algo)i;
			return 0;
		}
	return -ENOENT;
}

#define CC_PARAM(n)                                   \
	{                                             \
#n, offsetof(struct eng_cc_params, n) \
	}
static const struct {
	const char *name;
	size_t off;
} cc_param[] = {
	CC_PARAM(rp_clamp_tgt_rate),
	CC_PARAM(rp_clamp_tgt_rate_ati),
	CC_PARAM(rp_time_reset),
	CC_PARAM(rp_byte_reset),
	CC_PARAM(rp_threshold),
	CC_PARAM(rp_ai_rate),
	CC_PARAM(rp_hai_rate),
	CC_PARAM(rp_gd),
	CC_PARAM(rp_min_dec_fac),
	CC_PARAM(rp_min_rate),
	CC_PARAM(rp_max_rate),
	CC_PARAM(rp_rate_to_set_on_first_cnp),
	CC_PARAM(rp_dce_tcp_g),
	CC_PARAM(rp_dce_tcp_rtt),
	CC_PARAM(rp_rate_reduce_monitor_period),
	CC_PARAM(rp_initial_alpha_value),
	CC_PARAM(np_min_time_between_cnps),
	CC_PARAM(np_cnp_dscp),
	CC_PARAM(np_cnp_prio),
	CC_PARAM(delay_target),
	CC_PARAM(delay_ai_rate),
	CC_PARAM(delay_beta),
};
/* every field of the struct is in the table */
_Static_assert(sizeof(cc_param) / sizeof(cc_param[0]) ==
		       sizeof(struct eng_cc_params) / sizeof(uint32_t),
	       "a parameter of struct eng_cc_params has no name");

int eng_cc_param_set(struct eng_cc_params *p, const char *name, uint32_t v)
{
	for (size_t i = 0; i < sizeof(cc_param) / sizeof(cc_param[0]); i++)
		if (!strcmp(cc_param[i].name, name)) {
			memcpy((char *)p + cc_param[i].off, &v, sizeof(v));
			return 0;
		}
	return -ENOENT;
}

const char *eng_cc_param_name(unsigned int i)
{
	return i < sizeof(cc_param) / sizeof(cc_param[0]) ? cc_param[i].name
							  : NULL;
}

void eng_cc_rp_init(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		    uint32_t line_mbps, enum eng_cc_algo algo)
{
	uint32_t mbps = p->rp_max_rate ? p->rp_max_rate
			: line_mbps    ? line_mbps
				       : CC_DEFAULT_LINE_MBPS;

	*rp = (struct eng_cc_rp){ .algo = algo,
				  .max = (uint64_t)mbps * KBPS_PER_MBPS };
	rp->rc = rp->rt = rp->max;
	rp->alpha = p->rp_initial_alpha_value;
}

static uint64_t cc_min_rate(const struct eng_cc_params *p)
{
	return (uint64_t)p->rp_min_rate * KBPS_PER_MBPS;
}

/*
 * One increase, the timer's or the byte counter's. The stage comes from the
 * increases of each kind before this one: both under rp_threshold, fast
 * recovery (current halfway to target); one of them there, additive
 * (target + rp_ai_rate); both, hyper (target + i * rp_hai_rate, i the
 * increases past the threshold of the kind with fewer).
 */
static void cc_increase(struct eng_cc_rp *rp, const struct eng_cc_params *p,
			bool timer)
{
	uint32_t f = p->rp_threshold;
	uint32_t lo = rp->t_stage < rp->b_stage ? rp->t_stage : rp->b_stage;
	uint32_t hi = rp->t_stage < rp->b_stage ? rp->b_stage : rp->t_stage;
	uint64_t add = 0;

	if (lo >= f)
		add = (uint64_t)(lo - f + 1) * p->rp_hai_rate * KBPS_PER_MBPS;
	else if (hi >= f)
		add = (uint64_t)p->rp_ai_rate * KBPS_PER_MBPS;
	rp->rt += add;
	if (rp->rt > rp->max)
		rp->rt = rp->max;
	/* rounded up, so that the current rate reaches the target */
	rp->rc = (rp->rc + rp->rt + 1) / 2;
	if (timer) {
		rp->t_stage++;
		rp->timer_inc = true;
	} else {
		rp->b_stage++;
		rp->byte_inc = true;
	}
}

static bool cc_at_max(const struct eng_cc_rp *rp)
{
	return rp->rc >= rp->max && rp->rt >= rp->max;
}

/*
 * Alpha, once per rp_dce_tcp_rtt: up if a CNP came in the period,
 * alpha = alpha * g / 1024 + (1024 - g), else down, alpha = alpha * g / 1024.
 */
static void cc_alpha_advance(struct eng_cc_rp *rp,
			     const struct eng_cc_params *p, uint64_t now)
{
	uint64_t period = (uint64_t)p->rp_dce_tcp_rtt * NS_PER_US;
	uint32_t g = p->rp_dce_tcp_g;
	uint64_t n;

	if (!period || now < rp->alpha_ts + period)
		return;
	n = (now - rp->alpha_ts) / period;
	rp->alpha_ts += n * period;
	if (rp->cnp_in_period) {
		rp->alpha = rp->alpha * g / ENG_CC_ALPHA_ONE +
			    (ENG_CC_ALPHA_ONE - g);
		if (rp->alpha >= ENG_CC_ALPHA_ONE)
			rp->alpha = ENG_CC_ALPHA_ONE - 1;
		rp->cnp_in_period = false;
		n--;
	}
	/* every step takes at least 1 off while g < 1024: bounded by alpha */
	while (n-- && rp->alpha)
		rp->alpha = rp->alpha * g / ENG_CC_ALPHA_ONE;
}

void eng_cc_rp_advance(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		       uint64_t now)
{
	uint64_t period = (uint64_t)p->rp_time_reset * NS_PER_US;

	if (!rp->active || rp->algo != ENG_CC_DCQCN)
		return;
	cc_alpha_advance(rp, p, now);
	if (!period)
		return;
	while (now >= rp->timer_ts + period) {
		if (cc_at_max(rp)) {
			/* nothing left to increase: skip the idle periods */
			rp->timer_ts += (now - rp->timer_ts) / period * period;
			break;
		}
		rp->timer_ts += period;
		cc_increase(rp, p, true);
	}
}

bool eng_cc_rp_cnp(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		   uint64_t now)
{
	bool first = !rp->active;
	uint64_t floor;

	if (rp->algo != ENG_CC_DCQCN)
		return false;
	eng_cc_rp_advance(rp, p, now);
	rp->cnps++;
	if (first) {
		rp->active = true;
		rp->alpha = p->rp_initial_alpha_value;
		rp->alpha_ts = now;
	} else if (now - rp->last_cut <
		   (uint64_t)p->rp_rate_reduce_monitor_period * NS_PER_US) {
		rp->cnp_in_period = true;
		return false;
	}
	rp->cnp_in_period = true;
	if (first && p->rp_rate_to_set_on_first_cnp) {
		rp->rc = (uint64_t)p->rp_rate_to_set_on_first_cnp *
			 KBPS_PER_MBPS;
		if (rp->rc > rp->max)
			rp->rc = rp->max;
		rp->rt = rp->rc;
	} else {
		/*
		 * The target keeps what the rate had reached unless the rate
		 * rose since the last cut (by the byte counter, or by the
		 * timer with rp_clamp_tgt_rate_ati), or rp_clamp_tgt_rate.
		 */
		if (first || p->rp_clamp_tgt_rate || rp->byte_inc ||
		    (p->rp_clamp_tgt_rate_ati && rp->timer_inc))
			rp->rt = rp->rc;
		floor = rp->rc * p->rp_min_dec_fac / 100;
		rp->rc -= rp->rc * rp->alpha >> p->rp_gd;
		if (rp->rc < floor)
			rp->rc = floor;
	}
	if (rp->rc < cc_min_rate(p))
		rp->rc = cc_min_rate(p);
	rp->t_stage = rp->b_stage = 0;
	rp->timer_inc = rp->byte_inc = false;
	rp->bytes = 0;
	rp->timer_ts = now;
	rp->last_cut = now;
	rp->cuts++;
	return true;
}

void eng_cc_rp_sent(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		    uint32_t bytes, uint64_t now)
{
	if (!rp->active || rp->algo != ENG_CC_DCQCN)
		return;
	eng_cc_rp_advance(rp, p, now);
	if (!p->rp_byte_reset)
		return;
	rp->bytes += bytes;
	while (rp->bytes >= p->rp_byte_reset) {
		rp->bytes -= p->rp_byte_reset;
		if (!cc_at_max(rp))
			cc_increase(rp, p, false);
	}
}

/* The rate moved to rc, kept within rp_min_rate and the maximum */
static void cc_delay_set(struct eng_cc_rp *rp, const struct eng_cc_params *p,
			 uint64_t rc)
{
	if (rc < cc_min_rate(p))
		rc = cc_min_rate(p);
	if (rc > rp->max)
		rc = rp->max;
	rp->rc = rp->rt = rc;
}

/*
 * Swift's rule on a rate, once per RTT sample: at or under delay_target an
 * additive increase (delay_ai_rate: a sample comes once a round trip, so
 * per round trip, as Swift's window grows); over it a cut by
 * beta * (rtt - target) / rtt, at most once a round trip (the samples of
 * the round trip after a cut still see the queue it left) and keeping at
 * least rp_min_dec_fac % of the rate, as DCQCN's cut does. No gradient:
 * the round trips of a software peer vary by more than a queue's growth.
 */
bool eng_cc_rp_rtt(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		   uint64_t rtt, uint64_t now)
{
	uint64_t target = (uint64_t)p->delay_target * NS_PER_US, cut, keep;

	if (rp->algo != ENG_CC_DELAY)
		return false;
	if (rtt <= target) {
		cc_delay_set(rp, p,
			     rp->rc + (uint64_t)p->delay_ai_rate *
					      KBPS_PER_MBPS);
		return false;
	}
	if (rp->cuts && now - rp->last_cut < rtt)
		return false;
	/* rc * beta * (rtt - target) / rtt, in 128 bits: rtt may be seconds */
	cut = (uint64_t)((unsigned __int128)rp->rc * p->delay_beta *
			 (rtt - target) / rtt / ENG_CC_ALPHA_ONE);
	keep = rp->rc * p->rp_min_dec_fac / 100;
	if (rp->rc - cut < keep)
		cut = rp->rc - keep;
	rp->active = true;
	rp->cuts++;
	rp->last_cut = now;
	cc_delay_set(rp, p, rp->rc - cut);
	return true;
}

uint64_t eng_cc_gap_ns(uint64_t kbps, uint32_t bytes)
{
	/* bytes * 8 bits / (kbps * 1000 bit/s) s = bytes * 8e6 / kbps ns */
	if (!kbps)
		kbps = 1;
	return ((uint64_t)bytes * 8000000ULL + kbps - 1) / kbps;
}

bool eng_cc_np_due(uint64_t *next, const struct eng_cc_params *p, uint64_t now)
{
	if (now < *next)
		return false;
	*next = now + (uint64_t)p->np_min_time_between_cnps * NS_PER_US;
	return true;
}
