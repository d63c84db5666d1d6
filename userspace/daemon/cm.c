// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The connection manager: what the kernel's ib_cm and rdma_cm are to a
 * RoCE HCA, for rxdp's devices. rxdpd is the device, so QP1 and the CM are
 * its (gsi.c); the drop-in librdmacm.so.1 (userspace/rdmacm) is a thin
 * client that asks for what rdma-core's asks /dev/infiniband/rdma_cm, and
 * reads its events from a socket per event channel (common/ctl_cm.h).
 *
 * This file is the RDMA CM's user-facing part (the kernel's ucma.c):
 * event channels (enum cm_chan_state), the ids of each client connection,
 * the library's requests (a table of handlers, cm_cmds) and the events it
 * reads. rdma_cm's address and route logic is cm_rdma.c's, the IB CM on
 * the wire cm_ib.c's (cm_id.h says how they stand).
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
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/log.h"
#include "daemon/cm_id.h"
#include "daemon/takeover.h"

static __u32 next_handle, next_chan;

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
		if (ch->state == CM_CHAN_ZOMBIE) {
			chan_free(ch);
			return;
		}
		chan_drop_queue(ch);
		ch->state = CM_CHAN_HUP;
		ep_del(ch->wfd, &ch->ep);
		return;
	}
	chan_flush(ch);
}

/* Write one event to a channel, or queue it while the socket is full */
static void chan_put(struct cm_chan *ch, const struct rxdp_cm_event *ev)
{
	struct cm_qev *q;

	if (ch->state == CM_CHAN_HUP)
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

static struct cm_id *id_find(struct cm_client *cl, __u32 handle)
{
	for (struct cm_id *id = cm_ids; id; id = id->next)
		if (id->handle == handle && id->owner == cl && cl)
			return id;
	return NULL;
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
	id->rq_psn = cm_rand32() & 0xffffff;
	id->next = cm_ids;
	cm_ids = id;
	cl->nids++;
	return id;
}

/* The id leaves its client: gone now, or lingering detached */
static void id_destroy(struct cm_id *id)
{
	bool linger = cm_ib_shutdown(id);

	if (id->owner)
		id->owner->nids--;
	id->owner = NULL;
	id->chan = NULL;
	id->bound = false; /* its port is free again */
	if (linger && cm_ib_has_qp1(id->ifindex)) {
		cm_timer_rearm();
		return;
	}
	id->owner = NULL;
	cm_id_free(id);
	cm_timer_rearm();
}

static struct cm_chan *chan_find(struct cm_client *cl, __u32 h)
{
	for (struct cm_chan *ch = cl->chans; ch; ch = ch->next)
		if (ch->handle == h && ch->state != CM_CHAN_ZOMBIE)
			return ch;
	return NULL;
}

static int chan_create(struct cm_call *q)
{
	struct cm_chan *ch;
	int sv[2], sz = 1 << 20;

	if (!cm_slot_ok(q->cl, true))
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
	ch->owner = q->cl;
	ch->next = q->cl->chans;
	q->cl->chans = ch;
	q->cl->nchans++;
	q->cm->channel = ch->handle;
	*q->fd = sv[1];
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
	if (ch->state != CM_CHAN_HUP)
		ep_del(ch->wfd, &ch->ep);
	close(ch->wfd);
	cl->nchans--;
	free(ch);
}

/*
 * The kernel's way: a channel's cm_ids go with it. Its socket stays open (a
 * zombie, still counted) until the library's end is closed, since another
 * thread of the application may be blocked reading it: it must stay
 * blocked, as on /dev/infiniband/rdma_cm, not see an end of file.
 */
static void chan_destroy(struct cm_client *cl, struct cm_chan *ch, bool now)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct cm_id *id = cm_ids; id; id = id->next) {
			if (id->owner == cl && id->chan == ch) {
				id_destroy(id);
				again = true;
				break;
			}
		}
	}
	chan_drop_queue(ch);
	if (now || ch->state == CM_CHAN_HUP) {
		chan_free(ch);
		return;
	}
	ch->state = CM_CHAN_ZOMBIE;
	ep_mod(ch->wfd, &ch->ep, 0);
}

static int ps_valid(__u32 ps)
{
	return ps == RDMA_PS_TCP || ps == RDMA_PS_UDP || ps == RDMA_PS_IB;
}

/* For rxdp-ctl: the id after cm->id (root sees all, a user its own) */
static int cm_next(struct cm_call *q)
{
	struct cm_id *best = NULL;

	for (struct cm_id *id = cm_ids; id; id = id->next) {
		if (id->handle <= q->cm->id ||
		    (best && id->handle > best->handle))
			continue;
		if (q->c->uid && (!id->owner || id->owner->c != q->c) &&
		    (!id->owner || id->owner->c->uid != q->c->uid))
			continue;
		best = id;
	}
	if (!best)
		return -ENOENT;
	memset(q->cm, 0, sizeof(*q->cm));
	q->cm->op = RXDP_CM_NEXT;
	q->cm->id = best->handle;
	q->cm->ps = best->ps;
	q->cm->qp_type = best->qp_type;
	q->cm->value = best->owner ? (__u64)best->owner->c->pid : 0;
	cm_info_fill(best, &q->cm->info);
	snprintf((char *)q->cm->private_data, sizeof(q->cm->private_data), "%s",
		 cm_state_name(best));
	return 0;
}

