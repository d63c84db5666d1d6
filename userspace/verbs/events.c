// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Completion and asynchronous events, on pipes rxdpd writes: each event is
 * one fixed-size record written atomically (well under PIPE_BUF), so the
 * read ends behave as the kernel's uverbs event files do: poll()/epoll say
 * readable when an event is queued, a blocking read waits for one, and a
 * descriptor the application made O_NONBLOCK gives EAGAIN. (Channels are
 * made in dataplane.c, with the other objects rxdpd keeps.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs/verbs_priv.h"

void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	cq->handle = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
}

void rxdp_cq_fini(struct ibv_cq *cq)
{
	if (cq->channel) {
		pthread_mutex_lock(&cq->context->mutex);
		cq->channel->refcnt--;
		pthread_mutex_unlock(&cq->context->mutex);
	}
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
}

static int read_record(int fd, void *rec, size_t len)
{
	ssize_t n;

	do
		n = read(fd, rec, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EIO; /* write end gone: the channel is being torn down */
	return n == (ssize_t)len ? 0 : -EIO;
}

/*
 * Events per object, kept as uverbs keeps them: a destroy waits for the acks
 * of the events the application has read, and those it has not read are
 * discarded (the kernel's ib_uverbs_release_uevent; its events_reported
 * counts what was read). The records of unread events stay in their pipes,
 * so an object destroyed with some still queued keeps its memory (its
 * address is not reused) until the last of them has been read and skipped.
 * Only objects that had events are listed: few, so a list will do.
 */
enum {
	EV_COMP,
	EV_ASYNC
};

struct ev_obj {
	const void *obj;
	struct ibv_context *ctx;
	uint32_t delivered[2]; /* read by the application, per EV_* */
	uint32_t unread[2]; /* once dead: records still queued */
	void *mem; /* once dead: freed with the last record */
	int dead;
	struct ev_obj *next;
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev_obj *ev_objs;

static struct ev_obj **ev_find(const void *obj)
{
	struct ev_obj **pp;

	for (pp = &ev_objs; *pp && (*pp)->obj != obj; pp = &(*pp)->next)
		;
	return pp;
}

/* A record about obj was read: 1 to skip it (obj is gone), else counted */
static int ev_read(struct ibv_context *ctx, const void *obj, int kind)
{
	struct ev_obj **pp, *o, *gone = NULL;
	int skip = 0;

	pthread_mutex_lock(&ev_lock);
	pp = ev_find(obj);
	o = *pp;
	if (o && o->dead) {
		skip = 1;
		if (o->unread[kind])
			o->unread[kind]--;
		if (!o->unread[EV_COMP] && !o->unread[EV_ASYNC]) {
			*pp = o->next;
			gone = o;
		}
	} else {
		if (!o) {
			o = calloc(1, sizeof(*o));
			if (o) { /* else uncounted: destroy will not wait for it */
				o->obj = obj;
				o->ctx = ctx;
				o->next = ev_objs;
				ev_objs = o;
			}
		}
		if (o)
			o->delivered[kind]++;
	}
	pthread_mutex_unlock(&ev_lock);
	if (gone) {
		free(gone->mem);
		free(gone);
	}
	return skip;
}

int rxdp_events_destroyed(struct ibv_context *ctx, const void *obj, void *mem,
			  uint32_t comp_posted, uint32_t async_posted,
			  uint32_t *comp_read, uint32_t *async_read)
{
	struct ev_obj **pp, *o;
	uint32_t d0, d1;
	int keep = 0;

	pthread_mutex_lock(&ev_lock);
	pp = ev_find(obj);
	o = *pp;
	d0 = o ? o->delivered[EV_COMP] : 0;
	d1 = o ? o->delivered[EV_ASYNC] : 0;
	if (comp_posted != d0 || async_posted != d1) {
		keep = 1;
		if (!o) {
			o = calloc(1, sizeof(*o));
			if (!o) /* cannot track it: never free mem */
				goto out;
			o->obj = obj;
			o->ctx = ctx;
			o->next = ev_objs;
			ev_objs = o;
		}
		o->dead = 1;
		o->unread[EV_COMP] = comp_posted - d0;
		o->unread[EV_ASYNC] = async_posted - d1;
		o->mem = mem;
	} else if (o) {
		*pp = o->next;
		free(o);
	}
out:
	pthread_mutex_unlock(&ev_lock);
	*comp_read = d0;
	*async_read = d1;
	return keep;
}

void rxdp_events_ctx_closed(struct ibv_context *ctx)
{
	struct ev_obj **pp = &ev_objs, *o;

	pthread_mutex_lock(&ev_lock);
	while ((o = *pp)) {
		if (o->ctx != ctx) {
			pp = &o->next;
			continue;
		}
		/* the async pipe is gone; a channel may outlive the context */
		o->unread[EV_ASYNC] = 0;
		if (o->dead && o->unread[EV_COMP]) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		free(o->mem);
		free(o);
	}
	pthread_mutex_unlock(&ev_lock);
}

int rxdp_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		      void **cq_context)
{
	struct ibv_cq *ev;
	int ret;

	do {
		ret = read_record(channel->fd, &ev, sizeof(ev));
		if (ret) {
			errno = -ret;
			return -1;
		}
	} while (ev_read(ev->context, ev, EV_COMP)); /* skip destroyed CQs' */
	*cq = ev;
	*cq_context = ev->cq_context;
	return 0;
}

void rxdp_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

void rxdp_cq_wait_acked(struct ibv_cq *cq, uint32_t comp_events,
			uint32_t async_events)
{
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != comp_events ||
	       cq->async_events_completed != async_events)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
}

