// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rsockets: stream sockets over RC QPs that the CM connects, speaking the
 * protocol of rdma-core's "rsocket Protocol and Design Guide", so that an
 * rxdp rsocket talks to rdma-core's on another host:
 *
 * - REQ and REP carry struct rs_conn_data (version 1, network order): the
 *   receive credits (the RQ's size), where the peer may write its target
 *   SGL (RS_SGL_SIZE entries), and the first half of the receive buffer.
 * - Data moves by RDMA Write with immediate into the buffer the current
 *   target SGE names; the immediate (op << 29 | data) says DATA and the
 *   length. A receive buffer half, once published, is filled before the
 *   next is used.
 * - As the application reads, the receiver publishes the free half of its
 *   buffer by writing an SGE into the sender's target SGL (op SGL, whose
 *   data also returns credits: the receive sequence number + the RQ's
 *   size), or returns credits alone with a zero-length write.
 * - CTRL messages: DISCONNECT, SHUTDOWN (the peer sends no more).
 *
 * Only SOCK_STREAM: datagram rsockets and riomap()/riowrite() answer
 * ENOSYS/ENOTSUP. An rsocket is numbered by the fd of its CM event
 * channel, so the numbers never collide with the process's own fds. All
 * the fds an rsocket uses are non-blocking; a blocking call polls them.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#define RS_SGL_SIZE 2
#define RS_QP_CTRL_SIZE 4 /* send WQEs kept for control messages */
#define RS_SNDLOWAT 2048
#define RS_OLAP_START_SIZE 2048
#define RS_MAX_TRANSFER 65536
#define RS_QP_MIN_SIZE 16
#define RS_QP_MAX_SIZE 0xfffe
#define RS_DEF_QP_SIZE 384
#define RS_DEF_MEM (1 << 17)
#define RS_DEF_INLINE 64
#define RS_CONN_FLAG_NET 1

enum {
	RS_OP_DATA = 0,
	RS_OP_WRITE = 2,
	RS_OP_SGL = 4,
	RS_OP_CTRL = 7
};
enum {
	RS_CTRL_DISCONNECT,
	RS_CTRL_KEEPALIVE,
	RS_CTRL_SHUTDOWN
};

#define rs_msg(op, data) ((uint32_t)(op) << 29 | (uint32_t)(data))
#define rs_msg_op(m) ((m) >> 29)
#define rs_msg_data(m) ((m)&0x1fffffff)
#define RS_WR_RECV (1ULL << 63)

/* The rsocket SGE, as both sides write it into each other's memory */
struct rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

/* Private data of REQ and REP: big-endian fields */
struct rs_conn_data {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;
	uint8_t reserved[3];
	uint8_t target_iomap_size;
	struct rs_sge target_sgl;
	struct rs_sge data_buf;
};

enum rs_state {
	RS_INIT = 0,
	RS_BOUND = 1 << 0,
	RS_LISTENING = 1 << 1,
	RS_RESOLVING_ADDR = 1 << 2,
	RS_RESOLVING_ROUTE = 1 << 3,
	RS_CONNECTING = 1 << 4,
	RS_ACCEPTING = 1 << 5,
	RS_READABLE = 1 << 6,
	RS_WRITABLE = 1 << 7,
	RS_DISCONNECTED = 1 << 8,
	RS_ERROR = 1 << 9,
	RS_CONNECTED = 1 << 10, /* up, whether or not each way is shut */
};
#define RS_OPENING \
	(RS_RESOLVING_ADDR | RS_RESOLVING_ROUTE | RS_CONNECTING | RS_ACCEPTING)
#define RS_CONNECT_RDWR (RS_CONNECTED | RS_READABLE | RS_WRITABLE)

struct rsock {
	int index;
	int state;
	int err;
	int fs_flags;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	pthread_mutex_t slock, rlock, cq_lock;
	/* options */
	uint32_t sbuf_size, rbuf_size, sq_size, rq_size, sq_inline;
	int nodelay, keepalive, keepidle, reuseaddr;
	struct linger linger;
	/* connected */
	struct ibv_mr *smr, *rmr, *tmr;
	uint8_t *sbuf, *rbuf;
	struct rs_sge *target_sgl; /* RS_SGL_SIZE, the peer writes it */
	struct rs_sge remote_sgl; /* where we write the peer's */
	int target_sge, remote_sge;
	bool swap_sgl;
	uint32_t ssgl_off; /* next free byte of the send ring */
	uint32_t sbuf_bytes_avail;
	uint16_t sseq_no, sseq_comp, rseq_no, rseq_comp;
	uint32_t sqe_avail;
	uint16_t ctrl_seqno, ctrl_max_seqno;
	uint32_t *rmsg; /* lengths of received DATA, rq_size + 1 */
	uint32_t rmsg_head, rmsg_tail;
	uint32_t rbuf_offset, rbuf_free_offset, rbuf_bytes_avail;
	bool cq_armed;
	unsigned int unack_cqe;
	unsigned int cm_checks;
};

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rsock **tab;
static int tab_len;

static int rs_err(int e)
{
	errno = e;
	return -1;
}

static struct rsock *rs_get(int s)
{
	struct rsock *rs = NULL;

	pthread_mutex_lock(&tab_lock);
	if (s >= 0 && s < tab_len)
		rs = tab[s];
	pthread_mutex_unlock(&tab_lock);
	return rs;
}

static int rs_insert(struct rsock *rs)
{
	int s = rs->index;

	pthread_mutex_lock(&tab_lock);
	if (s >= tab_len) {
		int n = s + 64;
		struct rsock **t = realloc(tab, n * sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&tab_lock);
			return rs_err(ENOMEM);
		}
		memset(t + tab_len, 0, (n - tab_len) * sizeof(*t));
		tab = t;
		tab_len = n;
	}
	tab[s] = rs;
	pthread_mutex_unlock(&tab_lock);
	return 0;
}

