// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The application's side of an engine's queues in tests (poster.h) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "common/ctl_client.h"
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

bool tp_hold;

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
	if (!tp_hold)
		rxdp_engine_progress(r.e);
	return err;
}

/* One WQE d (its header and arguments) posted as a WR is, or EINVAL */
static int tp_post_swqe(struct rxdp_eqp *qp, const struct rxdp_hca_swqe *d)
{
	enum ibv_qp_state st = rxdp_engine_qp_state(qp);
	struct rxdp_eqp_rings r;
	int err;

	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR)
		return EINVAL;
	rxdp_engine_qp_rings(qp, &r);
	pthread_mutex_lock(&tp_lock);
	err = rxdp_hca_post_swqe(&r.sq, &r.caps, d);
	pthread_mutex_unlock(&tp_lock);
	rxdp_engine_progress(r.e);
	return err;
}

int tp_post_atomic_write(struct rxdp_eqp *qp, uint64_t wr_id,
			 unsigned int flags, uint32_t rkey, uint64_t raddr,
			 const void *val)
{
	struct rxdp_hca_swqe d = { .wr_id = wr_id,
				   .opcode = IBV_WR_ATOMIC_WRITE,
				   .send_flags = flags };

	rxdp_hca_swqe_atomic_write(&d, rkey, raddr, val);
	return tp_post_swqe(qp, &d);
}

int tp_post_flush(struct rxdp_eqp *qp, uint64_t wr_id, unsigned int flags,
		  uint32_t rkey, uint64_t raddr, uint64_t len, uint8_t type,
		  uint8_t level)
{
	struct rxdp_hca_swqe d = { .wr_id = wr_id,
				   .opcode = RXDP_WR_FLUSH,
				   .send_flags = flags };

	rxdp_hca_swqe_flush(&d, rkey, raddr, len, type, level);
	return tp_post_swqe(qp, &d);
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

int tp_qp_connect(struct rxdp_eqp *qp, enum ibv_qp_type type,
		  const struct rxdp_qp_attr *a, const struct rxdp_path *path)
{
	struct rxdp_qp_attr t = *a;
	uint32_t mask[3];
	char why[256];
	int err = 0;

	t.port_num = 1;
	t.pkey_index = 0;
	mask[0] = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	mask[1] = IBV_QP_STATE;
	mask[2] = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type != IBV_QPT_UD)
		mask[1] |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN;
	if (type == IBV_QPT_RC) {
		mask[1] |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		mask[2] |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	for (int i = 0; i < 3 && !err; i++) {
		t.qp_state = i == 0   ? IBV_QPS_INIT
			     : i == 1 ? IBV_QPS_RTR
				      : IBV_QPS_RTS;
		err = rxdp_engine_qp_modify(qp, &t, mask[i],
					    i == 1 && type != IBV_QPT_UD ? path
									 : NULL,
					    0, why, sizeof(why));
	}
	if (err)
		fprintf(stderr, "tp_qp_connect: %s\n", why);
	return err;
}
