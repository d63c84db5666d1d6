// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * coexist DEV... : one process using every device named, side by side
 * (tests/vm/coexist.sh runs it on rxdp's library with an rxdp device and
 * Soft-RoCE's rxe0, which rxdp's library hands to rdma-core's). On each
 * device two RC QPs connected to each other through the device's own IPv4
 * GID (loopback); then, in rounds that go from device to device, an RDMA
 * Write of a pattern and a Send of another, every byte checked at the
 * target; then everything destroyed. Exits 0 with a line per device, or 1
 * with a line naming what failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/vtest.h"

#define PROG "coexist"
#define LEN 65536
#define ROUNDS 8
#define MAX_DEVS 4

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *q[2];
	struct ibv_mr *mr;
	unsigned char *buf; /* src | write target | recv target */
};

static void die(const char *dev, const char *what)
{
	fprintf(stderr, PROG ": %s: %s: %s\n", dev, what, strerror(errno));
	exit(1);
}

static void setup(struct side *s)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 4,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int gid;

	s->ctx = vt_open(PROG, s->name);
	if (ibv_query_device(s->ctx, &da) || ibv_query_port(s->ctx, 1, &pa))
		die(s->name, "query");
	if (pa.state != IBV_PORT_ACTIVE) {
		errno = ENETDOWN;
		die(s->name, "port 1 not active");
	}
	gid = vt_ipv4_gid(PROG, s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->scq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0);
	if (!s->pd || !s->scq || !s->rcq)
		die(s->name, "PD, CQs");
	s->buf = calloc(3, LEN);
	if (!s->buf)
		die(s->name, "calloc");
	s->mr = ibv_reg_mr(s->pd, s->buf, 3 * LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die(s->name, "ibv_reg_mr");
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	for (int i = 0; i < 2; i++)
		if (!(s->q[i] = ibv_create_qp(s->pd, &qa)))
			die(s->name, "ibv_create_qp");
	vt_rc_connect(PROG, s->q[0], gid, s->q[1]->qp_num, 18);
	vt_rc_connect(PROG, s->q[1], gid, s->q[0]->qp_num, 18);
	printf("%s: %s, port ACTIVE, GID %d, QPs %u and %u\n", s->name,
	       ibv_get_device_name(s->ctx->device), gid, s->q[0]->qp_num,
	       s->q[1]->qp_num);
}

static void fill(unsigned char *p, int round, int dev, int kind)
{
	for (int i = 0; i < LEN; i++)
		p[i] = (unsigned char)(i * 7 + round * 13 + dev * 31 + kind);
}

static void round_trip(struct side *s, int round, int dev)
{
	unsigned char *src = s->buf, *wdst = s->buf + LEN, *rdst = wdst + LEN;
	unsigned char want[LEN];
	struct ibv_sge sge = { .addr = (uintptr_t)rdst,
			       .length = LEN,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	fill(src, round, dev, 1);
	memcpy(want, src, LEN);
	if (vt_post1(PROG, s->q[0], IBV_WR_RDMA_WRITE, src, s->mr->lkey, LEN,
		     (uintptr_t)wdst, s->mr->rkey, 0, 0) != IBV_WC_SUCCESS)
		die(s->name, "RDMA Write completion");
	if (memcmp(wdst, want, LEN)) {
		errno = EIO;
		die(s->name, "RDMA Write: the target's bytes differ");
	}
	if (ibv_post_recv(s->q[1], &rwr, &bad))
		die(s->name, "ibv_post_recv");
	fill(src, round, dev, 2);
	memcpy(want, src, LEN);
	if (vt_post1(PROG, s->q[0], IBV_WR_SEND, src, s->mr->lkey, LEN, 0, 0, 0,
		     0) != IBV_WC_SUCCESS)
		die(s->name, "Send completion");
	wc = vt_wait_wc(PROG, s->rcq);
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != LEN) {
		errno = EIO;
		die(s->name, "receive completion");
	}
	if (memcmp(rdst, want, LEN)) {
		errno = EIO;
		die(s->name, "Send: the received bytes differ");
	}
}

static void teardown(struct side *s)
{
	for (int i = 0; i < 2; i++)
		if (ibv_destroy_qp(s->q[i]))
			die(s->name, "ibv_destroy_qp");
	if (ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->scq) ||
	    ibv_destroy_cq(s->rcq) || ibv_dealloc_pd(s->pd) ||
	    ibv_close_device(s->ctx))
		die(s->name, "destroying");
	free(s->buf);
}

int main(int argc, char **argv)
{
	struct side s[MAX_DEVS] = { 0 };
	int n = argc - 1;

	if (n < 1 || n > MAX_DEVS) {
		fprintf(stderr, "usage: " PROG " DEV... (1 to %d devices)\n",
			MAX_DEVS);
		return 2;
	}
	for (int d = 0; d < n; d++) {
		s[d].name = argv[d + 1];
		setup(&s[d]);
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int d = 0; d < n; d++)
			round_trip(&s[d], r, d);
	for (int d = 0; d < n; d++) {
		teardown(&s[d]);
		printf("ok: %s: %d RDMA Writes and %d Sends of %d bytes, "
		       "byte-checked\n",
		       s[d].name, ROUNDS, ROUNDS, LEN);
	}
	return 0;
}