/* The request's channel, or NULL and a message */
static struct cm_chan *chan_need(struct cm_call *r)
{
	struct cm_chan *ch = chan_find(r->cl, r->cm->channel);

	if (!ch)
		snprintf(r->msg, r->msglen, "no channel %u", r->cm->channel);
	return ch;
}

static int op_channel_destroy(struct cm_call *r)
{
	struct cm_chan *ch = chan_need(r);

	if (!ch)
		return -ENOENT;
	chan_destroy(r->cl, ch, false);
	return 0;
}

static int op_create_id(struct cm_call *r)
{
	struct rxdp_ctl_cm *cm = r->cm;
	struct cm_chan *ch = chan_need(r);
	struct cm_id *id;

	if (!ch)
		return -ENOENT;
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
	struct cm_chan *ch = chan_need(r);

	if (!ch)
		return -ENOENT;
	r->id->chan = ch;
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
	[RXDP_CM_BIND] = { cma_bind, true, true },
	[RXDP_CM_RESOLVE_ADDR] = { cma_resolve_addr, true, true },
	[RXDP_CM_RESOLVE_ROUTE] = { cma_resolve_route, true, true },
	[RXDP_CM_LISTEN] = { cma_listen, true, true },
	[RXDP_CM_CONNECT] = { cma_connect, true, true },
	[RXDP_CM_ACCEPT] = { cm_ib_accept, true, true },
	[RXDP_CM_REJECT] = { cm_ib_reject, true, true },
	[RXDP_CM_DISCONNECT] = { cm_ib_disconnect, true, true },
	[RXDP_CM_ESTABLISH] = { cm_ib_establish, true, true },
	[RXDP_CM_NOTIFY] = { cm_ib_notify, true, true },
	[RXDP_CM_INIT_QP_ATTR] = { cma_init_qp_attr, true, true },
	[RXDP_CM_QUERY] = { op_query, true, true },
	[RXDP_CM_SET_OPTION] = { cma_set_option, true, true },
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
	cm_timer_rearm();
	if (!err)
		cm_info_fill(r.id, &cm->info);
	return err;
}

void cm_client_release(struct rxdp_client *c)
{
	struct cm_client *cl = c->cm;

	if (!cl)
		return;
	while (cl->chans)
		chan_destroy(cl, cl->chans, true);
	/* cm_ids are on channels; none should be left, but be sure */
	for (struct cm_id *id = cm_ids; id;) {
		struct cm_id *n = id->next;

		if (id->owner == cl)
			id_destroy(id);
		id = n;
	}
	free(cl);
	c->cm = NULL;
}

/* An event for the application: on the id's channel (a request's is the
 * listener's); an id with no client reports nothing. The library counts
 * the events it reads; rdma_destroy_id() waits for their acks. */
static void ev_deliver(struct cm_id *id, struct rxdp_cm_event *ev)
{
	if (!id->owner || !id->chan)
		return;
	pr_debug("CM id %u: event %u status %d (state %s)\n", id->handle,
		 ev->event, ev->status, cm_state_name(id));
	chan_put(id->chan, ev);
}

/* A new id for a request to listener l, on l's channel */
static struct cm_id *child_new(struct cm_id *l, int ifindex,
			       const struct cm_ip_hdr *h, __u16 port,
			       const struct gsi_peer *from)
{
	struct cm_id *id;

	if (!link_by_index(ifindex))
		return NULL;
	id = id_new(l->owner, l->chan, l->ps, l->qp_type);
	if (id)
		cma_child_init(id, l, ifindex, h, port, from);
	return id;
}

void cm_retry(void)
{
	cm_ib_retry();
	cma_retry();
	cm_timer_rearm();
}

int cm_init(void)
{
	static const struct cm_ib_ops ops = {
		.event = ev_deliver,
		.listener = cma_listener_find,
		.child = child_new,
		.expired = cma_expired,
	};
	int ret;

	/* handles count from 1 (a connection reaches its own ids only) */
	next_handle = next_chan = 0;
	ret = cm_ib_init(&ops);
	if (ret)
		return ret;
	return cm_route_open();
}

void cm_fini(void)
{
	cm_ib_fini();
	cm_route_close();
}

/* --- a takeover (takeover.c): event channels and ids ------------------ */

/*
 * An id goes as it is (its pointers as what they point to: its client's
 * tag, its channel's and listener's handles): its addresses, route, the IB
 * CM's state of its connection, the MAD it would resend and its timers
 * (deadlines on the monotonic clock, good in another process). Its layout
 * is the state's: changing struct cm_id changes TKO_VERSION (takeover.h),
 * and this size with it.
 */
_Static_assert(sizeof(struct cm_id) == 832,
	       "struct cm_id changed: bump TKO_VERSION, then this size");

struct tko_cm {
	uint32_t next_handle, next_chan;
};

