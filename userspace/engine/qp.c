// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Queue pairs and shared receive queues as objects (the API: each call
 * takes the engine lock): creation (with the rings their owner posts to,
 * common/hca.h, shared or the engine's own), the transitions the daemon
 * has validated, destruction, multicast groups joined and left (mcast.c).
 * What is posted reaches the transport through drain.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ctl.h"
#include "engine/engine_int.h"
#include "engine/qp_sm.h"

/* --- queue pairs --------------------------------------------------------- */

static void qp_free(struct rxdp_eqp *qp)
{
	free(qp->own_rings);
	free(qp->rcqe);
	free(qp->sq);
	free(qp->sq_sge);
	free(qp->sq_inl);
	free(qp->sq_sg);
	free(qp->rq_own.rec);
	free(qp->rq_own.sge);
	free(qp);
}

/*
 * Rings of the engine's own for a QP made without shared ones (tests): the
 * same layout, posted to the same way (rxdp_engine_qp_rings)
 */
static int qp_rings_own(struct rxdp_eqp *qp, const struct ibv_qp_cap *c)
{
	struct rxdp_hca_qp_layout lay;

	rxdp_hca_qp_layout(c->max_send_wr, qp->sq_stride, c->max_recv_wr,
			   qp->rq_own.stride, &lay);
	qp->own_rings =
		aligned_alloc(RXDP_HCA_LINE, rxdp_hca_align((__u32)lay.bytes));
	if (!qp->own_rings)
		return -ENOMEM;
	memset(qp->own_rings, 0, lay.bytes);
	qp->sh = qp->own_rings;
	qp->sh_sq = (char *)qp->own_rings + lay.sq_off;
	qp->rq_own.ring = (char *)qp->own_rings + lay.rq_off;
	qp->sh->sq.size = c->max_send_wr;
	qp->sh->sq.stride = qp->sq_stride;
	qp->sh->rq.size = c->max_recv_wr;
	qp->sh->rq.stride = qp->rq_own.stride;
	return 0;
}

void rxdp_engine_qp_rings(struct rxdp_eqp *qp, struct rxdp_eqp_rings *r)
{
	r->e = qp->e;
	r->sh = qp->sh;
	r->sq = (struct rxdp_hca_ring){ &qp->sh->sq, qp->sh_sq, qp->sq_size,
					qp->sq_stride };
	r->rq = (struct rxdp_hca_ring){ &qp->sh->rq, qp->rq_own.ring,
					qp->rq_own.size, qp->rq_own.stride };
	r->caps = (struct rxdp_hca_qp_caps){
		.qp_type = qp->type,
		.max_send_sge = qp->cap.max_send_sge,
		.max_inline = qp->cap.max_inline_data,
	};
	r->max_recv_sge = qp->cap.max_recv_sge;
	r->srq = qp->srq != NULL;
}

int rxdp_engine_qp_caps(struct ibv_qp_cap *c)
{
	if (c->max_send_wr > ENG_MAX_WR || c->max_recv_wr > ENG_MAX_WR ||
	    c->max_send_sge > ENG_MAX_SGE || c->max_recv_sge > ENG_MAX_SGE ||
	    c->max_inline_data > ENG_MAX_INLINE)
		return -EINVAL;
	c->max_send_wr = rxdp_hca_pow2(c->max_send_wr ? c->max_send_wr : 1);
	c->max_recv_wr = rxdp_hca_pow2(c->max_recv_wr ? c->max_recv_wr : 1);
	if (!c->max_send_sge)
		c->max_send_sge = 1;
	if (!c->max_recv_sge)
		c->max_recv_sge = 1;
	return 0;
}

size_t rxdp_engine_qp_bytes(const struct ibv_qp_cap *c)
{
	size_t inl = (c->max_inline_data > RXDP_HCA_GATHER_MAX
			      ? c->max_inline_data
			      : RXDP_HCA_GATHER_MAX) +
		     1;

	return sizeof(struct rxdp_eqp) +
	       (size_t)c->max_send_wr *
		       (sizeof(struct swqe) + inl +
			c->max_send_sge * (sizeof(struct ibv_sge) +
					   sizeof(struct pkt_sg))) +
	       (size_t)c->max_recv_wr *
		       (sizeof(struct rwqe) +
			c->max_recv_sge * sizeof(struct ibv_sge));
}

size_t rxdp_engine_srq_bytes(const struct ibv_srq_attr *a)
{
	return sizeof(struct rxdp_esrq) +
	       (size_t)a->max_wr * (sizeof(struct rwqe) +
				    a->max_sge * sizeof(struct ibv_sge));
}

struct rxdp_eqp *rxdp_engine_create_qp(struct rxdp_engine *e,
				       struct rxdp_eqp_init *init)
{
	struct ibv_qp_cap *c = &init->cap;
	struct rxdp_epd *pd = eng_pd_or_default(e, init->pd);
	struct rxdp_eqp *qp;
	uint32_t ssge, rsge;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!init->send_cq || !init->recv_cq || !init->qpn ||
	    init->qpn > ROCE_QPN_MASK || rxdp_engine_qp_caps(c) ||
	    (init->sh && (!init->sh_sq || !init->sh_rq)) ||
	    (init->srq && init->srq->pd != pd)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->e = e;
	qp->pd = pd;
	qp->sq_stride =
		rxdp_hca_swqe_stride(c->max_send_sge, c->max_inline_data);
	qp->rq_own.stride = rxdp_hca_rwqe_stride(c->max_recv_sge);
	if (init->sh) {
		qp->sh = init->sh;
		qp->sh_sq = init->sh_sq;
		qp->rq_own.ring = init->sh_rq;
	} else if (qp_rings_own(qp, c)) {
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->qpn = init->qpn;
	qp->type = init->qp_type;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->srq = init->srq;
	/* the owner's ring of its own RQ is in its QP's header, if shared */
	qp->rq_own.sh = qp->sh ? &qp->sh->rq : NULL;
	qp->rq_own.max_sge = c->max_recv_sge;
	qp->rq = qp->srq ? &qp->srq->rq : &qp->rq_own;
	qp->user = init->user;
	qp->owner_pid = init->owner_pid;
	qp->port_mtu = IBV_MTU_1024;
	qp->sq_sig_all = !!init->sq_sig_all;
	qp->sq_size = c->max_send_wr;
	qp->rq_own.size = c->max_recv_wr;
	ssge = c->max_send_sge;
	rsge = c->max_recv_sge;
	qp->cap = *c;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->sq_sge = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sge));
	qp->sq_sg = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sg));
	qp->sq_inl = malloc((size_t)qp->sq_size * eng_inl_stride(qp));
	qp->rq_own.rec = calloc(qp->rq_own.size, sizeof(*qp->rq_own.rec));
	qp->rq_own.sge =
		calloc((size_t)qp->rq_own.size * rsge, sizeof(*qp->rq_own.sge));
	if (!qp->sq || !qp->sq_sge || !qp->sq_sg || !qp->sq_inl ||
	    !qp->rq_own.rec || !qp->rq_own.sge) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < qp->sq_size; i++) {
		qp->sq[i].sge = qp->sq_sge + (size_t)i * ssge;
		qp->sq[i].sg = qp->sq_sg + (size_t)i * ssge;
	}
	for (uint32_t i = 0; i < qp->rq_own.size; i++)
		qp->rq_own.rec[i].sge = qp->rq_own.sge + (size_t)i * rsge;
	qp->mem_req = (struct pkt_mem){ eng_stage_read, &qp->stage_req };
	qp->mem_resp = (struct pkt_mem){ eng_stage_read, &qp->stage_resp };
	qp->pkey = ROCE_DEFAULT_PKEY;
	qp->mtu = 1024;
	qp->timeout = 14;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->max_rd_atomic = 1;
	qp->max_dest_rd_atomic = 1;
	atomic_store(&qp->state, IBV_QPS_RESET);

	eng_lock(e);
	if (e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK]) {
		eng_unlock(e);
		qp_free(qp);
		errno = EEXIST;
		return NULL;
	}
	qp->psn = e->cfg.psn_table
			  ? &e->cfg.psn_table[qp->qpn & RXDP_QP_INDEX_MASK]
			  : &qp->psn_local;
	qpstate_reset(qp);
	if (qpmap_create(qp)) {
		eng_unlock(e);
		qp_free(qp);
		errno = EIO;
		return NULL;
	}
	e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK] = qp;
	eng_group_own(qp, true);
	qp->next = e->qps;
	e->qps = qp;
	/* SL 0's class until a path gives it one (UD keeps it) */
	qp->tc = (uint8_t)eng_tcs_class(&e->tcs, 0);
	e->cls.strict_qps += e->tcs.tc[qp->tc].strict;
	qp->scq->refs++;
	qp->rcq->refs++;
	if (qp->srq)
		qp->srq->refs++;
	pd->refs++;
	eng_unlock(e);
	return qp;
}

