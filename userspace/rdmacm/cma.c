// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The RDMA CM API (rdma_cma.h) on rxdpd's connection manager.
 *
 * Each call is one request on the process's control connection to rxdpd
 * (common/ctl_cm.h); events come on the event channel's own socket, which
 * is the channel's fd: rdma_get_cm_event() blocks, or fails with EAGAIN
 * when the application made the fd non-blocking, and poll() on it works,
 * as with rdma-core. An id made without a channel is synchronous: each
 * operation waits for its event (rdma-core's "sync" ids). The connection
 * is made again after a fork() (the child must not share the parent's).
 *
 * As in rdma-core, the library moves the application's QP through INIT,
 * RTR and RTS with the attributes rdma_init_qp_attr() gets from the CM,
 * turns a CONNECT_RESPONSE into ESTABLISHED once it has sent the RTU
 * (when the id has a QP), and waits in rdma_destroy_id() until every event
 * reported about the id was acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ctl.h"
#include "common/ctl_cm.h"
#include "common/log.h"
#include "rxdp/params.h"
#include "rdmacm/rdmacm_priv.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rxdp_ctl *ctl;
static pid_t ctl_pid;
static struct cma_id *ids;
static struct ibv_device **dev_list;
static struct cma_dev *devs;
static int ndevs;

static int err_ret(int e)
{
	errno = e;
	return -1;
}

/* --- the control connection ------------------------------------------------ */

int cma_call(struct rxdp_ctl_cm *cm, int *fd)
{
	int ret;

	pthread_mutex_lock(&lock);
	if (ctl && ctl_pid != getpid()) {
		/* a forked child: the parent's connection is not ours. Only
		 * our copy of its fd goes; the parent's objects stay. */
		close(rxdp_ctl_fd(ctl));
		ctl = NULL;
	}
	if (!ctl) {
		ctl = rxdp_ctl_connect(NULL);
		if (!ctl) {
			pthread_mutex_unlock(&lock);
			/* no rxdpd: as if there were no rdma_cm device */
			return err_ret(ENODEV);
		}
		ctl_pid = getpid();
	}
	ret = rxdp_ctl_cm(ctl, cm, fd);
	pthread_mutex_unlock(&lock);
	if (ret)
		return err_ret(-ret);
	return 0;
}

static void cm_req(struct rxdp_ctl_cm *cm, enum rxdp_cm_op op,
		   const struct cma_id *id)
{
	memset(cm, 0, sizeof(*cm));
	cm->op = op;
	if (id)
		cm->id = id->handle;
}

/* --- devices ------------------------------------------------------------------ */

/* Under lock: the device list, fetched again when asked (a device may
 * have appeared) */
static int devs_sync(int refresh)
{
	struct ibv_device **list;
	struct cma_dev *nd;
	int n, k = 0;

	if (dev_list && !refresh)
		return 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return -1;
	nd = calloc(n ? n : 1, sizeof(*nd));
	if (!nd) {
		ibv_free_device_list(list);
		return err_ret(ENOMEM);
	}
	for (int i = 0; i < n; i++) {
		/*
		 * rxdp's devices only: rdma-core's (which rxdp's libibverbs
		 * lists too) are the kernel RDMA-CM's, and their index is no
		 * interface's
		 */
		if (strncmp(list[i]->dev_name, RXDP_DEV_NAME_PREFIX,
			    strlen(RXDP_DEV_NAME_PREFIX)))
			continue;
		nd[k].device = list[i];
		nd[k].ifindex = ibv_get_device_index(list[i]);
		/* keep what was opened: contexts live as long as the process */
		for (int j = 0; j < ndevs; j++) {
			if (devs[j].ifindex == nd[k].ifindex && devs[j].verbs) {
				nd[k] = devs[j];
				break;
			}
		}
		k++;
	}
	/* the old list stays allocated: opened devices point into it */
	free(devs);
	devs = nd;
	ndevs = k;
	dev_list = list;
	return 0;
}

static int dev_open(struct cma_dev *d)
{
	struct ibv_device_attr attr;

	if (d->verbs)
		return 0;
	d->verbs = ibv_open_device(d->device);
	if (!d->verbs)
		return -1;
	if (ibv_query_device(d->verbs, &attr)) {
		ibv_close_device(d->verbs);
		d->verbs = NULL;
		return -1;
	}
	d->max_resp_res = (uint8_t)(attr.max_qp_rd_atom > 255
					    ? 255
					    : attr.max_qp_rd_atom);
	d->max_init_depth = (uint8_t)(attr.max_qp_init_rd_atom > 255
					      ? 255
					      : attr.max_qp_init_rd_atom);
	return 0;
}

static struct cma_dev *dev_find(int ifindex)
{
	for (int pass = 0; pass < 2; pass++) {
		if (devs_sync(pass))
			return NULL;
		for (int i = 0; i < ndevs; i++)
			if (devs[i].ifindex == ifindex)
				return &devs[i];
	}
	return NULL;
}

static int cma_is_rxdp_ifindex(int ifindex)
{
	int found;

	pthread_mutex_lock(&lock);
	found = dev_find(ifindex) != NULL;
	pthread_mutex_unlock(&lock);
	return found;
}

int cma_attach_dev(struct cma_id *id, int ifindex)
{
	struct cma_dev *d;
	int ret = 0;

	if (id->dev)
		return 0;
	pthread_mutex_lock(&lock);
	d = dev_find(ifindex);
	if (!d) {
		ret = err_ret(ENODEV);
	} else if (dev_open(d)) {
		ret = -1;
	} else if (!d->pd && !(d->pd = ibv_alloc_pd(d->verbs))) {
		ret = -1;
	} else {
		d->refcnt++;
		id->dev = d;
		id->id.verbs = d->verbs;
		id->id.pd = d->pd;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = NULL;
	int n = 0;

	pthread_mutex_lock(&lock);
	if (devs_sync(1))
		goto out;
	list = calloc(ndevs + 1, sizeof(*list));
	if (!list)
		goto out;
	for (int i = 0; i < ndevs; i++)
		if (!dev_open(&devs[i]))
			list[n++] = devs[i].verbs;
out:
	pthread_mutex_unlock(&lock);
	if (num_devices)
		*num_devices = list ? n : 0;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	/* the contexts stay open: ids use them, as rdma-core keeps them */
	free(list);
}

/* --- addresses and routes -------------------------------------------------- */

static size_t sa_len(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

static void sa_to_cm(const struct sockaddr *sa, struct rxdp_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!sa)
		return;
	a->family = sa->sa_family;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		a->port = s->sin_port;
		memcpy(a->addr, &s->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		a->port = s->sin6_port;
		a->scope_id = s->sin6_scope_id;
		a->flowinfo = s->sin6_flowinfo;
		memcpy(a->addr, &s->sin6_addr, 16);
	}
}

static void cm_to_sa(const struct rxdp_cm_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = a->family;
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_port = a->port;
		memcpy(&s->sin_addr, a->addr, 4);
	} else if (a->family == AF_INET6) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_port = a->port;
		s->sin6_scope_id = a->scope_id;
		s->sin6_flowinfo = a->flowinfo;
		memcpy(&s->sin6_addr, a->addr, 16);
	}
}

/* The id's addresses, GIDs, path and device, as rxdpd has them */
static void route_update(struct cma_id *id, const struct rxdp_cm_info *in)
{
	struct rdma_route *r = &id->id.route;

	if (in->src.family)
		cm_to_sa(&in->src, &r->addr.src_storage);
	if (in->dst.family)
		cm_to_sa(&in->dst, &r->addr.dst_storage);
	memcpy(r->addr.addr.ibaddr.sgid.raw, in->sgid, 16);
	memcpy(r->addr.addr.ibaddr.dgid.raw, in->dgid, 16);
	r->addr.addr.ibaddr.pkey = htobe16(in->pkey);
	id->id.port_num = 1;
	if (in->route_resolved) {
		struct ibv_sa_path_rec *p = &id->path;

		memset(p, 0, sizeof(*p));
		memcpy(p->dgid.raw, in->dgid, 16);
		memcpy(p->sgid.raw, in->sgid, 16);
		p->flow_label = htobe32(in->flow_label);
		p->hop_limit = in->hop_limit;
		p->traffic_class = in->traffic_class;
		p->reversible = 1;
		p->numb_path = 1;
		p->pkey = htobe16(in->pkey);
		p->mtu_selector = 2;
		p->mtu = in->mtu;
		p->rate_selector = 2;
		p->rate = in->rate;
		p->packet_life_time_selector = 2;
		p->packet_life_time = in->packet_life_time;
		r->path_rec = p;
		r->num_paths = 1;
	}
	if (in->ifindex && !id->dev)
		cma_attach_dev(id, (int)in->ifindex);
}

/* --- event channels ----------------------------------------------------------- */

/*
 * rdma-core's channel beside rxdpd's, both in an epoll set the program
 * sees as the channel's fd (rdma_get_cm_event() reads each); without it,
 * the channel serves rxdp's ids alone
 */
static void sys_channel(struct cma_chan *ch)
{
	struct epoll_event e = { .events = EPOLLIN };
	int ep = -1;

	ch->sys = CMA_SYS(rdma_create_event_channel);
	if (ch->sys)
		ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep >= 0 &&
	    !fcntl(ch->sys->fd, F_SETFL,
		   fcntl(ch->sys->fd, F_GETFL) | O_NONBLOCK) &&
	    !epoll_ctl(ep, EPOLL_CTL_ADD, ch->sock, &e) &&
	    !epoll_ctl(ep, EPOLL_CTL_ADD, ch->sys->fd, &e)) {
		ch->ch.fd = ep;
		return;
	}
	pr_debug("rdma-core's event channel: %s\n", strerror(errno));
	if (ep >= 0)
		close(ep);
	if (ch->sys)
		CMA_SYS_VOID(rdma_destroy_event_channel, ch->sys);
	ch->sys = NULL;
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rxdp_ctl_cm cm;
	struct cma_chan *ch = calloc(1, sizeof(*ch));
	int fd;

	if (!ch)
		return NULL;
	cm_req(&cm, RXDP_CM_CHANNEL_CREATE, NULL);
	if (cma_call(&cm, &fd) || fd < 0) {
		int e = fd < 0 && !errno ? EPROTO : errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->ch.fd = ch->sock = fd;
	ch->handle = cm.channel;
	if (cma_sys_load())
		sys_channel(ch);
	return &ch->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_chan *ch = to_cma_chan(channel);
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_CHANNEL_DESTROY, NULL);
	cm.channel = ch->handle;
	cma_call(&cm, NULL);
	close(ch->sock);
	if (ch->sys) {
		CMA_SYS_VOID(rdma_destroy_event_channel, ch->sys);
		close(ch->ch.fd);
	}
	free(ch);
}

