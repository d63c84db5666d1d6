// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data-path verbs, wired to the transport engine (userspace/engine,
 * engine.h). Each verbs object is a small wrapper that starts with the
 * libibverbs struct (so an ibv_* pointer is a wrapper pointer) and holds the
 * engine's object.
 *
 * The daemon decides what the engine may do: it allocates QP numbers and
 * validates every QP transition (IBTA 10.3) before the engine applies it.
 *
 * A context gets its data path (UMEM, AF_XDP sockets from rxdpd, engine and
 * progress thread) at its first MR, CQ, QP, SRQ or AH, so programs that only
 * query (ibv_devinfo) never provision one.
 *
 * Conventions, as libibverbs: create calls return NULL with errno; modify,
 * query and destroy return a positive errno; post calls a positive errno and
 * *bad_wr; poll_cq a negative value on error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "verbs/verbs_priv.h"

struct rxdp_mr {
	struct ibv_mr mr;
	struct rxdp_emr *emr;
	uint64_t iova; /* as registered, for ibv_rereg_mr */
	unsigned int access;
};

/*
 * Events queued per object: a destroy waits for the acks of those the
 * application has read and discards the rest (rxdp_events_destroyed).
 */
struct rxdp_cq {
	struct ibv_cq cq;
	struct rxdp_ecq *ecq;
	uint32_t comp_events; /* atomic: queued on the channel */
	uint32_t async_events; /* atomic */
};

struct rxdp_srq {
	struct ibv_srq srq;
	struct rxdp_esrq *esrq;
	uint32_t events; /* atomic */
};

struct rxdp_qp {
	struct ibv_qp qp;
	struct rxdp_eqp *eqp;
	uint32_t events; /* atomic */
	struct ibv_qp_cap cap; /* as granted */
	int sq_sig_all;
	struct ibv_qp_attr attr; /* every attribute set so far (query_qp) */
};

struct rxdp_vah {
	struct ibv_ah ah;
	struct rxdp_eah *eah;
};

static struct rxdp_cq *to_cq(struct ibv_cq *cq)
{
	return (struct rxdp_cq *)cq;
}

static struct rxdp_qp *to_qp(struct ibv_qp *qp)
{
	return (struct rxdp_qp *)qp;
}

static struct rxdp_srq *to_srq(struct ibv_srq *srq)
{
	return (struct rxdp_srq *)srq;
}

static struct rxdp_engine_dp *ctx_dp(struct rxdp_context *c)
{
	return c->engine;
}

static void *fail_ptr(int err)
{
	errno = err;
	return NULL;
}

/* --- per context ----------------------------------------------------------- */

/*
 * Engine events come with the verbs object as `user`; they are queued on the
 * context's async fd. Runs with the engine lock held: queue only.
 */
static void dp_event(void *arg, enum ibv_event_type type, void *user)
{
	struct rxdp_context *c = arg;
	struct ibv_async_event ev = { .event_type = type };

	switch (type) {
	case IBV_EVENT_CQ_ERR:
		ev.element.cq = user;
		__atomic_fetch_add(&to_cq(user)->async_events, 1,
				   __ATOMIC_RELAXED);
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		ev.element.srq = user;
		__atomic_fetch_add(&to_srq(user)->events, 1, __ATOMIC_RELAXED);
		break;
	default: /* QP events */
		ev.element.qp = user;
		__atomic_fetch_add(&to_qp(user)->events, 1, __ATOMIC_RELAXED);
		break;
	}
	if (rxdp_async_event_post(&c->vctx.context, &ev))
		pr_warn("rxdp: async event %s lost\n",
			ibv_event_type_str(type));
}

static struct rxdp_eah *dp_ah_lookup(void *arg, struct ibv_ah *ah)
{
	return ah ? ((struct rxdp_vah *)ah)->eah : NULL;
}