int rxdp_engine_destroy_qp(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	struct rxdp_eqp **pp;

	eng_lock(e);
	for (pp = &e->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK] = NULL;
	eng_group_own(qp, false);
	eng_qp_tc(qp, ENG_TC_MAX);
	qpmap_destroy(qp);
	/* where the next pass would have started */
	if (e->drain_next == qp)
		e->drain_next = qp->next;
	if (e->tx_next == qp)
		e->tx_next = qp->next;
	mw_qp_gone(qp);
	eng_mem_qp_gone(qp);
	eng_mcast_qp_gone(qp);
	hold_free(qp);
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	qp->pd->refs--;
	eng_unlock(e);
	qp_free(qp);
	return 0;
}

enum ibv_qp_state rxdp_engine_qp_state(struct rxdp_eqp *qp)
{
	return atomic_load(&qp->state);
}

unsigned int rxdp_engine_qp_class(struct rxdp_eqp *qp)
{
	unsigned int tc;

	eng_lock(qp->e);
	tc = qp->tc;
	pthread_mutex_unlock(&qp->e->lock);
	return tc;
}

int rxdp_engine_qp_engine(const struct rxdp_eqp *qp)
{
	/* set when the engine is made, never changed: no lock */
	return qp->e->cfg.group ? qp->e->cfg.group_index : 0;
}