/* --- ids ---------------------------------------------------------------------- */

static struct cma_id *id_find_locked(uint32_t handle)
{
	struct cma_id *id;

	for (id = ids; id; id = id->next)
		if (id->handle == handle)
			break;
	return id;
}

/*
 * The id an event just read is about, with the event counted on it: once
 * rdma_destroy_id() has taken an id off the list, no event is counted on
 * it any more, and it waits for the acks of those that were.
 */
static struct cma_id *id_take_event(uint32_t handle)
{
	struct cma_id *id;

	pthread_mutex_lock(&lock);
	id = id_find_locked(handle);
	if (id) {
		pthread_mutex_lock(&id->mut);
		id->events_reported++;
		pthread_mutex_unlock(&id->mut);
	}
	pthread_mutex_unlock(&lock);
	return id;
}

static void cma_id_insert(struct cma_id *id)
{
	pthread_mutex_lock(&lock);
	id->next = ids;
	ids = id;
	pthread_mutex_unlock(&lock);
}

static void id_remove(struct cma_id *id)
{
	struct cma_id **pp;

	pthread_mutex_lock(&lock);
	for (pp = &ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	}
	if (id->dev)
		id->dev->refcnt--;
	pthread_mutex_unlock(&lock);
}

static struct cma_id *cma_id_alloc(struct rdma_event_channel *channel,
				   void *context, enum rdma_port_space ps,
				   enum ibv_qp_type qp_type)
{
	struct cma_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qp_type;
	id->handle = UINT32_MAX;
	id->ops = &cma_rxdp_ops;
	if (!channel) {
		id->id.channel = rdma_create_event_channel();
		if (!id->id.channel) {
			free(id);
			return NULL;
		}
		id->sync = 1;
	} else {
		id->id.channel = channel;
	}
	pthread_mutex_init(&id->mut, NULL);
	pthread_cond_init(&id->cond, NULL);
	return id;
}

static void id_free(struct cma_id *id)
{
	if (id->sync)
		rdma_destroy_event_channel(id->id.channel);
	free(id->qp_init_attr);
	free(id->connect);
	pthread_cond_destroy(&id->cond);
	pthread_mutex_destroy(&id->mut);
	free(id);
}

static int create_id(struct rdma_event_channel *channel,
		     struct rdma_cm_id **out, void *context,
		     enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct rxdp_ctl_cm cm;
	struct cma_id *id;

	if (!out)
		return err_ret(EINVAL);
	id = cma_id_alloc(channel, context, ps, qp_type);
	if (!id)
		return -1;
	cm_req(&cm, RXDP_CM_CREATE_ID, NULL);
	cm.channel = to_cma_chan(id->id.channel)->handle;
	cm.ps = ps;
	cm.qp_type = qp_type;
	if (cma_call(&cm, NULL)) {
		int e = errno;

		id_free(id);
		return err_ret(e);
	}
	id->handle = cm.id;
	cma_id_insert(id);
	*out = &id->id;
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qp_type = ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP
					   ? IBV_QPT_UD
					   : IBV_QPT_RC;

	return create_id(channel, id, context, ps, qp_type);
}

static void ack_event(struct cma_event *evt)
{
	struct cma_id *id = evt->id_priv;

	pthread_mutex_lock(&id->mut);
	id->events_completed++;
	pthread_cond_signal(&id->cond);
	pthread_mutex_unlock(&id->mut);
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *evt = (struct cma_event *)event;

	if (!event)
		return err_ret(EINVAL);
	if (evt->sys)
		CMA_SYS(rdma_ack_cm_event, evt->sys);
	ack_event(evt);
	free(evt);
	return 0;
}

/* Wait until every event read about id was acknowledged */
static void wait_acks(struct cma_id *id)
{
	pthread_mutex_lock(&id->mut);
	while (id->events_completed < id->events_reported)
		pthread_cond_wait(&id->cond, &id->mut);
	pthread_mutex_unlock(&id->mut);
}

static struct cma_mc *mc_take(struct cma_id *id, const struct sockaddr *addr);
static void mc_free(struct cma_id *id, struct cma_mc *mc);

static int rxdp_destroy_id(struct cma_id *id)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_DESTROY_ID, id);
	return cma_call(&cm, NULL);
}

int rdma_destroy_id(struct rdma_cm_id *cm_id)
{
	struct cma_id *id = to_cma_id(cm_id);

	if (!cm_id)
		return err_ret(EINVAL);
	/* first: rdma-core's destroy waits for its events' acks, ours */
	if (cm_id->event) {
		rdma_ack_cm_event(cm_id->event);
		cm_id->event = NULL;
	}
	if (id->ops->destroy_id(id))
		return -1;
	id_remove(id);
	wait_acks(id);
	for (struct cma_mc *mc; (mc = mc_take(id, NULL));)
		mc_free(id, mc);
	id_free(id);
	return 0;
}

/*
 * A synchronous id's operation completes with its event (rdma-core's
 * ucma_complete()): the event stays in id->event until the next one.
 */
static int complete(struct cma_id *id)
{
	struct rdma_cm_event *ev;
	int ret;

	if (!id->sync)
		return 0;
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	ret = rdma_get_cm_event(id->id.channel, &id->id.event);
	if (ret)
		return ret;
	ev = id->id.event;
	if (ev->status) {
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			return err_ret(ECONNREFUSED);
		return err_ret(ev->status < 0 ? -ev->status : ev->status);
	}
	return 0;
}

