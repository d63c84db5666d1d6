// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A QP's transport state saved for a successor and restored there, and
 * an SRQ's (engine.h, "a QP handed to a successor"; README.md, "Takeover").
 *
 * The format is this file's: a header (magic, version, its own size), the
 * QP's state as plain fields (no pointer: everything a pointer reached is
 * either taken again from the owner's rings or left to loss recovery), then
 * one record per WQE from the send ring's done index on. A version this
 * file does not read is refused whole, never half restored.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"

#define TK_MAGIC 0x53515852U /* "RXQS" */
#define TK_VERSION 1U

/* The progress of one WQE, and its wr_id to know it again in the ring */
struct tk_wqe {
	uint64_t wr_id;
	uint32_t first_psn, npkts, resp_psn, resp_off;
	uint32_t status;
	uint8_t started, done, pad[6];
};

struct tk_qp {
	uint32_t magic, version, size, qpn;
	uint32_t type, state;
	uint32_t sq_done, nwqe; /* send records from sq_done on */
	uint32_t rq_done; /* the QP's own RQ: records from here on */
	/* requester */
	uint32_t next_psn, tx_hw, rd_outstanding;
	/* completer */
	uint32_t una, rnr_psn, cwnd, cwnd_acked, cwr_psn;
	uint8_t retry_left, rnr_left, rtt_known, cwr;
	uint64_t rnr_at, srtt, rttvar, rtt_min;
	/* responder */
	uint32_t epsn, msn, rseq, recv_off, recv_len, wr_left, wr_len;
	uint32_t acache_next, resp_sent_psn, lost_end;
	uint64_t wr_addr, cur_wr_id;
	int32_t cur_nsge;
	uint8_t cur_valid, resp_sent, lost, sr_seen, goes_back, pad[3];
	struct ibv_sge cur_sge[ENG_MAX_SGE];
	struct atomic_cache acache[ENG_ATOMIC_CACHE];
	/* congestion control */
	struct eng_cc_rp cc;
	uint64_t cc_pace_at, cc_cnp_next;
	uint64_t hwc[RXDP_HWC_MAX];
	struct tk_wqe wqe[];
};

static uint32_t tk_nwqe(const struct rxdp_eqp *qp)
{
	return atomic_load(&qp->sq_prod) - atomic_load(&qp->sq_cons);
}

static void tk_save_resp(const struct rxdp_eqp *qp, struct tk_qp *t)
{
	const struct eng_resp *r = &qp->resp;
	bool held = r->hold && r->hold->n;

	t->epsn = r->epsn;
	t->msn = r->msn;
	t->rseq = r->rseq;
	t->recv_off = r->recv_off;
	t->recv_len = r->recv_len;
	t->wr_addr = r->wr_addr;
	t->wr_left = r->wr_left;
	t->wr_len = r->wr_len;
	t->cur_valid = r->cur_valid;
	t->cur_wr_id = r->cur_wr_id;
	t->cur_nsge = r->cur_nsge;
	memcpy(t->cur_sge, r->cur_sge, sizeof(t->cur_sge));
	memcpy(t->acache, r->acache, sizeof(t->acache));
	t->acache_next = r->acache_next;
	t->resp_sent = r->resp_sent;
	t->resp_sent_psn = r->resp_sent_psn;
	t->sr_seen = r->sr_seen;
	t->goes_back = r->goes_back;
	/*
	 * Requests held past the gap are not carried: past them the
	 * requester must go back, as when the hold had no room (resp.c)
	 */
	t->lost = r->lost || held;
	t->lost_end = r->lost_end;
	if (held && (!r->lost || psn_after(r->hold->end, r->lost_end)))
		t->lost_end = r->hold->end;
}

