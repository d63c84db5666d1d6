// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The IB CM (IBTA chapter 12) on QP1 of each device (gsi.c): REQ, MRA,
 * REJ, REP, RTU, DREQ, DREP and SIDR_REQ/SIDR_REP, each connection's state
 * (enum ib_cm_state), timers and retries. Timers and retries follow
 * 12.7.x: a REQ, REP, SIDR_REQ or DREQ is sent again after 2 x the packet
 * lifetime + the peer's CM response time, at most Max CM Retries times; an
 * MRA stretches the wait by its service timeout; a connection leaves
 * TimeWait after the QP's ack timeout. A REQ nobody listens for is
 * answered with a REJ (invalid service ID), a SIDR_REQ with a SIDR_REP
 * (service ID not supported), a DREQ for no known connection with a DREP.
 *
 * This is the bottom of the CM (cm_id.h): the list of ids and the timer
 * are here; what a connection's events and requests mean to the RDMA CM
 * above goes through struct cm_ib_ops.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/log.h"
#include "daemon/cm_id.h"

/* QP1 of a device, while it has one */
struct cm_dev {
	struct cm_dev *next;
	int ifindex;
	struct gsi *gsi;
	long retry_at; /* when QP1 could not be made: try again then */
};

struct cm_id *cm_ids;
static const struct cm_ib_ops *ops;
static struct cm_dev *devs;
static __u32 tid_hi;
static __u32 tid_lo;
static int timer_fd = -1;
static struct ep_tag timer_ep;
static long timer_armed; /* the deadline the timerfd is set for, 0: none */
static unsigned int half_open;

static const char *const ib_cm_state_names[] = {
	[IB_CM_IDLE] = "idle",
	[IB_CM_REQ_SENT] = "req_sent",
	[IB_CM_MRA_REQ_RCVD] = "mra_req_rcvd",
	[IB_CM_REP_RCVD] = "rep_rcvd",
	[IB_CM_REQ_RCVD] = "req_rcvd",
	[IB_CM_MRA_REQ_SENT] = "mra_req_sent",
	[IB_CM_REP_SENT] = "rep_sent",
	[IB_CM_ESTABLISHED] = "established",
	[IB_CM_DREQ_SENT] = "dreq_sent",
	[IB_CM_DREQ_RCVD] = "dreq_rcvd",
	[IB_CM_TIMEWAIT] = "timewait",
	[IB_CM_SIDR_REQ_SENT] = "sidr_req_sent",
	[IB_CM_SIDR_REQ_RCVD] = "sidr_req_rcvd",
	[IB_CM_SIDR_REP_SENT] = "sidr_rep_sent",
};

const char *cm_ib_state_name(enum ib_cm_state s)
{
	return ib_cm_state_names[s];
}

void cm_ib_set(struct cm_id *id, enum ib_cm_state s)
{
	id->cma = CMA_CONNECT;
	id->ib = s;
}

