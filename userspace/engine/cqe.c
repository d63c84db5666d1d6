// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What an owner is told (a service of the transport and the objects):
 * completions onto its CQ rings, a receive's completion held back until the
 * bytes it reports are written (mem.c), and asynchronous events. Engine
 * lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/*
 * Engine lock held: the only producer. The consumer's index comes from
 * memory the owner writes: a wrong one can only overflow its own CQ.
 */
void eng_cq_add(struct rxdp_ecq *cq, const struct ibv_wc *wc, bool solicited)
{
	eng_cq_add_data(cq, wc, solicited, NULL);
}

/* d: the bytes of a small receive, for the owner to scatter (shared CQs) */
void eng_cq_add_data(struct rxdp_ecq *cq, const struct ibv_wc *wc,
		     bool solicited, const struct rxdp_hca_cqd *d)
{
	struct rxdp_hca_cq *sh = cq->sh;
	uint32_t prod = atomic_load_explicit(&sh->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&sh->cons, memory_order_acquire);
	uint32_t armed;

	if (cq->overflow)
		return;
	if (prod - cons >= cq->size) {
		cq->overflow = true;
		atomic_store_explicit(&sh->overflow, 1, memory_order_release);
		cq->e->stats.cq_overflows++;
		pr_warn("engine: CQ overflow, completion of wr_id %llu lost\n",
			(unsigned long long)wc->wr_id);
		eng_event(cq->e, IBV_EVENT_CQ_ERR, cq->user);
		return;
	}
	sh->ring[prod & (cq->size - 1)] = *wc;
	if (d) {
		rxdp_hca_cq_data(sh, cq->size)[prod & (cq->size - 1)] = *d;
		sh->ring[prod & (cq->size - 1)].vendor_err =
			RXDP_HCA_WC_SCATTER;
	}
	if (cq->ts)
		rxdp_hca_cq_ts(sh, cq->size)[prod & (cq->size - 1)] = eng_now();
	atomic_store_explicit(&sh->prod, prod + 1, memory_order_release);
	/*
	 * The owner arms (a store of armed), then polls (a load of prod);
	 * here the store of prod comes before the load of armed. Without a
	 * full fence on both sides each can miss the other's store (x86
	 * reorders a store before a later load): the completion is not seen
	 * and no event is sent, and a program blocked in ibv_get_cq_event
	 * waits forever. The owner's arming store is seq_cst.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	/* IBTA 11.4.2.2: arming is one-shot; an error completion always fires */
	armed = atomic_load_explicit(&sh->armed, memory_order_acquire);
	if (armed &&
	    (armed != 2 || solicited || wc->status != IBV_WC_SUCCESS) &&
	    atomic_exchange(&sh->armed, 0) && cq->notify)
		cq->notify(cq->notify_arg);
}

/* The completion of a send WQE; false if it completes silently */
bool cqe_send_wc(struct rxdp_eqp *qp, const struct swqe *w, struct ibv_wc *wc)
{
	/* IBTA 10.8.3.1 / ibv_post_send(3): unsignaled WRs complete silently
	 * unless they fail */
	if (w->status == IBV_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IBV_SEND_SIGNALED))
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status;
	wc->opcode = eng_wc_opcode(w->opcode);
	wc->byte_len = w->length;
	wc->qp_num = qp->qpn;
	return true;
}

void cqe_recv(struct rxdp_eqp *qp, enum ibv_wc_status status,
	      enum ibv_wc_opcode op, uint32_t len, const struct pkt_info *pi)
{
	cqe_recv_data(qp, status, op, len, pi, NULL);
}

/*
 * Scatter to CQE (common/hca.h): where the first len bytes of a message go
 * in the buffers sg names, into d, when the receive CQ is an owner's (it
 * scatters them when it polls), they fit, and they are in memory rxdpd
 * reaches only through a system call. false: the caller writes them into
 * the owner's memory itself.
 */
