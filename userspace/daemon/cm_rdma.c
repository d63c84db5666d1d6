// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma_cm's address and route logic (the kernel's cma.c), over the IB CM
 * (cm_ib.c): binding an id to an address of a device, the ports of each
 * port space as Linux keeps them, address resolution (the route from
 * cm_addr.c, then the neighbour), the route (RoCE: the resolved address;
 * no SA to ask), listening and the listener a request is for, connecting
 * on a resolved route with the IP CM header of Annex A11, and the
 * attributes of the application's QP (rdma_init_qp_attr()). An id's
 * state here is enum cma_state; on the wire, the IB CM's says the rest.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/log.h"
#include "daemon/cm_id.h"
#include "daemon/mtu.h"

static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

static bool addr_any(const struct rxdp_cm_addr *a)
{
	static const __u8 zero[16];

	return !memcmp(a->addr, zero, cm_alen(a->family));
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
		if (!l->dev || !cm_ib_has_qp1(l->ifindex))
			continue;
		for (struct rxdp_addr *x = l->addrs; x; x = x->next)
			if (x->family == a->family &&
			    !memcmp(x->ip, a->addr, cm_alen(a->family)))
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

static bool addr_eq(const struct rxdp_cm_addr *a, const struct rxdp_cm_addr *b)
{
	return a->family == b->family &&
	       !memcmp(a->addr, b->addr, cm_alen(a->family));
}

/*
 * Whether id may have port on its source address: no other id of the port
 * space holds it with an overlapping address, unless both allow reuse and
 * neither listens (the kernel's cma_check_port()).
 */
static int port_check(const struct cm_id *id, __be16 port, bool listening)
{
	for (struct cm_id *o = cm_ids; o; o = o->next) {
		if (o == id || !o->bound || !o->owner || o->ps != id->ps ||
		    o->src.port != port)
			continue;
		if (!listening && id->reuseaddr && o->reuseaddr &&
		    o->cma != CMA_LISTEN)
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
		    cm_rand32() % (CM_EPHEMERAL_HI - CM_EPHEMERAL_LO + 1));
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
	if (id->cma != CMA_IDLE)
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
	cma_set(id, CMA_ADDR_BOUND);
	return 0;
}

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
		cma_set(id, CMA_ADDR_BOUND);
		cm_ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, ret);
		return;
	}
	cma_set(id, CMA_ADDR_RESOLVED);
	cm_ev_simple(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
}

int cma_resolve_addr(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_cm_addr *dst = &q->cm->dst;
	struct rxdp_link *l;
	struct cm_route r;
	int err, gi;

	if (dst->family != AF_INET && dst->family != AF_INET6) {
		snprintf(q->msg, q->msglen,
			 "the destination is not an IP address");
		return -EAFNOSUPPORT;
	}
	if (id->cma == CMA_IDLE) {
		struct rxdp_cm_addr any = { .family = dst->family };

		err = id_bind(id, q->cm->src.family ? &q->cm->src : &any,
			      q->c->uid);
		if (err) {
			snprintf(q->msg, q->msglen,
				 "cannot bind the source: %s", strerror(-err));
			return err;
		}
	}
	if (id->cma != CMA_ADDR_BOUND && id->cma != CMA_ADDR_RESOLVED &&
	    id->cma != CMA_ROUTE_RESOLVED) {
		snprintf(q->msg, q->msglen, "the id is %s", cm_state_name(id));
		return -EINVAL;
	}
	if (id->src.family != dst->family) {
		snprintf(q->msg, q->msglen,
			 "source and destination families differ");
		return -EINVAL;
	}
	err = cm_route_get(dst->family, dst->addr,
			   addr_any(&id->src) ? NULL : id->src.addr, &r);
	if (err) {
		snprintf(q->msg, q->msglen, "no route to the destination: %s",
			 strerror(-err));
		return err;
	}
	l = r.local ? link_of_addr(dst) : link_by_index(r.ifindex);
	if (!l || !l->dev || !cm_ib_has_qp1(l->ifindex)) {
		/* not an rxdp device: the event says so (ENODEV), as
		 * rdma-core reports an address no RDMA device has */
		cma_set(id, CMA_ADDR_BOUND);
		cm_ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
		return 0;
	}
	if (addr_any(&id->src)) {
		__be16 port = id->src.port;

		if (r.local) {
			memcpy(id->src.addr, dst->addr, cm_alen(dst->family));
		} else if (r.has_src) {
			memcpy(id->src.addr, r.src, cm_alen(dst->family));
		} else {
			snprintf(q->msg, q->msglen,
				 "the route has no source address");
			return -EADDRNOTAVAIL;
		}
		id->src.port = port;
	}
	addr_gid(&id->src, id->sgid);
	gi = gid_index_of(l, id->sgid);
	if (gi < 0) {
		snprintf(q->msg, q->msglen,
			 "the source address has no GID on rxdp_%s", l->ifname);
		return -EADDRNOTAVAIL;
	}
	id->ifindex = l->ifindex;
	id->sgid_index = (__u8)gi;
	id->mtu = port_mtu(l->ifindex);
	id->dst = *dst;
	addr_gid(dst, id->dgid);
	id->route_resolved = false;
	cma_set(id, CMA_ADDR_QUERY);
	id->neigh_deadline = 0;
	cm_timer_set(id, q->cm->timeout_ms ? (long)q->cm->timeout_ms : 2000);
	addr_query_step(id);
	return 0;
}