long rxdp_engine_qp_save(struct rxdp_eqp *qp, void *buf, size_t len)
{
	struct rxdp_engine *e = qp->e;
	struct tk_qp *t = buf;
	uint32_t n;
	size_t need;

	eng_lock(e);
	if (!e->halted) { /* what it saved would move on under it */
		eng_unlock(e);
		return -EAGAIN;
	}
	/* what waits for the owner's memory thread is not carried */
	if (qp->mem_wait || qp->rcqe_head != qp->rcqe_tail || qp->aslot.job) {
		eng_unlock(e);
		return -EBUSY;
	}
	/* room for a full send queue: what the QP may hold by the next call */
	if (len < sizeof(*t) + (size_t)qp->sq_size * sizeof(t->wqe[0])) {
		eng_unlock(e);
		return (long)(sizeof(*t) +
			      (size_t)qp->sq_size * sizeof(t->wqe[0]));
	}
	n = tk_nwqe(qp);
	need = sizeof(*t) + (size_t)n * sizeof(t->wqe[0]);
	memset(t, 0, need);
	t->magic = TK_MAGIC;
	t->version = TK_VERSION;
	t->size = (uint32_t)need;
	t->qpn = qp->qpn;
	t->type = qp->type;
	t->state = (uint32_t)atomic_load(&qp->state);
	t->sq_done = atomic_load(&qp->sq_cons);
	t->nwqe = n;
	t->rq_done = atomic_load(&qp->rq_own.cons);
	t->next_psn = qp->req.next_psn;
	t->tx_hw = qp->req.tx_hw;
	t->rd_outstanding = qp->req.rd_outstanding;
	t->una = qp->comp.una;
	t->retry_left = qp->comp.retry_left;
	t->rnr_left = qp->comp.rnr_left;
	t->rnr_at = qp->comp.rnr_at;
	t->rnr_psn = qp->comp.rnr_psn;
	t->rtt_known = qp->comp.rtt_known;
	t->srtt = qp->comp.srtt;
	t->rttvar = qp->comp.rttvar;
	t->rtt_min = qp->comp.rtt_min;
	t->cwnd = qp->comp.cwnd;
	t->cwnd_acked = qp->comp.cwnd_acked;
	t->cwr = qp->comp.cwr;
	t->cwr_psn = qp->comp.cwr_psn;
	tk_save_resp(qp, t);
	t->cc = qp->cc;
	t->cc_pace_at = qp->cc_pace_at;
	t->cc_cnp_next = qp->cc_cnp_next;
	memcpy(t->hwc, qp->hwc, sizeof(t->hwc));
	for (uint32_t i = 0; i < n; i++) {
		const struct swqe *w =
			&qp->sq[(t->sq_done + i) & (qp->sq_size - 1)];

		t->wqe[i] = (struct tk_wqe){ .wr_id = w->wr_id,
					     .first_psn = w->first_psn,
					     .npkts = w->npkts,
					     .resp_psn = w->resp_psn,
					     .resp_off = w->resp_off,
					     .status = w->status,
					     .started = w->started,
					     .done = w->done };
	}
	eng_unlock(e);
	return (long)need;
}

static int tk_refuse(char *why, size_t whylen, int err, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return err;
}

/*
 * A saved state's header (magic, then version, at its start) is one this
 * file reads: 0, or -EINVAL with why naming what it is not
 */
static int tk_header(const void *buf, size_t len, size_t min, uint32_t magic,
		     const char *what, char *why, size_t whylen)
{
	const uint32_t *h = buf;

	if (len < min || h[0] != magic) {
		snprintf(why, whylen, "not a saved %s state", what);
		return -EINVAL;
	}
	if (h[1] != TK_VERSION) {
		snprintf(why, whylen,
			 "a saved %s state of version %u (this engine reads "
			 "%u)",
			 what, h[1], TK_VERSION);
		return -EINVAL;
	}
	return 0;
}

/* The saved state is one this file reads, for this QP as it stands */
static int tk_check(const struct rxdp_eqp *qp, const struct tk_qp *t,
		    size_t len, char *why, size_t whylen)
{
	int err = tk_header(t, len, sizeof(*t), TK_MAGIC, "QP", why, whylen);

	if (err)
		return err;
	if (t->size > len ||
	    t->size != sizeof(*t) + (size_t)t->nwqe * sizeof(t->wqe[0]))
		return tk_refuse(why, whylen, -EINVAL,
				 "the saved QP state is cut short");
	if (t->qpn != qp->qpn || t->type != (uint32_t)qp->type ||
	    t->state != (uint32_t)atomic_load(&qp->state))
		return tk_refuse(why, whylen, -EINVAL,
				 "the saved state is another QP's, or of "
				 "another type or state");
	if (!qp->sh || t->nwqe > qp->sq_size || t->cur_nsge < 0 ||
	    t->cur_nsge > ENG_MAX_SGE)
		return tk_refuse(why, whylen, -EINVAL,
				 "the QP cannot take the saved state (rings "
				 "of its own, or fewer WQEs)");
	return 0;
}

