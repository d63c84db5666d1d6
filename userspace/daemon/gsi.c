// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * QP1, the General Services Interface of a device (IBTA 13.4.6): a UD QP
 * that rxdpd itself owns, on which management datagrams (here the CM's)
 * come and go as RoCEv2 UD packets, Q_Key 0x80010000.
 *
 * It is an engine QP like a client's, with its queues in rxdpd's own
 * memory shared the same way (common/hca.h): the control thread writes
 * send WQEs (the MAD inline, so no send buffer outlives the post) and
 * receive WQEs into the rings and rings the doorbell; the data-path thread
 * drains them, and when a completion arrives on the armed CQ it writes an
 * eventfd the control thread polls. So the control thread never runs a
 * data-path pass, and QP1's packets need nothing the XDP program does not
 * already do for any UD QP: its qp_ctx entry (QPN 1, UD, RTS, the GSI
 * Q_Key) steers them to rxdpd's sockets.
 *
 * A MAD to a peer whose neighbour entry is not there yet waits (a few, for
 * a few seconds) until rtnetlink brings it; the CM's own retries cover the
 * rest.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/hca.h"
#include "common/log.h"
#include "daemon/cm.h"
#include "daemon/cm_mad.h"
#include "engine/engine.h"

#define GSI_SQ 64
#define GSI_RQ 64
#define GSI_CQ 256 /* both queues' completions */
#define GSI_BUF 512 /* GRH (40) + a 256-byte MAD, with room to spare */
#define GSI_AHS 32 /* destinations remembered */
#define GSI_PEND 64 /* MADs waiting for a neighbour */
#define GRH_LEN 40

struct gsi_ah {
	__u8 dgid[16];
	__u8 sgid_index;
	__u8 traffic_class;
	__u32 handle; /* in the device's AH table; 0: slot free */
	struct rxdp_eah *eah;
	struct rxdp_path path;
	long used;
};

struct gsi_pend {
	struct gsi_peer to;
	long deadline;
	__u8 mad[CM_MAD_LEN];
	int used;
};

struct gsi {
	struct ep_tag ep; /* the CQ's notification eventfd */
	int ifindex;
	gsi_recv_fn recv; /* the CM's */
	struct rxdp_engine *e;
	struct rxdp_epd *pd;
	struct rxdp_emr *mr;
	struct rxdp_ecq *cq;
	struct rxdp_eqp *qp;
	int evfd;
	int doorbell;
	/* shared memory: the QP's header and rings, the CQ, the buffers */
	void *qmem;
	struct rxdp_hca_qp *sh;
	void *sq, *rq;
	__u32 sq_size, sq_stride, rq_size, rq_stride;
	struct rxdp_hca_cq *cqsh;
	__u32 cq_size;
	__u8 (*buf)[GSI_BUF];
	struct gsi_ah ah[GSI_AHS];
	struct gsi_pend pend[GSI_PEND];
	struct gsi_stats st;
};

static void gsi_notify(void *arg)
{
	struct gsi *g = arg;
	__u64 one = 1;

	/* data-path thread, engine lock held: only wake the control thread */
	if (write(g->evfd, &one, sizeof(one)) < 0) {
		/* the counter is non-zero already: it will wake */
	}
}

/* QP1's queues are rings like a client's, posted to the same way */
static void post_recv(struct gsi *g, __u32 i)
{
	struct rxdp_hca_ring r = { &g->sh->rq, g->rq, g->rq_size,
				   g->rq_stride };
	struct ibv_sge sge = { .addr = (uintptr_t)g->buf[i],
			       .length = GSI_BUF,
			       .lkey = rxdp_emr_lkey(g->mr) };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	/* never full: one per buffer, reposted when its MAD is read */
	rxdp_hca_post_recv(&r, 1, &wr, &bad);
}

/* The AH handle a send WR carries (wr.ud.ah: its struct gsi_ah) */
struct gsi_wr_ah {
	struct ibv_ah ah;
	__u32 handle;
};

static __u32 gsi_ah_handle(struct ibv_ah *ah)
{
	return ah ? ((struct gsi_wr_ah *)ah)->handle : 0;
}

static void ring(struct gsi *g)
{
	__u64 one = 1;

	/* always: MADs are rare, and a write to a sleeper's fd is all it is */
	if (write(g->doorbell, &one, sizeof(one)) < 0) {
		/* non-zero already */
	}
}

/* The GID of a received packet's source and destination, from its GRH */
static void grh_gids(const __u8 *grh, __u8 *sgid, __u8 *dgid, __u8 *tclass)
{
	static const __u8 v4[12] = { [10] = 0xff, [11] = 0xff };

	if ((grh[0] >> 4) == 6) {
		memcpy(sgid, grh + 8, 16);
		memcpy(dgid, grh + 24, 16);
		*tclass = (__u8)((grh[0] & 0xf) << 4 | grh[1] >> 4);
		return;
	}
	/* IPv4: its header in the last 20 bytes of the GRH area */
	memcpy(sgid, v4, 12);
	memcpy(sgid + 12, grh + 20 + 12, 4);
	memcpy(dgid, v4, 12);
	memcpy(dgid + 12, grh + 20 + 16, 4);
	*tclass = grh[20 + 1];
}

static void on_cq(struct ep_tag *ep, __u32 events)
{
	struct gsi *g = (struct gsi *)ep;
	__u64 n;
	int reposted = 0;

	if (read(g->evfd, &n, sizeof(n)) < 0) {
		/* spurious */
	}
	for (;;) {
		__u32 cons = atomic_load_explicit(&g->cqsh->cons,
						  memory_order_relaxed);
		__u32 prod = atomic_load_explicit(&g->cqsh->prod,
						  memory_order_acquire);
		struct ibv_wc wc;

		if (cons == prod) {
			/* arm, then look again: a completion may have slipped in */
			atomic_store(&g->cqsh->armed, 1);
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&g->cqsh->prod,
						 memory_order_acquire) == prod)
				break;
			continue;
		}
		wc = g->cqsh->ring[cons & (g->cq_size - 1)];
		atomic_store_explicit(&g->cqsh->cons, cons + 1,
				      memory_order_release);
		if (wc.opcode & IBV_WC_RECV) {
			__u32 i = (__u32)wc.wr_id;

			if (i >= g->rq_size)
				continue;
			if (wc.status == IBV_WC_SUCCESS &&
			    wc.byte_len >= GRH_LEN + CM_MAD_LEN) {
				struct gsi_peer from = { .qpn = wc.src_qp };

				grh_gids(g->buf[i], from.gid, from.local_gid,
					 &from.traffic_class);
				g->st.rx++;
				g->recv(g->ifindex, &from, g->buf[i] + GRH_LEN,
					wc.byte_len - GRH_LEN);
			} else if (wc.status != IBV_WC_WR_FLUSH_ERR) {
				g->st.rx_bad++;
			}
			/* the receiver may have closed nothing of ours: QP1
			 * lives until gsi_close, which is not called from
			 * there */
			post_recv(g, i);
			reposted = 1;
		} else if (wc.status != IBV_WC_SUCCESS) {
			g->st.tx_drop++;
		}
	}
	if (reposted)
		ring(g);
}