void rxdp_qp_wait_acked(struct ibv_qp *qp, uint32_t events)
{
	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed != events)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);
}

void rxdp_srq_wait_acked(struct ibv_srq *srq, uint32_t events)
{
	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != events)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);
}

/* The object an async event is about, or NULL (port and device events) */
static const void *event_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_WQ_FATAL:
		return ev->element.wq;
	default:
		return NULL;
	}
}

/* The context of an async event's object; NULL: a port's or the device's */
struct ibv_context *rxdp_event_ctx(const struct ibv_async_event *ev)
{
	/* a CQ, QP, SRQ and WQ each begin with their context */
	const struct {
		struct ibv_context *context;
	} *obj = event_obj(ev);

	return obj ? obj->context : NULL;
}

/* An event record from rxdpd -> what libibverbs hands out */
static void event_from_record(const struct rxdp_hca_event *r,
			      struct ibv_async_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->event_type = (enum ibv_event_type)r->type;
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		ev->element.cq = (struct ibv_cq *)(uintptr_t)r->cookie;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev->element.srq = (struct ibv_srq *)(uintptr_t)r->cookie;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		ev->element.port_num = (int)r->port;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	default: /* QP events */
		ev->element.qp = (struct ibv_qp *)(uintptr_t)r->cookie;
		break;
	}
}

int rxdp_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct rxdp_hca_event r;
	const void *obj;
	int ret;

	do {
		ret = read_record(ctx->async_fd, &r, sizeof(r));
		if (ret == -EIO) {
			/* rxdpd is gone (the pipe's writer closed): fatal */
			memset(event, 0, sizeof(*event));
			event->event_type = IBV_EVENT_DEVICE_FATAL;
			to_rxdp_ctx(ctx)->dead = 1;
			return 0;
		}
		if (ret) {
			errno = -ret;
			return -1;
		}
		event_from_record(&r, event);
		obj = event_obj(event);
	} while (obj && ev_read(ctx, obj, EV_ASYNC)); /* skip destroyed ones' */
	return 0;
}

/* Count the acknowledgement on the object the event is about */
void rxdp_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		return;
	}
	case IBV_EVENT_WQ_FATAL: {
		struct ibv_wq *wq = event->element.wq;

		pthread_mutex_lock(&wq->mutex);
		wq->events_completed++;
		pthread_cond_signal(&wq->cond);
		pthread_mutex_unlock(&wq->mutex);
		return;
	}
	default:
		return; /* port and device events belong to no object */
	}
}
