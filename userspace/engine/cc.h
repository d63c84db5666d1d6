/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Congestion control: DCQCN (Zhu et al., SIGCOMM 2015) as ConnectX runs it,
 * with mlx5's cc_params names and defaults. The reaction point (a QP's
 * current and target rate and alpha) and the notification point's rule (one
 * CNP per QP per interval), as pure functions of (state, event, now): no
 * clock of their own, no timers. Everything periodic (alpha's update, the
 * rate-increase timer) is applied when the next event or eng_cc_rp_advance()
 * looks, for every period that ended since, so no timer ever has to fire at
 * dce_tcp_rtt's 1 us.
 *
 * And a delay-based algorithm for networks whose switches never mark (Swift's
 * rule, Kumar et al., SIGCOMM 2020, on a rate): the same per-QP rate, moved
 * by each RTT sample the requester already takes, never by CNPs. Per device
 * one of the two, or none (enum eng_cc_algo).
 *
 * Units: times in ns, rates in kbit/s (the parameters, as mlx5's, in Mbit/s
 * and microseconds), alpha and the delay algorithm's weights in 1/1024.
 */
#ifndef RXDP_ENGINE_CC_H
#define RXDP_ENGINE_CC_H

#include <stdbool.h>
#include <stdint.h>

#define ENG_CC_ALPHA_ONE 1024U

/* What moves a QP's rate (a device's choice, rxdpd --cc-algo) */
enum eng_cc_algo {
	ENG_CC_DCQCN, /* CNPs (the default, as ConnectX) */
	ENG_CC_DELAY, /* RTT samples; CNPs are ignored */
	ENG_CC_OFF, /* nothing: no CNPs sent or taken, never paced */
};
/* "dcqcn", "delay", "off"; NULL for no such algorithm */
const char *eng_cc_algo_name(enum eng_cc_algo a);
/* The algorithm of that name: 0, or -ENOENT */
int eng_cc_algo_parse(const char *name, enum eng_cc_algo *a);

/* mlx5's cc_params (reaction point rp_*, notification point np_*) */
struct eng_cc_params {
	uint32_t rp_clamp_tgt_rate; /* every cut sets target = current */
	uint32_t rp_clamp_tgt_rate_ati; /* ... and so does a timer increase */
	uint32_t rp_time_reset; /* us between timer increases */
	uint32_t rp_byte_reset; /* bytes between byte increases; 0: none */
	uint32_t rp_threshold; /* increases of one kind before the next stage */
	uint32_t rp_ai_rate; /* Mbit/s, additive increase */
	uint32_t rp_hai_rate; /* Mbit/s, hyper increase */
	uint32_t rp_gd; /* cut = current * alpha / 2^rp_gd (alpha in 1/1024) */
	uint32_t rp_min_dec_fac; /* %: a cut keeps at least this much */
	uint32_t rp_min_rate; /* Mbit/s */
	uint32_t rp_max_rate; /* Mbit/s; 0: the line rate */
	uint32_t rp_rate_to_set_on_first_cnp; /* Mbit/s; 0: the first CNP cuts */
	uint32_t rp_dce_tcp_g; /* alpha's weight, 1/1024 */
	uint32_t rp_dce_tcp_rtt; /* us between alpha's updates */
	uint32_t rp_rate_reduce_monitor_period; /* us: at most one cut per */
	uint32_t rp_initial_alpha_value; /* 1/1024, alpha at the first CNP */
	uint32_t np_min_time_between_cnps; /* us, per QP */
	uint32_t np_cnp_dscp;
	uint32_t np_cnp_prio; /* PCP of a CNP sent on a VLAN */
	/* the delay algorithm's (rxdp's own names) */
	uint32_t delay_target; /* us: an RTT above it is a queue to drain */
	uint32_t delay_ai_rate; /* Mbit/s, the increase per sample under it */
	uint32_t delay_beta; /* 1/1024, how deep a cut per unit of excess */
};

void eng_cc_params_default(struct eng_cc_params *p);
/*
 * One parameter by its mlx5 name (as in mlx5's cc_params debugfs files):
 * 0, or -ENOENT for no such name
 */
int eng_cc_param_set(struct eng_cc_params *p, const char *name, uint32_t v);
/* The names eng_cc_param_set() knows, in order; NULL after the last */
const char *eng_cc_param_name(unsigned int i);

/* A QP's reaction point */
struct eng_cc_rp {
	enum eng_cc_algo algo;
	uint64_t max; /* kbit/s: the line rate, or rp_max_rate */
	uint64_t rc; /* current rate, what the QP is paced to */
	uint64_t rt; /* target rate */
	uint32_t alpha;
	bool active; /* a CNP was handled: paced from then on */
	bool cnp_in_period; /* a CNP in alpha's current period */
	bool timer_inc, byte_inc; /* increases since the last cut */
	uint32_t t_stage, b_stage; /* timer and byte increases since the cut */
	uint64_t alpha_ts; /* ns: alpha's current period began */
	uint64_t timer_ts; /* ns: the increase timer's period began */
	uint64_t bytes; /* sent since the last byte increase or cut */
	uint64_t last_cut; /* ns */
	uint64_t cnps, cuts; /* CNPs handled, the cuts made */
};

/* line_mbps: the port's speed (0: unknown, 100 Gbit/s assumed) */
void eng_cc_rp_init(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		    uint32_t line_mbps, enum eng_cc_algo algo);
/* Every alpha period and increase timer that ended by now */
void eng_cc_rp_advance(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		       uint64_t now);
/*
 * A CNP for the QP: true if it cut the rate; false within the monitor
 * period, and when the QP's algorithm is not DCQCN (the CNP is ignored)
 */
bool eng_cc_rp_cnp(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		   uint64_t now);
/* The QP sent bytes (the byte counter's increases) */
void eng_cc_rp_sent(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		    uint32_t bytes, uint64_t now);
/*
 * The delay algorithm: an RTT sample of rtt ns (one timed packet's, to the
 * ACK that covered it) at now. True if it cut the rate; nothing for other
 * algorithms.
 */
bool eng_cc_rp_rtt(struct eng_cc_rp *rp, const struct eng_cc_params *p,
		   uint64_t rtt, uint64_t now);
/* Whether the QP is paced at all: only below its maximum rate */
static inline bool eng_cc_rp_paced(const struct eng_cc_rp *rp)
{
	return rp->active && rp->rc < rp->max;
}

/* ns that bytes take at rate kbit/s (rounded up; rate 0 counts as 1) */
uint64_t eng_cc_gap_ns(uint64_t kbps, uint32_t bytes);

/*
 * The notification point's rule: may a CNP go to this QP now? next: the QP's
 * earliest time for the next one (0 at first); moved on when true.
 */
bool eng_cc_np_due(uint64_t *next, const struct eng_cc_params *p, uint64_t now);

#endif /* RXDP_ENGINE_CC_H */