/* The context's engine, provisioned at first use. NULL + errno. */
static struct rxdp_engine *ctx_engine(struct rxdp_context *c)
{
	struct rxdp_engine_config cfg = {
		.event_cb = dp_event,
		.event_arg = c,
		.ah_lookup = dp_ah_lookup,
	};
	struct rxdp_engine_dp *dp;

	dp = __atomic_load_n((struct rxdp_engine_dp **)&c->engine,
			     __ATOMIC_ACQUIRE);
	if (dp)
		return dp->engine;
	rxdp_ctx_ctl_lock(c);
	dp = c->engine;
	if (!dp) {
		dp = rxdp_engine_dp_open(c->ctl, c->dev->info.ifindex, 0, &cfg);
		if (!dp) {
			int err = errno;

			pr_warn("rxdp: %s: no data path: %s\n",
				c->dev->info.name, rxdp_ctl_strerror(c->ctl));
			rxdp_ctx_ctl_unlock(c);
			return fail_ptr(err);
		}
		__atomic_store_n((struct rxdp_engine_dp **)&c->engine, dp,
				 __ATOMIC_RELEASE);
	}
	rxdp_ctx_ctl_unlock(c);
	return dp->engine;
}

static struct rxdp_engine *pd_engine(struct ibv_pd *pd)
{
	if (!pd)
		return fail_ptr(EINVAL);
	return ctx_engine(to_rxdp_ctx(pd->context));
}

int rxdp_dp_context_init(struct rxdp_context *c)
{
	c->engine = NULL;
	return 0;
}

void rxdp_dp_context_fini(struct rxdp_context *c)
{
	if (ctx_dp(c))
		rxdp_engine_dp_close(ctx_dp(c));
	c->engine = NULL;
}

/* --- the static inline verbs dispatch through context->ops ------------------ */

static int rxdp_dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			     struct ibv_send_wr **bad_wr)
{
	return rxdp_engine_post_send(to_qp(qp)->eqp, wr, bad_wr);
}

static int rxdp_dp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	return rxdp_engine_post_recv(to_qp(qp)->eqp, wr, bad_wr);
}

static int rxdp_dp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad_wr)
{
	return rxdp_engine_post_srq_recv(to_srq(srq)->esrq, wr, bad_wr);
}

static int rxdp_dp_poll_cq(struct ibv_cq *cq, int num_entries,
			   struct ibv_wc *wc)
{
	return rxdp_engine_poll_cq(to_cq(cq)->ecq, num_entries, wc);
}

static int rxdp_dp_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return -rxdp_engine_req_notify_cq(to_cq(cq)->ecq, solicited_only);
}

/* Memory windows: not in rxdp's plan (ibv_alloc_mw checks for NULL too) */
static struct ibv_mw *rxdp_dp_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return fail_ptr(EOPNOTSUPP);
}

static int rxdp_dp_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			   struct ibv_mw_bind *mw_bind)
{
	return EOPNOTSUPP;
}

static int rxdp_dp_dealloc_mw(struct ibv_mw *mw)
{
	return EOPNOTSUPP;
}

void rxdp_dp_set_ops(struct ibv_context_ops *ops)
{
	ops->post_send = rxdp_dp_post_send;
	ops->post_recv = rxdp_dp_post_recv;
	ops->post_srq_recv = rxdp_dp_post_srq_recv;
	ops->poll_cq = rxdp_dp_poll_cq;
	ops->req_notify_cq = rxdp_dp_req_notify_cq;
	ops->alloc_mw = rxdp_dp_alloc_mw;
	ops->bind_mw = rxdp_dp_bind_mw;
	ops->dealloc_mw = rxdp_dp_dealloc_mw;
}

/* --- memory regions -------------------------------------------------------- */