/* The end of a call that begins an exchange: a synchronous id waits */
static int done(struct cma_id *id, int ret)
{
	if (ret == CMA_NO_EVENT)
		return 0;
	return ret ? ret : complete(id);
}

/* id stands for rdma-core's s from now on: its calls are rdma-core's */
static void stand_for(struct cma_id *id, struct rdma_cm_id *s)
{
	id->sys = s;
	id->ops = &cma_sys_ops;
	s->context = id;
	cma_sys_mirror(id, 0);
}

/*
 * id becomes rdma-core's (wants_sys): an rdma-core id on its channel's
 * rdma-core side stands behind it, and rxdpd forgets its own
 */
static int to_sys(struct cma_id *id)
{
	struct rdma_event_channel *ch = to_cma_chan(id->id.channel)->sys;
	struct rxdp_ctl_cm cm;
	struct rdma_cm_id *s;

	if (CMA_SYS(rdma_create_id, ch, &s, id, id->id.ps))
		return -1;
	cm_req(&cm, RXDP_CM_DESTROY_ID, id);
	cma_call(&cm, NULL);
	id->handle = UINT32_MAX;
	stand_for(id, s);
	return 0;
}

/* Should id, bound to nothing yet, go to rdma-core for src (or dst)? */
static int wants_sys(struct cma_id *id, const struct sockaddr *src,
		     const struct sockaddr *dst)
{
	int ifindex = cma_sys_ifindex(id, src, dst);

	return ifindex && !cma_is_rxdp_ifindex(ifindex);
}

static int rxdp_bind_addr(struct cma_id *id, struct sockaddr *addr)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_BIND, id);
	sa_to_cm(addr, &cm.src);
	if (cma_call(&cm, NULL))
		return -1;
	route_update(id, &cm.info);
	id->bound = 1;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *cm_id, struct sockaddr *addr)
{
	struct cma_id *id = to_cma_id(cm_id);

	if (!cm_id || !sa_len(addr))
		return err_ret(EINVAL);
	if (wants_sys(id, addr, NULL) && to_sys(id))
		return -1;
	return id->ops->bind_addr(id, addr);
}

static int rxdp_resolve_addr(struct cma_id *id, struct sockaddr *src_addr,
			     struct sockaddr *dst_addr, int timeout_ms)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_RESOLVE_ADDR, id);
	sa_to_cm(src_addr, &cm.src);
	sa_to_cm(dst_addr, &cm.dst);
	cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (cma_call(&cm, NULL))
		return -1;
	memcpy(&id->id.route.addr.dst_storage, dst_addr, sa_len(dst_addr));
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *cm_id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *id = to_cma_id(cm_id);

	if (!cm_id || !sa_len(dst_addr) || (src_addr && !sa_len(src_addr)))
		return err_ret(EINVAL);
	if (wants_sys(id, src_addr, dst_addr) && to_sys(id))
		return -1;
	return done(id,
		    id->ops->resolve_addr(id, src_addr, dst_addr, timeout_ms));
}

static int rxdp_resolve_route(struct cma_id *id, int timeout_ms)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_RESOLVE_ROUTE, id);
	cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (cma_call(&cm, NULL))
		return -1;
	return 0;
}

int rdma_resolve_route(struct rdma_cm_id *cm_id, int timeout_ms)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return done(to_cma_id(cm_id), to_cma_id(cm_id)->ops->resolve_route(
					      to_cma_id(cm_id), timeout_ms));
}

/* --- QPs ------------------------------------------------------------------------- */

static int rxdp_init_qp_attr(struct cma_id *id, struct ibv_qp_attr *qp_attr,
			     int *qp_attr_mask)
{
	const struct rxdp_qp_attr *a;
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_INIT_QP_ATTR, id);
	cm.value = qp_attr->qp_state;
	if (cma_call(&cm, NULL))
		return -1;
	a = &cm.qp_attr;
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = a->qp_state;
	qp_attr->path_mtu = a->path_mtu;
	qp_attr->qkey = a->qkey;
	qp_attr->rq_psn = a->rq_psn;
	qp_attr->sq_psn = a->sq_psn;
	qp_attr->dest_qp_num = a->dest_qp_num;
	qp_attr->qp_access_flags = a->qp_access_flags;
	qp_attr->pkey_index = a->pkey_index;
	qp_attr->max_rd_atomic = a->max_rd_atomic;
	qp_attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	qp_attr->min_rnr_timer = a->min_rnr_timer;
	qp_attr->port_num = a->port_num;
	qp_attr->timeout = a->timeout;
	qp_attr->retry_cnt = a->retry_cnt;
	qp_attr->rnr_retry = a->rnr_retry;
	qp_attr->ah_attr.is_global = 1;
	qp_attr->ah_attr.port_num = 1;
	qp_attr->ah_attr.sl = a->ah.sl;
	memcpy(qp_attr->ah_attr.grh.dgid.raw, a->ah.dgid, 16);
	qp_attr->ah_attr.grh.sgid_index = a->ah.sgid_index;
	qp_attr->ah_attr.grh.hop_limit = a->ah.hop_limit;
	qp_attr->ah_attr.grh.traffic_class = a->ah.traffic_class;
	qp_attr->ah_attr.grh.flow_label = a->ah.flow_label;
	*qp_attr_mask = (int)cm.attr_mask;
	return 0;
}

int rdma_init_qp_attr(struct rdma_cm_id *cm_id, struct ibv_qp_attr *qp_attr,
		      int *qp_attr_mask)
{
	if (!cm_id || !qp_attr || !qp_attr_mask)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->init_qp_attr(to_cma_id(cm_id), qp_attr,
						   qp_attr_mask);
}

static int modify(struct rdma_cm_id *cm_id, enum ibv_qp_state state,
		  int resp_res, int init_depth)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	attr.qp_state = state;
	if (rdma_init_qp_attr(cm_id, &attr, &mask))
		return -1;
	if (resp_res >= 0)
		attr.max_dest_rd_atomic = (uint8_t)resp_res;
	if (init_depth >= 0)
		attr.max_rd_atomic = (uint8_t)init_depth;
	ret = ibv_modify_qp(cm_id->qp, &attr, mask);
	return ret ? err_ret(ret) : 0;
}

/* rdma-core's ucma_modify_qp_rtr(): INIT again (the access flags of the
 * connection), then RTR */
static int modify_rtr(struct rdma_cm_id *cm_id, int resp_res)
{
	if (!cm_id->qp)
		return 0;
	if (modify(cm_id, IBV_QPS_INIT, -1, -1))
		return -1;
	return modify(cm_id, IBV_QPS_RTR,
		      resp_res == RDMA_MAX_RESP_RES ? -1 : resp_res, -1);
}

static int modify_rts(struct rdma_cm_id *cm_id, int init_depth)
{
	if (!cm_id->qp)
		return 0;
	return modify(cm_id, IBV_QPS_RTS, -1,
		      init_depth == RDMA_MAX_INIT_DEPTH ? -1 : init_depth);
}

static int modify_err(struct rdma_cm_id *cm_id)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int ret;

	if (!cm_id->qp)
		return 0;
	ret = ibv_modify_qp(cm_id->qp, &attr, IBV_QP_STATE);
	return ret ? err_ret(ret) : 0;
}

static int init_ud_qp(struct rdma_cm_id *cm_id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(cm_id, &attr, &mask))
		return -1;
	ret = ibv_modify_qp(qp, &attr, mask);
	if (ret)
		return err_ret(ret);
	attr.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		return err_ret(ret);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ret ? err_ret(ret) : 0;
}

static int init_conn_qp(struct rdma_cm_id *cm_id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask, ret;

	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(cm_id, &attr, &mask))
		return -1;
	ret = ibv_modify_qp(qp, &attr, mask);
	return ret ? err_ret(ret) : 0;
}

