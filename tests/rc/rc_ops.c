// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rc_ops: every RC operation between two processes, through nothing but the
 * verbs API of <infiniband/verbs.h>. Built against the system's libibverbs
 * and run on rxdp's by LD_LIBRARY_PATH, like any unmodified verbs program.
 *
 *   rc_ops -d DEV -g GIDX server PORT
 *   rc_ops -d DEV -g GIDX client ADDR PORT [GROUP...]
 *
 * The server is an agent: over a TCP connection the client asks it to make
 * and connect QPs, fill or check its memory, post receives and check their
 * completions (status, opcode, length, immediate data, every byte of the
 * scatter list and the guard bytes around it). The client posts the work
 * requests and checks its own completions. GROUPs (default: basic ext mw
 * errors):
 *
 *   basic   Send, Send with immediate, RDMA Write, Write with immediate,
 *           RDMA Read with sizes 0, 1, MTU-1, MTU, MTU+1, 64 KiB, 3 MiB+17,
 *           one SGE and gather/scatter lists; small sizes around 64 and
 *           96 bytes with 1-3 SGEs each side; inline data; Compare&Swap
 *           and Fetch&Add; unsignaled WRs; a fence; 64 WRs in flight;
 *           atomicity of Fetch&Add from two QPs against the server's CPU;
 *           and first the client's own verbs: ibv_rereg_mr, ibv_resize_cq,
 *           ibv_query_qp, posts and transitions it must refuse
 *   wire    basic without the client's own verbs: for a client on another
 *           RDMA stack (Soft-RoCE in tests/vm/rxe.sh), which answers those
 *           its own way; errors then leaves out the local protection
 *           errors too (Soft-RoCE's are local QP operation errors)
 *   errors  local protection (bad lkey, past the MR, another PD's MR),
 *           RNR retries exhausted, wrong R_Key, out of bounds, no remote
 *           write access, misaligned atomic; each on a fresh QP pair, the
 *           rest of the send queue flushed; then the server is killed and
 *           the next WR ends with retries exhausted, the rest flushed
 *           (must be last: the server is gone afterwards)
 *   bulk    large transfers, verified byte for byte, RXDP_RC_OPS_ROUNDS
 *           rounds (default 5), for the fault tests
 *   ext     the extended verbs (rc_ops_mw.c)
 *   mw      memory windows, one check per rule (rc_ops_mw.c)
 *
 * RXDP_RC_OPS_TIMEOUT sets the client's QPs' ACK timeout (default 14).
 *
 * Exit 0 when every check held; each failed check is printed with what
 * was expected and what came.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_ops.h"

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= r;
	}
	return 0;
}

/* --- the verbs side, common to both ends ---------------------------------- */

static const char *dev_name;
static int gid_index = -1;

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rc_ops: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Byte i of the message with this seed: every byte differs from its neighbours */
static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t)(seed + 1) * 0xc2b2ae3d27d4eb4fULL;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (uint8_t)(x >> 56);
}

void fill(uint8_t *p, uint64_t len, uint32_t seed, int pattern, uint64_t base)
{
	uint64_t i;

	if (!pattern) {
		memset(p, (int)seed, len);
		return;
	}
	for (i = 0; i < len; i++)
		p[i] = pat(seed, base + i);
}

/* -1 if p holds what fill() would write, else the first differing offset */
int64_t check(const uint8_t *p, uint64_t len, uint32_t seed, int pattern,
	      uint64_t base)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (pattern ? pat(seed, base + i) : (uint8_t)seed))
			return (int64_t)i;
	return -1;
}

/* Message bytes [0, len) spread over an SGE list, in order */
void fill_sg(uint8_t *buf, const struct sge_d *sg, int n, uint64_t len,
	     uint32_t seed)
{
	uint64_t done = 0;
	int i;

	for (i = 0; i < n && done < len; i++) {
		uint64_t k = sg[i].len < len - done ? sg[i].len : len - done;

		fill(buf + sg[i].off, k, seed, 1, done);
		done += k;
	}
}

/*
 * The first len message bytes across the SGEs, GUARD in the rest of them
 * and in GUARD_LEN bytes on either side of each. 0, or -1 with msg set.
 */
int check_sg(const uint8_t *buf, uint64_t buf_len, const struct sge_d *sg,
	     int n, uint64_t len, uint32_t seed, char *msg, size_t msz)
{
	uint64_t done = 0;
	int64_t bad;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t k = sg[i].len < len - done ? sg[i].len : len - done;
		const uint8_t *p = buf + sg[i].off;
		uint64_t lo = sg[i].off >= GUARD_LEN ? GUARD_LEN : sg[i].off;
		uint64_t hi = buf_len - (sg[i].off + sg[i].len);

		if (hi > GUARD_LEN)
			hi = GUARD_LEN;
		bad = check(p, k, seed, 1, done);
		if (bad >= 0) {
			snprintf(msg, msz,
				 "SGE %d (offset %" PRIu64
				 ", %u bytes): message "
				 "byte %" PRIu64 " is 0x%02x, expected 0x%02x",
				 i, sg[i].off, sg[i].len, done + bad, p[bad],
				 pat(seed, done + bad));
			return -1;
		}
		bad = check(p + k, sg[i].len - k, GUARD, 0, 0);
		if (bad >= 0) {
			snprintf(msg, msz,
				 "SGE %d: byte %" PRIu64 " past the message "
				 "(length %" PRIu64 ") was written (0x%02x)",
				 i, k + bad, len, p[k + bad]);
			return -1;
		}
		if (check(p - lo, lo, GUARD, 0, 0) >= 0 ||
		    check(p + sg[i].len, hi, GUARD, 0, 0) >= 0) {
			snprintf(msg, msz,
				 "SGE %d: a guard byte around it was "
				 "written",
				 i);
			return -1;
		}
		done += k;
	}
	if (done < len) {
		snprintf(msg, msz, "SGEs hold %" PRIu64 " of %" PRIu64 " bytes",
			 done, len);
		return -1;
	}
	return 0;
}

