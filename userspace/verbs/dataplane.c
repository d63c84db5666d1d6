// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data-path verbs: the entry points the transport engine
 * (userspace/engine, see engine.h) is to be wired to. Every function here
 * exists so that the loader resolves the symbol and programs get a clean
 * error; until the glue is written each one refuses with EOPNOTSUPP in the
 * libibverbs convention of its kind:
 *   create/alloc calls:  NULL, errno = EOPNOTSUPP
 *   modify/query/destroy: return EOPNOTSUPP (positive), errno set too
 *   post calls:          return EOPNOTSUPP, *bad_wr = the first WR
 *   poll_cq:             return -EOPNOTSUPP (negative: an error, not a count)
 *
 * What the glue must do, per call, is noted above each one. The helpers it
 * needs are in verbs_priv.h: verbs_init_cq / rxdp_cq_fini (CQ common part
 * and channel refcount), rxdp_cq_notify (queue a completion event),
 * rxdp_async_event_post (queue an async event), rxdp_cq_wait_acked /
 * rxdp_qp_wait_acked / rxdp_srq_wait_acked (destroy waits for acks),
 * rxdp_pd_get / rxdp_pd_put (PD use count), rxdp_ctx_ctl_lock (the daemon
 * connection in struct rxdp_context).
 */
#include <errno.h>

#include "verbs/verbs_priv.h"

/* --- per context ----------------------------------------------------------- */

/*
 * Glue: create the engine for this context (rxdp_engine_create on an AF_XDP
 * port from rxdp_ctl_attach_datapath), keep it in c->engine. Until then a
 * context is control-plane only, which ibv_devinfo and friends need.
 */
int rxdp_dp_context_init(struct rxdp_context *c)
{
	c->engine = NULL;
	return 0;
}

/* Glue: rxdp_engine_destroy(c->engine) */
void rxdp_dp_context_fini(struct rxdp_context *c)
{
}

/* --- the static inline verbs dispatch through context->ops ------------------ */

/* Glue: rxdp_engine_post_send */
static int rxdp_dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			     struct ibv_send_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/* Glue: rxdp_engine_post_recv */
static int rxdp_dp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/* Glue: post to the SRQ */
static int rxdp_dp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/* Glue: rxdp_engine_poll_cq */
static int rxdp_dp_poll_cq(struct ibv_cq *cq, int num_entries,
			   struct ibv_wc *wc)
{
	return -EOPNOTSUPP;
}

/*
 * Glue: rxdp_engine_req_notify_cq, with rxdp_engine_cq_set_notify(cq,
 * notify -> rxdp_cq_notify(ibv_cq)) set at create time.
 */
static int rxdp_dp_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return EOPNOTSUPP;
}

/* Memory windows: not in rxdp's plan (ibv_alloc_mw checks for NULL too) */
static struct ibv_mw *rxdp_dp_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	errno = EOPNOTSUPP;
	return NULL;
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

/* --- exported data-path verbs --------------------------------------------- */

static void *refuse_ptr(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static int refuse(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/*
 * Glue for the three registrations: one function, rxdp_engine_reg_mr(addr,
 * length, iova, access) in a struct verbs_mr-like wrapper of ibv_mr with
 * context, pd, addr, length, handle, lkey, rkey filled, and rxdp_pd_get(pd).
 * perftest registers with ibv_reg_mr_iova2 and access 0x100003
 * (IBV_ACCESS_RELAXED_ORDERING: accept and ignore).
 */
static struct ibv_mr *rxdp_dp_reg_mr(struct ibv_pd *pd, void *addr,
				     size_t length, uint64_t iova,
				     unsigned int access)
{
	return refuse_ptr();
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

/* Glue: rxdp_engine_dereg_mr, rxdp_pd_put, free the wrapper */
int ibv_dereg_mr(struct ibv_mr *mr)
{
	return refuse();
}

/* rdma-core answers with enum ibv_rereg_mr_err_code (negative) and errno */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

/*
 * Glue: rxdp_engine_create_cq in a wrapper that starts with struct ibv_cq,
 * verbs_init_cq(cq, ctx, channel, cq_context), cq->cqe = actual size,
 * rxdp_engine_cq_set_notify -> rxdp_cq_notify. comp_vector must be <
 * num_comp_vectors (1).
 */
struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	return refuse_ptr();
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return refuse();
}

/*
 * Glue: rxdp_engine_destroy_cq (EBUSY while QPs use it), then
 * rxdp_cq_wait_acked(cq, events queued, async events queued), rxdp_cq_fini.
 */
int ibv_destroy_cq(struct ibv_cq *cq)
{
	return refuse();
}

/*
 * Glue: rxdp_ctl_create_qp for the QPN (under rxdp_ctx_ctl_lock), then
 * rxdp_engine_create_qp; fill ibv_qp (context, pd, cqs, srq, qp_num, state
 * RESET, qp_type, mutex/cond), attr->cap updated to what was granted;
 * rxdp_pd_get.
 */
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *qp_init_attr)
{
	return refuse_ptr();
}

/*
 * Glue: rxdp_ctl_modify_qp validates (IBTA 10.3) and, on RTR, resolves the
 * path; then rxdp_engine_qp_modify with the resolved path; qp->state.
 */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return refuse();
}

/* Glue: rxdp_ctl_query_qp + the engine's cap; must fill cap (perftest) */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	return refuse();
}

/*
 * Glue: rxdp_engine_destroy_qp, rxdp_ctl_destroy_qp, rxdp_qp_wait_acked,
 * rxdp_pd_put.
 */
int ibv_destroy_qp(struct ibv_qp *qp)
{
	return refuse();
}

/* Glue: the extended QP (ibv_wr_* API) if the engine offers it */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return refuse_ptr();
}

/* Glue: shared receive queues (issue 5), limit events via async events */
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *srq_init_attr)
{
	return refuse_ptr();
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		   int srq_attr_mask)
{
	return refuse();
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return refuse();
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	return refuse();
}

/*
 * Glue: address handles for UD (issue 5): rxdp_ctl_resolve the GID to a
 * path, keep it in a wrapper of ibv_ah; rxdp_pd_get.
 */
struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return refuse_ptr();
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	return refuse();
}

/*
 * Glue: build ah_attr from a UD receive (wc->wc_flags & IBV_WC_GRH, the
 * 40-byte GRH area: an IPv4 header in its last 20 bytes for IPv4 GIDs),
 * dgid = the sender's address, sgid_index = our GID that was the
 * destination. rdma-core returns 0 or -1 with errno.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	errno = EOPNOTSUPP;
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
