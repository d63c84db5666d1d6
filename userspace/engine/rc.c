// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The RC transport (IBTA Vol 1 ch. 9), in three roles:
 *   requester  SQ WQEs -> request packets (9.4, 9.7.1-9.7.3)
 *   completer  ACK/NAK and read/atomic responses -> completions, and
 *              retransmission on NAK or timeout (9.7.5.2, 9.7.6, 10.8.3)
 *   responder  request packets -> memory, RQ WQEs, ACK/NAK and read/atomic
 *              responses (9.7.4, 9.7.5.1)
 * Everything here runs with the engine lock held.
 *
 * UC (IBTA 9.8) shares the code: Send and RDMA Write only, no ACKs and no
 * retransmission (a WQE completes once its last packet is sent), and a
 * responder that silently drops a message with a PSN gap or an error and
 * picks up again at the next FIRST/ONLY packet.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* --- small helpers --------------------------------------------------------- */

static void psn_store(__u32 *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/*
 * Publish the requester's window to the XDP program. The responder's epsn is
 * not published here: the XDP program advances its own copy as in-order
 * requests pass (it sees them before the engine does), so the engine only
 * seeds it when the QP gets its rq_psn (rc_psn_seed_epsn).
 */
void rc_psn_sync(struct rxdp_eqp *qp)
{
	psn_store(&qp->psn->una_psn, qp->una);
	psn_store(&qp->psn->next_psn, qp->next_psn);
}

static uint64_t qp_timeout_ns(const struct rxdp_eqp *qp)
{
	/* IBTA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means infinite */
	return qp->timeout ? 4096ULL << qp->timeout : 0;
}

/* IBTA 9.7.5.2.8 Table 45: RNR NAK timer field -> microseconds x 100 */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1,    2,	   3,	 4,    6,     8,     12,    16,	   24,	  32,
	48,    64,   96,   128,	 192,  256,   384,   512,   768,   1024,  1536,
	2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

static bool is_rd_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Build and queue one packet along pp (d->dqpn already set) */
static int qp_send_pkt_path(struct rxdp_eqp *qp, struct pkt_desc *d,
			    const struct pkt_path *pp)
{
	struct rxdp_engine *e = qp->e;
	uint32_t cap = 0;
	void *buf;
	int n;

	buf = e->cfg.ops->tx_get(e->cfg.port, &cap);
	if (!buf) {
		e->tx_blocked = true;
		e->stats.tx_no_buf++;
		return -EAGAIN;
	}
	d->pkey = qp->pkey;
	n = pkt_build(buf, cap, pp, d);
	if (n < 0) {
		e->cfg.ops->tx_abort(e->cfg.port, buf);
		if (n == -EFAULT)
			e->stats.mem_faults++;
		else
			pr_warn("engine: QP %u: cannot build opcode 0x%x: %d\n",
				qp->qpn, d->opcode, n);
		return n;
	}
	e->cfg.ops->tx_put(e->cfg.port, buf, n);
	e->stats.tx_packets++;
	/*
	 * An RC request behind requests already on the wire may wait for the
	 * next flush: their acknowledgement is sure to bring a pass. Anything
	 * else (the first one out, a retransmission, a response, UC, UD) goes
	 * out this pass.
	 */
	e->tx_unflushed++;
	if (qp->type != IBV_QPT_RC ||
	    (roce_opcode_flags(d->opcode) & ROCE_OPF_RESPONSE) ||
	    qp->una == qp->flushed_psn || psn_before(d->psn, qp->flushed_psn))
		e->tx_urgent = true;
	return 0;
}

/* ... to the connected peer */
static int qp_send_pkt(struct rxdp_eqp *qp, struct pkt_desc *d)
{
	d->dqpn = qp->dest_qpn;
	return qp_send_pkt_path(qp, d, &qp->path);
}

/* Copy len bytes into a scatter list (pd's memory) at byte offset off */
static int sg_copy_to(struct rxdp_epd *pd, const struct pkt_sg *sg, int nsg,
		      uint32_t off, const uint8_t *src, uint32_t len)
{
	for (int i = 0; i < nsg && len; i++) {
		uint32_t n;

		if (off >= sg[i].len) {
			off -= sg[i].len;
			continue;
		}
		n = sg[i].len - off;
		if (n > len)
			n = len;
		if (eng_mem_write(pd, sg[i].addr + off, src, n))
			return -EFAULT;
		src += n;
		len -= n;
		off = 0;
	}
	return 0;
}

/* The part [off, off+len) of a gather list, as a gather list */
static int sg_slice(const struct pkt_sg *sg, int nsg, uint32_t off,
		    uint32_t len, struct pkt_sg *out)
{
	int n = 0;

	for (int i = 0; i < nsg && len; i++) {
		uint32_t k;

		if (off >= sg[i].len) {
			off -= sg[i].len;
			continue;
		}
		k = sg[i].len - off;
		if (k > len)
			k = len;
		out[n].addr = sg[i].addr + off;
		out[n++].len = k;
		len -= k;
		off = 0;
	}
	return n;
}

/*
 * A local SGE list -> the owner's buffers, checking lkey (an MR of the QP's
 * PD, IBTA 10.6.3.2), bounds and access
 */
static int sge_resolve(struct rxdp_epd *pd, const struct ibv_sge *sge, int num,
		       unsigned int need, struct pkt_sg *out, uint32_t *total)
{
	struct rxdp_engine *e = pd->e;

	int n = 0;

	*total = 0;
	for (int i = 0; i < num; i++) {
		struct rxdp_emr *mr;

		if (!sge[i].length)
			continue;
		mr = eng_mr_lookup(e, sge[i].lkey);
		if (!mr || mr->pd != pd || (mr->access & need) != need ||
		    sge[i].addr < mr->iova ||
		    sge[i].addr - mr->iova + sge[i].length > mr->len)
			return -EACCES;
		out[n].addr = mr->addr + (sge[i].addr - mr->iova);
		out[n++].len = sge[i].length;
		*total += sge[i].length;
	}
	return n;
}

/*
 * R_Key check for a remote access (IBTA 10.6.3.3 / 9.7.4.1.7-9): the key
 * must name an MR of the QP's PD with the right, the QP must grant it, and
 * [va, va+len) must lie inside the MR. A zero-length access checks nothing
 * (C9-88). true and *addr (the owner's address) if allowed.
 */
static bool rkey_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		       uint64_t len, unsigned int need, uint64_t *addr)
{
	struct rxdp_emr *mr;

	*addr = 0;
	if (!len)
		return true;
	mr = eng_mr_lookup(qp->e, rkey);
	if (!mr || mr->pd != qp->pd || !(mr->access & need) ||
	    !(qp->access & need))
		return false;
	if (va < mr->iova || va - mr->iova > mr->len ||
	    len > mr->len - (va - mr->iova))
		return false;
	*addr = mr->addr + (va - mr->iova);
	return true;
}