static int refuse(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/*
 * One function behind the three registrations. perftest registers with
 * ibv_reg_mr_iova2 and IBV_ACCESS_RELAXED_ORDERING, which the engine accepts
 * and ignores.
 */
static struct ibv_mr *rxdp_dp_reg_mr(struct ibv_pd *pd, void *addr,
				     size_t length, uint64_t iova,
				     unsigned int access)
{
	struct rxdp_engine *e = pd_engine(pd);
	struct rxdp_mr *m;

	if (!e)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return fail_ptr(ENOMEM);
	m->emr = rxdp_engine_reg_mr(e, addr, length, iova, access);
	if (!m->emr) {
		int err = errno;

		free(m);
		return fail_ptr(err);
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = rxdp_emr_lkey(m->emr);
	m->mr.lkey = rxdp_emr_lkey(m->emr);
	m->mr.rkey = rxdp_emr_rkey(m->emr);
	m->iova = iova;
	m->access = access;
	rxdp_pd_get(pd);
	return &m->mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access)
{
	return rxdp_dp_reg_mr(pd, addr, length, (uintptr_t)addr,
			      (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access)
{
	return rxdp_dp_reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	return rxdp_dp_reg_mr(pd, addr, length, iova, access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct rxdp_mr *m = (struct rxdp_mr *)mr;
	int ret;

	if (!mr)
		return EINVAL;
	ret = rxdp_engine_dereg_mr(m->emr);
	if (ret)
		return -ret;
	rxdp_pd_put(mr->pd);
	free(m);
	return 0;
}

static int rereg_fail(int err, int code)
{
	errno = err;
	return code;
}

/*
 * A new registration (translation, PD, access: what flags say changes,
 * the rest kept) replaces the old one in the same ibv_mr; the keys may
 * change, as with a kernel driver. As rdma-core: 0, or an enum
 * ibv_rereg_mr_err_code (negative) with errno; on failure the MR is as it
 * was.
 */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	struct rxdp_mr *m = (struct rxdp_mr *)mr;
	struct ibv_pd *npd;
	struct rxdp_engine *e;
	struct rxdp_emr *n;
	unsigned int nacc;
	uint64_t iova;
	void *naddr;
	size_t nlen;
	int ret;

	if (!mr || !flags || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) &&
	     (!pd || pd->context != mr->context)))
		return rereg_fail(EINVAL, IBV_REREG_MR_ERR_INPUT);
	npd = flags & IBV_REREG_MR_CHANGE_PD ? pd : mr->pd;
	naddr = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? addr : mr->addr;
	nlen = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? length : mr->length;
	iova = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? (uintptr_t)addr
						       : m->iova;
	nacc = flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned int)access
						  : m->access;
	e = pd_engine(npd);
	if (!e)
		return rereg_fail(errno, IBV_REREG_MR_ERR_CMD);
	n = rxdp_engine_reg_mr(e, naddr, nlen, iova, nacc);
	if (!n)
		return rereg_fail(errno, IBV_REREG_MR_ERR_CMD);
	ret = rxdp_engine_dereg_mr(m->emr);
	if (ret) {
		rxdp_engine_dereg_mr(n);
		return rereg_fail(-ret, IBV_REREG_MR_ERR_CMD);
	}
	m->emr = n;
	m->iova = iova;
	m->access = nacc;
	mr->addr = naddr;
	mr->length = nlen;
	mr->handle = rxdp_emr_lkey(n);
	mr->lkey = rxdp_emr_lkey(n);
	mr->rkey = rxdp_emr_rkey(n);
	if (npd != mr->pd) {
		rxdp_pd_get(npd);
		rxdp_pd_put(mr->pd);
		mr->pd = npd;
	}
	return 0;
}

/* --- completion queues ----------------------------------------------------- */

/* The engine's CQ notify: the armed CQ got a completion (engine lock held) */
static void cq_notify(void *arg)
{
	struct rxdp_cq *w = arg;

	if (rxdp_cq_notify(&w->cq) == 0)
		__atomic_fetch_add(&w->comp_events, 1, __ATOMIC_RELAXED);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct rxdp_engine *e;
	struct rxdp_cq *w;
	int actual = 0;

	if (!context || cqe < 1 || cqe > RXDP_VERBS_MAX_CQE ||
	    comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return fail_ptr(EINVAL);
	e = ctx_engine(to_rxdp_ctx(context));
	if (!e)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	w->ecq = rxdp_engine_create_cq(e, cqe, &actual, &w->cq);
	if (!w->ecq) {
		int err = errno;

		free(w);
		return fail_ptr(err);
	}
	verbs_init_cq(&w->cq, context, channel, cq_context);
	w->cq.cqe = actual;
	rxdp_engine_cq_set_notify(w->ecq, cq_notify, w);
	return &w->cq;
}

/*
 * "At least cqe entries" (ibv_resize_cq(3)): a CQ already that large stays
 * as it is (cq->cqe keeps its real size). Growing one needs the engine to
 * move its ring, which it does not offer: EOPNOTSUPP.
 */
int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	if (!cq || cqe < 1 || cqe > RXDP_VERBS_MAX_CQE)
		return EINVAL;
	if (cqe <= cq->cqe)
		return 0;
	return refuse();
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct rxdp_cq *w = to_cq(cq);
	uint32_t comp_read, async_read;
	int ret, keep;

	if (!cq)
		return EINVAL;
	ret = rxdp_engine_destroy_cq(w->ecq);
	if (ret)
		return -ret; /* EBUSY while a QP uses it */
	/* no more notifies or events now: the counts are final */
	keep = rxdp_events_destroyed(
		cq->context, cq, w,
		__atomic_load_n(&w->comp_events, __ATOMIC_ACQUIRE),
		__atomic_load_n(&w->async_events, __ATOMIC_ACQUIRE), &comp_read,
		&async_read);
	rxdp_cq_wait_acked(cq, comp_read, async_read);
	rxdp_cq_fini(cq);
	if (!keep)
		free(w);
	return 0;
}

/* --- queue pairs ----------------------------------------------------------- */

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *init_attr)
{
	struct rxdp_eqp_init init = { 0 };
	struct rxdp_context *c;
	struct rxdp_engine *e;
	struct rxdp_qp *w;
	uint32_t qpn;
	int ret;

	if (!pd || !init_attr || !init_attr->send_cq || !init_attr->recv_cq)
		return fail_ptr(EINVAL);
	switch (init_attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	default: /* XRC, raw packet, driver QPs */
		return fail_ptr(EOPNOTSUPP);
	}
	if (init_attr->cap.max_send_wr > RXDP_VERBS_MAX_QP_WR ||
	    init_attr->cap.max_recv_wr > RXDP_VERBS_MAX_QP_WR ||
	    init_attr->cap.max_send_sge > RXDP_VERBS_MAX_SGE ||
	    init_attr->cap.max_recv_sge > RXDP_VERBS_MAX_SGE ||
	    init_attr->cap.max_inline_data > RXDP_VERBS_MAX_INLINE)
		return fail_ptr(EINVAL);
	c = to_rxdp_ctx(pd->context);
	e = ctx_engine(c);
	if (!e)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);

	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_create_qp(c->ctl, c->dev->info.ifindex,
				 init_attr->qp_type, &qpn);
	if (ret)
		pr_warn("rxdp: create QP: %s\n", rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	if (ret) {
		free(w);
		return fail_ptr(-ret);
	}

	init.qpn = qpn;
	init.qp_type = init_attr->qp_type;
	init.send_cq = to_cq(init_attr->send_cq)->ecq;
	init.recv_cq = to_cq(init_attr->recv_cq)->ecq;
	init.srq = init_attr->srq ? to_srq(init_attr->srq)->esrq : NULL;
	init.cap = init_attr->cap;
	init.sq_sig_all = init_attr->sq_sig_all;
	init.user = &w->qp;
	w->eqp = rxdp_engine_create_qp(e, &init);
	if (!w->eqp) {
		int err = errno;

		rxdp_ctx_ctl_lock(c);
		rxdp_ctl_destroy_qp(c->ctl, c->dev->info.ifindex, qpn);
		rxdp_ctx_ctl_unlock(c);
		free(w);
		return fail_ptr(err);
	}

	w->cap = init.cap;
	w->sq_sig_all = init_attr->sq_sig_all;
	w->qp.context = pd->context;
	w->qp.qp_context = init_attr->qp_context;
	w->qp.pd = pd;
	w->qp.send_cq = init_attr->send_cq;
	w->qp.recv_cq = init_attr->recv_cq;
	w->qp.srq = init_attr->srq;
	w->qp.handle = qpn;
	w->qp.qp_num = qpn;
	w->qp.state = IBV_QPS_RESET;
	w->qp.qp_type = init_attr->qp_type;
	pthread_mutex_init(&w->qp.mutex, NULL);
	pthread_cond_init(&w->qp.cond, NULL);
	init_attr->cap = init.cap;
	rxdp_pd_get(pd);
	return &w->qp;
}

