// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The connection manager: what the kernel's ib_cm and rdma_cm are to a
 * RoCE HCA, for rxdp's devices. rxdpd is the device, so QP1 and the CM are
 * its (gsi.c); the drop-in librdmacm.so.1 (userspace/rdmacm) is a thin
 * client that asks for what rdma-core's asks /dev/infiniband/rdma_cm, and
 * reads its events from a socket per event channel (common/ctl_cm.h).
 *
 * On the wire (IBTA chapter 12): REQ, MRA, REJ, REP, RTU, DREQ, DREP and
 * SIDR_REQ/SIDR_REP on QP1, with the RDMA IP CM service of Annex A11 (the
 * service ID is the port space and port; an IP header leads the REQ's
 * private data). Timers and retries follow 12.7.x: a REQ, REP, SIDR_REQ or
 * DREQ is sent again after 2 x the packet lifetime + the peer's CM response
 * time, at most Max CM Retries times; an MRA stretches the wait by its
 * service timeout; a connection leaves TimeWait after the QP's ack timeout.
 * A REQ nobody listens for is answered with a REJ (invalid service ID), a
 * SIDR_REQ with a SIDR_REP (service ID not supported), a DREQ for no known
 * connection with a DREP.
 *
 * QPs are the application's: the library moves them through INIT, RTR and
 * RTS with the attributes RXDP_CM_INIT_QP_ATTR gives (the PSNs, MTU, path,
 * responder resources, initiator depth and retry counts REQ and REP carry),
 * exactly as rdma-core's librdmacm does with the kernel's.
 *
 * Ids (and channels) belong to the client connection that made them. A
 * destroyed id, or one whose client went away, leaves its connection the
 * way the kernel does: a DREQ if it was established, a REJ if it was being
 * set up; it lingers, detached, until the DREQ is answered and TimeWait
 * ends. Everything runs on the control thread.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/ctl_cm.h"
#include "common/log.h"
#include "daemon/cm.h"
#include "daemon/cm_mad.h"
#include "daemon/mtu.h"

/*
 * Times, as 5-bit IBTA exponents of 4.096 us (cm_time_ms()). The CM
 * answers within ~1 s; a RoCE packet lives at most ~67 ms; a QP's
 * retransmission timer is ~268 ms unless the application sets
 * RDMA_OPTION_ID_ACK_TIMEOUT; an MRA asks for ~68 s (what Linux asks for a
 * connection its application has not accepted yet).
 */
#define CM_RESPONSE_TIMEOUT 18
#define CM_PACKET_LIFETIME 14
#define CM_ACK_TIMEOUT 16
#define CM_MRA_TIMEOUT 24
#define CM_MAX_RETRIES 15
#define CM_HOP_LIMIT 64
#define CM_RATE_10G 3 /* IBTA rate encoding: 10 Gb/s */
#define CM_TARGET_ACK_DELAY 15

#define CM_MAX_IDS 4096 /* per client connection */
#define CM_MAX_CHANNELS 256 /* per client connection */
#define CM_USER_IDS 16384 /* per user but root, all connections */
#define CM_USER_CHANNELS 1024 /* (each holds a socket in rxdpd) */
#define CM_ALL_IDS 65536 /* all users, a share kept (rxdpd_slot_ok) */
#define CM_ALL_CHANNELS 4096
#define CM_MAX_HALF_OPEN 4096 /* incoming requests not yet answered */
#define CM_MAX_BACKLOG 1024
#define CM_CHAN_QUEUE 4096 /* events waiting for a full channel socket */
#define CM_EPHEMERAL_LO 32768
#define CM_EPHEMERAL_HI 60999

enum cm_state {
	CM_IDLE = 0,
	CM_ADDR_BOUND,
	CM_ADDR_QUERY,
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT, /* active: waiting for REP (or MRA, REJ) */
	CM_MRA_REQ_RCVD, /* active: the passive side asked for more time */
	CM_REP_RCVD, /* active: REP delivered, RTU not sent yet */
	CM_REQ_RCVD, /* passive: CONNECT_REQUEST delivered */
	CM_MRA_REQ_SENT, /* passive: MRA sent for a duplicate REQ */
	CM_REP_SENT, /* passive: waiting for RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
	CM_SIDR_REP_SENT, /* passive: kept to answer a retransmitted SIDR_REQ */
	CM_DISCONNECTED, /* after TimeWait: nothing on the wire any more */
};

static const char *const state_names[] = {
	[CM_IDLE] = "idle",
	[CM_ADDR_BOUND] = "addr_bound",
	[CM_ADDR_QUERY] = "addr_query",
	[CM_ADDR_RESOLVED] = "addr_resolved",
	[CM_ROUTE_RESOLVED] = "route_resolved",
	[CM_LISTEN] = "listen",
	[CM_REQ_SENT] = "req_sent",
	[CM_MRA_REQ_RCVD] = "mra_req_rcvd",
	[CM_REP_RCVD] = "rep_rcvd",
	[CM_REQ_RCVD] = "req_rcvd",
	[CM_MRA_REQ_SENT] = "mra_req_sent",
	[CM_REP_SENT] = "rep_sent",
	[CM_ESTABLISHED] = "established",
	[CM_DREQ_SENT] = "dreq_sent",
	[CM_DREQ_RCVD] = "dreq_rcvd",
	[CM_TIMEWAIT] = "timewait",
	[CM_SIDR_REQ_SENT] = "sidr_req_sent",
	[CM_SIDR_REQ_RCVD] = "sidr_req_rcvd",
	[CM_SIDR_REP_SENT] = "sidr_rep_sent",
	[CM_DISCONNECTED] = "disconnected",
};

struct cm_qev {
	struct cm_qev *next;
	struct rxdp_cm_event ev;
};

struct cm_chan {
	struct ep_tag ep; /* our end of the event socket, EPOLLOUT when full */
	struct cm_chan *next;
	struct cm_client *owner;
	__u32 handle;
	int wfd;
	struct cm_qev *qhead, *qtail; /* waiting for room in the socket */
	unsigned int qlen;
	unsigned int dropped;
	bool hup; /* the library's end is closed: nobody reads */
	bool zombie; /* destroyed, its socket kept until the library's end
		      * closes (a thread may still block in a read) */
};

struct cm_client {
	struct rxdp_client *c;
	struct cm_chan *chans;
	unsigned int nchans, nids;
};

struct cm_id {
	struct cm_id *next; /* every id */
	struct cm_client *owner; /* NULL: detached (destroyed, lingering) */
	struct cm_chan *chan;
	__u32 handle;
	__u16 ps;
	__u32 qp_type;
	enum cm_state state;
	/* options */
	__u8 tos;
	bool reuseaddr, afonly;
	__u8 ack_timeout;
	bool ack_timeout_set;
	/* addresses and route */
	struct rxdp_cm_addr src, dst;
	bool bound;
	int ifindex; /* 0: no device (a wildcard listener) */
	__u8 sgid[16], dgid[16];
	__u8 sgid_index;
	__u8 mtu;
	bool route_resolved;
	long addr_deadline;
	long neigh_deadline;
	/* listening */
	int backlog, pending;
	struct cm_id *listener; /* a request's listener, until answered */
	/* the connection */
	__u32 local_comm_id, remote_comm_id;
	__u64 remote_ca_guid;
	__u32 local_qpn, remote_qpn;
	/*
	 * A REQ's or REP's Starting PSN is its sender's rq_psn, and the
	 * receiver's sq_psn (Linux's cm.c reads it so; so do the HCAs)
	 */
	__u32 sq_psn, rq_psn;
	__u32 qkey;
	__u8 resp_res, init_depth; /* max_dest_rd_atomic, max_rd_atomic */
	__u8 retry_count, rnr_retry_count, flow_control, srq;
	__u8 local_ack_timeout; /* the QP's, from the path */
	__u8 peer_resp_timeout; /* how long the peer's CM takes to answer */
	__u8 max_cm_retries;
	__u32 ece_vendor_id, ece_options;
	bool connected_once; /* access flags for the QP */
	/* what is (re)sent, to whom, until when */
	struct gsi_peer peer;
	__u8 mad[CM_MAD_LEN];
	bool mad_valid;
	__u8 rtu[CM_MAD_LEN]; /* active: for a retransmitted REP */
	bool rtu_valid;
	__u64 tid;
	int retries_left;
	long timer; /* ms, 0: none */
};

struct cm_dev {
	struct cm_dev *next;
	int ifindex;
	struct gsi *gsi;
	long retry_at; /* when QP1 could not be made: try again then */
};

static struct cm_id *ids;
static struct cm_dev *devs;
static __u32 next_handle, next_chan;
static __u32 tid_hi;
static __u32 tid_lo;
static int timer_fd = -1;
static struct ep_tag timer_ep;
static long timer_armed; /* the deadline the timerfd is set for, 0: none */
static unsigned int half_open;

/* --- small helpers ------------------------------------------------------ */

static __u32 rand32(void)
{
	__u32 v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (__u32)now_ms() * 2654435761U;
	return v;
}

static const char *st(const struct cm_id *id)
{
	return state_names[id->state];
}

static struct cm_dev *dev_of(int ifindex)
{
	for (struct cm_dev *d = devs; d; d = d->next)
		if (d->ifindex == ifindex)
			return d;
	return NULL;
}

static struct gsi *gsi_of(int ifindex)
{
	struct cm_dev *d = dev_of(ifindex);

	return d ? d->gsi : NULL;
}

static __u64 ca_guid(int ifindex)
{
	struct rxdp_link *l = link_by_index(ifindex);
	struct rxdp_dev_info di;

	if (!l)
		return 0;
	dev_info_fill(l, &di);
	return be64toh(di.node_guid);
}

static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

static size_t alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static bool addr_any(const struct rxdp_cm_addr *a)
{
	static const __u8 zero[16];

	return !memcmp(a->addr, zero, alen(a->family));
}

/* An address as a GID: IPv4-mapped for IPv4 */
static void addr_gid(const struct rxdp_cm_addr *a, __u8 *gid)
{
	if (a->family == AF_INET) {
		memcpy(gid, v4mapped, 12);
		memcpy(gid + 12, a->addr, 4);
	} else {
		memcpy(gid, a->addr, 16);
	}
}

