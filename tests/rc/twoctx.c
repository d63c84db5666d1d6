// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * twoctx DEVICE: one buffer registered in two contexts of one process, so
 * that rxdpd holds two descriptors of one open file (the library shares
 * the buffer's memfd with each context: RXDP_CTL_MEM_SHARE), across
 * restarts of rxdpd (tests/rc/fdstore.sh: systemd's descriptor store keeps
 * one of each open file). Built against the system's <infiniband/verbs.h>,
 * run on build/lib's libibverbs.
 *
 * A QP of each context, connected to each other (looped back through
 * rxdpd); the buffer's first half registered in context 1, the whole in
 * context 2. Each round: QP 1 writes the first half into the second (the
 * remote side context 2's MR), QP 2 reads the first half back into the
 * second after it was cleared; both checked byte for byte. A round, then
 * "ready"; then a round per line on stdin ("ok N" each). Exit 0 when every
 * round held; else a line says what did not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "../lib/vtest.h"

#define HALF 65536

static const char *prog = "twoctx";

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
};

static void side_open(struct side *s, const char *dev, void *buf, size_t len)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 4,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };

	s->ctx = vt_open(prog, dev);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 8, NULL, NULL, 0) : NULL;
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = s->cq ? ibv_create_qp(s->pd, &ia) : NULL;
	s->mr = s->qp ? ibv_reg_mr(s->pd, buf, len,
				   IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ)
		      : NULL;
	if (!s->mr)
		vt_die(prog, "a context's PD, CQ, QP or MR");
}

static void round_trip(struct side *a, struct side *b, unsigned char *buf,
		       int n)
{
	unsigned char *lo = buf, *hi = buf + HALF;
	enum ibv_wc_status st;

	for (int i = 0; i < HALF; i++)
		lo[i] = (unsigned char)(i * 7 + n * 131 + (i >> 9));
	memset(hi, 0, HALF);
	st = vt_post1(prog, a->qp, IBV_WR_RDMA_WRITE, lo, a->mr->lkey, HALF,
		      (uintptr_t)hi, b->mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS, "round %d: write: %s", n,
		 ibv_wc_status_str(st));
	VT_CHECK(!memcmp(lo, hi, HALF), "round %d: the write's bytes", n);
	memset(hi, 0, HALF);
	st = vt_post1(prog, b->qp, IBV_WR_RDMA_READ, hi, b->mr->lkey, HALF,
		      (uintptr_t)lo, a->mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS, "round %d: read: %s", n,
		 ibv_wc_status_str(st));
	VT_CHECK(!memcmp(lo, hi, HALF), "round %d: the read's bytes", n);
	if (vt_failed)
		exit(1);
}

int main(int argc, char **argv)
{
	struct side a, b;
	unsigned char *buf;
	char line[64];
	int gid, n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", prog);
		return 2;
	}
	buf = aligned_alloc(4096, 2 * HALF);
	if (!buf)
		vt_die(prog, "aligned_alloc");
	memset(buf, 0, 2 * HALF);
	side_open(&a, argv[1], buf, HALF);
	side_open(&b, argv[1], buf, 2 * HALF);
	gid = vt_ipv4_gid(prog, a.ctx);
	vt_rc_connect(prog, a.qp, gid, b.qp->qp_num, 14);
	vt_rc_connect(prog, b.qp, gid, a.qp->qp_num, 14);
	round_trip(&a, &b, buf, n++);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		round_trip(&a, &b, buf, n);
		printf("ok %d\n", n++);
		fflush(stdout);
	}
	return vt_failed;
}