static void host_open(struct host *h)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!dev_name ||
		    !strcmp(ibv_get_device_name(list[i]), dev_name))
			break;
	if (i == n)
		die("no device %s", dev_name ? dev_name : "at all");
	h->ctx = ibv_open_device(list[i]);
	if (!h->ctx)
		die("ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	if (ibv_query_port(h->ctx, 1, &pa))
		die("ibv_query_port failed");
	h->mtu = pa.active_mtu;
	h->mtu_bytes = 128u << pa.active_mtu;
	h->gidx = gid_index;
	if (ibv_query_gid(h->ctx, 1, h->gidx, &h->gid))
		die("ibv_query_gid %d failed", h->gidx);
	h->pd = ibv_alloc_pd(h->ctx);
	if (!h->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	h->buf = aligned_alloc(4096, BUF_LEN);
	h->ro = aligned_alloc(4096, RO_LEN);
	if (!h->buf || !h->ro)
		die("out of memory");
	memset(h->buf, GUARD, BUF_LEN);
	memset(h->ro, GUARD, RO_LEN);
	h->mr = ibv_reg_mr(h->pd, h->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	if (!h->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	/* readable, not writable, from the peer */
	h->ro_mr = ibv_reg_mr(h->pd, h->ro, RO_LEN, IBV_ACCESS_REMOTE_READ);
	if (!h->ro_mr)
		die("ibv_reg_mr (read only): %s", strerror(errno));
}

static void host_close(struct host *h)
{
	int i;

	for (i = 0; i < MAX_QP; i++)
		if (h->c[i].qp)
			die("QP %d still exists at close", i);
	if (ibv_dereg_mr(h->mr) || ibv_dereg_mr(h->ro_mr))
		die("ibv_dereg_mr failed");
	if (ibv_dealloc_pd(h->pd))
		die("ibv_dealloc_pd failed");
	if (ibv_close_device(h->ctx))
		die("ibv_close_device failed");
	free(h->buf);
	free(h->ro);
}

/* A QP (RC, its own CQs) in INIT; 0 or an errno */
static int conn_create(struct host *h, int i, const struct qp_params *p)
{
	struct conn *c = &h->c[i];
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	int ret;

	if (c->qp)
		return EEXIST;
	if (p->ex) {
		/* extended CQs: the timestamps are checked in rc_ops_mw.c */
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 2 * QP_WR,
			.wc_flags = IBV_WC_STANDARD_FLAGS |
				    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		};

		c->scq_ex = ibv_create_cq_ex(h->ctx, &ca);
		c->scq = c->scq_ex ? ibv_cq_ex_to_cq(c->scq_ex) : NULL;
		c->rcq_ex = ibv_create_cq_ex(h->ctx, &ca);
		c->rcq = c->rcq_ex ? ibv_cq_ex_to_cq(c->rcq_ex) : NULL;
	} else {
		c->scq = ibv_create_cq(h->ctx, 2 * QP_WR, NULL, NULL, 0);
		c->rcq = ibv_create_cq(h->ctx, 2 * QP_WR, NULL, NULL, 0);
	}
	if (!c->scq || !c->rcq)
		return errno;
	if (p->srq_ex) {
		/* a CQ in the mask takes it past ibv_create_srq's shortcut */
		struct ibv_srq_init_attr_ex sa = {
			.attr = { .max_wr = QP_WR, .max_sge = MAX_SG },
			.comp_mask = IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_TYPE |
				     IBV_SRQ_INIT_ATTR_CQ,
			.srq_type = IBV_SRQT_BASIC,
			.pd = h->pd,
			.cq = c->rcq,
		};

		c->srq = ibv_create_srq_ex(h->ctx, &sa);
		if (!c->srq)
			return errno;
	}
	ia.send_cq = c->scq;
	ia.recv_cq = c->rcq;
	ia.srq = c->srq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = p->sq_sig_all;
	ia.cap.max_send_wr = QP_WR;
	ia.cap.max_recv_wr = QP_WR;
	ia.cap.max_send_sge = MAX_SG;
	ia.cap.max_recv_sge = MAX_SG;
	ia.cap.max_inline_data = 64;
	if (p->ex) {
		struct ibv_qp_init_attr_ex ix = { 0 };

		memcpy(&ix, &ia, sizeof(ia));
		ix.comp_mask = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ix.pd = h->pd;
		ix.send_ops_flags =
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_SEND_WITH_INV |
			IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
			IBV_QP_EX_WITH_ATOMIC_WRITE | RXDP_QP_EX_WITH_FLUSH;
		c->qp = ibv_create_qp_ex(h->ctx, &ix);
		if (c->qp)
			ia.cap = ix.cap;
		c->qx = c->qp ? ibv_qp_to_qp_ex(c->qp) : NULL;
		if (c->qp && !c->qx)
			return EOPNOTSUPP;
	} else {
		c->qp = ibv_create_qp(h->pd, &ia);
	}
	if (!c->qp)
		return errno;
	h->max_inline = ia.cap.max_inline_data;
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	/* the extended QPs (rxdp's only: Soft-RoCE 6.1 has no Flush) */
	if (p->ex)
		a.qp_access_flags |= RXDP_ACCESS_FLUSH_GLOBAL;
	ret = ibv_modify_qp(c->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	c->info.qpn = c->qp->qp_num;
	c->info.psn = (uint32_t)random() & 0xffffff;
	memcpy(c->info.gid, h->gid.raw, 16);
	return 0;
}

/* INIT -> RTR -> RTS towards peer; 0 or an errno */
static int conn_connect(struct host *h, int i, const struct qp_info *peer,
			const struct qp_params *p)
{
	struct conn *c = &h->c[i];
	struct ibv_qp_attr a = { 0 };
	int ret;

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = h->mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = h->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(c->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.sq_psn = c->info.psn;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(c->qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

static int conn_destroy(struct host *h, int i)
{
	struct conn *c = &h->c[i];
	int ret = 0;

	if (c->qp && (ret = ibv_destroy_qp(c->qp)))
		return ret;
	if (c->scq && (ret = ibv_destroy_cq(c->scq)))
		return ret;
	if (c->rcq && (ret = ibv_destroy_cq(c->rcq)))
		return ret;
	if (c->srq && (ret = ibv_destroy_srq(c->srq)))
		return ret;
	memset(c, 0, sizeof(*c));
	return 0;
}

static enum ibv_qp_state conn_state(struct host *h, int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(h->c[i].qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state) - 1;
	return a.qp_state;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* n completions within ms; how many came (or -1 on a poll error) */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	uint64_t end = now_ms() + ms;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return -1;
		got += r;
		if (!r) {
			if (now_ms() > end)
				break;
			sched_yield();
		}
	}
	return got;
}

int poll_n_ex(struct ibv_cq_ex *cq, struct ibv_wc *wc, int n, int ms)
{
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t end = now_ms() + ms;
	int got = 0, r;

	while (got < n) {
		r = ibv_start_poll(cq, &attr);
		if (r == ENOENT) {
			if (now_ms() > end)
				break;
			sched_yield();
			continue;
		}
		if (r)
			return -1;
		do {
			struct ibv_wc *w = &wc[got++];

			memset(w, 0, sizeof(*w));
			w->wr_id = cq->wr_id;
			w->status = cq->status;
			w->opcode = ibv_wc_read_opcode(cq);
			w->vendor_err = ibv_wc_read_vendor_err(cq);
			w->byte_len = ibv_wc_read_byte_len(cq);
			w->qp_num = ibv_wc_read_qp_num(cq);
			w->src_qp = ibv_wc_read_src_qp(cq);
			w->wc_flags = ibv_wc_read_wc_flags(cq);
			if (w->wc_flags & IBV_WC_WITH_IMM)
				w->imm_data = ibv_wc_read_imm_data(cq);
			else if (w->wc_flags & IBV_WC_WITH_INV)
				w->invalidated_rkey =
					ibv_wc_read_invalidated_rkey(cq);
		} while (got < n && !ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

/* --- the server (agent) --------------------------------------------------- */

struct host srv;
static pthread_t add_thread;
static uint64_t add_off, add_count;
static int add_stop;

/* The server's CPU adds 1 to the same word until told to stop */
static void *add_main(void *arg)
{
	uint64_t *p = (uint64_t *)(srv.buf + add_off);

	add_count = 0;
	while (!__atomic_load_n(&add_stop, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);
		add_count++;
	}
	return NULL;
}

static int in_buf(uint64_t off, uint64_t len)
{
	return off <= BUF_LEN && len <= BUF_LEN - off;
}

static void serve_one(const struct req *q, struct rep *r)
{
	struct conn *c = q->qp < MAX_QP ? &srv.c[q->qp] : NULL;
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge[MAX_SG];
	struct ibv_wc wc;
	int64_t off;
	uint32_t i;
	int ret;

	if (!c) {
		r->status = EINVAL;
		return;
	}
	switch (q->cmd) {
	case C_HELLO:
		r->rkey = srv.mr->rkey;
		r->addr = (uintptr_t)srv.buf;
		r->len = BUF_LEN;
		r->ro_rkey = srv.ro_mr->rkey;
		r->ro_addr = (uintptr_t)srv.ro;
		r->mtu = srv.mtu_bytes;
		memcpy(r->info.gid, srv.gid.raw, 16);
		break;
	case C_QP_CREATE:
		r->status = conn_create(&srv, q->qp, &q->p);
		r->info = c->info;
		break;
	case C_QP_CONNECT:
		r->status = conn_connect(&srv, q->qp, &q->peer, &q->p);
		break;
	case C_QP_DESTROY:
		r->status = conn_destroy(&srv, q->qp);
		break;
	case C_QP_STATE:
		r->val = conn_state(&srv, q->qp);
		break;
	case C_FILL:
		if (!in_buf(q->off, q->len)) {
			r->status = EINVAL;
			break;
		}
		fill(srv.buf + q->off, q->len, q->seed, q->pattern, 0);
		break;
	case C_VERIFY:
		if (!in_buf(q->off, q->len)) {
			r->status = EINVAL;
			break;
		}
		off = check(srv.buf + q->off, q->len, q->seed, q->pattern, 0);
		if (off >= 0) {
			r->status = EIO;
			snprintf(r->msg, sizeof(r->msg),
				 "server memory at %" PRIu64 " (+%" PRId64
				 " of %" PRIu64 "): 0x%02x, expected 0x%02x",
				 q->off, off, q->len, srv.buf[q->off + off],
				 q->pattern ? pat(q->seed, off)
					    : (uint8_t)q->seed);
		}
		break;
	case C_POST_RECV:
		if (q->nsge > MAX_SG) {
			r->status = EINVAL;
			break;
		}
		for (i = 0; i < q->nsge; i++) {
			if (!in_buf(q->sge[i].off, q->sge[i].len)) {
				r->status = EINVAL;
				return;
			}
			sge[i].addr = (uintptr_t)srv.buf + q->sge[i].off;
			sge[i].length = q->sge[i].len;
			sge[i].lkey = srv.mr->lkey;
		}
		wr.wr_id = q->wr_id;
		wr.sg_list = sge;
		wr.num_sge = (int)q->nsge;
		r->status = c->srq ? ibv_post_srq_recv(c->srq, &wr, &bad)
				   : ibv_post_recv(c->qp, &wr, &bad);
		if (r->status)
			snprintf(r->msg, sizeof(r->msg), "ibv_post_recv: %s",
				 strerror(r->status));
		break;
	case C_POLL_RECV:
		/*
		 * through ibv_start_poll when it is an extended CQ: small
		 * receives' bytes reach their buffers that way too
		 */
		ret = c->rcq_ex ? poll_n_ex(c->rcq_ex, &wc, 1, POLL_MS)
				: poll_n(c->rcq, &wc, 1, POLL_MS);
		if (ret != 1) {
			r->status = ETIMEDOUT;
			snprintf(r->msg, sizeof(r->msg),
				 "no receive completion in %d ms", POLL_MS);
			break;
		}
		r->val = wc.status;
		if (wc.status != q->status || wc.wr_id != q->wr_id ||
		    wc.qp_num != c->qp->qp_num) {
			r->status = EIO;
			snprintf(r->msg, sizeof(r->msg),
				 "receive WC: status %s wr_id %" PRIu64
				 " qp 0x%x, expected %s %" PRIu64 " 0x%x",
				 ibv_wc_status_str(wc.status), wc.wr_id,
				 wc.qp_num,
				 ibv_wc_status_str(
					 (enum ibv_wc_status)q->status),
				 q->wr_id, c->qp->qp_num);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS)
			break;
		if (wc.vendor_err) {
			r->status = EIO;
			snprintf(r->msg, sizeof(r->msg),
				 "receive WC: vendor_err %#x on a success",
				 wc.vendor_err);
			break;
		}
		if (!!(wc.wc_flags & IBV_WC_WITH_INV) != !!q->inv ||
		    (q->inv && wc.invalidated_rkey != q->inv)) {
			r->status = EIO;
			snprintf(r->msg, sizeof(r->msg),
				 "receive WC: %s R_Key %#x invalidated, "
				 "expected %#x",
				 wc.wc_flags & IBV_WC_WITH_INV ? "an" : "no",
				 wc.invalidated_rkey, q->inv);
			break;
		}
		if (wc.opcode != q->opcode || wc.byte_len != q->byte_len ||
		    !!(wc.wc_flags & IBV_WC_WITH_IMM) != !!q->imm_flag ||
		    (q->imm_flag && wc.imm_data != q->imm)) {
			r->status = EIO;
			snprintf(r->msg, sizeof(r->msg),
				 "receive WC: opcode %d byte_len %u imm %s 0x%x"
				 ", expected opcode %u byte_len %u imm %s 0x%x",
				 wc.opcode, wc.byte_len,
				 wc.wc_flags & IBV_WC_WITH_IMM ? "yes" : "no",
				 ntohl(wc.imm_data), q->opcode, q->byte_len,
				 q->imm_flag ? "yes" : "no", ntohl(q->imm));
			break;
		}
		if (check_sg(srv.buf, BUF_LEN, q->sge, (int)q->nsge, q->len,
			     q->seed, r->msg, sizeof(r->msg)))
			r->status = EIO;
		break;
	case C_GET64:
		if (!in_buf(q->off, 8)) {
			r->status = EINVAL;
			break;
		}
		r->val = __atomic_load_n((uint64_t *)(srv.buf + q->off),
					 __ATOMIC_SEQ_CST);
		break;
	case C_SET64:
		if (!in_buf(q->off, 8)) {
			r->status = EINVAL;
			break;
		}
		__atomic_store_n((uint64_t *)(srv.buf + q->off), q->val,
				 __ATOMIC_SEQ_CST);
		break;
	case C_ADD_START:
		if (!in_buf(q->off, 8) || q->off % 8) {
			r->status = EINVAL;
			break;
		}
		add_off = q->off;
		add_stop = 0;
		r->status = pthread_create(&add_thread, NULL, add_main, NULL);
		break;
	case C_ADD_JOIN:
		__atomic_store_n(&add_stop, 1, __ATOMIC_RELAXED);
		r->status = pthread_join(add_thread, NULL);
		r->val = add_count;
		break;
	case C_DIE:
		/* the peer disappears without a word: no destroy, no close */
		kill(getpid(), SIGKILL);
		break;
	default:
		serve_mw(q, r);
	}
}

static int server(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int ls, fd, one = 1, i;
	struct req q;
	struct rep r;

	sa.sin_port = htons((uint16_t)atoi(port));
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen on port %s: %s", port, strerror(errno));
	host_open(&srv);
	printf("rc_ops server: %s, MTU %u, listening on %s\n",
	       ibv_get_device_name(srv.ctx->device), srv.mtu_bytes, port);
	fflush(stdout);
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(ls);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (read_all(fd, &q, sizeof(q)) == 0) {
		memset(&r, 0, sizeof(r));
		if (q.cmd == C_BYE)
			break;
		serve_one(&q, &r);
		if (write_all(fd, &r, sizeof(r)))
			die("client gone");
	}
	for (i = 0; i < MAX_QP; i++)
		if (conn_destroy(&srv, i))
			die("destroying QP %d failed", i);
	serve_mw_close();
	host_close(&srv);
	printf("rc_ops server: done\n");
	return 0;
}

/* --- the client ----------------------------------------------------------- */

struct host cli;
int sock;
struct rep hello;
int checks, failures;
static struct qp_info peer0; /* the server's QP 0 */
uint32_t seed_next = 1;

struct rep rpc(struct req *q)
{
	struct rep r;

	if (write_all(sock, q, sizeof(*q)) || read_all(sock, &r, sizeof(r)))
		die("server gone (command %u)", q->cmd);
	return r;
}

/* A command that must succeed */
int rpc_ok(struct req *q, const char *what)
{
	struct rep r = rpc(q);

	CHECK(r.status == 0, "%s: %s %s", what, strerror(r.status), r.msg);
	return r.status;
}

/* timeout: RXDP_RC_OPS_TIMEOUT overrides it (a slow emulated guest) */
struct qp_params default_params = {
	.sq_sig_all = 0,
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 1,
};

/* QP i on both sides, connected; 0 or -1 */
int pair_up(int i, const struct qp_params *p)
{
	struct req q = { .cmd = C_QP_CREATE, .qp = i, .p = *p };
	struct rep r;
	int ret;

	r = rpc(&q);
	CHECK(r.status == 0, "server QP %d: %s", i, strerror(r.status));
	ret = conn_create(&cli, i, p);
	CHECK(ret == 0, "client QP %d: %s", i, strerror(ret));
	if (r.status || ret)
		return -1;
	if (i == 0)
		peer0 = r.info;
	ret = conn_connect(&cli, i, &r.info, p);
	CHECK(ret == 0, "client QP %d to RTS: %s", i, strerror(ret));
	q.cmd = C_QP_CONNECT;
	q.peer = cli.c[i].info;
	r = rpc(&q);
	CHECK(r.status == 0, "server QP %d to RTS: %s", i, strerror(r.status));
	return ret || r.status ? -1 : 0;
}

void pair_down(int i)
{
	struct req q = { .cmd = C_QP_DESTROY, .qp = i };
	int ret;

	ret = conn_destroy(&cli, i);
	CHECK(ret == 0, "destroy client QP %d: %s", i, strerror(ret));
	rpc_ok(&q, "destroy server QP");
}

int post(int i, enum ibv_wr_opcode op, const struct sge_d *sg, int n, int flags,
	 uint64_t wr_id, uint64_t raddr, uint32_t rkey, uint64_t add_or_cmp,
	 uint64_t swap, uint32_t imm)
{
	struct ibv_sge sge[MAX_SG];
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	int k, ret;

	for (k = 0; k < n; k++) {
		sge[k].addr = (uintptr_t)cli.buf + sg[k].off;
		sge[k].length = sg[k].len;
		sge[k].lkey = cli.mr->lkey;
	}
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = n;
	wr.opcode = op;
	wr.send_flags = (unsigned int)flags;
	wr.imm_data = imm;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add_or_cmp;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = ibv_post_send(cli.c[i].qp, &wr, &bad);
	CHECK(ret == 0, "ibv_post_send opcode %d: %s", op, strerror(ret));
	if (ret)
		CHECK(bad == &wr, "bad_wr not set to the rejected WR");
	return ret;
}

/* One send completion: SUCCESS, this wr_id and opcode */
int send_done(int i, uint64_t wr_id, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;
	int n = poll_n(cli.c[i].scq, &wc, 1, POLL_MS);

	CHECK(n == 1, "%s: no send completion", what);
	if (n != 1)
		return -1;
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
		      wc.opcode == op && wc.qp_num == cli.c[i].qp->qp_num,
	      "%s: send WC %s wr_id %" PRIu64 " opcode %d, expected success "
	      "%" PRIu64 " %d",
	      what, ibv_wc_status_str(wc.status), wc.wr_id, wc.opcode, wr_id,
	      op);
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/*
 * An SGE list for len bytes at base: one SGE, or (nsg > 1) up to nsg
 * uneven pieces with gaps between them. cap_extra: room past len in the
 * last piece (receives).
 */
int layout(struct sge_d *sg, uint64_t base, uint64_t len, int nsg,
	   uint32_t cap_extra)
{
	uint64_t left = len + cap_extra, off = base;
	int n = 0;

	if (nsg <= 1 || left < 3) {
		if (!left)
			return 0;
		sg[0].off = base;
		sg[0].len = (uint32_t)left;
		return 1;
	}
	while (left && n < nsg) {
		uint64_t k = n == nsg - 1 ? left
					  : left / (uint64_t)(nsg - n + 1) + n;

		if (k > left)
			k = left;
		if (!k)
			k = 1;
		sg[n].off = off;
		sg[n].len = (uint32_t)k;
		off += k + GUARD_LEN + 7 +
		       (uint64_t)n; /* gaps, odd alignment */
		left -= k;
		n++;
	}
	return n;
}

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
		return "SEND";
	case IBV_WR_SEND_WITH_IMM:
		return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ:
		return "RDMA_READ";
	default:
		return "?";
	}
}

static uint64_t span(const struct sge_d *sg, int n)
{
	return n ? sg[n - 1].off + sg[n - 1].len - sg[0].off : 0;
}

/*
 * One message of len bytes with opcode op on QP i, gathered from gsg SGEs
 * and (Send) scattered into ssg SGEs, checked at both ends.
 */
static void one_op(int i, enum ibv_wr_opcode op, uint64_t len, int gsg, int ssg,
		   int flags)
{
	struct sge_d g[MAX_SG], s[MAX_SG];
	int ng, ns = 0, recv = 0, failed0 = failures;
	uint32_t seed = seed_next++;
	uint32_t imm = htonl(0xc0de0000u | seed);
	uint64_t wr_id = 1000 + seed, raddr = hello.addr + R_DST;
	struct req q = { .qp = i };
	char what[96];
	struct rep r;

	snprintf(what, sizeof(what), "%s %" PRIu64 " bytes, %d/%d SGEs%s",
		 op_name(op), len, gsg, ssg,
		 flags & IBV_SEND_INLINE ? ", inline" : "");
	ng = layout(g, L_SRC, len, len ? gsg : 0, 0);
	memset(cli.buf + L_SRC - GUARD_LEN, GUARD, span(g, ng) + 2 * GUARD_LEN);

	/* the server's side: guards around the target, a receive */
	if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM) {
		ns = layout(s, R_DST, len, ssg, 29);
		recv = 1;
	} else if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		recv = 1; /* a receive WQE with no SGE takes the immediate */
	}
	q.cmd = C_FILL;
	q.off = R_DST - GUARD_LEN;
	q.len = (ns ? span(s, ns) : len) + 2 * GUARD_LEN + 64;
	q.seed = GUARD;
	q.pattern = 0;
	if (op == IBV_WR_RDMA_READ) {
		/* the source: the message itself, guards to the left */
		rpc_ok(&q, "fill");
		q.off = R_DST;
		q.len = len;
		q.seed = seed;
		q.pattern = 1;
	}
	rpc_ok(&q, "fill");
	if (recv) {
		q.cmd = C_POST_RECV;
		q.wr_id = wr_id;
		q.nsge = (uint32_t)ns;
		memcpy(q.sge, s, sizeof(s));
		rpc_ok(&q, "post receive");
	}

	if (op != IBV_WR_RDMA_READ)
		fill_sg(cli.buf, g, ng, len, seed);
	if (post(i, op, g, ng, flags | IBV_SEND_SIGNALED, wr_id, raddr,
		 hello.rkey, 0, 0, imm))
		goto out;
	if (flags & IBV_SEND_INLINE) /* the data was taken at post time */
		memset(cli.buf + L_SRC, 0, span(g, ng));
	send_done(i, wr_id,
		  op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND
		  : op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
					   : IBV_WC_RDMA_WRITE,
		  what);

	if (recv) {
		q.cmd = C_POLL_RECV;
		q.wr_id = wr_id;
		q.status = IBV_WC_SUCCESS;
		q.opcode = op == IBV_WR_RDMA_WRITE_WITH_IMM
				   ? IBV_WC_RECV_RDMA_WITH_IMM
				   : IBV_WC_RECV;
		q.byte_len = (uint32_t)len;
		q.imm_flag = op != IBV_WR_SEND;
		q.imm = imm;
		q.len = op == IBV_WR_RDMA_WRITE_WITH_IMM ? 0 : len;
		q.seed = seed;
		r = rpc(&q);
		CHECK(r.status == 0, "%s: %s", what, r.msg);
	}
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		srv_verify(R_DST, len, seed, what);
	if (op == IBV_WR_RDMA_READ) {
		char msg[240];

		CHECK(check_sg(cli.buf, BUF_LEN, g, ng, len, seed, msg,
			       sizeof(msg)) == 0,
		      "%s: %s", what, msg);
	}
out:
	printf("%s %s\n", failures == failed0 ? "ok" : "FAIL", what);
}

static void test_ops(void)
{
	const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND,	   IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ,
	};
	const uint64_t mtu = hello.mtu;
	const uint64_t sizes[] = { 0,	    1,	   mtu - 1,	mtu,
				   mtu + 1, 65536, 3 * MIB + 17 };
	unsigned int o, s;

	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			one_op(0, ops[o], sizes[s], 1, 1, 0);
			if (sizes[s] > 1)
				one_op(0, ops[o], sizes[s], 3, 4, 0);
		}
	/*
	 * Small messages around what rxdp's library gathers into the WQE
	 * (64 bytes) and what a receive's CQE carries to be scattered by
	 * ibv_poll_cq (96 bytes, in one or two pieces): every byte and the
	 * guards around the buffers checked as for the others.
	 */
	const uint64_t small[] = { 2, 13, 40, 64, 65, 96, 97 };
	const int small_sg[][2] = { { 1, 1 }, { 3, 2 }, { 2, 3 } };

	for (o = 0; o < 4; o++)
		for (s = 0; s < sizeof(small) / sizeof(small[0]); s++)
			for (unsigned int k = 0; k < 3; k++)
				one_op(0, ops[o], small[s], small_sg[k][0],
				       small_sg[k][1], 0);
	/* inline: the source may change right after the post */
	const uint32_t isz[] = { 1, 13, cli.max_inline };

	for (s = 0; s < sizeof(isz) / sizeof(isz[0]); s++) {
		if (isz[s] > cli.max_inline || (s && isz[s] <= isz[s - 1]))
			continue;
		one_op(0, IBV_WR_SEND, isz[s], 2, 1, IBV_SEND_INLINE);
		one_op(0, IBV_WR_RDMA_WRITE_WITH_IMM, isz[s], 1, 0,
		       IBV_SEND_INLINE);
	}
}

void srv_verify(uint64_t off, uint64_t len, uint32_t seed, const char *what)
{
	struct req q = { .cmd = C_VERIFY,
			 .off = off,
			 .len = len,
			 .seed = seed,
			 .pattern = 1 };
	struct rep r = rpc(&q);

	CHECK(r.status == 0, "%s: %s", what, r.msg);
	q.off = off - GUARD_LEN;
	q.len = GUARD_LEN;
	q.seed = GUARD;
	q.pattern = 0;
	r = rpc(&q);
	CHECK(r.status == 0, "%s: before the target: %s", what, r.msg);
	q.off = off + len;
	r = rpc(&q);
	CHECK(r.status == 0, "%s: after the target: %s", what, r.msg);
}

uint64_t srv_get64(uint64_t off)
{
	struct req q = { .cmd = C_GET64, .off = off };

	return rpc(&q).val;
}

void srv_set64(uint64_t off, uint64_t v)
{
	struct req q = { .cmd = C_SET64, .off = off, .val = v };

	rpc_ok(&q, "set64");
}

/* One atomic on QP 0; the value it returned */
static uint64_t atomic1(enum ibv_wr_opcode op, uint64_t cmp_add, uint64_t swap)
{
	struct sge_d g = { .off = L_SRC + 5, .len = 8 }; /* 8-byte aligned */
	uint64_t v;

	memset(cli.buf + g.off, 0x77, 8);
	if (post(0, op, &g, 1, IBV_SEND_SIGNALED, 77, hello.addr + R_ATOMIC,
		 hello.rkey, cmp_add, swap, 0) ||
	    send_done(0, 77,
		      op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD
							: IBV_WC_COMP_SWAP,
		      "atomic"))
		return ~0ULL;
	memcpy(&v, cli.buf + g.off, 8);
	return v;
}

static void test_atomics(void)
{
	int f0 = failures;
	uint64_t v;

	srv_set64(R_ATOMIC, 100);
	v = atomic1(IBV_WR_ATOMIC_FETCH_AND_ADD, 23, 0);
	CHECK(v == 100, "Fetch&Add returned %" PRIu64 ", expected 100", v);
	v = srv_get64(R_ATOMIC);
	CHECK(v == 123, "after Fetch&Add: %" PRIu64 ", expected 123", v);
	v = atomic1(IBV_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)-3, 0);
	CHECK(v == 123 && srv_get64(R_ATOMIC) == 120,
	      "Fetch&Add of -3: returned %" PRIu64, v);
	v = atomic1(IBV_WR_ATOMIC_CMP_AND_SWP, 120, 0x1122334455667788ULL);
	CHECK(v == 120, "Compare&Swap (equal) returned %" PRIu64, v);
	v = srv_get64(R_ATOMIC);
	CHECK(v == 0x1122334455667788ULL,
	      "after Compare&Swap (equal): 0x%" PRIx64, v);
	v = atomic1(IBV_WR_ATOMIC_CMP_AND_SWP, 5, 6);
	CHECK(v == 0x1122334455667788ULL,
	      "Compare&Swap (not equal) returned 0x%" PRIx64, v);
	v = srv_get64(R_ATOMIC);
	CHECK(v == 0x1122334455667788ULL,
	      "after Compare&Swap (not equal): 0x%" PRIx64 " (changed)", v);
	printf("%s Compare&Swap, Fetch&Add\n", failures == f0 ? "ok" : "FAIL");
}

/* Unsignaled WRs complete silently; the signaled one after them reports */
static void test_unsignaled(void)
{
	struct sge_d g = { .off = L_SRC, .len = 300 };
	struct ibv_wc wc[4];
	int k, n, f0 = failures;
	struct req q = {
		.cmd = C_FILL, .off = R_DST, .len = 9 * 300, .seed = GUARD
	};

	rpc_ok(&q, "fill");
	fill(cli.buf + L_SRC, 300, 4242, 1, 0);
	for (k = 0; k < 9; k++)
		post(0, IBV_WR_RDMA_WRITE, &g, 1,
		     k == 8 ? IBV_SEND_SIGNALED : 0, 500 + k,
		     hello.addr + R_DST + 300 * k, hello.rkey, 0, 0, 0);
	n = poll_n(cli.c[0].scq, wc, 1, POLL_MS);
	CHECK(n == 1 && wc[0].wr_id == 508 && wc[0].status == IBV_WC_SUCCESS,
	      "the signaled WR after 8 unsignaled: %d WCs, wr_id %" PRIu64, n,
	      n ? wc[0].wr_id : 0);
	n = poll_n(cli.c[0].scq, wc, 4, 100);
	CHECK(n == 0, "%d completions for unsignaled WRs", n);
	for (k = 0; k < 9; k++) {
		struct rep r;

		q.cmd = C_VERIFY;
		q.off = R_DST + 300 * k;
		q.len = 300;
		q.seed = 4242;
		q.pattern = 1;
		r = rpc(&q);
		CHECK(r.status == 0, "unsignaled write %d: %s", k, r.msg);
	}
	printf("%s unsignaled WRs\n", failures == f0 ? "ok" : "FAIL");
}

/* A fenced Send after a Read carries what the Read brought (IBTA 10.8.3.3) */
static void test_fence(void)
{
	struct sge_d g = { .off = L_SRC, .len = 5000 };
	struct sge_d s = { .off = R_DST, .len = 5000 };
	struct req q = { .cmd = C_FILL,
			 .off = R_DST + MIB,
			 .len = 5000,
			 .seed = 777,
			 .pattern = 1 };
	struct rep r;
	int f0 = failures;

	rpc_ok(&q, "fill");
	q.cmd = C_FILL;
	q.off = R_DST - GUARD_LEN;
	q.len = 5000 + 2 * GUARD_LEN;
	q.seed = GUARD;
	q.pattern = 0;
	rpc_ok(&q, "fill");
	q.cmd = C_POST_RECV;
	q.wr_id = 31;
	q.nsge = 1;
	q.sge[0] = s;
	rpc_ok(&q, "post receive");
	memset(cli.buf + L_SRC, 0, 5000);
	post(0, IBV_WR_RDMA_READ, &g, 1, 0, 30, hello.addr + R_DST + MIB,
	     hello.rkey, 0, 0, 0);
	post(0, IBV_WR_SEND, &g, 1, IBV_SEND_FENCE | IBV_SEND_SIGNALED, 31, 0,
	     0, 0, 0, 0);
	send_done(0, 31, IBV_WC_SEND, "fenced send");
	q.cmd = C_POLL_RECV;
	q.status = IBV_WC_SUCCESS;
	q.opcode = IBV_WC_RECV;
	q.byte_len = 5000;
	q.imm_flag = 0;
	q.len = 5000;
	q.seed = 777;
	r = rpc(&q);
	CHECK(r.status == 0, "fenced send: %s", r.msg);
	printf("%s fence: a Send after a Read carries the data read\n",
	       failures == f0 ? "ok" : "FAIL");
}

/* 64 Sends in flight at once, completed in order, received in order */
static void test_window(void)
{
	enum {
		N = 64,
		SZ = 3000
	};
	struct ibv_wc wc[N];
	struct req q = { .cmd = C_FILL,
			 .off = R_DST - GUARD_LEN,
			 .len = N * (SZ + 64) + GUARD_LEN,
			 .seed = GUARD };
	int k, n, f0 = failures, in_order = 1;

	rpc_ok(&q, "fill");
	for (k = 0; k < N; k++) {
		q.cmd = C_POST_RECV;
		q.wr_id = 2000 + k;
		q.nsge = 1;
		q.sge[0].off = R_DST + (uint64_t)k * (SZ + 64);
		q.sge[0].len = SZ;
		rpc_ok(&q, "post receive");
	}
	for (k = 0; k < N; k++) {
		struct sge_d g = { .off = L_SRC + (uint64_t)k * SZ, .len = SZ };

		fill(cli.buf + g.off, SZ, 3000 + k, 1, 0);
		post(0, IBV_WR_SEND, &g, 1, IBV_SEND_SIGNALED, 2000 + k, 0, 0,
		     0, 0, 0);
	}
	n = poll_n(cli.c[0].scq, wc, N, POLL_MS);
	CHECK(n == N, "%d of %d send completions", n, N);
	for (k = 0; k < n; k++)
		if (wc[k].wr_id != 2000u + k || wc[k].status != IBV_WC_SUCCESS)
			in_order = 0;
	CHECK(in_order, "send completions out of order or failed");
	for (k = 0; k < N; k++) {
		struct rep r;

		q.cmd = C_POLL_RECV;
		q.wr_id = 2000 + k;
		q.status = IBV_WC_SUCCESS;
		q.opcode = IBV_WC_RECV;
		q.byte_len = SZ;
		q.imm_flag = 0;
		q.len = SZ;
		q.seed = 3000 + k;
		q.nsge = 1;
		q.sge[0].off = R_DST + (uint64_t)k * (SZ + 64);
		q.sge[0].len = SZ;
		r = rpc(&q);
		CHECK(r.status == 0, "windowed receive %d: %s", k, r.msg);
	}
	printf("%s %d sends in flight, in order\n",
	       failures == f0 ? "ok" : "FAIL", N);
}

/* --- atomicity: two QPs' Fetch&Add against the server CPU's own ----------- */

#define ADD_N 1000
#define ADD_DEPTH 8

struct adder {
	int qp;
	uint64_t olds[ADD_N];
	int done, err;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;
	struct conn *c = &cli.c[a->qp];
	int posted = 0, k;

	while (a->done < ADD_N && !a->err) {
		while (posted < ADD_N && posted - a->done < ADD_DEPTH) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)cli.buf + 8 * MIB +
					(uint64_t)a->qp * 64 * 1024 +
					8 * (uint64_t)posted,
				.length = 8,
				.lkey = cli.mr->lkey,
			};
			struct ibv_send_wr wr = { 0 }, *bad;

			wr.wr_id = (uint64_t)posted;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.atomic.remote_addr = hello.addr + R_ATOMIC;
			wr.wr.atomic.rkey = hello.rkey;
			wr.wr.atomic.compare_add = 1;
			if (ibv_post_send(c->qp, &wr, &bad)) {
				a->err = 1;
				break;
			}
			posted++;
		}
		{
			struct ibv_wc wc[ADD_DEPTH];
			int n = poll_n(c->scq, wc, 1, POLL_MS);

			if (n != 1) {
				a->err = 2;
				break;
			}
			if (wc[0].status != IBV_WC_SUCCESS ||
			    wc[0].wr_id != (uint64_t)a->done) {
				a->err = 3;
				break;
			}
			a->done++;
		}
	}
	for (k = 0; k < a->done; k++)
		memcpy(&a->olds[k],
		       cli.buf + 8 * MIB + (uint64_t)a->qp * 64 * 1024 + 8 * k,
		       8);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_atomicity(void)
{
	static struct adder ad[2];
	static uint64_t all[2 * ADD_N];
	pthread_t t[2];
	struct req q = { .cmd = C_ADD_START, .off = R_ATOMIC };
	uint64_t v, dup = 0, local = 0;
	struct ibv_device_attr da;
	struct rep r;
	int k, f0 = failures, glob;

	if (pair_up(1, &default_params) || pair_up(2, &default_params))
		return;
	/*
	 * IBV_ATOMIC_HCA (rxdp, ConnectX) promises atomicity among the
	 * device's own atomics; only IBV_ATOMIC_GLOB covers the CPU's too,
	 * so only then do local atomic adds run meanwhile.
	 */
	CHECK(!ibv_query_device(cli.ctx, &da), "ibv_query_device");
	glob = da.atomic_cap == IBV_ATOMIC_GLOB;
	srv_set64(R_ATOMIC, 1000000);
	if (glob)
		rpc_ok(&q, "local adds");
	for (k = 0; k < 2; k++) {
		ad[k].qp = k + 1;
		pthread_create(&t[k], NULL, adder_main, &ad[k]);
	}
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	if (glob) {
		q.cmd = C_ADD_JOIN;
		r = rpc(&q);
		CHECK(r.status == 0, "local adds: %s", strerror(r.status));
		local = r.val;
	}
	CHECK(!ad[0].err && !ad[1].err, "Fetch&Add threads: errors %d %d",
	      ad[0].err, ad[1].err);
	v = srv_get64(R_ATOMIC);
	CHECK(v == 1000000 + 2 * ADD_N + local,
	      "after %d remote and %" PRIu64 " local increments: %" PRIu64
	      ", expected %" PRIu64,
	      2 * ADD_N, local, v, 1000000 + 2 * ADD_N + local);
	memcpy(all, ad[0].olds, sizeof(ad[0].olds));
	memcpy(all + ADD_N, ad[1].olds, sizeof(ad[1].olds));
	qsort(all, 2 * ADD_N, sizeof(all[0]), cmp_u64);
	for (k = 1; k < 2 * ADD_N; k++)
		dup += all[k] == all[k - 1];
	CHECK(dup == 0,
	      "%" PRIu64 " Fetch&Adds returned a value another "
	      "one returned too",
	      dup);
	pair_down(1);
	pair_down(2);
	printf("%s atomicity: %d Fetch&Add from 2 QPs with %d in flight each, "
	       "%" PRIu64 " local atomic adds meanwhile\n",
	       failures == f0 ? "ok" : "FAIL", 2 * ADD_N, ADD_DEPTH, local);
}