static void destroy_cqs(struct rdma_cm_id *cm_id)
{
	if (cm_id->recv_cq) {
		ibv_destroy_cq(cm_id->recv_cq);
		if (cm_id->send_cq && cm_id->send_cq != cm_id->recv_cq)
			ibv_destroy_cq(cm_id->send_cq);
	} else if (cm_id->send_cq) {
		ibv_destroy_cq(cm_id->send_cq);
	}
	cm_id->recv_cq = cm_id->send_cq = NULL;
	if (cm_id->recv_cq_channel) {
		ibv_destroy_comp_channel(cm_id->recv_cq_channel);
		if (cm_id->send_cq_channel &&
		    cm_id->send_cq_channel != cm_id->recv_cq_channel)
			ibv_destroy_comp_channel(cm_id->send_cq_channel);
	} else if (cm_id->send_cq_channel) {
		ibv_destroy_comp_channel(cm_id->send_cq_channel);
	}
	cm_id->recv_cq_channel = cm_id->send_cq_channel = NULL;
}

/* The CQs rdma_create_qp makes when the application gives none, each with
 * a completion channel (rdma_get_send_comp/recv_comp wait on them) */
static int create_cqs(struct rdma_cm_id *cm_id, uint32_t send_size,
		      uint32_t recv_size)
{
	if (recv_size) {
		cm_id->recv_cq_channel = ibv_create_comp_channel(cm_id->verbs);
		if (!cm_id->recv_cq_channel)
			goto err;
		cm_id->recv_cq = ibv_create_cq(cm_id->verbs, (int)recv_size,
					       cm_id, cm_id->recv_cq_channel,
					       0);
		if (!cm_id->recv_cq)
			goto err;
	}
	if (send_size) {
		cm_id->send_cq_channel = ibv_create_comp_channel(cm_id->verbs);
		if (!cm_id->send_cq_channel)
			goto err;
		cm_id->send_cq = ibv_create_cq(cm_id->verbs, (int)send_size,
					       cm_id, cm_id->send_cq_channel,
					       0);
		if (!cm_id->send_cq)
			goto err;
	}
	return 0;
err:
	destroy_cqs(cm_id);
	return -1;
}

/* rdma-core's ECE bookkeeping; rxdp's QPs have none (EOPNOTSUPP) */
static int init_ece(struct cma_id *id, struct ibv_qp *qp)
{
	struct ibv_ece ece = { 0 };
	int ret = ibv_query_ece(qp, &ece);

	if (ret && ret != EOPNOTSUPP)
		return err_ret(ret);
	id->local_ece.vendor_id = ece.vendor_id;
	id->local_ece.options = ece.options;
	if (!id->remote_ece.vendor_id)
		return 0;
	if (id->remote_ece.vendor_id != id->local_ece.vendor_id) {
		ece.vendor_id = id->local_ece.vendor_id;
		ece.options = 0;
	} else {
		ece.vendor_id = id->remote_ece.vendor_id;
		ece.options = id->remote_ece.options;
	}
	ret = ibv_set_ece(qp, &ece);
	return ret && ret != EOPNOTSUPP ? err_ret(ret) : 0;
}

static int rxdp_create_qp_ex(struct cma_id *id,
			     struct ibv_qp_init_attr_ex *attr)
{
	struct rdma_cm_id *cm_id = &id->id;
	struct ibv_qp *qp;
	int ret;

	if (!cm_id->verbs)
		return err_ret(ENODEV);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = cm_id->pd;
	} else if (cm_id->verbs != attr->pd->context) {
		return err_ret(EINVAL);
	}
	if ((cm_id->recv_cq && attr->recv_cq &&
	     cm_id->recv_cq != attr->recv_cq) ||
	    (cm_id->send_cq && attr->send_cq &&
	     cm_id->send_cq != attr->send_cq))
		return err_ret(EINVAL);
	if (cm_id->qp_type == IBV_QPT_XRC_RECV)
		return err_ret(EOPNOTSUPP);
	ret = create_cqs(
		cm_id,
		attr->send_cq || cm_id->send_cq ? 0 : attr->cap.max_send_wr,
		attr->recv_cq || cm_id->recv_cq ? 0 : attr->cap.max_recv_wr);
	if (ret)
		return ret;
	if (!attr->send_cq)
		attr->send_cq = cm_id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = cm_id->recv_cq;
	if (cm_id->srq && !attr->srq)
		attr->srq = cm_id->srq;
	qp = ibv_create_qp_ex(cm_id->verbs, attr);
	if (!qp) {
		ret = -1;
		goto err_cqs;
	}
	ret = init_ece(id, qp);
	if (!ret)
		ret = cm_id->qp_type == IBV_QPT_UD ? init_ud_qp(cm_id, qp)
						   : init_conn_qp(cm_id, qp);
	if (ret)
		goto err_qp;
	cm_id->pd = qp->pd;
	cm_id->qp = qp;
	return 0;
err_qp : {
	int e = errno;

	ibv_destroy_qp(qp);
	errno = e;
}
err_cqs:
	destroy_cqs(cm_id);
	return ret;
}

int rdma_create_qp_ex(struct rdma_cm_id *cm_id,
		      struct ibv_qp_init_attr_ex *attr)
{
	if (!cm_id || !attr || cm_id->qp)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->create_qp_ex(to_cma_id(cm_id), attr);
}

int rdma_create_qp(struct rdma_cm_id *cm_id, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ax;
	int ret;

	if (!cm_id || !qp_init_attr)
		return err_ret(EINVAL);
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, qp_init_attr, sizeof(*qp_init_attr));
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd ? pd : cm_id->pd;
	ret = rdma_create_qp_ex(cm_id, &ax);
	memcpy(qp_init_attr, &ax, sizeof(*qp_init_attr));
	return ret;
}

static void rxdp_destroy_qp(struct cma_id *id)
{
	ibv_destroy_qp(id->id.qp);
	id->id.qp = NULL;
	destroy_cqs(&id->id);
}

void rdma_destroy_qp(struct rdma_cm_id *cm_id)
{
	to_cma_id(cm_id)->ops->destroy_qp(to_cma_id(cm_id));
}

static int rxdp_create_srq_ex(struct cma_id *id,
			      struct ibv_srq_init_attr_ex *attr)
{
	struct rdma_cm_id *cm_id = &id->id;
	struct ibv_srq *srq;

