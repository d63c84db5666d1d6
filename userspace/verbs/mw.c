// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Memory windows (IBTA 10.6.7), types 1 and 2, as Soft-RoCE's provider
 * offers them: rxdpd allocates them (their R_Key from the device's key
 * table), the engine binds and invalidates them as WRs (engine/mw.c).
 * ibv_bind_mw() of a type 1 window posts a Bind MW WR whose new R_Key is
 * the window's with its key byte incremented (ibv_inc_rkey), and the
 * window takes that key when the post succeeds: an application that gets
 * an error completion for the bind must restore it, as with rxe.
 */
#include <stdlib.h>

#include "verbs/provider.h"

struct rxdp_mw {
	struct ibv_mw mw;
	uint32_t handle;
};

struct ibv_mw *rxdp_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_mw *m;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return fail_ptr(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return fail_ptr(ENOMEM);
	o.pd = pd->handle;
	o.mw_type = type;
	o.cookie = (uintptr_t)m;
	if (obj_call(pd->context, RXDP_CTL_MW_ALLOC, &o, NULL, NULL)) {
		int err = errno;

		free(m);
		return fail_ptr(err);
	}
	m->handle = o.handle;
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = o.rkey;
	m->mw.handle = o.handle;
	m->mw.type = type;
	rxdp_pd_get(pd);
	return &m->mw;
}

/* ibv_bind_mw() checked the type and the PDs (EINVAL, EPERM) already */
int rxdp_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	/* zero-based windows are not offered (nor by Soft-RoCE for type 1) */
	if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

int rxdp_dealloc_mw(struct ibv_mw *mw)
{
	struct rxdp_mw *m = (struct rxdp_mw *)mw;
	struct rxdp_ctl_obj o = { .handle = m->handle };
	int ret;

	ret = obj_call(mw->context, RXDP_CTL_MW_DEALLOC, &o, NULL, NULL);
	if (ret && ret != ECONNRESET && ret != EPIPE)
		return ret;
	rxdp_pd_put(mw->pd);
	free(m);
	return 0;
}
