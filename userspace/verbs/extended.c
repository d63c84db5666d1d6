// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The extended verbs, through verbs_context's ops as rdma-core providers
 * offer them: ibv_create_cq_ex (ibv_start_poll/next_poll/end_poll and the
 * ibv_wc_read_* family, completion timestamps), ibv_create_qp_ex (the
 * ibv_wr_* family), ibv_create_srq_ex and ibv_query_rt_values_ex. The
 * objects are the classic ones (dataplane.c) with more entry points: the
 * same shared queues, the same checks.
 *
 * The device clock is CLOCK_MONOTONIC in nanoseconds (hca_core_clock
 * 1 GHz): completion timestamps and ibv_query_rt_values_ex's raw clock
 * count it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs/provider.h"

/* --- extended CQs ---------------------------------------------------------- */

#define CQ_WC_TS                               \
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define CQ_WC_FLAGS (IBV_WC_STANDARD_FLAGS | CQ_WC_TS)

static struct rxdp_cq *to_cq_ex(struct ibv_cq_ex *cq)
{
	return (struct rxdp_cq *)cq;
}

/* The entry at cur becomes the current one, or none when cur == prod */
static int cq_current(struct rxdp_cq *w, uint32_t prod)
{
	if (w->cur == prod) {
		w->wc = NULL;
		return ENOENT;
	}
	w->wc = &w->sh->ring[w->cur & (w->size - 1)];
	/* the bytes of a small receive go to its buffers first (dataplane.c) */
	if (w->wc->vendor_err == RXDP_HCA_WC_SCATTER &&
	    w->wc->status == IBV_WC_SUCCESS)
		rxdp_hca_cq_scatter(&w->data[w->cur & (w->size - 1)]);
	w->cq_ex.status = w->wc->status;
	w->cq_ex.wr_id = w->wc->wr_id;
	return 0;
}

/* The lock is held from a start that found an entry to the end */
static int cq_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct rxdp_cq *w = to_cq_ex(cq);
	int err;

	if (attr && attr->comp_mask) {
		errno = EINVAL;
		return EINVAL;
	}
	pthread_spin_lock(&w->lock);
	w->cur = atomic_load_explicit(&w->sh->cons, memory_order_relaxed);
	err = cq_current(w, atomic_load_explicit(&w->sh->prod,
						 memory_order_acquire));
	if (err) {
		pthread_spin_unlock(&w->lock);
		err = cq_idle(w) ?: ENOENT;
		errno = err;
	}
	return err;
}

static int cq_next_poll(struct ibv_cq_ex *cq)
{
	struct rxdp_cq *w = to_cq_ex(cq);
	int err;

	if (!w->wc)
		return ENOENT;
	w->cur++;
	err = cq_current(w, atomic_load_explicit(&w->sh->prod,
						 memory_order_acquire));
	errno = err;
	return err;
}

static void cq_end_poll(struct ibv_cq_ex *cq)
{
	struct rxdp_cq *w = to_cq_ex(cq);

	atomic_store_explicit(&w->sh->cons, w->wc ? w->cur + 1 : w->cur,
			      memory_order_release);
	w->wc = NULL;
	pthread_spin_unlock(&w->lock);
}

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->opcode;
}

static uint32_t cq_read_vendor_err(struct ibv_cq_ex *cq)
{
	uint32_t v = to_cq_ex(cq)->wc->vendor_err;

	return v == RXDP_HCA_WC_SCATTER ? 0 : v;
}

static uint32_t cq_read_byte_len(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->byte_len;
}

/* The invalidated R_Key too (ibv_wc_read_invalidated_rkey), host order */
static __be32 cq_read_imm_data(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->imm_data;
}

static uint32_t cq_read_qp_num(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->qp_num;
}

static uint32_t cq_read_src_qp(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->src_qp;
}

static unsigned int cq_read_wc_flags(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->wc_flags;
}

static uint32_t cq_read_slid(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->slid;
}

static uint8_t cq_read_sl(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->sl;
}

static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return to_cq_ex(cq)->wc->dlid_path_bits;
}