	if (attr->srq_type != IBV_SRQT_BASIC)
		return err_ret(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = cm_id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(cm_id->verbs, attr);
	if (!srq)
		return -1;
	cm_id->srq = srq;
	cm_id->pd = attr->pd;
	return 0;
}

int rdma_create_srq_ex(struct rdma_cm_id *cm_id,
		       struct ibv_srq_init_attr_ex *attr)
{
	if (!cm_id || !attr || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->create_srq_ex(to_cma_id(cm_id), attr);
}

int rdma_create_srq(struct rdma_cm_id *cm_id, struct ibv_pd *pd,
		    struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax;
	int ret;

	if (!cm_id || !attr)
		return err_ret(EINVAL);
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, attr, sizeof(*attr));
	ax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ax.srq_type = IBV_SRQT_BASIC;
	ax.pd = pd;
	ret = rdma_create_srq_ex(cm_id, &ax);
	memcpy(attr, &ax, sizeof(*attr));
	return ret;
}

static void rxdp_destroy_srq(struct cma_id *id)
{
	ibv_destroy_srq(id->id.srq);
	id->id.srq = NULL;
	destroy_cqs(&id->id);
}

void rdma_destroy_srq(struct rdma_cm_id *cm_id)
{
	to_cma_id(cm_id)->ops->destroy_srq(to_cma_id(cm_id));
}

/* --- connections ----------------------------------------------------------------- */

static int valid_param(struct cma_id *id, const struct rdma_conn_param *p)
{
	if (id->id.ps != RDMA_PS_TCP)
		return 0;
	if (!id->id.qp && !p)
		return err_ret(EINVAL);
	if (!p)
		return 0;
	if (!id->dev)
		return err_ret(EINVAL);
	if ((p->responder_resources != RDMA_MAX_RESP_RES &&
	     p->responder_resources > id->dev->max_resp_res) ||
	    (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	     p->initiator_depth > id->dev->max_init_depth))
		return err_ret(EINVAL);
	return 0;
}

/* rdma-core's ucma_copy_conn_param_to_kern() */
static int conn_fill(struct cma_id *id, struct rxdp_ctl_cm *cm,
		     const struct rdma_conn_param *p, uint32_t qp_num,
		     uint8_t srq)
{
	struct rxdp_cm_conn *c = &cm->conn;
	size_t len = 0;

	c->qp_num = qp_num;
	c->srq = srq;
	c->responder_resources = id->responder_resources;
	c->initiator_depth = id->initiator_depth;
	c->ece_vendor_id = id->local_ece.vendor_id;
	c->ece_options = id->local_ece.options;
	if (id->connect_len) {
		if (id->connect_len > RXDP_CM_PDATA_MAX)
			return err_ret(EINVAL);
		memcpy(cm->private_data, id->connect, id->connect_len);
		len = id->connect_len;
	}
	if (p) {
		c->flow_control = p->flow_control;
		c->retry_count = p->retry_count;
		c->rnr_retry_count = p->rnr_retry_count;
		if (p->private_data && p->private_data_len) {
			if (len + p->private_data_len > RXDP_CM_PDATA_MAX)
				return err_ret(EINVAL);
			memcpy(cm->private_data + len, p->private_data,
			       p->private_data_len);
			len += p->private_data_len;
		}
	} else {
		c->retry_count = 7;
		c->rnr_retry_count = 7;
	}
	c->private_data_len = (uint8_t)len;
	return 0;
}

static int rxdp_connect(struct cma_id *id, struct rdma_conn_param *conn_param)
{
	struct rdma_cm_id *cm_id = &id->id;
	uint32_t qp_num = conn_param ? conn_param->qp_num : 0;
	uint8_t srq = conn_param ? conn_param->srq : 0;
	struct rxdp_ctl_cm cm;

	if (valid_param(id, conn_param))
		return -1;
	if (!id->dev)
		return err_ret(EINVAL);
	id->initiator_depth = conn_param && conn_param->initiator_depth !=
						      RDMA_MAX_INIT_DEPTH
				      ? conn_param->initiator_depth
				      : id->dev->max_init_depth;
	id->responder_resources =
		conn_param && conn_param->responder_resources !=
					RDMA_MAX_RESP_RES
			? conn_param->responder_resources
			: id->dev->max_resp_res;
	if (cm_id->qp) {
		qp_num = cm_id->qp->qp_num;
		srq = !!cm_id->qp->srq;
	}
	cm_req(&cm, RXDP_CM_CONNECT, id);
	if (conn_fill(id, &cm, conn_param, qp_num, srq))
		return -1;
	if (cma_call(&cm, NULL))
		return -1;
	free(id->connect);
	id->connect = NULL;
	id->connect_len = 0;
	return 0;
}

int rdma_connect(struct rdma_cm_id *cm_id, struct rdma_conn_param *conn_param)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return done(to_cma_id(cm_id), to_cma_id(cm_id)->ops->connect(
					      to_cma_id(cm_id), conn_param));
}

static int rxdp_listen(struct cma_id *id, int backlog)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_LISTEN, id);
	cm.backlog = backlog > 0 ? (uint32_t)backlog : 0;
	if (cma_call(&cm, NULL))
		return -1;
	route_update(id, &cm.info);
	return 0;
}

int rdma_listen(struct rdma_cm_id *cm_id, int backlog)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->listen(to_cma_id(cm_id), backlog);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cma_id *l = to_cma_id(listen);
	struct rdma_cm_event *ev;
	int ret;

	if (!listen || !out || !l->sync)
		return err_ret(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	ret = rdma_get_cm_event(listen->channel, &ev);
	if (ret)
		return ret;
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		ret = err_ret(ECONNREFUSED);
		goto err;
	}
	if (ev->status) {
		ret = err_ret(ev->status < 0 ? -ev->status : ev->status);
		goto err;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = err_ret(EINVAL);
		goto err;
	}
	if (l->qp_init_attr) {
		struct ibv_qp_init_attr attr = *l->qp_init_attr;

		ret = rdma_create_qp(ev->id, listen->pd, &attr);
		if (ret)
			goto err;
	}
	*out = ev->id;
	(*out)->event = ev;
	return 0;
err:
	listen->event = ev;
	return ret;
}

static void ece_for_accept(struct cma_id *id, struct rxdp_ctl_cm *cm)
{
	/* the answer carries the vendor the request came with */
	cm->conn.ece_vendor_id = id->remote_ece.vendor_id;
	cm->conn.ece_options = id->local_ece.options;
}

static int rxdp_accept(struct cma_id *id, struct rdma_conn_param *conn_param)
{
	struct rdma_cm_id *cm_id = &id->id;
	struct rxdp_ctl_cm cm;
	uint32_t qp_num;
	uint8_t srq;

	if (!cm_id->qp && !conn_param)
		return err_ret(EINVAL);
	qp_num = cm_id->qp ? cm_id->qp->qp_num : conn_param->qp_num;
	srq = cm_id->qp ? !!cm_id->qp->srq : conn_param->srq;
	if (valid_param(id, conn_param))
		return -1;
	if (!id->dev)
		return err_ret(EINVAL);
	if (!conn_param || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH) {
		if (id->initiator_depth > id->dev->max_init_depth)
			id->initiator_depth = id->dev->max_init_depth;
	} else {
		id->initiator_depth = conn_param->initiator_depth;
	}
	if (!conn_param ||
	    conn_param->responder_resources == RDMA_MAX_RESP_RES) {
		if (id->responder_resources > id->dev->max_resp_res)
			id->responder_resources = id->dev->max_resp_res;
	} else {
		id->responder_resources = conn_param->responder_resources;
	}
	if (cm_id->qp_type != IBV_QPT_UD) {
		if (modify_rtr(cm_id, id->responder_resources) ||
		    modify_rts(cm_id, id->initiator_depth))
			return -1;
	}
	cm_req(&cm, RXDP_CM_ACCEPT, id);
	if (conn_fill(id, &cm, conn_param, qp_num, srq))
		return -1;
	ece_for_accept(id, &cm);
	if (cma_call(&cm, NULL)) {
		int e = errno;

		modify_err(cm_id);
		return err_ret(e);
	}
	if (cm_id->qp_type == IBV_QPT_UD) {
		if (id->sync && cm_id->event) {
			rdma_ack_cm_event(cm_id->event);
			cm_id->event = NULL;
		}
		return CMA_NO_EVENT;
	}
	return 0;
}

int rdma_accept(struct rdma_cm_id *cm_id, struct rdma_conn_param *conn_param)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return done(to_cma_id(cm_id), to_cma_id(cm_id)->ops->accept(
					      to_cma_id(cm_id), conn_param));
}

static int rxdp_reject(struct cma_id *id, const void *pd, uint8_t len,
		       uint32_t reason)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_REJECT, id);
	cm.reason = reason;
	if (pd && len) {
		memcpy(cm.private_data, pd, len);
		cm.conn.private_data_len = len;
	}
	return cma_call(&cm, NULL);
}

static int reject(struct rdma_cm_id *cm_id, const void *pd, uint8_t len,
		  uint32_t reason)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->reject(to_cma_id(cm_id), pd, len, reason);
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 0);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len)
{
	/* IBTA: REJ reason 35, vendor option not supported */
	return reject(id, private_data, private_data_len, 35);
}

static int rxdp_notify(struct cma_id *id, enum ibv_event_type event)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_NOTIFY, id);
	cm.value = event;
	return cma_call(&cm, NULL);
}

int rdma_notify(struct rdma_cm_id *cm_id, enum ibv_event_type event)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->notify(to_cma_id(cm_id), event);
}

static int rxdp_disconnect(struct cma_id *id)
{
	struct rxdp_ctl_cm cm;

	if (!id->id.verbs)
		return err_ret(EINVAL);
	if (modify_err(&id->id))
		return -1;
	cm_req(&cm, RXDP_CM_DISCONNECT, id);
	if (cma_call(&cm, NULL))
		return -1;
	return 0;
}

int rdma_disconnect(struct rdma_cm_id *cm_id)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return done(to_cma_id(cm_id),
		    to_cma_id(cm_id)->ops->disconnect(to_cma_id(cm_id)));
}