struct tko_chan {
	uint64_t client; /* its connection's tag (struct tko_client) */
	uint32_t handle, state, dropped;
	int32_t fd;
};

struct tko_cmid {
	uint64_t client; /* 0: lingering, detached from its client */
	uint32_t chan, listener; /* handles, 0: none */
	struct cm_id id;
};

int cm_tko_refusal(char *msg, size_t msglen)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next)
		for (struct cm_chan *ch = c->cm ? c->cm->chans : NULL; ch;
		     ch = ch->next)
			if (ch->qlen) {
				snprintf(msg, msglen,
					 "pid %d has CM events waiting: try "
					 "again",
					 (int)c->pid);
				return -EAGAIN;
			}
	return 0;
}

void cm_tko_save(struct tko_out *o)
{
	struct tko_cm t = { next_handle, next_chan };

	tko_add(o, TKO_CM, &t, sizeof(t));
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		for (struct cm_chan *ch = c->cm && !c->dead ? c->cm->chans
							    : NULL;
		     ch; ch = ch->next) {
			struct tko_chan tc = { .client = (uintptr_t)c,
					       .handle = ch->handle,
					       .state = ch->state,
					       .dropped = ch->dropped,
					       .fd = tko_fd(o, ch->wfd) };

			tko_add(o, TKO_CHAN, &tc, sizeof(tc));
		}
	}
	for (struct cm_id *id = cm_ids; id; id = id->next) {
		struct tko_cmid *ti = calloc(1, sizeof(*ti));

		if (!ti) {
			o->failed = true;
			return;
		}
		ti->client = id->owner ? (uintptr_t)id->owner->c : 0;
		ti->chan = id->chan ? id->chan->handle : 0;
		ti->listener = id->listener ? id->listener->handle : 0;
		ti->id = *id;
		ti->id.next = ti->id.listener = NULL;
		ti->id.owner = NULL;
		ti->id.chan = NULL;
		tko_add(o, TKO_CMID, ti, sizeof(*ti));
		free(ti);
	}
}

/* A channel of the state for its client */
static void tko_chan_make(const struct tko_chan *t, struct rxdp_client *c)
{
	int fd = tko_take_fd(tko_state, t->fd);
	struct cm_chan *ch;

	if (!c || fd < 0 || (!c->cm && !(c->cm = calloc(1, sizeof(*c->cm)))) ||
	    !(ch = calloc(1, sizeof(*ch)))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	c->cm->c = c;
	ch->wfd = fd;
	ch->handle = t->handle;
	ch->state = (enum cm_chan_state)t->state;
	ch->dropped = t->dropped;
	/* a closed one is watched no more (chan_ready) */
	if (ch->state != CM_CHAN_HUP && ep_watch(&ch->ep, fd, 0, chan_ready)) {
		close(fd);
		free(ch);
		return;
	}
	ch->owner = c->cm;
	ch->next = c->cm->chans;
	c->cm->chans = ch;
	c->cm->nchans++;
}

/* An id of the state (its listener set once all are made) */
static void tko_id_make(const struct tko_cmid *t, struct rxdp_client *c)
{
	struct cm_id *id;

	if (t->client && (!c || !c->cm))
		return; /* its client is gone */
	id = calloc(1, sizeof(*id));
	if (!id)
		return;
	*id = t->id;
	id->owner = t->client ? c->cm : NULL;
	id->chan = t->client ? chan_find(c->cm, t->chan) : NULL;
	if (t->client && !id->chan) {
		free(id);
		return;
	}
	id->next = cm_ids;
	cm_ids = id;
	if (id->owner)
		id->owner->nids++;
}

static struct cm_id *id_by_handle(__u32 h)
{
	for (struct cm_id *id = cm_ids; h && id; id = id->next)
		if (id->handle == h)
			return id;
	return NULL;
}

void cm_tko_restore(struct rxdp_client *(*client_of)(uint64_t tag))
{
	struct tko_in it = *tko_state;
	const void *p;
	uint16_t type;
	size_t len;

	it.off = 0;
	while ((type = 0, p = tko_next(&it, &type, &len))) {
		if (type == TKO_CM && len == sizeof(struct tko_cm)) {
			next_handle = ((const struct tko_cm *)p)->next_handle;
			next_chan = ((const struct tko_cm *)p)->next_chan;
		} else if (type == TKO_CHAN && len == sizeof(struct tko_chan) &&
			   ((const struct tko_chan *)p)->state <=
				   CM_CHAN_ZOMBIE) {
			tko_chan_make(p, client_of(((const struct tko_chan *)p)
							   ->client));
		} else if (type == TKO_CMID && len == sizeof(struct tko_cmid)) {
			const struct tko_cmid *t = p;

			tko_id_make(t, t->client ? client_of(t->client) : NULL);
		}
	}
	/* the requests waiting for their listeners' answers */
	it.off = 0;
	while ((type = TKO_CMID, p = tko_next(&it, &type, &len))) {
		const struct tko_cmid *t = p;
		struct cm_id *id =
			len == sizeof(*t) ? id_by_handle(t->id.handle) : NULL;

		if (id && t->listener)
			id->listener = id_by_handle(t->listener);
	}
	cm_timer_rearm();
}