__u32 cm_rand32(void)
{
	__u32 v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (__u32)now_ms() * 2654435761U;
	return v;
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

__u8 cm_ack_timeout(const struct cm_id *id)
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

void cm_timer_rearm(void)
{
	long next = 0;
	struct itimerspec its = { 0 };

	for (struct cm_id *id = cm_ids; id; id = id->next)
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

void cm_timer_set(struct cm_id *id, long ms)
{
	id->timer = ms ? now_ms() + ms : 0;
}

/*
 * Report an event about id on its channel (a request's is the listener's).
 * An id with no client reports nothing. The library counts the events it
 * reads; rdma_destroy_id() waits for their acks.
 */
void cm_ev_send(struct cm_id *id, struct rxdp_cm_event *ev)
{
	ops->event(id, ev);
}

void cm_info_fill(const struct cm_id *id, struct rxdp_cm_info *in)
{
	memset(in, 0, sizeof(*in));
	in->ifindex = (__u32)id->ifindex;
	in->state = (__u32)id->cma | (__u32)id->ib << 8;
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

void cm_ev_init(struct rxdp_cm_event *ev, const struct cm_id *id, int event,
		int status)
{
	memset(ev, 0, sizeof(*ev));
	ev->id = id->handle;
	ev->event = (__u32)event;
	ev->status = status;
	cm_info_fill(id, &ev->info);
}

void cm_ev_simple(struct cm_id *id, int event, int status)
{
	struct rxdp_cm_event ev;

	cm_ev_init(&ev, id, event, status);
	cm_ev_send(id, &ev);
}

static void ev_pdata(struct rxdp_cm_event *ev, const __u8 *pd, size_t len)
{
	if (len > RXDP_CM_PDATA_MAX)
		len = RXDP_CM_PDATA_MAX;
	memcpy(ev->private_data, pd, len);
	ev->conn.private_data_len = (__u8)len;
}

static struct cm_id *id_by_comm(__u32 local_comm_id)
{
	for (struct cm_id *id = cm_ids; id; id = id->next)
		if (local_comm_id && id->local_comm_id == local_comm_id)
			return id;
	return NULL;
}

static __u32 comm_id_new(void)
{
	__u32 v;

	do
		v = cm_rand32();
	while (!v || id_by_comm(v));
	return v;
}

void cm_id_free(struct cm_id *id)
{
	struct cm_id **pp;

	for (pp = &cm_ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	}
	/* requests still waiting on this listener lose it */
	for (struct cm_id *o = cm_ids; o; o = o->next)
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
	if (id->ib != IB_CM_REQ_RCVD && id->ib != IB_CM_MRA_REQ_SENT &&
	    id->ib != IB_CM_SIDR_REQ_RCVD)
		return;
	if (half_open)
		half_open--;
	if (id->listener && id->listener->pending)
		id->listener->pending--;
	id->listener = NULL;
}

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
	cm_timer_set(id, retries > 0 ? wait_ms : 0);
	pr_debug("CM id %u: %s (state %s)\n", id->handle,
		 cm_attr_name(m->attr_id), cm_ib_state_name(id->ib));
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
	cm_ib_set(id, IB_CM_DREQ_SENT);
	id_send(id, &m, id->max_cm_retries, cm_wait_ms(id->peer_resp_timeout));
}

static void enter_timewait(struct cm_id *id)
{
	long ms = (long)cm_time_ms(cm_ack_timeout(id));

	cm_ib_set(id, IB_CM_TIMEWAIT);
	id->mad_valid = false;
	cm_timer_set(id, ms < 100 ? 100 : ms);
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
	cm_ib_set(id, IB_CM_SIDR_REP_SENT);
}

/*
 * Take id off the wire as its state asks (a destroy, or its client went):
 * a REJ for a connection being set up, a DREQ (then TimeWait) for one that
 * is up, a DREP for one the peer is closing. Returns true if the id must
 * linger (detached) to finish that.
 */
bool cm_ib_shutdown(struct cm_id *id)
{
	request_done(id);
	switch (id->ib) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
		send_rej(id, CM_MSG_REQ, CM_REJ_TIMEOUT, NULL, 0);
		return false;
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
		send_rej(id, CM_MSG_REQ, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case IB_CM_REP_RCVD:
		send_rej(id, CM_MSG_REP, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case IB_CM_REP_SENT:
		send_rej(id, CM_MSG_REP, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		return false;
	case IB_CM_ESTABLISHED:
		send_dreq(id);
		return true;
	case IB_CM_DREQ_RCVD:
		send_drep(id, id->tid);
		return true;
	case IB_CM_DREQ_SENT:
	case IB_CM_TIMEWAIT:
		return true;
	case IB_CM_SIDR_REQ_RCVD:
		send_sidr_rep(id, CM_SIDR_REJECT, NULL, 0);
		return false;
	default:
		return false;
	}
}

static void id_expired(struct cm_id *id)
{
	struct gsi *g = gsi_of(id->ifindex);

	id->timer = 0;
	if (id->mad_valid && id->retries_left > 0 && g &&
	    (id->ib == IB_CM_REQ_SENT || id->ib == IB_CM_REP_SENT ||
	     id->ib == IB_CM_DREQ_SENT || id->ib == IB_CM_SIDR_REQ_SENT)) {
		id->retries_left--;
		pr_debug("CM id %u: no answer, sending again (%d left)\n",
			 id->handle, id->retries_left);
		gsi_send(g, &id->peer, id->mad);
		cm_timer_set(
			id,
			id->ib == IB_CM_REP_SENT
				? cm_wait_ms(id->peer_resp_timeout)
				: cm_wait_ms(id->ib == IB_CM_DREQ_SENT
						     ? id->peer_resp_timeout
						     : CM_RESPONSE_TIMEOUT));
		return;
	}
	if (id->cma != CMA_CONNECT) {
		ops->expired(id);
		return;
	}
	switch (id->ib) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
	case IB_CM_REP_SENT:
		send_rej(id, id->ib == IB_CM_REP_SENT ? CM_MSG_REP : CM_MSG_REQ,
			 CM_REJ_TIMEOUT, NULL, 0);
		cma_set(id, CMA_IDLE);
		cm_ev_simple(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case IB_CM_SIDR_REQ_SENT:
		cma_set(id, CMA_IDLE);
		cm_ev_simple(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case IB_CM_DREQ_SENT:
		/* the peer never answered: disconnected all the same */
		enter_timewait(id);
		cm_ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case IB_CM_TIMEWAIT:
		cma_set(id, CMA_DISCONNECTED);
		id->mad_valid = false;
		if (!id->owner) {
			cm_id_free(id);
			return;
		}
		cm_ev_simple(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
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
		for (struct cm_id *id = cm_ids; id; id = id->next) {
			if (id->timer && id->timer <= now) {
				id_expired(id);
				again = true;
				break;
			}
		}
	}
	cm_timer_rearm();
}

int cm_pdata_check(size_t len, size_t max, char *msg, size_t msglen)
{
	if (len <= max)
		return 0;
	snprintf(msg, msglen, "%zu bytes of private data: at most %zu", len,
		 max);
	return -EINVAL;
}

int cm_ib_connect(struct cm_call *q, const __u8 *ip_hdr)
{
	struct cm_id *id = q->id;
	struct rxdp_ctl_cm *cm = q->cm;
	char *msg = q->msg;
	size_t msglen = q->msglen;
	const struct rxdp_cm_conn *c = &cm->conn;
	struct cm_msg m;
	int err;

	peer_of(id);
	id->local_comm_id = comm_id_new();
	id->tid = new_tid();
	id->peer_resp_timeout = CM_RESPONSE_TIMEOUT;
	id->max_cm_retries = CM_MAX_RETRIES;
	id->ece_vendor_id = c->ece_vendor_id;
	id->ece_options = c->ece_options;
	if (cm_is_ud(id)) {
		err = cm_pdata_check(c->private_data_len,
				     CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN, msg,
				     msglen);
		if (err)
			return err;
		msg_hdr(&m, CM_ATTR_SIDR_REQ, id->tid);
		m.sidr_req.request_id = id->local_comm_id;
		m.sidr_req.pkey = RXDP_DEFAULT_PKEY;
		m.sidr_req.service_id =
			cm_ip_service_id(id->ps, ntohs(id->dst.port));
		memcpy(m.sidr_req.private_data, ip_hdr, CM_IP_HDR_LEN);
		memcpy(m.sidr_req.private_data + CM_IP_HDR_LEN,
		       cm->private_data, c->private_data_len);
		cm_ib_set(id, IB_CM_SIDR_REQ_SENT);
		id_send(id, &m, CM_MAX_RETRIES,
			cm_wait_ms(CM_RESPONSE_TIMEOUT));
		return 0;
	}
	err = cm_pdata_check(c->private_data_len, CM_REQ_PDATA - CM_IP_HDR_LEN,
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
	m.req.primary.local_ack_timeout = cm_ack_timeout(id);
	memcpy(m.req.private_data, ip_hdr, CM_IP_HDR_LEN);
	memcpy(m.req.private_data + CM_IP_HDR_LEN, cm->private_data,
	       c->private_data_len);
	cm_ib_set(id, IB_CM_REQ_SENT);
	id_send(id, &m, CM_MAX_RETRIES, cm_wait_ms(CM_RESPONSE_TIMEOUT));
	return 0;
}

int cm_ib_accept(struct cm_call *q)
{
	struct cm_id *id = q->id;
	const struct rxdp_cm_conn *c = &q->cm->conn;
	struct cm_msg m;
	int err;

	if (id->ib == IB_CM_SIDR_REQ_RCVD) {
		err = cm_pdata_check(c->private_data_len, CM_SIDR_REP_PDATA,
				     q->msg, q->msglen);
		if (err)
			return err;
		request_done(id);
		id->local_qpn = c->qp_num & 0xffffff;
		if (c->qkey)
			id->qkey = c->qkey;
		id->ece_vendor_id = c->ece_vendor_id;
		send_sidr_rep(id, CM_SIDR_SUCCESS, q->cm->private_data,
			      c->private_data_len);
		return 0;
	}
	if (id->ib != IB_CM_REQ_RCVD && id->ib != IB_CM_MRA_REQ_SENT) {
		snprintf(q->msg, q->msglen, "nothing to accept (%s)",
			 cm_ib_state_name(id->ib));
		return -EINVAL;
	}
	err = cm_pdata_check(c->private_data_len, CM_REP_PDATA, q->msg,
			     q->msglen);
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
	memcpy(m.rep.private_data, q->cm->private_data, c->private_data_len);
	cm_ib_set(id, IB_CM_REP_SENT);
	id_send(id, &m, id->max_cm_retries, cm_wait_ms(id->peer_resp_timeout));
	return 0;
}

int cm_ib_reject(struct cm_call *q)
{
	struct cm_id *id = q->id;
	__u16 reason = q->cm->reason ? (__u16)q->cm->reason
				     : CM_REJ_CONSUMER_DEFINED;
	size_t len = q->cm->conn.private_data_len;
	int err;

	switch (id->ib) {
	case IB_CM_SIDR_REQ_RCVD:
		err = cm_pdata_check(len, CM_SIDR_REP_PDATA, q->msg, q->msglen);
		if (err)
			return err;
		request_done(id);
		send_sidr_rep(id, CM_SIDR_REJECT, q->cm->private_data, len);
		return 0;
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
	case IB_CM_REP_RCVD:
		err = cm_pdata_check(len, CM_REJ_PDATA, q->msg, q->msglen);
		if (err)
			return err;
		request_done(id);
		send_rej(id, id->ib == IB_CM_REP_RCVD ? CM_MSG_REP : CM_MSG_REQ,
			 reason, q->cm->private_data, len);
		cma_set(id, CMA_IDLE);
		return 0;
	default:
		snprintf(q->msg, q->msglen, "nothing to reject (%s)",
			 cm_ib_state_name(id->ib));
		return -EINVAL;
	}
}

int cm_ib_disconnect(struct cm_call *q)
{
	struct cm_id *id = q->id;
	switch (id->ib) {
	case IB_CM_ESTABLISHED:
	case IB_CM_REP_SENT:
		send_dreq(id);
		cm_timer_rearm();
		return 0;
	case IB_CM_DREQ_RCVD:
		send_drep(id, id->tid);
		return 0;
	case IB_CM_DREQ_SENT:
	case IB_CM_TIMEWAIT:
		return 0;
	default:
		if (id->cma == CMA_DISCONNECTED)
			return 0;
		snprintf(q->msg, q->msglen, "not connected (%s)",
			 cm_ib_state_name(id->ib));
		return -EINVAL;
	}
}

/* Active side, after CONNECT_RESPONSE: the RTU (rdma-core's ACCEPT) */
int cm_ib_establish(struct cm_call *q)
{
	struct cm_id *id = q->id;
	struct cm_msg m;

	if (id->ib != IB_CM_REP_RCVD) {
		snprintf(q->msg, q->msglen, "no REP to answer (%s)",
			 cm_ib_state_name(id->ib));
		return -EINVAL;
	}
	msg_hdr(&m, CM_ATTR_RTU, id->tid);
	m.rtu.local_comm_id = id->local_comm_id;
	m.rtu.remote_comm_id = id->remote_comm_id;
	cm_ib_set(id, IB_CM_ESTABLISHED);
	id_send(id, &m, 0, 0);
	memcpy(id->rtu, id->mad, CM_MAD_LEN);
	id->rtu_valid = true;
	return 0;
}

int cm_ib_notify(struct cm_call *r)
{
	struct cm_id *id = r->id;

	if (r->cm->value == IBV_EVENT_COMM_EST && id->ib == IB_CM_REP_SENT) {
		cm_ib_set(id, IB_CM_ESTABLISHED);
		id->timer = 0;
		id->mad_valid = false;
		cm_ev_simple(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	}
	return 0;
}

/*
 * An id for a request to listener l, made by the layers above, while
 * fewer than CM_MAX_HALF_OPEN requests and l's backlog wait for an answer
 */
static struct cm_id *request_id(struct cm_id *l, int ifindex,
				const struct cm_ip_hdr *h, __u16 port,
				const struct gsi_peer *from)
{
	struct cm_id *id;

	if (half_open >= CM_MAX_HALF_OPEN || l->pending >= l->backlog)
		return NULL;
	id = ops->child(l, ifindex, h, port, from);
	if (!id)
		return NULL;
	id->listener = l;
	l->pending++;
	half_open++;
	peer_of(id);
	id->peer.qpn = from->qpn ? from->qpn : GSI_QPN;
	return id;
}

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

static struct cm_id *dup_req(__u32 remote_comm_id, __u64 remote_guid)
{
	for (struct cm_id *id = cm_ids; id; id = id->next)
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
		if (id->ib == IB_CM_REQ_RCVD || id->ib == IB_CM_MRA_REQ_SENT) {
			cm_ib_set(id, IB_CM_MRA_REQ_SENT);
			send_mra(id);
		} else if (id->ib == IB_CM_TIMEWAIT ||
			   id->cma == CMA_DISCONNECTED) {
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
	       cm_alen(dst.family));
	l = ops->listener(ps, port, ifindex, &dst);
	if (!l || cm_is_ud(l)) {
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
	id = request_id(l, ifindex, &h, port, from);
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
	cm_ib_set(id, IB_CM_REQ_RCVD);

	cm_ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
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
	cm_ev_send(id, &ev);
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
	for (id = cm_ids; id; id = id->next) {
		if ((id->ib == IB_CM_SIDR_REQ_RCVD ||
		     id->ib == IB_CM_SIDR_REP_SENT) &&
		    id->remote_comm_id == r->request_id &&
		    !memcmp(id->dgid, from->gid, 16)) {
			if (id->ib == IB_CM_SIDR_REP_SENT && id->mad_valid)
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
	       cm_alen(dst.family));
	l = ops->listener(ps, port, ifindex, &dst);
	if (!l || !cm_is_ud(l)) {
		reply_sidr(ifindex, from, m, CM_SIDR_UNSUPPORTED);
		return;
	}
	id = request_id(l, ifindex, &h, port, from);
	if (!id) {
		reply_sidr(ifindex, from, m, CM_SIDR_REJECT);
		return;
	}
	id->remote_comm_id = r->request_id;
	id->tid = m->tid;
	cm_ib_set(id, IB_CM_SIDR_REQ_RCVD);
	cm_ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev.listen_id = l->handle;
	ev_pdata(&ev, r->private_data + CM_IP_HDR_LEN,
		 CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN);
	cm_ev_send(id, &ev);
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
	if (id->ib == IB_CM_ESTABLISHED && id->rtu_valid &&
	    id->remote_comm_id == r->local_comm_id) {
		/* our RTU was lost */
		gsi_send(gsi_of(id->ifindex), &id->peer, id->rtu);
		return;
	}
	if (id->ib != IB_CM_REQ_SENT && id->ib != IB_CM_MRA_REQ_RCVD)
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
	cm_ib_set(id, IB_CM_REP_RCVD);
	cm_ev_init(&ev, id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	ev.conn.responder_resources = r->initiator_depth;
	ev.conn.initiator_depth = r->responder_resources;
	ev.conn.flow_control = r->flow_control;
	ev.conn.rnr_retry_count = r->rnr_retry_count;
	ev.conn.srq = r->srq;
	ev.conn.qp_num = r->local_qpn;
	ev.conn.ece_vendor_id = r->vendor_id;
	ev.conn.ece_options = m->attr_mod;
	ev_pdata(&ev, r->private_data, CM_REP_PDATA);
	cm_ev_send(id, &ev);
}

static void recv_rtu(const struct gsi_peer *from, const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->rtu.remote_comm_id, from);
	struct rxdp_cm_event ev;

	if (!id || id->remote_comm_id != m->rtu.local_comm_id ||
	    id->ib != IB_CM_REP_SENT)
		return;
	id->timer = 0;
	id->mad_valid = false;
	cm_ib_set(id, IB_CM_ESTABLISHED);
	cm_ev_init(&ev, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	ev_pdata(&ev, m->rtu.private_data, CM_RTU_PDATA);
	cm_ev_send(id, &ev);
}

static void recv_mra(const struct gsi_peer *from, const struct cm_msg *m)
{
	struct cm_id *id = id_for(m->mra.remote_comm_id, from);
	long wait = 2 * (long)cm_time_ms(CM_PACKET_LIFETIME) +
		    (long)cm_time_ms(m->mra.service_timeout);

	if (!id)
		return;
	if (m->mra.msg_mraed == CM_MSG_REQ &&
	    (id->ib == IB_CM_REQ_SENT || id->ib == IB_CM_MRA_REQ_RCVD)) {
		cm_ib_set(id, IB_CM_MRA_REQ_RCVD);
		id->mad_valid = false; /* no more REQs: wait for the REP */
		cm_timer_set(id, wait);
	} else if (m->mra.msg_mraed == CM_MSG_REP && id->ib == IB_CM_REP_SENT) {
		cm_timer_set(id, wait);
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
		for (struct cm_id *o = cm_ids; o && !id; o = o->next)
			if (o->remote_comm_id == r->local_comm_id &&
			    (o->ib == IB_CM_REQ_RCVD ||
			     o->ib == IB_CM_MRA_REQ_SENT) &&
			    !memcmp(o->dgid, from->gid, 16))
				id = o;
	}
	if (!id)
		return;
	switch (id->ib) {
	case IB_CM_REQ_SENT:
	case IB_CM_MRA_REQ_RCVD:
	case IB_CM_REQ_RCVD:
	case IB_CM_MRA_REQ_SENT:
	case IB_CM_REP_SENT:
	case IB_CM_REP_RCVD:
	case IB_CM_ESTABLISHED: /* a REJ may follow an RTU that was lost */
	case IB_CM_DREQ_SENT:
		break;
	default:
		return;
	}
	request_done(id);
	id->timer = 0;
	id->mad_valid = false;
	cma_set(id, CMA_IDLE);
	cm_ev_init(&ev, id, RDMA_CM_EVENT_REJECTED, r->reason);
	ev_pdata(&ev, r->private_data, CM_REJ_PDATA);
	cm_ev_send(id, &ev);
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
	switch (id->ib) {
	case IB_CM_ESTABLISHED:
	case IB_CM_REP_SENT:
		id->timer = 0;
		id->mad_valid = false;
		id->tid = m->tid;
		cm_ib_set(id, IB_CM_DREQ_RCVD);
		cm_ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case IB_CM_DREQ_SENT:
		/* both sides closed at once: each answers the other */
		send_drep(id, m->tid);
		cm_ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		break;
	case IB_CM_TIMEWAIT:
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

	if (!id || id->ib != IB_CM_DREQ_SENT)
		return;
	enter_timewait(id);
	cm_ev_simple(id, RDMA_CM_EVENT_DISCONNECTED, 0);
}

static void recv_sidr_rep(const struct gsi_peer *from, const struct cm_msg *m)
{
	const struct cm_sidr_rep *r = &m->sidr_rep;
	struct cm_id *id = id_for(r->request_id, from);
	struct rxdp_cm_event ev;

	if (!id || id->ib != IB_CM_SIDR_REQ_SENT)
		return;
	id->timer = 0;
	id->mad_valid = false;
	cma_set(id, CMA_IDLE);
	if (r->status != CM_SIDR_SUCCESS) {
		cm_ev_init(&ev, id, RDMA_CM_EVENT_UNREACHABLE, r->status);
		ev_pdata(&ev, r->private_data, CM_SIDR_REP_PDATA);
		cm_ev_send(id, &ev);
		return;
	}
	id->remote_qpn = r->qpn;
	cm_ib_set(id, IB_CM_ESTABLISHED);
	cm_ev_init(&ev, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	ev.ud_valid = 1;
	ev.conn.qp_num = r->qpn;
	ev.conn.qkey = r->qkey;
	ev.conn.ece_vendor_id = r->vendor_id;
	ev_pdata(&ev, r->private_data, CM_SIDR_REP_PDATA);
	cm_ev_send(id, &ev);
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
	cm_timer_rearm();
}

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
	/* cm_ids on the device: the application hears of it; lingering ones go */
	while (again) {
		again = false;
		for (struct cm_id *id = cm_ids; id; id = id->next) {
			if (id->ifindex != l->ifindex ||
			    id->cma == CMA_DISCONNECTED)
				continue;
			if (!id->owner) {
				cm_id_free(id);
				again = true;
				break;
			}
			request_done(id);
			id->timer = 0;
			id->mad_valid = false;
			cma_set(id, CMA_DISCONNECTED);
			cm_ev_simple(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
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
	cm_timer_rearm();
}

static void cm_on_dev(const struct dev_event *ev)
{
	if (ev->type == DEV_EV_UP)
		cm_dev_up(ev->l);
	else
		cm_dev_down(ev->l);
}

bool cm_ib_has_qp1(int ifindex)
{
	return gsi_of(ifindex) != NULL;
}

void cm_ib_retry(void)
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
}

int cm_ib_init(const struct cm_ib_ops *o)
{
	static struct dev_listener li = {
		.fn = cm_on_dev,
		.types = 1U << DEV_EV_UP | 1U << DEV_EV_DOWN,
	};

	ops = o;
	dev_listen(&li);
	tid_hi = cm_rand32();
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer_fd < 0)
		return -errno;
	if (ep_watch(&timer_ep, timer_fd, EPOLLIN, on_timer))
		return -errno;
	return 0;
}

void cm_ib_fini(void)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		cm_dev_down(l);
	while (cm_ids)
		cm_id_free(cm_ids);
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}
