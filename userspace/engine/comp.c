// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The completer (IBTA 9.7.5.2, 9.7.6, 10.8.3): ACKs, NAKs and read/atomic
 * responses retire send WQEs in order into completions; a sequence NAK or
 * a timeout goes back (go-back-N), an RNR NAK waits, a fatal NAK fails the
 * WQE and takes the QP to ERR. Engine lock held.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* IBTA 9.7.5.2.8 Table 45: RNR NAK timer field -> microseconds x 100 */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1,    2,	   3,	 4,    6,     8,     12,    16,	   24,	  32,
	48,    64,   96,   128,	 192,  256,   384,   512,   768,   1024,  1536,
	2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

/* --- requester ------------------------------------------------------------ */

static bool req_outstanding(const struct rxdp_eqp *qp)
{
	return qp->una != qp->next_psn;
}

void req_arm_timer(struct rxdp_eqp *qp)
{
	uint64_t to = rc_qp_timeout_ns(qp);

	qp->timer_at = to && req_outstanding(qp) ? qp->e->now + to : 0;
}

/* Retire finished WQEs in order; a failed one takes the QP to ERR. */
void req_retire(struct rxdp_eqp *qp)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t cons =
		atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	while (cons != prod) {
		struct swqe *w = &qp->sq[cons & (qp->sq_size - 1)];
		struct ibv_wc wc;
		bool failed, signaled;

		if (!w->started || !w->done)
			break;
		signaled = rc_req_wc(qp, w, &wc);
		failed = w->status != IBV_WC_SUCCESS;
		if (!failed && w->npkts)
			eng_hwc(qp, RXDP_HWC_RDMA_SENDS);
		/* the slot is the posters' once sq_cons passes it */
		rc_sq_free(qp, ++cons);
		/* whoever sees the error completion sees the QP in ERR */
		if (failed)
			eng_qp_set_state(qp, IBV_QPS_ERR);
		if (signaled)
			eng_cq_add(qp->scq, &wc, false);
		if (failed) {
			qp->sq_cur = cons;
			rc_qp_to_err(qp, true);
			return;
		}
	}
}

/*
 * Go back to PSN psn and send from there again (go-back-N, IBTA 9.7.6).
 * A read restarts from its first missing response.
 */
static void req_rewind_(struct rxdp_eqp *qp, uint32_t psn);

#define req_rewind(qp, psn, why)                                              \
	do {                                                                  \
		pr_debug("engine: QP %#x: resend from PSN %#x (%s; una %#x, " \
			 "next %#x)\n",                                       \
			 (qp)->qpn, (psn), (why), (qp)->una, (qp)->next_psn); \
		req_rewind_((qp), (psn));                                     \
	} while (0)

static void req_rewind_(struct rxdp_eqp *qp, uint32_t psn)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (!w->started)
			break;
		if (w->done || !psn_in_window(psn, w->first_psn,
					      psn_add(w->first_psn, w->npkts)))
			continue;
		qp->sq_cur = i;
		qp->send_psn = w->opcode == IBV_WR_RDMA_READ ? w->resp_psn
							     : psn;
		return;
	}
}

/* The first WQE not yet done, or NULL */
static struct swqe *req_oldest(struct rxdp_eqp *qp, uint32_t *idx)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (!w->started)
			return NULL;
		if (!w->done) {
			if (idx)
				*idx = i;
			return w;
		}
	}
	return NULL;
}

static void req_fail(struct rxdp_eqp *qp, enum ibv_wc_status st)
{
	struct swqe *w = req_oldest(qp, NULL);

	if (w) {
		w->status = st;
		w->done = true;
	}
	req_retire(qp);
	if (!w)
		rc_qp_to_err(qp, true);
}

/*
 * una moved: the responder is alive. After a rewind, what it has just
 * acknowledged is not sent again: transmission resumes at una.
 */
static void req_progress(struct rxdp_eqp *qp)
{
	qp->seq_nak_seen = false;
	qp->probing = false;
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
	if (psn_before(qp->send_psn, qp->una))
		req_rewind_(qp, qp->una);
	req_arm_timer(qp);
}

/*
 * Every PSN up to and including psn is acknowledged (an ACK, or implied by
 * a NAK or a response, IBTA 9.7.5.2.1). Sends and writes it covers are
 * done. A read or atomic it covers whose responses have not all come was
 * answered, and the answers were lost: ask again (9.7.5.2.4).
 */