/* ibv_query_qp reports what was set and what was granted */
static void test_query_qp(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int ret, f0 = failures;

	memset(&a, 0xee, sizeof(a));
	memset(&ia, 0xee, sizeof(ia));
	ret = ibv_query_qp(
		cli.c[0].qp, &a,
		IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |
			IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_QP_RD_ATOMIC |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP |
			IBV_QP_ACCESS_FLAGS | IBV_QP_AV,
		&ia);
	CHECK(ret == 0, "ibv_query_qp: %s", strerror(ret));
	CHECK(a.qp_state == IBV_QPS_RTS, "state %d", a.qp_state);
	CHECK(a.path_mtu == cli.mtu, "path_mtu %d", a.path_mtu);
	CHECK(a.dest_qp_num == peer0.qpn, "dest_qp_num 0x%x, expected 0x%x",
	      a.dest_qp_num, peer0.qpn);
	CHECK(a.rq_psn == peer0.psn, "rq_psn %u, expected %u", a.rq_psn,
	      peer0.psn);
	CHECK(a.sq_psn == cli.c[0].info.psn, "sq_psn %u, expected %u", a.sq_psn,
	      cli.c[0].info.psn);
	CHECK(a.timeout == default_params.timeout &&
		      a.retry_cnt == default_params.retry_cnt &&
		      a.rnr_retry == default_params.rnr_retry &&
		      a.min_rnr_timer == default_params.min_rnr_timer,
	      "timeout %u retry_cnt %u rnr_retry %u min_rnr_timer %u",
	      a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer);
	CHECK(a.max_rd_atomic >= 1 && a.max_rd_atomic <= 16 &&
		      a.max_dest_rd_atomic >= 1 && a.max_dest_rd_atomic <= 16,
	      "max_rd_atomic %u max_dest_rd_atomic %u", a.max_rd_atomic,
	      a.max_dest_rd_atomic);
	CHECK(a.qp_access_flags ==
		      (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC),
	      "access flags 0x%x", a.qp_access_flags);
	CHECK(a.ah_attr.is_global &&
		      !memcmp(a.ah_attr.grh.dgid.raw, peer0.gid, 16),
	      "ah_attr: not the peer's GID");
	CHECK(a.cap.max_send_wr >= QP_WR && a.cap.max_recv_wr >= QP_WR &&
		      a.cap.max_send_sge >= MAX_SG &&
		      a.cap.max_recv_sge >= MAX_SG &&
		      a.cap.max_inline_data == cli.max_inline,
	      "cap: send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u",
	      a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
	      a.cap.max_recv_sge, a.cap.max_inline_data);
	CHECK(ia.qp_type == IBV_QPT_RC && ia.send_cq == cli.c[0].scq &&
		      ia.recv_cq == cli.c[0].rcq && ia.srq == NULL &&
		      ia.sq_sig_all == 0 &&
		      ia.cap.max_send_wr == a.cap.max_send_wr,
	      "init_attr: type %d sq_sig_all %d", ia.qp_type, ia.sq_sig_all);
	printf("%s ibv_query_qp\n", failures == f0 ? "ok" : "FAIL");
}

