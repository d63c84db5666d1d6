// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rc_ops' groups for the extended verbs and memory windows (rc_ops.c has
 * the program, the agent protocol and the classic groups):
 *
 *   ext  the device's extended caps and clock; every ibv_wr_* operation
 *        from a QP made by ibv_create_qp_ex, byte-checked at both ends
 *        (SGE lists, inline data from buffers changed before wr_complete,
 *        atomics' results, IBTA 1.5's Atomic Write and Flush), several
 *        WRs in one wr_start..wr_complete, all
 *        or none posted (wr_complete after a bad setter; wr_abort), no
 *        WR before RTS; completions read with ibv_start_poll and
 *        completion timestamps (the server's receives too: small ones
 *        reach their buffers from the CQE that way); the server receives
 *        through an SRQ made by ibv_create_srq_ex
 *   mw   one check per memory window rule (IBTA 10.6.7, the server holds
 *        the windows, the client reaches through them):
 *          type 1: bound by ibv_bind_mw, the key byte moves on (the rest of
 *          the R_Key is the window's); an unbound one grants nothing; the
 *          window's bounds and rights, not the region's, apply; a rebind
 *          retires the old R_Key; a zero-length bind unbinds; Local
 *          Invalidate and Send with Invalidate cannot free it
 *          type 2: bound by a Bind MW WR (ibv_post_send, and ibv_wr_bind_mw)
 *          with the consumer's key byte; usable only through the QP it was
 *          bound through (2B); bound only while free; freed by Local
 *          Invalidate (then bindable again, the old R_Key dead) and by a
 *          remote Send with Invalidate (the receive says which R_Key);
 *          deallocating it ends its access
 *          bind checks: the region needs MW_BIND access, local write for a
 *          writable window, and must hold the window; a type 2 bind needs a
 *          length; Send with Invalidate of a region's key is an invalid
 *          request; a region with windows bound cannot be deregistered; a
 *          window's R_Key is no L_Key
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rc_ops.h"

/* --- the server's side: its windows ---------------------------------- */

#define MAX_MW 8
#define MW_ALL_ACCESS                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* C_MW_BIND's choice of region (req.seed) */
enum {
	MWR_BIND, /* the buffer, with MW_BIND */
	MWR_PLAIN, /* the buffer's usual MR: no MW_BIND */
	MWR_RO, /* the read-only area, MW_BIND but no local write */
};

static struct ibv_mw *mws[MAX_MW];
static struct ibv_mr *bind_mr, *ro_bind_mr, *flush_mr;

static int bind_mrs(void)
{
	if (!bind_mr)
		bind_mr = ibv_reg_mr(srv.pd, srv.buf, BUF_LEN,
				     MW_ALL_ACCESS | IBV_ACCESS_MW_BIND);
	if (!ro_bind_mr)
		ro_bind_mr =
			ibv_reg_mr(srv.pd, srv.ro, RO_LEN,
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	return bind_mr && ro_bind_mr ? 0 : errno;
}

/* One send completion of server QP qp: its status, or -1 (none) */
static int srv_send_wc(int qp, uint64_t wr_id, enum ibv_wc_opcode op,
		       struct rep *r)
{
	struct ibv_wc wc;

	if (poll_n(srv.c[qp].scq, &wc, 1, POLL_MS) != 1) {
		snprintf(r->msg, sizeof(r->msg), "no completion");
		return -1;
	}
	if (wc.wr_id != wr_id ||
	    (wc.status == IBV_WC_SUCCESS && wc.opcode != op)) {
		snprintf(r->msg, sizeof(r->msg),
			 "completion wr_id %" PRIu64 " opcode %d, expected "
			 "%" PRIu64 " %d",
			 wc.wr_id, wc.opcode, wr_id, op);
		return -1;
	}
	return wc.status;
}

/*
 * Bind window q->val of the server through its QP q->qp: a type 1 with
 * ibv_bind_mw, a type 2 with a Bind MW WR (the ibv_wr_* API when the QP is
 * an extended one), the new key byte q->imm. r->val the completion's
 * status, r->rkey the window's R_Key now.
 */
static void serve_bind(const struct req *q, struct rep *r)
{
	struct conn *c = &srv.c[q->qp];
	struct ibv_mw *mw = mws[q->val % MAX_MW];
	struct ibv_mw_bind_info bi = {
		.mr = q->seed == MWR_PLAIN ? srv.mr
		      : q->seed == MWR_RO  ? ro_bind_mr
					   : bind_mr,
		.addr = (uintptr_t)(q->seed == MWR_RO ? srv.ro : srv.buf) +
			q->off,
		.length = q->len,
		.mw_access_flags = q->pattern,
	};
	uint32_t rkey = (mw ? mw->rkey & ~0xffu : 0) | (q->imm & 0xff);
	int ret;

	if (!mw || !c->qp) {
		r->status = EINVAL;
		return;
	}
	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = q->wr_id,
					 .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = bi };

		ret = ibv_bind_mw(c->qp, mw, &b);
		rkey = mw->rkey;
	} else if (c->qx) {
		ibv_wr_start(c->qx);
		c->qx->wr_id = q->wr_id;
		c->qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(c->qx, mw, rkey, &bi);
		ret = ibv_wr_complete(c->qx);
	} else {
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.wr_id = q->wr_id;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info = bi;
		ret = ibv_post_send(c->qp, &wr, &bad);
	}
	if (ret) {
		r->status = ret;
		snprintf(r->msg, sizeof(r->msg), "bind: %s", strerror(ret));
		return;
	}
	r->val = (uint64_t)(int64_t)srv_send_wc(q->qp, q->wr_id, IBV_WC_BIND_MW,
						r);
	r->rkey = rkey;
}

/* Local Invalidate of R_Key q->val on server QP q->qp: r->val its status */
static void serve_inv(const struct req *q, struct rep *r)
{
	struct conn *c = &srv.c[q->qp];
	int ret;

	if (c->qx) {
		ibv_wr_start(c->qx);
		c->qx->wr_id = q->wr_id;
		c->qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(c->qx, (uint32_t)q->val);
		ret = ibv_wr_complete(c->qx);
	} else {
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.wr_id = q->wr_id;
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = (uint32_t)q->val;
		ret = ibv_post_send(c->qp, &wr, &bad);
	}
	if (ret) {
		r->status = ret;
		return;
	}
	r->val = (uint64_t)(int64_t)srv_send_wc(q->qp, q->wr_id,
						IBV_WC_LOCAL_INV, r);
}