/* After CONNECT_RESPONSE: the QP to RTR and RTS, then the RTU */
static int conn_resp(struct cma_id *id)
{
	struct rxdp_ctl_cm cm;

	if (modify_rtr(&id->id, RDMA_MAX_RESP_RES) ||
	    modify_rts(&id->id, RDMA_MAX_INIT_DEPTH))
		goto err;
	cm_req(&cm, RXDP_CM_ESTABLISH, id);
	if (cma_call(&cm, NULL))
		goto err;
	return 0;
err : {
	int e = errno;

	modify_err(&id->id);
	return err_ret(e);
}
}

static int rxdp_establish(struct cma_id *id)
{
	if (id->id.qp)
		return err_ret(EINVAL);
	return conn_resp(id);
}

int rdma_establish(struct rdma_cm_id *cm_id)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->establish(to_cma_id(cm_id));
}

/* --- multicast ------------------------------------------------------------------ */

/*
 * RoCE has no subnet administrator: a join is local, as Soft-RoCE's and
 * every RoCE device's through the kernel's RDMA CM (cma_iboe_join_multicast:
 * the group's GID is its IP address, IPv4 mapped; its event comes at once).
 * The library makes the MULTICAST_JOIN event itself and has rxdpd write it
 * to the id's channel (RXDP_CM_REPOST), so that it comes in order with the
 * id's other events, through poll() and rdma_get_cm_event() like them;
 * reading it attaches the id's QP to the group (rdma-core's
 * ucma_process_join). The interface joins the IP group (IGMP/MLD) when
 * the QP attaches (rxdpd, userspace/daemon/mcast.c).
 */
#define RXDP_CM_MCAST_QKEY 0x01234567 /* RDMA_UDP_QKEY */
#define RXDP_CM_MCAST_HOP_LIMIT 64 /* the kernel's for RoCE v2 groups */

static uint64_t mc_seq;

static int sa_is_multicast(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		return IN_MULTICAST(be32toh(s->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		return s->sin6_addr.s6_addr[0] == 0xff;
	}
	return 0;
}

/* The group's GID: its IPv6 address, or its IPv4 address mapped */
static void sa_mgid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(gid->raw + 12,
		       &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	}
}

static int sa_same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	union ibv_gid ga, gb;

	if (a->sa_family != b->sa_family)
		return 0;
	sa_mgid(a, &ga);
	sa_mgid(b, &gb);
	return !memcmp(&ga, &gb, sizeof(ga));
}

static int rxdp_join_multicast(struct cma_id *id,
			       struct rdma_cm_join_mc_attr_ex *attr,
			       void *context)
{
	struct rdma_cm_id *cm_id = &id->id;
	struct rxdp_cm_event *r;
	struct rxdp_ctl_cm cm;
	struct cma_mc *mc, *m;
	uint16_t flags = RDMA_MC_JOIN_FLAG_FULLMEMBER;
	uint32_t info_sgid_index;

	if (!attr || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !sa_len(attr->addr) ||
	    (attr->comp_mask &
	     ~(RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)))
		return err_ret(EINVAL);
	if (attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)
		flags = (uint16_t)attr->join_flags;
	if (flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	    flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return err_ret(EINVAL);
	/* datagrams only (the kernel's rdma_join_multicast: UD ids) */
	if (cm_id->qp_type != IBV_QPT_UD || !sa_is_multicast(attr->addr))
		return err_ret(EINVAL);
	/* the id must be bound to a device: its GID is the source */
	cm_req(&cm, RXDP_CM_QUERY, id);
	if (cma_call(&cm, NULL))
		return -1;
	if (!cm.info.ifindex || !cm.info.src.family)
		return err_ret(ENODEV);
	if (cm.info.src.family != attr->addr->sa_family)
		return err_ret(EINVAL);
	info_sgid_index = cm.info.sgid_index;

	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return err_ret(ENOMEM);
	memcpy(&mc->addr, attr->addr, sa_len(attr->addr));
	mc->context = context;
	mc->join_flags = flags;
	sa_mgid(attr->addr, &mc->mgid);
	pthread_mutex_lock(&id->mut);
	for (m = id->mc_list; m; m = m->next) {
		if (sa_same_addr((struct sockaddr *)&m->addr, attr->addr)) {
			pthread_mutex_unlock(&id->mut);
			free(mc);
			return err_ret(EADDRINUSE); /* as the kernel's */
		}
	}
	pthread_mutex_lock(&lock);
	mc->seq = ++mc_seq;
	pthread_mutex_unlock(&lock);
	mc->next = id->mc_list;
	id->mc_list = mc;
	pthread_mutex_unlock(&id->mut);

	cm_req(&cm, RXDP_CM_REPOST, NULL);
	cm.channel = to_cma_chan(id->id.channel)->handle;
	r = &cm.event;
	r->id = id->handle;
	r->event = RDMA_CM_EVENT_MULTICAST_JOIN;
	r->conn.qp_num = 0xffffff; /* IBTA 10.5.2.4: the multicast QPN */
	r->conn.qkey = RXDP_CM_MCAST_QKEY;
	r->ud_valid = 1;
	r->info.sgid_index = (uint8_t)info_sgid_index;
	memcpy(r->info.dgid, mc->mgid.raw, 16);
	r->info.hop_limit = RXDP_CM_MCAST_HOP_LIMIT;
	memcpy(r->private_data, &mc->seq, sizeof(mc->seq));
	if (cma_call(&cm, NULL)) {
		int e = errno;
		struct cma_mc **pp;

		pthread_mutex_lock(&id->mut);
		for (pp = &id->mc_list; *pp; pp = &(*pp)->next) {
			if (*pp == mc) {
				*pp = mc->next;
				break;
			}
		}
		pthread_mutex_unlock(&id->mut);
		free(mc);
		return err_ret(e);
	}
	return 0;
}

int rdma_join_multicast_ex(struct rdma_cm_id *cm_id,
			   struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return done(to_cma_id(cm_id), to_cma_id(cm_id)->ops->join_multicast(
					      to_cma_id(cm_id), attr, context));
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
			void *context)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
			     RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = addr,
	};

	return rdma_join_multicast_ex(id, &attr, context);
}

/* Out of the id's list: the group of addr (NULL: the first), or NULL */
static struct cma_mc *mc_take(struct cma_id *id, const struct sockaddr *addr)
{
	struct cma_mc **pp, *mc = NULL;

	pthread_mutex_lock(&id->mut);
	for (pp = &id->mc_list; *pp; pp = &(*pp)->next) {
		if (!addr ||
		    sa_same_addr((struct sockaddr *)&(*pp)->addr, addr)) {
			mc = *pp;
			*pp = mc->next;
			break;
		}
	}
	pthread_mutex_unlock(&id->mut);
	return mc;
}

static void mc_free(struct cma_id *id, struct cma_mc *mc)
{
	if (mc->attached && id->id.qp)
		ibv_detach_mcast(id->id.qp, &mc->mgid, 0);
	free(mc);
}

static int rxdp_leave_multicast(struct cma_id *id, struct sockaddr *addr)
{
	struct cma_mc *mc = mc_take(id, addr);

	if (!mc)
		return err_ret(EADDRNOTAVAIL);
	/* its JOIN event, if still unread, finds no group and is dropped */
	mc_free(id, mc);
	return 0;
}

int rdma_leave_multicast(struct rdma_cm_id *cm_id, struct sockaddr *addr)
{
	if (!cm_id || !sa_len(addr))
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->leave_multicast(to_cma_id(cm_id), addr);
}

/*
 * A MULTICAST_JOIN event read: the group it names (by its seq), with the
 * id's QP attached unless it joined to send only; NULL if the group was
 * left meanwhile. The event's status says whether the attach failed.
 */
static struct cma_mc *mc_joined(struct cma_id *id,
				const struct rxdp_cm_event *r, int *status)
{
	struct cma_mc *mc;
	uint64_t seq;

	memcpy(&seq, r->private_data, sizeof(seq));
	*status = 0;
	pthread_mutex_lock(&id->mut);
	for (mc = id->mc_list; mc && mc->seq != seq; mc = mc->next)
		;
	if (mc && id->id.qp && !mc->attached &&
	    mc->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) {
		if (ibv_attach_mcast(id->id.qp, &mc->mgid, 0))
			*status = -errno;
		else
			mc->attached = 1;
	}
	pthread_mutex_unlock(&id->mut);
	return mc;
}