static void rs_remove(struct rsock *rs)
{
	pthread_mutex_lock(&tab_lock);
	if (rs->index >= 0 && rs->index < tab_len && tab[rs->index] == rs)
		tab[rs->index] = NULL;
	pthread_mutex_unlock(&tab_lock);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static struct rsock *rs_alloc(const struct rsock *inherit)
{
	struct rsock *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->index = -1;
	if (inherit) {
		rs->sbuf_size = inherit->sbuf_size;
		rs->rbuf_size = inherit->rbuf_size;
		rs->sq_size = inherit->sq_size;
		rs->rq_size = inherit->rq_size;
		rs->sq_inline = inherit->sq_inline;
		rs->nodelay = inherit->nodelay;
		rs->keepalive = inherit->keepalive;
		rs->keepidle = inherit->keepidle;
		rs->fs_flags = inherit->fs_flags;
	} else {
		rs->sbuf_size = rs->rbuf_size = RS_DEF_MEM;
		rs->sq_size = rs->rq_size = RS_DEF_QP_SIZE;
		rs->sq_inline = RS_DEF_INLINE;
		rs->keepidle = 7200;
	}
	pthread_mutex_init(&rs->slock, NULL);
	pthread_mutex_init(&rs->rlock, NULL);
	pthread_mutex_init(&rs->cq_lock, NULL);
	return rs;
}

/* A socket's CM id on a channel of its own, whose fd numbers it */
static int rs_new_channel(struct rsock *rs)
{
	rs->ch = rdma_create_event_channel();
	if (!rs->ch)
		return -1;
	if (set_nonblock(rs->ch->fd))
		return -1;
	rs->index = rs->ch->fd;
	return 0;
}

static void rs_free_ep(struct rsock *rs)
{
	if (rs->id && rs->id->qp)
		rdma_destroy_qp(rs->id);
	if (rs->smr)
		ibv_dereg_mr(rs->smr);
	if (rs->rmr)
		ibv_dereg_mr(rs->rmr);
	if (rs->tmr)
		ibv_dereg_mr(rs->tmr);
	rs->smr = rs->rmr = rs->tmr = NULL;
	free(rs->sbuf);
	free(rs->rbuf);
	free(rs->target_sgl);
	free(rs->rmsg);
	rs->sbuf = rs->rbuf = NULL;
	rs->target_sgl = NULL;
	rs->rmsg = NULL;
}

static void rs_free(struct rsock *rs)
{
	rs_remove(rs);
	if (rs->id && rs->id->recv_cq && rs->unack_cqe)
		ibv_ack_cq_events(rs->id->recv_cq, rs->unack_cqe);
	rs_free_ep(rs);
	if (rs->id)
		rdma_destroy_id(rs->id);
	if (rs->ch)
		rdma_destroy_event_channel(rs->ch);
	pthread_mutex_destroy(&rs->slock);
	pthread_mutex_destroy(&rs->rlock);
	pthread_mutex_destroy(&rs->cq_lock);
	free(rs);
}

int rsocket(int domain, int type, int protocol)
{
	struct rsock *rs;

	if ((domain != AF_INET && domain != AF_INET6) ||
	    (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM)
		return rs_err(type == SOCK_DGRAM ? ENOTSUP : EINVAL);
	if (protocol && protocol != IPPROTO_TCP)
		return rs_err(EPROTONOSUPPORT);
	rs = rs_alloc(NULL);
	if (!rs)
		return rs_err(ENOMEM);
	if (type & SOCK_NONBLOCK)
		rs->fs_flags |= O_NONBLOCK;
	if (rs_new_channel(rs) ||
	    rdma_create_id(rs->ch, &rs->id, rs, RDMA_PS_TCP) || rs_insert(rs)) {
		int e = errno;

		rs_free(rs);
		return rs_err(e);
	}
	return rs->index;
}

/* --- the QP, its buffers and the connection data -------------------------- */

static uint32_t clamp_qp(uint32_t n)
{
	return n < RS_QP_MIN_SIZE   ? RS_QP_MIN_SIZE
	       : n > RS_QP_MAX_SIZE ? RS_QP_MAX_SIZE
				    : n;
}

static int rs_post_recv(struct rsock *rs)
{
	struct ibv_recv_wr wr = { .wr_id = RS_WR_RECV }, *bad;
	int ret = ibv_post_recv(rs->id->qp, &wr, &bad);

	return ret ? rs_err(ret) : 0;
}

/* QP, CQ (send and receive, with a channel) and buffers, receives posted */
static int rs_create_ep(struct rsock *rs)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_cm_id *id = rs->id;
	size_t sbytes;

	rs->sq_size = clamp_qp(rs->sq_size);
	rs->rq_size = clamp_qp(rs->rq_size);
	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (!id->recv_cq_channel || set_nonblock(id->recv_cq_channel->fd))
		return -1;
	id->recv_cq = ibv_create_cq(id->verbs, (int)(rs->sq_size + rs->rq_size),
				    id, id->recv_cq_channel, 0);
	if (!id->recv_cq)
		return -1;
	id->send_cq_channel = id->recv_cq_channel;
	id->send_cq = id->recv_cq;
	qa.qp_context = rs;
	qa.send_cq = id->send_cq;
	qa.recv_cq = id->recv_cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = rs->sq_size;
	qa.cap.max_recv_wr = rs->rq_size;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(id, NULL, &qa))
		return -1;
	rs->sq_inline = qa.cap.max_inline_data;

	/* control messages (an SGE) go from the tail of the send buffer */
	sbytes = rs->sbuf_size + sizeof(struct rs_sge) * RS_QP_CTRL_SIZE;
	rs->sbuf = calloc(1, sbytes);
	rs->rbuf = calloc(1, rs->rbuf_size);
	rs->target_sgl = calloc(RS_SGL_SIZE, sizeof(struct rs_sge));
	rs->rmsg = calloc(rs->rq_size + 1, sizeof(*rs->rmsg));
	if (!rs->sbuf || !rs->rbuf || !rs->target_sgl || !rs->rmsg)
		return rs_err(ENOMEM);
	rs->smr = ibv_reg_mr(id->pd, rs->sbuf, sbytes, IBV_ACCESS_LOCAL_WRITE);
	rs->rmr = ibv_reg_mr(id->pd, rs->rbuf, rs->rbuf_size,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rs->tmr = ibv_reg_mr(id->pd, rs->target_sgl,
			     RS_SGL_SIZE * sizeof(struct rs_sge),
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!rs->smr || !rs->rmr || !rs->tmr)
		return -1;
	rs->sbuf_bytes_avail = rs->sbuf_size;
	rs->rbuf_free_offset = rs->rbuf_size >> 1;
	rs->rbuf_bytes_avail = rs->rbuf_size >> 1;
	rs->ctrl_max_seqno = RS_QP_CTRL_SIZE;
	rs->sqe_avail = rs->sq_size - RS_QP_CTRL_SIZE;
	rs->rseq_comp = (uint16_t)(rs->rq_size >> 1);
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (rs_post_recv(rs))
			return -1;
	return 0;
}

static void rs_conn_data(const struct rsock *rs, struct rs_conn_data *c)
{
	memset(c, 0, sizeof(*c));
	c->version = 1;
	c->flags = __BYTE_ORDER == __BIG_ENDIAN ? RS_CONN_FLAG_NET : 0;
	c->credits = htobe16((uint16_t)rs->rq_size);
	c->target_sgl.addr = htobe64((uintptr_t)rs->target_sgl);
	c->target_sgl.length = htobe32(RS_SGL_SIZE);
	c->target_sgl.key = htobe32(rs->tmr->rkey);
	c->data_buf.addr = htobe64((uintptr_t)rs->rbuf);
	c->data_buf.length = htobe32(rs->rbuf_size >> 1);
	c->data_buf.key = htobe32(rs->rmr->rkey);
}

static int rs_save_conn_data(struct rsock *rs, const void *pd, size_t len)
{
	struct rs_conn_data c;

	if (!pd || len < sizeof(c))
		return rs_err(EPROTO);
	memcpy(&c, pd, sizeof(c));
	if (c.version != 1)
		return rs_err(EPROTO);
	rs->remote_sgl.addr = be64toh(c.target_sgl.addr);
	rs->remote_sgl.length = be32toh(c.target_sgl.length);
	rs->remote_sgl.key = be32toh(c.target_sgl.key);
	if (!rs->remote_sgl.length)
		return rs_err(EPROTO);
	rs->remote_sge = 1;
	/* the peer writes SGEs in its byte order into ours (and we in ours) */
	rs->swap_sgl = !!(c.flags & RS_CONN_FLAG_NET) !=
		       (__BYTE_ORDER == __BIG_ENDIAN);
	rs->target_sgl[0].addr = be64toh(c.data_buf.addr);
	rs->target_sgl[0].length = be32toh(c.data_buf.length);
	rs->target_sgl[0].key = be32toh(c.data_buf.key);
	rs->sseq_comp = be16toh(c.credits);
	return 0;
}

static void rs_conn_param(const struct rsock *rs, struct rdma_conn_param *p,
			  struct rs_conn_data *c)
{
	rs_conn_data(rs, c);
	memset(p, 0, sizeof(*p));
	p->private_data = c;
	p->private_data_len = sizeof(*c);
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* --- waiting: the CQ's channel and the CM's, both non-blocking ------------- */

/* Wait (or not: timeout 0) until one of the socket's fds is readable */
static int rs_wait_fds(struct rsock *rs, int timeout)
{
	struct pollfd p[2] = { { .fd = rs->ch->fd, .events = POLLIN } };
	int n = 1, ret;

	if (rs->id && rs->id->recv_cq_channel) {
		p[1].fd = rs->id->recv_cq_channel->fd;
		p[1].events = POLLIN;
		n = 2;
	}
	ret = poll(p, n, timeout);
	if (ret < 0 && errno != EINTR)
		return -1;
	return 0;
}

/*
 * A CM event of a connected socket: the peer's DISCONNECTED (its process
 * may be gone: no DISCONNECT message comes). The QP goes to ERR, so that
 * posted work flushes.
 */
static void rs_cm_check(struct rsock *rs)
{
	struct rdma_cm_event *ev;

	while (!(rs->state & RS_OPENING) && !(rs->state & RS_LISTENING) &&
	       !rdma_get_cm_event(rs->ch, &ev)) {
		int e = ev->event;

		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_DISCONNECTED ||
		    e == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			if (rs->state & RS_CONNECTED) {
				rs->state = RS_DISCONNECTED;
				if (rs->id->qp) {
					struct ibv_qp_attr a = {
						.qp_state = IBV_QPS_ERR
					};

					ibv_modify_qp(rs->id->qp, &a,
						      IBV_QP_STATE);
				}
			}
		}
	}
}

/* --- connecting -------------------------------------------------------------- */

static int cm_status_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		return ev->status < 0 ? -ev->status : ETIMEDOUT;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? -ev->status : EHOSTUNREACH;
	default:
		return ECONNREFUSED;
	}
}