int cma_resolve_route(struct cm_call *r)
{
	struct cm_id *id = r->id;

	if (id->cma != CMA_ADDR_RESOLVED && id->cma != CMA_ROUTE_RESOLVED) {
		snprintf(r->msg, r->msglen, "the address is not resolved (%s)",
			 cm_state_name(id));
		return -EINVAL;
	}
	/* RoCE: the path is the resolved address; no SA to ask */
	id->route_resolved = true;
	cma_set(id, CMA_ROUTE_RESOLVED);
	cm_ev_simple(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

int cma_bind(struct cm_call *r)
{
	int err = id_bind(r->id, &r->cm->src, r->c->uid);

	if (err)
		snprintf(r->msg, r->msglen, "cannot bind: %s", strerror(-err));
	return err;
}

int cma_listen(struct cm_call *q)
{
	struct cm_id *id = q->id;
	int err;

	if (id->cma == CMA_IDLE) {
		struct rxdp_cm_addr any = { .family = AF_INET6 };

		err = id_bind(id, &any, q->c->uid);
		if (err)
			return err;
	}
	if (id->cma == CMA_LISTEN) {
		id->backlog = q->cm->backlog > 0 &&
					      q->cm->backlog < CM_MAX_BACKLOG
				      ? (int)q->cm->backlog
				      : CM_MAX_BACKLOG;
		return 0;
	}
	if (id->cma != CMA_ADDR_BOUND) {
		snprintf(q->msg, q->msglen, "listen needs a bound id (%s)",
			 cm_state_name(id));
		return -EINVAL;
	}
	if (id->reuseaddr) {
		err = port_check(id, id->src.port, true);
		if (err)
			return -EADDRINUSE;
	}
	id->backlog = q->cm->backlog > 0 && q->cm->backlog < CM_MAX_BACKLOG
			      ? (int)q->cm->backlog
			      : CM_MAX_BACKLOG;
	cma_set(id, CMA_LISTEN);
	return 0;
}

int cma_set_option(struct cm_call *q)
{
	struct cm_id *id = q->id;
	if (q->cm->level == RDMA_OPTION_ID) {
		switch (q->cm->optname) {
		case RDMA_OPTION_ID_TOS:
			id->tos = (__u8)q->cm->value;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
			if (id->cma != CMA_IDLE)
				break;
			id->reuseaddr = !!q->cm->value;
			return 0;
		case RDMA_OPTION_ID_AFONLY:
			if (id->cma != CMA_IDLE)
				break;
			id->afonly = !!q->cm->value;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			id->ack_timeout = (__u8)(q->cm->value & 31);
			id->ack_timeout_set = true;
			return 0;
		default:
			snprintf(q->msg, q->msglen, "unknown option %u",
				 q->cm->optname);
			return -ENOPROTOOPT;
		}
		snprintf(q->msg, q->msglen, "option %u only before binding",
			 q->cm->optname);
		return -EINVAL;
	}
	snprintf(q->msg, q->msglen, "option level %u is not supported",
		 q->cm->level);
	return -ENOSYS;
}

/* ibv_qp_attr's fields for the application's QP, as the kernel's
 * rdma_init_qp_attr() gives them */
int cma_init_qp_attr(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct rxdp_qp_attr *a = &q->cm->qp_attr;
	__u32 state = (__u32)q->cm->value;
	bool known = id->cma == CMA_CONNECT || id->cma == CMA_DISCONNECTED;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	a->port_num = 1;
	if (!id->ifindex) {
		snprintf(q->msg, q->msglen, "the id has no device yet");
		return -EINVAL;
	}
	switch (state) {
	case IBV_QPS_INIT:
		q->cm->attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT;
		if (cm_is_ud(id)) {
			a->qkey = id->qkey;
			q->cm->attr_mask |= IBV_QP_QKEY;
		} else {
			if (id->connected_once)
				a->qp_access_flags =
					IBV_ACCESS_REMOTE_WRITE |
					(id->resp_res
						 ? IBV_ACCESS_REMOTE_READ |
							   IBV_ACCESS_REMOTE_ATOMIC
						 : 0);
			q->cm->attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		q->cm->attr_mask = IBV_QP_STATE;
		if (cm_is_ud(id))
			return 0;
		if (!known || id->ib == IB_CM_REQ_SENT ||
		    id->ib == IB_CM_MRA_REQ_RCVD) {
			snprintf(q->msg, q->msglen,
				 "the peer is not known yet (%s)",
				 cm_state_name(id));
			return -EINVAL;
		}
		q->cm->attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		a->path_mtu = id->mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		memcpy(a->ah.dgid, id->dgid, 16);
		a->ah.sgid_index = id->sgid_index;
		a->ah.hop_limit = CM_HOP_LIMIT;
		a->ah.traffic_class = id->tos;
		if (id->qp_type == IBV_QPT_RC) {
			q->cm->attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = id->resp_res;
			a->min_rnr_timer = 0;
		}
		return 0;
	case IBV_QPS_RTS:
		q->cm->attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		a->sq_psn = cm_is_ud(id) ? 0 : id->sq_psn;
		if (id->qp_type == IBV_QPT_RC) {
			q->cm->attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					    IBV_QP_RNR_RETRY |
					    IBV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = cm_ack_timeout(id);
			a->retry_cnt = id->retry_count;
			a->rnr_retry = id->rnr_retry_count;
			a->max_rd_atomic = id->init_depth;
		}
		return 0;
	default:
		snprintf(q->msg, q->msglen, "no attributes for QP state %u",
			 state);
		return -EINVAL;
	}
}

static void ip_hdr_of(const struct cm_id *id, __u8 *pd)
{
	struct cm_ip_hdr h = { .ip_version = id->src.family == AF_INET ? 4 : 6,
			       .src_port = ntohs(id->src.port) };

	memcpy(h.src_ip + (id->src.family == AF_INET ? 12 : 0), id->src.addr,
	       cm_alen(id->src.family));
	memcpy(h.dst_ip + (id->dst.family == AF_INET ? 12 : 0), id->dst.addr,
	       cm_alen(id->dst.family));
	cm_ip_hdr_encode(&h, pd);
}

/* On a resolved route: the IB CM's REQ (SIDR_REQ for UD), its private
 * data led by the IP header of Annex A11 */
int cma_connect(struct cm_call *q)
{
	__u8 hdr[CM_IP_HDR_LEN];

	if (q->id->cma != CMA_ROUTE_RESOLVED) {
		snprintf(q->msg, q->msglen,
			 "connect needs a resolved route (%s)",
			 cm_state_name(q->id));
		return -EINVAL;
	}
	ip_hdr_of(q->id, hdr);
	return cm_ib_connect(q, hdr);
}

/*
 * The listener for (ps, port) that takes a request to dst arriving on
 * ifindex: one bound to that address first, a wildcard one else.
 */
struct cm_id *cma_listener_find(__u16 ps, __u16 port, int ifindex,
				const struct rxdp_cm_addr *dst)
{
	struct cm_id *any = NULL;

	for (struct cm_id *id = cm_ids; id; id = id->next) {
		if (id->cma != CMA_LISTEN || !id->owner || id->ps != ps ||
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

/* A request's id on listener l: its addresses and route, from what the
 * request says */
void cma_child_init(struct cm_id *id, struct cm_id *l, int ifindex,
		    const struct cm_ip_hdr *h, __u16 port,
		    const struct gsi_peer *from)
{
	struct rxdp_link *link = link_by_index(ifindex);
	int gi = link ? gid_index_of(link, from->local_gid) : -1;

	id->ifindex = ifindex;
	id->src.family = h->ip_version == 4 ? AF_INET : AF_INET6;
	id->dst.family = id->src.family;
	memcpy(id->src.addr, h->dst_ip + (h->ip_version == 4 ? 12 : 0),
	       cm_alen(id->src.family));
	memcpy(id->dst.addr, h->src_ip + (h->ip_version == 4 ? 12 : 0),
	       cm_alen(id->dst.family));
	id->src.port = htons(port);
	id->dst.port = htons(h->src_port);
	memcpy(id->sgid, from->local_gid, 16);
	memcpy(id->dgid, from->gid, 16);
	id->sgid_index = gi < 0 ? 0 : (__u8)gi;
	id->mtu = port_mtu(ifindex);
	id->tos = from->traffic_class;
	id->ack_timeout_set = l->ack_timeout_set;
	id->ack_timeout = l->ack_timeout;
	id->route_resolved = true;
}

/* The timer of an id in one of the RDMA CM's states: an address query */
void cma_expired(struct cm_id *id)
{
	if (id->cma != CMA_ADDR_QUERY)
		return;
	cma_set(id, CMA_ADDR_BOUND);
	cm_ev_simple(id, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
}

void cma_retry(void)
{
	for (struct cm_id *id = cm_ids; id; id = id->next)
		if (id->cma == CMA_ADDR_QUERY)
			addr_query_step(id);
}

static const char *const cma_state_names[] = {
	[CMA_IDLE] = "idle",
	[CMA_ADDR_BOUND] = "addr_bound",
	[CMA_ADDR_QUERY] = "addr_query",
	[CMA_ADDR_RESOLVED] = "addr_resolved",
	[CMA_ROUTE_RESOLVED] = "route_resolved",
	[CMA_LISTEN] = "listen",
	[CMA_CONNECT] = "connect",
	[CMA_DISCONNECTED] = "disconnected",
};

/* The RDMA CM's state, or on the wire the IB CM's */
const char *cm_state_name(const struct cm_id *id)
{
	if (id->cma == CMA_CONNECT)
		return cm_ib_state_name(id->ib);
	return cma_state_names[id->cma];
}
