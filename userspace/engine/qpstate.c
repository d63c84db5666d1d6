// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A QP's state as the transport changes it (a service): its state
 * published to the owner, the WQE slots it frees, to ERR with its queues
 * flushed (IBTA 10.3.1), back to RESET. Engine lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* The QP's state, for the engine and for its owner */
void qpstate_set(struct rxdp_eqp *qp, int state)
{
	atomic_store(&qp->state, state);
	atomic_store_explicit(&qp->sh->state, (uint32_t)state,
			      memory_order_release);
}

/*
 * A ring's done index moved on to v, never back: the free slots an owner
 * was told of stay free (a QP made again on a predecessor's rings is taken
 * through its states before its progress is restored: engine/takeover.c;
 * a RESET starts the rings over by itself, qp_share_reset())
 */
static void publish_done(_Atomic uint32_t *done, uint32_t v)
{
	uint32_t now = atomic_load_explicit(done, memory_order_relaxed);

	if ((int32_t)(v - now) > 0)
		atomic_store_explicit(done, v, memory_order_release);
}

/* Publish the engine's progress on a QP to its owner */
void qpstate_publish(struct rxdp_eqp *qp)
{
	struct rxdp_hca_qp *sh = qp->sh;
	uint32_t v;

	publish_done(&sh->sq.done,
		     atomic_load_explicit(&qp->sq_cons, memory_order_relaxed));
	publish_done(&sh->rq.done, atomic_load_explicit(&qp->rq_own.cons,
							memory_order_relaxed));
	v = (uint32_t)atomic_load(&qp->state);
	if (atomic_load_explicit(&sh->state, memory_order_relaxed) != v)
		atomic_store_explicit(&sh->state, v, memory_order_release);
}

/*
 * Send/receive WQE slots up to cons are free: for posters in this process
 * (sq_cons, rq_cons) and for a shared queue's owner (done). Before the
 * completion that says so is seen: an owner that reposts on a completion
 * must find the slot free.
 */
void qpstate_sq_free(struct rxdp_eqp *qp, uint32_t cons)
{
	atomic_store_explicit(&qp->sq_cons, cons, memory_order_release);
	if (qp->sh)
		atomic_store_explicit(&qp->sh->sq.done, cons,
				      memory_order_release);
}

void qpstate_rq_free(struct eng_rq *q, uint32_t cons)
{
	atomic_store_explicit(&q->cons, cons, memory_order_release);
	if (q->sh)
		atomic_store_explicit(&q->sh->done, cons, memory_order_release);
}

/*
 * Flush what is posted to a QP in ERR (IBTA 10.3.1: WR_FLUSH_ERR), a bounded
 * number per pass (the rest in the next ones: a pass returns work done)
 */
int qpstate_flush(struct rxdp_eqp *qp)
{
	uint32_t prod, cons;
	struct ibv_wc wc;
	int n = 0;

	if (atomic_load(&qp->state) != IBV_QPS_ERR)
		return 0;
	prod = atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	for (; cons != prod && n < ENG_FLUSH_BUDGET; cons++, n++) {
		struct swqe *w = &qp->sq[cons & (qp->sq_size - 1)];

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = eng_wc_opcode(w->opcode);
		wc.qp_num = qp->qpn;
		qpstate_sq_free(qp, cons + 1);
		eng_cq_add(qp->scq, &wc, false);
	}
	qp->req.sq_cur = cons;
	if (qp->resp.cur_valid) {
		cqe_recv(qp, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, NULL);
		n++;
	}
	if (qp->srq)
		return n; /* the SRQ's WQEs belong to every QP on it */
	prod = atomic_load_explicit(&qp->rq_own.prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->rq_own.cons, memory_order_relaxed);
	for (; cons != prod && n < 2 * ENG_FLUSH_BUDGET; cons++, n++) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq_own.rec[cons & (qp->rq_own.size - 1)].wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->qpn;
		qpstate_rq_free(&qp->rq_own, cons + 1);
		cqe_recv_add(qp, &wc, false, NULL);
	}
	return n;
}

void qpstate_to_err(struct rxdp_eqp *qp, bool event)
{
	qpstate_set(qp, IBV_QPS_ERR);
	qp->attr.qp_state = qp->attr.cur_qp_state = IBV_QPS_ERR;
	/* the XDP program drops what still comes for it */
	qpmap_ctx(qp);
	qp->comp.timer_at = qp->comp.tlp_at = 0;
	qp->comp.rnr_at = 0;
	qp->resp.rjob_tail = qp->resp.rjob_head;
	qp->resp.ack_pending = false;
	hold_flush(qp);
	qpstate_flush(qp);
	if (event)
		eng_event(qp->e, IBV_EVENT_QP_FATAL, qp->user);
	/* 11.6.3: a QP on an SRQ reports that it will take no more WQEs */
	if (qp->srq)
		eng_event(qp->e, IBV_EVENT_QP_LAST_WQE_REACHED, qp->user);
}

void qpstate_reset(struct rxdp_eqp *qp)
{
	qp->mem_epoch = ++qp->e->mem_epochs;
	atomic_store(&qp->sq_prod, 0);
	atomic_store(&qp->sq_cons, 0);
	atomic_store(&qp->rq_own.prod, 0);
	atomic_store(&qp->rq_own.cons, 0);
	qp->req.sq_cur = 0;
	qp->req.send_psn = qp->req.next_psn = qp->comp.una = qp->req.tx_hw =
		qp->req.flushed_psn = 0;
	qp->req.ackreq_end = qp->req.flushed_ackreq = 0;
	qp->req.rd_outstanding = 0;
	qp->req.since_ackreq = 0;
	qp->req.resend = false;
	qp->comp.sr_recovery = false;
	qp->comp.timer_at = qp->comp.rnr_at = qp->comp.tlp_at = 0;
	qp->comp.read_rewound = false;
	qp->comp.probing = false;
	qp->comp.seq_nak_seen = false;
	qp->comp.backoff = 0;
	qp->comp.rtt_known = qp->comp.rtt_timing = false;
	qp->comp.srtt = qp->comp.rttvar = 0;
	qp->comp.tlp_sent = qp->req.ackreq_next = qp->comp.cwr = false;
	qp->comp.cwnd = ENG_WINDOW;
	qp->comp.cwnd_acked = 0;
	qp->resp.epsn = qp->resp.msn = 0;
	qp->resp.resp_sent = false;
	qp->resp.nak_sent = false;
	hold_free(qp);
	qp->resp.lost = qp->resp.watch = qp->resp.goes_back = false;
	qp->resp.sr_seen = false;
	qp->resp.misses = 0;
	qp->resp.rseq = RSEQ_NONE;
	qp->resp.cur_valid = false;
	qp->resp.rjob_head = qp->resp.rjob_tail = 0;
	memset(qp->resp.acache, 0, sizeof(qp->resp.acache));
	qp->resp.ack_pending = false;
	/* what waited for the owner's memory thread is forgotten */
	qp->rcqe_head = qp->rcqe_tail = 0;
	qp->mem_wait = false;
	eng_mem_qp_gone(qp);
	qpmap_psn_sync(qp);
	qpmap_seed_epsn(qp);
}