static void attr_to_ctl(const struct ibv_qp_attr *a, struct rxdp_qp_attr *r)
{
	memset(r, 0, sizeof(*r));
	r->qp_state = a->qp_state;
	r->cur_qp_state = a->cur_qp_state;
	r->path_mtu = a->path_mtu;
	r->qkey = a->qkey;
	r->rq_psn = a->rq_psn;
	r->sq_psn = a->sq_psn;
	r->dest_qp_num = a->dest_qp_num;
	r->qp_access_flags = a->qp_access_flags;
	r->pkey_index = a->pkey_index;
	r->sq_draining = a->sq_draining;
	r->max_rd_atomic = a->max_rd_atomic;
	r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	r->min_rnr_timer = a->min_rnr_timer;
	r->port_num = a->port_num;
	r->timeout = a->timeout;
	r->retry_cnt = a->retry_cnt;
	r->rnr_retry = a->rnr_retry;
	r->en_sqd_async_notify = a->en_sqd_async_notify;
	rxdp_ah_from_attr(&a->ah_attr, &r->ah);
}

/* Remember what was set, by mask, for ibv_query_qp */
static void attr_merge(struct ibv_qp_attr *dst, const struct ibv_qp_attr *a,
		       int mask)
{
#define MERGE(bit, field)                      \
	do {                                   \
		if (mask & (bit))              \
			dst->field = a->field; \
	} while (0)
	MERGE(IBV_QP_STATE, qp_state);
	MERGE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	MERGE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	MERGE(IBV_QP_PKEY_INDEX, pkey_index);
	MERGE(IBV_QP_PORT, port_num);
	MERGE(IBV_QP_QKEY, qkey);
	MERGE(IBV_QP_AV, ah_attr);
	MERGE(IBV_QP_PATH_MTU, path_mtu);
	MERGE(IBV_QP_TIMEOUT, timeout);
	MERGE(IBV_QP_RETRY_CNT, retry_cnt);
	MERGE(IBV_QP_RNR_RETRY, rnr_retry);
	MERGE(IBV_QP_RQ_PSN, rq_psn);
	MERGE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	MERGE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	MERGE(IBV_QP_SQ_PSN, sq_psn);
	MERGE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	MERGE(IBV_QP_DEST_QPN, dest_qp_num);
#undef MERGE
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_context *c;
	struct rxdp_qp_info info;
	struct rxdp_qp_attr ra;
	const struct rxdp_path *path = NULL;
	int ret;

	if (!qp || !attr)
		return EINVAL;
	c = to_rxdp_ctx(qp->context);
	attr_to_ctl(attr, &ra);
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_modify_qp(c->ctl, c->dev->info.ifindex, qp->qp_num, &ra,
				 attr_mask, &info);
	if (ret)
		pr_debug("rxdp: modify QP 0x%x: %s\n", qp->qp_num,
			 rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	if (ret) {
		errno = -ret;
		return -ret;
	}

	/* RC/UC: the headers towards the peer, resolved by the daemon */
	if (qp->qp_type != IBV_QPT_UD &&
	    ((attr_mask & IBV_QP_AV) ||
	     ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RTR)))
		path = &info.path;
	ret = rxdp_engine_qp_modify(w->eqp, attr, attr_mask, path);
	if (ret) {
		/* keep the daemon's view in step: the QP is unusable now */
		struct rxdp_qp_attr err_attr = { .qp_state = IBV_QPS_ERR };

		pr_warn("rxdp: QP 0x%x: the engine refused the transition "
			"(%s)\n",
			qp->qp_num, strerror(-ret));
		rxdp_ctx_ctl_lock(c);
		rxdp_ctl_modify_qp(c->ctl, c->dev->info.ifindex, qp->qp_num,
				   &err_attr, IBV_QP_STATE, NULL);
		rxdp_ctx_ctl_unlock(c);
		errno = -ret;
		return -ret;
	}
	attr_merge(&w->attr, attr, attr_mask);
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct rxdp_qp *w = to_qp(qp);

	if (!qp || !attr || !init_attr)
		return EINVAL;
	*attr = w->attr;
	/* the engine may have taken the QP to ERR on its own */
	attr->qp_state = rxdp_engine_qp_state(w->eqp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = w->cap;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = w->cap;
	init_attr->qp_type = qp->qp_type;
	init_attr->sq_sig_all = w->sq_sig_all;
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_context *c;
	uint32_t none, read;
	int ret, keep;

	if (!qp)
		return EINVAL;
	c = to_rxdp_ctx(qp->context);
	ret = rxdp_engine_destroy_qp(w->eqp);
	if (ret)
		return -ret;
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_destroy_qp(c->ctl, c->dev->info.ifindex, qp->qp_num);
	if (ret)
		pr_warn("rxdp: destroy QP 0x%x: %s\n", qp->qp_num,
			rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	/*
	 * Wait for the acks of the events read, not of all raised: a program
	 * that never reads async events must not hang here after a QP error.
	 */
	keep = rxdp_events_destroyed(
		qp->context, qp, w, 0,
		__atomic_load_n(&w->events, __ATOMIC_ACQUIRE), &none, &read);
	rxdp_qp_wait_acked(qp, read);
	rxdp_pd_put(qp->pd);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	if (!keep)
		free(w);
	return 0;
}

/* The ibv_wr_* API: perftest uses it only on ConnectX/EFA part ids */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return fail_ptr(EOPNOTSUPP);
}

/* --- shared receive queues ----------------------------------------------- */

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *srq_init_attr)
{
	struct rxdp_engine *e;
	struct rxdp_srq *w;

	if (!pd || !srq_init_attr)
		return fail_ptr(EINVAL);
	if (srq_init_attr->attr.max_wr > RXDP_VERBS_MAX_SRQ_WR ||
	    srq_init_attr->attr.max_sge > RXDP_VERBS_MAX_SRQ_SGE)
		return fail_ptr(EINVAL);
	e = pd_engine(pd);
	if (!e)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	w->esrq = rxdp_engine_create_srq(e, &srq_init_attr->attr, &w->srq);
	if (!w->esrq) {
		int err = errno;

		free(w);
		return fail_ptr(err);
	}
	w->srq.context = pd->context;
	w->srq.srq_context = srq_init_attr->srq_context;
	w->srq.pd = pd;
	pthread_mutex_init(&w->srq.mutex, NULL);
	pthread_cond_init(&w->srq.cond, NULL);
	rxdp_pd_get(pd);
	return &w->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		   int srq_attr_mask)
{
	if (!srq || !srq_attr)
		return EINVAL;
	return -rxdp_engine_modify_srq(to_srq(srq)->esrq, srq_attr,
				       srq_attr_mask);
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	if (!srq || !srq_attr)
		return EINVAL;
	return -rxdp_engine_query_srq(to_srq(srq)->esrq, srq_attr);
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct rxdp_srq *w = to_srq(srq);
	uint32_t none, read;
	int ret, keep;

	if (!srq)
		return EINVAL;
	ret = rxdp_engine_destroy_srq(w->esrq);
	if (ret)
		return -ret; /* EBUSY while a QP uses it */
	keep = rxdp_events_destroyed(
		srq->context, srq, w, 0,
		__atomic_load_n(&w->events, __ATOMIC_ACQUIRE), &none, &read);
	rxdp_srq_wait_acked(srq, read);
	rxdp_pd_put(srq->pd);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	if (!keep)
		free(w);
	return 0;
}