/* The records taken again from the rings: the saved WQEs in the same order */
static int tk_restore_sq(struct rxdp_eqp *qp, const struct tk_qp *t, char *why,
			 size_t whylen)
{
	atomic_store(&qp->sq_prod, t->sq_done);
	atomic_store(&qp->sq_cons, t->sq_done);
	atomic_store(&qp->rq_own.prod, t->rq_done);
	atomic_store(&qp->rq_own.cons, t->rq_done);
	if (!eng_drain_qp_all(qp) || tk_nwqe(qp) < t->nwqe)
		return tk_refuse(why, whylen, -ESTALE,
				 "the send ring does not hold the saved WQEs");
	for (uint32_t i = 0; i < t->nwqe; i++) {
		const struct tk_wqe *s = &t->wqe[i];
		struct swqe *w = &qp->sq[(t->sq_done + i) & (qp->sq_size - 1)];

		if (w->wr_id != s->wr_id)
			return tk_refuse(why, whylen, -ESTALE,
					 "a WQE in the send ring is not the "
					 "saved one");
		w->started = s->started;
		w->done = s->done;
		w->status = (enum ibv_wc_status)s->status;
		w->first_psn = s->first_psn;
		w->npkts = s->npkts;
		w->resp_psn = s->resp_psn;
		w->resp_off = s->resp_off;
		/* its buffers, as its start resolved them in the predecessor */
		if (w->started && !w->done && !req_resolve(qp, w))
			return tk_refuse(why, whylen, -ESTALE,
					 "a started WQE's buffers are not "
					 "registered");
	}
	return 0;
}

/*
 * Where the requester goes on: the first WQE not sent whole, at the PSN
 * after the highest one sent (tx_hw; what was sent and not acknowledged is
 * recovered from una, req_resume()). Not at next_psn: a WQE is given all
 * its PSNs when it starts, and a pass may end half-way through its packets
 * (the window, pacing); resuming after them counted the rest as sent, and
 * where everything sent was acknowledged no timer ran to resend them: the
 * QP stalled for good (64 KiB Writes, about one takeover in twelve).
 */
static void tk_restore_cur(struct rxdp_eqp *qp, const struct tk_qp *t)
{
	uint32_t i;

	for (i = 0; i < t->nwqe; i++) {
		const struct tk_wqe *s = &t->wqe[i];

		if (!s->started ||
		    psn_before(t->tx_hw, psn_add(s->first_psn, s->npkts)))
			break;
	}
	qp->req.sq_cur = t->sq_done + i;
	qp->req.send_psn = t->tx_hw;
}

static void tk_restore_resp(struct rxdp_eqp *qp, const struct tk_qp *t)
{
	struct eng_resp *r = &qp->resp;

	r->epsn = t->epsn;
	r->msn = t->msn;
	r->rseq = (enum resp_seq)t->rseq;
	r->recv_off = t->recv_off;
	r->recv_len = t->recv_len;
	r->wr_addr = t->wr_addr;
	r->wr_left = t->wr_left;
	r->wr_len = t->wr_len;
	r->cur_valid = t->cur_valid;
	r->cur_wr_id = t->cur_wr_id;
	r->cur_nsge = t->cur_nsge;
	memcpy(r->cur_sge, t->cur_sge, sizeof(r->cur_sge));
	memcpy(r->acache, t->acache, sizeof(r->acache));
	r->acache_next = t->acache_next % ENG_ATOMIC_CACHE;
	r->resp_sent = t->resp_sent;
	r->resp_sent_psn = t->resp_sent_psn;
	r->sr_seen = t->sr_seen;
	r->goes_back = t->goes_back;
	r->lost = t->lost;
	r->lost_end = t->lost_end;
}