void serve_mw(const struct req *q, struct rep *r)
{
	unsigned int i;

	switch (q->cmd) {
	case C_MW_ALLOC:
		r->status = bind_mrs();
		for (i = 0; !r->status && i < MAX_MW && mws[i]; i++)
			;
		if (r->status || i == MAX_MW) {
			r->status = r->status ?: ENOSPC;
			break;
		}
		mws[i] = ibv_alloc_mw(srv.pd, (enum ibv_mw_type)q->val);
		r->status = mws[i] ? 0 : errno;
		r->val = i;
		r->rkey = mws[i] ? mws[i]->rkey : 0;
		break;
	case C_MW_BIND:
		if (q->qp >= MAX_QP)
			r->status = EINVAL;
		else
			serve_bind(q, r);
		break;
	case C_MW_INV:
		if (q->qp >= MAX_QP || !srv.c[q->qp].qp)
			r->status = EINVAL;
		else
			serve_inv(q, r);
		break;
	case C_MW_DEALLOC:
		i = (unsigned int)q->val % MAX_MW;
		r->status = mws[i] ? ibv_dealloc_mw(mws[i]) : EINVAL;
		if (!r->status)
			mws[i] = NULL;
		break;
	case C_FLUSH_MR: {
		struct ibv_mr *pm;

		if (!flush_mr)
			flush_mr = ibv_reg_mr(srv.pd, srv.buf, BUF_LEN,
					      IBV_ACCESS_LOCAL_WRITE |
						      IBV_ACCESS_REMOTE_WRITE |
						      RXDP_ACCESS_FLUSH_GLOBAL);
		r->status = flush_mr ? 0 : errno;
		r->rkey = flush_mr ? flush_mr->rkey : 0;
		errno = 0;
		pm = ibv_reg_mr(srv.pd, srv.buf, 4096,
				IBV_ACCESS_LOCAL_WRITE |
					RXDP_ACCESS_FLUSH_PERSISTENT);
		r->val = pm ? 0 : (uint64_t)errno;
		if (pm && ibv_dereg_mr(pm))
			die("ibv_dereg_mr failed");
		break;
	}
	case C_MW_DEREG:
		/* r->val: what ibv_dereg_mr said; the region is there after */
		r->val = (uint64_t)ibv_dereg_mr(bind_mr);
		if (!r->val)
			bind_mr = NULL;
		r->status = bind_mrs();
		break;
	default:
		r->status = EINVAL;
	}
}

void serve_mw_close(void)
{
	for (int i = 0; i < MAX_MW; i++)
		if (mws[i] && ibv_dealloc_mw(mws[i]))
			die("ibv_dealloc_mw failed");
	if ((bind_mr && ibv_dereg_mr(bind_mr)) ||
	    (ro_bind_mr && ibv_dereg_mr(ro_bind_mr)) ||
	    (flush_mr && ibv_dereg_mr(flush_mr)))
		die("ibv_dereg_mr (MW_BIND) failed");
}

/* --- the client's helpers ------------------------------------------------ */

/* Where the windows are in the server's buffer */
#define W_OFF (2 * MIB + 64)
#define W_LEN 8192

/* QP pairs of the mw group (every error takes one to ERR: a new one) */
#define QP_EXT 7
#define QP_MW 8
#define QP_MW_OTHER 9 /* another pair of the same PDs */

static int fresh_pair(int i, int ex)
{
	struct qp_params p = default_params;

	p.ex = (uint8_t)ex;
	if (cli.c[i].qp)
		pair_down(i);
	return pair_up(i, &p);
}

static struct rep mw_call(uint32_t cmd, int qp, uint64_t val)
{
	struct req q = { .cmd = cmd, .qp = (uint32_t)qp, .val = val };

	return rpc(&q);
}

static int mw_alloc(enum ibv_mw_type type, uint32_t *rkey)
{
	struct rep r = mw_call(C_MW_ALLOC, 0, type);

	CHECK(r.status == 0, "ibv_alloc_mw type %d: %s", type,
	      strerror(r.status));
	*rkey = r.rkey;
	return r.status ? -1 : (int)r.val;
}

/* Bind window w through server QP qp; the completion's status */
static int mw_bind(int qp, int w, int mr, uint64_t off, uint64_t len,
		   unsigned int access, uint8_t key, uint32_t *rkey)
{
	struct req q = { .cmd = C_MW_BIND,
			 .qp = (uint32_t)qp,
			 .val = (uint64_t)w,
			 .off = off,
			 .len = len,
			 .pattern = access,
			 .seed = (uint32_t)mr,
			 .imm = key,
			 .wr_id = 4000 + (uint64_t)w };
	struct rep r = rpc(&q);

	CHECK(r.status == 0 && (int64_t)r.val >= 0, "bind MW %d: %s %s", w,
	      strerror(r.status), r.msg);
	if (rkey)
		*rkey = r.rkey;
	return r.status ? -1 : (int)(int64_t)r.val;
}

/* Local Invalidate of rkey on server QP qp: the completion's status */
static int mw_local_inv(int qp, uint32_t rkey)
{
	struct req q = {
		.cmd = C_MW_INV, .qp = (uint32_t)qp, .val = rkey, .wr_id = 4100
	};
	struct rep r = rpc(&q);

	CHECK(r.status == 0 && (int64_t)r.val >= 0, "Local Invalidate: %s %s",
	      strerror(r.status), r.msg);
	return r.status ? -1 : (int)(int64_t)r.val;
}

static void mw_dealloc(int w)
{
	struct rep r = mw_call(C_MW_DEALLOC, 0, (uint64_t)w);

	CHECK(r.status == 0, "ibv_dealloc_mw: %s", strerror(r.status));
}

/*
 * An RDMA Write (then a Read back) of len bytes at the server's buffer
 * offset off through rkey on client QP i, checked byte for byte with the
 * guards around it
 */
static void rdma_through(int i, uint32_t rkey, uint64_t off, uint32_t len,
			 const char *what)
{
	struct sge_d g = { .off = L_SRC, .len = len };
	uint32_t seed = seed_next++;
	struct req q = { .cmd = C_FILL,
			 .off = off - GUARD_LEN,
			 .len = len + 2 * GUARD_LEN,
			 .seed = GUARD };

	rpc_ok(&q, "fill");
	fill(cli.buf + L_SRC, len, seed, 1, 0);
	if (post(i, IBV_WR_RDMA_WRITE, &g, 1, IBV_SEND_SIGNALED, 1,
		 hello.addr + off, rkey, 0, 0, 0) ||
	    send_done(i, 1, IBV_WC_RDMA_WRITE, what))
		return;
	srv_verify(off, len, seed, what);
	memset(cli.buf + L_SRC, 0, len);
	if (post(i, IBV_WR_RDMA_READ, &g, 1, IBV_SEND_SIGNALED, 2,
		 hello.addr + off, rkey, 0, 0, 0) ||
	    send_done(i, 2, IBV_WC_RDMA_READ, what))
		return;
	CHECK(check(cli.buf + L_SRC, len, seed, 1, 0) < 0,
	      "%s: read back: wrong data", what);
}