/*
 * Refused posts: a positive errno, *bad_wr at the first WR not posted, the
 * WRs before it posted and completed (libibverbs' contract)
 */
static void test_post_errors(void)
{
	struct ibv_sge sge[MAX_SG + 1];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_recv_wr rwr[2], *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = 0 };
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp *qp;
	struct ibv_wc wc[3];
	int k, ret, n, f0 = failures;

	for (k = 0; k <= MAX_SG; k++) {
		sge[k].addr = (uintptr_t)cli.buf + L_SRC + 16 * (uint64_t)k;
		sge[k].length = 16;
		sge[k].lkey = cli.mr->lkey;
	}
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < 3; k++) {
		wr[k].wr_id = 700 + k;
		wr[k].sg_list = sge;
		wr[k].num_sge = 1;
		wr[k].opcode = IBV_WR_RDMA_WRITE;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].wr.rdma.remote_addr = hello.addr + R_DST;
		wr[k].wr.rdma.rkey = hello.rkey;
		wr[k].next = k < 2 ? &wr[k + 1] : NULL;
	}
	wr[1].num_sge = MAX_SG + 1 + 64; /* more than the QP was granted */
	ret = ibv_post_send(cli.c[0].qp, wr, &bad);
	CHECK(ret == EINVAL || ret == ENOMEM,
	      "too many SGEs: ibv_post_send returned %d", ret);
	CHECK(bad == &wr[1], "too many SGEs: bad_wr is WR %d",
	      bad ? (int)(bad - wr) : -1);
	n = poll_n(cli.c[0].scq, wc, 3, 200);
	CHECK(n == 1 && wc[0].wr_id == 700 && wc[0].status == IBV_WC_SUCCESS,
	      "the WR before the refused one: %d completions", n);

	memset(rwr, 0, sizeof(rwr));
	rwr[0].wr_id = 710;
	rwr[0].sg_list = sge;
	rwr[0].num_sge = MAX_SG + 1 + 64;
	rwr[0].next = &rwr[1];
	rwr[1].wr_id = 711;
	ret = ibv_post_recv(cli.c[0].qp, rwr, &rbad);
	CHECK(ret == EINVAL || ret == ENOMEM,
	      "too many SGEs: ibv_post_recv returned %d", ret);
	CHECK(rbad == &rwr[0], "too many SGEs: recv bad_wr not the first WR");

	wr[0].opcode = (enum ibv_wr_opcode)77; /* no such opcode */
	wr[0].next = NULL;
	ret = ibv_post_send(cli.c[0].qp, wr, &bad);
	CHECK(ret == EINVAL && bad == &wr[0], "bad opcode: returned %d", ret);

	/* IBTA 10.8.2: no send WR before RTS */
	ia.send_cq = cli.c[0].scq;
	ia.recv_cq = cli.c[0].rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(cli.pd, &ia);
	CHECK(qp != NULL, "ibv_create_qp: %s", strerror(errno));
	if (qp) {
		ret = ibv_modify_qp(qp, &a,
				    IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		CHECK(ret == 0, "to INIT: %s", strerror(ret));
		wr[0].opcode = IBV_WR_SEND;
		ret = ibv_post_send(qp, wr, &bad);
		CHECK(ret == EINVAL && bad == &wr[0],
		      "send WR in INIT: returned %d", ret);
		/* a skipped state: INIT -> RTS is refused, the QP stays */
		a.qp_state = IBV_QPS_RTS;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		CHECK(ret != 0, "INIT -> RTS accepted");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy");
	}
	ia.qp_type = IBV_QPT_XRC_SEND;
	errno = 0;
	qp = ibv_create_qp(cli.pd, &ia);
	CHECK(qp == NULL && errno != 0, "an XRC QP: %p, errno %d", (void *)qp,
	      errno);
	printf("%s refused posts and transitions: errno, bad_wr\n",
	       failures == f0 ? "ok" : "FAIL");
}