/* --- address handles (UD) ------------------------------------------------ */

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rxdp_context *c;
	struct rxdp_engine *e;
	struct rxdp_vah *w;
	struct rxdp_path path;
	struct rxdp_ah a;
	int ret;

	if (!pd || !attr)
		return fail_ptr(EINVAL);
	/* RoCE addresses by GID: a GRH is mandatory (IBTA A17.4.1) */
	if (!attr->is_global)
		return fail_ptr(EINVAL);
	c = to_rxdp_ctx(pd->context);
	e = ctx_engine(c);
	if (!e)
		return NULL;
	rxdp_ah_from_attr(attr, &a);
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_resolve(c->ctl, c->dev->info.ifindex, &a, &path);
	if (ret)
		pr_warn("rxdp: create AH: %s\n", rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	if (ret)
		return fail_ptr(-ret);
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	w->eah = rxdp_engine_create_ah(e, &path);
	if (!w->eah) {
		int err = errno;

		free(w);
		return fail_ptr(err);
	}
	w->ah.context = pd->context;
	w->ah.pd = pd;
	rxdp_pd_get(pd);
	return &w->ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct rxdp_vah *w = (struct rxdp_vah *)ah;
	int ret;

	if (!ah)
		return EINVAL;
	ret = rxdp_engine_destroy_ah(w->eah);
	if (ret)
		return -ret;
	rxdp_pd_put(ah->pd);
	free(w);
	return 0;
}