/*
 * An operation through rkey that must fail with want on client QP i (the
 * pair is in ERR afterwards); memory at the server's offset unchanged
 */
static void denied(int i, enum ibv_wr_opcode op, uint32_t rkey, uint64_t off,
		   uint32_t len, enum ibv_wc_status want, const char *what)
{
	struct sge_d g = { .off = L_SRC, .len = len };
	struct req q = { .cmd = C_FILL, .off = off, .len = len, .seed = 0x3c };
	struct ibv_wc wc;
	struct rep r;
	int n;

	rpc_ok(&q, "fill");
	fill(cli.buf + L_SRC, len, 77, 1, 0);
	if (post(i, op, &g, 1, IBV_SEND_SIGNALED, 3, hello.addr + off, rkey, 0,
		 0, 0))
		return;
	n = poll_n(cli.c[i].scq, &wc, 1, POLL_MS);
	CHECK(n == 1 && wc.status == want, "%s: %s, expected %s", what,
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion",
	      ibv_wc_status_str(want));
	q.cmd = C_VERIFY;
	r = rpc(&q);
	CHECK(r.status == 0, "%s: the server's memory changed: %s", what,
	      r.msg);
}

/* A Send with Invalidate of rkey from client QP i, into a receive there */
static void send_inv(int i, uint32_t rkey, uint32_t len, int via_wr,
		     enum ibv_wc_status want, const char *what)
{
	uint32_t seed = seed_next++;
	struct sge_d s = { .off = R_DST, .len = len + 64 };
	struct req q = {
		.cmd = C_POST_RECV, .qp = (uint32_t)i, .wr_id = 4200, .nsge = 1
	};
	struct ibv_wc wc;
	struct rep r;
	int n;

	q.sge[0] = s;
	q.cmd = C_FILL;
	q.off = R_DST - GUARD_LEN;
	q.len = s.len + 2 * GUARD_LEN;
	q.seed = GUARD;
	rpc_ok(&q, "fill");
	q.cmd = C_POST_RECV;
	rpc_ok(&q, "post receive");
	fill(cli.buf + L_SRC, len, seed, 1, 0);
	if (via_wr) {
		struct ibv_qp_ex *qx = cli.c[i].qx;

		ibv_wr_start(qx);
		qx->wr_id = 4201;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_inv(qx, rkey);
		ibv_wr_set_sge(qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC,
			       len);
		n = ibv_wr_complete(qx);
		CHECK(n == 0, "%s: ibv_wr_complete: %s", what, strerror(n));
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)cli.buf + L_SRC,
				       .length = len,
				       .lkey = cli.mr->lkey };
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.wr_id = 4201;
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.invalidate_rkey = rkey;
		n = ibv_post_send(cli.c[i].qp, &wr, &bad);
		CHECK(n == 0, "%s: ibv_post_send: %s", what, strerror(n));
	}
	n = poll_n(cli.c[i].scq, &wc, 1, POLL_MS);
	CHECK(n == 1 && wc.status == want && wc.wr_id == 4201,
	      "%s: %s, expected %s", what,
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion",
	      ibv_wc_status_str(want));
	q.cmd = C_POLL_RECV;
	q.wr_id = 4200;
	q.status = want == IBV_WC_SUCCESS ? IBV_WC_SUCCESS
					  : IBV_WC_REM_INV_REQ_ERR;
	q.opcode = IBV_WC_RECV;
	q.byte_len = len;
	q.len = len;
	q.seed = seed;
	q.inv = want == IBV_WC_SUCCESS ? rkey : 0;
	r = rpc(&q);
	CHECK(r.status == 0, "%s: the receive: %s", what, r.msg);
}

static void result(int f0, const char *what)
{
	printf("%s %s\n", failures == f0 ? "ok" : "FAIL", what);
}

/* --- mw: one check per rule --------------------------------------------- */

static void mw_type1(void)
{
	const unsigned int rw = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	uint32_t k0, k1, k2;
	int f0 = failures, w;

	w = mw_alloc(IBV_MW_TYPE_1, &k0);
	if (w < 0 || fresh_pair(QP_MW, 0))
		return;
	denied(QP_MW, IBV_WR_RDMA_WRITE, k0, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "type 1, unbound");
	result(f0, "MW type 1 allocated unbound grants nothing");

	f0 = failures;
	fresh_pair(QP_MW, 0);
	CHECK(mw_bind(QP_MW, w, MWR_BIND, W_OFF, W_LEN, rw, 0, &k1) ==
		      IBV_WC_SUCCESS,
	      "bind type 1");
	CHECK(k1 == ibv_inc_rkey(k0), "ibv_bind_mw: R_Key %#x, expected %#x",
	      k1, ibv_inc_rkey(k0));
	rdma_through(QP_MW, k1, W_OFF, W_LEN, "type 1 window, whole");
	rdma_through(QP_MW, k1, W_OFF + 1000, 17, "type 1 window, inside");
	result(f0, "MW type 1 bound by ibv_bind_mw: the key byte moves on, "
		   "Write and Read through it");

	f0 = failures;
	denied(QP_MW, IBV_WR_RDMA_WRITE, k1, W_OFF + W_LEN - 8, 16,
	       IBV_WC_REM_ACCESS_ERR, "past the window's end");
	fresh_pair(QP_MW, 0);
	denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF - 8, 16,
	       IBV_WC_REM_ACCESS_ERR, "before the window");
	result(f0, "MW bounds: the window's, not the region's");

	f0 = failures;
	fresh_pair(QP_MW, 0);
	CHECK(mw_bind(QP_MW, w, MWR_BIND, W_OFF, W_LEN, IBV_ACCESS_REMOTE_READ,
		      0, &k2) == IBV_WC_SUCCESS,
	      "rebind type 1 read-only");
	denied(QP_MW, IBV_WR_RDMA_WRITE, k2, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "write through a read-only window");
	fresh_pair(QP_MW, 0);
	denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "the R_Key of the bind before");
	result(f0, "MW rights: the window's; a rebind retires the old R_Key");

	f0 = failures;
	fresh_pair(QP_MW, 0);
	CHECK(mw_bind(QP_MW, w, MWR_BIND, 0, 0, 0, 0, &k1) == IBV_WC_SUCCESS,
	      "bind type 1 with length 0");
	denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "after a zero-length bind");
	result(f0, "MW type 1 unbound by a zero-length bind");

	/* o10-37.2.26: no invalidation of a type 1 window */
	f0 = failures;
	fresh_pair(QP_MW, 0);
	CHECK(mw_bind(QP_MW, w, MWR_BIND, W_OFF, W_LEN, rw, 0, &k1) ==
		      IBV_WC_SUCCESS,
	      "bind type 1");
	CHECK(mw_local_inv(QP_MW, k1) == IBV_WC_LOC_QP_OP_ERR,
	      "Local Invalidate of a type 1 window succeeded");
	fresh_pair(QP_MW, 0);
	send_inv(QP_MW, k1, 100, 0, IBV_WC_REM_INV_REQ_ERR,
		 "Send with Invalidate of a type 1 window");
	fresh_pair(QP_MW, 0);
	rdma_through(QP_MW, k1, W_OFF, 256, "type 1 window after both");
	result(f0, "MW type 1: Local Invalidate and Send with Invalidate "
		   "refused, the window still bound");
	mw_dealloc(w);
}

