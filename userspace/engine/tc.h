/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Service classes of a device, as ETS (IEEE 802.1Qaz) has them on a RoCE
 * NIC: each service level (the AH's sl) belongs to one class; a class is
 * either of strict priority (served before every other, in class order:
 * for latency) or weighted (the weighted classes share what is left in
 * proportion to their weights). By default one weighted class holds every
 * SL. Pure functions: the engine schedules by them (engine.c), rxdpd takes
 * them from --tc, rxdp-ctl shows them.
 */
#ifndef RXDP_ENGINE_TC_H
#define RXDP_ENGINE_TC_H

#include <stddef.h>
#include <stdint.h>

#define ENG_TC_MAX 4 /* classes per device */
#define ENG_SL_MAX 16 /* service levels: 4 bits */
#define ENG_TC_WEIGHT_MAX 100

struct eng_tc {
	uint8_t strict; /* strict priority (weight unused) */
	uint8_t weight; /* 1..ENG_TC_WEIGHT_MAX among the weighted classes */
};

struct eng_tcs {
	uint8_t n; /* classes, 1..ENG_TC_MAX (0 in a record not set up) */
	struct eng_tc tc[ENG_TC_MAX];
	uint8_t sl_tc[ENG_SL_MAX]; /* each SL's class */
	uint16_t named; /* the SLs a class was made for (eng_tcs_add) */
	/* bytes a pass for the heaviest class sending (0: ENG_TC_QUANTUM) */
	uint32_t quantum;
};

#define ENG_TC_QUANTUM (1U << 20)

/* One weighted class of weight 1 with every SL (what a device has) */
void eng_tcs_default(struct eng_tcs *t);

/*
 * A class more, from "SLS=strict" or "SLS=WEIGHT" (SLS a list of SLs and
 * ranges: "5", "0-3,6"): 0; -EINVAL for a spec that does not parse,
 * -EEXIST for an SL another class has, -ENOSPC past ENG_TC_MAX. The first
 * call replaces the default class; eng_tcs_finish() ends the list.
 */
int eng_tcs_add(struct eng_tcs *t, const char *spec);

/*
 * The SLs no class was made for go to a weighted class of weight 1 of
 * their own (after the others): 0, or -ENOSPC if there is no room for it
 */
int eng_tcs_finish(struct eng_tcs *t);

/* Class k's SLs as a list ("0-4,6-15") into buf: the length written */
int eng_tcs_sls(const struct eng_tcs *t, unsigned int k, char *buf, size_t len);

/* The class of a service level (its low 4 bits) */
static inline unsigned int eng_tcs_class(const struct eng_tcs *t, uint8_t sl)
{
	return t->n ? t->sl_tc[sl % ENG_SL_MAX] : 0;
}

#endif