uint32_t rxdp_engine_qp_num(struct rxdp_eqp *qp)
{
	return qp->qpn;
}

enum ibv_qp_type rxdp_engine_qp_type(struct rxdp_eqp *qp)
{
	return qp->type;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128U << m : 1024;
}

/* A shared QP's queues start over on RESET (the owner resets its prod) */
static void qp_share_reset(struct rxdp_eqp *qp)
{
	qp->broken = false;
	atomic_store(&qp->sh->sq.cons, 0);
	atomic_store(&qp->sh->sq.done, 0);
	atomic_store(&qp->sh->rq.cons, 0);
	atomic_store(&qp->sh->rq.done, 0);
	atomic_store(&qp->sh->sq.prod, 0);
	atomic_store(&qp->sh->rq.prod, 0);
}

/*
 * The values a modify carries, as an HCA with one port and one P_Key has
 * them (the state machine, qp_sm.c, says which may come at all)
 */
static int qp_values_check(const struct rxdp_qp_attr *a, uint32_t mask,
			   uint32_t port_mtu, char *why, size_t len)
{
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		snprintf(why, len, "port_num %u: rxdp devices have port 1",
			 a->port_num);
	else if ((mask & IBV_QP_PKEY_INDEX) &&
		 a->pkey_index >= RXDP_PKEY_TBL_LEN)
		snprintf(why, len,
			 "pkey_index %u: the P_Key table has one entry",
			 a->pkey_index);
	else if ((mask & IBV_QP_PATH_MTU) &&
		 (a->path_mtu < IBV_MTU_256 || a->path_mtu > port_mtu))
		snprintf(why, len,
			 "path_mtu %u exceeds the port's active MTU %u",
			 a->path_mtu, port_mtu);
	else if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		snprintf(why, len, "timeout %u: at most 31", a->timeout);
	else if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		snprintf(why, len, "retry_cnt %u: at most 7", a->retry_cnt);
	else if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		snprintf(why, len, "rnr_retry %u: at most 7", a->rnr_retry);
	else if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		snprintf(why, len, "min_rnr_timer %u: at most 31",
			 a->min_rnr_timer);
	else if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROCE_QPN_MASK)
		snprintf(why, len, "dest_qp_num %#x is not a 24-bit QPN",
			 a->dest_qp_num);
	else
		return 0;
	return -EINVAL;
}