static uint64_t cq_read_completion_ts(struct ibv_cq_ex *cq)
{
	struct rxdp_cq *w = to_cq_ex(cq);

	return rxdp_hca_cq_ts(w->sh, w->size)[w->cur & (w->size - 1)];
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The device clock's time as the wall clock tells it now: a CLOCK_REALTIME
 * step after the completion (NTP) moves it, as it does mlx5's conversion
 */
static uint64_t cq_read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return cq_read_completion_ts(cq) + clock_ns(CLOCK_REALTIME) -
	       clock_ns(CLOCK_MONOTONIC);
}

/*
 * Every standard field and the completion timestamp; the CQ flags are
 * hints (single-threaded) or not offered (ignoring overruns: an overrun
 * stays an error, as IBTA has it)
 */
struct ibv_cq_ex *rxdp_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	uint32_t flags = 0;
	struct rxdp_cq *w;

	if (attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return fail_ptr(EOPNOTSUPP); /* a parent domain */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return fail_ptr(EOPNOTSUPP);
	if (attr->wc_flags & ~(uint64_t)CQ_WC_FLAGS)
		return fail_ptr(EOPNOTSUPP);
	if (attr->wc_flags & CQ_WC_TS)
		flags |= RXDP_CTL_CQ_F_TIMESTAMP;
	if (attr->cqe > INT32_MAX)
		return fail_ptr(EINVAL);
	w = cq_create(context, (int)attr->cqe, attr->cq_context, attr->channel,
		      (int)attr->comp_vector, flags);
	if (!w)
		return NULL;
	w->cq_ex.start_poll = cq_start_poll;
	w->cq_ex.next_poll = cq_next_poll;
	w->cq_ex.end_poll = cq_end_poll;
	w->cq_ex.read_opcode = cq_read_opcode;
	w->cq_ex.read_vendor_err = cq_read_vendor_err;
	w->cq_ex.read_wc_flags = cq_read_wc_flags;
	w->cq_ex.read_byte_len = cq_read_byte_len;
	w->cq_ex.read_imm_data = cq_read_imm_data;
	w->cq_ex.read_qp_num = cq_read_qp_num;
	w->cq_ex.read_src_qp = cq_read_src_qp;
	w->cq_ex.read_slid = cq_read_slid;
	w->cq_ex.read_sl = cq_read_sl;
	w->cq_ex.read_dlid_path_bits = cq_read_dlid_path_bits;
	if (flags & RXDP_CTL_CQ_F_TIMESTAMP) {
		w->cq_ex.read_completion_ts = cq_read_completion_ts;
		w->cq_ex.read_completion_wallclock_ns =
			cq_read_completion_wallclock_ns;
	}
	return &w->cq_ex;
}

/* --- extended QPs: the ibv_wr_* family -------------------------------------- */

/* The operations of each transport (rxdp_hca_send_check() has the rules) */
#define QP_OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define QP_OPS_UC                                \
	(QP_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_BIND_MW)
#define QP_OPS_RC                                                         \
	(QP_OPS_UC | IBV_QP_EX_WITH_RDMA_READ |                           \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                              \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE |     \
	 RXDP_QP_EX_WITH_FLUSH)

/* wr_flush where rdma-core 47's ibv_qp_ex has it (ibta15.h) */
_Static_assert(offsetof(struct rxdp_qp, wr_flush) ==
		       offsetof(struct rxdp_qp_ex47, wr_flush),
	       "wr_flush where newer headers have it");

static struct rxdp_qp *to_qp_ex(struct ibv_qp_ex *qp)
{
	return (struct rxdp_qp *)qp;
}

static void wr_fail(struct rxdp_qp *w, int err)
{
	if (!w->wr_err)
		w->wr_err = err;
}

static struct rxdp_hca_swqe *wr_slot(struct rxdp_qp *w, uint32_t idx)
{
	return rxdp_hca_slot(w->sq, idx, w->sq_size, w->sq_stride);
}

/*
 * The WQE built last checked as ibv_post_send checks one (and as rxdpd
 * will again), now that its setters have run
 */
