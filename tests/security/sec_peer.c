// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sec_peer: the verbs side of the hostile-network tests (built against the
 * system's <infiniband/verbs.h>, run on build/lib's libibverbs).
 *
 *   sec_peer -d DEV -g GID server PORT
 *       The victim: an RC QP and a 64 KiB MR (remote write) filled with
 *       0x5a, connected to the client (TCP on PORT for the exchange). It
 *       prints "qpn 0x.. rkey 0x.. va 0x.." and waits for the client's
 *       transfer: RDMA Writes into the first 32 KiB, then a Send. Exit 0
 *       if the first half holds exactly what the client wrote and the
 *       second half is still all 0x5a (whatever was aimed at it).
 *   sec_peer -d DEV -g GID [-w FILE] client HOST PORT
 *       The real peer: connects, then (once FILE exists) writes the first
 *       half of the server's MR in 4 KiB RDMA Writes, and Sends.
 *   sec_peer -d DEV -g GID keys
 *       Prints "rkey 0x........" of its first MR; then, over two RC QPs of
 *       the device connected to each other (loopback), an RDMA Write with
 *       any one byte of that R_Key wrong completes with a remote access
 *       error, and with the right key it lands.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BUF_LEN (64 * 1024)
#define HALF (BUF_LEN / 2)
#define CHUNK 4096

struct peer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	int gidx;
	union ibv_gid gid;
};

/* What the two sides tell each other over TCP */
struct hello {
	uint32_t qpn, psn, rkey, pad;
	uint64_t va;
	uint8_t gid[16];
};

static void die(const char *what)
{
	fprintf(stderr, "sec_peer: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint8_t pattern(uint32_t i)
{
	return (uint8_t)(i * 13 + 7);
}

static void peer_open(struct peer *p, const char *dev, int gidx)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	int i;

	if (!l)
		die("ibv_get_device_list");
	for (i = 0; l[i] && strcmp(ibv_get_device_name(l[i]), dev); i++)
		;
	if (!l[i]) {
		fprintf(stderr, "sec_peer: no device %s\n", dev);
		exit(2);
	}
	p->ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!p->ctx)
		die("ibv_open_device");
	p->gidx = gidx;
	if (ibv_query_gid(p->ctx, 1, gidx, &p->gid))
		die("ibv_query_gid");
	p->pd = ibv_alloc_pd(p->ctx);
	p->buf = aligned_alloc(4096, BUF_LEN);
	if (!p->pd || !p->buf)
		die("alloc");
	memset(p->buf, 0x5a, BUF_LEN);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	p->cq = ibv_create_cq(p->ctx, 64, NULL, NULL, 0);
	if (!p->mr || !p->cq)
		die("reg_mr/create_cq");
}

static struct ibv_qp *qp_new(struct peer *p)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

/* RESET (if not already) -> INIT -> RTR (to qpn at gid) -> RTS */
static void qp_connect(struct peer *p, struct ibv_qp *qp, uint32_t dqpn,
		       uint32_t rpsn, uint32_t spsn, const uint8_t *dgid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("to RESET");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	a.ah_attr.grh.sgid_index = p->gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = spsn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("to RTS");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * n completions (all of them successful unless statuses is given); the
 * server's waits as long as the test lets it (timeout(1) around it)
 */
static int wait_s = 60;

static void wait_wc(struct peer *p, int n, enum ibv_wc_status *statuses)
{
	double end = now_s() + wait_s;
	struct ibv_wc wc;

	while (n > 0) {
		int r = ibv_poll_cq(p->cq, 1, &wc);

		if (r < 0)
			die("ibv_poll_cq");
		if (!r) {
			if (now_s() > end) {
				fprintf(stderr, "sec_peer: no completion\n");
				exit(1);
			}
			continue;
		}
		if (statuses) {
			*statuses++ = wc.status;
		} else if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "sec_peer: completion %s\n",
				ibv_wc_status_str(wc.status));
			exit(1);
		}
		n--;
	}
}

static void post_write(struct peer *p, struct ibv_qp *qp, uint32_t off,
		       uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)p->buf + off, len, p->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &s,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	errno = ibv_post_send(qp, &wr, &bad);
	if (errno)
		die("ibv_post_send");
}

static uint32_t random_psn(void)
{
	return (uint32_t)((unsigned long)now_s() * 2654435761UL ^ getpid()) &
	       0xffffff;
}

static void xfer(int fd, struct hello *mine, struct hello *theirs)
{
	if (write(fd, mine, sizeof(*mine)) != sizeof(*mine) ||
	    read(fd, theirs, sizeof(*theirs)) != sizeof(*theirs))
		die("hello exchange");
}