/* QP1 to RTS at once, as a device's GSI is (the engine writes its context) */
static int qp_up(struct gsi *g)
{
	struct rxdp_qp_attr a = { .qp_state = IBV_QPS_INIT,
				  .qkey = GSI_QKEY,
				  .port_num = 1 };
	char why[256];
	int ret;

	ret = rxdp_engine_qp_modify(g->qp, &a,
				    IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_QKEY,
				    NULL, 0, why, sizeof(why));
	if (!ret) {
		a.qp_state = IBV_QPS_RTR;
		ret = rxdp_engine_qp_modify(g->qp, &a, IBV_QP_STATE, NULL, 0,
					    why, sizeof(why));
	}
	if (!ret) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		ret = rxdp_engine_qp_modify(g->qp, &a,
					    IBV_QP_STATE | IBV_QP_SQ_PSN, NULL,
					    0, why, sizeof(why));
	}
	if (ret)
		pr_warn("QP1: %s\n", why);
	return ret;
}

struct gsi *gsi_open(struct rxdp_link *l, gsi_recv_fn recv, char *msg,
		     size_t msglen)
{
	struct ibv_qp_cap cap = { .max_send_wr = GSI_SQ,
				  .max_recv_wr = GSI_RQ,
				  .max_send_sge = 1,
				  .max_recv_sge = 1,
				  .max_inline_data = CM_MAD_LEN };
	struct rxdp_eqp_init init = { 0 };
	struct rxdp_hca_qp_layout lay;
	struct gsi *g;
	int ret;

	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ifindex = l->ifindex;
	g->recv = recv;
	g->evfd = g->doorbell = -1;
	g->e = uverbs_dev_engine(l, msg, msglen);
	if (!g->e)
		goto err;
	if (rxdp_engine_qp_caps(&cap)) {
		snprintf(msg, msglen, "the engine refuses QP1's queues");
		goto err;
	}
	g->sq_size = cap.max_send_wr;
	g->rq_size = cap.max_recv_wr;
	g->sq_stride = rxdp_hca_swqe_stride(1, cap.max_inline_data);
	g->rq_stride = rxdp_hca_rwqe_stride(1);
	rxdp_hca_qp_layout(g->sq_size, g->sq_stride, g->rq_size, g->rq_stride,
			   &lay);
	g->cq_size = rxdp_hca_pow2(GSI_CQ);
	if (posix_memalign(&g->qmem, RXDP_HCA_LINE, lay.bytes) ||
	    posix_memalign((void **)&g->cqsh, RXDP_HCA_LINE,
			   rxdp_hca_cq_bytes(g->cq_size))) {
		snprintf(msg, msglen, "out of memory");
		goto err;
	}
	memset(g->qmem, 0, lay.bytes);
	memset(g->cqsh, 0, rxdp_hca_cq_bytes(g->cq_size));
	g->buf = calloc(g->rq_size, GSI_BUF);
	g->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g->doorbell = rxdp_engine_doorbell(g->e);
	if (!g->buf || g->evfd < 0 || g->doorbell < 0) {
		snprintf(msg, msglen, "out of memory or file descriptors");
		goto err;
	}
	g->sh = g->qmem;
	g->sq = (char *)g->qmem + lay.sq_off;
	g->rq = (char *)g->qmem + lay.rq_off;
	g->sh->sq.size = g->sq_size;
	g->sh->sq.stride = g->sq_stride;
	g->sh->rq.size = g->rq_size;
	g->sh->rq.stride = g->rq_stride;

	/* rxdpd's own memory: a PD on this process's memory */
	g->pd = rxdp_engine_alloc_pd(g->e, NULL);
	if (g->pd)
		g->mr = rxdp_engine_reg_mr_pd(g->pd, (uintptr_t)g->buf,
					      (size_t)g->rq_size * GSI_BUF,
					      (uintptr_t)g->buf,
					      IBV_ACCESS_LOCAL_WRITE);
	if (g->mr)
		g->cq = rxdp_engine_create_cq_shared(g->e, g->cqsh, g->cq_size,
						     NULL);
	if (!g->cq) {
		snprintf(msg, msglen, "the engine refuses QP1's PD, MR or CQ");
		goto err;
	}
	init.pd = g->pd;
	init.sh = g->sh;
	init.sh_sq = g->sq;
	init.sh_rq = g->rq;
	init.qpn = GSI_QPN;
	init.qp_type = IBV_QPT_UD;
	init.send_cq = g->cq;
	init.recv_cq = g->cq;
	init.cap = cap;
	g->qp = rxdp_engine_create_qp(g->e, &init);
	if (!g->qp || qp_up(g)) {
		snprintf(msg, msglen, "the engine refuses QP1: %s",
			 strerror(errno));
		goto err;
	}
	ret = qp_create_special(l, GSI_QPN);
	if (ret) {
		snprintf(msg, msglen, "QP1's number is taken: %s",
			 strerror(-ret));
		goto err;
	}
	if (ep_watch(&g->ep, g->evfd, EPOLLIN, on_cq)) {
		snprintf(msg, msglen, "epoll: %s", strerror(errno));
		qp_destroy_special(l, GSI_QPN);
		goto err;
	}
	rxdp_engine_cq_set_notify(g->cq, gsi_notify, g);
	atomic_store(&g->cqsh->armed, 1);
	for (__u32 i = 0; i < g->rq_size; i++)
		post_recv(g, i);
	ring(g);
	return g;
err:
	gsi_close(g);
	errno = EIO;
	return NULL;
}