static void req_ack_upto(struct rxdp_eqp *qp, uint32_t psn)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	uint32_t una = psn_add(psn, 1);

	if (!psn_in_window(psn, qp->una, qp->next_psn))
		return; /* acknowledges nothing new */
	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];
		uint32_t last = psn_add(w->first_psn, w->npkts - 1);

		if (!w->started)
			break;
		if (w->done)
			continue;
		if (!rc_is_rd_atomic(w->opcode)) {
			if (psn_diff(last, psn) > 0)
				break;
			/* every packet sent, or the ACK could not cover it */
			w->done = true;
			continue;
		}
		if (psn_diff(last, psn) <= 0 &&
		    !(qp->read_rewound && qp->read_rewind_psn == w->resp_psn)) {
			qp->read_rewound = true;
			qp->read_rewind_psn = w->resp_psn;
			req_rewind(qp, w->resp_psn,
				   "an ACK passed an unanswered read");
		}
		if (psn_after(una, w->resp_psn))
			una = w->resp_psn;
		break;
	}
	if (psn_after(una, qp->una)) {
		qp->una = una;
		rc_psn_store(&qp->psn->una_psn, una);
		req_progress(qp);
	}
	req_retire(qp);
}

static void req_rx_read_resp(struct rxdp_eqp *qp, struct pkt_info *pi,
			     uint32_t psn)
{
	struct swqe *w;
	bool last = pi->flags & ROCE_OPF_LAST;

	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	w = req_oldest(qp, NULL);
	if (!w || w->opcode != IBV_WR_RDMA_READ ||
	    !psn_in_window(psn, w->first_psn, psn_add(w->first_psn, w->npkts)))
		return; /* stale */
	if (pi->aeth &&
	    (aeth_syndrome(pi->aeth) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		return;
	if (psn != w->resp_psn) {
		/* a gap: responses were lost, ask for the rest once */
		if (psn_after(psn, w->resp_psn) &&
		    !(qp->read_rewound && qp->read_rewind_psn == w->resp_psn)) {
			qp->read_rewound = true;
			qp->read_rewind_psn = w->resp_psn;
			req_rewind(qp, w->resp_psn, "a gap in read responses");
		}
		return;
	}
	if (pi->paylen > w->length - w->resp_off ||
	    (!last && pi->paylen != qp->mtu) ||
	    (last && w->resp_off + pi->paylen != w->length)) {
		pr_warn("engine: QP %u: read response of %u bytes does not "
			"fit\n",
			qp->qpn, pi->paylen);
		w->status = IBV_WC_BAD_RESP_ERR;
		w->done = true;
		qp->rd_outstanding--;
		req_retire(qp);
		return;
	}
	if (rc_sg_copy_to(qp->pd, w->sg, w->nsg, w->resp_off, pi->payload,
			  pi->paylen)) {
		/* the local buffer went away (unmapped): 10.8.3 local error */
		w->status = IBV_WC_LOC_PROT_ERR;
		w->done = true;
		qp->rd_outstanding--;
		req_retire(qp);
		return;
	}
	w->resp_off += pi->paylen;
	w->resp_psn = psn_add(psn, 1);
	qp->una = w->resp_psn;
	rc_psn_store(&qp->psn->una_psn, qp->una);
	if (last) {
		w->done = true;
		qp->rd_outstanding--;
	}
	req_progress(qp);
	req_retire(qp);
}

static void req_rx_atomic_ack(struct rxdp_eqp *qp, struct pkt_info *pi,
			      uint32_t psn)
{
	struct swqe *w;
	uint64_t orig;

	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	w = req_oldest(qp, NULL);
	if (!w || w->first_psn != psn ||
	    (w->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	     w->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD))
		return;
	/* the original value lands in the local buffer in host order */
	orig = atomicacketh_orig(pi->atomicacketh);
	if (rc_sg_copy_to(qp->pd, w->sg, w->nsg, 0, (const uint8_t *)&orig, 8))
		w->status = IBV_WC_LOC_PROT_ERR;
	w->done = true;
	w->resp_psn = psn_add(psn, 1);
	qp->rd_outstanding--;
	qp->una = w->resp_psn;
	rc_psn_store(&qp->psn->una_psn, qp->una);
	req_progress(qp);
	req_retire(qp);
}

static void req_rx_ack(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	uint8_t syn = aeth_syndrome(pi->aeth);
	struct rxdp_engine *e = qp->e;

	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		req_ack_upto(qp, psn);
		return;
	case ROCE_AETH_RNR_NAK:
		/* 9.7.5.2.8: wait the responder's time, then resend psn */
		eng_hwc(qp, RXDP_HWC_RCVD_RNR);
		req_ack_upto(qp, psn_add(psn, -1U));
		if (atomic_load(&qp->state) == IBV_QPS_ERR)
			return;
		if (qp->rnr_retry != 7 && qp->rnr_left == 0) {
			eng_hwc(qp, RXDP_HWC_RNR_RETRY_EXCEEDED);
			req_fail(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->rnr_retry != 7)
			qp->rnr_left--;
		qp->rnr_at =
			e->now + (uint64_t)rnr_timer_10us[syn & 0x1f] * 10000;
		qp->rnr_psn = psn;
		qp->timer_at = 0;
		qp->probing = false;
		return;
	case ROCE_AETH_NAK:
		break;
	default:
		return; /* reserved */
	}
	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	switch (syn & 0x1f) {
	case ROCE_NAK_PSN_SEQ_ERR:
		eng_hwc(qp, RXDP_HWC_RCVD_SEQ_ERR);
		/* packets sent after an RNR NAK draw this too: ignore them */
		if (qp->rnr_at && psn == qp->rnr_psn)
			return;
		if (!psn_in_window(psn, qp->una, psn_add(qp->next_psn, 1)))
			return;
		/*
		 * The responder NAKs a gap once (9.7.5.1.3); the same NAK
		 * again before any progress is a copy the network made.
		 */
		if (qp->seq_nak_seen && qp->seq_nak_psn == psn)
			return;
		qp->seq_nak_seen = true;
		qp->seq_nak_psn = psn;
		/*
		 * A sequence NAK proves the responder alive and tells where
		 * it stands: go back there at once. It does not use up
		 * retry_cnt, which counts timeouts (an unreachable peer);
		 * go-back-N behind a read that blocks una would otherwise
		 * exhaust it on a merely lossy path.
		 */
		eng_hwc(qp, RXDP_HWC_COMP_RETRY);
		qp->probing = false;
		req_rewind(qp, psn, "sequence NAK");
		req_arm_timer(qp);
		return;
	case ROCE_NAK_INVALID_REQ:
		req_fail(qp, IBV_WC_REM_INV_REQ_ERR);
		return;
	case ROCE_NAK_REM_ACCESS_ERR:
		req_fail(qp, IBV_WC_REM_ACCESS_ERR);
		return;
	case ROCE_NAK_INVALID_RD_REQ:
		req_fail(qp, IBV_WC_REM_INV_RD_REQ_ERR);
		return;
	default:
		req_fail(qp, IBV_WC_REM_OP_ERR);
		return;
	}
}

void req_rx(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	int state = atomic_load(&qp->state);
	uint32_t psn = bth_psn(pi->bth);

	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD &&
	    state != IBV_QPS_SQE) {
		qp->e->stats.rx_drop_state++;
		return;
	}
	/* responses only ever answer PSNs in [una - 1, next_psn) */
	if (!psn_in_window(psn, psn_add(qp->una, -1U), qp->next_psn)) {
		qp->e->stats.rx_drop_psn++;
		return;
	}
	if (pi->opcode == ROCE_RC_ACK)
		req_rx_ack(qp, pi, psn);
	else if (pi->opcode == ROCE_RC_ATOMIC_ACK)
		req_rx_atomic_ack(qp, pi, psn);
	else if (pi->flags & ROCE_OPF_READ)
		req_rx_read_resp(qp, pi, psn);
}

int rc_timers(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	int state = atomic_load(&qp->state);

	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD)
		return 0;
	if (qp->rnr_at && e->now >= qp->rnr_at) {
		qp->rnr_at = 0;
		req_rewind(qp, qp->rnr_psn, "RNR wait over");
		req_arm_timer(qp);
		return 1;
	}
	if (qp->timer_at && e->now >= qp->timer_at) {
		if (!req_outstanding(qp)) {
			qp->timer_at = 0;
			return 0;
		}
		e->stats.timeouts++;
		if (qp->retry_left == 0) {
			eng_hwc(qp, RXDP_HWC_RETRY_EXCEEDED);
			req_fail(qp, IBV_WC_RETRY_EXC_ERR);
			return 1;
		}
		eng_hwc(qp, RXDP_HWC_COMP_RETRY);
		qp->retry_left--;
		qp->read_rewound = false;
		qp->seq_nak_seen = false;
		/*
		 * A timeout says nothing of where the responder stands: one
		 * packet (with AckReq) asks, and its answer (an ACK up to the
		 * newest PSN it has, or a NAK) reopens the window
		 * (req_progress()). Resending the whole window instead buries
		 * a responder that is merely slow under duplicates, so that
		 * it falls further behind with each timeout until retry_cnt
		 * runs out (a Soft-RoCE peer, or rxdp, in a slow VM).
		 */
		qp->probing = true;
		req_rewind(qp, qp->una, "timeout");
		req_arm_timer(qp);
		return 1;
	}
	return 0;
}
