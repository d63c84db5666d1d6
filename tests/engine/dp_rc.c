// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The engine on rxdpd's data path, for tests/engine/daemon_e2e.sh: one RC
 * QP per side, made and moved through the daemon (which resolves the path
 * and writes the QP context the XDP program steers by), the engine on the
 * AF_XDP sockets the daemon provisions on our UMEM (rxdp_engine_dp_open).
 *
 *   dp_rc server IFNAME PEER_IPV4 DIR   passive: posts receives, checks them
 *   dp_rc client IFNAME PEER_IPV4 DIR   Send/Write/Read/atomics, all checked
 *
 * The two exchange "qpn psn rkey addr" through DIR/server and DIR/client.
 * Exit 0 when all checks held; 3 when the setup worked but no packet ever
 * came back (the XDP program does not steer to AF_XDP sockets yet); 1 on a
 * failed check; 2 on a setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <linux/if_xdp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "common/ctl_client.h"
#include "common/log.h"
#include "engine/engine.h"

#define BUF (16u << 20)
/* the server's memory: receive buffers, then what the client writes and
 * reads, the Read source, the atomic target */
#define RECV_SLOT (3u << 19)
#define W_OFF (10u << 20)
#define R_SRC (12u << 20)
#define R_LEN (512u << 10)
#define A_OFF (15u << 20)
#define NRECV 64

static int failures;
#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			failures++;                                          \
		}                                                            \
	} while (0)

struct peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 2654435761u + seed) >> 9);
}

static int publish(const char *dir, const char *who, const struct peer *p)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, who);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u %u %u %llu\n", p->qpn, p->psn, p->rkey,
		(unsigned long long)p->addr);
	fclose(f);
	return rename(tmp, path);
}

static int await(const char *dir, const char *who, struct peer *p)
{
	char path[512];
	double end = now_s() + 30;

	snprintf(path, sizeof(path), "%s/%s", dir, who);
	while (now_s() < end) {
		FILE *f = fopen(path, "r");
		unsigned long long a;

		if (f) {
			int n = fscanf(f, "%u %u %u %llu", &p->qpn, &p->psn,
				       &p->rkey, &a);

			fclose(f);
			if (n == 4) {
				p->addr = a;
				return 0;
			}
		}
		usleep(20000);
	}
	return -1;
}

/* The GID index holding our IPv4 address (an IPv4-mapped RoCEv2 GID) */
static int find_sgid(struct rxdp_ctl *c, uint32_t ifindex)
{
	for (uint32_t i = 0; i < 16; i++) {
		struct rxdp_gid_entry g;

		if (rxdp_ctl_query_gid(c, ifindex, i, &g))
			break;
		static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

		/* all 12 bytes: a link-local GID can have ff in byte 10/11 */
		if (!memcmp(g.gid, v4mapped, sizeof(v4mapped)))
			return i;
	}
	return -1;
}

static int wait_wc(struct rxdp_ecq *cq, struct ibv_wc *wc, int n, double secs)
{
	double end = now_s() + secs;
	int got = 0;

	while (got < n && now_s() < end) {
		int r = rxdp_engine_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (!r)
			usleep(50);
	}
	return got;
}

static void post(struct rxdp_eqp *qp, struct rxdp_emr *mr, uint8_t *buf,
		 enum ibv_wr_opcode op, uint64_t id, uint32_t off, uint32_t len,
		 const struct peer *pr, uint64_t roff, uint32_t imm)
{
	struct ibv_sge s = { .addr = (uintptr_t)buf + off,
			     .length = len,
			     .lkey = rxdp_emr_lkey(mr) };
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(imm) };
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = pr->addr + roff;
		wr.wr.atomic.rkey = pr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = pr->addr + roff;
		wr.wr.rdma.rkey = pr->rkey;
	}
	CHECK(!rxdp_engine_post_send(qp, &wr, &bad), "post_send op %d", op);
}