/*
 * Move a connecting socket along with the CM's events: address, route,
 * connect, established (the peer's connection data in the REP). Returns 0
 * once connected; -1 with EINPROGRESS when it must wait and may not.
 */
static int rs_do_connect(struct rsock *rs, bool nonblock)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param p;
	struct rs_conn_data c;
	int ret = 0, e;

	while (rs->state & RS_OPENING) {
		if (rdma_get_cm_event(rs->ch, &ev)) {
			if (errno != EAGAIN)
				goto err;
			if (nonblock)
				return rs_err(EINPROGRESS);
			rs_wait_fds(rs, -1);
			continue;
		}
		e = ev->event;
		if (rs->state & RS_RESOLVING_ADDR) {
			if (e != RDMA_CM_EVENT_ADDR_RESOLVED)
				goto err_ev;
			rdma_ack_cm_event(ev);
			if (rdma_resolve_route(rs->id, 2000))
				goto err;
			rs->state = RS_RESOLVING_ROUTE;
		} else if (rs->state & RS_RESOLVING_ROUTE) {
			if (e != RDMA_CM_EVENT_ROUTE_RESOLVED)
				goto err_ev;
			rdma_ack_cm_event(ev);
			if (rs_create_ep(rs))
				goto err;
			rs_conn_param(rs, &p, &c);
			if (rdma_connect(rs->id, &p))
				goto err;
			rs->state = RS_CONNECTING;
		} else {
			if (e != RDMA_CM_EVENT_ESTABLISHED)
				goto err_ev;
			if (rs->state & RS_CONNECTING)
				ret = rs_save_conn_data(
					rs, ev->param.conn.private_data,
					ev->param.conn.private_data_len);
			rdma_ack_cm_event(ev);
			if (ret)
				goto err;
			rs->state = RS_CONNECT_RDWR;
		}
	}
	return rs->state & RS_ERROR ? rs_err(rs->err) : 0;
err_ev:
	errno = cm_status_errno(ev);
	rdma_ack_cm_event(ev);
err:
	rs->err = errno;
	rs->state = RS_ERROR;
	return -1;
}

int rbind(int s, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	if (rs->state != RS_INIT)
		return rs_err(EINVAL);
	if (rdma_bind_addr(rs->id, (struct sockaddr *)addr))
		return -1;
	rs->state = RS_BOUND;
	return 0;
}

int rlisten(int s, int backlog)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	if (rs->state & RS_LISTENING)
		return 0;
	if (rdma_listen(rs->id, backlog))
		return -1;
	rs->state = RS_LISTENING;
	return 0;
}

static void rs_copy_addr(struct sockaddr *dst, const struct sockaddr *src,
			 socklen_t *len)
{
	socklen_t n = src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);

	if (!dst || !len)
		return;
	memcpy(dst, src, *len < n ? *len : n);
	*len = n;
}

