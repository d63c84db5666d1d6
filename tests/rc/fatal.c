// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fatal DEVICE: what a verbs program sees when rxdpd goes away under it.
 * Built against the system's <infiniband/verbs.h>, run on build/lib's
 * libibverbs (tests/rc/restart.sh).
 *
 * Makes an RC QP (INIT) with 5 receive WQEs (wr_id 100..104) and another
 * (RTS, connected to a QPN nobody has) with 3 send WQEs (wr_id 200..202,
 * unsignaled but the last), prints "ready" and waits for a line on stdin
 * (meanwhile the test kills rxdpd). Then, as the README says an HCA in a
 * fatal state does: within 5 s every WQE comes back from its CQ with
 * IBV_WC_WR_FLUSH_ERR, in order; ibv_get_async_event gives
 * IBV_EVENT_DEVICE_FATAL; both QPs read ERR (ibv_query_qp); a send posted
 * after that is accepted and comes back flushed too; and once everything
 * is back, ibv_poll_cq fails with EIO. Exit 0 when all of it held; else a
 * line says what did not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "../lib/vtest.h"

static int die(const char *what)
{
	fprintf(stderr, "fatal: %s\n", what);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n completions from cq, each flushed, with wr_ids first, first+1, ... */
static void expect_flushed(struct ibv_cq *cq, uint64_t first, int n)
{
	double end = now_s() + 5;
	int got = 0;

	while (got < n) {
		struct ibv_wc wc;
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0)
			die("ibv_poll_cq fails before the WQEs came back");
		if (r <= 0) {
			if (now_s() > end)
				die("the WQEs did not come back within 5 s");
			continue;
		}
		if (wc.status != IBV_WC_WR_FLUSH_ERR) {
			fprintf(stderr, "fatal: wr_id %llu: status %s\n",
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.wr_id != first + (uint64_t)got) {
			fprintf(stderr, "fatal: wr_id %llu, expected %llu\n",
				(unsigned long long)wc.wr_id,
				(unsigned long long)(first + (uint64_t)got));
			exit(1);
		}
		got++;
	}
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_async_event ev;
	static char buf[4096];
	char line[16];
	int i;

	if (argc != 2)
		die("usage: fatal DEVICE");
	ctx = vt_open("fatal", argv[1]);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *rcq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_cq *scq = rcq ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr =
		scq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)
		    : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *rq = mr ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_qp *sq = rq ? ibv_create_qp(pd, &ia) : NULL;

	if (!sq)
		die("cannot make the objects");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;

	if (ibv_modify_qp(rq, &a, init))
		die("INIT");
	for (i = 0; i < 5; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *bad;

		if (ibv_post_recv(rq, &wr, &bad))
			die("ibv_post_recv");
	}
	/* the sender: RTS towards a QPN nobody has, no timeout within the test */
	vt_rc_connect("fatal", sq, vt_ipv4_gid("fatal", ctx), 0xabcde, 31);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 200 + i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags =
						  i == 2 ? IBV_SEND_SIGNALED
							 : 0 },
				   *bad;

		if (ibv_post_send(sq, &wr, &bad))
			die("ibv_post_send");
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("no go-ahead on stdin");

	expect_flushed(rcq, 100, 5);
	expect_flushed(scq, 200, 3);
	if (ibv_get_async_event(ctx, &ev))
		die("ibv_get_async_event failed");
	if (ev.event_type != IBV_EVENT_DEVICE_FATAL) {
		fprintf(stderr, "fatal: async event %s, not a fatal one\n",
			ibv_event_type_str(ev.event_type));
		return 1;
	}
	ibv_ack_async_event(&ev);
	for (i = 0; i < 2; i++) {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		if (ibv_query_qp(i ? sq : rq, &qa, IBV_QP_STATE, &qi))
			die("ibv_query_qp fails after the fatal event");
		if (qa.qp_state != IBV_QPS_ERR) {
			fprintf(stderr,
				"fatal: the %s QP reads state %d, not ERR\n",
				i ? "sending" : "receiving", qa.qp_state);
			return 1;
		}
	}
	{
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 300,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND },
				   *bad;

		if (ibv_post_send(sq, &wr, &bad))
			die("a send posted after the fatal event is refused");
		expect_flushed(scq, 300, 1);
	}
	/* everything is back: the CQs have nothing more, and say so */
	for (i = 0; i < 2; i++) {
		struct ibv_wc wc;
		int r = ibv_poll_cq(i ? scq : rcq, 1, &wc);

		if (r != -EIO) {
			fprintf(stderr,
				"fatal: ibv_poll_cq on the %s CQ returns %d, "
				"not -EIO\n",
				i ? "send" : "receive", r);
			return 1;
		}
	}
	printf("flushed: 5 receives, 3 sends, then 1; IBV_EVENT_DEVICE_FATAL; "
	       "QPs in ERR; then ibv_poll_cq -EIO\n");
	return 0;
}