static void wr_check_last(struct rxdp_qp *w)
{
	uint32_t prod =
		atomic_load_explicit(&w->sh->sq.prod, memory_order_relaxed);
	const struct rxdp_hca_swqe *d;

	if (w->wr_err || w->wr_cur == prod)
		return;
	d = wr_slot(w, w->wr_cur - 1);
	if (rxdp_hca_swqe_check(&w->hcaps, d) ||
	    (w->qp.qp_type == IBV_QPT_UD && !d->ah))
		wr_fail(w, EINVAL);
}

/*
 * A small send is gathered as ibv_post_send's are (dataplane.c): when it
 * is posted, at wr_complete, so the bytes are those the buffers hold then
 */
static void wr_gather(struct rxdp_qp *w, struct rxdp_hca_swqe *d)
{
	struct ibv_send_wr wr = { 0 };
	uint64_t total = 0;

	if ((d->send_flags & IBV_SEND_INLINE) || !d->num_sge ||
	    !rxdp_hca_gatherable(d->opcode))
		return;
	for (uint32_t i = 0; i < d->num_sge; i++)
		total += d->sge[i].length;
	if (!total || total > RXDP_HCA_GATHER_MAX)
		return;
	wr.sg_list = d->sge;
	wr.num_sge = (int)d->num_sge;
	if (gather(to_rxdp_ctx(w->qp.context), w->qp.pd, &wr,
		   (uint8_t *)(d->sge + d->num_sge)))
		d->send_flags |= RXDP_HCA_SEND_GATHERED;
}

/* A new WQE in the next free slot, or NULL (the error is kept) */
static struct rxdp_hca_swqe *wr_new(struct ibv_qp_ex *qx, enum ibv_wr_opcode op)
{
	struct rxdp_qp *w = to_qp_ex(qx);
	uint32_t done =
		atomic_load_explicit(&w->sh->sq.done, memory_order_acquire);
	struct rxdp_hca_swqe *d;

	wr_check_last(w);
	if (w->wr_err)
		return NULL;
	if (w->wr_cur - done >= w->sq_size) {
		wr_fail(w, ENOMEM);
		return NULL;
	}
	d = wr_slot(w, w->wr_cur++);
	memset(d, 0, sizeof(*d));
	d->wr_id = qx->wr_id;
	d->opcode = op;
	d->send_flags = qx->wr_flags;
	return d;
}

/* The WQE the setters complete: the last one built, or NULL */
static struct rxdp_hca_swqe *wr_last(struct ibv_qp_ex *qx)
{
	struct rxdp_qp *w = to_qp_ex(qx);

	if (w->wr_err)
		return NULL;
	if (w->wr_cur ==
	    atomic_load_explicit(&w->sh->sq.prod, memory_order_relaxed)) {
		wr_fail(w, EINVAL); /* a setter with no WR */
		return NULL;
	}
	return wr_slot(w, w->wr_cur - 1);
}