int raccept(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *l = rs_get(s), *rs;
	struct rdma_cm_event *ev;
	struct rdma_conn_param p;
	struct rs_conn_data c;
	int e;

	if (!l)
		return rs_err(EBADF);
	if (!(l->state & RS_LISTENING))
		return rs_err(EINVAL);
	for (;;) {
		if (!rdma_get_cm_event(l->ch, &ev)) {
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
				break;
			rdma_ack_cm_event(ev);
			continue;
		}
		if (errno != EAGAIN)
			return -1;
		if (l->fs_flags & O_NONBLOCK)
			return rs_err(EAGAIN);
		rs_wait_fds(l, -1);
	}
	rs = rs_alloc(l);
	if (!rs) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
		return rs_err(ENOMEM);
	}
	rs->id = ev->id;
	rs->id->context = rs;
	if (rs_new_channel(rs) || rdma_migrate_id(rs->id, rs->ch) ||
	    rs_create_ep(rs) ||
	    rs_save_conn_data(rs, ev->param.conn.private_data,
			      ev->param.conn.private_data_len))
		goto err;
	rs_conn_param(rs, &p, &c);
	if (rdma_accept(rs->id, &p))
		goto err;
	rdma_ack_cm_event(ev);
	rs->state = RS_ACCEPTING;
	if (rs_insert(rs)) {
		e = errno;
		rs_free(rs);
		return rs_err(e);
	}
	rs_copy_addr(addr, rdma_get_peer_addr(rs->id), addrlen);
	return rs->index;
err:
	e = errno;
	rdma_reject(rs->id, NULL, 0);
	rdma_ack_cm_event(ev);
	rs_free(rs);
	return rs_err(e);
}

int rconnect(int s, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = rs_get(s);
	int ret;

	if (!rs)
		return rs_err(EBADF);
	if (rs->state & RS_CONNECTED)
		return rs_err(EISCONN);
	if (rs->state == RS_INIT || rs->state == RS_BOUND) {
		if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)addr,
				      2000))
			return -1;
		rs->state = RS_RESOLVING_ADDR;
	} else if (!(rs->state & RS_OPENING)) {
		return rs_err(EINVAL);
	}
	ret = rs_do_connect(rs, rs->fs_flags & O_NONBLOCK);
	if (ret && errno == EINPROGRESS)
		return rs_err(EINPROGRESS);
	return ret;
}

/* --- messages and completions ------------------------------------------------- */

static int rs_post_write_msg(struct rsock *rs, struct ibv_sge *sgl, int nsge,
			     uint32_t msg, int flags, uint64_t addr,
			     uint32_t rkey)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	wr.wr_id = msg;
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = flags;
	wr.imm_data = htobe32(msg);
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(rs->id->qp, &wr, &bad);
	return ret ? rs_err(ret) : 0;
}

/* A control message: a zero-length RDMA Write with the immediate */
static int rs_post_msg(struct rsock *rs, uint32_t msg)
{
	return rs_post_write_msg(rs, NULL, 0, msg, 0, 0, 0);
}

static bool rs_ctrl_avail(const struct rsock *rs)
{
	return rs->ctrl_seqno != rs->ctrl_max_seqno;
}

/*
 * Credits back to the peer: the next free half of the receive buffer if
 * there is one (written into its target SGL), and the sequence number up
 * to which it may send.
 */
static void rs_send_credits(struct rsock *rs)
{
	struct rs_sge *cbuf;
	struct ibv_sge ib;
	uint32_t msg;

	rs->ctrl_seqno++;
	rs->rseq_comp = (uint16_t)(rs->rseq_no + (rs->rq_size >> 1));
	msg = rs_msg(RS_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size));
	if (rs->rbuf_bytes_avail < (rs->rbuf_size >> 1)) {
		rs_post_msg(rs, msg);
		return;
	}
	cbuf = (struct rs_sge *)(rs->sbuf + rs->sbuf_size) +
	       (rs->ctrl_seqno & (RS_QP_CTRL_SIZE - 1));
	cbuf->addr = (uintptr_t)&rs->rbuf[rs->rbuf_free_offset];
	cbuf->key = rs->rmr->rkey;
	cbuf->length = rs->rbuf_size >> 1;
	if (rs->swap_sgl) {
		cbuf->addr = __builtin_bswap64(cbuf->addr);
		cbuf->key = __builtin_bswap32(cbuf->key);
		cbuf->length = __builtin_bswap32(cbuf->length);
	}
	ib.addr = (uintptr_t)cbuf;
	ib.length = sizeof(*cbuf);
	ib.lkey = rs->smr->lkey;
	rs_post_write_msg(rs, &ib, 1, msg, 0,
			  rs->remote_sgl.addr +
				  rs->remote_sge * sizeof(struct rs_sge),
			  rs->remote_sgl.key);
	rs->rbuf_bytes_avail -= rs->rbuf_size >> 1;
	rs->rbuf_free_offset += rs->rbuf_size >> 1;
	if (rs->rbuf_free_offset >= rs->rbuf_size)
		rs->rbuf_free_offset = 0;
	if (++rs->remote_sge == (int)rs->remote_sgl.length)
		rs->remote_sge = 0;
}

static void rs_update_credits(struct rsock *rs)
{
	if ((rs->rbuf_bytes_avail >= (rs->rbuf_size >> 1) ||
	     (int16_t)(rs->rseq_no - rs->rseq_comp) >= 0) &&
	    rs_ctrl_avail(rs) && (rs->state & RS_CONNECTED))
		rs_send_credits(rs);
}

/* Everything the CQ holds; under cq_lock */
static int rs_poll_cq(struct rsock *rs)
{
	struct ibv_wc wc;
	int ret, rcnt = 0;

	while ((ret = ibv_poll_cq(rs->id->recv_cq, 1, &wc)) > 0) {
		uint32_t msg;

		if (wc.wr_id & RS_WR_RECV) {
			if (wc.status != IBV_WC_SUCCESS)
				continue;
			rcnt++;
			msg = be32toh(wc.imm_data);
			switch (rs_msg_op(msg)) {
			case RS_OP_SGL:
				rs->sseq_comp = (uint16_t)rs_msg_data(msg);
				break;
			case RS_OP_CTRL:
				if (rs_msg_data(msg) == RS_CTRL_DISCONNECT) {
					rs->state = RS_DISCONNECTED;
					return 0;
				}
				if (rs_msg_data(msg) == RS_CTRL_SHUTDOWN) {
					if (rs->state & RS_WRITABLE) {
						rs->state &= ~RS_READABLE;
					} else {
						rs->state = RS_DISCONNECTED;
						return 0;
					}
				}
				break;
			case RS_OP_DATA:
				rs->rmsg[rs->rmsg_tail] = rs_msg_data(msg);
				if (++rs->rmsg_tail == rs->rq_size + 1)
					rs->rmsg_tail = 0;
				break;
			default:
				break;
			}
		} else {
			msg = (uint32_t)wc.wr_id;
			switch (rs_msg_op(msg)) {
			case RS_OP_SGL:
			case RS_OP_CTRL:
				rs->ctrl_max_seqno++;
				if (rs_msg_op(msg) == RS_OP_CTRL &&
				    rs_msg_data(msg) == RS_CTRL_DISCONNECT)
					rs->state = RS_DISCONNECTED;
				break;
			default:
				rs->sqe_avail++;
				rs->sbuf_bytes_avail += rs_msg_data(msg);
				break;
			}
			if (wc.status != IBV_WC_SUCCESS &&
			    (rs->state & RS_CONNECTED)) {
				rs->state = RS_ERROR;
				rs->err = EIO;
			}
		}
	}
	if (rs->state & RS_CONNECTED) {
		while (!ret && rcnt--)
			ret = rs_post_recv(rs);
		if (ret) {
			rs->state = RS_ERROR;
			rs->err = errno;
		}
	}
	return ret < 0 ? -1 : 0;
}