void gsi_close(struct gsi *g)
{
	struct rxdp_link *l;

	if (!g)
		return;
	l = link_by_index(g->ifindex);
	if (g->evfd >= 0) {
		ep_del(g->evfd, &g->ep);
		close(g->evfd);
	}
	if (g->qp) {
		if (l && l->dev)
			qp_destroy_special(l, GSI_QPN);
		rxdp_engine_destroy_qp(g->qp);
	}
	for (int i = 0; i < GSI_AHS; i++) {
		if (!g->ah[i].handle)
			continue;
		if (l)
			uverbs_sys_ah_del(l, g->ah[i].handle);
		rxdp_engine_destroy_ah(g->ah[i].eah);
	}
	if (g->cq)
		rxdp_engine_destroy_cq(g->cq);
	if (g->mr)
		rxdp_engine_dereg_mr(g->mr);
	if (g->pd)
		rxdp_engine_dealloc_pd(g->pd);
	if (g->doorbell >= 0)
		rxdp_engine_doorbell_close(g->e, g->doorbell);
	free(g->buf);
	free(g->cqsh);
	free(g->qmem);
	free(g);
}

static int gid_index(const struct rxdp_link *l, const __u8 *gid)
{
	for (int i = 1; i < RXDP_GID_TBL_LEN; i++)
		if (l->gid_used[i] && !memcmp(l->gids[i], gid, 16))
			return i;
	return l->gid_used[0] && !memcmp(l->gids[0], gid, 16) ? 0 : -1;
}