/* The device (with QP1) that owns address a, or NULL */
static struct rxdp_link *link_of_addr(const struct rxdp_cm_addr *a)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next) {
		if (!l->dev || !gsi_of(l->ifindex))
			continue;
		for (struct rxdp_addr *x = l->addrs; x; x = x->next)
			if (x->family == a->family &&
			    !memcmp(x->ip, a->addr, alen(a->family)))
				return l;
	}
	return NULL;
}

static int gid_index_of(const struct rxdp_link *l, const __u8 *gid)
{
	for (int i = 1; i < RXDP_GID_TBL_LEN; i++)
		if (l->gid_used[i] && !memcmp(l->gids[i], gid, 16))
			return i;
	return l->gid_used[0] && !memcmp(l->gids[0], gid, 16) ? 0 : -1;
}

static __u8 port_mtu(int ifindex)
{
	struct rxdp_link *l = link_by_index(ifindex);

	return l ? (__u8)rxdp_ib_mtu(l->mtu, dev_mtu_cap(l)) : IBV_MTU_1024;
}

static __u8 ack_timeout(const struct cm_id *id)
{
	return id->ack_timeout_set ? id->ack_timeout : id->local_ack_timeout;
}

/* 2 x packet lifetime + the CM response time t (IBTA 12.7.x) */
static long cm_wait_ms(unsigned int t)
{
	return 2 * (long)cm_time_ms(CM_PACKET_LIFETIME) + (long)cm_time_ms(t);
}

static __u64 new_tid(void)
{
	return (__u64)tid_hi << 32 | ++tid_lo;
}

/* --- the timer ------------------------------------------------------------ */

static void timer_rearm(void)
{
	long next = 0;
	struct itimerspec its = { 0 };

	for (struct cm_id *id = ids; id; id = id->next)
		if (id->timer && (!next || id->timer < next))
			next = id->timer;
	if (next == timer_armed)
		return;
	timer_armed = next;
	if (next) {
		long d = next - now_ms();

		if (d < 1)
			d = 1;
		its.it_value.tv_sec = d / 1000;
		its.it_value.tv_nsec = (d % 1000) * 1000000L;
	}
	timerfd_settime(timer_fd, 0, &its, NULL);
}

static void timer_set(struct cm_id *id, long ms)
{
	id->timer = ms ? now_ms() + ms : 0;
}

/* --- event channels ---------------------------------------------------- */

static bool chan_write(struct cm_chan *ch, const struct rxdp_cm_event *ev)
{
	ssize_t n = send(ch->wfd, ev, sizeof(*ev), MSG_DONTWAIT | MSG_NOSIGNAL);

	return n == (ssize_t)sizeof(*ev);
}

static void chan_flush(struct cm_chan *ch)
{
	while (ch->qhead && chan_write(ch, &ch->qhead->ev)) {
		struct cm_qev *q = ch->qhead;

		ch->qhead = q->next;
		if (!ch->qhead)
			ch->qtail = NULL;
		ch->qlen--;
		free(q);
	}
	ep_mod(ch->wfd, &ch->ep, ch->qhead ? EPOLLOUT : 0);
}

static void chan_free(struct cm_chan *ch);

static void chan_drop_queue(struct cm_chan *ch)
{
	while (ch->qhead) {
		struct cm_qev *q = ch->qhead;

		ch->qhead = q->next;
		free(q);
	}
	ch->qtail = NULL;
	ch->qlen = 0;
}

static void chan_ready(struct ep_tag *ep, __u32 events)
{
	struct cm_chan *ch = (struct cm_chan *)ep;

	if (events & (EPOLLERR | EPOLLHUP)) {
		/* the library's end is closed everywhere */
		if (ch->zombie) {
			chan_free(ch);
			return;
		}
		chan_drop_queue(ch);
		ch->hup = true;
		ep_del(ch->wfd, &ch->ep);
		return;
	}
	chan_flush(ch);
}

/* Write one event to a channel, or queue it while the socket is full */
static void chan_put(struct cm_chan *ch, const struct rxdp_cm_event *ev)
{
	struct cm_qev *q;

	if (ch->hup)
		return;
	if (!ch->qhead && chan_write(ch, ev))
		return;
	if (ch->qlen >= CM_CHAN_QUEUE) {
		if (!ch->dropped++)
			pr_warn("pid %d does not read its CM events: "
				"dropping\n",
				ch->owner ? (int)ch->owner->c->pid : 0);
		return;
	}
	q = malloc(sizeof(*q));
	if (!q)
		return;
	q->next = NULL;
	q->ev = *ev;
	if (ch->qtail)
		ch->qtail->next = q;
	else
		ch->qhead = q;
	ch->qtail = q;
	ch->qlen++;
	ep_mod(ch->wfd, &ch->ep, EPOLLOUT);
}

/*
 * Report an event about id on its channel (a request's is the listener's).
 * An id with no client reports nothing. The library counts the events it
 * reads; rdma_destroy_id() waits for their acks.
 */
static void ev_send(struct cm_id *id, struct rxdp_cm_event *ev)
{
	if (!id->owner || !id->chan)
		return;
	pr_debug("CM id %u: event %u status %d (state %s)\n", id->handle,
		 ev->event, ev->status, st(id));
	chan_put(id->chan, ev);
}

static void info_fill(const struct cm_id *id, struct rxdp_cm_info *in)
{
	memset(in, 0, sizeof(*in));
	in->ifindex = (__u32)id->ifindex;
	in->state = id->state;
	in->src = id->src;
	in->dst = id->dst;
	memcpy(in->sgid, id->sgid, 16);
	memcpy(in->dgid, id->dgid, 16);
	in->pkey = RXDP_DEFAULT_PKEY;
	in->sgid_index = id->sgid_index;
	in->mtu = id->mtu;
	in->hop_limit = CM_HOP_LIMIT;
	in->traffic_class = id->tos;
	in->packet_life_time = CM_PACKET_LIFETIME;
	in->rate = CM_RATE_10G;
	in->route_resolved = id->route_resolved;
}

static void ev_init(struct rxdp_cm_event *ev, const struct cm_id *id, int event,
		    int status)
{
	memset(ev, 0, sizeof(*ev));
	ev->id = id->handle;
	ev->event = (__u32)event;
	ev->status = status;
	info_fill(id, &ev->info);
}

static void ev_simple(struct cm_id *id, int event, int status)
{
	struct rxdp_cm_event ev;

	ev_init(&ev, id, event, status);
	ev_send(id, &ev);
}

static void ev_pdata(struct rxdp_cm_event *ev, const __u8 *pd, size_t len)
{
	if (len > RXDP_CM_PDATA_MAX)
		len = RXDP_CM_PDATA_MAX;
	memcpy(ev->private_data, pd, len);
	ev->conn.private_data_len = (__u8)len;
}

/* --- ids ------------------------------------------------------------------ */

static struct cm_id *id_find(struct cm_client *cl, __u32 handle)
{
	for (struct cm_id *id = ids; id; id = id->next)
		if (id->handle == handle && id->owner == cl && cl)
			return id;
	return NULL;
}

static struct cm_id *id_by_comm(__u32 local_comm_id)
{
	for (struct cm_id *id = ids; id; id = id->next)
		if (local_comm_id && id->local_comm_id == local_comm_id)
			return id;
	return NULL;
}

static __u32 comm_id_new(void)
{
	__u32 v;

	do
		v = rand32();
	while (!v || id_by_comm(v));
	return v;
}

/*
 * May cl's user make one more id (or channel)? Per connection, per user and
 * in all, with a share kept for root and for users who hold none
 */
static bool cm_slot_ok(const struct cm_client *cl, bool channels)
{
	unsigned int mine = 0, all = 0;

	if (channels ? cl->nchans >= CM_MAX_CHANNELS : cl->nids >= CM_MAX_IDS)
		return false;
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		unsigned int n;

		if (!c->cm)
			continue;
		n = channels ? c->cm->nchans : c->cm->nids;
		all += n;
		if (c->uid == cl->c->uid)
			mine += n;
	}
	return channels ? rxdpd_slot_ok(cl->c->uid, mine, all, CM_ALL_CHANNELS,
					CM_USER_CHANNELS)
			: rxdpd_slot_ok(cl->c->uid, mine, all, CM_ALL_IDS,
					CM_USER_IDS);
}

static struct cm_id *id_new(struct cm_client *cl, struct cm_chan *ch, __u16 ps,
			    __u32 qp_type)
{
	struct cm_id *id;

	if (!cm_slot_ok(cl, false)) {
		errno = EMFILE;
		return NULL;
	}
	id = calloc(1, sizeof(*id));
	if (!id)
		return NULL;
	if (!++next_handle)
		++next_handle;
	id->handle = next_handle;
	id->owner = cl;
	id->chan = ch;
	id->ps = ps;
	id->qp_type = qp_type;
	id->local_ack_timeout = CM_ACK_TIMEOUT;
	id->mtu = IBV_MTU_1024;
	id->qkey = RDMA_UDP_QKEY;
	id->rq_psn = rand32() & 0xffffff;
	id->next = ids;
	ids = id;
	cl->nids++;
	return id;
}

static void id_free(struct cm_id *id)
{
	struct cm_id **pp;

	for (pp = &ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	}
	/* requests still waiting on this listener lose it */
	for (struct cm_id *o = ids; o; o = o->next)
		if (o->listener == id)
			o->listener = NULL;
	if (id->owner)
		id->owner->nids--;
	free(id);
}

/* An incoming request was answered (or its id went): the listener may
 * take another */
static void request_done(struct cm_id *id)
{
	if (id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT &&
	    id->state != CM_SIDR_REQ_RCVD)
		return;
	if (half_open)
		half_open--;
	if (id->listener && id->listener->pending)
		id->listener->pending--;
	id->listener = NULL;
}

/* --- ports (per port space, as the kernel's rdma_cm keeps them) ---------- */

static bool addr_eq(const struct rxdp_cm_addr *a, const struct rxdp_cm_addr *b)
{
	return a->family == b->family &&
	       !memcmp(a->addr, b->addr, alen(a->family));
}

/*
 * Whether id may have port on its source address: no other id of the port
 * space holds it with an overlapping address, unless both allow reuse and
 * neither listens (the kernel's cma_check_port()).
 */