/* --- completions --------------------------------------------------------- */

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

/* The completion of a send WQE; false if it completes silently */
static bool req_wc(struct rxdp_eqp *qp, const struct swqe *w, struct ibv_wc *wc)
{
	/* IBTA 10.8.3.1 / ibv_post_send(3): unsignaled WRs complete silently
	 * unless they fail */
	if (w->status == IBV_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IBV_SEND_SIGNALED))
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status;
	wc->opcode = wc_opcode(w->opcode);
	wc->byte_len = w->length;
	wc->qp_num = qp->qpn;
	return true;
}

/*
 * Send/receive WQE slots up to cons are free: for posters in this process
 * (sq_cons, rq_cons) and for a shared queue's owner (done). Before the
 * completion that says so is seen: an owner that reposts on a completion
 * must find the slot free.
 */
static void sq_free(struct rxdp_eqp *qp, uint32_t cons)
{
	atomic_store_explicit(&qp->sq_cons, cons, memory_order_release);
	if (qp->sh)
		atomic_store_explicit(&qp->sh->sq.done, cons,
				      memory_order_release);
}

static void rq_free(struct rxdp_eqp *qp, _Atomic uint32_t *consp, uint32_t cons)
{
	atomic_store_explicit(consp, cons, memory_order_release);
	if (qp->srq && qp->srq->sh)
		atomic_store_explicit(&qp->srq->sh->done, cons,
				      memory_order_release);
	else if (!qp->srq && qp->sh)
		atomic_store_explicit(&qp->sh->rq.done, cons,
				      memory_order_release);
}

/*
 * Take the next receive WQE (the QP's RQ or its SRQ) as the current one, if
 * there is no current one yet. false: none posted (RNR).
 */
static bool rq_take(struct rxdp_eqp *qp)
{
	_Atomic uint32_t *prodp = qp->srq ? &qp->srq->prod : &qp->rq_prod;
	_Atomic uint32_t *consp = qp->srq ? &qp->srq->cons : &qp->rq_cons;
	uint32_t prod, cons, size = qp->srq ? qp->srq->size : qp->rq_size;
	struct rwqe *r;

	if (qp->cur_valid)
		return true;
	prod = atomic_load_explicit(prodp, memory_order_acquire);
	cons = atomic_load_explicit(consp, memory_order_relaxed);
	if (prod == cons)
		return false;
	r = &(qp->srq ? qp->srq->rq : qp->rq)[cons & (size - 1)];
	qp->cur_wr_id = r->wr_id;
	qp->cur_nsge = r->num_sge;
	memcpy(qp->cur_sge, r->sge, r->num_sge * sizeof(*r->sge));
	qp->cur_valid = true;
	rq_free(qp, consp, cons + 1);
	/* IBTA 11.2.7.1 (o11-?): the SRQ limit event fires once, then disarms */
	if (qp->srq && qp->srq->limit && prod - cons - 1 < qp->srq->limit) {
		qp->srq->limit = 0;
		eng_event(qp->e, IBV_EVENT_SRQ_LIMIT_REACHED, qp->srq->user);
	}
	return true;
}

static void recv_complete(struct rxdp_eqp *qp, enum ibv_wc_status status,
			  enum ibv_wc_opcode op, uint32_t len,
			  const struct roce_immdt *imm, bool se)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->cur_wr_id;
	wc.status = status;
	wc.opcode = op;
	wc.byte_len = len;
	wc.qp_num = qp->qpn;
	wc.src_qp = qp->dest_qpn;
	if (imm) {
		wc.imm_data = immdt_imm(imm);
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	qp->cur_valid = false;
	eng_cq_add(qp->rcq, &wc, se);
}