/* --- events ---------------------------------------------------------------------- */

static void copy_conn(struct cma_event *evt, const struct rxdp_cm_event *r)
{
	struct rdma_conn_param *c = &evt->event.param.conn;

	c->private_data_len = r->conn.private_data_len;
	if (r->conn.private_data_len) {
		memcpy(evt->private_data, r->private_data,
		       r->conn.private_data_len);
		c->private_data = evt->private_data;
	}
	c->responder_resources = r->conn.responder_resources;
	c->initiator_depth = r->conn.initiator_depth;
	c->flow_control = r->conn.flow_control;
	c->retry_count = r->conn.retry_count;
	c->rnr_retry_count = r->conn.rnr_retry_count;
	c->srq = r->conn.srq;
	c->qp_num = r->conn.qp_num;
}

static void copy_ud(struct cma_event *evt, const struct rxdp_cm_event *r)
{
	struct rdma_ud_param *u = &evt->event.param.ud;

	u->private_data_len = r->conn.private_data_len;
	if (r->conn.private_data_len) {
		memcpy(evt->private_data, r->private_data,
		       r->conn.private_data_len);
		u->private_data = evt->private_data;
	}
	if (r->ud_valid) {
		u->ah_attr.is_global = 1;
		u->ah_attr.port_num = 1;
		memcpy(u->ah_attr.grh.dgid.raw, r->info.dgid, 16);
		u->ah_attr.grh.sgid_index = r->info.sgid_index;
		u->ah_attr.grh.hop_limit = r->info.hop_limit;
		u->ah_attr.grh.traffic_class = r->info.traffic_class;
		u->ah_attr.grh.flow_label = r->info.flow_label;
		u->qp_num = r->conn.qp_num;
		u->qkey = r->conn.qkey;
	}
}

/* A CONNECT_REQUEST: the new id, on the listener's channel (a sync
 * listener's requests become sync ids of their own) */
static int conn_req(struct cma_event *evt, struct cma_id *l,
		    const struct rxdp_cm_event *r)
{
	struct cma_id *id;

	id = cma_id_alloc(l->id.channel, l->id.context, l->id.ps,
			  l->id.qp_type);
	if (!id)
		goto err;
	id->handle = r->id;
	cma_id_insert(id);
	evt->event.listen_id = &l->id;
	evt->event.id = &id->id;
	id->initiator_depth = r->conn.initiator_depth;
	id->responder_resources = r->conn.responder_resources;
	id->remote_ece.vendor_id = r->conn.ece_vendor_id;
	id->remote_ece.options = r->conn.ece_options;
	route_update(id, &r->info);
	if (!id->dev) {
		rdma_destroy_id(&id->id);
		goto err;
	}
	if (l->sync && rdma_migrate_id(&id->id, NULL)) {
		rdma_destroy_id(&id->id);
		goto err;
	}
	return 0;
err:
	ack_event(evt);
	return -1;
}

/* An id this process does not know (any more): rxdpd drops it */
static void drop_unknown(uint32_t handle)
{
	struct rxdp_ctl_cm cm;

	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_DESTROY_ID;
	cm.id = handle;
	cma_call(&cm, NULL);
}

/*
 * rdma-core's event se, with the ids in it ours: a connection request
 * brings a new rdma-core id, which gets an id of ours. 0, or -1 with errno
 */
static int sys_event(struct rdma_cm_event *se, struct rdma_cm_event **out)
{
	struct cma_event *evt;
	struct cma_id *id;

	evt = calloc(1, sizeof(*evt));
	if (!evt) {
		CMA_SYS(rdma_ack_cm_event, se);
		errno = ENOMEM;
		return -1;
	}
	evt->sys = se;
	evt->event = *se;
	if (se->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct cma_id *l = se->listen_id->context;

		id = cma_id_alloc(l->id.channel, l->id.context, l->id.ps,
				  l->id.qp_type);
		if (!id) {
			CMA_SYS(rdma_reject, se->id, NULL, 0);
			CMA_SYS(rdma_ack_cm_event, se);
			CMA_SYS(rdma_destroy_id, se->id);
			free(evt);
			errno = ENOMEM;
			return -1;
		}
		stand_for(id, se->id);
		cma_id_insert(id);
		evt->event.listen_id = &l->id;
		if (l->sync && rdma_migrate_id(&id->id, NULL)) {
			rdma_destroy_id(&id->id);
			CMA_SYS(rdma_ack_cm_event, se);
			free(evt);
			return -1;
		}
	} else {
		id = se->id->context;
	}
	pthread_mutex_lock(&id->mut);
	id->events_reported++;
	pthread_mutex_unlock(&id->mut);
	evt->id_priv = id;
	evt->event.id = &id->id;
	cma_sys_mirror(id, 0);
	*out = &evt->event;
	return 0;
}

int rdma_get_cm_event(struct rdma_event_channel *channel,
		      struct rdma_cm_event **event)
{
	struct rxdp_cm_event r;
	struct cma_event *evt;
	struct cma_id *id;
	ssize_t n;

	if (!channel || !event)
		return err_ret(EINVAL);
	evt = NULL;
retry:
	if (to_cma_chan(channel)->sys) {
		/* rxdpd's events and rdma-core's, whichever comes first */
		struct rdma_cm_event *se;
		int got =
			cma_sys_wait(to_cma_chan(channel), &r, sizeof(r), &se);

		if (!got && sys_event(se, event))
			got = -1;

		if (got <= 0) {
			free(evt);
			return got;
		}
		n = sizeof(r);
	} else {
		n = read(channel->fd, &r, sizeof(r));
	}
	if (n != (ssize_t)sizeof(r)) {
		int e = n < 0 ? errno : n == 0 ? ENODEV : EPROTO;

		free(evt);
		return err_ret(e);
	}
	if (!evt && !(evt = malloc(sizeof(*evt))))
		return err_ret(ENOMEM);
	memset(evt, 0, sizeof(*evt));
	id = id_take_event(
		r.event == RDMA_CM_EVENT_CONNECT_REQUEST ? r.listen_id : r.id);
	if (!id) {
		if (r.event == RDMA_CM_EVENT_CONNECT_REQUEST)
			drop_unknown(r.id);
		goto retry;
	}
	evt->id_priv = id;
	evt->event.id = &id->id;
	evt->event.event = (enum rdma_cm_event_type)r.event;
	evt->event.status = r.status;
	switch (r.event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		route_update(id, &r.info);
		if (!id->dev) {
			evt->event.event = RDMA_CM_EVENT_ADDR_ERROR;
			evt->event.status = -ENODEV;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		route_update(id, &r.info);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (id->id.qp_type == IBV_QPT_UD)
			copy_ud(evt, &r);
		else
			copy_conn(evt, &r);
		if (conn_req(evt, id, &r))
			goto retry;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		copy_conn(evt, &r);
		id->remote_ece.vendor_id = r.conn.ece_vendor_id;
		id->remote_ece.options = r.conn.ece_options;
		if (!id->id.qp)
			break;
		evt->event.status = conn_resp(id) ? -errno : 0;
		if (!evt->event.status) {
			evt->event.event = RDMA_CM_EVENT_ESTABLISHED;
		} else {
			evt->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
			id->connect_error = 1;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id->id.qp_type == IBV_QPT_UD)
			copy_ud(evt, &r);
		else
			copy_conn(evt, &r);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (id->connect_error) {
			ack_event(evt);
			goto retry;
		}
		copy_conn(evt, &r);
		modify_err(&id->id);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (id->connect_error) {
			ack_event(evt);
			goto retry;
		}
		copy_conn(evt, &r);
		break;
	case RDMA_CM_EVENT_MULTICAST_JOIN: {
		struct cma_mc *mc;
		int status;

		r.conn.private_data_len = 0; /* the seq is not the user's */
		copy_ud(evt, &r);
		mc = mc_joined(id, &r, &status);
		if (!mc) { /* left before its event was read */
			ack_event(evt);
			goto retry;
		}
		evt->event.param.ud.private_data = mc->context;
		if (status) {
			evt->event.event = RDMA_CM_EVENT_MULTICAST_ERROR;
			evt->event.status = status;
		}
		break;
	}
	default:
		if (id->id.qp_type == IBV_QPT_UD)
			copy_ud(evt, &r);
		else
			copy_conn(evt, &r);
		break;
	}
	*event = &evt->event;
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] =
			"RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] =
			"RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] =
			"RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) &&
	    names[event])
		return names[event];
	return "UNKNOWN EVENT";
}

