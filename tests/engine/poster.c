// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The application's side of an engine's queues in tests (poster.h) */
#include <errno.h>
#include <pthread.h>

#include "poster.h"

#define TP_AHS 64

/* posters of any ring, as one thread at a time (libibverbs' locks) */
static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rxdp_eah *tp_ahs[TP_AHS];

void tp_ah_init(struct tp_ah *ah, struct rxdp_eah *eah)
{
	ah->eah = eah;
	ah->handle = 0;
	pthread_mutex_lock(&tp_lock);
	for (uint32_t i = 0; i < TP_AHS; i++)
		if (!tp_ahs[i]) {
			tp_ahs[i] = eah;
			ah->handle = i + 1;
			break;
		}
	pthread_mutex_unlock(&tp_lock);
}

void tp_ah_fini(struct tp_ah *ah)
{
	if (ah->handle)
		tp_ahs[ah->handle - 1] = NULL;
	ah->handle = 0;
}

struct rxdp_eah *tp_ah_lookup(void *arg, uint32_t handle)
{
	return handle && handle <= TP_AHS ? tp_ahs[handle - 1] : NULL;
}

static __u32 tp_ah_handle(struct ibv_ah *ah)
{
	return ah ? ((struct tp_ah *)ah)->handle : 0;
}

int tp_post_send(struct rxdp_eqp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad)
{
	static const struct rxdp_hca_poster poster = { .ah_handle =
							       tp_ah_handle };
	enum ibv_qp_state st = rxdp_engine_qp_state(qp);
	struct rxdp_eqp_rings r;
	int err;

	/* IBTA 10.8.2: no send WR before RTS, as libibverbs refuses them */
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR) {
		*bad = wr;
		return EINVAL;
	}
	rxdp_engine_qp_rings(qp, &r);
	pthread_mutex_lock(&tp_lock);
	err = rxdp_hca_post_send(&r.sq, &r.caps, &poster, wr, bad);
	pthread_mutex_unlock(&tp_lock);
	rxdp_engine_progress(r.e);
	return err;
}

int tp_post_recv(struct rxdp_eqp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad)
{
	struct rxdp_eqp_rings r;
	int err;

	rxdp_engine_qp_rings(qp, &r);
	/* a QP on an SRQ has no receive queue of its own */
	if (rxdp_engine_qp_state(qp) == IBV_QPS_RESET || r.srq) {
		*bad = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&tp_lock);
	err = rxdp_hca_post_recv(&r.rq, r.max_recv_sge, wr, bad);
	pthread_mutex_unlock(&tp_lock);
	rxdp_engine_progress(r.e); /* an ERR QP flushes it */
	return err;
}

int tp_post_srq_recv(struct rxdp_esrq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad)
{
	struct ibv_srq_attr a;
	struct rxdp_hca_ring r;
	struct rxdp_engine *e = rxdp_engine_srq_ring(srq, &r);
	int err;

	rxdp_engine_query_srq(srq, &a);
	pthread_mutex_lock(&tp_lock);
	err = rxdp_hca_post_recv(&r, a.max_sge, wr, bad);
	pthread_mutex_unlock(&tp_lock);
	rxdp_engine_progress(e); /* an RNR-waiting peer may retry */
	return err;
}

int tp_poll_cq(struct rxdp_ecq *cq, int n, struct ibv_wc *wc)
{
	struct rxdp_hca_cq *sh;
	uint32_t size;
	struct rxdp_engine *e = rxdp_engine_cq_ring(cq, &sh, &size);
	int got;

	if (n < 0)
		return -EINVAL;
	pthread_mutex_lock(&tp_lock);
	got = rxdp_hca_poll(sh, size, n, wc);
	if (got < n) {
		pthread_mutex_unlock(&tp_lock);
		rxdp_engine_progress(e);
		pthread_mutex_lock(&tp_lock);
		got += rxdp_hca_poll(sh, size, n - got, wc + got);
	}
	pthread_mutex_unlock(&tp_lock);
	if (!got && rxdp_engine_cq_overflow(cq))
		return -EOVERFLOW;
	return got;
}

void tp_arm_cq(struct rxdp_ecq *cq, int solicited_only)
{
	struct rxdp_hca_cq *sh;
	uint32_t size;

	rxdp_engine_cq_ring(cq, &sh, &size);
	atomic_store(&sh->armed, solicited_only ? 2 : 1);
}