/*
 * ibv_rereg_mr moves the client's second MR to a new buffer with new
 * rights; an RDMA Read lands there through the new lkey. ibv_resize_cq to
 * a size the CQ already has succeeds and keeps at least that many.
 */
static void test_rereg_resize(void)
{
	enum {
		LEN = 8192
	};
	uint8_t *nb = aligned_alloc(4096, LEN + 2 * GUARD_LEN);
	struct ibv_mr *mr = cli.ro_mr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;
	struct req q = { .cmd = C_FILL,
			 .off = R_DST,
			 .len = LEN,
			 .seed = 99,
			 .pattern = 1 };
	int ret, n, cqe, f0 = failures;

	CHECK(nb != NULL, "out of memory");
	if (!nb)
		return;
	memset(nb, GUARD, LEN + 2 * GUARD_LEN);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE); /* needs local write */
	CHECK(ret != 0 && mr->addr == cli.ro,
	      "rereg to remote write without local write: %d", ret);
	ret = ibv_rereg_mr(mr,
			   IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_ACCESS,
			   NULL, nb + GUARD_LEN, LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(ret == 0, "ibv_rereg_mr: %d (%s)", ret, strerror(errno));
	CHECK(mr->addr == nb + GUARD_LEN && mr->length == LEN,
	      "rereg: the MR does not describe the new buffer");
	rpc_ok(&q, "fill");
	sge.addr = (uintptr_t)nb + GUARD_LEN;
	sge.length = LEN;
	sge.lkey = mr->lkey;
	wr.wr_id = 33;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = hello.addr + R_DST;
	wr.wr.rdma.rkey = hello.rkey;
	ret = ibv_post_send(cli.c[0].qp, &wr, &bad);
	CHECK(ret == 0, "read into the reregistered MR: post %s",
	      strerror(ret));
	n = poll_n(cli.c[0].scq, &wc, 1, POLL_MS);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS,
	      "read into the reregistered MR: %s",
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	CHECK(check(nb + GUARD_LEN, LEN, 99, 1, 0) < 0 &&
		      check(nb, GUARD_LEN, GUARD, 0, 0) < 0 &&
		      check(nb + GUARD_LEN + LEN, GUARD_LEN, GUARD, 0, 0) < 0,
	      "read into the reregistered MR: wrong data");
	/* back, so that the server-side role of this MR is unchanged */
	ret = ibv_rereg_mr(mr,
			   IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_ACCESS,
			   NULL, cli.ro, RO_LEN, IBV_ACCESS_REMOTE_READ);
	CHECK(ret == 0 && mr->addr == cli.ro, "rereg back: %d", ret);
	free(nb);

	cqe = cli.c[0].scq->cqe;
	ret = ibv_resize_cq(cli.c[0].scq, cqe / 2);
	CHECK(ret == 0 && cli.c[0].scq->cqe >= cqe / 2,
	      "ibv_resize_cq down to %d: %d, cqe %d", cqe / 2, ret,
	      cli.c[0].scq->cqe);
	ret = ibv_resize_cq(cli.c[0].scq, 0);
	CHECK(ret == EINVAL, "ibv_resize_cq to 0: %d", ret);
	printf("%s ibv_rereg_mr, ibv_resize_cq\n",
	       failures == f0 ? "ok" : "FAIL");
}