/*
 * The AH towards to: a remembered one whose path still resolves to the
 * same headers (a neighbour's MAC may change), else a new one in the
 * least recently used slot whose WQEs have all left the ring. 0 and the
 * handle, -EINPROGRESS (a neighbour is being resolved), or -errno.
 */
static int ah_get(struct gsi *g, struct rxdp_link *l, const struct gsi_peer *to,
		  long *deadline, __u32 *handle)
{
	struct rxdp_ah a = { .hop_limit = to->hop_limit,
			     .traffic_class = to->traffic_class };
	struct gsi_ah *slot = NULL;
	struct rxdp_path path;
	char why[256];
	int idx = gid_index(l, to->local_gid), ret;
	long now = now_ms();

	if (idx < 0)
		return -EADDRNOTAVAIL;
	memcpy(a.dgid, to->gid, 16);
	a.sgid_index = (__u8)idx;
	ret = path_resolve(l, &a, GSI_QPN, to->qpn, &path, deadline, why,
			   sizeof(why));
	if (ret)
		return ret;
	for (int i = 0; i < GSI_AHS; i++) {
		struct gsi_ah *h = &g->ah[i];

		if (h->handle && !memcmp(h->dgid, a.dgid, 16) &&
		    h->sgid_index == a.sgid_index &&
		    h->traffic_class == a.traffic_class &&
		    !memcmp(&h->path, &path, sizeof(path))) {
			h->used = now;
			*handle = h->handle;
			return 0;
		}
	}
	/* a slot may be reused once QP1 took every WQE into the engine (which
	 * copies the path at post time) */
	if (atomic_load(&g->sh->sq.cons) !=
	    atomic_load_explicit(&g->sh->sq.prod, memory_order_relaxed)) {
		for (int i = 0; i < GSI_AHS && !slot; i++)
			if (!g->ah[i].handle)
				slot = &g->ah[i];
	} else {
		for (int i = 0; i < GSI_AHS; i++)
			if (!slot || g->ah[i].used < slot->used)
				slot = &g->ah[i];
	}
	if (!slot)
		return -ENOBUFS;
	if (slot->handle) {
		uverbs_sys_ah_del(l, slot->handle);
		rxdp_engine_destroy_ah(slot->eah);
		slot->handle = 0;
	}
	slot->eah = rxdp_engine_create_ah(g->e, g->pd, &path);
	if (!slot->eah)
		return -ENOMEM;
	slot->handle = uverbs_sys_ah_add(l, slot->eah);
	if (!slot->handle) {
		rxdp_engine_destroy_ah(slot->eah);
		return -ENOBUFS;
	}
	memcpy(slot->dgid, a.dgid, 16);
	slot->sgid_index = a.sgid_index;
	slot->traffic_class = a.traffic_class;
	slot->path = path;
	slot->used = now;
	*handle = slot->handle;
	return 0;
}

