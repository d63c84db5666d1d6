// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Memory windows (IBTA 10.6.7), as Soft-RoCE offers them: type 1 and type
 * 2B. A window is a key (from the one key table, keys.h) that grants
 * remote access to part of a region, with rights of its own.
 *
 * - Type 1: allocated bound to nothing; bound (and re-bound, or unbound
 *   with a zero length) by ibv_bind_mw(), which the verbs library posts as
 *   a Bind MW WR on a QP, like a type 2 bind. It cannot be invalidated
 *   (o10-37.2.26): only re-bound.
 * - Type 2 (2B: associated with the QP it was bound through): allocated
 *   free, bound by a Bind MW WR, usable only through that QP, freed again
 *   by a Local Invalidate WR or a remote Send with Invalidate naming its
 *   R_Key; it can only be bound while free (o10-37.2.30).
 * - Either way the bind's new R_Key gives the window its key byte (the
 *   consumer's, ibv_inc_rkey(3)); the rest of the key stays the window's.
 * - A region cannot be deregistered or re-registered while windows are
 *   bound to it; a QP destroyed invalidates the type 2 windows bound
 *   through it.
 * Everything here runs with the engine lock held.
 */
#include <errno.h>
#include <stddef.h>

#include "engine/engine_int.h"

/* The rights a window may carry (IBV_ACCESS_ZERO_BASED is not offered) */
#define MW_ACCESS                                           \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

void mw_unbind(struct rxdp_emr *mw)
{
	if (mw->mw_mr)
		mw->mw_mr->nmw--;
	if (mw->mw_qp)
		mw->mw_qp->nmw--;
	mw->mw_mr = NULL;
	mw->mw_qp = NULL;
	mw->mw_valid = false;
	mw->iova = mw->len = mw->addr = 0;
	mw->access = 0;
}

/*
 * The checks of a bind (IBTA 10.6.7.2, C10-72..75, o10-37.2.30/40), then
 * the bind itself. IBV_WC_SUCCESS or IBV_WC_MW_BIND_ERR.
 */
enum ibv_wc_status mw_bind(struct rxdp_eqp *qp, const struct swqe *w)
{
	struct rxdp_engine *e = qp->e;
	/*
	 * The window by its key's index part: its key byte is what the last
	 * bind gave it, which the ibv_mw a type 2 bind names may not know
	 * (rdma-core updates ibv_mw.rkey only for ibv_bind_mw)
	 */
	struct rxdp_emr *mw = eng_mw_by_index(e, w->mw_key);
	struct rxdp_emr *mr = NULL;
	unsigned int access = w->bind_access;

	/* the window and the QP are of one PD (C10-72) */
	if (!mw || !mw->mw_type || mw->pd != qp->pd || (access & ~MW_ACCESS))
		return IBV_WC_MW_BIND_ERR;
	if (mw->mw_type == IBV_MW_TYPE_2 && (mw->mw_valid || !w->bind_len))
		return IBV_WC_MW_BIND_ERR;
	if (w->bind_len) {
		mr = eng_mr_lookup(e, w->mr_key);
		if (!mr || mr->pd != qp->pd ||
		    !(mr->access & IBV_ACCESS_MW_BIND))
			return IBV_WC_MW_BIND_ERR;
		/* C10-74: a writable window needs a locally writable region */
		if ((access &
		     (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return IBV_WC_MW_BIND_ERR;
		/* C10-75: inside the region */
		if (w->bind_addr < mr->iova ||
		    w->bind_addr - mr->iova > mr->len ||
		    w->bind_len > mr->len - (w->bind_addr - mr->iova))
			return IBV_WC_MW_BIND_ERR;
	}
	mw_unbind(mw);
	eng_key_set_byte(&mw->k, (uint8_t)w->new_key);
	if (!mr)
		return IBV_WC_SUCCESS; /* a type 1 window, unbound */
	mw->mw_mr = mr;
	mr->nmw++;
	mw->iova = w->bind_addr;
	mw->len = w->bind_len;
	mw->addr = mr->addr + (w->bind_addr - mr->iova);
	mw->access = access;
	mw->mw_valid = true;
	if (mw->mw_type == IBV_MW_TYPE_2) {
		mw->mw_qp = qp;
		qp->nmw++;
	}
	return IBV_WC_SUCCESS;
}

/*
 * Only a bound type 2 window of the QP's PD can be invalidated: a region
 * registered by ibv_reg_mr cannot (it is not a fast-register one), nor a
 * type 1 window (o10-37.2.26).
 */
int mw_invalidate(struct rxdp_eqp *qp, uint32_t rkey)
{
	struct rxdp_emr *mw = eng_key_lookup(qp->e, rkey);

	if (!mw || mw->mw_type != IBV_MW_TYPE_2 || !mw->mw_valid ||
	    mw->pd != qp->pd)
		return -EINVAL;
	mw_unbind(mw);
	return 0;
}

bool mw_access(const struct rxdp_eqp *qp, const struct rxdp_emr *mw,
	       uint64_t va, uint64_t len, unsigned int need, uint64_t *addr)
{
	/* type 2B: only through the QP it was bound through */
	if (!mw->mw_valid || (mw->access & need) != need ||
	    (mw->mw_type == IBV_MW_TYPE_2 && mw->mw_qp != qp))
		return false;
	if (va < mw->iova || va - mw->iova > mw->len ||
	    len > mw->len - (va - mw->iova))
		return false;
	*addr = mw->addr + (va - mw->iova);
	return true;
}

void mw_qp_gone(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;

	/* rare (a QP destroyed with windows bound): a walk of the table */
	for (uint32_t i = 0; qp->nmw && i < 2 * ENG_KEY_MAX; i++) {
		struct eng_key *k = e->keys.slot[i];
		struct rxdp_emr *mw;

		if (!k || k->kind != ENG_KEY_MW)
			continue;
		mw = (struct rxdp_emr *)((char *)k -
					 offsetof(struct rxdp_emr, k));
		if (mw->mw_qp == qp)
			mw_unbind(mw);
	}
}