static void wr_rdma(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey,
		    uint64_t remote_addr, __be32 imm)
{
	struct rxdp_hca_swqe *d = wr_new(qx, op);

	if (d) {
		d->rkey = rkey;
		d->remote_addr = remote_addr;
		d->imm_data = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(qx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	wr_rdma(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(qx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *qx, enum ibv_wr_opcode op,
		      uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
		      uint64_t swap)
{
	struct rxdp_hca_swqe *d = wr_new(qx, op);

	if (d) {
		d->rkey = rkey;
		d->remote_addr = remote_addr;
		d->compare_add = compare_add;
		d->swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(qx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_atomic(qx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* IBTA 1.5 (A19): the 8 bytes at atomic_wr, as they are, to remote_addr */
static void wr_atomic_write(struct ibv_qp_ex *qx, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct rxdp_hca_swqe *d = wr_new(qx, IBV_WR_ATOMIC_WRITE);

	if (d)
		rxdp_hca_swqe_atomic_write(d, rkey, remote_addr, atomic_wr);
}

/*
 * IBTA 1.5 (A19): what was written before to [remote_addr, +len) (type:
 * IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT), or to the whole region rkey
 * names (level IBV_FLUSH_MR), placed before this completes
 */
static void wr_flush(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t remote_addr,
		     size_t len, uint8_t type, uint8_t level)
{
	struct rxdp_hca_swqe *d = wr_new(qx, (enum ibv_wr_opcode)RXDP_WR_FLUSH);

	if (d)
		rxdp_hca_swqe_flush(d, rkey, remote_addr, len, type, level);
}

/* Send, Send with Immediate, Send with Invalidate, Local Invalidate */
static void wr_imm(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t imm)
{
	struct rxdp_hca_swqe *d = wr_new(qx, op);

	if (d)
		d->imm_data = imm;
}

static void wr_send(struct ibv_qp_ex *qx)
{
	wr_imm(qx, IBV_WR_SEND, 0);
}

static void wr_send_imm(struct ibv_qp_ex *qx, __be32 imm_data)
{
	wr_imm(qx, IBV_WR_SEND_WITH_IMM, imm_data);
}

static void wr_send_inv(struct ibv_qp_ex *qx, uint32_t invalidate_rkey)
{
	wr_imm(qx, IBV_WR_SEND_WITH_INV, invalidate_rkey);
}

static void wr_local_inv(struct ibv_qp_ex *qx, uint32_t invalidate_rkey)
{
	wr_imm(qx, IBV_WR_LOCAL_INV, invalidate_rkey);
}

/*
 * A type 2 window's bind (a type 1's too, as ibv_bind_mw posts it): the
 * new R_Key's key byte becomes the window's (engine/mw.c)
 */
static void wr_bind_mw(struct ibv_qp_ex *qx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr wr = { 0 };
	struct rxdp_hca_swqe *d;

	if (!mw || !info || (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)) {
		wr_fail(to_qp_ex(qx), EINVAL);
		return;
	}
	d = wr_new(qx, IBV_WR_BIND_MW);
	if (!d)
		return;
	wr.wr_id = d->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = d->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = *info;
	{
		struct rxdp_hca_poster p;

		qp_poster(to_qp_ex(qx), &p);
		rxdp_hca_swqe_fill(d, to_qp_ex(qx)->qp.qp_type, &wr, 0, &p);
	}
}

static void wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct rxdp_hca_swqe *d = wr_last(qx);

	if (!d)
		return;
	if (!ah) {
		wr_fail(to_qp_ex(qx), EINVAL);
		return;
	}
	d->ah = ((struct rxdp_vah *)ah)->handle;
	d->remote_qpn = remote_qpn;
	d->remote_qkey = remote_qkey;
}

static void wr_set_sge_list(struct ibv_qp_ex *qx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct rxdp_qp *w = to_qp_ex(qx);
	struct rxdp_hca_swqe *d = wr_last(qx);

	if (!d)
		return;
	if (num_sge > w->cap.max_send_sge) {
		wr_fail(w, EINVAL);
		return;
	}
	d->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
	memcpy(d->sge, sg_list, num_sge * sizeof(*sg_list));
	d->num_sge = (uint32_t)num_sge;
}

static void wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qx, 1, &sge);
}

/* The bytes are copied now: the buffers may change once this returns */
static void wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct rxdp_qp *w = to_qp_ex(qx);
	struct rxdp_hca_swqe *d = wr_last(qx);
	uint8_t *p;
	size_t total = 0;

	if (!d)
		return;
	for (size_t i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (total > w->cap.max_inline_data) {
		wr_fail(w, EINVAL);
		return;
	}
	p = (uint8_t *)d->sge;
	for (size_t i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	d->send_flags |= IBV_SEND_INLINE;
	d->num_sge = (uint32_t)total;
}

static void wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qx, 1, &buf);
}

/* From here to wr_complete or wr_abort the send queue is this thread's */
static void wr_start(struct ibv_qp_ex *qx)
{
	struct rxdp_qp *w = to_qp_ex(qx);
	enum ibv_qp_state st = w->qp.state;

	pthread_spin_lock(&w->sq_lock);
	w->wr_cur = atomic_load_explicit(&w->sh->sq.prod, memory_order_relaxed);
	/* IBTA 10.8.2: no send WR before RTS, as ibv_post_send */
	w->wr_err = st == IBV_QPS_RESET || st == IBV_QPS_INIT ||
				    st == IBV_QPS_RTR
			    ? EINVAL
			    : 0;
}

/* All the WRs built or none: the first error, and nothing posted */
static int wr_complete(struct ibv_qp_ex *qx)
{
	struct rxdp_qp *w = to_qp_ex(qx);
	int err;

	wr_check_last(w);
	err = w->wr_err;
	if (!err) {
		uint32_t prod = atomic_load_explicit(&w->sh->sq.prod,
						     memory_order_relaxed);

		for (uint32_t i = prod; i != w->wr_cur; i++)
			wr_gather(w, wr_slot(w, i));
		atomic_store_explicit(&w->sh->sq.prod, w->wr_cur,
				      memory_order_release);
	}
	pthread_spin_unlock(&w->sq_lock);
	if (err)
		return err;
	doorbell(w->qp.context);
	return 0;
}

static void wr_abort(struct ibv_qp_ex *qx)
{
	pthread_spin_unlock(&to_qp_ex(qx)->sq_lock);
}

static void qp_ex_set_ops(struct rxdp_qp *w, uint64_t ops)
{
	struct ibv_qp_ex *q = &w->qp_ex;

	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		q->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		q->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND)
		q->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		q->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		q->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		q->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		q->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		q->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		q->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		q->wr_atomic_write = wr_atomic_write;
	if (ops & RXDP_QP_EX_WITH_FLUSH)
		w->wr_flush = wr_flush;
	q->wr_set_ud_addr = wr_set_ud_addr;
	q->wr_set_sge = wr_set_sge;
	q->wr_set_sge_list = wr_set_sge_list;
	q->wr_set_inline_data = wr_set_inline_data;
	q->wr_set_inline_data_list = wr_set_inline_data_list;
	q->wr_start = wr_start;
	q->wr_complete = wr_complete;
	q->wr_abort = wr_abort;
}

/*
 * RC, UC and UD QPs on a PD, with the operations asked for (all the
 * transport's when send_ops_flags is not given); no create flags, no XRC,
 * RSS or raw packet QPs
 */
struct ibv_qp *rxdp_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t ops = attr->qp_type == IBV_QPT_RC   ? QP_OPS_RC
		       : attr->qp_type == IBV_QPT_UC ? QP_OPS_UC
						     : QP_OPS_UD;
	struct rxdp_qp *w;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (attr->send_ops_flags & ~ops)))
		return fail_ptr(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return fail_ptr(EINVAL);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		ops = attr->send_ops_flags;
	/* the first members of the two init attrs are the same */
	w = qp_create(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (!w)
		return NULL;
	w->ex = true;
	qp_ex_set_ops(w, ops);
	return &w->qp;
}

/* --- extended SRQs ------------------------------------------------------- */

/*
 * Basic SRQs (ibv_create_srq_ex() itself makes the ones with a PD and no
 * more through ibv_create_srq): a CQ given for one is not used; XRC and
 * tag-matching SRQs are not offered
 */
struct ibv_srq *rxdp_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
			       IBV_SRQ_INIT_ATTR_CQ;
	struct rxdp_srq *w;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC))
		return fail_ptr(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context)
		return fail_ptr(EINVAL);
	/* the first members of the two init attrs are the same */
	w = srq_create(attr->pd, (struct ibv_srq_init_attr *)attr);
	return w ? &w->srq : NULL;
}

/* --- the device clock ---------------------------------------------------- */

/* The raw clock as mlx5 reports it: its ticks (ns here) in tv_nsec */
int rxdp_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values)
{
	uint32_t asked = values->comp_mask;

	values->comp_mask = 0;
	if (asked & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)clock_ns(CLOCK_MONOTONIC);
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}