static int post_send(struct gsi *g, __u32 ah, __u32 qpn, const void *mad)
{
	static const struct rxdp_hca_poster poster = { .ah_handle =
							       gsi_ah_handle };
	struct rxdp_hca_ring r = { &g->sh->sq, g->sq, g->sq_size,
				   g->sq_stride };
	struct rxdp_hca_qp_caps caps = { .qp_type = IBV_QPT_UD,
					 .max_send_sge = 1,
					 .max_inline = CM_MAD_LEN };
	struct gsi_wr_ah wah = { .handle = ah };
	struct ibv_sge sge = { .addr = (uintptr_t)mad, .length = CM_MAD_LEN };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE |
						IBV_SEND_SIGNALED },
			   *bad;

	wr.wr_id = atomic_load_explicit(&g->sh->sq.prod, memory_order_relaxed);
	wr.wr.ud.ah = &wah.ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = GSI_QKEY;
	if (rxdp_hca_post_send(&r, &caps, &poster, &wr, &bad))
		return -ENOBUFS;
	ring(g);
	g->st.tx++;
	return 0;
}

static int send_now(struct gsi *g, const struct gsi_peer *to, const void *mad,
		    long *deadline)
{
	struct rxdp_link *l = link_by_index(g->ifindex);
	__u32 ah;
	int ret;

	if (!l || !l->dev)
		return -ENODEV;
	ret = ah_get(g, l, to, deadline, &ah);
	if (ret)
		return ret;
	return post_send(g, ah, to->qpn ? to->qpn : GSI_QPN, mad);
}

int gsi_send(struct gsi *g, const struct gsi_peer *to, const void *mad)
{
	long deadline = 0;
	int ret = send_now(g, to, mad, &deadline);

	if (ret == -EINPROGRESS) {
		for (int i = 0; i < GSI_PEND; i++) {
			struct gsi_pend *p = &g->pend[i];

			if (p->used)
				continue;
			p->used = 1;
			p->to = *to;
			p->deadline = deadline;
			memcpy(p->mad, mad, CM_MAD_LEN);
			return 0;
		}
		ret = -ENOBUFS;
	}
	if (ret) {
		g->st.tx_drop++;
		pr_debug("QP1 of ifindex %d: a MAD is lost (%s)\n", g->ifindex,
			 strerror(-ret));
	}
	return ret;
}

void gsi_retry(struct gsi *g)
{
	for (int i = 0; i < GSI_PEND; i++) {
		struct gsi_pend *p = &g->pend[i];
		int ret;

		if (!p->used)
			continue;
		ret = send_now(g, &p->to, p->mad, &p->deadline);
		if (ret == -EINPROGRESS)
			continue;
		if (ret)
			g->st.tx_drop++;
		p->used = 0;
	}
}

void gsi_get_stats(struct gsi *g, struct gsi_stats *s)
{
	*s = g->st;
}