/* Flush everything posted to a QP in ERR (IBTA 10.3.1: WR_FLUSH_ERR). */
int rc_flush(struct rxdp_eqp *qp)
{
	uint32_t prod, cons;
	struct ibv_wc wc;
	int n = 0;

	if (atomic_load(&qp->state) != IBV_QPS_ERR)
		return 0;
	prod = atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	for (; cons != prod; cons++, n++) {
		struct swqe *w = &qp->sq[cons & (qp->sq_size - 1)];

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = wc_opcode(w->opcode);
		wc.qp_num = qp->qpn;
		sq_free(qp, cons + 1);
		eng_cq_add(qp->scq, &wc, false);
	}
	qp->sq_cur = cons;
	if (qp->cur_valid) {
		recv_complete(qp, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, NULL,
			      false);
		n++;
	}
	if (qp->srq)
		return n; /* the SRQ's WQEs belong to every QP on it */
	prod = atomic_load_explicit(&qp->rq_prod, memory_order_acquire);
	cons = atomic_load_explicit(&qp->rq_cons, memory_order_relaxed);
	for (; cons != prod; cons++, n++) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq[cons & (qp->rq_size - 1)].wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->qpn;
		rq_free(qp, &qp->rq_cons, cons + 1);
		eng_cq_add(qp->rcq, &wc, false);
	}
	return n;
}

void rc_qp_to_err(struct rxdp_eqp *qp, bool event)
{
	eng_qp_set_state(qp, IBV_QPS_ERR);
	qp->timer_at = 0;
	qp->rnr_at = 0;
	qp->rjob_tail = qp->rjob_head;
	qp->ack_pending = false;
	rc_flush(qp);
	if (event)
		eng_event(qp->e, IBV_EVENT_QP_FATAL, qp->user);
	/* 11.6.3: a QP on an SRQ reports that it will take no more WQEs */
	if (qp->srq)
		eng_event(qp->e, IBV_EVENT_QP_LAST_WQE_REACHED, qp->user);
}

void rc_qp_reset(struct rxdp_eqp *qp)
{
	atomic_store(&qp->sq_prod, 0);
	atomic_store(&qp->sq_cons, 0);
	atomic_store(&qp->rq_prod, 0);
	atomic_store(&qp->rq_cons, 0);
	qp->sq_cur = 0;
	qp->send_psn = qp->next_psn = qp->una = qp->tx_hw = qp->flushed_psn = 0;
	qp->rd_outstanding = 0;
	qp->since_ackreq = 0;
	qp->timer_at = qp->rnr_at = 0;
	qp->read_rewound = false;
	qp->epsn = qp->msn = 0;
	qp->resp_sent = false;
	qp->nak_sent = false;
	qp->rseq = RSEQ_NONE;
	qp->cur_valid = false;
	qp->rjob_head = qp->rjob_tail = 0;
	memset(qp->acache, 0, sizeof(qp->acache));
	qp->ack_pending = false;
	rc_psn_sync(qp);
	rc_psn_seed_epsn(qp);
}

void rc_psn_seed_epsn(struct rxdp_eqp *qp)
{
	psn_store(&qp->psn->epsn, qp->epsn);
	__atomic_fetch_and(&qp->psn->flags, ~RXDP_PSNF_NAK_SENT,
			   __ATOMIC_RELEASE);
}

uint64_t rc_deadline(struct rxdp_eqp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->timer_at && qp->timer_at < d)
		d = qp->timer_at;
	if (qp->rnr_at && qp->rnr_at < d)
		d = qp->rnr_at;
	return d;
}

/* --- requester ------------------------------------------------------------ */

static bool req_outstanding(const struct rxdp_eqp *qp)
{
	return qp->una != qp->next_psn;
}

static void req_arm_timer(struct rxdp_eqp *qp)
{
	uint64_t to = qp_timeout_ns(qp);

	qp->timer_at = to && req_outstanding(qp) ? qp->e->now + to : 0;
}

/* Retire finished WQEs in order; a failed one takes the QP to ERR. */
static void req_retire(struct rxdp_eqp *qp)
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
		signaled = req_wc(qp, w, &wc);
		failed = w->status != IBV_WC_SUCCESS;
		/* the slot is the posters' once sq_cons passes it */
		sq_free(qp, ++cons);
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

