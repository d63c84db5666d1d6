// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Requests held past a gap (a service of the responder, for selective
 * retransmission): a copy of each request packet that arrives ahead of the
 * expected PSN, by PSN, up to RXDP_HOLD_WINDOW ahead, until the gap is
 * filled and the responder takes them in order (resp.c). Bounded per QP by
 * the window (a table of pointers, 2 KiB, made at its first gap) and per
 * engine by ENG_HOLD_BYTES of copies: past that, nothing is held and the
 * responder's peer goes back as without a hold. Engine lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

static struct eng_held **hold_slot(struct eng_hold *h, uint32_t psn)
{
	return &h->slot[psn % RXDP_HOLD_WINDOW];
}

/*
 * Keep a copy of pi (request psn, ahead of epsn): false if there is no
 * room (the engine's bytes, memory). A PSN held already stays as it was.
 */
bool hold_put(struct rxdp_eqp *qp, const struct pkt_info *pi, uint32_t psn)
{
	struct rxdp_engine *e = qp->e;
	/* every pointer of pi points into [l3, payload + paylen) */
	uint32_t len = (uint32_t)(pi->payload + pi->paylen - pi->l3);
	uint32_t size = (uint32_t)sizeof(struct eng_held) + len;
	struct eng_held **s, *h;

	if (!qp->resp.hold) {
		qp->resp.hold = calloc(1, sizeof(*qp->resp.hold));
		if (!qp->resp.hold)
			return false;
	}
	s = hold_slot(qp->resp.hold, psn);
	if (*s && (*s)->psn == psn)
		return true;
	if (*s || e->held_bytes + size > ENG_HOLD_BYTES)
		return false;
	h = malloc(size);
	if (!h)
		return false;
	memcpy(h->data, pi->l3, len);
	h->pi = *pi;
	pkt_info_rebase(&h->pi, pi->l3, h->data);
	h->psn = psn;
	h->size = size;
	*s = h;
	if (!qp->resp.hold->n || psn_after(psn_add(psn, 1), qp->resp.hold->end))
		qp->resp.hold->end = psn_add(psn, 1);
	qp->resp.hold->n++;
	e->held_bytes += size;
	return true;
}

/* The request held for psn, or NULL */
struct pkt_info *hold_peek(struct rxdp_eqp *qp, uint32_t psn)
{
	struct eng_held *h;

	if (!qp->resp.hold || !qp->resp.hold->n)
		return NULL;
	h = *hold_slot(qp->resp.hold, psn);
	return h && h->psn == psn ? &h->pi : NULL;
}

/* psn's copy is done with (none held: nothing happens) */
void hold_drop(struct rxdp_eqp *qp, uint32_t psn)
{
	struct eng_held **s;

	if (!hold_peek(qp, psn))
		return;
	s = hold_slot(qp->resp.hold, psn);
	qp->e->held_bytes -= (*s)->size;
	free(*s);
	*s = NULL;
	qp->resp.hold->n--;
}

uint32_t hold_count(const struct rxdp_eqp *qp)
{
	return qp->resp.hold ? qp->resp.hold->n : 0;
}

/*
 * What is held before psn goes: a PSN the responder passed without taking
 * it (inside a read request's range: no requester sends one there)
 */
void hold_drop_before(struct rxdp_eqp *qp, uint32_t psn)
{
	struct eng_hold *h = qp->resp.hold;

	for (uint32_t i = 0; h && h->n && i < RXDP_HOLD_WINDOW; i++)
		if (h->slot[i] && psn_before(h->slot[i]->psn, psn))
			hold_drop(qp, h->slot[i]->psn);
}

/* Everything held is forgotten (its requests come again, or never) */
void hold_flush(struct rxdp_eqp *qp)
{
	struct eng_hold *h = qp->resp.hold;

	for (uint32_t i = 0; h && h->n && i < RXDP_HOLD_WINDOW; i++)
		if (h->slot[i])
			hold_drop(qp, h->slot[i]->psn);
}

/* The QP's hold goes away (reset, destroy) */
void hold_free(struct rxdp_eqp *qp)
{
	hold_flush(qp);
	free(qp->resp.hold);
	qp->resp.hold = NULL;
}
