// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The owner's side of the shared queues (common/hca.h): posting WQEs into
 * a ring and polling CQEs out of one. The verbs library posts and polls
 * this way for applications, rxdpd for its own QP1, the engine tests for
 * theirs: one format from the queue to the engine, which copies each WQE
 * into its own record before it checks it (engine.c, the drain).
 *
 * Callers serialise posters of one ring and pollers of one CQ themselves.
 */
#include <errno.h>
#include <string.h>

#include "common/hca.h"

/* Bind MW and Local Invalidate: local operations, no SGEs */
static bool send_wr_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

void rxdp_hca_swqe_fill(struct rxdp_hca_swqe *d, enum ibv_qp_type type,
			const struct ibv_send_wr *wr, __u64 total,
			const struct rxdp_hca_poster *p)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	memset(d, 0, sizeof(*d));
	d->wr_id = wr->wr_id;
	d->opcode = wr->opcode;
	d->send_flags = wr->send_flags;
	d->imm_data = wr->imm_data; /* or invalidate_rkey: a union */
	if (wr->opcode == IBV_WR_BIND_MW) {
		/* the overlay common/hca.h describes */
		d->rkey = wr->bind_mw.rkey;
		d->remote_qpn = wr->bind_mw.mw->rkey;
		d->remote_qkey = b->mr ? b->mr->lkey : 0;
		d->remote_addr = b->addr;
		d->compare_add = b->length;
		d->swap = b->mw_access_flags;
		return;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV)
		return;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		d->remote_addr = wr->wr.atomic.remote_addr;
		d->rkey = wr->wr.atomic.rkey;
		d->compare_add = wr->wr.atomic.compare_add;
		d->swap = wr->wr.atomic.swap;
	} else if (type == IBV_QPT_UD) {
		d->ah = p->ah_handle(wr->wr.ud.ah);
		d->remote_qpn = wr->wr.ud.remote_qpn;
		d->remote_qkey = wr->wr.ud.remote_qkey;
	} else {
		d->remote_addr = wr->wr.rdma.remote_addr;
		d->rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		__u8 *q = (__u8 *)d->sge;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(q, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			q += wr->sg_list[i].length;
		}
		d->num_sge = (__u32)total;
	} else {
		memcpy(d->sge, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*d->sge));
		d->num_sge = (__u32)wr->num_sge;
		if (p->gather && total && total <= RXDP_HCA_GATHER_MAX &&
		    rxdp_hca_gatherable(wr->opcode) &&
		    p->gather(p->arg, wr, (__u8 *)(d->sge + wr->num_sge)))
			d->send_flags |= RXDP_HCA_SEND_GATHERED;
	}
}

int rxdp_hca_post_send(const struct rxdp_hca_ring *r,
		       const struct rxdp_hca_qp_caps *c,
		       const struct rxdp_hca_poster *p, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad)
{
	struct rxdp_hca_wq *sq = r->wq;
	int err = 0;

	for (; wr; wr = wr->next) {
		__u32 prod =
			atomic_load_explicit(&sq->prod, memory_order_relaxed);
		__u32 done =
			atomic_load_explicit(&sq->done, memory_order_acquire);
		__u32 num_sge = (__u32)wr->num_sge;
		__u64 total = 0;

		err = EINVAL;
		if (wr->num_sge < 0)
			break;
		if (send_wr_local(wr->opcode))
			num_sge = 0; /* no payload: SGEs are not looked at */
		for (__u32 i = 0; i < num_sge; i++)
			total += wr->sg_list[i].length;
		err = rxdp_hca_send_check(c, wr->opcode, wr->send_flags,
					  num_sge, total,
					  wr->wr.atomic.remote_addr,
					  num_sge ? wr->sg_list[0].length : 0);
		/*
		 * ibv_send_wr has no place for an Atomic Write's 8 bytes nor
		 * a Flush's arguments: ibv_wr_atomic_write and ibv_wr_flush
		 * post them (as rdma-core has them)
		 */
		if (wr->opcode == IBV_WR_ATOMIC_WRITE ||
		    (__u32)wr->opcode == RXDP_WR_FLUSH)
			err = EINVAL;
		if (!err && c->qp_type == IBV_QPT_UD &&
		    (!wr->wr.ud.ah || !p->ah_handle(wr->wr.ud.ah)))
			err = EINVAL;
		if (!err && wr->opcode == IBV_WR_BIND_MW && !wr->bind_mw.mw)
			err = EINVAL;
		if (!err && prod - done >= r->size)
			err = ENOMEM;
		if (err)
			break;
		rxdp_hca_swqe_fill(rxdp_hca_slot(r->slots, prod, r->size,
						 r->stride),
				   c->qp_type, wr, total, p);
		atomic_store_explicit(&sq->prod, prod + 1,
				      memory_order_release);
	}
	if (err)
		*bad = wr;
	return err;
}