static void req_progress(struct rxdp_eqp *qp)
{
	qp->seq_nak_seen = false;
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
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
		if (!is_rd_atomic(w->opcode)) {
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
		psn_store(&qp->psn->una_psn, una);
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
	if (sg_copy_to(qp->pd, w->sg, w->nsg, w->resp_off, pi->payload,
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
	psn_store(&qp->psn->una_psn, qp->una);
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
	if (sg_copy_to(qp->pd, w->sg, w->nsg, 0, (const uint8_t *)&orig, 8))
		w->status = IBV_WC_LOC_PROT_ERR;
	w->done = true;
	w->resp_psn = psn_add(psn, 1);
	qp->rd_outstanding--;
	qp->una = w->resp_psn;
	psn_store(&qp->psn->una_psn, qp->una);
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
		req_ack_upto(qp, psn_add(psn, -1U));
		if (atomic_load(&qp->state) == IBV_QPS_ERR)
			return;
		if (qp->rnr_retry != 7 && qp->rnr_left == 0) {
			req_fail(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->rnr_retry != 7)
			qp->rnr_left--;
		qp->rnr_at =
			e->now + (uint64_t)rnr_timer_10us[syn & 0x1f] * 10000;
		qp->rnr_psn = psn;
		qp->timer_at = 0;
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

static void req_rx(struct rxdp_eqp *qp, struct pkt_info *pi)
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

static uint8_t req_opcode_rc(const struct swqe *w, bool first, bool last);

static uint8_t req_opcode(const struct rxdp_eqp *qp, const struct swqe *w,
			  bool first, bool last)
{
	uint8_t op = req_opcode_rc(w, first, last);

	/* the UC Send/Write opcodes are the RC ones in the UC service */
	return qp->type == IBV_QPT_UC ? (op | ROCE_SVC_UC) : op;
}

static uint8_t req_opcode_rc(const struct swqe *w, bool first, bool last)
{
	bool imm;

	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		imm = w->opcode == IBV_WR_SEND_WITH_IMM;
		if (first && last)
			return imm ? ROCE_RC_SEND_ONLY_IMM : ROCE_RC_SEND_ONLY;
		if (first)
			return ROCE_RC_SEND_FIRST;
		if (last)
			return imm ? ROCE_RC_SEND_LAST_IMM : ROCE_RC_SEND_LAST;
		return ROCE_RC_SEND_MIDDLE;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		imm = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		if (first && last)
			return imm ? ROCE_RC_WRITE_ONLY_IMM
				   : ROCE_RC_WRITE_ONLY;
		if (first)
			return ROCE_RC_WRITE_FIRST;
		if (last)
			return imm ? ROCE_RC_WRITE_LAST_IMM
				   : ROCE_RC_WRITE_LAST;
		return ROCE_RC_WRITE_MIDDLE;
	case IBV_WR_RDMA_READ:
		return ROCE_RC_READ_REQUEST;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return ROCE_RC_COMPARE_SWAP;
	default:
		return ROCE_RC_FETCH_ADD;
	}
}

/* Start a WQE: check its local buffers and give it its PSNs. */
static bool req_start(struct rxdp_eqp *qp, struct swqe *w)
{
	uint32_t total;
	int n;

	w->started = true;
	w->done = false;
	w->first_psn = qp->next_psn;
	w->resp_psn = qp->next_psn;
	w->resp_off = 0;
	if (w->inl) {
		w->sg[0].addr = (uintptr_t)w->inl;
		w->sg[0].len = w->length;
		w->nsg = w->length ? 1 : 0;
	} else {
		/* reads and atomics write into the local buffers */
		n = sge_resolve(qp->pd, w->sge, w->num_sge,
				is_rd_atomic(w->opcode) ? IBV_ACCESS_LOCAL_WRITE
							: 0,
				w->sg, &total);
		if (n < 0) {
			w->status = IBV_WC_LOC_PROT_ERR;
			w->done = true;
			w->npkts = 0;
			return false;
		}
		w->nsg = n;
	}
	if (qp->type == IBV_QPT_UD && w->length > qp->mtu) {
		/* a UD message is one packet (9.8.4) */
		w->status = IBV_WC_LOC_LEN_ERR;
		w->done = true;
		w->npkts = 0;
		return false;
	}
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		w->npkts = 1;
	else
		w->npkts = w->length ? (w->length + qp->mtu - 1) / qp->mtu : 1;
	if (is_rd_atomic(w->opcode))
		qp->rd_outstanding++;
	qp->next_psn = psn_add(qp->next_psn, w->npkts);
	qp->send_psn = w->first_psn;
	return true;
}

static int req_tx(struct rxdp_eqp *qp)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t max_rd = qp->max_rd_atomic ? qp->max_rd_atomic : 1;
	struct pkt_sg sg[ENG_MAX_SGE];
	int sent = 0, err;

	if (qp->rnr_at)
		return 0;
	while (sent < ENG_TX_BUDGET && qp->sq_cur != prod) {
		struct swqe *w = &qp->sq[qp->sq_cur & (qp->sq_size - 1)];
		struct pkt_desc d = { 0 };
		uint32_t idx, off;
		bool first, last, retx;

		if (w->started && w->status != IBV_WC_SUCCESS)
			break; /* waits for req_retire() */
		if (!w->started) {
			/* 10.8.3.3: a fenced WR waits for earlier reads/atomics */
			if ((w->send_flags & IBV_SEND_FENCE) &&
			    qp->rd_outstanding)
				break;
			if (is_rd_atomic(w->opcode) &&
			    qp->rd_outstanding >= max_rd)
				break;
			if (!req_start(qp, w)) {
				req_retire(qp);
				break;
			}
			/* the XDP program drops responses beyond next_psn */
			psn_store(&qp->psn->next_psn, qp->next_psn);
		}
		if (w->done) { /* a read answered in full before a rewind */
			qp->send_psn = psn_add(w->first_psn, w->npkts);
			qp->sq_cur++;
			continue;
		}
		if (psn_diff(qp->send_psn, qp->una) >= ENG_WINDOW)
			break;
		d.psn = qp->send_psn;
		d.opcode = req_opcode(qp, w, true, true);
		switch (w->opcode) {
		case IBV_WR_RDMA_READ:
			off = w->resp_off;
			d.psn = w->resp_psn;
			d.va = w->raddr + off;
			d.rkey = w->rkey;
			d.dma_len = w->length - off;
			d.ackreq = 1;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			d.va = w->raddr;
			d.rkey = w->rkey;
			d.swap_add = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP
					     ? w->swap
					     : w->compare_add;
			d.compare = w->compare_add;
			d.ackreq = 1;
			break;
		default:
			idx = psn_diff(qp->send_psn, w->first_psn);
			off = idx * qp->mtu;
			first = idx == 0;
			last = idx + 1 == w->npkts;
			d.opcode = req_opcode(qp, w, first, last);
			d.paylen = w->length - off < qp->mtu ? w->length - off
							     : qp->mtu;
			d.nsg = sg_slice(w->sg, w->nsg, off, d.paylen, sg);
			d.sg = sg;
			d.mem = w->inl ? NULL : &qp->pd->mem;
			d.va = w->raddr;
			d.rkey = w->rkey;
			d.dma_len = w->length;
			d.imm = w->imm;
			d.se = last && (w->send_flags & IBV_SEND_SOLICITED);
			/*
			 * AckReq (9.7.2): on a message's last packet, now and
			 * then in a long one, and on the packet that fills the
			 * window, or nothing would ever open it again.
			 */
			d.ackreq = last ||
				   qp->since_ackreq + 1 >= ENG_ACKREQ_EVERY ||
				   psn_diff(qp->send_psn, qp->una) + 1 >=
					   ENG_WINDOW;
			if (qp->type != IBV_QPT_RC)
				d.ackreq = 0;
			break;
		}
		retx = psn_before(d.psn, qp->tx_hw);
		if (qp->type == IBV_QPT_UD) {
			d.opcode = w->opcode == IBV_WR_SEND_WITH_IMM
					   ? ROCE_UD_SEND_ONLY_IMM
					   : ROCE_UD_SEND_ONLY;
			d.ackreq = 0;
			d.qkey = w->ud_qkey;
			d.sqp = qp->qpn;
			d.dqpn = w->ud_qpn;
			err = qp_send_pkt_path(qp, &d, &w->ud_path);
		} else {
			err = qp_send_pkt(qp, &d);
		}
		if (err == -EFAULT) {
			/* the local buffer went away: 10.8.3 protection error */
			w->status = IBV_WC_LOC_PROT_ERR;
			w->done = true;
			if (is_rd_atomic(w->opcode))
				qp->rd_outstanding--;
			req_retire(qp);
			break;
		}
		if (err)
			break;
		sent++;
		if (retx)
			qp->e->stats.retransmits++;
		else
			qp->tx_hw = d.opcode == ROCE_RC_READ_REQUEST
					    ? psn_add(w->first_psn, w->npkts)
					    : psn_add(d.psn, 1);
		qp->since_ackreq = d.ackreq ? 0 : qp->since_ackreq + 1;
		if (qp->type != IBV_QPT_RC) {
			/* unacknowledged: sent is done (9.8.2, 9.8.4) */
			qp->una = psn_add(d.psn, 1);
			if (roce_opcode_flags(d.opcode) & ROCE_OPF_LAST) {
				w->done = true;
				qp->send_psn = qp->una;
				qp->sq_cur++;
				req_retire(qp);
				if (atomic_load(&qp->state) == IBV_QPS_ERR)
					break;
			} else {
				qp->send_psn = qp->una;
			}
			continue;
		}
		if (!qp->timer_at)
			req_arm_timer(qp);
		if (d.opcode == ROCE_RC_READ_REQUEST ||
		    (roce_opcode_flags(d.opcode) & ROCE_OPF_LAST)) {
			qp->send_psn = psn_add(w->first_psn, w->npkts);
			qp->sq_cur++;
		} else {
			qp->send_psn = psn_add(qp->send_psn, 1);
		}
	}
	return sent;
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
			req_fail(qp, IBV_WC_RETRY_EXC_ERR);
			return 1;
		}
		qp->retry_left--;
		qp->read_rewound = false;
		qp->seq_nak_seen = false;
		req_rewind(qp, qp->una, "timeout");
		req_arm_timer(qp);
		return 1;
	}
	return 0;
}

/* --- responder ------------------------------------------------------------ */

static void resp_ack(struct rxdp_eqp *qp, uint8_t syndrome, uint32_t psn)
{
	/* an RNR NAK outranks the sequence NAKs its followers draw */
	if (qp->ack_pending && qp->ack_psn == psn &&
	    (qp->ack_syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK &&
	    syndrome == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR))
		return;
	/*
	 * One coalesced ACK/NAK goes out after the queued read/atomic
	 * responses; a later one supersedes an earlier one, as each
	 * acknowledges everything before its PSN (9.7.5.1.1).
	 */
	qp->ack_pending = true;
	qp->ack_syndrome = syndrome;
	qp->ack_psn = psn;
}

/* Class C errors (9.9.3.1.3): NAK at once, then the QP goes to ERR. */
static void resp_fatal(struct rxdp_eqp *qp, uint8_t nak, uint32_t psn)
{
	struct pkt_desc d = { 0 };

	if (qp->type == IBV_QPT_UC) {
		/* 9.8.3: UC drops the message and carries on */
		qp->rseq = RSEQ_DROP;
		return;
	}
	d.opcode = ROCE_RC_ACK;
	d.psn = psn;
	d.syndrome = ROCE_AETH_NAK | nak;
	d.msn = qp->msn;
	qp_send_pkt(qp, &d);
	pr_debug("engine: QP %u: NAK 0x%x at PSN %u, QP to ERR\n", qp->qpn, nak,
		 psn);
	rc_qp_to_err(qp, true);
}

static struct rjob *resp_job_new(struct rxdp_eqp *qp)
{
	if (qp->rjob_head - qp->rjob_tail >= ENG_RJOBS)
		return NULL;
	return &qp->rjobs[qp->rjob_head % ENG_RJOBS];
}

static void resp_rnr(struct rxdp_eqp *qp, uint32_t psn)
{
	if (qp->type == IBV_QPT_UC) {
		qp->rseq = RSEQ_DROP; /* no receive WQE: dropped (9.8.3) */
		return;
	}
	qp->e->stats.rnr_naks_sent++;
	resp_ack(qp, ROCE_AETH_RNR_NAK | qp->min_rnr_timer, psn);
}

/* Returns 0 (accepted), 1 (RNR: not accepted) or -1 (the QP failed) */
static int resp_send(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	static __thread struct pkt_sg sg[ENG_MAX_SGE];
	bool first = pi->flags & ROCE_OPF_FIRST,
	     last = pi->flags & ROCE_OPF_LAST;
	uint32_t total;
	int nsg;

	if (!rq_take(qp)) {
		resp_rnr(qp, psn);
		return 1;
	}
	/* the buffers are looked up per packet: an MR may go away meanwhile */
	nsg = sge_resolve(qp->pd, qp->cur_sge, qp->cur_nsge,
			  IBV_ACCESS_LOCAL_WRITE, sg, &total);
	if (first) {
		qp->recv_off = 0;
		qp->recv_len = total;
	}
	if (nsg < 0) {
		recv_complete(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, NULL,
			      false);
		resp_fatal(qp, ROCE_NAK_REM_OP_ERR, psn);
		return -1;
	}
	if ((!last && pi->paylen != qp->mtu) ||
	    qp->recv_off + pi->paylen > qp->recv_len) {
		recv_complete(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, NULL,
			      false);
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (sg_copy_to(qp->pd, sg, nsg, qp->recv_off, pi->payload,
		       pi->paylen)) {
		recv_complete(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, NULL,
			      false);
		resp_fatal(qp, ROCE_NAK_REM_OP_ERR, psn);
		return -1;
	}
	qp->recv_off += pi->paylen;
	if (last) {
		recv_complete(qp, IBV_WC_SUCCESS, IBV_WC_RECV, qp->recv_off,
			      pi->immdt, bth_se(pi->bth));
		qp->msn = psn_add(qp->msn, 1);
		qp->rseq = RSEQ_NONE;
	} else {
		qp->rseq = RSEQ_SEND;
	}
	return 0;
}

static int resp_write(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	bool first = pi->flags & ROCE_OPF_FIRST,
	     last = pi->flags & ROCE_OPF_LAST;
	bool imm = pi->flags & ROCE_OPF_IMMDT;

	/* Write with immediate consumes an RQ WQE: check before any effect */
	if (imm && !rq_take(qp)) {
		resp_rnr(qp, psn);
		return 1;
	}
	if (first) {
		uint64_t va = reth_va(pi->reth);
		uint32_t len = reth_len(pi->reth);

		if (!rkey_check(qp, reth_rkey(pi->reth), va, len,
				IBV_ACCESS_REMOTE_WRITE, &qp->wr_addr)) {
			resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
			return -1;
		}
		qp->wr_left = qp->wr_len = len;
	}
	/* 9.7.4.1.5: the payload must add up to the RETH's DMA length */
	if ((!last && pi->paylen != qp->mtu) || pi->paylen > qp->wr_left ||
	    (last && pi->paylen != qp->wr_left)) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (pi->paylen) {
		if (eng_mem_write(qp->pd, qp->wr_addr, pi->payload,
				  pi->paylen)) {
			resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
			return -1;
		}
		qp->wr_addr += pi->paylen;
		qp->wr_left -= pi->paylen;
	}
	if (last) {
		if (imm)
			recv_complete(qp, IBV_WC_SUCCESS,
				      IBV_WC_RECV_RDMA_WITH_IMM, qp->wr_len,
				      pi->immdt, bth_se(pi->bth));
		qp->msn = psn_add(qp->msn, 1);
		qp->rseq = RSEQ_NONE;
	} else {
		qp->rseq = RSEQ_WRITE;
	}
	return 0;
}

static uint32_t read_npkts(struct rxdp_eqp *qp, uint32_t len)
{
	return len ? (len + qp->mtu - 1) / qp->mtu : 1;
}

/* Queue the responses of a read request; 1 if there is no room now */
static int resp_read(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn,
		     bool dup)
{
	uint32_t len = reth_len(pi->reth);
	struct rjob *j;
	uint64_t addr;

	if (!rkey_check(qp, reth_rkey(pi->reth), reth_va(pi->reth), len,
			IBV_ACCESS_REMOTE_READ, &addr)) {
		if (dup)
			return 1;
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	j = resp_job_new(qp);
	if (!j)
		return 1; /* the requester sends it again */
	if (!dup)
		qp->msn = psn_add(qp->msn, 1);
	*j = (struct rjob){ .type = RJOB_READ,
			    .psn = psn,
			    .first_psn = psn,
			    .npkts = read_npkts(qp, len),
			    .addr = addr,
			    .len = len,
			    .msn = qp->msn };
	qp->rjob_head++;
	return 0;
}

static int resp_atomic(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	struct roce_atomiceth *a = pi->atomiceth;
	uint64_t va = atomiceth_va(a), orig;
	struct atomic_cache *c;
	uint64_t addr, val;
	struct rjob *j;

	j = resp_job_new(qp);
	if (!j)
		return 1;
	/* 9.4.5: the target must be 8-byte aligned */
	if (va & 7) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	/*
	 * Atomic with respect to every other atomic of this device
	 * (IBV_ATOMIC_HCA): they all run here, under the engine lock.
	 */
	if (!rkey_check(qp, atomiceth_rkey(a), va, 8, IBV_ACCESS_REMOTE_ATOMIC,
			&addr) ||
	    eng_mem_read(qp->pd, &orig, addr, 8)) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	if (pi->opcode == ROCE_RC_COMPARE_SWAP)
		val = orig == atomiceth_compare(a) ? atomiceth_swap_add(a)
						   : orig;
	else
		val = orig + atomiceth_swap_add(a);
	if (val != orig && eng_mem_write(qp->pd, addr, &val, 8)) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	/* 9.4.5.1: a duplicate must get the same answer, not run again */
	c = &qp->acache[qp->acache_next++ % ENG_ATOMIC_CACHE];
	c->valid = true;
	c->psn = psn;
	c->orig = orig;
	qp->msn = psn_add(qp->msn, 1);
	*j = (struct rjob){ .type = RJOB_ATOMIC,
			    .psn = psn,
			    .first_psn = psn,
			    .npkts = 1,
			    .orig = orig,
			    .msn = qp->msn };
	qp->rjob_head++;
	return 0;
}

/* 9.7.5.1.2-4: duplicates are answered, never executed twice */
static void resp_duplicate(struct rxdp_eqp *qp, struct pkt_info *pi,
			   uint32_t psn)
{
	qp->e->stats.rx_duplicates++;
	if (pi->opcode == ROCE_RC_READ_REQUEST) {
		resp_read(qp, pi, psn, true);
		return;
	}
	if (pi->flags & ROCE_OPF_ATOMIC) {
		for (int i = 0; i < ENG_ATOMIC_CACHE; i++) {
			struct atomic_cache *c = &qp->acache[i];
			struct rjob *j;

			if (!c->valid || c->psn != psn)
				continue;
			j = resp_job_new(qp);
			if (!j)
				return;
			*j = (struct rjob){ .type = RJOB_ATOMIC,
					    .psn = psn,
					    .first_psn = psn,
					    .npkts = 1,
					    .orig = c->orig,
					    .msn = qp->msn };
			qp->rjob_head++;
			return;
		}
		return;
	}
	/* Send/Write: acknowledge again, up to the newest PSN received */
	if (!qp->ack_pending)
		resp_ack(qp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
			 psn_add(qp->epsn, -1U));
}

/* The UC responder (IBTA 9.8.3): no ACKs, no NAKs, no duplicates */
static void resp_rx_uc(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	uint32_t psn = bth_psn(pi->bth), f = pi->flags;

	if (psn != qp->epsn) {
		/* a gap: the message in progress is lost; resync on FIRST */
		qp->e->stats.rx_drop_psn++;
		qp->rseq = RSEQ_DROP;
	}
	qp->epsn = psn_add(psn, 1);
	if (f & ROCE_OPF_FIRST) {
		qp->rseq = RSEQ_NONE; /* a partial message is abandoned */
	} else if (qp->rseq == RSEQ_DROP) {
		return;
	} else if ((f & ROCE_OPF_SEND) && !(f & ROCE_OPF_WRITE)
			   ? qp->rseq != RSEQ_SEND
			   : qp->rseq != RSEQ_WRITE) {
		qp->rseq = RSEQ_DROP;
		return;
	}
	if (f & ROCE_OPF_WRITE)
		resp_write(qp, pi, psn);
	else
		resp_send(qp, pi, psn);
}

/*
 * The UD responder (IBTA 9.8.4, RoCEv2 A17.4.5.2): Q_Key check, one packet
 * per message, the 40-byte GRH area at the head of the receive buffer
 * (an IPv4 header goes in its last 20 bytes), drops without a word.
 */
static void resp_rx_ud(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	static __thread struct pkt_sg sg[ENG_MAX_SGE];
	uint8_t grh[ROCE_GRH_LEN] = { 0 };
	struct rxdp_engine *e = qp->e;
	uint32_t total;
	struct ibv_wc wc;
	int nsg;

	if (deth_qkey(pi->deth) != qp->qkey || !rq_take(qp)) {
		e->stats.rx_drop_ud++;
		return;
	}
	nsg = sge_resolve(qp->pd, qp->cur_sge, qp->cur_nsge,
			  IBV_ACCESS_LOCAL_WRITE, sg, &total);
	if (nsg < 0 || total < ROCE_GRH_LEN + pi->paylen) {
		recv_complete(
			qp, nsg < 0 ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_LEN_ERR,
			IBV_WC_RECV, 0, NULL, false);
		return;
	}
	if (pi->ipv6)
		memcpy(grh, pi->l3, ROCE_GRH_LEN);
	else
		memcpy(grh + 20, pi->l3, 20);
	if (sg_copy_to(qp->pd, sg, nsg, 0, grh, ROCE_GRH_LEN) ||
	    sg_copy_to(qp->pd, sg, nsg, ROCE_GRH_LEN, pi->payload,
		       pi->paylen)) {
		recv_complete(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, NULL,
			      false);
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->cur_wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = ROCE_GRH_LEN + pi->paylen;
	wc.qp_num = qp->qpn;
	wc.src_qp = deth_sqp(pi->deth);
	wc.wc_flags = IBV_WC_GRH;
	if (pi->immdt) {
		wc.imm_data = immdt_imm(pi->immdt);
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	qp->cur_valid = false;
	eng_cq_add(qp->rcq, &wc, bth_se(pi->bth));
}

static void resp_rx(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	struct rxdp_engine *e = qp->e;
	int state = atomic_load(&qp->state);
	uint32_t psn = bth_psn(pi->bth), f = pi->flags;
	int32_t d;
	int r;

	if (state != IBV_QPS_RTR && state != IBV_QPS_RTS &&
	    state != IBV_QPS_SQD && state != IBV_QPS_SQE) {
		e->stats.rx_drop_state++;
		return;
	}
	if (qp->type == IBV_QPT_UC) {
		resp_rx_uc(qp, pi);
		return;
	}
	if (qp->type == IBV_QPT_UD) {
		resp_rx_ud(qp, pi);
		return;
	}
	d = psn_diff(psn, qp->epsn);
	if (d < 0) {
		resp_duplicate(qp, pi, psn);
		return;
	}
	if (d > 0) {
		/* 9.7.5.1.3: one PSN sequence NAK per gap */
		e->stats.rx_drop_psn++;
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			e->stats.seq_naks_sent++;
			resp_ack(qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR,
				 qp->epsn);
		}
		return;
	}
	/* the expected PSN (the XDP program clears its NAK_SENT itself) */
	qp->nak_sent = false;

	/* 9.7.4.1.2: opcode sequence inside a multi-packet message */
	if (f & ROCE_OPF_FIRST) {
		if (qp->rseq != RSEQ_NONE) {
			resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
			return;
		}
	} else if ((f & ROCE_OPF_SEND) && !(f & ROCE_OPF_WRITE)
			   ? qp->rseq != RSEQ_SEND
			   : qp->rseq != RSEQ_WRITE) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return;
	}
	if (f & ROCE_OPF_WRITE)
		r = resp_write(qp, pi, psn);
	else if (f & ROCE_OPF_SEND)
		r = resp_send(qp, pi, psn);
	else if (f & ROCE_OPF_READ)
		r = resp_read(qp, pi, psn, false);
	else if (f & ROCE_OPF_ATOMIC)
		r = resp_atomic(qp, pi, psn);
	else
		r = -1, resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
	if (r)
		return;
	if (pi->opcode == ROCE_RC_READ_REQUEST)
		qp->epsn = psn_add(psn, read_npkts(qp, reth_len(pi->reth)));
	else
		qp->epsn = psn_add(psn, 1);
	if (bth_ackreq(pi->bth) && !(f & (ROCE_OPF_READ | ROCE_OPF_ATOMIC)))
		resp_ack(qp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, psn);
}

static int resp_tx(struct rxdp_eqp *qp)
{
	int sent = 0, err;

	while (sent < ENG_TX_BUDGET && qp->rjob_tail != qp->rjob_head) {
		struct rjob *j = &qp->rjobs[qp->rjob_tail % ENG_RJOBS];
		struct pkt_desc d = { 0 };
		struct pkt_sg sg;

		d.psn = psn_add(j->first_psn, j->sent);
		d.msn = j->msn;
		d.syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
		if (j->type == RJOB_ATOMIC) {
			d.opcode = ROCE_RC_ATOMIC_ACK;
			d.orig = j->orig;
		} else {
			uint32_t off = j->sent * qp->mtu;
			bool first = j->sent == 0,
			     last = j->sent + 1 == j->npkts;

			d.opcode = first && last ? ROCE_RC_READ_RESPONSE_ONLY
				   : first	 ? ROCE_RC_READ_RESPONSE_FIRST
				   : last	 ? ROCE_RC_READ_RESPONSE_LAST
						 : ROCE_RC_READ_RESPONSE_MIDDLE;
			d.paylen = j->len - off < qp->mtu ? j->len - off
							  : qp->mtu;
			sg.addr = j->addr + off;
			sg.len = d.paylen;
			d.sg = &sg;
			d.nsg = 1;
			d.mem = &qp->pd->mem;
		}
		err = qp_send_pkt(qp, &d);
		if (err == -EFAULT) {
			/* the source went away after the R_Key check */
			resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, d.psn);
			return sent;
		}
		if (err)
			return sent;
		sent++;
		qp->resp_sent = true;
		qp->resp_sent_psn = d.psn;
		if (++j->sent == j->npkts)
			qp->rjob_tail++;
	}
	/*
	 * A plain ACK for a PSN before a read/atomic response already sent
	 * says nothing new (the response acknowledged it, 9.7.5.1.1): the
	 * requester would only drop it as stale. NAKs always go.
	 */
	if (qp->ack_pending && qp->resp_sent &&
	    (qp->ack_syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK &&
	    psn_before(qp->ack_psn, qp->resp_sent_psn))
		qp->ack_pending = false;
	if (qp->rjob_tail == qp->rjob_head && qp->ack_pending) {
		struct pkt_desc d = { 0 };

		d.opcode = ROCE_RC_ACK;
		d.psn = qp->ack_psn;
		d.syndrome = qp->ack_syndrome;
		d.msn = qp->msn;
		if (!qp_send_pkt(qp, &d)) {
			qp->ack_pending = false;
			sent++;
		}
	}
	return sent;
}

/* --- dispatch -------------------------------------------------------------- */

void rc_rx(struct rxdp_engine *e, struct pkt_info *pi)
{
	uint32_t qpn = bth_qpn(pi->bth);
	struct rxdp_eqp *qp = e->qp_tab[qpn & RXDP_QP_INDEX_MASK];
	uint32_t svc;

	if (!qp || qp->qpn != qpn) {
		e->stats.rx_drop_no_qp++;
		return;
	}
	svc = qp->type == IBV_QPT_UC   ? ROCE_OPF_SVC_UC
	      : qp->type == IBV_QPT_UD ? ROCE_OPF_SVC_UD
				       : ROCE_OPF_SVC_RC;
	if (!(pi->flags & svc)) {
		e->stats.rx_drop_malformed++;
		return;
	}
	if (pi->flags & ROCE_OPF_REQUEST) {
		if ((pi->flags & (ROCE_OPF_RETH)) && !pi->reth)
			return;
		resp_rx(qp, pi);
	} else if (pi->flags & ROCE_OPF_RESPONSE) {
		req_rx(qp, pi);
	}
}

int rc_tx(struct rxdp_eqp *qp)
{
	int state = atomic_load(&qp->state);
	int sent = 0;

	if (state == IBV_QPS_RTR || state == IBV_QPS_RTS ||
	    state == IBV_QPS_SQD)
		sent += resp_tx(qp);
	if (state == IBV_QPS_RTS)
		sent += req_tx(qp);
	return sent;
}