static int port_check(const struct cm_id *id, __be16 port, bool listening)
{
	for (struct cm_id *o = ids; o; o = o->next) {
		if (o == id || !o->bound || !o->owner || o->ps != id->ps ||
		    o->src.port != port)
			continue;
		if (!listening && id->reuseaddr && o->reuseaddr &&
		    o->state != CM_LISTEN)
			continue;
		if (id->afonly && o->afonly && id->src.family != o->src.family)
			continue;
		if (addr_any(&id->src) || addr_any(&o->src))
			return -EADDRNOTAVAIL;
		if (addr_eq(&id->src, &o->src))
			return -EADDRINUSE;
	}
	return 0;
}

static int port_bind(struct cm_id *id, __be16 port, uid_t uid)
{
	__u16 p = ntohs(port);

	if (p) {
		int err;

		if (p < 1024 && uid != 0)
			return -EACCES;
		/* -EADDRNOTAVAIL when a wildcard overlaps, as Linux says */
		err = port_check(id, port, false);
		if (err)
			return err;
		id->src.port = port;
		id->bound = true;
		return 0;
	}
	/* an ephemeral port: from a random point of the range */
	p = (__u16)(CM_EPHEMERAL_LO +
		    rand32() % (CM_EPHEMERAL_HI - CM_EPHEMERAL_LO + 1));
	for (int i = 0; i <= CM_EPHEMERAL_HI - CM_EPHEMERAL_LO; i++) {
		if (!port_check(id, htons(p), false)) {
			id->src.port = htons(p);
			id->bound = true;
			return 0;
		}
		if (++p > CM_EPHEMERAL_HI)
			p = CM_EPHEMERAL_LO;
	}
	return -EADDRNOTAVAIL;
}

/* Bind id to src (its device, if the address is one of a device's) */
static int id_bind(struct cm_id *id, const struct rxdp_cm_addr *src, uid_t uid)
{
	struct rxdp_cm_addr a = *src;
	int err;

	if (a.family != AF_INET && a.family != AF_INET6)
		return -EAFNOSUPPORT;
	if (id->state != CM_IDLE)
		return -EINVAL;
	if (a.family == AF_INET && !memcmp(a.addr, "\x7f", 1))
		return -EADDRNOTAVAIL; /* loopback: no rxdp device has it */
	id->ifindex = 0;
	if (!addr_any(&a)) {
		struct rxdp_link *l = link_of_addr(&a);
		int gi;

		if (!l)
			return -EADDRNOTAVAIL;
		addr_gid(&a, id->sgid);
		gi = gid_index_of(l, id->sgid);
		if (gi < 0)
			return -EADDRNOTAVAIL;
		id->ifindex = l->ifindex;
		id->sgid_index = (__u8)gi;
		id->mtu = port_mtu(l->ifindex);
	}
	id->src = a;
	err = port_bind(id, a.port, uid);
	if (err) {
		memset(&id->src, 0, sizeof(id->src));
		id->ifindex = 0;
		return err;
	}
	id->state = CM_ADDR_BOUND;
	return 0;
}

/* --- sending ---------------------------------------------------------------- */

static void msg_hdr(struct cm_msg *m, __u16 attr, __u64 tid)
{
	memset(m, 0, sizeof(*m));
	m->method = CM_METHOD_SEND;
	m->attr_id = attr;
	m->tid = tid;
}

static void send_raw(int ifindex, const struct gsi_peer *to,
		     const struct cm_msg *m)
{
	__u8 buf[CM_MAD_LEN];
	struct gsi *g = gsi_of(ifindex);

	if (!g)
		return;
	cm_mad_encode(m, buf);
	pr_debug("CM: %s to QP1 of a peer (ifindex %d)\n",
		 cm_attr_name(m->attr_id), ifindex);
	gsi_send(g, to, buf);
}

/* Send m on id's connection; kept for retransmission when retries > 0 */
static void id_send(struct cm_id *id, const struct cm_msg *m, int retries,
		    long wait_ms)
{
	struct gsi *g = gsi_of(id->ifindex);

	cm_mad_encode(m, id->mad);
	id->mad_valid = retries > 0;
	id->retries_left = retries;
	timer_set(id, retries > 0 ? wait_ms : 0);
	pr_debug("CM id %u: %s (state %s)\n", id->handle,
		 cm_attr_name(m->attr_id), st(id));
	if (g)
		gsi_send(g, &id->peer, id->mad);
}

static void peer_of(struct cm_id *id)
{
	memset(&id->peer, 0, sizeof(id->peer));
	memcpy(id->peer.gid, id->dgid, 16);
	memcpy(id->peer.local_gid, id->sgid, 16);
	id->peer.qpn = GSI_QPN;
	id->peer.traffic_class = id->tos;
	id->peer.hop_limit = CM_HOP_LIMIT;
}

static void send_rej(struct cm_id *id, enum cm_msg_ref what, __u16 reason,
		     const __u8 *pd, size_t len)
{
	struct cm_msg m;

	msg_hdr(&m, CM_ATTR_REJ, id->tid);
	m.rej.local_comm_id = id->local_comm_id;
	m.rej.remote_comm_id = id->remote_comm_id;
	m.rej.msg_rejected = what;
	m.rej.reason = reason;
	if (reason == CM_REJ_TIMEOUT) {
		/* ARI: the CA GUID of the side that timed out */
		__u64 g = htobe64(ca_guid(id->ifindex));

		memcpy(m.rej.ari, &g, 8);
		m.rej.ari_length = 8;
	}
	if (pd && len)
		memcpy(m.rej.private_data, pd, len);
	id_send(id, &m, 0, 0);
}

static void send_dreq(struct cm_id *id)
{
	struct cm_msg m;

	id->tid = new_tid();
	msg_hdr(&m, CM_ATTR_DREQ, id->tid);
	m.dreq.local_comm_id = id->local_comm_id;
	m.dreq.remote_comm_id = id->remote_comm_id;
	m.dreq.remote_qpn = id->remote_qpn;
	id->state = CM_DREQ_SENT;
	id_send(id, &m, id->max_cm_retries, cm_wait_ms(id->peer_resp_timeout));
}

static void enter_timewait(struct cm_id *id)
{
	long ms = (long)cm_time_ms(ack_timeout(id));

	id->state = CM_TIMEWAIT;
	id->mad_valid = false;
	timer_set(id, ms < 100 ? 100 : ms);
}

static void send_drep(struct cm_id *id, __u64 tid)
{
	struct cm_msg m;

	msg_hdr(&m, CM_ATTR_DREP, tid);
	m.rtu.local_comm_id = id->local_comm_id;
	m.rtu.remote_comm_id = id->remote_comm_id;
	id_send(id, &m, 0, 0);
	enter_timewait(id);
	/* kept for a retransmitted DREQ during TimeWait */
	id->mad_valid = true;
}

static void send_sidr_rep(struct cm_id *id, __u8 status, const __u8 *pd,
			  size_t len)
{
	struct cm_msg m;
	__u16 ps = id->ps;

	msg_hdr(&m, CM_ATTR_SIDR_REP, id->tid);
	m.sidr_rep.request_id = id->remote_comm_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = status == CM_SIDR_SUCCESS ? id->local_qpn : 0;
	m.sidr_rep.qkey = status == CM_SIDR_SUCCESS ? id->qkey : 0;
	m.sidr_rep.service_id = cm_ip_service_id(ps, ntohs(id->src.port));
	m.sidr_rep.vendor_id = id->ece_vendor_id;
	if (pd && len)
		memcpy(m.sidr_rep.private_data, pd, len);
	id_send(id, &m, 0, 0);
	/* kept while the id lives, for a retransmitted SIDR_REQ */
	id->mad_valid = true;
	id->state = CM_SIDR_REP_SENT;
}

/*
 * Take id off the wire as its state asks (a destroy, or its client went):
 * a REJ for a connection being set up, a DREQ (then TimeWait) for one that
 * is up, a DREP for one the peer is closing. Returns true if the id must
 * linger (detached) to finish that.
 */