/* A type 2 window bound through pair QP_MW (ex: the ibv_wr_* API) */
static int type2_bound(int w, int ex, uint8_t key, uint32_t *rkey)
{
	const unsigned int rw = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;

	int st;

	if (fresh_pair(QP_MW, ex))
		return -1;
	st = mw_bind(QP_MW, w, MWR_BIND, W_OFF, W_LEN, rw, key, rkey);
	CHECK(st == IBV_WC_SUCCESS, "bind type 2: %s",
	      st < 0 ? "failed" : ibv_wc_status_str((enum ibv_wc_status)st));
	return st == IBV_WC_SUCCESS ? 0 : -1;
}

static void mw_type2(void)
{
	uint32_t k0, k1, k2;
	int f0 = failures, w;

	w = mw_alloc(IBV_MW_TYPE_2, &k0);
	if (w < 0)
		return;
	for (int ex = 1; ex >= 0; ex--) {
		f0 = failures;
		CHECK(!type2_bound(w, ex, 0x5a + ex, &k1), "bind type 2");
		CHECK((k1 & ~0xffu) == (k0 & ~0xffu) &&
			      (k1 & 0xff) == 0x5au + ex,
		      "type 2 R_Key %#x from %#x and key byte %#x", k1, k0,
		      0x5a + ex);
		rdma_through(QP_MW, k1, W_OFF, W_LEN, "type 2 window");
		result(f0, ex ? "MW type 2 bound by ibv_wr_bind_mw, the key "
				"byte the consumer's"
			      : "MW type 2 bound by a Bind MW WR "
				"(ibv_post_send), the key byte the consumer's");

		f0 = failures;
		CHECK(mw_bind(QP_MW, w, MWR_BIND, W_OFF, 64,
			      IBV_ACCESS_REMOTE_READ, 0x11,
			      NULL) == IBV_WC_MW_BIND_ERR,
		      "a bound type 2 window bound again");
		result(f0, "MW type 2 binds only while free");

		f0 = failures;
		fresh_pair(QP_MW_OTHER, 0);
		denied(QP_MW_OTHER, IBV_WR_RDMA_READ, k1, W_OFF, 64,
		       IBV_WC_REM_ACCESS_ERR, "through another QP");
		result(f0, "MW type 2B: only through the QP it was bound "
			   "through");

		f0 = failures;
		fresh_pair(QP_MW, ex);
		/* the pair is new: the window went with the old QP */
		denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF, 64,
		       IBV_WC_REM_ACCESS_ERR, "after its QP was destroyed");
		result(f0, "MW type 2 freed when its QP is destroyed");
	}

	f0 = failures;
	CHECK(!type2_bound(w, 1, 0x21, &k1), "bind type 2");
	CHECK(mw_local_inv(QP_MW, k1) == IBV_WC_SUCCESS, "Local Invalidate");
	denied(QP_MW, IBV_WR_RDMA_WRITE, k1, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "after Local Invalidate");
	fresh_pair(QP_MW, 0);
	CHECK(mw_bind(QP_MW, w, MWR_BIND, W_OFF, W_LEN,
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_LOCAL_WRITE,
		      0x22, &k2) == IBV_WC_SUCCESS,
	      "bind again after Local Invalidate");
	rdma_through(QP_MW, k2, W_OFF, 512, "rebound after Local Invalidate");
	denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "the R_Key before Local Invalidate");
	result(f0, "MW type 2 freed by Local Invalidate, bindable again, the "
		   "old R_Key dead");

	for (int ex = 0; ex < 2; ex++) {
		f0 = failures;
		CHECK(!type2_bound(w, 1, 0x30 + ex, &k1), "bind type 2");
		send_inv(QP_MW, k1, 300, ex, IBV_WC_SUCCESS,
			 "Send with Invalidate");
		denied(QP_MW, IBV_WR_RDMA_WRITE, k1, W_OFF, 64,
		       IBV_WC_REM_ACCESS_ERR, "after Send with Invalidate");
		result(f0, ex ? "MW type 2 freed by a remote Send with "
				"Invalidate (ibv_wr_send_inv), the receive "
				"naming the R_Key"
			      : "MW type 2 freed by a remote Send with "
				"Invalidate (ibv_post_send), the receive "
				"naming the R_Key");
	}

	f0 = failures;
	fresh_pair(QP_MW, 0);
	send_inv(QP_MW, hello.rkey, 100, 0, IBV_WC_REM_INV_REQ_ERR,
		 "Send with Invalidate of a region's R_Key");
	result(f0, "Send with Invalidate of a key that is no type 2 window: "
		   "invalid request at both ends");

	f0 = failures;
	CHECK(!type2_bound(w, 0, 0x40, &k1), "bind type 2");
	{
		struct rep r = mw_call(C_MW_DEREG, 0, 0);

		CHECK(r.status == 0 && r.val == EBUSY,
		      "ibv_dereg_mr of a region with a window bound: %d",
		      (int)r.val);
	}
	rdma_through(QP_MW, k1, W_OFF, 128, "window of a region kept");
	result(f0, "a region with windows bound cannot be deregistered");

	f0 = failures;
	mw_dealloc(w);
	denied(QP_MW, IBV_WR_RDMA_READ, k1, W_OFF, 64, IBV_WC_REM_ACCESS_ERR,
	       "after ibv_dealloc_mw");
	{
		struct rep r = mw_call(C_MW_DEREG, 0, 0);

		CHECK(r.status == 0 && r.val == 0,
		      "ibv_dereg_mr once the window is gone: %d", (int)r.val);
	}
	result(f0, "MW type 2 deallocated while bound: access ends, its "
		   "region deregisters");
}