/* Take the CQ's notifications off its channel (non-blocking) */
static void rs_cq_events(struct rsock *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	while (!ibv_get_cq_event(rs->id->recv_cq_channel, &cq, &ctx)) {
		rs->cq_armed = false;
		if (++rs->unack_cqe >= 64) {
			ibv_ack_cq_events(rs->id->recv_cq, rs->unack_cqe);
			rs->unack_cqe = 0;
		}
	}
}

/*
 * Poll the CQ until test(rs) holds: at once (EWOULDBLOCK) when nonblock,
 * else arming the CQ and sleeping on its channel and the CM's.
 */
static int rs_get_comp(struct rsock *rs, bool nonblock,
		       bool (*test)(struct rsock *rs))
{
	int ret;

	pthread_mutex_lock(&rs->cq_lock);
	/* the CM's events (a peer gone) cost a system call: a spinning
	 * caller looks at them now and then, a sleeping one always */
	if (!nonblock || !(++rs->cm_checks & 63))
		rs_cm_check(rs);
	for (;;) {
		rs_update_credits(rs);
		ret = rs_poll_cq(rs);
		rs_update_credits(rs);
		if (test(rs)) {
			ret = 0;
			break;
		}
		if (ret)
			break;
		if (nonblock) {
			ret = rs_err(EWOULDBLOCK);
			break;
		}
		if (!rs->cq_armed) {
			ibv_req_notify_cq(rs->id->recv_cq, 0);
			rs->cq_armed = true;
			continue; /* a completion may have come before arming */
		}
		pthread_mutex_unlock(&rs->cq_lock);
		rs_wait_fds(rs, -1);
		pthread_mutex_lock(&rs->cq_lock);
		rs_cq_events(rs);
		rs_cm_check(rs);
	}
	pthread_mutex_unlock(&rs->cq_lock);
	return ret;
}

