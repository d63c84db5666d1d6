// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the verbs test programs share (vtest.h) */
#include <endian.h>
#include <stdbool.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	union ibv_gid gid;

	if (ibv_query_gid(q->context, 1, gid_index, &gid))
		vt_die(prog, "ibv_query_gid");
	vt_rc_connect_gid(prog, q, gid_index, dest, &gid, timeout);
}

void vt_rc_connect_gid(const char *prog, struct ibv_qp *q, int gid_index,
		       uint32_t dest, const union ibv_gid *dgid,
		       uint8_t timeout)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };
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
	a.ah_attr.grh.dgid = *dgid;
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

/* --- a requester on another host ---------------------------------------- */

enum {
	VT_CONNECT = 1,
	VT_POST
};

/* what a test asks of its agent, and its answer (network order) */
struct vt_req {
	uint32_t kind, op, len, rkey;
	uint64_t raddr, a, b;
	uint32_t qpn;
	uint8_t gid[16];
};
struct vt_rep {
	uint32_t status, len, qpn;
	uint8_t gid[16];
};

#define VT_AGENT_BUF (16u << 20)

static int vt_fd = -1;

static void vt_io(const char *prog, int fd, void *p, size_t n, int out)
{
	char *c = p;

	while (n) {
		ssize_t r = out ? write(fd, c, n) : read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!out && !r)
				errno = ECONNRESET;
			vt_die(prog, "the agent's connection");
		}
		c += r;
		n -= (size_t)r;
	}
}

void vt_agent(const char *prog, struct ibv_context *ctx, int gid_index,
	      const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE,
				  .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 1,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	uint8_t *buf = malloc(VT_AGENT_BUF);
	struct ibv_mr *mr = buf && cq ? ibv_reg_mr(pd, buf, VT_AGENT_BUF,
						   IBV_ACCESS_LOCAL_WRITE)
				      : NULL;
	struct ibv_qp *q = NULL;
	union ibv_gid gid;
	int one = 1, lsn, fd;

	if (!mr || ibv_query_gid(ctx, 1, gid_index, &gid))
		vt_die(prog, "the agent's objects");
	ia.send_cq = ia.recv_cq = cq;
	if (getaddrinfo(NULL, port, &hints, &ai))
		vt_die(prog, "the agent's port");
	lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (lsn < 0 ||
	    setsockopt(lsn, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lsn, ai->ai_addr, ai->ai_addrlen) || listen(lsn, 1))
		vt_die(prog, "listen");
	freeaddrinfo(ai);
	printf("agent: listening on %s\n", port);
	fflush(stdout);
	fd = accept(lsn, NULL, NULL);
	if (fd < 0)
		vt_die(prog, "accept");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		struct vt_req r;
		struct vt_rep a = { 0 };
		uint32_t len, n = 0;
		ssize_t got = read(fd, &r, sizeof(r));

		if (got == 0)
			exit(0);
		if (got != (ssize_t)sizeof(r))
			vt_io(prog, fd, (char *)&r + (got > 0 ? got : 0),
			      sizeof(r) - (size_t)(got > 0 ? got : 0), 0);
		len = be32toh(r.len);
		if (len > VT_AGENT_BUF) {
			errno = E2BIG;
			vt_die(prog, "a request");
		}
		if (be32toh(r.kind) == VT_CONNECT) {
			union ibv_gid peer;

			if (q && ibv_destroy_qp(q))
				vt_die(prog, "ibv_destroy_qp");
			q = ibv_create_qp(pd, &ia);
			if (!q)
				vt_die(prog, "ibv_create_qp");
			memcpy(peer.raw, r.gid, 16);
			vt_rc_connect_gid(prog, q, gid_index, be32toh(r.qpn),
					  &peer, 14);
			a.qpn = htobe32(q->qp_num);
			memcpy(a.gid, gid.raw, 16);
		} else {
			enum ibv_wr_opcode op =
				(enum ibv_wr_opcode)be32toh(r.op);
			bool atomic = op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
				      op == IBV_WR_ATOMIC_CMP_AND_SWP;
			enum ibv_wc_status st;

			if (!q) {
				errno = ENOTCONN;
				vt_die(prog, "a request before a QP");
			}
			if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND)
				vt_io(prog, fd, buf, len, 0);
			st = vt_post1(prog, q, op, buf, mr->lkey,
				      atomic ? 8 : len, be64toh(r.raddr),
				      be32toh(r.rkey), be64toh(r.a),
				      be64toh(r.b));
			n = op == IBV_WR_RDMA_READ ? len : atomic ? 8 : 0;
			a.status = htobe32(st);
		}
		a.len = htobe32(n);
		vt_io(prog, fd, &a, sizeof(a), 1);
		vt_io(prog, fd, buf, n, 1);
	}
}

