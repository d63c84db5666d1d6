// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * cm_check: the RDMA CM behaviours rdma-core's programs do not pin down,
 * against build/lib's librdmacm.so.1 (linked against the system's
 * headers and library name, run with LD_LIBRARY_PATH=build/lib).
 *
 *   cm_check server PORT     refuse the first request (REJ, with private
 *                            data), accept the second (no QP: the
 *                            application establishes), wait for its
 *                            DISCONNECTED; its ids' ports
 *   cm_check client ADDR PORT  the other side: REJECTED (status 28 and the
 *                            private data), then CONNECT_RESPONSE,
 *                            rdma_establish, rdma_disconnect, DISCONNECTED;
 *                            rdma_get_src_port/rdma_get_dst_port on both
 *                            sides are the ports of the addresses used
 *   cm_check api ADDR        on one host: a non-blocking channel says
 *                            EAGAIN and polls readable when an event
 *                            comes, a port taken twice is EADDRINUSE, a
 *                            synchronous id resolves, rdma_init_qp_attr
 *                            needs a device, rdma_get_devices lists the
 *                            bound id's device, rdma_create_srq makes an
 *                            SRQ on it
 *
 * Exits 0 when every check holds, 1 with a message naming the one that
 * did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define REJECT_MSG "go away"

static int fail(const char *what)
{
	fprintf(stderr, "cm_check: FAIL: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;
	char msg[128];

	if (rdma_get_cm_event(ch, &ev))
		fail("rdma_get_cm_event");
	if (ev->event != type) {
		snprintf(msg, sizeof(msg), "expected %s, got %s (status %d)",
			 rdma_event_str(type), rdma_event_str(ev->event),
			 ev->status);
		errno = 0;
		fail(msg);
	}
	return ev;
}

static void addr_of(const char *host, const char *port, int passive,
		    struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_flags = passive ? AI_PASSIVE : 0 },
			*ai;

	if (getaddrinfo(host, port, &hints, &ai))
		fail("getaddrinfo");
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

/* ID's ports: SRC (network order; 0: any but 0) and DST the same way,
 * and each the port of the address it belongs to */
static void ports(struct rdma_cm_id *id, uint16_t src, uint16_t dst)
{
	struct sockaddr_in *l = (struct sockaddr_in *)rdma_get_local_addr(id);
	struct sockaddr_in *p = (struct sockaddr_in *)rdma_get_peer_addr(id);
	__be16 s = rdma_get_src_port(id), d = rdma_get_dst_port(id);

	errno = 0;
	if (!s || (src && s != src) || s != l->sin_port)
		fail("rdma_get_src_port: not the local address's port");
	if (!d || (dst && d != dst) || d != p->sin_port)
		fail("rdma_get_dst_port: not the peer address's port");
}

static int server(const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p = { .qp_num = 0x123456,
				     .responder_resources = 1,
				     .initiator_depth = 1,
				     .retry_count = 7,
				     .rnr_retry_count = 7 };
	struct sockaddr_storage ss;
	struct rdma_cm_id *l, *id;
	struct rdma_cm_event *ev;

	if (!ch || rdma_create_id(ch, &l, NULL, RDMA_PS_TCP))
		fail("create");
	addr_of(NULL, port, 1, &ss);
	if (rdma_bind_addr(l, (struct sockaddr *)&ss) || rdma_listen(l, 4))
		fail("bind/listen");
	printf("listening\n");
	fflush(stdout);
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (ev->listen_id != l || ev->id == l)
		fail("CONNECT_REQUEST: listen_id/id");
	if (rdma_reject(ev->id, REJECT_MSG, sizeof(REJECT_MSG)))
		fail("rdma_reject");
	id = ev->id;
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (rdma_accept(id, &p))
		fail("rdma_accept");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	ports(id, htons((uint16_t)atoi(port)), 0);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	if (rdma_disconnect(id))
		fail("rdma_disconnect (answering the DREQ)");
	rdma_destroy_id(id);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
	printf("server: ok\n");
	return 0;
}

/* An id resolved to ADDR:PORT on ch */
static struct rdma_cm_id *resolved(struct rdma_event_channel *ch,
				   const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	addr_of(addr, port, 0, &ss);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, 2000))
		fail("create/resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 2000))
		fail("resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (!id->verbs || !id->route.path_rec || id->route.num_paths != 1)
		fail("no device or path after ROUTE_RESOLVED");
	return id;
}

static int client(const char *addr, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p = { .qp_num = 0x654321,
				     .responder_resources = 1,
				     .initiator_depth = 1,
				     .retry_count = 7,
				     .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (!ch)
		fail("rdma_create_event_channel");
	id = resolved(ch, addr, port);
	if (rdma_connect(id, &p))
		fail("rdma_connect");
	ev = expect(ch, RDMA_CM_EVENT_REJECTED);
	if (ev->status != 28)
		fail("REJECTED: status is not 28 (consumer defined)");
	if (ev->param.conn.private_data_len < sizeof(REJECT_MSG) ||
	    memcmp(ev->param.conn.private_data, REJECT_MSG, sizeof(REJECT_MSG)))
		fail("REJECTED: not the listener's private data");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
	printf("rejected: status 28, \"%s\"\n", REJECT_MSG);

	id = resolved(ch, addr, port);
	if (rdma_connect(id, &p))
		fail("rdma_connect");
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE);
	if (ev->param.conn.qp_num != 0x123456)
		fail("CONNECT_RESPONSE: not the QPN the server accepted with");
	rdma_ack_cm_event(ev);
	if (rdma_establish(id))
		fail("rdma_establish");
	ports(id, 0, htons((uint16_t)atoi(port)));
	if (rdma_disconnect(id))
		fail("rdma_disconnect");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	printf("client: ok\n");
	return 0;
}

static int api(const char *addr)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_storage ss, any;
	struct rdma_cm_id *a, *b, *s;
	struct rdma_cm_event *ev;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr got;
	struct ibv_context **devs;
	struct pollfd pfd;
	int mask, n = -1, found = 0;

	if (!ch || fcntl(ch->fd, F_SETFL, O_NONBLOCK))
		fail("channel");
	if (!rdma_get_cm_event(ch, &ev) || errno != EAGAIN)
		fail("an empty non-blocking channel is not EAGAIN");
	if (rdma_create_id(ch, &a, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(ch, &b, NULL, RDMA_PS_TCP))
		fail("create_id");
	addr_of(addr, "7999", 1, &ss);
	if (rdma_bind_addr(a, (struct sockaddr *)&ss))
		fail("bind");
	if (!rdma_bind_addr(b, (struct sockaddr *)&ss) || errno != EADDRINUSE)
		fail("a port bound twice is not EADDRINUSE");
	addr_of(NULL, "7999", 1, &any);
	if (!rdma_bind_addr(b, (struct sockaddr *)&any) ||
	    errno != EADDRNOTAVAIL)
		fail("a wildcard bind over a bound port is not EADDRNOTAVAIL");
	if (!a->verbs)
		fail("an id bound to a device's address has no verbs context");
	if (rdma_init_qp_attr(b, &qa, &mask) == 0 || errno != EINVAL)
		fail("rdma_init_qp_attr of an id with no device");
	devs = rdma_get_devices(&n);
	if (!devs || n < 1 || devs[n])
		fail("rdma_get_devices: no device, or no NULL after the last");
	for (int i = 0; i < n; i++)
		found |= devs[i] == a->verbs;
	rdma_free_devices(devs);
	errno = 0;
	if (!found)
		fail("rdma_get_devices does not list the bound id's device");
	if (rdma_create_srq(a, NULL, &sa) || !a->srq ||
	    a->srq->context != a->verbs || a->srq->pd != a->pd)
		fail("rdma_create_srq: no SRQ on the id's device and PD");
	if (ibv_query_srq(a->srq, &got) || got.max_wr < 4)
		fail("the SRQ rdma_create_srq made holds fewer than 4 WRs");
	rdma_destroy_srq(a);
	if (a->srq)
		fail("rdma_destroy_srq left the id's SRQ");
	if (rdma_resolve_addr(b, NULL, (struct sockaddr *)&ss, 2000))
		fail("resolve_addr");
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 5000) != 1)
		fail("the channel does not poll readable for ADDR_RESOLVED");
	if (rdma_get_cm_event(ch, &ev) ||
	    ev->event != RDMA_CM_EVENT_ADDR_RESOLVED || ev->id != b)
		fail("ADDR_RESOLVED");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(a);
	rdma_destroy_id(b);
	rdma_destroy_event_channel(ch);
	/* synchronous: no channel, the call returns when it is done */
	if (rdma_create_id(NULL, &s, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(s, NULL, (struct sockaddr *)&ss, 2000) ||
	    rdma_resolve_route(s, 2000))
		fail("a synchronous id");
	if (!s->event || s->event->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		fail("a synchronous id keeps its last event");
	rdma_destroy_id(s);
	printf("api: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "api"))
		return api(argv[2]);
	fprintf(stderr, "usage: cm_check server PORT | client ADDR PORT | "
			"api ADDR\n");
	return 2;
}