static bool rs_nonblocking(const struct rsock *rs, int flags)
{
	return (rs->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

static bool rs_can_send(struct rsock *rs)
{
	return rs->sqe_avail && rs->sbuf_bytes_avail >= RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp &&
	       rs->target_sgl[rs->target_sge].length != 0;
}

static bool rs_conn_can_send(struct rsock *rs)
{
	return rs_can_send(rs) || !(rs->state & RS_WRITABLE);
}

static bool rs_have_rdata(struct rsock *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

static bool rs_conn_have_rdata(struct rsock *rs)
{
	return rs_have_rdata(rs) || !(rs->state & RS_READABLE);
}

static bool rs_conn_ctrl_avail(struct rsock *rs)
{
	return rs_ctrl_avail(rs) || !(rs->state & RS_CONNECTED);
}

static bool rs_all_sends_done(struct rsock *rs)
{
	return ((int)rs->ctrl_max_seqno - (int)rs->ctrl_seqno) +
			       rs->sqe_avail ==
		       rs->sq_size ||
	       !(rs->state & RS_CONNECTED);
}

/* A connecting socket's first use completes the connection */
static int rs_ready(struct rsock *rs, int flags)
{
	if (!(rs->state & RS_OPENING))
		return 0;
	if (rs_do_connect(rs, rs_nonblocking(rs, flags))) {
		if (errno == EINPROGRESS)
			errno = EAGAIN;
		return -1;
	}
	return 0;
}

/* --- data --------------------------------------------------------------------- */

/* One DATA write into the peer's current target SGE */
static int rs_write_data(struct rsock *rs, struct ibv_sge *sgl, int nsge,
			 uint32_t len, int flags)
{
	struct rs_sge *t = &rs->target_sgl[rs->target_sge];
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;

	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= len;
	t->addr += len;
	t->length -= len;
	if (!t->length && ++rs->target_sge == RS_SGL_SIZE)
		rs->target_sge = 0;
	return rs_post_write_msg(rs, sgl, nsge, rs_msg(RS_OP_DATA, len), flags,
				 addr, rkey);
}

/* Copy len bytes of an iovec list (from iov, off) into dst */
static void iov_copy(uint8_t *dst, const struct iovec **iov, size_t *off,
		     size_t len)
{
	while (len) {
		size_t n = (*iov)->iov_len - *off;

		if (n > len)
			n = len;
		memcpy(dst, (uint8_t *)(*iov)->iov_base + *off, n);
		dst += n;
		len -= n;
		*off += n;
		if (*off == (*iov)->iov_len) {
			(*iov)++;
			*off = 0;
		}
	}
}

static ssize_t rs_sendv(struct rsock *rs, const struct iovec *iov, int iovcnt,
			int flags)
{
	size_t len = 0, left, off = 0;
	uint32_t olen = RS_OLAP_START_SIZE, xfer;
	int ret = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (rs_ready(rs, flags))
		return -1;
	pthread_mutex_lock(&rs->slock);
	for (left = len; left; left -= xfer) {
		struct ibv_sge sge[2];
		uint32_t tail;

		if (!rs_can_send(rs)) {
			ret = rs_get_comp(rs, rs_nonblocking(rs, flags),
					  rs_conn_can_send);
			if (ret)
				break;
			if (!(rs->state & RS_WRITABLE)) {
				ret = rs_err(ECONNRESET);
				break;
			}
		}
		if (olen < left) {
			xfer = olen;
			if (olen < RS_MAX_TRANSFER)
				olen <<= 1;
		} else {
			xfer = (uint32_t)left;
		}
		if (xfer > rs->sbuf_bytes_avail)
			xfer = rs->sbuf_bytes_avail;
		if (xfer > rs->target_sgl[rs->target_sge].length)
			xfer = rs->target_sgl[rs->target_sge].length;
		/* the send ring: one piece, or two where it wraps */
		tail = rs->sbuf_size - rs->ssgl_off;
		if (xfer <= tail) {
			iov_copy(rs->sbuf + rs->ssgl_off, &iov, &off, xfer);
			sge[0].addr = (uintptr_t)rs->sbuf + rs->ssgl_off;
			sge[0].length = xfer;
			sge[0].lkey = rs->smr->lkey;
			ret = rs_write_data(
				rs, sge, 1, xfer,
				xfer <= rs->sq_inline ? IBV_SEND_INLINE : 0);
			rs->ssgl_off = (rs->ssgl_off + xfer) % rs->sbuf_size;
		} else {
			iov_copy(rs->sbuf + rs->ssgl_off, &iov, &off, tail);
			iov_copy(rs->sbuf, &iov, &off, xfer - tail);
			sge[0].addr = (uintptr_t)rs->sbuf + rs->ssgl_off;
			sge[0].length = tail;
			sge[0].lkey = rs->smr->lkey;
			sge[1].addr = (uintptr_t)rs->sbuf;
			sge[1].length = xfer - tail;
			sge[1].lkey = rs->smr->lkey;
			ret = rs_write_data(rs, sge, 2, xfer, 0);
			rs->ssgl_off = xfer - tail;
		}
		if (ret)
			break;
	}
	pthread_mutex_unlock(&rs->slock);
	return ret && left == len ? ret : (ssize_t)(len - left);
}

ssize_t rsend(int s, const void *buf, size_t len, int flags)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	return rs_sendv(rs, &v, 1, flags);
}

ssize_t rsendto(int s, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	if (dest_addr)
		return rs_err(EISCONN);
	return rsend(s, buf, len, flags);
}

ssize_t rsendmsg(int s, const struct msghdr *msg, int flags)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	if (msg->msg_control && msg->msg_controllen)
		return rs_err(ENOTSUP);
	return rs_sendv(rs, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

ssize_t rwrite(int s, const void *buf, size_t count)
{
	return rsend(s, buf, count, 0);
}

ssize_t rwritev(int s, const struct iovec *iov, int iovcnt)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	return rs_sendv(rs, iov, iovcnt, 0);
}

/* Copy out of the receive ring from rbuf_offset (which it does not move) */
static void rbuf_copy(struct rsock *rs, uint32_t at, uint8_t *dst, size_t n)
{
	uint32_t end = rs->rbuf_size - at;

	if (n > end) {
		memcpy(dst, rs->rbuf + at, end);
		memcpy(dst + end, rs->rbuf, n - end);
	} else {
		memcpy(dst, rs->rbuf + at, n);
	}
}

static ssize_t rs_peek(struct rsock *rs, uint8_t *buf, size_t len)
{
	uint32_t head = rs->rmsg_head, at = rs->rbuf_offset;
	size_t got = 0;

	while (got < len && head != rs->rmsg_tail) {
		size_t n = rs->rmsg[head];

		if (n > len - got)
			n = len - got;
		else if (++head == rs->rq_size + 1)
			head = 0;
		rbuf_copy(rs, at, buf + got, n);
		at = (uint32_t)((at + n) % rs->rbuf_size);
		got += n;
	}
	return (ssize_t)got;
}

ssize_t rrecv(int s, void *buf, size_t len, int flags)
{
	struct rsock *rs = rs_get(s);
	uint8_t *p = buf;
	size_t left = len;
	int ret = 0;

	if (!rs)
		return rs_err(EBADF);
	if (rs_ready(rs, flags))
		return -1;
	pthread_mutex_lock(&rs->rlock);
	do {
		if (!rs_have_rdata(rs)) {
			ret = rs_get_comp(rs, rs_nonblocking(rs, flags),
					  rs_conn_have_rdata);
			if (ret)
				break;
		}
		if (flags & MSG_PEEK) {
			left -= rs_peek(rs, p, left);
			break;
		}
		while (left && rs_have_rdata(rs)) {
			uint32_t *m = &rs->rmsg[rs->rmsg_head];
			size_t n = *m;

			if (left < n) {
				n = left;
				*m -= (uint32_t)left;
			} else {
				rs->rseq_no++;
				if (++rs->rmsg_head == rs->rq_size + 1)
					rs->rmsg_head = 0;
			}
			rbuf_copy(rs, rs->rbuf_offset, p, n);
			rs->rbuf_offset = (uint32_t)((rs->rbuf_offset + n) %
						     rs->rbuf_size);
			rs->rbuf_bytes_avail += (uint32_t)n;
			p += n;
			left -= n;
		}
	} while (left && (flags & MSG_WAITALL) && (rs->state & RS_READABLE));
	pthread_mutex_unlock(&rs->rlock);
	if (left != len) {
		/* give credits back now the ring has room */
		pthread_mutex_lock(&rs->cq_lock);
		rs_update_credits(rs);
		pthread_mutex_unlock(&rs->cq_lock);
	}
	return ret && left == len ? ret : (ssize_t)(len - left);
}

ssize_t rrecvfrom(int s, void *buf, size_t len, int flags,
		  struct sockaddr *src_addr, socklen_t *addrlen)
{
	ssize_t ret = rrecv(s, buf, len, flags);

	if (ret > 0 && src_addr)
		rgetpeername(s, src_addr, addrlen);
	return ret;
}

/* As rdma-core's: fills the first buffer */
ssize_t rrecvmsg(int s, struct msghdr *msg, int flags)
{
	if (msg->msg_control && msg->msg_controllen)
		return rs_err(ENOTSUP);
	if (!msg->msg_iovlen)
		return 0;
	return rrecv(s, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
		     flags);
}

ssize_t rread(int s, void *buf, size_t count)
{
	return rrecv(s, buf, count, 0);
}

ssize_t rreadv(int s, const struct iovec *iov, int iovcnt)
{
	if (iovcnt <= 0)
		return 0;
	return rrecv(s, iov[0].iov_base, iov[0].iov_len, 0);
}

/* --- poll and select ------------------------------------------------------------ */

/* The events an rsocket has now (non-blocking) */
static short rs_revents(struct rsock *rs, short events)
{
	short r = 0;

	if (rs->state & RS_LISTENING) {
		struct pollfd p = { .fd = rs->ch->fd, .events = POLLIN };

		return poll(&p, 1, 0) > 0 ? (events & POLLIN) : 0;
	}
	if (rs->state & RS_OPENING) {
		if (rs_do_connect(rs, true))
			return errno == EINPROGRESS ? 0 : POLLERR;
	}
	if (rs->state & (RS_CONNECTED | RS_DISCONNECTED)) {
		pthread_mutex_lock(&rs->cq_lock);
		rs_cm_check(rs);
		rs_poll_cq(rs);
		rs_update_credits(rs);
		pthread_mutex_unlock(&rs->cq_lock);
	}
	if ((events & POLLIN) &&
	    (rs_have_rdata(rs) || (rs->id->qp && !(rs->state & RS_READABLE))))
		r |= POLLIN;
	if ((events & POLLOUT) &&
	    ((rs->state & RS_WRITABLE) ? rs_can_send(rs) : rs->id->qp != NULL))
		r |= POLLOUT;
	/* as a TCP socket the peer closed: readable while data is left */
	if ((rs->state & RS_DISCONNECTED) && !rs_have_rdata(rs))
		r |= POLLHUP;
	if (rs->state & RS_ERROR)
		r |= POLLERR;
	return r;
}

static int rs_poll_check(struct pollfd *fds, nfds_t nfds)
{
	int n = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rsock *rs = rs_get(fds[i].fd);

		if (rs) {
			fds[i].revents = rs_revents(rs, fds[i].events);
		} else {
			struct pollfd p = fds[i];

			fds[i].revents = poll(&p, 1, 0) > 0 ? p.revents : 0;
		}
		if (fds[i].revents)
			n++;
	}
	return n;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *w;
	int n;

	for (;;) {
		n = rs_poll_check(fds, nfds);
		if (n || !timeout)
			return n;
		/* sleep on what underlies the rsockets, and the real fds */
		w = calloc(2 * nfds + 1, sizeof(*w));
		if (!w)
			return rs_err(ENOMEM);
		n = 0;
		for (nfds_t i = 0; i < nfds; i++) {
			struct rsock *rs = rs_get(fds[i].fd);

			if (!rs) {
				w[n++] = fds[i];
				continue;
			}
			w[n].fd = rs->ch->fd;
			w[n++].events = POLLIN;
			if (rs->id && rs->id->recv_cq_channel) {
				pthread_mutex_lock(&rs->cq_lock);
				if (!rs->cq_armed) {
					ibv_req_notify_cq(rs->id->recv_cq, 0);
					rs->cq_armed = true;
				}
				pthread_mutex_unlock(&rs->cq_lock);
				w[n].fd = rs->id->recv_cq_channel->fd;
				w[n++].events = POLLIN;
			}
		}
		/* anything that came while arming is seen now */
		if (rs_poll_check(fds, nfds)) {
			free(w);
			continue;
		}
		n = poll(w, (nfds_t)n, timeout);
		free(w);
		if (n < 0)
			return n;
		for (nfds_t i = 0; i < nfds; i++) {
			struct rsock *rs = rs_get(fds[i].fd);

			if (rs && rs->id && rs->id->recv_cq_channel) {
				pthread_mutex_lock(&rs->cq_lock);
				rs_cq_events(rs);
				pthread_mutex_unlock(&rs->cq_lock);
			}
		}
		if (!n)
			return rs_poll_check(fds, nfds);
		/* a wake-up: look again (with the same timeout, as a
		 * spurious one is rare and cheap) */
	}
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	struct pollfd *p = calloc(nfds > 0 ? nfds : 1, sizeof(*p));
	int n = 0, ret, to;

	if (!p)
		return rs_err(ENOMEM);
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (readfds && FD_ISSET(fd, readfds))
			ev |= POLLIN;
		if (writefds && FD_ISSET(fd, writefds))
			ev |= POLLOUT;
		if (exceptfds && FD_ISSET(fd, exceptfds))
			ev |= POLLPRI;
		if (ev) {
			p[n].fd = fd;
			p[n++].events = ev;
		}
	}
	to = timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000)
		     : -1;
	ret = rpoll(p, (nfds_t)n, to);
	if (ret >= 0) {
		ret = 0;
		if (readfds)
			FD_ZERO(readfds);
		if (writefds)
			FD_ZERO(writefds);
		if (exceptfds)
			FD_ZERO(exceptfds);
		for (int i = 0; i < n; i++) {
			if (readfds && (p[i].revents & (POLLIN | POLLHUP))) {
				FD_SET(p[i].fd, readfds);
				ret++;
			}
			if (writefds && (p[i].revents & POLLOUT)) {
				FD_SET(p[i].fd, writefds);
				ret++;
			}
			if (exceptfds && (p[i].revents & (POLLPRI | POLLERR))) {
				FD_SET(p[i].fd, exceptfds);
				ret++;
			}
		}
	}
	free(p);
	return ret;
}