int main(int argc, char **argv)
{
	const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, (1u << 20) + 3 };
	struct rxdp_qp_attr qa;
	struct rxdp_qp_info info;
	struct rxdp_eqp_init init = { 0 };
	struct ibv_qp_attr ia = { 0 };
	struct rxdp_engine_dp *dp;
	struct rxdp_ecq *scq, *rcq;
	struct rxdp_eqp *qp;
	struct rxdp_emr *mr;
	struct rxdp_ctl *c;
	struct peer me, pr;
	struct in_addr peer_ip;
	struct ibv_wc wc[NRECV];
	uint32_t ifindex, qpn;
	uint8_t *buf;
	int server, sgid, got;

	if (argc != 5 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
	    !inet_aton(argv[3], &peer_ip)) {
		fprintf(stderr,
			"usage: dp_rc server|client IFNAME PEER_IPV4 DIR\n");
		return 2;
	}
	server = !strcmp(argv[1], "server");
	if (getenv("RXDP_DEBUG"))
		rxdp_log_set_level(RXDP_LOG_DEBUG);
	ifindex = if_nametoindex(argv[2]);
	c = rxdp_ctl_connect(NULL);
	if (!ifindex || !c) {
		fprintf(stderr, "no interface or no rxdpd: %s\n",
			strerror(errno));
		return 2;
	}
	dp = rxdp_engine_dp_open(c, ifindex, 0, NULL);
	if (!dp) {
		fprintf(stderr, "data path: %s (%s)\n", strerror(errno),
			rxdp_ctl_strerror(c));
		return 2;
	}
	scq = rxdp_engine_create_cq(dp->engine, 1024, NULL, NULL);
	rcq = rxdp_engine_create_cq(dp->engine, 1024, NULL, NULL);
	buf = aligned_alloc(4096, BUF);
	if (!scq || !rcq || !buf)
		return 2;
	memset(buf, 0, BUF);
	mr = rxdp_engine_reg_mr(
		dp->engine, buf, BUF, (uintptr_t)buf,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr || rxdp_ctl_create_qp(c, ifindex, IBV_QPT_RC, &qpn)) {
		fprintf(stderr, "MR or QP: %s\n", rxdp_ctl_strerror(c));
		return 2;
	}
	init.qpn = qpn;
	init.qp_type = IBV_QPT_RC;
	init.send_cq = scq;
	init.recv_cq = rcq;
	init.cap = (struct ibv_qp_cap){ .max_send_wr = 256,
					.max_recv_wr = NRECV,
					.max_send_sge = 1,
					.max_recv_sge = 1 };
	qp = rxdp_engine_create_qp(dp->engine, &init);
	if (!qp)
		return 2;
	me = (struct peer){ .qpn = qpn,
			    .psn = server ? 4000 : 0xfffff0,
			    .rkey = rxdp_emr_rkey(mr),
			    .addr = (uintptr_t)buf };
	if (publish(argv[4], argv[1], &me) ||
	    await(argv[4], server ? "client" : "server", &pr)) {
		fprintf(stderr, "no peer\n");
		return 2;
	}
	sgid = find_sgid(c, ifindex);
	if (sgid < 0) {
		fprintf(stderr, "no IPv4 GID on %s\n", argv[2]);
		return 2;
	}

	/* INIT, RTR, RTS through the daemon, then the engine */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC;
	if (rxdp_ctl_modify_qp(c, ifindex, qpn, &qa,
			       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS,
			       &info))
		goto ctl_err;
	ia.qp_state = IBV_QPS_INIT;
	ia.qp_access_flags = qa.qp_access_flags;
	rxdp_engine_qp_modify(qp, &ia, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
			      NULL);
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_1024;
	qa.dest_qp_num = pr.qpn;
	qa.rq_psn = pr.psn;
	qa.max_dest_rd_atomic = 4;
	qa.min_rnr_timer = 1;
	qa.ah.sgid_index = sgid;
	qa.ah.hop_limit = 64;
	qa.ah.dgid[10] = qa.ah.dgid[11] = 0xff;
	memcpy(qa.ah.dgid + 12, &peer_ip, 4);
	if (rxdp_ctl_modify_qp(c, ifindex, qpn, &qa,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER,
			       &info))
		goto ctl_err;
	ia.qp_state = IBV_QPS_RTR;
	ia.path_mtu = IBV_MTU_1024;
	ia.dest_qp_num = pr.qpn;
	ia.rq_psn = pr.psn;
	ia.max_dest_rd_atomic = 4;
	ia.min_rnr_timer = 1;
	if (rxdp_engine_qp_modify(qp, &ia,
				  IBV_QP_STATE | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER,
				  &info.path))
		return 2;
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = me.psn;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.max_rd_atomic = 4;
	if (rxdp_ctl_modify_qp(c, ifindex, qpn, &qa,
			       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC,
			       &info))
		goto ctl_err;
	ia.qp_state = IBV_QPS_RTS;
	ia.sq_psn = me.psn;
	ia.timeout = 14;
	ia.retry_cnt = 7;
	ia.rnr_retry = 7;
	ia.max_rd_atomic = 4;
	rxdp_engine_qp_modify(qp, &ia,
			      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				      IBV_QP_MAX_QP_RD_ATOMIC,
			      NULL);
	if (server) {
		/*
		 * Receives for the client's Sends, posted before we say we
		 * are ready. Its Writes, Reads and atomics land here with no
		 * call from us (the progress thread). The client's Sends carry
		 * fill(seed = size index).
		 */
		for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0]));
		     i++) {
			struct ibv_sge s = { .addr = (uintptr_t)buf +
						     i * RECV_SLOT,
					     .length = RECV_SLOT,
					     .lkey = rxdp_emr_lkey(mr) };
			struct ibv_recv_wr r = { .wr_id = i,
						 .sg_list = &s,
						 .num_sge = 1 };
			struct ibv_recv_wr *bad;

			CHECK(!rxdp_engine_post_recv(qp, &r, &bad),
			      "post_recv");
		}
	}
	/* the client's Read source, in place before the client may read it */
	if (server)
		fill(buf + R_SRC, R_LEN, 77);
	/* both QPs in RTS before the first packet (else XDP drops it) */
	{
		struct peer ready;
		char mine[32], theirs[32];

		snprintf(mine, sizeof(mine), "%s-ready", argv[1]);
		snprintf(theirs, sizeof(theirs), "%s-ready",
			 server ? "client" : "server");
		if (publish(argv[4], mine, &me) ||
		    await(argv[4], theirs, &ready))
			return 2;
	}
	printf("%s: QP %#x -> %#x, %u queue(s), %s\n", argv[1], qpn, pr.qpn,
	       dp->dp.num_queues,
	       dp->dp.bind_flags & XDP_ZEROCOPY ? "zero-copy" : "copy");

	if (server) {
		/* up to 60 s, or until the client gave up */
		got = 0;
		for (int t = 0;
		     t < 60 && got < (int)(sizeof(sizes) / sizeof(sizes[0]));
		     t++) {
			char done[512];
			int r;

			r = wait_wc(rcq, wc + got,
				    sizeof(sizes) / sizeof(sizes[0]) - got, 1);
			if (r < 0)
				break;
			got += r;
			snprintf(done, sizeof(done), "%s/client-done", argv[4]);
			if (!got && !access(done, F_OK))
				break;
		}
		if (got <= 0) {
			fprintf(stderr, "server: nothing received\n");
			return failures ? 1 : 3;
		}
		for (int i = 0; i < got; i++) {
			uint8_t *m = buf + wc[i].wr_id * RECV_SLOT;
			uint8_t *want = malloc(wc[i].byte_len + 1);

			CHECK(wc[i].status == IBV_WC_SUCCESS, "recv status %d",
			      wc[i].status);
			CHECK(wc[i].byte_len == sizes[wc[i].wr_id],
			      "recv %llu: %u bytes",
			      (unsigned long long)wc[i].wr_id, wc[i].byte_len);
			fill(want, wc[i].byte_len, wc[i].wr_id);
			CHECK(!memcmp(m, want, wc[i].byte_len),
			      "recv %llu: payload differs",
			      (unsigned long long)wc[i].wr_id);
			free(want);
		}
		CHECK(got == (int)(sizeof(sizes) / sizeof(sizes[0])),
		      "%d receives", got);
		/* stay up while the client reads and writes */
		publish(argv[4], "server-done", &me);
		await(argv[4], "client-done", &pr);
	} else {
		uint64_t wsum = 0;

		for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0]));
		     i++) {
			uint32_t len = sizes[i];

			fill(buf, len, i);
			post(qp, mr, buf, IBV_WR_SEND, 100 + i, 0, len, &pr, 0,
			     0);
			got = wait_wc(scq, wc, 1, 30);
			if (i == 0 && (got <= 0 ||
				       wc[0].status == IBV_WC_RETRY_EXC_ERR)) {
				struct rxdp_engine_stats st;

				struct xdp_statistics xs = { 0 };
				socklen_t xl = sizeof(xs);

				rxdp_engine_get_stats(dp->engine, &st);
				getsockopt(dp->dp.xsk_fds[0], SOL_XDP,
					   XDP_STATISTICS, &xs, &xl);
				printf("%s: xsk rx_dropped %llu rx_ring_full "
				       "%llu "
				       "fill_ring_empty %llu; engine seq NAKs "
				       "%llu psn drops "
				       "%llu dup %llu\n",
				       argv[1],
				       (unsigned long long)xs.rx_dropped,
				       (unsigned long long)xs.rx_ring_full,
				       (unsigned long long)
					       xs.rx_fill_ring_empty_descs,
				       (unsigned long long)st.seq_naks_sent,
				       (unsigned long long)st.rx_drop_psn,
				       (unsigned long long)st.rx_duplicates);
				if (!st.rx_packets) {
					fprintf(stderr, "client: no answer\n");
					publish(argv[4], "client-done", &me);
					return failures ? 1 : 3;
				}
			}
			CHECK(got == 1 && wc[0].status == IBV_WC_SUCCESS,
			      "send %u: %d %d", len, got, wc[0].status);
			/* Write then Read back into another buffer */
			fill(buf + BUF / 4, len, 1000 + i);
			post(qp, mr, buf, IBV_WR_RDMA_WRITE, 200 + i, BUF / 4,
			     len, &pr, W_OFF, 0);
			post(qp, mr, buf, IBV_WR_RDMA_READ, 300 + i, BUF / 2,
			     len, &pr, W_OFF, 0);
			got = wait_wc(scq, wc, 2, 30);
			CHECK(got == 2 && wc[0].status == IBV_WC_SUCCESS &&
				      wc[1].status == IBV_WC_SUCCESS,
			      "write/read %u: %d", len, got);
			CHECK(!memcmp(buf + BUF / 2, buf + BUF / 4, len),
			      "read back %u bytes: differs", len);
			wsum += len;
		}
		/* the server's Read source */
		{
			uint8_t *want = malloc(R_LEN);

			fill(want, R_LEN, 77);
			post(qp, mr, buf, IBV_WR_RDMA_READ, 400, 0, R_LEN, &pr,
			     R_SRC, 0);
			got = wait_wc(scq, wc, 1, 30);
			CHECK(got == 1 && wc[0].status == IBV_WC_SUCCESS,
			      "big read");
			CHECK(!memcmp(buf, want, R_LEN), "big read differs");
			free(want);
		}
		/* 16 fetch-adds on one word, answers in order */
		for (int i = 0; i < 16; i++)
			post(qp, mr, buf, IBV_WR_ATOMIC_FETCH_AND_ADD, 500 + i,
			     8 * i, 8, &pr, A_OFF, 0);
		got = wait_wc(scq, wc, 16, 30);
		CHECK(got == 16, "atomics: %d", got);
		for (int i = 0; i < got; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
				      ((uint64_t *)buf)[i] == (uint64_t)i,
			      "fetch-add %d: status %d, got %llu", i,
			      wc[i].status,
			      (unsigned long long)((uint64_t *)buf)[i]);
		await(argv[4], "server-done", &pr);
		publish(argv[4], "client-done", &me);
		printf("client: %llu bytes each way checked\n",
		       (unsigned long long)wsum);
	}
	{
		struct rxdp_engine_stats st;

		struct xdp_statistics xs = { 0 };
		socklen_t xl = sizeof(xs);

		rxdp_engine_get_stats(dp->engine, &st);
		getsockopt(dp->dp.xsk_fds[0], SOL_XDP, XDP_STATISTICS, &xs,
			   &xl);
		printf("%s: xsk rx_dropped %llu rx_ring_full %llu "
		       "fill_ring_empty %llu; engine seq NAKs %llu psn drops "
		       "%llu dup %llu\n",
		       argv[1], (unsigned long long)xs.rx_dropped,
		       (unsigned long long)xs.rx_ring_full,
		       (unsigned long long)xs.rx_fill_ring_empty_descs,
		       (unsigned long long)st.seq_naks_sent,
		       (unsigned long long)st.rx_drop_psn,
		       (unsigned long long)st.rx_duplicates);
		printf("%s: tx %llu rx %llu retransmits %llu timeouts %llu "
		       "icrc drops %llu\n",
		       argv[1], (unsigned long long)st.tx_packets,
		       (unsigned long long)st.rx_packets,
		       (unsigned long long)st.retransmits,
		       (unsigned long long)st.timeouts,
		       (unsigned long long)st.rx_drop_icrc);
	}
	rxdp_ctl_destroy_qp(c, ifindex, qpn);
	rxdp_engine_destroy_qp(qp);
	rxdp_engine_dereg_mr(mr);
	rxdp_engine_destroy_cq(scq);
	rxdp_engine_destroy_cq(rcq);
	rxdp_engine_dp_close(dp);
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
ctl_err:
	fprintf(stderr, "rxdpd: %s\n", rxdp_ctl_strerror(c));
	return 2;
}