int vt_remote(const char *prog)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const char *peer = getenv("VT_PEER");
	char host[256], *port;
	int one = 1;

	if (vt_fd >= 0 || !peer)
		return vt_fd >= 0;
	snprintf(host, sizeof(host), "%s", peer);
	port = strrchr(host, ':');
	if (!port) {
		errno = EINVAL;
		vt_die(prog, "VT_PEER (HOST:PORT)");
	}
	*port++ = '\0';
	if (getaddrinfo(host, port, &hints, &ai))
		vt_die(prog, "VT_PEER's address");
	/* the agent may not listen yet */
	for (int i = 0; i < 100 && vt_fd < 0; i++) {
		vt_fd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (vt_fd >= 0 && connect(vt_fd, ai->ai_addr, ai->ai_addrlen)) {
			close(vt_fd);
			vt_fd = -1;
			usleep(100000);
		}
	}
	freeaddrinfo(ai);
	if (vt_fd < 0)
		vt_die(prog, "connect to the agent");
	setsockopt(vt_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 1;
}

void vt_remote_connect(const char *prog, struct ibv_qp *q, int gid_index)
{
	struct vt_req r = { .kind = htobe32(VT_CONNECT),
			    .qpn = htobe32(q->qp_num) };
	struct vt_rep a;
	union ibv_gid gid, peer;

	vt_remote(prog);
	if (ibv_query_gid(q->context, 1, gid_index, &gid))
		vt_die(prog, "ibv_query_gid");
	memcpy(r.gid, gid.raw, 16);
	vt_io(prog, vt_fd, &r, sizeof(r), 1);
	vt_io(prog, vt_fd, &a, sizeof(a), 0);
	memcpy(peer.raw, a.gid, 16);
	/* the agent's QP is in RTS: ours may send it ACKs and responses */
	vt_rc_connect_gid(prog, q, gid_index, be32toh(a.qpn), &peer, 14);
}

enum ibv_wc_status vt_remote_post1(const char *prog, enum ibv_wr_opcode op,
				   void *buf, uint32_t len, uint64_t raddr,
				   uint32_t rkey, uint64_t a, uint64_t b)
{
	struct vt_req r = { .kind = htobe32(VT_POST),
			    .op = htobe32(op),
			    .len = htobe32(len),
			    .rkey = htobe32(rkey),
			    .raddr = htobe64(raddr),
			    .a = htobe64(a),
			    .b = htobe64(b) };
	struct vt_rep rep;
	enum ibv_wc_status st;
	uint32_t n;
	uint8_t *tmp;

	vt_io(prog, vt_fd, &r, sizeof(r), 1);
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND)
		vt_io(prog, vt_fd, buf, len, 1);
	vt_io(prog, vt_fd, &rep, sizeof(rep), 0);
	st = (enum ibv_wc_status)be32toh(rep.status);
	n = be32toh(rep.len);
	tmp = malloc(n ? n : 1);
	if (!tmp)
		vt_die(prog, "malloc");
	vt_io(prog, vt_fd, tmp, n, 0);
	/* what a Read or an atomic brought, where it would have landed */
	if (st == IBV_WC_SUCCESS)
		memcpy(buf, tmp, n);
	free(tmp);
	return st;
}