int rxdp_engine_qp_restore(struct rxdp_eqp *qp, const void *buf, size_t len,
			   char *why, size_t whylen)
{
	struct rxdp_engine *e = qp->e;
	const struct tk_qp *t = buf;
	int err;

	eng_lock(e);
	err = tk_check(qp, t, len, why, whylen);
	if (!err)
		err = tk_restore_sq(qp, t, why, whylen);
	if (err) {
		eng_unlock(e);
		return err;
	}
	qp->req.next_psn = t->next_psn;
	qp->req.tx_hw = t->tx_hw;
	qp->req.rd_outstanding = t->rd_outstanding;
	qp->comp.una = t->una;
	qp->comp.retry_left = t->retry_left;
	qp->comp.rnr_left = t->rnr_left;
	qp->comp.rnr_at = t->rnr_at;
	qp->comp.rnr_psn = t->rnr_psn;
	qp->comp.rtt_known = t->rtt_known;
	qp->comp.srtt = t->srtt;
	qp->comp.rttvar = t->rttvar;
	qp->comp.rtt_min = t->rtt_min;
	qp->comp.cwnd = t->cwnd;
	qp->comp.cwnd_acked = t->cwnd_acked;
	qp->comp.cwnd_una = t->una;
	qp->comp.cwr = t->cwr;
	qp->comp.cwr_psn = t->cwr_psn;
	tk_restore_resp(qp, t);
	qp->cc = t->cc;
	qp->cc_pace_at = t->cc_pace_at;
	qp->cc_cnp_next = t->cc_cnp_next;
	memcpy(qp->hwc, t->hwc, sizeof(qp->hwc));
	/* the XDP program's view: the PSNs, the responder's hold */
	qpmap_psn_sync(qp);
	qpmap_seed_epsn(qp);
	tk_restore_cur(qp, t);
	if (qp->type == IBV_QPT_RC)
		req_resume(qp);
	eng_unlock(e);
	return 0;
}

/*
 * An SRQ's own state: where its QPs' receives have taken it to (its
 * records are taken again from the ring from there: a slot is its owner's
 * again only once taken as a receive's), and its limit event
 */
#define TK_SRQ_MAGIC 0x53525852U /* "RXRS" */

struct tk_srq {
	uint32_t magic, version, size;
	uint32_t cons, limit, max_wr;
};

long rxdp_engine_srq_save(struct rxdp_esrq *srq, void *buf, size_t len)
{
	struct rxdp_engine *e = srq->e;
	struct tk_srq *t = buf;

	if (len < sizeof(*t))
		return (long)sizeof(*t);
	eng_lock(e);
	if (!e->halted) {
		eng_unlock(e);
		return -EAGAIN;
	}
	*t = (struct tk_srq){ .magic = TK_SRQ_MAGIC,
			      .version = TK_VERSION,
			      .size = sizeof(*t),
			      .cons = atomic_load(&srq->rq.cons),
			      .limit = srq->limit,
			      .max_wr = srq->max_wr };
	eng_unlock(e);
	return (long)sizeof(*t);
}

int rxdp_engine_srq_restore(struct rxdp_esrq *srq, const void *buf, size_t len,
			    char *why, size_t whylen)
{
	struct rxdp_engine *e = srq->e;
	const struct tk_srq *t = buf;
	int err =
		tk_header(t, len, sizeof(*t), TK_SRQ_MAGIC, "SRQ", why, whylen);

	if (err)
		return err;
	if (t->size != len || t->max_wr != srq->max_wr || srq->own_ring)
		return tk_refuse(why, whylen, -EINVAL,
				 "the SRQ cannot take the saved state "
				 "(another size, or a ring of its own)");
	eng_lock(e);
	atomic_store(&srq->rq.prod, t->cons);
	atomic_store(&srq->rq.cons, t->cons);
	if (!eng_drain_srq_all(srq)) {
		eng_unlock(e);
		return tk_refuse(why, whylen, -ESTALE,
				 "the SRQ's ring does not hold its WQEs");
	}
	srq->limit = t->limit;
	eng_unlock(e);
	return 0;
}

int rxdp_engine_mr_set_key(struct rxdp_emr *mr, uint32_t key)
{
	struct rxdp_engine *e = mr->e;
	int err;

	eng_lock(e);
	err = eng_key_set(&e->keys, &mr->k, key);
	eng_unlock(e);
	return err;
}

void rxdp_engine_hw_counters_set(struct rxdp_engine *e, const __u64 *in)
{
	eng_lock(e);
	memcpy(e->hwc, in, sizeof(e->hwc));
	eng_unlock(e);
}