bool cqe_scatter_prep(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		      uint32_t len, struct rxdp_hca_cqd *d)
{
	struct pkt_sg piece[ENG_MAX_SGE];
	bool direct = true;
	int n;

	if (qp->rcq->own || !len || len > RXDP_HCA_SCATTER_MAX)
		return false;
	/*
	 * Not into ODP memory: the owner may have unmapped it, and its poll
	 * would fault where rxdpd's write is an error completion
	 */
	for (int i = 0; i < qp->resp.cur_nsge; i++) {
		const struct rxdp_emr *mr =
			eng_mr_lookup(qp->e, qp->resp.cur_sge[i].lkey);

		if (qp->resp.cur_sge[i].length && mr &&
		    (mr->access & IBV_ACCESS_ON_DEMAND))
			return false;
	}
	n = sge_slice(sg, nsg, 0, len, piece);
	if (n > RXDP_HCA_SCATTER_SGES)
		return false;
	/* memory rxdpd maps too costs no system call: written at once */
	for (int i = 0; i < n && direct; i++)
		direct = eng_mem_direct(qp->pd, piece[i].addr, piece[i].len);
	if (direct)
		return false;
	memset(d, 0, offsetof(struct rxdp_hca_cqd, data));
	for (int i = 0; i < n; i++) {
		d->addr[i] = piece[i].addr;
		d->len[i] = piece[i].len;
	}
	qp->e->stats.rx_scattered++;
	return true;
}

void cqe_recv_data(struct rxdp_eqp *qp, enum ibv_wc_status status,
		   enum ibv_wc_opcode op, uint32_t len,
		   const struct pkt_info *pi, const struct rxdp_hca_cqd *d)
{
	const struct roce_immdt *imm = pi ? pi->immdt : NULL;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->resp.cur_wr_id;
	wc.status = status;
	wc.opcode = op;
	wc.byte_len = len;
	wc.qp_num = qp->qpn;
	wc.src_qp = qp->dest_qpn;
	if (imm) {
		wc.imm_data = immdt_imm(imm);
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	/* Send with Invalidate: the key, in host order (ibv_wc's union) */
	if (pi && pi->ieth && status == IBV_WC_SUCCESS) {
		wc.invalidated_rkey = ieth_rkey(pi->ieth);
		wc.wc_flags |= IBV_WC_WITH_INV;
	}
	if (status == IBV_WC_SUCCESS)
		eng_hwc(qp, RXDP_HWC_RDMA_RECVS);
	qp->resp.cur_valid = false;
	cqe_recv_add(qp, &wc, pi && bth_se(pi->bth), d);
}

/*
 * A receive completion goes on the CQ once the bytes it says arrived are
 * written (a write to memory not shared with rxdpd is queued), and after
 * every earlier one of the QP
 */
void cqe_recv_add(struct rxdp_eqp *qp, const struct ibv_wc *wc, bool solicited,
		  const struct rxdp_hca_cqd *d)
{
	struct eng_rcqe *r;

	if (qp->rcqe_head == qp->rcqe_tail &&
	    eng_mem_written(qp, qp->mem_seq)) {
		eng_cq_add_data(qp->rcq, wc, solicited, d);
		return;
	}
	if (qp->rcqe_head - qp->rcqe_tail == qp->rcqe_size) {
		uint32_t size = qp->rcqe_size ? qp->rcqe_size * 2 : 16;
		struct eng_rcqe *t = malloc(size * sizeof(*t));

		if (!t) { /* cannot wait: lost, as on a CQ overflow */
			qp->e->stats.cq_overflows++;
			return;
		}
		for (uint32_t i = 0; i < qp->rcqe_size; i++)
			t[i] = qp->rcqe[(qp->rcqe_tail + i) &
					(qp->rcqe_size - 1)];
		free(qp->rcqe);
		qp->rcqe = t;
		qp->rcqe_head -= qp->rcqe_tail;
		qp->rcqe_tail = 0;
		qp->rcqe_size = size;
	}
	r = &qp->rcqe[qp->rcqe_head++ & (qp->rcqe_size - 1)];
	r->wc = *wc;
	r->solicited = solicited;
	r->has_data = d != NULL;
	if (d)
		r->d = *d;
	r->seq = qp->mem_seq;
	qp->mem_wait = true;
}

void eng_event(struct rxdp_engine *e, enum ibv_event_type ev, void *user)
{
	if (e->cfg.event_cb)
		e->cfg.event_cb(e->cfg.event_arg, ev, user);
}