/* What the two ends must agree on over the wire */
static void group_wire(void)
{
	test_ops();
	test_atomics();
	test_unsignaled();
	test_fence();
	test_window();
	test_atomicity();
}

static void group_basic(void)
{
	test_rereg_resize();
	test_query_qp();
	test_post_errors();
	group_wire();
}

/* --- errors ------------------------------------------------------------- */

/*
 * Post three WRs on a fresh QP pair: the first fails with want, the other
 * two are flushed, and the QP is in ERR.
 */
static void error_case_sge(const char *what, const struct qp_params *p,
			   enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
			   uint32_t len, const struct ibv_sge *local,
			   enum ibv_wc_status want)
{
	struct sge_d g = { .off = L_SRC, .len = len };
	struct ibv_wc wc[3];
	int n, k, f0 = failures;
	enum ibv_qp_state st;

	if (pair_up(3, p))
		return;
	for (k = 0; k < 3; k++) {
		struct ibv_sge sge = local ? *local : (struct ibv_sge){ 0 };
		struct ibv_send_wr wr = { .wr_id = 90,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = op,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad = NULL;

		if (k || !local) {
			post(3, k ? IBV_WR_SEND : op, &g, 1, IBV_SEND_SIGNALED,
			     90 + k, raddr, rkey, 0, 0, 0);
			continue;
		}
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		k = ibv_post_send(cli.c[3].qp, &wr, &bad);
		CHECK(k == 0, "%s: ibv_post_send: %s", what, strerror(k));
		k = 0;
	}
	n = poll_n(cli.c[3].scq, wc, 3, POLL_MS);
	CHECK(n == 3, "%s: %d of 3 completions", what, n);
	if (n >= 1)
		CHECK(wc[0].status == want && wc[0].wr_id == 90,
		      "%s: first WC %s (wr_id %" PRIu64 "), expected %s", what,
		      ibv_wc_status_str(wc[0].status), wc[0].wr_id,
		      ibv_wc_status_str(want));
	for (k = 1; k < n; k++)
		CHECK(wc[k].status == IBV_WC_WR_FLUSH_ERR &&
			      wc[k].wr_id == 90u + k,
		      "%s: WC %d %s (wr_id %" PRIu64 "), expected %s", what, k,
		      ibv_wc_status_str(wc[k].status), wc[k].wr_id,
		      ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	st = conn_state(&cli, 3);
	CHECK(st == IBV_QPS_ERR,
	      "%s: QP state %d after the error, expected ERR", what, st);
	pair_down(3);
	printf("%s %s -> %s, then flushed\n", failures == f0 ? "ok" : "FAIL",
	       what, ibv_wc_status_str(want));
}

static void error_case(const char *what, const struct qp_params *p,
		       enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		       uint32_t len, enum ibv_wc_status want)
{
	error_case_sge(what, p, op, raddr, rkey, len, NULL, want);
}

/*
 * IBTA 10.6.3.2 (C10-9): a local SGE is checked against its L_Key: an MR
 * of the QP's PD holding the whole range. Each case small (a size rxdp's
 * library gathers at post time) and large, as a Send and an RDMA Write:
 * a key nobody has, a range past the MR's end, the key of another PD's MR.
 */
static void test_local_keys(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(cli.ctx);
	struct ibv_mr *mr2 =
		pd2 ? ibv_reg_mr(pd2, cli.buf, 4096, IBV_ACCESS_LOCAL_WRITE)
		    : NULL;
	const uint32_t lens[] = { 8, 3000 };
	const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE };
	char what[128];

	CHECK(mr2 != NULL, "a second PD and MR: %s", strerror(errno));
	for (unsigned int o = 0; o < 2; o++)
		for (unsigned int l = 0; l < 2; l++) {
			const struct {
				const char *why;
				uint32_t lkey;
				uint8_t *addr;
			} bad[] = {
				{ "no such lkey", cli.mr->lkey ^ 0x5a5a00,
				  cli.buf + L_SRC },
				{ "past the MR", cli.mr->lkey,
				  cli.buf + BUF_LEN - lens[l] / 2 },
				{ "an MR of another PD", mr2 ? mr2->lkey : 0,
				  cli.buf },
			};

			for (unsigned int b = 0; b < 3 && (b < 2 || mr2); b++) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)bad[b].addr,
					.length = lens[l],
					.lkey = bad[b].lkey,
				};

