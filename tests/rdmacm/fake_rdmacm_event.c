// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fake_rdmacm.c's ids, and its listener: the id rdma_listen() is called on
 * gets one connection request, with a new id, from the next
 * rdma_get_cm_event() on any channel; then none (EAGAIN).
 */
#include <errno.h>
#include <stdlib.h>

#include <rdma/rdma_cma.h>

long fake_answer(const char *fn);

static struct rdma_cm_id *listener;
static struct rdma_cm_event request;

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	*id = calloc(1, sizeof(**id));
	if (!*id)
		return -1;
	(*id)->channel = channel;
	(*id)->context = context;
	(*id)->ps = ps;
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	listener = id;
	return (int)fake_answer(__func__);
}

int rdma_get_cm_event(struct rdma_event_channel *channel,
		      struct rdma_cm_event **event)
{
	if (!listener || request.id) {
		errno = EAGAIN;
		return -1;
	}
	if (rdma_create_id(channel, &request.id, NULL, listener->ps))
		return -1;
	request.listen_id = listener;
	request.event = RDMA_CM_EVENT_CONNECT_REQUEST;
	*event = &request;
	return 0;
}