/* --- shutdown, close ------------------------------------------------------------- */

int rshutdown(int s, int how)
{
	struct rsock *rs = rs_get(s);
	int ctrl;

	if (!rs)
		return rs_err(EBADF);
	if (!(rs->state & RS_CONNECTED)) {
		if (rs->state & RS_DISCONNECTED) {
			rs->state &= ~RS_DISCONNECTED;
			goto disconnect;
		}
		return rs->state & RS_OPENING ? rs_err(ENOTCONN) : 0;
	}
	if (how == SHUT_RD) {
		rs->state &= ~RS_READABLE;
		return 0;
	}
	if (how == SHUT_RDWR) {
		rs->state &= ~RS_READABLE;
		ctrl = RS_CTRL_DISCONNECT;
	} else {
		ctrl = RS_CTRL_SHUTDOWN;
	}
	if (!(rs->state & RS_WRITABLE) && ctrl == RS_CTRL_SHUTDOWN)
		return 0;
	rs->state &= ~RS_WRITABLE;
	/* the control message, once a control send slot is free; a shutdown
	 * waits (non-blocking socket or not), as rdma-core's does: data
	 * still in flight would be lost to the disconnection */
	if (!rs_get_comp(rs, false, rs_conn_ctrl_avail) &&
	    (rs->state & RS_CONNECTED) && rs_ctrl_avail(rs)) {
		pthread_mutex_lock(&rs->cq_lock);
		rs->ctrl_seqno++;
		rs_post_msg(rs, rs_msg(RS_OP_CTRL, ctrl));
		pthread_mutex_unlock(&rs->cq_lock);
	}
	if (ctrl != RS_CTRL_DISCONNECT)
		return 0;
	rs_get_comp(rs, false, rs_all_sends_done);
disconnect:
	if (rs->id && rs->id->verbs)
		rdma_disconnect(rs->id);
	rs->state = RS_DISCONNECTED;
	return 0;
}

int rclose(int s)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	if (rs->state & RS_CONNECTED)
		rshutdown(s, SHUT_RDWR);
	rs_free(rs);
	return 0;
}

/* --- names and options ----------------------------------------------------------- */

int rgetpeername(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	rs_copy_addr(addr, rdma_get_peer_addr(rs->id), addrlen);
	return 0;
}

int rgetsockname(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = rs_get(s);

	if (!rs)
		return rs_err(EBADF);
	rs_copy_addr(addr, rdma_get_local_addr(rs->id), addrlen);
	return 0;
}