/* The bind's own rules, each failing with IBV_WC_MW_BIND_ERR */
static void mw_bind_rules(void)
{
	static const struct {
		const char *what;
		enum ibv_mw_type type;
		int mr;
		uint64_t off, len;
		unsigned int access;
	} c[] = {
		{ "a region without MW_BIND (C10-73)", IBV_MW_TYPE_2, MWR_PLAIN,
		  W_OFF, W_LEN, IBV_ACCESS_REMOTE_READ },
		{ "a writable window on a region without local write (C10-74)",
		  IBV_MW_TYPE_2, MWR_RO, 0, 64, IBV_ACCESS_REMOTE_WRITE },
		{ "a window past its region (C10-75)", IBV_MW_TYPE_2, MWR_BIND,
		  BUF_LEN - 64, 128, IBV_ACCESS_REMOTE_READ },
		{ "a type 2 bind of no length (o10-37.2.40)", IBV_MW_TYPE_2,
		  MWR_BIND, W_OFF, 0, IBV_ACCESS_REMOTE_READ },
		{ "a type 1 window past its region (C10-75)", IBV_MW_TYPE_1,
		  MWR_BIND, BUF_LEN - 64, 128, IBV_ACCESS_REMOTE_READ },
	};
	uint32_t k;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int f0 = failures, w = mw_alloc(c[i].type, &k);
		char what[160];

		if (w < 0 || fresh_pair(QP_MW, 0))
			return;
		CHECK(mw_bind(QP_MW, w, c[i].mr, c[i].off, c[i].len,
			      c[i].access, 0x77, NULL) == IBV_WC_MW_BIND_ERR,
		      "bind with %s succeeded", c[i].what);
		mw_dealloc(w);
		snprintf(what, sizeof(what), "no bind with %s", c[i].what);
		result(f0, what);
	}
}

/* A window's R_Key names no local memory: as an L_Key, a protection error */
static void mw_not_lkey(void)
{
	uint32_t k;
	struct ibv_mw *mw;
	struct ibv_mw_bind b = {
		.wr_id = 5,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .addr = (uintptr_t)cli.buf + L_SRC,
			       .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ }
	};
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int f0 = failures, n;

	if (fresh_pair(QP_MW, 0))
		return;
	mr = ibv_reg_mr(cli.pd, cli.buf, BUF_LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(cli.pd, IBV_MW_TYPE_1);
	CHECK(mr && mw, "client region and window: %s", strerror(errno));
	if (!mr || !mw)
		return;
	b.bind_info.mr = mr;
	n = ibv_bind_mw(cli.c[QP_MW].qp, mw, &b);
	CHECK(n == 0, "ibv_bind_mw: %s", strerror(n));
	n = poll_n(cli.c[QP_MW].scq, &wc, 1, POLL_MS);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "client bind: %s",
	      n ? ibv_wc_status_str(wc.status) : "no completion");
	k = mw->rkey;
	{
		struct ibv_sge sge = { .addr = (uintptr_t)cli.buf + L_SRC,
				       .length = 64,
				       .lkey = k };
		struct ibv_send_wr wr = { 0 }, *bad;

		wr.wr_id = 6;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = hello.addr + R_DST;
		wr.wr.rdma.rkey = hello.rkey;
		n = ibv_post_send(cli.c[QP_MW].qp, &wr, &bad);
		CHECK(n == 0, "post: %s", strerror(n));
		n = poll_n(cli.c[QP_MW].scq, &wc, 1, POLL_MS);
		CHECK(n == 1 && wc.status == IBV_WC_LOC_PROT_ERR,
		      "a window's R_Key as an L_Key: %s",
		      n ? ibv_wc_status_str(wc.status) : "no completion");
	}
	CHECK(ibv_dereg_mr(mr) == EBUSY,
	      "the client's region deregistered with a window bound");
	CHECK(ibv_dealloc_mw(mw) == 0 && ibv_dereg_mr(mr) == 0,
	      "client window and region freed");
	result(f0, "a window's R_Key is no L_Key (local protection error)");
}