void rxdp_hca_swqe_atomic_write(struct rxdp_hca_swqe *d, __u32 rkey,
				__u64 remote_addr, const void *val)
{
	d->rkey = rkey;
	d->remote_addr = remote_addr;
	memcpy(&d->compare_add, val, sizeof(d->compare_add));
}

void rxdp_hca_swqe_flush(struct rxdp_hca_swqe *d, __u32 rkey, __u64 remote_addr,
			 __u64 len, __u8 type, __u8 level)
{
	d->rkey = rkey;
	d->remote_addr = remote_addr;
	d->compare_add = len;
	d->swap = type | (__u64)level << 8;
}

int rxdp_hca_swqe_check(const struct rxdp_hca_qp_caps *c,
			const struct rxdp_hca_swqe *d)
{
	bool inl = d->send_flags & IBV_SEND_INLINE;
	__u32 nsge = inl || send_wr_local(d->opcode) ? 0 : d->num_sge;
	__u64 total = 0;

	for (__u32 i = 0; i < nsge && i < c->max_send_sge; i++)
		total += d->sge[i].length;
	if (inl)
		total = d->num_sge;
	if (rxdp_hca_send_check(c, d->opcode, d->send_flags, inl ? 1 : nsge,
				total, d->remote_addr,
				nsge ? d->sge[0].length : 0))
		return EINVAL;
	if (d->opcode == RXDP_WR_FLUSH)
		return rxdp_hca_flush_check(d->compare_add, d->swap & 0xff,
					    (d->swap >> 8) & 0xff);
	return 0;
}

int rxdp_hca_post_swqe(const struct rxdp_hca_ring *r,
		       const struct rxdp_hca_qp_caps *c,
		       const struct rxdp_hca_swqe *s)
{
	__u32 prod = atomic_load_explicit(&r->wq->prod, memory_order_relaxed);
	__u32 done = atomic_load_explicit(&r->wq->done, memory_order_acquire);
	size_t len = sizeof(*s);

	if (rxdp_hca_swqe_check(c, s))
		return EINVAL;
	if (prod - done >= r->size)
		return ENOMEM;
	/* checked: the SGEs or inline bytes fit the slot */
	if (s->send_flags & IBV_SEND_INLINE)
		len += s->num_sge;
	else if (!send_wr_local(s->opcode))
		len += s->num_sge * sizeof(s->sge[0]);
	memcpy(rxdp_hca_slot(r->slots, prod, r->size, r->stride), s, len);
	atomic_store_explicit(&r->wq->prod, prod + 1, memory_order_release);
	return 0;
}

int rxdp_hca_post_recv(const struct rxdp_hca_ring *r, __u32 max_sge,
		       struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	for (; wr; wr = wr->next) {
		__u32 prod = atomic_load_explicit(&r->wq->prod,
						  memory_order_relaxed);
		__u32 done = atomic_load_explicit(&r->wq->done,
						  memory_order_acquire);
		struct rxdp_hca_rwqe *d;

		if (wr->num_sge < 0 || (__u32)wr->num_sge > max_sge) {
			*bad = wr;
			return EINVAL;
		}
		if (prod - done >= r->size) {
			*bad = wr;
			return ENOMEM;
		}
		d = rxdp_hca_slot(r->slots, prod, r->size, r->stride);
		d->wr_id = wr->wr_id;
		d->num_sge = (__u32)wr->num_sge;
		memcpy(d->sge, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*d->sge));
		atomic_store_explicit(&r->wq->prod, prod + 1,
				      memory_order_release);
	}
	return 0;
}

/*
 * The bytes of a small receive rxdpd left in the CQE's data slot go where
 * the receive WQE's buffers are: before the CQE is returned, and before
 * its slot is given back.
 */
void rxdp_hca_cq_scatter(const struct rxdp_hca_cqd *d)
{
	__u32 off = 0;

	for (int i = 0; i < RXDP_HCA_SCATTER_SGES; i++) {
		__u32 n = d->len[i];

		if (n > RXDP_HCA_SCATTER_MAX - off)
			break;
		memcpy((void *)(uintptr_t)d->addr[i], d->data + off, n);
		off += n;
	}
}

int rxdp_hca_poll(struct rxdp_hca_cq *sh, __u32 size, int n, struct ibv_wc *wc)
{
	const struct rxdp_hca_cqd *data = rxdp_hca_cq_data(sh, size);
	__u32 cons, prod, m = size - 1;
	int got = 0;

	cons = atomic_load_explicit(&sh->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&sh->prod, memory_order_acquire);
	for (; got < n && cons != prod; got++, cons++) {
		wc[got] = sh->ring[cons & m];
		if (wc[got].vendor_err == RXDP_HCA_WC_SCATTER) {
			if (wc[got].status == IBV_WC_SUCCESS)
				rxdp_hca_cq_scatter(&data[cons & m]);
			wc[got].vendor_err = 0;
		}
	}
	if (got) /* an empty poll leaves the line rxdpd reads alone */
		atomic_store_explicit(&sh->cons, cons, memory_order_release);
	return got;
}