				snprintf(what, sizeof(what),
					 "%s of %u bytes, %s", op_name(ops[o]),
					 lens[l], bad[b].why);
				error_case_sge(what, &default_params, ops[o],
					       hello.addr + R_DST, hello.rkey,
					       lens[l], &sge,
					       IBV_WC_LOC_PROT_ERR);
			}
		}
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/*
 * IBTA 9.4.5: an atomic's remote address is 8-byte aligned. rxdp refuses a
 * misaligned one at post time (EINVAL, bad_wr); a responder that gets one
 * NAKs it (Invalid Request: the requester sees IBV_WC_REM_INV_REQ_ERR).
 */
static void test_misaligned_atomic(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)cli.buf + L_SRC + 5,
			       .length = 8,
			       .lkey = cli.mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_wc wc;
	int ret, n, f0 = failures;

	if (pair_up(3, &default_params))
		return;
	srv_set64(R_ATOMIC, 5);
	wr.wr_id = 80;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = hello.addr + R_ATOMIC + 4;
	wr.wr.atomic.rkey = hello.rkey;
	wr.wr.atomic.compare_add = 1;
	ret = ibv_post_send(cli.c[3].qp, &wr, &bad);
	if (ret) {
		CHECK(ret == EINVAL && bad == &wr,
		      "misaligned atomic: post returned %s, bad_wr %s",
		      strerror(ret), bad == &wr ? "set" : "not set");
	} else {
		n = poll_n(cli.c[3].scq, &wc, 1, POLL_MS);
		CHECK(n == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR,
		      "misaligned atomic: %d WCs, status %s", n,
		      n ? ibv_wc_status_str(wc.status) : "-");
	}
	CHECK(srv_get64(R_ATOMIC) == 5, "a misaligned atomic changed memory");
	pair_down(3);
	printf("%s Fetch&Add at a misaligned address -> %s\n",
	       failures == f0 ? "ok" : "FAIL",
	       ret ? "refused at post (EINVAL)" : "remote invalid request");
}