void group_mw(void)
{
	struct ibv_device_attr_ex da;
	int f0 = failures;

	CHECK(!ibv_query_device_ex(cli.ctx, NULL, &da), "ibv_query_device_ex");
	CHECK((da.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		      (da.orig_attr.device_cap_flags &
		       IBV_DEVICE_MEM_WINDOW_TYPE_2B),
	      "device caps %#x: no memory windows",
	      da.orig_attr.device_cap_flags);
	result(f0, "memory windows, type 1 and 2B, in the device's caps");
	mw_type1();
	mw_type2();
	mw_bind_rules();
	mw_not_lkey();
	pair_down(QP_MW);
	pair_down(QP_MW_OTHER);
}

/* --- ext: the extended verbs ------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Send completions of the ex QP, up to n in ms, through ibv_start_poll */
struct excqe {
	uint64_t wr_id, ts;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num;
};

static int poll_ex(struct ibv_cq_ex *cq, struct excqe *e, int n, int ms)
{
	struct ibv_poll_cq_attr attr = { 0 };
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000;
	int got = 0, ret;

	while (got < n && mono_ns() < end) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT)
			continue;
		if (ret)
			return -1;
		do {
			e[got].wr_id = cq->wr_id;
			e[got].status = cq->status;
			e[got].opcode = ibv_wc_read_opcode(cq);
			e[got].byte_len = ibv_wc_read_byte_len(cq);
			e[got].qp_num = ibv_wc_read_qp_num(cq);
			e[got].ts = ibv_wc_read_completion_ts(cq);
			got++;
		} while (got < n && !ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

/* One WR through the ibv_wr_* API of the ex pair; what op sends/gets */
struct exwr {
	enum ibv_wr_opcode op;
	uint32_t len;
	int nsge; /* 0 with inline > 0 */
	int inl; /* inline buffers (wr_set_inline_data(_list)) */
	const char *what;
};

/* Build one WR of the kind into the open wr_start batch */
static void ex_build(struct ibv_qp_ex *qx, const struct exwr *x, uint64_t wr_id,
		     uint64_t roff, uint32_t imm, const struct sge_d *g, int ng)
{
	struct ibv_sge sge[MAX_SG];

	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	switch (x->op) {
	case IBV_WR_SEND:
		ibv_wr_send(qx);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(qx, imm);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qx, hello.rkey, hello.addr + roff);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(qx, hello.rkey, hello.addr + roff, imm);
		break;
	default:
		ibv_wr_rdma_read(qx, hello.rkey, hello.addr + roff);
		break;
	}
	if (x->inl) {
		struct ibv_data_buf b[MAX_SG];

		for (int k = 0; k < ng; k++) {
			b[k].addr = cli.buf + g[k].off;
			b[k].length = g[k].len;
		}
		if (ng == 1)
			ibv_wr_set_inline_data(qx, b[0].addr, b[0].length);
		else
			ibv_wr_set_inline_data_list(qx, (size_t)ng, b);
		/* taken now: what changes after must not be sent */
		for (int k = 0; k < ng; k++)
			memset(cli.buf + g[k].off, 0xee, g[k].len);
		return;
	}
	for (int k = 0; k < ng; k++) {
		sge[k].addr = (uintptr_t)cli.buf + g[k].off;
		sge[k].length = g[k].len;
		sge[k].lkey = cli.mr->lkey;
	}
	if (ng == 1)
		ibv_wr_set_sge(qx, sge[0].lkey, sge[0].addr, sge[0].length);
	else
		ibv_wr_set_sge_list(qx, (size_t)ng, sge);
}

/*
 * The WRs of xs, in one wr_start..wr_complete; each byte-checked at the
 * other end (or here for reads), completions read with ibv_start_poll in
 * order, their timestamps within the batch's time and in order
 */
static void ex_batch(const struct exwr *xs, int n)
{
	struct conn *c = &cli.c[QP_EXT];
	struct sge_d g[8][MAX_SG], s[8][MAX_SG];
	int ng[8], ns[8];
	uint32_t seed[8];
	uint64_t roff[8], t0, t1;
	struct excqe e[8];
	struct req q = { .qp = QP_EXT };
	struct rep r;
	int ret, got;

	for (int i = 0; i < n; i++) {
		const struct exwr *x = &xs[i];
		uint64_t lbase = L_SRC + (uint64_t)i * 128 * 1024;
		int recv = x->op == IBV_WR_SEND ||
			   x->op == IBV_WR_SEND_WITH_IMM ||
			   x->op == IBV_WR_RDMA_WRITE_WITH_IMM;

		seed[i] = seed_next++;
		roff[i] = R_DST + (uint64_t)i * 256 * 1024;
		ng[i] = layout(g[i], lbase, x->len, x->inl ? x->inl : x->nsge,
			       0);
		ns[i] = x->op == IBV_WR_SEND || x->op == IBV_WR_SEND_WITH_IMM
				? layout(s[i], roff[i], x->len, 3, 16)
				: 0;
		q.cmd = C_FILL;
		q.off = roff[i] - GUARD_LEN;
		q.len = (ns[i] ? s[i][ns[i] - 1].off + s[i][ns[i] - 1].len -
					 roff[i]
			       : x->len) +
			2 * GUARD_LEN + 64;
		q.seed = GUARD;
		q.pattern = 0;
		if (x->op == IBV_WR_RDMA_READ) {
			rpc_ok(&q, "fill");
			q.off = roff[i];
			q.len = x->len;
			q.seed = seed[i];
			q.pattern = 1;
		}
		rpc_ok(&q, "fill");
		if (recv) {
			q.cmd = C_POST_RECV;
			q.wr_id = 5000 + (uint64_t)i;
			q.nsge = (uint32_t)ns[i];
			memcpy(q.sge, s[i], sizeof(s[i]));
			rpc_ok(&q, "post receive");
		}
		memset(cli.buf + lbase - GUARD_LEN, GUARD,
		       (ng[i] ? g[i][ng[i] - 1].off + g[i][ng[i] - 1].len -
					lbase
			      : 0) +
			       2 * GUARD_LEN);
		/* SGEs: other bytes until the WRs are built (see below) */
		if (x->op != IBV_WR_RDMA_READ)
			fill_sg(cli.buf, g[i], ng[i], x->len,
				x->inl ? seed[i] : ~seed[i]);
	}
	t0 = mono_ns();
	ibv_wr_start(c->qx);
	for (int i = 0; i < n; i++)
		ex_build(c->qx, &xs[i], 5000 + (uint64_t)i, roff[i],
			 htobe32(0xe0000000u | seed[i]), g[i], ng[i]);
	/*
	 * An SGE's bytes are read once the WR is posted (ibv_wr_complete),
	 * not when ibv_wr_set_sge names them: small ones are copied then
	 */
	for (int i = 0; i < n; i++)
		if (xs[i].op != IBV_WR_RDMA_READ && !xs[i].inl)
			fill_sg(cli.buf, g[i], ng[i], xs[i].len, seed[i]);
	ret = ibv_wr_complete(c->qx);
	CHECK(ret == 0, "ibv_wr_complete: %s", strerror(ret));
	got = poll_ex(c->scq_ex, e, n, POLL_MS);
	t1 = mono_ns();
	CHECK(got == n, "%d of %d completions (ibv_start_poll)", got, n);
	for (int i = 0; i < got; i++) {
		const struct exwr *x = &xs[i];
		enum ibv_wc_opcode op =
			x->op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
			: x->op == IBV_WR_SEND || x->op == IBV_WR_SEND_WITH_IMM
				? IBV_WC_SEND
				: IBV_WC_RDMA_WRITE;

		CHECK(e[i].status == IBV_WC_SUCCESS &&
			      e[i].wr_id == 5000u + i && e[i].opcode == op &&
			      e[i].qp_num == c->qp->qp_num,
		      "%s: WC %s wr_id %" PRIu64 " opcode %d", x->what,
		      ibv_wc_status_str(e[i].status), e[i].wr_id, e[i].opcode);
		CHECK(e[i].ts >= t0 && e[i].ts <= t1 &&
			      (!i || e[i].ts >= e[i - 1].ts),
		      "%s: completion timestamp %" PRIu64 " outside [%" PRIu64
		      ", %" PRIu64 "] or before the one before",
		      x->what, e[i].ts, t0, t1);
	}
	for (int i = 0; i < n; i++) {
		const struct exwr *x = &xs[i];
		char msg[240];

		if (x->op == IBV_WR_RDMA_READ) {
			CHECK(!check_sg(cli.buf, BUF_LEN, g[i], ng[i], x->len,
					seed[i], msg, sizeof(msg)),
			      "%s: %s", x->what, msg);
			continue;
		}
		if (x->op == IBV_WR_RDMA_WRITE ||
		    x->op == IBV_WR_RDMA_WRITE_WITH_IMM)
			srv_verify(roff[i], x->len, seed[i], x->what);
		if (x->op == IBV_WR_RDMA_WRITE)
			continue;
		q.cmd = C_POLL_RECV;
		q.wr_id = 5000 + (uint64_t)i;
		q.status = IBV_WC_SUCCESS;
		q.opcode = x->op == IBV_WR_RDMA_WRITE_WITH_IMM
				   ? IBV_WC_RECV_RDMA_WITH_IMM
				   : IBV_WC_RECV;
		q.byte_len = x->len;
		q.imm_flag = x->op != IBV_WR_SEND;
		q.imm = htobe32(0xe0000000u | seed[i]);
		q.inv = 0;
		q.len = x->op == IBV_WR_RDMA_WRITE_WITH_IMM ? 0 : x->len;
		q.seed = seed[i];
		q.nsge = (uint32_t)ns[i];
		memcpy(q.sge, s[i], sizeof(s[i]));
		r = rpc(&q);
		CHECK(r.status == 0, "%s: %s", x->what, r.msg);
	}
}

static void ex_atomics(void)
{
	struct conn *c = &cli.c[QP_EXT];
	struct excqe e[2];
	uint64_t v[2];
	int f0 = failures, ret;

	srv_set64(R_ATOMIC, 1000);
	memset(cli.buf + L_SRC, 0x77, 16);
	ibv_wr_start(c->qx);
	c->qx->wr_id = 61;
	c->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(c->qx, hello.rkey, hello.addr + R_ATOMIC, 234);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC, 8);
	c->qx->wr_id = 62;
	ibv_wr_atomic_cmp_swp(c->qx, hello.rkey, hello.addr + R_ATOMIC, 1234,
			      0xabcdef);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC + 8, 8);
	ret = ibv_wr_complete(c->qx);
	CHECK(ret == 0, "ibv_wr_complete: %s", strerror(ret));
	CHECK(poll_ex(c->scq_ex, e, 2, POLL_MS) == 2 && e[0].wr_id == 61 &&
		      e[0].opcode == IBV_WC_FETCH_ADD && e[1].wr_id == 62 &&
		      e[1].opcode == IBV_WC_COMP_SWAP &&
		      e[0].status == IBV_WC_SUCCESS &&
		      e[1].status == IBV_WC_SUCCESS,
	      "atomics: completions");
	memcpy(v, cli.buf + L_SRC, 16);
	CHECK(v[0] == 1000 && v[1] == 1234 && srv_get64(R_ATOMIC) == 0xabcdef,
	      "ibv_wr_atomic_fetch_add / cmp_swp returned %" PRIu64
	      " and %" PRIu64 ", left %#" PRIx64,
	      v[0], v[1], srv_get64(R_ATOMIC));
	result(f0, "ibv_wr_atomic_fetch_add, ibv_wr_atomic_cmp_swp");
}