static int opt_int(const void *v, socklen_t len, int *out)
{
	if (!v || len < sizeof(int))
		return rs_err(EINVAL);
	memcpy(out, v, sizeof(int));
	return 0;
}

int rsetsockopt(int s, int level, int optname, const void *optval,
		socklen_t optlen)
{
	struct rsock *rs = rs_get(s);
	int v;

	if (!rs)
		return rs_err(EBADF);
	if (level == SOL_SOCKET) {
		switch (optname) {
		case SO_REUSEADDR:
			if (opt_int(optval, optlen, &v))
				return -1;
			rs->reuseaddr = !!v;
			return rdma_set_option(rs->id, RDMA_OPTION_ID,
					       RDMA_OPTION_ID_REUSEADDR, &v,
					       sizeof(v));
		case SO_RCVBUF:
		case SO_SNDBUF:
			if (opt_int(optval, optlen, &v))
				return -1;
			if (rs->id->qp)
				return 0; /* fixed once connected */
			if (v < RS_SNDLOWAT)
				v = RS_SNDLOWAT;
			if (optname == SO_RCVBUF)
				rs->rbuf_size = (uint32_t)v << 1;
			else
				rs->sbuf_size = (uint32_t)v << 1;
			return 0;
		case SO_LINGER:
			if (!optval || optlen < sizeof(rs->linger))
				return rs_err(EINVAL);
			memcpy(&rs->linger, optval, sizeof(rs->linger));
			return 0;
		case SO_KEEPALIVE:
			if (opt_int(optval, optlen, &v))
				return -1;
			rs->keepalive = !!v;
			return 0;
		case SO_OOBINLINE:
			return 0;
		}
	} else if (level == IPPROTO_TCP) {
		switch (optname) {
		case TCP_NODELAY:
			if (opt_int(optval, optlen, &v))
				return -1;
			rs->nodelay = !!v;
			return 0;
		case TCP_MAXSEG:
			return 0;
		case TCP_KEEPIDLE:
			if (opt_int(optval, optlen, &v))
				return -1;
			rs->keepidle = v;
			return 0;
		}
	} else if (level == IPPROTO_IPV6 && optname == IPV6_V6ONLY) {
		if (opt_int(optval, optlen, &v))
			return -1;
		return rdma_set_option(rs->id, RDMA_OPTION_ID,
				       RDMA_OPTION_ID_AFONLY, &v, sizeof(v));
	} else if (level == SOL_RDMA) {
		if (rs->id->qp)
			return rs_err(EINVAL);
		switch (optname) {
		case RDMA_SQSIZE:
		case RDMA_RQSIZE:
		case RDMA_INLINE:
			if (opt_int(optval, optlen, &v) || v < 0)
				return rs_err(EINVAL);
			if (optname == RDMA_SQSIZE)
				rs->sq_size = clamp_qp((uint32_t)v);
			else if (optname == RDMA_RQSIZE)
				rs->rq_size = clamp_qp((uint32_t)v);
			else
				rs->sq_inline = (uint32_t)v;
			return 0;
		case RDMA_IOMAPSIZE:
			return 0; /* no iomaps here: nothing to size */
		case RDMA_ROUTE:
			return rs_err(ENOSYS);
		}
	}
	return rs_err(ENOPROTOOPT);
}

static int opt_out(void *optval, socklen_t *optlen, const void *v, size_t len)
{
	if (!optval || !optlen)
		return rs_err(EINVAL);
	if (*optlen < len)
		len = *optlen;
	memcpy(optval, v, len);
	*optlen = (socklen_t)len;
	return 0;
}

int rgetsockopt(int s, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rsock *rs = rs_get(s);
	int v;

	if (!rs)
		return rs_err(EBADF);
	if (level == SOL_SOCKET) {
		switch (optname) {
		case SO_ERROR:
			if (rs->state & RS_OPENING)
				rs_do_connect(rs, true);
			v = rs->state & RS_ERROR ? rs->err : 0;
			rs->err = 0;
			return opt_out(optval, optlen, &v, sizeof(v));
		case SO_REUSEADDR:
			return opt_out(optval, optlen, &rs->reuseaddr,
				       sizeof(v));
		case SO_RCVBUF:
			v = (int)(rs->rbuf_size >> 1);
			return opt_out(optval, optlen, &v, sizeof(v));
		case SO_SNDBUF:
			v = (int)(rs->sbuf_size >> 1);
			return opt_out(optval, optlen, &v, sizeof(v));
		case SO_KEEPALIVE:
			return opt_out(optval, optlen, &rs->keepalive,
				       sizeof(v));
		case SO_LINGER:
			return opt_out(optval, optlen, &rs->linger,
				       sizeof(rs->linger));
		case SO_OOBINLINE:
			v = 1;
			return opt_out(optval, optlen, &v, sizeof(v));
		}
	} else if (level == IPPROTO_TCP) {
		switch (optname) {
		case TCP_NODELAY:
			return opt_out(optval, optlen, &rs->nodelay, sizeof(v));
		case TCP_MAXSEG:
			v = 2048;
			return opt_out(optval, optlen, &v, sizeof(v));
		case TCP_KEEPIDLE:
			return opt_out(optval, optlen, &rs->keepidle,
				       sizeof(v));
		}
	} else if (level == SOL_RDMA) {
		switch (optname) {
		case RDMA_SQSIZE:
			return opt_out(optval, optlen, &rs->sq_size, sizeof(v));
		case RDMA_RQSIZE:
			return opt_out(optval, optlen, &rs->rq_size, sizeof(v));
		case RDMA_INLINE:
			return opt_out(optval, optlen, &rs->sq_inline,
				       sizeof(v));
		case RDMA_IOMAPSIZE:
			v = 0;
			return opt_out(optval, optlen, &v, sizeof(v));
		}
	}
	return rs_err(ENOPROTOOPT);
}

int rfcntl(int s, int cmd, ... /* arg */)
{
	struct rsock *rs = rs_get(s);
	va_list ap;
	int arg;

	if (!rs)
		return rs_err(EBADF);
	switch (cmd) {
	case F_GETFL:
		return rs->fs_flags;
	case F_SETFL:
		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
		/* the fds stay non-blocking: calls decide whether to wait */
		rs->fs_flags = (rs->fs_flags & ~O_NONBLOCK) |
			       (arg & O_NONBLOCK);
		return 0;
	default:
		return rs_err(ENOTSUP);
	}
}

/* Direct placement (riomap/riowrite) is not offered */
off_t riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	errno = rs_get(s) ? ENOSYS : EBADF;
	return -1;
}

int riounmap(int s, void *buf, size_t len)
{
	return rs_err(rs_get(s) ? ENOSYS : EBADF);
}

size_t riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	errno = rs_get(s) ? ENOSYS : EBADF;
	return 0;
}