/* the client runs on another stack: its own verbs are not under test */
static int wire_only;

static void group_errors(void)
{
	struct qp_params p = default_params;
	struct ibv_wc wc[4];
	struct req q = { 0 };
	char c;
	int n, k, f0;

	if (!wire_only)
		test_local_keys();
	/* no receive posted, RNR retried once (IBTA 9.7.5.2.8) */
	p.rnr_retry = 1;
	error_case("Send with no receive posted, rnr_retry 1", &p, IBV_WR_SEND,
		   0, 0, 100, IBV_WC_RNR_RETRY_EXC_ERR);
	p = default_params;
	error_case("RDMA Write with a wrong R_Key", &p, IBV_WR_RDMA_WRITE,
		   hello.addr, hello.rkey ^ 0x5a5a00, 100,
		   IBV_WC_REM_ACCESS_ERR);
	error_case("RDMA Read with a wrong R_Key", &p, IBV_WR_RDMA_READ,
		   hello.addr, hello.rkey + 0x100, 100, IBV_WC_REM_ACCESS_ERR);
	error_case("RDMA Read past the end of the region", &p, IBV_WR_RDMA_READ,
		   hello.addr + BUF_LEN - 8, hello.rkey, 64,
		   IBV_WC_REM_ACCESS_ERR);
	error_case("RDMA Write past the end of the region", &p,
		   IBV_WR_RDMA_WRITE, hello.addr + BUF_LEN - 4000, hello.rkey,
		   5000, IBV_WC_REM_ACCESS_ERR);
	error_case("RDMA Write to a region without remote write", &p,
		   IBV_WR_RDMA_WRITE, hello.ro_addr, hello.ro_rkey, 64,
		   IBV_WC_REM_ACCESS_ERR);
	test_misaligned_atomic();

	/* the peer disappears: retries exhausted, the rest flushed */
	f0 = failures;
	p.timeout = 10; /* 4 ms */
	p.retry_cnt = 2;
	if (pair_up(4, &p))
		return;
	q.cmd = C_DIE;
	if (write_all(sock, &q, sizeof(q)))
		die("server gone early");
	CHECK(read(sock, &c, 1) == 0, "the server answered C_DIE");
	usleep(200 * 1000);
	{
		struct sge_d g = { .off = L_SRC, .len = 2000 };

		for (k = 0; k < 3; k++)
			post(4, IBV_WR_RDMA_WRITE, &g, 1, IBV_SEND_SIGNALED,
			     60 + k, hello.addr + R_DST, hello.rkey, 0, 0, 0);
	}
	n = poll_n(cli.c[4].scq, wc, 3, POLL_MS);
	CHECK(n == 3, "peer gone: %d of 3 completions", n);
	if (n >= 1)
		CHECK(wc[0].status == IBV_WC_RETRY_EXC_ERR && wc[0].wr_id == 60,
		      "peer gone: first WC %s, expected %s",
		      ibv_wc_status_str(wc[0].status),
		      ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	for (k = 1; k < n; k++)
		CHECK(wc[k].status == IBV_WC_WR_FLUSH_ERR,
		      "peer gone: WC %d %s, expected %s", k,
		      ibv_wc_status_str(wc[k].status),
		      ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	CHECK(conn_state(&cli, 4) == IBV_QPS_ERR, "peer gone: QP not in ERR");
	k = conn_destroy(&cli, 4);
	CHECK(k == 0, "destroy QP: %s", strerror(k));
	printf("%s peer killed -> %s, then flushed\n",
	       failures == f0 ? "ok" : "FAIL",
	       ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	close(sock);
	sock = -1;
}

/* --- bulk, for the fault tests ------------------------------------------- */

static void group_bulk(void)
{
	const char *env = getenv("RXDP_RC_OPS_ROUNDS");
	int rounds = env ? atoi(env) : 5, k;

	for (k = 0; k < rounds; k++) {
		one_op(0, IBV_WR_SEND_WITH_IMM, 2 * MIB + 11, 3, 4, 0);
		one_op(0, IBV_WR_RDMA_WRITE, 4 * MIB - 1, 2, 1, 0);
		one_op(0, IBV_WR_RDMA_READ, 4 * MIB + 1, 3, 1, 0);
		one_op(0, IBV_WR_RDMA_WRITE_WITH_IMM, 1 * MIB, 1, 0, 0);
		test_window();
		test_atomics();
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rc_ops [-d DEV] -g GIDX server PORT\n"
			"       rc_ops [-d DEV] -g GIDX client ADDR PORT "
			"[basic|wire|ext|mw|errors|bulk]...\n");
	exit(2);
}

static int client(const char *host, const char *port, char **groups, int ng)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct req q = { .cmd = C_HELLO };
	int one = 1, i, gone = 0, ret;

	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		die("%s: %s", host, gai_strerror(ret));
	for (i = 0; i < 100; i++) { /* the server may not listen yet */
		sock = socket(ai->ai_family, SOCK_STREAM, 0);
		if (sock >= 0 && !connect(sock, ai->ai_addr, ai->ai_addrlen))
			break;
		close(sock);
		sock = -1;
		usleep(100 * 1000);
	}
	freeaddrinfo(ai);
	if (sock < 0)
		die("connect to %s:%s: %s", host, port, strerror(errno));
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	host_open(&cli);
	hello = rpc(&q);
	if (hello.mtu != cli.mtu_bytes)
		die("the two ports' MTUs differ");
	if (pair_up(0, &default_params))
		die("cannot connect the first QP pair");
	printf("rc_ops client: %s, MTU %u, max inline %u\n",
	       ibv_get_device_name(cli.ctx->device), cli.mtu_bytes,
	       cli.max_inline);
	for (i = 0; i < ng; i++)
		wire_only |= !strcmp(groups[i], "wire");
	for (i = 0; i < ng; i++) {
		if (gone)
			die("%s after errors: the server is gone", groups[i]);
		if (!strcmp(groups[i], "basic")) {
			group_basic();
		} else if (!strcmp(groups[i], "wire")) {
			group_wire();
		} else if (!strcmp(groups[i], "bulk")) {
			group_bulk();
		} else if (!strcmp(groups[i], "ext")) {
			group_ext();
		} else if (!strcmp(groups[i], "mw")) {
			group_mw();
		} else if (!strcmp(groups[i], "errors")) {
			group_errors();
			gone = 1;
		} else {
			usage();
		}
	}
	if (!gone) {
		pair_down(0);
		q.cmd = C_BYE;
		write_all(sock, &q, sizeof(q));
		close(sock);
	} else {
		ret = conn_destroy(&cli, 0);
		CHECK(ret == 0, "destroy QP 0: %s", strerror(ret));
	}
	host_close(&cli);
	printf("rc_ops: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *groups_def[] = { "basic", "ext", "mw", "errors" };
	int opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		switch (opt) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	srandom((unsigned int)getpid());
	if (getenv("RXDP_RC_OPS_TIMEOUT") && *getenv("RXDP_RC_OPS_TIMEOUT"))
		default_params.timeout =
			(uint8_t)atoi(getenv("RXDP_RC_OPS_TIMEOUT"));
	if (gid_index < 0 || optind >= argc)
		usage();
	if (!strcmp(argv[optind], "server") && optind + 2 == argc)
		return server(argv[optind + 1]);
	if (!strcmp(argv[optind], "client") && optind + 3 <= argc) {
		if (optind + 3 == argc)
			return client(argv[optind + 1], argv[optind + 2],
				      groups_def, 4);
		return client(argv[optind + 1], argv[optind + 2],
			      argv + optind + 3, argc - optind - 3);
	}
	usage();
	return 2;
}