/*
 * IBTA 1.5: an RDMA Write, an Atomic Write and a Flush of what the Write
 * wrote, in one wr_start..wr_complete (ibv_wr_atomic_write; ibv_wr_flush
 * where rdma-core 47's ibv_qp_ex has it): the Atomic Write's 8 bytes land
 * as given, the Flush completes (IBV_WC_FLUSH, its length) once the Write
 * is placed; a region with IBV_ACCESS_FLUSH_PERSISTENT is refused (no
 * memory of rxdp is persistent), the caps say all three
 */
static void ex_atomic_write_flush(void)
{
	const uint8_t v[8] = { 'A', '1', '9', 0, 0xfe, 0xed, 0xbe, 0xef };
	const uint64_t off = R_DST + 3 * MIB, aw = R_ATOMIC + 64;
	struct conn *c = &cli.c[QP_EXT];
	struct req q = { .cmd = C_FLUSH_MR, .qp = QP_EXT };
	struct ibv_device_attr_ex da;
	uint32_t seed = seed_next++, len = 10000;
	struct excqe e[2];
	struct rep r = rpc(&q);
	uint64_t got;
	int f0 = failures, ret;

	CHECK(!ibv_query_device_ex(cli.ctx, NULL, &da) &&
		      (da.device_cap_flags_ex &
		       (RXDP_DEVICE_ATOMIC_WRITE | RXDP_DEVICE_FLUSH_GLOBAL |
			RXDP_DEVICE_FLUSH_PERSISTENT)) ==
			      (RXDP_DEVICE_ATOMIC_WRITE |
			       RXDP_DEVICE_FLUSH_GLOBAL |
			       RXDP_DEVICE_FLUSH_PERSISTENT),
	      "device_cap_flags_ex %#" PRIx64 ": no Atomic Write or Flush",
	      (uint64_t)da.device_cap_flags_ex);
	CHECK(r.status == 0, "a region with IBV_ACCESS_FLUSH_GLOBAL: %s",
	      strerror(r.status));
	CHECK(r.val == EINVAL,
	      "a region with IBV_ACCESS_FLUSH_PERSISTENT: errno %" PRIu64,
	      r.val);
	if (r.status)
		return;
	q = (struct req){ .cmd = C_FILL,
			  .off = off - GUARD_LEN,
			  .len = len + 2 * GUARD_LEN,
			  .seed = GUARD };
	rpc_ok(&q, "fill");
	srv_set64(aw, 0);
	fill(cli.buf + L_SRC, len, seed, 1, 0);
	ibv_wr_start(c->qx);
	c->qx->wr_id = 91;
	c->qx->wr_flags = 0;
	ibv_wr_rdma_write(c->qx, r.rkey, hello.addr + off);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC, len);
	c->qx->wr_id = 92;
	c->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(c->qx, r.rkey, hello.addr + aw, v);
	c->qx->wr_id = 93;
	rxdp_wr_flush(c->qx, r.rkey, hello.addr + off, len, RXDP_FLUSH_GLOBAL,
		      RXDP_FLUSH_RANGE);
	ret = ibv_wr_complete(c->qx);
	CHECK(ret == 0, "ibv_wr_complete: %s", strerror(ret));
	CHECK(poll_ex(c->scq_ex, e, 2, POLL_MS) == 2 && e[0].wr_id == 92 &&
		      e[0].status == IBV_WC_SUCCESS &&
		      e[0].opcode == IBV_WC_ATOMIC_WRITE &&
		      e[0].byte_len == 8 && e[1].wr_id == 93 &&
		      e[1].status == IBV_WC_SUCCESS &&
		      e[1].opcode == (enum ibv_wc_opcode)RXDP_WC_FLUSH &&
		      e[1].byte_len == len,
	      "Atomic Write and Flush: completions");
	srv_verify(off, len, seed, "the RDMA Write the Flush placed");
	got = srv_get64(aw);
	CHECK(!memcmp(&got, v, 8), "the Atomic Write left %#" PRIx64, got);
	result(f0, "ibv_wr_atomic_write, ibv_wr_flush (IBTA 1.5)");
}