static bool id_shutdown(struct cm_id *id)
{
	request_done(id);
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		send_rej(id, CM_MSG_REQ, CM_REJ_TIMEOUT, NULL, 0);
		return false;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
		send_rej(id, CM_MSG_REQ, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case CM_REP_RCVD:
		send_rej(id, CM_MSG_REP, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case CM_REP_SENT:
		send_rej(id, CM_MSG_REP, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case CM_ESTABLISHED:
		send_dreq(id);
		return true;
	case CM_DREQ_RCVD:
		send_drep(id, id->tid);
		return true;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		return true;
	case CM_SIDR_REQ_RCVD:
		send_sidr_rep(id, CM_SIDR_REJECT, NULL, 0);
		return false;
	default:
		return false;
	}
}

/* The id leaves its client: gone now, or lingering detached */
static void id_destroy(struct cm_id *id)
{
	bool linger = id_shutdown(id);

	if (id->owner)
		id->owner->nids--;
	id->owner = NULL;
	id->chan = NULL;
	id->bound = false; /* its port is free again */
	if (linger && gsi_of(id->ifindex)) {
		timer_rearm();
		return;
	}
	id->owner = NULL;
	id_free(id);
	timer_rearm();
}

/* --- timeouts ----------------------------------------------------------- */

static void id_expired(struct cm_id *id)
{
	struct gsi *g = gsi_of(id->ifindex);

	id->timer = 0;
	if (id->mad_valid && id->retries_left > 0 && g &&
	    (id->state == CM_REQ_SENT || id->state == CM_REP_SENT ||
	     id->state == CM_DREQ_SENT || id->state == CM_SIDR_REQ_SENT)) {
		id->retries_left--;
		pr_debug("CM id %u: no answer, sending again (%d left)\n",
			 id->handle, id->retries_left);
		gsi_send(g, &id->peer, id->mad);
		timer_set(id,
			  id->state == CM_REP_SENT
				  ? cm_wait_ms(id->peer_resp_timeout)
				  : cm_wait_ms(id->state == CM_DREQ_SENT
						       ? id->peer_resp_timeout
						       : CM_RESPONSE_TIMEOUT));
		return;
	}
	switch (id->state) {
	case CM_ADDR_QUERY:
		id->state = CM_ADDR_BOUND;
		ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
		break;
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
		send_rej(id, id->state == CM_REP_SENT ? CM_MSG_REP : CM_MSG_REQ,
			 CM_REJ_TIMEOUT, NULL, 0);
		id->state = CM_IDLE;
		ev_simple(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case CM_SIDR_REQ_SENT:
		id->state = CM_IDLE;
		ev_simple(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case CM_DREQ_SENT:
		/* the peer never answered: disconnected all the same */
		enter_timewait(id);
		ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case CM_TIMEWAIT:
		id->state = CM_DISCONNECTED;
		id->mad_valid = false;
		if (!id->owner) {
			id_free(id);
			return;
		}
		ev_simple(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		break;
	default:
		break;
	}
}

static void on_timer(struct ep_tag *ep, __u32 events)
{
	__u64 n;
	long now = now_ms();
	bool again = true;

	if (read(timer_fd, &n, sizeof(n)) < 0) {
		/* spurious */
	}
	timer_armed = 0;
	/* id_expired may free ids: restart the walk after each one */
	while (again) {
		again = false;
		for (struct cm_id *id = ids; id; id = id->next) {
			if (id->timer && id->timer <= now) {
				id_expired(id);
				again = true;
				break;
			}
		}
	}
	timer_rearm();
}

/* --- address resolution ---------------------------------------------------- */

/* Resolve the neighbour of id's destination (the MAC the QP and QP1 will
 * need): 0, -EINPROGRESS, or -errno */
static int neigh_resolve(struct cm_id *id)
{
	struct rxdp_link *l = link_by_index(id->ifindex);
	struct rxdp_ah ah = { .hop_limit = CM_HOP_LIMIT };
	struct rxdp_path path;
	char why[256];

	if (!l || !l->dev)
		return -ENODEV;
	memcpy(ah.dgid, id->dgid, 16);
	ah.sgid_index = id->sgid_index;
	return path_resolve(l, &ah, 0, 0, &path, &id->neigh_deadline, why,
			    sizeof(why));
}

static void addr_query_step(struct cm_id *id)
{
	int ret = neigh_resolve(id);

	if (ret == -EINPROGRESS)
		return;
	id->timer = 0;
	if (ret) {
		id->state = CM_ADDR_BOUND;
		ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, ret);
		return;
	}
	id->state = CM_ADDR_RESOLVED;
	ev_simple(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
}

/* One request of a client (RXDP_CTL_CM), as its op's handler sees it */
struct cm_call {
	struct rxdp_client *c;
	struct cm_client *cl;
	struct rxdp_ctl_cm *cm; /* the request, then the reply */
	struct cm_id *id; /* the id it is on, for ops on one */
	int *fd; /* one to send with the reply, or -1 */
	char *msg;
	size_t msglen;
};

static int do_resolve_addr(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	uid_t uid = q->c->uid;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	struct rxdp_cm_addr *dst = &cm->dst;
	struct rxdp_link *l;
	struct cm_route r;
	int err, gi;

	if (dst->family != AF_INET && dst->family != AF_INET6) {
		snprintf(msg, msglen, "the destination is not an IP address");
		return -EAFNOSUPPORT;
	}
	if (id->state == CM_IDLE) {
		struct rxdp_cm_addr any = { .family = dst->family };

		err = id_bind(id, cm->src.family ? &cm->src : &any, uid);
		if (err) {
			snprintf(msg, msglen, "cannot bind the source: %s",
				 strerror(-err));
			return err;
		}
	}
	if (id->state != CM_ADDR_BOUND && id->state != CM_ADDR_RESOLVED &&
	    id->state != CM_ROUTE_RESOLVED) {
		snprintf(msg, msglen, "the id is %s", st(id));
		return -EINVAL;
	}
	if (id->src.family != dst->family) {
		snprintf(msg, msglen, "source and destination families differ");
		return -EINVAL;
	}
	err = cm_route_get(dst->family, dst->addr,
			   addr_any(&id->src) ? NULL : id->src.addr, &r);
	if (err) {
		snprintf(msg, msglen, "no route to the destination: %s",
			 strerror(-err));
		return err;
	}
	l = r.local ? link_of_addr(dst) : link_by_index(r.ifindex);
	if (!l || !l->dev || !gsi_of(l->ifindex)) {
		/* not an rxdp device: the event says so (ENODEV), as
		 * rdma-core reports an address no RDMA device has */
		id->state = CM_ADDR_BOUND;
		ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
		return 0;
	}
	if (addr_any(&id->src)) {
		__be16 port = id->src.port;

		if (r.local) {
			memcpy(id->src.addr, dst->addr, alen(dst->family));
		} else if (r.has_src) {
			memcpy(id->src.addr, r.src, alen(dst->family));
		} else {
			snprintf(msg, msglen,
				 "the route has no source address");
			return -EADDRNOTAVAIL;
		}
		id->src.port = port;
	}
	addr_gid(&id->src, id->sgid);
	gi = gid_index_of(l, id->sgid);
	if (gi < 0) {
		snprintf(msg, msglen,
			 "the source address has no GID on rxdp_%s", l->ifname);
		return -EADDRNOTAVAIL;
	}
	id->ifindex = l->ifindex;
	id->sgid_index = (__u8)gi;
	id->mtu = port_mtu(l->ifindex);
	id->dst = *dst;
	addr_gid(dst, id->dgid);
	id->route_resolved = false;
	id->state = CM_ADDR_QUERY;
	id->neigh_deadline = 0;
	timer_set(id, cm->timeout_ms ? (long)cm->timeout_ms : 2000);
	addr_query_step(id);
	return 0;
}

/* --- connecting ----------------------------------------------------------- */

static int pdata_check(size_t len, size_t max, char *msg, size_t msglen)
{
	if (len <= max)
		return 0;
	snprintf(msg, msglen, "%zu bytes of private data: at most %zu", len,
		 max);
	return -EINVAL;
}

static void ip_hdr_of(const struct cm_id *id, __u8 *pd)
{
	struct cm_ip_hdr h = { .ip_version = id->src.family == AF_INET ? 4 : 6,
			       .src_port = ntohs(id->src.port) };

	memcpy(h.src_ip + (id->src.family == AF_INET ? 12 : 0), id->src.addr,
	       alen(id->src.family));
	memcpy(h.dst_ip + (id->dst.family == AF_INET ? 12 : 0), id->dst.addr,
	       alen(id->dst.family));
	cm_ip_hdr_encode(&h, pd);
}

static bool is_ud(const struct cm_id *id)
{
	return id->qp_type == IBV_QPT_UD;
}

static int do_connect(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	const struct rxdp_cm_conn *c = &cm->conn;
	struct cm_msg m;
	int err;

	if (id->state != CM_ROUTE_RESOLVED) {
		snprintf(msg, msglen, "connect needs a resolved route (%s)",
			 st(id));
		return -EINVAL;
	}
	peer_of(id);
	id->local_comm_id = comm_id_new();
	id->tid = new_tid();
	id->peer_resp_timeout = CM_RESPONSE_TIMEOUT;
	id->max_cm_retries = CM_MAX_RETRIES;
	id->ece_vendor_id = c->ece_vendor_id;
	id->ece_options = c->ece_options;
	if (is_ud(id)) {
		err = pdata_check(c->private_data_len,
				  CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN, msg,
				  msglen);
		if (err)
			return err;
		msg_hdr(&m, CM_ATTR_SIDR_REQ, id->tid);
		m.sidr_req.request_id = id->local_comm_id;
		m.sidr_req.pkey = RXDP_DEFAULT_PKEY;
		m.sidr_req.service_id =
			cm_ip_service_id(id->ps, ntohs(id->dst.port));
		ip_hdr_of(id, m.sidr_req.private_data);
		memcpy(m.sidr_req.private_data + CM_IP_HDR_LEN,
		       cm->private_data, c->private_data_len);
		id->state = CM_SIDR_REQ_SENT;
		id_send(id, &m, CM_MAX_RETRIES,
			cm_wait_ms(CM_RESPONSE_TIMEOUT));
		return 0;
	}
	err = pdata_check(c->private_data_len, CM_REQ_PDATA - CM_IP_HDR_LEN,
			  msg, msglen);
	if (err)
		return err;
	id->local_qpn = c->qp_num & 0xffffff;
	id->resp_res = c->responder_resources;
	id->init_depth = c->initiator_depth;
	id->flow_control = c->flow_control & 1;
	id->retry_count = c->retry_count & 7;
	id->rnr_retry_count = c->rnr_retry_count & 7;
	id->srq = c->srq & 1;
	id->connected_once = true;
	msg_hdr(&m, CM_ATTR_REQ, id->tid);
	m.attr_mod = id->ece_options;
	m.req.local_comm_id = id->local_comm_id;
	m.req.vendor_id = id->ece_vendor_id & 0xffffff;
	m.req.service_id = cm_ip_service_id(id->ps, ntohs(id->dst.port));
	m.req.local_ca_guid = ca_guid(id->ifindex);
	m.req.local_qpn = id->local_qpn;
	m.req.responder_resources = id->resp_res;
	m.req.initiator_depth = id->init_depth;
	m.req.remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	m.req.transport = id->qp_type == IBV_QPT_UC ? CM_TRANSPORT_UC
						    : CM_TRANSPORT_RC;
	m.req.flow_control = id->flow_control;
	m.req.starting_psn = id->rq_psn;
	m.req.local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	m.req.retry_count = id->retry_count;
	m.req.pkey = RXDP_DEFAULT_PKEY;
	m.req.path_mtu = id->mtu;
	m.req.rnr_retry_count = id->rnr_retry_count;
	m.req.max_cm_retries = CM_MAX_RETRIES;
	m.req.srq = id->srq;
	/* RoCE: no LIDs; the permissive LID, as Linux sends for a routed path */
	m.req.primary.local_lid = 0xffff;
	m.req.primary.remote_lid = 0xffff;
	memcpy(m.req.primary.local_gid, id->sgid, 16);
	memcpy(m.req.primary.remote_gid, id->dgid, 16);
	m.req.primary.packet_rate = CM_RATE_10G;
	m.req.primary.traffic_class = id->tos;
	m.req.primary.hop_limit = CM_HOP_LIMIT;
	m.req.primary.local_ack_timeout = ack_timeout(id);
	ip_hdr_of(id, m.req.private_data);
	memcpy(m.req.private_data + CM_IP_HDR_LEN, cm->private_data,
	       c->private_data_len);
	id->state = CM_REQ_SENT;
	id_send(id, &m, CM_MAX_RETRIES, cm_wait_ms(CM_RESPONSE_TIMEOUT));
	return 0;
}

static int do_accept(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	const struct rxdp_cm_conn *c = &cm->conn;
	struct cm_msg m;
	int err;

	if (id->state == CM_SIDR_REQ_RCVD) {
		err = pdata_check(c->private_data_len, CM_SIDR_REP_PDATA, msg,
				  msglen);
		if (err)
			return err;
		request_done(id);
		id->local_qpn = c->qp_num & 0xffffff;
		if (c->qkey)
			id->qkey = c->qkey;
		id->ece_vendor_id = c->ece_vendor_id;
		send_sidr_rep(id, CM_SIDR_SUCCESS, cm->private_data,
			      c->private_data_len);
		return 0;
	}
	if (id->state != CM_REQ_RCVD && id->state != CM_MRA_REQ_SENT) {
		snprintf(msg, msglen, "nothing to accept (%s)", st(id));
		return -EINVAL;
	}
	err = pdata_check(c->private_data_len, CM_REP_PDATA, msg, msglen);
	if (err)
		return err;
	request_done(id);
	id->local_qpn = c->qp_num & 0xffffff;
	id->resp_res = c->responder_resources;
	id->init_depth = c->initiator_depth;
	id->srq = c->srq & 1;
	msg_hdr(&m, CM_ATTR_REP, id->tid);
	m.attr_mod = c->ece_options;
	m.rep.local_comm_id = id->local_comm_id;
	m.rep.remote_comm_id = id->remote_comm_id;
	m.rep.local_qpn = id->local_qpn;
	m.rep.vendor_id = c->ece_vendor_id & 0xffffff;
	m.rep.starting_psn = id->rq_psn;
	m.rep.responder_resources = id->resp_res;
	m.rep.initiator_depth = id->init_depth;
	m.rep.target_ack_delay = CM_TARGET_ACK_DELAY;
	m.rep.flow_control = c->flow_control & 1;
	m.rep.rnr_retry_count = c->rnr_retry_count & 7;
	m.rep.srq = id->srq;
	m.rep.local_ca_guid = ca_guid(id->ifindex);
	memcpy(m.rep.private_data, cm->private_data, c->private_data_len);
	id->state = CM_REP_SENT;
	id_send(id, &m, id->max_cm_retries, cm_wait_ms(id->peer_resp_timeout));
	return 0;
}

static int do_reject(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	__u16 reason = cm->reason ? (__u16)cm->reason : CM_REJ_CONSUMER_DEFINED;
	size_t len = cm->conn.private_data_len;
	int err;

	switch (id->state) {
	case CM_SIDR_REQ_RCVD:
		err = pdata_check(len, CM_SIDR_REP_PDATA, msg, msglen);
		if (err)
			return err;
		request_done(id);
		send_sidr_rep(id, CM_SIDR_REJECT, cm->private_data, len);
		return 0;
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_RCVD:
		err = pdata_check(len, CM_REJ_PDATA, msg, msglen);
		if (err)
			return err;
		request_done(id);
		send_rej(id, id->state == CM_REP_RCVD ? CM_MSG_REP : CM_MSG_REQ,
			 reason, cm->private_data, len);
		id->state = CM_IDLE;
		return 0;
	default:
		snprintf(msg, msglen, "nothing to reject (%s)", st(id));
		return -EINVAL;
	}
}

static int do_disconnect(struct cm_call *q)
{
	struct cm_id *id = q->id;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		send_dreq(id);
		timer_rearm();
		return 0;
	case CM_DREQ_RCVD:
		send_drep(id, id->tid);
		return 0;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
	case CM_DISCONNECTED:
		return 0;
	default:
		snprintf(msg, msglen, "not connected (%s)", st(id));
		return -EINVAL;
	}
}

/* Active side, after CONNECT_RESPONSE: the RTU (rdma-core's ACCEPT) */
static int do_establish(struct cm_call *q)
{
	struct cm_id *id = q->id;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	struct cm_msg m;

	if (id->state != CM_REP_RCVD) {
		snprintf(msg, msglen, "no REP to answer (%s)", st(id));
		return -EINVAL;
	}
	msg_hdr(&m, CM_ATTR_RTU, id->tid);
	m.rtu.local_comm_id = id->local_comm_id;
	m.rtu.remote_comm_id = id->remote_comm_id;
	id->state = CM_ESTABLISHED;
	id_send(id, &m, 0, 0);
	memcpy(id->rtu, id->mad, CM_MAD_LEN);
	id->rtu_valid = true;
	return 0;
}

/* ibv_qp_attr's fields for the application's QP, as the kernel's
 * rdma_init_qp_attr() gives them */
static int do_init_qp_attr(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	struct rxdp_qp_attr *a = &cm->qp_attr;
	__u32 state = (__u32)cm->value;
	bool known = id->state >= CM_REQ_SENT && id->state != CM_LISTEN;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	a->port_num = 1;
	if (!id->ifindex) {
		snprintf(msg, msglen, "the id has no device yet");
		return -EINVAL;
	}
	switch (state) {
	case IBV_QPS_INIT:
		cm->attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (is_ud(id)) {
			a->qkey = id->qkey;
			cm->attr_mask |= IBV_QP_QKEY;
		} else {
			if (id->connected_once)
				a->qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE |
					(id->resp_res
						 ? IBV_ACCESS_REMOTE_READ |
							   IBV_ACCESS_REMOTE_ATOMIC
						 : 0);
			cm->attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		cm->attr_mask = IBV_QP_STATE;
		if (is_ud(id))
			return 0;
		if (!known || id->state == CM_REQ_SENT ||
		    id->state == CM_MRA_REQ_RCVD) {
			snprintf(msg, msglen, "the peer is not known yet (%s)",
				 st(id));
			return -EINVAL;
		}
		cm->attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN;
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		memcpy(a->ah.dgid, id->dgid, 16);
		a->ah.sgid_index = id->sgid_index;
		a->ah.hop_limit = CM_HOP_LIMIT;
		a->ah.traffic_class = id->tos;
		if (id->qp_type == IBV_QPT_RC) {
			cm->attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = id->resp_res;
			a->min_rnr_timer = 0;
		}
		return 0;
	case IBV_QPS_RTS:
		cm->attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		a->sq_psn = is_ud(id) ? 0 : id->sq_psn;
		if (id->qp_type == IBV_QPT_RC) {
			cm->attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = ack_timeout(id);
			a->retry_cnt = id->retry_count;
			a->rnr_retry = id->rnr_retry_count;
			a->max_rd_atomic = id->init_depth;
		}
		return 0;
	default:
		snprintf(msg, msglen, "no attributes for QP state %u", state);
		return -EINVAL;
	}
}

static int do_set_option(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	if (cm->level == RDMA_OPTION_ID) {
		switch (cm->optname) {
		case RDMA_OPTION_ID_TOS:
			id->tos = (__u8)cm->value;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
			if (id->state != CM_IDLE)
				break;
			id->reuseaddr = !!cm->value;
			return 0;
		case RDMA_OPTION_ID_AFONLY:
			if (id->state != CM_IDLE)
				break;
			id->afonly = !!cm->value;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			id->ack_timeout = (__u8)(cm->value & 31);
			id->ack_timeout_set = true;
			return 0;
		default:
			snprintf(msg, msglen, "unknown option %u", cm->optname);
			return -ENOPROTOOPT;
		}
		snprintf(msg, msglen, "option %u only before binding",
			 cm->optname);
		return -EINVAL;
	}
	snprintf(msg, msglen, "option level %u is not supported", cm->level);
	return -ENOSYS;
}

static int do_listen(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	uid_t uid = q->c->uid;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	int err;

	if (id->state == CM_IDLE) {
		struct rxdp_cm_addr any = { .family = AF_INET6 };

		err = id_bind(id, &any, uid);
		if (err)
			return err;
	}
	if (id->state == CM_LISTEN) {
		id->backlog = cm->backlog > 0 && cm->backlog < CM_MAX_BACKLOG
				      ? (int)cm->backlog
				      : CM_MAX_BACKLOG;
		return 0;
	}
	if (id->state != CM_ADDR_BOUND) {
		snprintf(msg, msglen, "listen needs a bound id (%s)", st(id));
		return -EINVAL;
	}
	if (id->reuseaddr) {
		err = port_check(id, id->src.port, true);
		if (err)
			return -EADDRINUSE;
	}
	id->backlog = cm->backlog > 0 && cm->backlog < CM_MAX_BACKLOG
			      ? (int)cm->backlog
			      : CM_MAX_BACKLOG;
	id->state = CM_LISTEN;
	return 0;
}

/* --- requests from the library ------------------------------------------- */

static struct cm_chan *chan_find(struct cm_client *cl, __u32 h)
{
	for (struct cm_chan *ch = cl->chans; ch; ch = ch->next)
		if (ch->handle == h && !ch->zombie)
			return ch;
	return NULL;
}

static int chan_create(struct cm_call *q)
{
	struct cm_client *cl = q->cl;
	struct rxdp_ctl_cm *cm = q->cm;
	int *fd = q->fd;
	struct cm_chan *ch;
	int sv[2], sz = 1 << 20;

	if (!cm_slot_ok(cl, true))
		return -EMFILE;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	/* ours writes without blocking; the library's only reads */
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	shutdown(sv[1], SHUT_WR);
	ch->wfd = sv[0];
	if (ep_watch(&ch->ep, ch->wfd, 0, chan_ready)) {
		close(sv[0]);
		close(sv[1]);
		free(ch);
		return -ENOMEM;
	}
	if (!++next_chan)
		++next_chan;
	ch->handle = next_chan;
	ch->owner = cl;
	ch->next = cl->chans;
	cl->chans = ch;
	cl->nchans++;
	cm->channel = ch->handle;
	*fd = sv[1];
	return 0;
}

static void chan_free(struct cm_chan *ch)
{
	struct cm_client *cl = ch->owner;
	struct cm_chan **pp;

	for (pp = &cl->chans; *pp; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	chan_drop_queue(ch);
	if (!ch->hup)
		ep_del(ch->wfd, &ch->ep);
	close(ch->wfd);
	cl->nchans--;
	free(ch);
}

/*
 * The kernel's way: a channel's ids go with it. Its socket stays open (a
 * zombie, still counted) until the library's end is closed, since another
 * thread of the application may be blocked reading it: it must stay
 * blocked, as on /dev/infiniband/rdma_cm, not see an end of file.
 */
static void chan_destroy(struct cm_client *cl, struct cm_chan *ch, bool now)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct cm_id *id = ids; id; id = id->next) {
			if (id->owner == cl && id->chan == ch) {
				id_destroy(id);
				again = true;
				break;
			}
		}
	}
	chan_drop_queue(ch);
	if (now || ch->hup) {
		chan_free(ch);
		return;
	}
	ch->zombie = true;
	ep_mod(ch->wfd, &ch->ep, 0);
}

static int ps_valid(__u32 ps)
{
	return ps == RDMA_PS_TCP || ps == RDMA_PS_UDP || ps == RDMA_PS_IB;
}

/* For rxdp-ctl: the id after cm->id (root sees all, a user its own) */
static int cm_next(struct cm_call *q)
{
	struct rxdp_client *c = q->c;
	struct rxdp_ctl_cm *cm = q->cm;
	struct cm_id *best = NULL;

	for (struct cm_id *id = ids; id; id = id->next) {
		if (id->handle <= cm->id || (best && id->handle > best->handle))
			continue;
		if (c->uid && (!id->owner || id->owner->c != c) &&
		    (!id->owner || id->owner->c->uid != c->uid))
			continue;
		best = id;
	}
	if (!best)
		return -ENOENT;
	memset(cm, 0, sizeof(*cm));
	cm->op = RXDP_CM_NEXT;
	cm->id = best->handle;
	cm->ps = best->ps;
	cm->qp_type = best->qp_type;
	cm->value = best->owner ? (__u64)best->owner->c->pid : 0;
	info_fill(best, &cm->info);
	snprintf((char *)cm->private_data, sizeof(cm->private_data), "%s",
		 st(best));
	return 0;
}

static int op_channel_destroy(struct cm_call *r)
{
	struct cm_chan *ch = chan_find(r->cl, r->cm->channel);

	if (!ch) {
		snprintf(r->msg, r->msglen, "no channel %u", r->cm->channel);
		return -ENOENT;
	}
	chan_destroy(r->cl, ch, false);
	return 0;
}

static int op_create_id(struct cm_call *r)
{
	struct rxdp_ctl_cm *cm = r->cm;
	struct cm_chan *ch = chan_find(r->cl, cm->channel);
	struct cm_id *id;

	if (!ch) {
		snprintf(r->msg, r->msglen, "no channel %u", cm->channel);
		return -ENOENT;
	}
	if (!ps_valid(cm->ps)) {
		snprintf(r->msg, r->msglen, "port space %#x is not supported",
			 cm->ps);
		return -EPROTONOSUPPORT;
	}
	if (cm->qp_type != IBV_QPT_RC && cm->qp_type != IBV_QPT_UC &&
	    cm->qp_type != IBV_QPT_UD) {
		snprintf(r->msg, r->msglen, "QP type %u is not supported",
			 cm->qp_type);
		return -EINVAL;
	}
	id = id_new(r->cl, ch, (__u16)cm->ps, cm->qp_type);
	if (!id)
		return -errno;
	cm->id = id->handle;
	return 0;
}

static int op_repost(struct cm_call *r)
{
	const struct rxdp_cm_event *ev = &r->cm->event;
	struct cm_chan *ch = chan_find(r->cl, r->cm->channel);

	if (!ch || !id_find(r->cl, ev->id) ||
	    (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
	     !id_find(r->cl, ev->listen_id))) {
		snprintf(r->msg, r->msglen, "no such channel or id");
		return -ENOENT;
	}
	chan_put(ch, ev);
	return 0;
}

static int op_destroy_id(struct cm_call *r)
{
	id_destroy(r->id);
	return 0;
}

static int op_migrate_id(struct cm_call *r)
{
	struct cm_chan *ch = chan_find(r->cl, r->cm->channel);

	if (!ch) {
		snprintf(r->msg, r->msglen, "no channel %u", r->cm->channel);
		return -ENOENT;
	}
	r->id->chan = ch;
	return 0;
}

static int op_bind(struct cm_call *r)
{
	int err = id_bind(r->id, &r->cm->src, r->c->uid);

	if (err)
		snprintf(r->msg, r->msglen, "cannot bind: %s", strerror(-err));
	return err;
}

static int op_resolve_route(struct cm_call *r)
{
	struct cm_id *id = r->id;

	if (id->state != CM_ADDR_RESOLVED && id->state != CM_ROUTE_RESOLVED) {
		snprintf(r->msg, r->msglen, "the address is not resolved (%s)",
			 st(id));
		return -EINVAL;
	}
	/* RoCE: the path is the resolved address; no SA to ask */
	id->route_resolved = true;
	id->state = CM_ROUTE_RESOLVED;
	ev_simple(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int op_notify(struct cm_call *r)
{
	struct cm_id *id = r->id;

	if (r->cm->value == IBV_EVENT_COMM_EST && id->state == CM_REP_SENT) {
		id->state = CM_ESTABLISHED;
		id->timer = 0;
		id->mad_valid = false;
		ev_simple(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	}
	return 0;
}

static int op_query(struct cm_call *r)
{
	return 0;
}

/*
 * The CM's requests: each op's handler, whether it is on one of the
 * client's ids (then found first), and whether the reply carries the id's
 * state (after the timer follows what the op changed)
 */
struct cm_cmd {
	int (*fn)(struct cm_call *r);
	bool on_id;
	bool info;
};

static const struct cm_cmd cm_cmds[RXDP_CM_OP_MAX] = {
	[RXDP_CM_CHANNEL_CREATE] = { chan_create },
	[RXDP_CM_CHANNEL_DESTROY] = { op_channel_destroy },
	[RXDP_CM_CREATE_ID] = { op_create_id },
	[RXDP_CM_REPOST] = { op_repost },
	[RXDP_CM_NEXT] = { cm_next },
	[RXDP_CM_DESTROY_ID] = { op_destroy_id, true },
	[RXDP_CM_MIGRATE_ID] = { op_migrate_id, true },
	[RXDP_CM_BIND] = { op_bind, true, true },
	[RXDP_CM_RESOLVE_ADDR] = { do_resolve_addr, true, true },
	[RXDP_CM_RESOLVE_ROUTE] = { op_resolve_route, true, true },
	[RXDP_CM_LISTEN] = { do_listen, true, true },
	[RXDP_CM_CONNECT] = { do_connect, true, true },
	[RXDP_CM_ACCEPT] = { do_accept, true, true },
	[RXDP_CM_REJECT] = { do_reject, true, true },
	[RXDP_CM_DISCONNECT] = { do_disconnect, true, true },
	[RXDP_CM_ESTABLISH] = { do_establish, true, true },
	[RXDP_CM_NOTIFY] = { op_notify, true, true },
	[RXDP_CM_INIT_QP_ATTR] = { do_init_qp_attr, true, true },
	[RXDP_CM_QUERY] = { op_query, true, true },
	[RXDP_CM_SET_OPTION] = { do_set_option, true, true },
};

int cm_request(struct rxdp_client *c, struct rxdp_ctl_cm *cm, int *fd,
	       char *msg, size_t msglen)
{
	struct cm_call r = {
		.c = c, .cm = cm, .fd = fd, .msg = msg, .msglen = msglen
	};
	const struct cm_cmd *cmd;
	int err;

	*fd = -1;
	if (!c->cm) {
		c->cm = calloc(1, sizeof(*c->cm));
		if (!c->cm)
			return -ENOMEM;
		c->cm->c = c;
	}
	r.cl = c->cm;
	cm->conn.private_data_len = cm->conn.private_data_len >
						    RXDP_CM_PDATA_MAX
					    ? RXDP_CM_PDATA_MAX
					    : cm->conn.private_data_len;
	cmd = cm->op < RXDP_CM_OP_MAX ? &cm_cmds[cm->op] : NULL;
	if (!cmd || !cmd->fn) {
		snprintf(msg, msglen, "unknown CM request %u", cm->op);
		return -EOPNOTSUPP;
	}
	if (!cmd->on_id)
		return cmd->fn(&r);
	r.id = id_find(r.cl, cm->id);
	if (!r.id) {
		snprintf(msg, msglen, "no CM id %u", cm->id);
		return -ENOENT;
	}
	err = cmd->fn(&r);
	if (!cmd->info)
		return err;
	timer_rearm();
	if (!err)
		info_fill(r.id, &cm->info);
	return err;
}

void cm_client_release(struct rxdp_client *c)
{
	struct cm_client *cl = c->cm;

	if (!cl)
		return;
	while (cl->chans)
		chan_destroy(cl, cl->chans, true);
	/* ids are on channels; none should be left, but be sure */
	for (struct cm_id *id = ids; id;) {
		struct cm_id *n = id->next;

		if (id->owner == cl)
			id_destroy(id);
		id = n;
	}
	free(cl);
	c->cm = NULL;
}

/* --- MADs from the wire ----------------------------------------------------- */

/* Answer a MAD that belongs to no connection (no id was made for it) */
static void reply_rej(int ifindex, const struct gsi_peer *from,
		      const struct cm_msg *in, __u16 reason)
{
	struct gsi_peer to = *from;
	struct cm_msg m;

	msg_hdr(&m, CM_ATTR_REJ, in->tid);
	m.rej.remote_comm_id = in->req.local_comm_id;
	m.rej.msg_rejected = CM_MSG_REQ;
	m.rej.reason = reason;
	to.qpn = from->qpn ? from->qpn : GSI_QPN;
	send_raw(ifindex, &to, &m);
}

static void reply_sidr(int ifindex, const struct gsi_peer *from,
		       const struct cm_msg *in, __u8 status)
{
	struct gsi_peer to = *from;
	struct cm_msg m;

	msg_hdr(&m, CM_ATTR_SIDR_REP, in->tid);
	m.sidr_rep.request_id = in->sidr_req.request_id;
	m.sidr_rep.status = status;
	m.sidr_rep.service_id = in->sidr_req.service_id;
	send_raw(ifindex, &to, &m);
}

/*
 * The listener for (ps, port) that takes a request to dst arriving on
 * ifindex: one bound to that address first, a wildcard one else.
 */
static struct cm_id *listener_find(__u16 ps, __u16 port, int ifindex,
				   const struct rxdp_cm_addr *dst)
{
	struct cm_id *any = NULL;

	for (struct cm_id *id = ids; id; id = id->next) {
		if (id->state != CM_LISTEN || !id->owner || id->ps != ps ||
		    ntohs(id->src.port) != port)
			continue;
		if (id->ifindex && id->ifindex != ifindex)
			continue;
		if (addr_any(&id->src)) {
			/* an IPv6 wildcard takes IPv4 too unless AFONLY */
			if (id->src.family == dst->family ||
			    (!id->afonly && id->src.family == AF_INET6))
				any = any ? any : id;
			continue;
		}
		if (addr_eq(&id->src, dst))
			return id;
	}
	return any;
}

/* A new id for a request to listener l, from what the request says */
static struct cm_id *child_new(struct cm_id *l, int ifindex,
			       const struct cm_ip_hdr *h, __u16 port,
			       const struct gsi_peer *from)
{
	struct rxdp_link *link = link_by_index(ifindex);
	struct cm_id *id;
	int gi;

	if (!link || half_open >= CM_MAX_HALF_OPEN || l->pending >= l->backlog)
		return NULL;
	id = id_new(l->owner, l->chan, l->ps, l->qp_type);
	if (!id)
		return NULL;
	id->ifindex = ifindex;
	id->src.family = h->ip_version == 4 ? AF_INET : AF_INET6;
	id->dst.family = id->src.family;
	memcpy(id->src.addr, h->dst_ip + (h->ip_version == 4 ? 12 : 0),
	       alen(id->src.family));
	memcpy(id->dst.addr, h->src_ip + (h->ip_version == 4 ? 12 : 0),
	       alen(id->dst.family));
	id->src.port = htons(port);
	id->dst.port = htons(h->src_port);
	memcpy(id->sgid, from->local_gid, 16);
	memcpy(id->dgid, from->gid, 16);
	gi = gid_index_of(link, id->sgid);
	id->sgid_index = gi < 0 ? 0 : (__u8)gi;
	id->mtu = port_mtu(ifindex);
	id->tos = from->traffic_class;
	id->ack_timeout_set = l->ack_timeout_set;
	id->ack_timeout = l->ack_timeout;
	id->route_resolved = true;
	id->listener = l;
	l->pending++;
	half_open++;
	peer_of(id);
	id->peer.qpn = from->qpn ? from->qpn : GSI_QPN;
	return id;
}

static struct cm_id *dup_req(__u32 remote_comm_id, __u64 remote_guid)
{
	for (struct cm_id *id = ids; id; id = id->next)
		if (id->remote_comm_id == remote_comm_id &&
		    id->remote_ca_guid == remote_guid && id->local_comm_id)
			return id;
	return NULL;
}

static void send_mra(struct cm_id *id)
{
	struct cm_msg m;

	msg_hdr(&m, CM_ATTR_MRA, id->tid);
	m.mra.local_comm_id = id->local_comm_id;
	m.mra.remote_comm_id = id->remote_comm_id;
	m.mra.msg_mraed = CM_MSG_REQ;
	m.mra.service_timeout = CM_MRA_TIMEOUT;
	id_send(id, &m, 0, 0);
}

static void recv_req(int ifindex, const struct gsi_peer *from,
		     const struct cm_msg *m)
{
	const struct cm_req *r = &m->req;
	struct rxdp_cm_addr dst = { 0 };
	struct rxdp_cm_event ev;
	struct cm_ip_hdr h;
	struct cm_id *l, *id;
	__u16 ps, port;

	id = dup_req(r->local_comm_id, r->local_ca_guid);
	if (id) {
		/* the active side did not hear from us in time */
		if (id->state == CM_REQ_RCVD || id->state == CM_MRA_REQ_SENT) {
			id->state = CM_MRA_REQ_SENT;
			send_mra(id);
		} else if (id->state == CM_TIMEWAIT ||
			   id->state == CM_DISCONNECTED) {
			reply_rej(ifindex, from, m, CM_REJ_STALE_CONN);
		}
		return;
	}
	if (cm_ip_service_parse(r->service_id, &ps, &port) ||
	    cm_ip_hdr_decode(r->private_data, &h)) {
		reply_rej(ifindex, from, m, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	dst.family = h.ip_version == 4 ? AF_INET : AF_INET6;
	memcpy(dst.addr, h.dst_ip + (h.ip_version == 4 ? 12 : 0),
	       alen(dst.family));
	l = listener_find(ps, port, ifindex, &dst);
	if (!l || is_ud(l)) {
		pr_debug("CM: REQ for port %u (ps %#x): nobody listens\n", port,
			 ps);
		reply_rej(ifindex, from, m, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (r->transport != CM_TRANSPORT_RC &&
	    !(r->transport == CM_TRANSPORT_UC && l->qp_type == IBV_QPT_UC)) {
		reply_rej(ifindex, from, m, CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	id = child_new(l, ifindex, &h, port, from);
	if (!id) {
		reply_rej(ifindex, from, m, CM_REJ_NO_RESOURCES);
		return;
	}
	id->qp_type = r->transport == CM_TRANSPORT_UC ? IBV_QPT_UC : IBV_QPT_RC;
	id->local_comm_id = comm_id_new();
	id->remote_comm_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->tid = m->tid;
	id->remote_qpn = r->local_qpn;
	id->sq_psn = r->starting_psn;
	/* until accept says otherwise: what the peer asked for */
	id->resp_res = r->initiator_depth;
	id->init_depth = r->responder_resources;
	id->retry_count = r->retry_count;
	id->rnr_retry_count = r->rnr_retry_count;
	id->flow_control = r->flow_control;
	id->local_ack_timeout = r->primary.local_ack_timeout
					? r->primary.local_ack_timeout
					: CM_ACK_TIMEOUT;
	id->peer_resp_timeout = r->local_cm_response_timeout;
	id->max_cm_retries = r->max_cm_retries;
	id->connected_once = true;
	if (r->path_mtu >= IBV_MTU_256 && r->path_mtu < id->mtu)
		id->mtu = r->path_mtu;
	if (r->primary.traffic_class)
		id->tos = r->primary.traffic_class;
	id->state = CM_REQ_RCVD;

	ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev.listen_id = l->handle;
	ev.conn.responder_resources = r->initiator_depth;
	ev.conn.initiator_depth = r->responder_resources;
	ev.conn.flow_control = r->flow_control;
	ev.conn.retry_count = r->retry_count;
	ev.conn.rnr_retry_count = r->rnr_retry_count;
	ev.conn.srq = r->srq;
	ev.conn.qp_num = r->local_qpn;
	ev.conn.ece_vendor_id = r->vendor_id;
	ev.conn.ece_options = m->attr_mod;
	ev_pdata(&ev, r->private_data + CM_IP_HDR_LEN,
		 CM_REQ_PDATA - CM_IP_HDR_LEN);
	ev_send(id, &ev);
}

static void recv_sidr_req(int ifindex, const struct gsi_peer *from,
			  const struct cm_msg *m)
{
	const struct cm_sidr_req *r = &m->sidr_req;
	struct rxdp_cm_addr dst = { 0 };
	struct rxdp_cm_event ev;
	struct cm_ip_hdr h;
	struct cm_id *l, *id;
	__u16 ps, port;

	/* a retransmission: the same request from the same peer */
	for (id = ids; id; id = id->next) {
		if ((id->state == CM_SIDR_REQ_RCVD ||
		     id->state == CM_SIDR_REP_SENT) &&
		    id->remote_comm_id == r->request_id &&
		    !memcmp(id->dgid, from->gid, 16)) {
			if (id->state == CM_SIDR_REP_SENT && id->mad_valid)
				gsi_send(gsi_of(id->ifindex), &id->peer,
					 id->mad);
			return;
		}
	}
	if (cm_ip_service_parse(r->service_id, &ps, &port) ||
	    cm_ip_hdr_decode(r->private_data, &h)) {
		reply_sidr(ifindex, from, m, CM_SIDR_UNSUPPORTED);
		return;
	}
	dst.family = h.ip_version == 4 ? AF_INET : AF_INET6;
	memcpy(dst.addr, h.dst_ip + (h.ip_version == 4 ? 12 : 0),
	       alen(dst.family));
	l = listener_find(ps, port, ifindex, &dst);
	if (!l || !is_ud(l)) {
		reply_sidr(ifindex, from, m, CM_SIDR_UNSUPPORTED);
		return;
	}
	id = child_new(l, ifindex, &h, port, from);
	if (!id) {
		reply_sidr(ifindex, from, m, CM_SIDR_REJECT);
		return;
	}
	id->remote_comm_id = r->request_id;
	id->tid = m->tid;
	id->state = CM_SIDR_REQ_RCVD;
	ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev.listen_id = l->handle;
	ev_pdata(&ev, r->private_data + CM_IP_HDR_LEN,
		 CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN);
	ev_send(id, &ev);
}

/* The id a reply is for: ours by its comm ID, from the peer we talk to */
static struct cm_id *id_for(__u32 our_comm_id, const struct gsi_peer *from)
{
	struct cm_id *id = id_by_comm(our_comm_id);

	if (!id || memcmp(id->dgid, from->gid, 16))
		return NULL;
	return id;
}

static void recv_rep(const struct gsi_peer *from, const struct cm_msg *m)
{
	const struct cm_rep *r = &m->rep;
	struct cm_id *id = id_for(r->remote_comm_id, from);
	struct rxdp_cm_event ev;

	if (!id)
		return;
	if (id->state == CM_ESTABLISHED && id->rtu_valid &&
	    id->remote_comm_id == r->local_comm_id) {
		/* our RTU was lost */
		gsi_send(gsi_of(id->ifindex), &id->peer, id->rtu);
		return;
	}
	if (id->state != CM_REQ_SENT && id->state != CM_MRA_REQ_RCVD)
		return;
	id->timer = 0;
	id->mad_valid = false;
	id->remote_comm_id = r->local_comm_id;
	id->remote_ca_guid = r->local_ca_guid;
	id->remote_qpn = r->local_qpn;
	id->sq_psn = r->starting_psn;
	id->init_depth = r->responder_resources;
	id->resp_res = r->initiator_depth;
	id->rnr_retry_count = r->rnr_retry_count;
	id->state = CM_REP_RCVD;
	ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	ev.conn.responder_resources = r->initiator_depth;
	ev.conn.initiator_depth = r->responder_resources;
	ev.conn.flow_control = r->flow_control;
	ev.conn.rnr_retry_count = r->rnr_retry_count;
	ev.conn.srq = r->srq;
	ev.conn.qp_num = r->local_qpn;
	ev.conn.ece_vendor_id = r->vendor_id;
	ev.conn.ece_options = m->attr_mod;
	ev_pdata(&ev, r->private_data, CM_REP_PDATA);
	ev_send(id, &ev);
}

static void recv_rtu(const struct gsi_peer *from, const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->rtu.remote_comm_id, from);
	struct rxdp_cm_event ev;

	if (!id || id->remote_comm_id != m->rtu.local_comm_id ||
	    id->state != CM_REP_SENT)
		return;
	id->timer = 0;
	id->mad_valid = false;
	id->state = CM_ESTABLISHED;
	ev_init(&ev, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	ev_pdata(&ev, m->rtu.private_data, CM_RTU_PDATA);
	ev_send(id, &ev);
}

static void recv_mra(const struct gsi_peer *from, const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->mra.remote_comm_id, from);
	long wait = 2 * (long)cm_time_ms(CM_PACKET_LIFETIME) +
		    (long)cm_time_ms(m->mra.service_timeout);

	if (!id)
		return;
	if (m->mra.msg_mraed == CM_MSG_REQ &&
	    (id->state == CM_REQ_SENT || id->state == CM_MRA_REQ_RCVD)) {
		id->state = CM_MRA_REQ_RCVD;
		id->mad_valid = false; /* no more REQs: wait for the REP */
		timer_set(id, wait);
	} else if (m->mra.msg_mraed == CM_MSG_REP && id->state == CM_REP_SENT) {
		timer_set(id, wait);
	}
}

static void recv_rej(const struct gsi_peer *from, const struct cm_msg *m)
{
	const struct cm_rej *r = &m->rej;
	struct cm_id *id = NULL;
	struct rxdp_cm_event ev;

	if (r->remote_comm_id) {
		id = id_for(r->remote_comm_id, from);
	} else {
		/* the active side gave up before it heard from us: it knows
		 * only its own comm ID */
		for (struct cm_id *o = ids; o && !id; o = o->next)
			if (o->remote_comm_id == r->local_comm_id &&
			    (o->state == CM_REQ_RCVD ||
			     o->state == CM_MRA_REQ_SENT) &&
			    !memcmp(o->dgid, from->gid, 16))
				id = o;
	}
	if (!id)
		return;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REQ_RCVD:
	case CM_MRA_REQ_SENT:
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_ESTABLISHED: /* a REJ may follow an RTU that was lost */
	case CM_DREQ_SENT:
		break;
	default:
		return;
	}
	request_done(id);
	id->timer = 0;
	id->mad_valid = false;
	id->state = CM_IDLE;
	ev_init(&ev, id, RDMA_CM_EVENT_REJECTED, r->reason);
	ev_pdata(&ev, r->private_data, CM_REJ_PDATA);
	ev_send(id, &ev);
}

static void recv_dreq(int ifindex, const struct gsi_peer *from,
		      const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->dreq.remote_comm_id, from);
	struct cm_msg rep;

	if (!id || id->remote_comm_id != m->dreq.local_comm_id) {
		/* no such connection (any more): answer all the same */
		struct gsi_peer to = *from;

		msg_hdr(&rep, CM_ATTR_DREP, m->tid);
		rep.rtu.local_comm_id = m->dreq.remote_comm_id;
		rep.rtu.remote_comm_id = m->dreq.local_comm_id;
		send_raw(ifindex, &to, &rep);
		return;
	}
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		id->timer = 0;
		id->mad_valid = false;
		id->tid = m->tid;
		id->state = CM_DREQ_RCVD;
		ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case CM_DREQ_SENT:
		/* both sides closed at once: each answers the other */
		send_drep(id, m->tid);
		ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case CM_TIMEWAIT:
		if (id->mad_valid)
			gsi_send(gsi_of(id->ifindex), &id->peer, id->mad);
		break;
	default:
		break;
	}
}

static void recv_drep(const struct gsi_peer *from, const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->rtu.remote_comm_id, from);

	if (!id || id->state != CM_DREQ_SENT)
		return;
	enter_timewait(id);
	ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
}

static void recv_sidr_rep(const struct gsi_peer *from, const struct cm_msg *m)
{
	const struct cm_sidr_rep *r = &m->sidr_rep;
	struct cm_id *id = id_for(r->request_id, from);
	struct rxdp_cm_event ev;

	if (!id || id->state != CM_SIDR_REQ_SENT)
		return;
	id->timer = 0;
	id->mad_valid = false;
	id->state = CM_IDLE;
	if (r->status != CM_SIDR_SUCCESS) {
		ev_init(&ev, id, RDMA_CM_EVENT_UNREACHABLE, r->status);
		ev_pdata(&ev, r->private_data, CM_SIDR_REP_PDATA);
		ev_send(id, &ev);
		return;
	}
	id->remote_qpn = r->qpn;
	id->state = CM_ESTABLISHED;
	ev_init(&ev, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	ev.ud_valid = 1;
	ev.conn.qp_num = r->qpn;
	ev.conn.qkey = r->qkey;
	ev.conn.ece_vendor_id = r->vendor_id;
	ev_pdata(&ev, r->private_data, CM_SIDR_REP_PDATA);
	ev_send(id, &ev);
}

void cm_mad_recv(int ifindex, const struct gsi_peer *from, const void *mad,
		 size_t len)
{
	struct cm_msg m;
	int ret = cm_mad_decode(mad, len, &m);

	if (ret) {
		pr_debug("CM: a MAD on QP1 of ifindex %d ignored (%s)\n",
			 ifindex, strerror(-ret));
		return;
	}
	pr_debug("CM: %s from QP %u of a peer on ifindex %d\n",
		 cm_attr_name(m.attr_id), from->qpn, ifindex);
	switch (m.attr_id) {
	case CM_ATTR_REQ:
		recv_req(ifindex, from, &m);
		break;
	case CM_ATTR_MRA:
		recv_mra(from, &m);
		break;
	case CM_ATTR_REJ:
		recv_rej(from, &m);
		break;
	case CM_ATTR_REP:
		recv_rep(from, &m);
		break;
	case CM_ATTR_RTU:
		recv_rtu(from, &m);
		break;
	case CM_ATTR_DREQ:
		recv_dreq(ifindex, from, &m);
		break;
	case CM_ATTR_DREP:
		recv_drep(from, &m);
		break;
	case CM_ATTR_SIDR_REQ:
		recv_sidr_req(ifindex, from, &m);
		break;
	case CM_ATTR_SIDR_REP:
		recv_sidr_rep(from, &m);
		break;
	default:
		break;
	}
	timer_rearm();
}

/* --- devices, setup, and the daemon's loop --------------------------------- */

/* A device appeared (or a tick, while it has no QP1): QP1 */
static void cm_dev_up(struct rxdp_link *l)
{
	struct cm_dev *d = dev_of(l->ifindex);
	char msg[256] = "";

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return;
		d->ifindex = l->ifindex;
		d->next = devs;
		devs = d;
	}
	if (d->gsi || now_ms() < d->retry_at)
		return;
	d->gsi = gsi_open(l, cm_mad_recv, msg, sizeof(msg));
	/* QP1 runs on the device's data path: without it the port is DOWN,
	 * and health.c says why (once in the log, and in rxdp-ctl) */
	dev_datapath_err(l, d->gsi ? NULL : msg);
	if (!d->gsi) {
		d->retry_at = now_ms() + 5000;
		pr_debug("rxdp_%s: no QP1, so no connection manager yet: %s\n",
			 l->ifname, msg);
		return;
	}
	pr_info("rxdp_%s: QP1 up: the connection manager answers\n", l->ifname);
}

/* The device goes: QP1 and the CM's state on it, before its data path */
static void cm_dev_down(struct rxdp_link *l)
{
	struct cm_dev *d = dev_of(l->ifindex), **pp;
	bool again = true;

	if (!d)
		return;
	/* ids on the device: the application hears of it; lingering ones go */
	while (again) {
		again = false;
		for (struct cm_id *id = ids; id; id = id->next) {
			if (id->ifindex != l->ifindex ||
			    id->state == CM_DISCONNECTED)
				continue;
			if (!id->owner) {
				id_free(id);
				again = true;
				break;
			}
			request_done(id);
			id->timer = 0;
			id->mad_valid = false;
			id->state = CM_DISCONNECTED;
			ev_simple(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
		}
	}
	gsi_close(d->gsi);
	d->gsi = NULL;
	for (pp = &devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	free(d);
	timer_rearm();
}

void cm_retry(void)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next) {
		struct cm_dev *d;

		if (!l->dev)
			continue;
		d = dev_of(l->ifindex);
		if (!d || !d->gsi)
			cm_dev_up(l);
		else
			gsi_retry(d->gsi);
	}
	for (struct cm_id *id = ids; id; id = id->next)
		if (id->state == CM_ADDR_QUERY)
			addr_query_step(id);
	timer_rearm();
}

static void cm_on_dev(const struct dev_event *ev)
{
	if (ev->type == DEV_EV_UP)
		cm_dev_up(ev->l);
	else
		cm_dev_down(ev->l);
}

int cm_init(void)
{
	static struct dev_listener li = {
		.fn = cm_on_dev,
		.types = 1U << DEV_EV_UP | 1U << DEV_EV_DOWN,
	};
	int ret;

	dev_listen(&li);
	tid_hi = rand32();
	/* handles count from 1 (a connection reaches its own ids only) */
	next_handle = next_chan = 0;
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer_fd < 0)
		return -errno;
	if (ep_watch(&timer_ep, timer_fd, EPOLLIN, on_timer))
		return -errno;
	ret = cm_route_open();
	if (ret)
		return ret;
	return 0;
}

void cm_fini(void)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		cm_dev_down(l);
	while (ids)
		id_free(ids);
	cm_route_close();
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}