/* What the mask sets, into the record of what has been set */
static void qp_attr_apply(struct rxdp_qp_attr *t, const struct rxdp_qp_attr *a,
			  uint32_t mask)
{
	if (mask & IBV_QP_ACCESS_FLAGS)
		t->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		t->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		t->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		t->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		t->ah = a->ah;
	if (mask & IBV_QP_PATH_MTU)
		t->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		t->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		t->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		t->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		t->rq_psn = a->rq_psn & ROCE_PSN_MASK;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		t->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		t->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		t->sq_psn = a->sq_psn & ROCE_PSN_MASK;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		t->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_DEST_QPN)
		t->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		t->en_sqd_async_notify = a->en_sqd_async_notify;
}

/* The transport's own fields, from the attributes the mask sets */
static void qp_transport_apply(struct rxdp_eqp *qp,
			       const struct rxdp_qp_attr *a, uint32_t mask)
{
	struct rxdp_engine *e = qp->e;

	if (mask & IBV_QP_PATH_MTU) {
		qp->mtu = mtu_bytes(a->path_mtu);
		if (qp->mtu > e->max_mtu)
			qp->mtu = e->max_mtu;
	}
	if (mask & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num & ROCE_QPN_MASK;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags & ENG_ACCESS_KNOWN;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		qp->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic > ENG_MAX_RD_ATOMIC
					    ? ENG_MAX_RD_ATOMIC
					    : a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic >
							 ENG_MAX_RD_ATOMIC
						 ? ENG_MAX_RD_ATOMIC
						 : a->max_dest_rd_atomic;
	if (mask & IBV_QP_RQ_PSN) {
		qp->resp.epsn = a->rq_psn & ROCE_PSN_MASK;
		qp->resp.nak_sent = false;
		qpmap_seed_epsn(qp);
	}
	if (mask & IBV_QP_SQ_PSN) {
		uint32_t psn = a->sq_psn & ROCE_PSN_MASK;

		qp->req.send_psn = qp->req.next_psn = qp->comp.una =
			qp->req.tx_hw = qp->req.flushed_psn =
				qp->req.ackreq_end = qp->req.flushed_ackreq =
					psn;
	}
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
}

/* IBTA 10.3.1: RESET returns the QP to its state at creation */
static void qp_to_reset(struct rxdp_eqp *qp)
{
	qpstate_set(qp, IBV_QPS_RESET);
	qpstate_reset(qp);
	qp_share_reset(qp);
	memset(&qp->attr, 0, sizeof(qp->attr));
	memset(&qp->rpath, 0, sizeof(qp->rpath));
	memset(&qp->path, 0, sizeof(qp->path));
	qp->pkey = ROCE_DEFAULT_PKEY;
	qp->mtu = 1024;
	qp->timeout = 14;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->max_rd_atomic = 1;
	qp->max_dest_rd_atomic = 1;
	qp->dest_qpn = qp->qkey = qp->access = 0;
	qp->min_rnr_timer = 0;
}

int rxdp_engine_qp_modify(struct rxdp_eqp *qp, const struct rxdp_qp_attr *attr,
			  uint32_t mask, const struct rxdp_path *path,
			  uint32_t port_mtu, char *why, size_t whylen)
{
	struct rxdp_engine *e = qp->e;
	struct rxdp_qp_sm_result res;
	char none[8];
	int state, err;

	if (!why || !whylen) {
		why = none;
		whylen = sizeof(none);
	}
	why[0] = '\0';
	eng_lock(e);
	state = atomic_load(&qp->state);
	if (!mask) {
		/* a new path alone: the neighbour's MAC changed */
		if (path && qp->type != IBV_QPT_UD &&
		    (state == IBV_QPS_RTR || state == IBV_QPS_RTS ||
		     state == IBV_QPS_SQD)) {
			qp->rpath = *path;
			eng_path_init(e, &qp->path, path);
			eng_qp_tc(qp, eng_tcs_class(&e->tcs, path->sl));
			qpmap_ctx(qp);
		}
		eng_unlock(e);
		return 0;
	}
	err = rxdp_qp_sm_check(qp->type, (uint32_t)state, mask, attr->qp_state,
			       attr->cur_qp_state, &res);
	if (err) {
		char m1[256] = "", m2[256] = "";

		rxdp_qp_mask_str(res.missing, m1, sizeof(m1));
		rxdp_qp_mask_str(res.extra, m2, sizeof(m2));
		snprintf(why, whylen, "%s QP %#x %s -> %s: %s%s%s%s%s",
			 rxdp_qp_type_name(qp->type), qp->qpn,
			 rxdp_qp_state_name((uint32_t)state),
			 rxdp_qp_state_name(res.next_state), res.why,
			 m1[0] ? "; missing " : "", m1,
			 m2[0] ? "; not allowed " : "", m2);
		eng_unlock(e);
		return -EINVAL;
	}
	err = qp_values_check(attr, mask, port_mtu ? port_mtu : IBV_MTU_4096,
			      why, whylen);
	if (!err && (mask & IBV_QP_AV) && qp->type != IBV_QPT_UD && !path) {
		snprintf(why, whylen, "an address vector without its path");
		err = -EINVAL;
	}
	if (err) {
		eng_unlock(e);
		return err;
	}
	if (port_mtu)
		qp->port_mtu = port_mtu;
	if (res.next_state == IBV_QPS_RESET) {
		if (state != IBV_QPS_RESET)
			qp_to_reset(qp);
	} else {
		qp_attr_apply(&qp->attr, attr, mask);
		if ((mask & IBV_QP_AV) && path) {
			qp->rpath = *path;
			eng_path_init(e, &qp->path, path);
			eng_qp_tc(qp, eng_tcs_class(&e->tcs, path->sl));
			/* a new peer: its rate starts at the line rate */
			eng_cc_rp_init(&qp->cc, &e->cc, e->cfg.line_mbps,
				       e->cfg.cc_algo);
			qp->cc_pace_wait = false;
		}
		qp_transport_apply(qp, attr, mask);
		if (res.next_state == IBV_QPS_ERR && state != IBV_QPS_ERR)
			qpstate_to_err(qp, false);
		else
			qpstate_set(qp, (int)res.next_state);
	}
	/*
	 * A UD message is one packet of up to the port's MTU (IBTA 9.8.4):
	 * UD has no path MTU attribute, so the port's is the QP's, as rxe
	 * and ConnectX have it
	 */
	if (qp->type == IBV_QPT_UD) {
		qp->mtu = mtu_bytes((enum ibv_mtu)qp->port_mtu);
		if (qp->mtu > e->max_mtu)
			qp->mtu = e->max_mtu;
	}
	qp->attr.qp_state = qp->attr.cur_qp_state = res.next_state;
	qp->attr.sq_draining = res.next_state == IBV_QPS_SQD;
	err = qpmap_ctx(qp);
	qpmap_psn_sync(qp);
	qpstate_publish(qp);
	eng_unlock(e);
	if (err)
		snprintf(why, whylen, "cannot write the QP context: %s",
			 strerror(-err));
	return err;
}

void rxdp_engine_qp_query(struct rxdp_eqp *qp, struct rxdp_qp_attr *attr,
			  struct rxdp_path *path)
{
	struct rxdp_engine *e = qp->e;

	eng_lock(e);
	if (attr) {
		*attr = qp->attr;
		/* the transport may have taken it to ERR on its own */
		attr->qp_state = attr->cur_qp_state =
			(uint32_t)atomic_load(&qp->state);
		attr->sq_draining = attr->qp_state == IBV_QPS_SQD;
	}
	if (path)
		*path = qp->rpath;
	pthread_mutex_unlock(&e->lock);
}

void rxdp_engine_qp_cc(struct rxdp_eqp *qp, struct rxdp_engine_qp_cc *cc)
{
	struct rxdp_engine *e = qp->e;

	eng_lock(e);
	eng_cc_rp_advance(&qp->cc, &e->cc, e->now);
	*cc = (struct rxdp_engine_qp_cc){ .rate_kbps = qp->cc.rc,
					  .target_kbps = qp->cc.rt,
					  .alpha = qp->cc.alpha,
					  .paced = eng_cc_rp_paced(&qp->cc),
					  .srtt_ns = qp->comp.srtt,
					  .cwnd = qp->comp.cwnd };
	pthread_mutex_unlock(&e->lock);
}

/* --- shared receive queues ------------------------------------------------- */

int rxdp_engine_srq_caps(struct ibv_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > ENG_MAX_WR ||
	    attr->max_sge > ENG_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	attr->max_wr = rxdp_hca_pow2(attr->max_wr);
	if (!attr->max_sge)
		attr->max_sge = 1;
	return 0;
}

struct rxdp_esrq *rxdp_engine_create_srq(struct rxdp_engine *e,
					 struct rxdp_epd *pd,
					 struct ibv_srq_attr *attr,
					 struct rxdp_hca_wq *sh, void *ring,
					 void *user)
{
	struct rxdp_esrq *srq;

	if (rxdp_engine_srq_caps(attr) || (sh && !ring)) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->rq.stride = rxdp_hca_rwqe_stride(attr->max_sge);
	if (!sh) { /* rings of its own, posted to the same way (tests) */
		size_t off = sizeof(*sh);

		srq->own_ring =
			calloc(1, off + (size_t)attr->max_wr * srq->rq.stride);
		if (!srq->own_ring) {
			free(srq);
			errno = ENOMEM;
			return NULL;
		}
		sh = srq->own_ring;
		ring = (char *)srq->own_ring + off;
		sh->size = attr->max_wr;
		sh->stride = srq->rq.stride;
	}
	srq->rq.sh = sh;
	srq->rq.ring = ring;
	srq->rq.size = attr->max_wr;
	srq->rq.rec = calloc(srq->rq.size, sizeof(*srq->rq.rec));
	srq->rq.sge = calloc((size_t)srq->rq.size * attr->max_sge,
			     sizeof(*srq->rq.sge));
	if (!srq->rq.rec || !srq->rq.sge) {
		free(srq->rq.rec);
		free(srq->rq.sge);
		free(srq->own_ring);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < srq->rq.size; i++)
		srq->rq.rec[i].sge = srq->rq.sge + (size_t)i * attr->max_sge;
	srq->e = e;
	srq->pd = eng_pd_or_default(e, pd);
	srq->user = user;
	srq->max_wr = srq->rq.size;
	srq->rq.max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	eng_lock(e);
	srq->next = e->srqs;
	e->srqs = srq;
	srq->pd->refs++;
	eng_unlock(e);
	return srq;
}

struct rxdp_engine *rxdp_engine_srq_ring(struct rxdp_esrq *srq,
					 struct rxdp_hca_ring *r)
{
	*r = (struct rxdp_hca_ring){ srq->rq.sh, srq->rq.ring, srq->rq.size,
				     srq->rq.stride };
	return srq->e;
}

int rxdp_engine_modify_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr,
			   int mask)
{
	if (mask & IBV_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > srq->max_wr)
			return -EINVAL;
		eng_lock(srq->e);
		srq->limit = attr->srq_limit;
		eng_unlock(srq->e);
	}
	return 0;
}