static int server(struct peer *p, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct hello me = { 0 }, them;
	/* the client's 1-byte Send lands on byte 0, which it wrote already */
	struct ibv_sge s = { (uintptr_t)p->buf, 1, p->mr->lkey };
	struct ibv_recv_wr rw = { .sg_list = &s, .num_sge = 1 }, *rbad;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, on = 1;
	uint32_t bad = 0, i;

	p->qp = qp_new(p);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(lfd, (void *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	me.qpn = p->qp->qp_num;
	me.psn = random_psn();
	me.rkey = p->mr->rkey;
	me.va = (uintptr_t)p->buf;
	memcpy(me.gid, p->gid.raw, 16);
	xfer(fd, &me, &them);
	qp_connect(p, p->qp, them.qpn, them.psn, me.psn, them.gid);
	errno = ibv_post_recv(p->qp, &rw, &rbad);
	if (errno)
		die("ibv_post_recv");
	/* connected and ready: the client starts only when told */
	if (write(fd, "k", 1) != 1)
		die("ready");
	printf("qpn 0x%x rkey 0x%x va 0x%llx\n", p->qp->qp_num, me.rkey,
	       (unsigned long long)me.va);
	fflush(stdout);
	wait_s = 3600;
	wait_wc(p, 1, NULL); /* the client's Send: its writes came first */
	wait_s = 60;
	for (i = 0; i < BUF_LEN; i++)
		if (p->buf[i] != (i < HALF ? pattern(i) : 0x5a))
			bad++;
	if (bad) {
		fprintf(stderr, "FAIL: %u bytes of the MR are wrong\n", bad);
		return 1;
	}
	printf("ok: the client's %d bytes landed, the other %d untouched\n",
	       HALF, BUF_LEN - HALF);
	return 0;
}

static int client(struct peer *p, const char *host, int port,
		  const char *go_file)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	struct hello me = { 0 }, them;
	char portstr[16], c;
	int fd;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(host, portstr, &hints, &ai))
		die("getaddrinfo");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	for (int t = 0; connect(fd, ai->ai_addr, ai->ai_addrlen); t++) {
		if (t == 100)
			die("connect");
		usleep(100000);
	}
	freeaddrinfo(ai);
	p->qp = qp_new(p);
	me.qpn = p->qp->qp_num;
	me.psn = random_psn();
	memcpy(me.gid, p->gid.raw, 16);
	xfer(fd, &me, &them);
	qp_connect(p, p->qp, them.qpn, them.psn, me.psn, them.gid);
	if (read(fd, &c, 1) != 1)
		die("ready");
	printf("connected\n");
	fflush(stdout);
	while (go_file && access(go_file, F_OK))
		usleep(20000);
	for (uint32_t i = 0; i < HALF; i++)
		p->buf[i] = pattern(i);
	for (uint32_t off = 0; off < HALF; off += CHUNK)
		post_write(p, p->qp, off, CHUNK, them.va + off, them.rkey);
	wait_wc(p, HALF / CHUNK, NULL);
	{
		struct ibv_sge s = { (uintptr_t)p->buf, 1, p->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &s,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		errno = ibv_post_send(p->qp, &wr, &bad);
		if (errno)
			die("ibv_post_send");
		wait_wc(p, 1, NULL);
	}
	printf("ok: wrote %d bytes and sent\n", HALF);
	return 0;
}

static int keys(struct peer *p)
{
	struct ibv_qp *a = qp_new(p), *b = qp_new(p);
	uint32_t rkey = p->mr->rkey;
	enum ibv_wc_status st[2];
	int fails = 0;

	printf("rkey 0x%08x\n", rkey);
	fflush(stdout);
	for (int byte = 0; byte <= 4; byte++) {
		uint32_t k = byte < 4 ? rkey ^ (0xa5U << 8 * byte) : rkey;

		qp_connect(p, a, b->qp_num, 0x1000, 0x2000, p->gid.raw);
		qp_connect(p, b, a->qp_num, 0x2000, 0x1000, p->gid.raw);
		memset(p->buf + HALF, 0, 64);
		post_write(p, a, 0, 64, (uintptr_t)p->buf + HALF, k);
		wait_wc(p, 1, st);
		if (st[0] !=
		    (byte < 4 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS)) {
			fprintf(stderr,
				"FAIL: R_Key 0x%08x (byte %d wrong): %s\n", k,
				byte, ibv_wc_status_str(st[0]));
			fails++;
		} else if (byte < 4 && p->buf[HALF] != 0) {
			fprintf(stderr, "FAIL: a wrong R_Key wrote\n");
			fails++;
		}
		/* an error took both QPs to ERR: their flushes, if any */
		while (ibv_poll_cq(p->cq, 2, (struct ibv_wc[2]){ 0 }) > 0)
			;
	}
	if (memcmp(p->buf + HALF, p->buf, 64))
		fails++,
			fprintf(stderr, "FAIL: the right R_Key did not land\n");
	if (!fails)
		printf("ok: every wrong key byte is a remote access error, the "
		       "right key lands\n");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *go = NULL;
	struct peer p = { 0 };
	int gidx = 0, o;

	while ((o = getopt(argc, argv, "d:g:w:")) != -1) {
		if (o == 'd')
			dev = optarg;
		else if (o == 'g')
			gidx = atoi(optarg);
		else if (o == 'w')
			go = optarg;
		else
			return 2;
	}
	if (!dev || optind >= argc)
		goto usage;
	peer_open(&p, dev, gidx);
	if (!strcmp(argv[optind], "server") && optind + 2 == argc)
		return server(&p, atoi(argv[optind + 1]));
	if (!strcmp(argv[optind], "client") && optind + 3 == argc)
		return client(&p, argv[optind + 1], atoi(argv[optind + 2]), go);
	if (!strcmp(argv[optind], "keys") && optind + 1 == argc)
		return keys(&p);
usage:
	fprintf(stderr, "usage: see the header of %s\n", __FILE__);
	return 2;
}