/*
 * The sender's address from a UD receive's GRH area (IBTA 11.4.1.1 / RoCEv2
 * A17.4.5.1): an IPv6 header, or for IPv4 the IPv4 header in its last 20
 * bytes. dgid = the sender, sgid_index = our GID the packet was sent to.
 * 0, or -1 with errno, as rdma-core.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	struct rxdp_context *c;
	uint8_t ours[16] = { 0 };
	const uint8_t *ip = (const uint8_t *)grh;
	uint32_t i;

	if (!context || !wc || !grh || !ah_attr ||
	    !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	c = to_rxdp_ctx(context);
	memset(ah_attr, 0, sizeof(*ah_attr));
	if ((ip[0] >> 4) == 6) {
		uint32_t vtf = ntohl(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		memcpy(ours, grh->dgid.raw, 16);
		ah_attr->grh.flow_label = vtf & 0xfffff;
		ah_attr->grh.traffic_class = (vtf >> 20) & 0xff;
		ah_attr->grh.hop_limit = grh->hop_limit;
	} else {
		const uint8_t *v4 = ip + 20;

		if ((v4[0] >> 4) != 4) {
			errno = EINVAL;
			return -1;
		}
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], v4 + 12, 4);
		ours[10] = ours[11] = 0xff;
		memcpy(&ours[12], v4 + 16, 4);
		ah_attr->grh.traffic_class = v4[1];
		ah_attr->grh.hop_limit = v4[8];
	}
	for (i = 0; i < c->dev->info.gid_tbl_len; i++) {
		struct rxdp_gid_entry g;
		int ret;

		rxdp_ctx_ctl_lock(c);
		ret = rxdp_ctl_query_gid(c->ctl, c->dev->info.ifindex, i, &g);
		rxdp_ctx_ctl_unlock(c);
		if (ret)
			break;
		if (!memcmp(g.gid, ours, 16)) {
			ah_attr->grh.sgid_index = i;
			ah_attr->is_global = 1;
			ah_attr->sl = wc->sl;
			ah_attr->port_num = port_num;
			return 0;
		}
	}
	errno = ENOENT; /* sent to an address that is not ours (any more) */
	return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

/* Multicast (UD): not offered, max_mcast_grp is 0 */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return refuse();
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return refuse();
}