int rxdp_engine_query_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr)
{
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int rxdp_engine_destroy_srq(struct rxdp_esrq *srq)
{
	struct rxdp_engine *e = srq->e;
	struct rxdp_esrq **pp;

	eng_lock(e);
	if (srq->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	for (pp = &e->srqs; *pp; pp = &(*pp)->next) {
		if (*pp == srq) {
			*pp = srq->next;
			break;
		}
	}
	srq->pd->refs--;
	eng_unlock(e);
	free(srq->rq.rec);
	free(srq->rq.sge);
	free(srq->own_ring);
	free(srq);
	return 0;
}

/* --- multicast (mcast.c) --------------------------------------------------- */

static int
qp_mcast(struct rxdp_eqp *qp, const uint8_t *gid, char *why, size_t whylen,
	 int (*op)(struct rxdp_eqp *, const uint8_t *, char *, size_t))
{
	int ret;

	eng_lock(qp->e);
	ret = op(qp, gid, why, whylen);
	eng_unlock(qp->e);
	return ret;
}

int rxdp_engine_mcast_attach(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
			     size_t whylen)
{
	return qp_mcast(qp, gid, why, whylen, eng_mcast_join);
}

int rxdp_engine_mcast_detach(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
			     size_t whylen)
{
	return qp_mcast(qp, gid, why, whylen, eng_mcast_leave);
}
