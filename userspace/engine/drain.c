// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What owners post, into the engine: every pass takes the WQEs owners put
 * in their rings (common/hca.h: the verbs library for an application, the
 * ring's poster in tests and for rxdpd's QP1) straight into the engine's
 * records (struct swqe, struct rwqe), one format from the queue to the
 * wire.
 *
 * Nothing in an owner's ring is believed:
 * - a WQE is copied out of the ring before it is looked at, then checked as
 *   the library checks it when it posts (rxdp_hca_send_check()), and
 *   against the QP (its AH of its PD); a bad send WQE completes with
 *   IBV_WC_LOC_QP_OP_ERR in its turn (which takes the QP to ERR), a bad
 *   receive WQE is a fatal error of the QP (IBV_EVENT_SRQ_ERR for an SRQ's,
 *   which stays);
 * - sizes and strides are the engine's own, never read back;
 * - the owner's producer index is taken only as far as its ring holds: an
 *   owner has at most size WQEs posted and not yet done, so an index that
 *   claims more (or went back) is a fatal error of that QP
 *   (IBV_EVENT_QP_FATAL, ERR), not a loop.
 * - a pass takes at most ENG_DRAIN_QP WQEs of a queue and ENG_DRAIN_OWNER
 *   of an owner, round robin over the QPs: what an owner posts costs the
 *   others at most that much per pass, whatever its indexes say.
 *
 * The engine publishes what it took (cons, for the owner's information)
 * and which slots are free again (done), before the completion that frees
 * a slot, and the QP's state before an error completion (qpstate_publish),
 * so an owner that reposts or queries on a completion sees both.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

#define ENG_DRAIN_QP 64 /* WQEs of one queue per pass */
#define ENG_DRAIN_OWNER 256 /* WQEs of one owner per pass */

/*
 * One send WQE of the owner's ring into the record w (its SGE and inline
 * areas are w's own): false if it breaks the rules
 */
static bool swqe_take(struct rxdp_eqp *qp, const struct rxdp_hca_swqe *in,
		      struct swqe *w, uint8_t *inl)
{
	struct rxdp_hca_qp_caps caps = {
		.qp_type = qp->type,
		.max_send_sge = qp->cap.max_send_sge,
		.max_inline = qp->cap.max_inline_data,
	};
	struct rxdp_engine *e = qp->e;
	struct rxdp_hca_swqe h;
	uint32_t nsge = 0;
	uint64_t total = 0;
	bool local;

	memcpy(&h, in, sizeof(h)); /* once: the owner may change it meanwhile */
	local = h.opcode == IBV_WR_BIND_MW || h.opcode == IBV_WR_LOCAL_INV;
	w->wr_id = h.wr_id;
	w->opcode = h.opcode;
	w->send_flags = h.send_flags & ~RXDP_HCA_SEND_GATHERED;
	w->imm = h.imm_data;
	w->inv_rkey = h.imm_data; /* the invalidations' key: a union */
	w->num_sge = 0;
	w->inl = NULL;
	w->gathered = false;
	w->mem_seq = 0;
	w->started = w->done = false;
	w->status = IBV_WC_SUCCESS;
	if (local) {
		/* no payload: SGEs are not looked at */
	} else if (h.send_flags & IBV_SEND_INLINE) {
		/* num_sge is the inline length: copied here at once */
		if (h.num_sge > qp->cap.max_inline_data)
			return false;
		memcpy(inl, in->sge, h.num_sge);
		w->inl = inl;
		total = h.num_sge;
		nsge = h.num_sge ? 1 : 0;
	} else {
		if (h.num_sge > qp->cap.max_send_sge)
			return false;
		nsge = h.num_sge;
		memcpy(w->sge, in->sge, nsge * sizeof(*w->sge));
		for (uint32_t i = 0; i < nsge; i++)
			total += w->sge[i].length;
		w->num_sge = (int)nsge;
		if (h.send_flags & RXDP_HCA_SEND_GATHERED) {
			/* the bytes come with their SGEs, checked at start */
			if (total > RXDP_HCA_GATHER_MAX)
				return false;
			memcpy(inl, in->sge + nsge, total);
			w->inl = inl;
			w->gathered = true;
		}
	}
	if (rxdp_hca_send_check(&caps, h.opcode, h.send_flags, nsge, total,
				h.remote_addr,
				w->num_sge ? w->sge[0].length : 0))
		return false;
	if (h.opcode == RXDP_WR_FLUSH &&
	    rxdp_hca_flush_check(h.compare_add, h.swap & 0xff,
				 (h.swap >> 8) & 0xff))
		return false;
	w->length = (uint32_t)total;
	switch (h.opcode) {
	case IBV_WR_BIND_MW:
		/* the overlay of common/hca.h */
		w->mw_key = h.remote_qpn;
		w->new_key = h.rkey;
		w->mr_key = h.remote_qkey;
		w->bind_addr = h.remote_addr;
		w->bind_len = h.remote_qkey ? h.compare_add : 0;
		w->bind_access = (unsigned int)h.swap;
		break;
	case IBV_WR_LOCAL_INV:
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->raddr = h.remote_addr;
		w->rkey = h.rkey;
		w->compare_add = h.compare_add;
		w->swap = h.swap;
		w->length = 8;
		break;
	case IBV_WR_ATOMIC_WRITE: /* the layouts of common/hca.h */
		w->raddr = h.remote_addr;
		w->rkey = h.rkey;
		w->compare_add = h.compare_add;
		w->length = 8;
		break;
	case RXDP_WR_FLUSH:
		w->raddr = h.remote_addr;
		w->rkey = h.rkey;
		w->length = (uint32_t)h.compare_add;
		w->flush_type = h.swap & 0xff;
		w->flush_level = (h.swap >> 8) & 0xff;
		break;
	default:
		if (qp->type == IBV_QPT_UD) {
			struct rxdp_eah *ah =
				e->cfg.ah_lookup
					? e->cfg.ah_lookup(e->cfg.ah_arg, h.ah)
					: NULL;

			if (!ah || ah->pd != qp->pd)
				return false;
			w->ud_path = ah->path;
			w->ud_qpn = h.remote_qpn & ROCE_QPN_MASK;
			/* IBTA 10.2.5: the high bit set means the QP's Q_Key */
			w->ud_qkey = (h.remote_qkey & 0x80000000U)
					     ? qp->qkey
					     : h.remote_qkey;
		} else {
			w->raddr = h.remote_addr;
			w->rkey = h.rkey;
		}
		break;
	}
	return true;
}

/* A QP whose owner's indexes made no sense: fatal, drained no more */
static void qp_broken(struct rxdp_eqp *qp, const char *what)
{
	qp->broken = true;
	qp->e->stats.bad_wqes++;
	pr_debug("engine: QP %u: %s index beyond its ring: QP to ERR\n",
		 qp->qpn, what);
	/* the owner hears of it even if the QP was in ERR already */
	if (atomic_load(&qp->state) != IBV_QPS_ERR)
		qpstate_to_err(qp, true);
	else
		eng_event(qp->e, IBV_EVENT_QP_FATAL, qp->user);
}

static int drain_sq(struct rxdp_eqp *qp, uint32_t *budget)
{
	struct rxdp_hca_wq *sq = &qp->sh->sq;
	uint32_t prod = atomic_load_explicit(&sq->prod, memory_order_acquire);
	uint32_t taken =
		atomic_load_explicit(&qp->sq_prod, memory_order_relaxed);
	uint32_t done =
		atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	uint32_t n = prod - taken, k;

	if (!n)
		return 0;
	if (prod - done > qp->sq_size || (int32_t)(prod - taken) < 0) {
		qp_broken(qp, "send queue");
		return 0;
	}
	qp->post_cpu = atomic_load_explicit(&sq->cpu, memory_order_relaxed);
	qp->post_ns = qp->e->now;
	/* prod - done <= size: everything posted fits the records */
	if (n > ENG_DRAIN_QP)
		n = ENG_DRAIN_QP;
	if (n > *budget)
		n = *budget;
	for (k = 0; k < n; k++) {
		uint32_t i = (taken + k) & (qp->sq_size - 1);
		struct swqe *w = &qp->sq[i];

		if (!swqe_take(qp,
			       rxdp_hca_slot(qp->sh_sq, taken + k, qp->sq_size,
					     qp->sq_stride),
			       w,
			       qp->sq_inl + (size_t)i * eng_inl_stride(qp))) {
			/* completes with IBV_WC_LOC_QP_OP_ERR in its turn */
			w->num_sge = 0;
			w->inl = NULL;
			w->started = w->done = true;
			w->status = IBV_WC_LOC_QP_OP_ERR;
			qp->e->stats.bad_wqes++;
		}
	}
	atomic_store_explicit(&qp->sq_prod, taken + n, memory_order_release);
	atomic_store_explicit(&sq->cons, taken + n, memory_order_release);
	*budget -= n;
	return (int)n;
}

/*
 * Receive WQEs of a ring (a QP's RQ or an SRQ) into records: how many, or
 * -1 if the owner broke the rules (its index, a WQE)
 */
static int drain_rq(struct eng_rq *q, uint32_t *budget)
{
	uint32_t prod =
		atomic_load_explicit(&q->sh->prod, memory_order_acquire);
	uint32_t taken = atomic_load_explicit(&q->prod, memory_order_relaxed);
	uint32_t done = atomic_load_explicit(&q->cons, memory_order_relaxed);
	uint32_t n = prod - taken, k;

	if (!n)
		return 0;
	if (prod - done > q->size || (int32_t)(prod - taken) < 0)
		return -1;
	if (n > ENG_DRAIN_QP)
		n = ENG_DRAIN_QP;
	if (n > *budget)
		n = *budget;
	for (k = 0; k < n; k++) {
		const struct rxdp_hca_rwqe *in =
			rxdp_hca_slot(q->ring, taken + k, q->size, q->stride);
		struct rwqe *r = &q->rec[(taken + k) & (q->size - 1)];
		struct rxdp_hca_rwqe h;

		memcpy(&h, in, sizeof(h));
		if (h.num_sge > q->max_sge)
			break;
		r->wr_id = h.wr_id;
		r->num_sge = (int)h.num_sge;
		memcpy(r->sge, in->sge, h.num_sge * sizeof(*r->sge));
	}
	atomic_store_explicit(&q->prod, taken + k, memory_order_release);
	atomic_store_explicit(&q->sh->cons, taken + k, memory_order_release);
	*budget -= k;
	return k < n ? -1 : (int)k;
}

/*
 * A Send found no receive WQE taken: look at the owner's ring now, as an
 * HCA fetches a WQE it was told of, rather than answer RNR to a receive
 * posted since the pass drained (a peer with a small rnr_retry would fail).
 * At most one ring's worth per call; a ring that breaks the rules is left
 * for the pass, which makes the QP (or SRQ) fail. Engine lock held.
 */
bool eng_drain_recv(struct rxdp_eqp *qp)
{
	uint32_t budget = ENG_DRAIN_QP;

	if (qp->broken || !qp->sh)
		return false;
	if (qp->srq)
		return !qp->srq->broken && drain_rq(&qp->srq->rq, &budget) > 0;
	return drain_rq(&qp->rq_own, &budget) > 0;
}

static int drain_qp(struct rxdp_eqp *qp, uint32_t *budget)
{
	int state = atomic_load(&qp->state), n = 0, r;

	if (state == IBV_QPS_RESET || qp->broken)
		return 0;
	/* IBTA 10.8.2: no send WQE before RTS (the library refuses them) */
	if (state != IBV_QPS_INIT && state != IBV_QPS_RTR)
		n = drain_sq(qp, budget);
	if (qp->srq || qp->broken)
		return n;
	r = drain_rq(&qp->rq_own, budget);
	if (r < 0)
		qp_broken(qp, "receive queue (or a WQE in it)");
	return n + (r > 0 ? r : 0);
}

/*
 * Everything posted to a QP's rings taken now, whatever a pass's budget
 * (a QP restored from a predecessor's state: its records are rebuilt from
 * the rings before its progress is laid over them). false if a ring broke
 * the rules. Engine lock held.
 */
bool eng_drain_qp_all(struct rxdp_eqp *qp)
{
	uint32_t budget;

	do
		budget = ENG_DRAIN_QP;
	while (drain_qp(qp, &budget) > 0 && !qp->broken);
	return !qp->broken;
}

/* The same for an SRQ's ring */
bool eng_drain_srq_all(struct rxdp_esrq *srq)
{
	uint32_t budget;
	int r;

	do {
		budget = ENG_DRAIN_QP;
		r = drain_rq(&srq->rq, &budget);
	} while (r > 0);
	return r == 0;
}

/* Take what the owners posted: engine lock held, once per pass */
int eng_drain(struct rxdp_engine *e)
{
	struct rxdp_eqp *start = e->drain_next ? e->drain_next : e->qps;
	int n = 0;

	e->mem0.drain_left = ENG_DRAIN_OWNER;
	for (struct rxdp_emem *m = e->mems; m; m = m->next)
		m->drain_left = ENG_DRAIN_OWNER;
	for (struct rxdp_esrq *srq = e->srqs; srq; srq = srq->next) {
		int r;

		if (srq->broken)
			continue;
		r = drain_rq(&srq->rq, &srq->pd->m->drain_left);
		if (r < 0) {
			/* the owner hears of it once; what it took stays */
			srq->broken = true;
			eng_event(e, IBV_EVENT_SRQ_ERR, srq->user);
			e->stats.bad_wqes++;
		} else {
			n += r;
		}
	}
	/* round robin: each pass starts one QP further */
	for (struct rxdp_eqp *qp = start; qp; qp = qp->next)
		n += drain_qp(qp, &qp->pd->m->drain_left);
	for (struct rxdp_eqp *qp = e->qps; qp && qp != start; qp = qp->next)
		n += drain_qp(qp, &qp->pd->m->drain_left);
	e->drain_next = start ? start->next : NULL;
	return n;
}

/*
 * Take the next receive WQE (the QP's RQ or its SRQ) as the current one, if
 * there is no current one yet. false: none posted (RNR).
 */
bool eng_rq_take(struct rxdp_eqp *qp)
{
	struct eng_rq *q = qp->rq;
	uint32_t prod, cons;
	struct rwqe *r;

	if (qp->resp.cur_valid)
		return true;
	prod = atomic_load_explicit(&q->prod, memory_order_acquire);
	cons = atomic_load_explicit(&q->cons, memory_order_relaxed);
	if (prod == cons) {
		if (!eng_drain_recv(qp))
			return false;
		prod = atomic_load_explicit(&q->prod, memory_order_acquire);
	}
	r = &q->rec[cons & (q->size - 1)];
	qp->resp.cur_wr_id = r->wr_id;
	qp->resp.cur_nsge = r->num_sge;
	memcpy(qp->resp.cur_sge, r->sge, r->num_sge * sizeof(*r->sge));
	qp->resp.cur_valid = true;
	qpstate_rq_free(q, cons + 1);
	/* IBTA 11.2.7.1 (o11-?): the SRQ limit event fires once, then disarms */
	if (qp->srq && qp->srq->limit && prod - cons - 1 < qp->srq->limit) {
		qp->srq->limit = 0;
		eng_event(qp->e, IBV_EVENT_SRQ_LIMIT_REACHED, qp->srq->user);
	}
	return true;
}