/* wr_complete posts all or none; wr_abort none; nothing before RTS */
static void ex_all_or_none(void)
{
	struct conn *c = &cli.c[QP_EXT];
	struct ibv_sge big[MAX_SG + 1];
	struct ibv_qp_init_attr_ex ia = { 0 };
	struct req q = { .cmd = C_FILL,
			 .qp = QP_EXT,
			 .off = R_DST,
			 .len = 4096,
			 .seed = 0x42 };
	struct excqe e;
	struct ibv_qp *qp;
	int f0 = failures, ret;

	rpc_ok(&q, "fill");
	for (int k = 0; k <= MAX_SG; k++)
		big[k] = (struct ibv_sge){ .addr = (uintptr_t)cli.buf + L_SRC,
					   .length = 8,
					   .lkey = cli.mr->lkey };
	ibv_wr_start(c->qx);
	c->qx->wr_id = 71;
	c->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(c->qx, hello.rkey, hello.addr + R_DST);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC, 64);
	c->qx->wr_id = 72;
	ibv_wr_rdma_write(c->qx, hello.rkey, hello.addr + R_DST + 1024);
	ibv_wr_set_sge_list(c->qx, MAX_SG + 1, big); /* more than granted */
	ret = ibv_wr_complete(c->qx);
	CHECK(ret != 0, "wr_complete with a WR of too many SGEs posted");
	ibv_wr_start(c->qx);
	c->qx->wr_id = 73;
	ibv_wr_rdma_write(c->qx, hello.rkey, hello.addr + R_DST + 2048);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC, 64);
	ibv_wr_abort(c->qx);
	CHECK(poll_ex(c->scq_ex, &e, 1, 300) == 0,
	      "a completion (wr_id %" PRIu64 ") for WRs never posted", e.wr_id);
	q.cmd = C_VERIFY;
	CHECK(rpc(&q).status == 0,
	      "memory written by WRs that wr_complete refused or wr_abort "
	      "dropped");
	/* the queue is usable after both */
	ibv_wr_start(c->qx);
	c->qx->wr_id = 74;
	c->qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(c->qx, hello.rkey, hello.addr + R_DST);
	ibv_wr_set_sge(c->qx, cli.mr->lkey, (uintptr_t)cli.buf + L_SRC, 8);
	CHECK(ibv_wr_complete(c->qx) == 0 &&
		      poll_ex(c->scq_ex, &e, 1, POLL_MS) == 1 &&
		      e.wr_id == 74 && e.status == IBV_WC_SUCCESS,
	      "a WR after the refused ones");

	/* IBTA 10.8.2: no send WR before RTS */
	ia.send_cq = c->scq;
	ia.recv_cq = c->rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = cli.pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qp = ibv_create_qp_ex(cli.ctx, &ia);
	CHECK(qp && ibv_qp_to_qp_ex(qp), "ibv_create_qp_ex: %s",
	      strerror(errno));
	if (qp) {
		struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);

		ibv_wr_start(qx);
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, cli.mr->lkey, (uintptr_t)cli.buf, 8);
		CHECK(ibv_wr_complete(qx) == EINVAL,
		      "a send WR in RESET accepted");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy");
	}
	ia.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ; /* not on UD */
	ia.qp_type = IBV_QPT_UD;
	errno = 0;
	qp = ibv_create_qp_ex(cli.ctx, &ia);
	CHECK(!qp && errno == EOPNOTSUPP, "a UD QP with RDMA Read: %p %d",
	      (void *)qp, errno);
	result(f0, "ibv_wr_complete posts all or none, ibv_wr_abort none; no "
		   "WR before RTS; ops the transport lacks refused");
}

static void ex_caps(void)
{
	struct ibv_device_attr_ex da;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_XRC,
	};
	uint64_t t0, t1;
	int f0 = failures;

	CHECK(!ibv_query_device_ex(cli.ctx, NULL, &da), "ibv_query_device_ex");
	CHECK(da.hca_core_clock == 1000000 &&
		      da.completion_timestamp_mask == UINT64_MAX,
	      "hca_core_clock %" PRIu64 " kHz, mask %#" PRIx64,
	      da.hca_core_clock, da.completion_timestamp_mask);
	t0 = mono_ns();
	CHECK(!ibv_query_rt_values_ex(cli.ctx, &v) &&
		      v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK,
	      "ibv_query_rt_values_ex");
	t1 = mono_ns();
	CHECK((uint64_t)v.raw_clock.tv_nsec >= t0 &&
		      (uint64_t)v.raw_clock.tv_nsec <= t1,
	      "raw clock %ld outside [%" PRIu64 ", %" PRIu64 "]",
	      v.raw_clock.tv_nsec, t0, t1);
	sa.pd = cli.pd;
	errno = 0;
	CHECK(!ibv_create_srq_ex(cli.ctx, &sa) && errno == EOPNOTSUPP,
	      "an XRC SRQ: errno %d", errno);
	result(f0, "extended caps: a 1 GHz completion clock, the raw clock; "
		   "XRC SRQs refused");
}

void group_ext(void)
{
	const uint32_t mtu = hello.mtu;
	static const struct exwr one[] = {
		{ IBV_WR_SEND, 4000, 3, 0, "ibv_wr_send, 3 SGEs" },
		{ IBV_WR_SEND_WITH_IMM, 1, 1, 0, "ibv_wr_send_imm, 1 byte" },
		{ IBV_WR_RDMA_WRITE, 9000, 2, 0, "ibv_wr_rdma_write, 2 SGEs" },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 100, 1, 0,
		  "ibv_wr_rdma_write_imm" },
		{ IBV_WR_RDMA_READ, 70000, 4, 0, "ibv_wr_rdma_read, 4 SGEs" },
		{ IBV_WR_SEND, 40, 0, 3, "ibv_wr_set_inline_data_list" },
		{ IBV_WR_RDMA_WRITE, 57, 0, 1, "ibv_wr_set_inline_data" },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 0, 0, 0, "a write of 0 bytes" },
		{ IBV_WR_SEND, 64, 2, 0, "ibv_wr_send, 64 bytes in 2 SGEs" },
		{ IBV_WR_RDMA_WRITE, 48, 3, 0,
		  "ibv_wr_rdma_write, 48 bytes in 3 SGEs" },
	};
	struct exwr batch[] = {
		{ IBV_WR_RDMA_WRITE, 24, 2, 0, "batch: small write" },
		{ IBV_WR_RDMA_WRITE, mtu + 1, 1, 0, "batch: write" },
		{ IBV_WR_SEND_WITH_IMM, mtu * 3, 2, 0, "batch: send" },
		{ IBV_WR_RDMA_READ, 5000, 1, 0, "batch: read" },
		{ IBV_WR_SEND, 16, 0, 2, "batch: inline send" },
	};
	struct qp_params p = default_params;

	ex_caps();
	p.ex = 1;
	p.srq_ex = 1;
	if (pair_up(QP_EXT, &p))
		return;
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		int f0 = failures;

		ex_batch(&one[i], 1);
		result(f0, one[i].what);
	}
	{
		int f0 = failures;

		ex_batch(batch, 5);
		result(f0, "5 WRs in one ibv_wr_start..ibv_wr_complete, "
			   "completed in order with timestamps");
	}
	ex_atomics();
	ex_atomic_write_flush();
	ex_all_or_none();
	pair_down(QP_EXT);
	printf("ok   (the server received through an SRQ from "
	       "ibv_create_srq_ex)\n");
}
