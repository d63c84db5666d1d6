// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the verbs test programs share (vtest.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtest.h"

int vt_failed;

void vt_die(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

struct ibv_context *vt_open(const char *prog, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		vt_die(prog, name);
	return ctx;
}

int vt_ipv4_gid(const char *prog, struct ibv_context *ctx)
{
	union ibv_gid gid;

	for (int i = 0; i < 16 && !ibv_query_gid(ctx, 1, i, &gid); i++)
		if (gid.raw[10] == 0xff && gid.raw[11] == 0xff)
			return i;
	errno = ENOENT;
	vt_die(prog, "no IPv4 GID");
	return -1;
}

void vt_rc_connect(const char *prog, struct ibv_qp *q, int gid_index,
		   uint32_t dest, uint8_t timeout)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };
	union ibv_gid gid;

	if (ibv_query_gid(q->context, 1, gid_index, &gid))
		vt_die(prog, "ibv_query_gid");
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		vt_die(prog, "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		vt_die(prog, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		vt_die(prog, "RTS");
}

struct ibv_wc vt_wait_wc(const char *prog, struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	for (int i = 0; i < 10000000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			vt_die(prog, "ibv_poll_cq");
		if (n)
			return wc;
		if (i > 1000)
			usleep(10);
	}
	fprintf(stderr, "%s: no completion\n", prog);
	exit(1);
}

enum ibv_wc_status vt_post1(const char *prog, struct ibv_qp *q,
			    enum ibv_wr_opcode op, void *buf, uint32_t lkey,
			    uint32_t len, uint64_t raddr, uint32_t rkey,
			    uint64_t a, uint64_t b)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf,
			       .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 7,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = a;
		wr.wr.atomic.swap = b;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(q, &wr, &bad))
		vt_die(prog, "ibv_post_send");
	return vt_wait_wc(prog, q->send_cq).status;
}