/* --- options, migration, endpoints -------------------------------------------- */

static int rxdp_set_option(struct cma_id *id, int level, int optname,
			   void *optval, size_t optlen)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_SET_OPTION, id);
	cm.level = (uint32_t)level;
	cm.optname = (uint32_t)optname;
	if (level != RDMA_OPTION_ID)
		return err_ret(ENOSYS);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return err_ret(EINVAL);
		cm.value = *(uint8_t *)optval;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return err_ret(EINVAL);
		cm.value = (uint64_t)(*(int *)optval != 0);
		break;
	default:
		return err_ret(ENOSYS);
	}
	return cma_call(&cm, NULL);
}

int rdma_set_option(struct rdma_cm_id *cm_id, int level, int optname,
		    void *optval, size_t optlen)
{
	if (!cm_id || !optval)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->set_option(to_cma_id(cm_id), level,
						 optname, optval, optlen);
}

/*
 * After the move, the events about the id still unread in the old channel
 * go to the new one (rxdpd writes them again), the others back to the old
 * one: as the kernel moves an id's queued events with it.
 */
static void move_unread(struct cma_id *id, struct rdma_event_channel *from,
			struct rdma_event_channel *to)
{
	struct rxdp_ctl_cm cm;
	int n = 0;

	for (;;) {
		ssize_t got;

		cm_req(&cm, RXDP_CM_REPOST, NULL);
		got = recv(to_cma_chan(from)->sock, &cm.event, sizeof(cm.event),
			   MSG_DONTWAIT);
		if (got != (ssize_t)sizeof(cm.event) || ++n > 4096)
			break;
		cm.channel =
			to_cma_chan(
				(cm.event.event == RDMA_CM_EVENT_CONNECT_REQUEST
					 ? cm.event.listen_id
					 : cm.event.id) == id->handle
					? to
					: from)
				->handle;
		cma_call(&cm, NULL);
	}
}

/* id's events from now on to channel's socket, those unread moved there */
static int rxdp_migrate_id(struct cma_id *id,
			   struct rdma_event_channel *channel)
{
	struct rxdp_ctl_cm cm;

	cm_req(&cm, RXDP_CM_MIGRATE_ID, id);
	cm.channel = to_cma_chan(channel)->handle;
	if (cma_call(&cm, NULL))
		return -1;
	move_unread(id, id->id.channel, channel);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *cm_id,
		    struct rdma_event_channel *channel)
{
	struct cma_id *id = to_cma_id(cm_id);
	struct rdma_event_channel *old;
	int sync;

	if (!cm_id || (id->sync && !channel))
		return err_ret(EINVAL);
	sync = channel == NULL;
	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	if (id->ops->migrate_id(id, channel)) {
		int e = errno;

		if (sync)
			rdma_destroy_event_channel(channel);
		return err_ret(e);
	}
	old = cm_id->channel;
	if (id->sync) {
		if (cm_id->event) {
			rdma_ack_cm_event(cm_id->event);
			cm_id->event = NULL;
		}
		rdma_destroy_event_channel(old);
	}
	pthread_mutex_lock(&id->mut);
	id->sync = sync;
	cm_id->channel = channel;
	pthread_mutex_unlock(&id->mut);
	wait_acks(id);
	return 0;
}

int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	struct cma_id *id;
	int ret;

	if (!out || !res)
		return err_ret(EINVAL);
	ret = create_id(NULL, &cm_id, NULL, res->ai_port_space,
			res->ai_qp_type);
	if (ret)
		return ret;
	id = to_cma_id(cm_id);
	if (res->ai_flags & RAI_PASSIVE) {
		ret = rdma_bind_addr(cm_id, res->ai_src_addr);
		if (ret)
			goto err;
		if (pd)
			cm_id->pd = pd;
		if (qp_init_attr) {
			id->qp_init_attr = malloc(sizeof(*qp_init_attr));
			if (!id->qp_init_attr) {
				ret = err_ret(ENOMEM);
				goto err;
			}
			*id->qp_init_attr = *qp_init_attr;
			id->qp_init_attr->qp_type = res->ai_qp_type;
		}
		*out = cm_id;
		return 0;
	}
	ret = rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr,
				2000);
	if (!ret)
		ret = rdma_resolve_route(cm_id, 2000);
	if (ret)
		goto err;
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		ret = rdma_create_qp(cm_id, pd, qp_init_attr);
		if (ret)
			goto err;
	}
	if (res->ai_connect_len) {
		id->connect = malloc(res->ai_connect_len);
		if (!id->connect) {
			ret = err_ret(ENOMEM);
			goto err;
		}
		memcpy(id->connect, res->ai_connect, res->ai_connect_len);
		id->connect_len = res->ai_connect_len;
	}
	*out = cm_id;
	return 0;
err : {
	int e = errno;

	rdma_destroy_ep(cm_id);
	return err_ret(e);
}
}

void rdma_destroy_ep(struct rdma_cm_id *cm_id)
{
	if (cm_id->qp)
		rdma_destroy_qp(cm_id);
	if (cm_id->srq)
		rdma_destroy_srq(cm_id);
	rdma_destroy_id(cm_id);
}

static __be16 sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return sa_port(&id->route.addr.src_addr);
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return sa_port(&id->route.addr.dst_addr);
}

static int rxdp_set_local_ece(struct cma_id *id, struct ibv_ece *ece)
{
	if (id->id.qp || !ece || !ece->vendor_id || ece->comp_mask)
		return err_ret(EINVAL);
	id->local_ece.vendor_id = ece->vendor_id;
	id->local_ece.options = ece->options;
	return 0;
}

int rdma_set_local_ece(struct rdma_cm_id *cm_id, struct ibv_ece *ece)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->set_local_ece(to_cma_id(cm_id), ece);
}

static int rxdp_get_remote_ece(struct cma_id *id, struct ibv_ece *ece)
{
	if (id->id.qp || !ece)
		return err_ret(EINVAL);
	ece->vendor_id = id->remote_ece.vendor_id;
	ece->options = id->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

int rdma_get_remote_ece(struct rdma_cm_id *cm_id, struct ibv_ece *ece)
{
	if (!cm_id)
		return err_ret(EINVAL);
	return to_cma_id(cm_id)->ops->get_remote_ece(to_cma_id(cm_id), ece);
}

/* rxdp's CM, for the ids rdma-core's does not stand behind */
const struct cma_ops cma_rxdp_ops = {
	.destroy_id = rxdp_destroy_id,
	.bind_addr = rxdp_bind_addr,
	.resolve_addr = rxdp_resolve_addr,
	.resolve_route = rxdp_resolve_route,
	.init_qp_attr = rxdp_init_qp_attr,
	.create_qp_ex = rxdp_create_qp_ex,
	.destroy_qp = rxdp_destroy_qp,
	.create_srq_ex = rxdp_create_srq_ex,
	.destroy_srq = rxdp_destroy_srq,
	.connect = rxdp_connect,
	.listen = rxdp_listen,
	.accept = rxdp_accept,
	.reject = rxdp_reject,
	.notify = rxdp_notify,
	.disconnect = rxdp_disconnect,
	.establish = rxdp_establish,
	.join_multicast = rxdp_join_multicast,
	.leave_multicast = rxdp_leave_multicast,
	.set_option = rxdp_set_option,
	.migrate_id = rxdp_migrate_id,
	.set_local_ece = rxdp_set_local_ece,
	.get_remote_ece = rxdp_get_remote_ece,
};
