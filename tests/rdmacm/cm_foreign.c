// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * cm_foreign ADDR: rxdp's librdmacm beside a stand-in rdma-core
 * (fake_rdmacm.c; cm-foreign.sh sets RXDP_RDMA_CORE and _CM), with rxdpd
 * serving another interface. An id bound to ADDR, on an interface rxdpd
 * does not serve, must stand for an rdma-core id, and every call on it must
 * reach rdma-core's function of the same name, its value and errno coming
 * back (-1 and its errno where librdmacm says only that it failed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "../verbs/fake_rdmacore.h"

static int failed;

static void expect(const char *fn, int got, int err, int want)
{
	unsigned int m = fake_rdmacore_mark(fn);

	if (got != want || err != (int)FAKE_RDMACORE_ERRNO(m)) {
		fprintf(stderr,
			"FAIL: %s: got %#x errno %d, rdma-core's gives %#x "
			"errno %u\n",
			fn, got, err, want, FAKE_RDMACORE_ERRNO(m));
		failed++;
	}
}

/* CALL must reach rdma-core's FN: its value (or -1), then its errno */
#define EXPECT(fn, call)                                                 \
	do {                                                             \
		int v_;                                                  \
		errno = 0;                                               \
		v_ = (call);                                             \
		expect(#fn, v_, errno,                                   \
		       (int)FAKE_RDMACORE_RET(fake_rdmacore_mark(#fn))); \
	} while (0)
#define EXPECT_FAILED(fn, call)             \
	do {                                \
		int v_;                     \
		errno = 0;                  \
		v_ = (call);                \
		expect(#fn, v_, errno, -1); \
	} while (0)
#define EXPECT_VOID(fn, call)             \
	do {                              \
		errno = 0;                \
		call;                     \
		expect(#fn, 0, errno, 0); \
	} while (0)

/*
 * The connection request rdma-core's listener (the stand-in's, once
 * listening) brings: a new id of ours for its new id, whose calls are
 * rdma-core's too
 */
static void request(struct rdma_cm_id *listener, struct rdma_event_channel *ch)
{
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev) ||
	    ev->event != RDMA_CM_EVENT_CONNECT_REQUEST ||
	    ev->listen_id != listener || !ev->id || ev->id == listener) {
		fprintf(stderr, "FAIL: no connection request from rdma-core's "
				"listener\n");
		failed++;
		return;
	}
	EXPECT(rdma_accept, rdma_accept(ev->id, &cp));
	EXPECT(rdma_reject, rdma_reject(ev->id, NULL, 0));
	EXPECT_VOID(rdma_ack_cm_event, rdma_ack_cm_event(ev));
}

static void calls(struct rdma_cm_id *id, struct rdma_event_channel *ch,
		  struct sockaddr *addr)
{
	struct ibv_qp_init_attr_ex qx = { 0 };
	struct ibv_srq_init_attr_ex sx = { .comp_mask =
						   IBV_SRQ_INIT_ATTR_TYPE };
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_cm_join_mc_attr_ex mc = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct ibv_qp_attr attr;
	struct ibv_ece ece = { 0 };
	int mask, tos = 0;

	EXPECT(rdma_resolve_addr, rdma_resolve_addr(id, addr, addr, 100));
	EXPECT(rdma_resolve_route, rdma_resolve_route(id, 100));
	EXPECT(rdma_init_qp_attr, rdma_init_qp_attr(id, &attr, &mask));
	EXPECT(rdma_create_qp_ex, rdma_create_qp_ex(id, &qx));
	EXPECT(rdma_create_qp_ex, rdma_create_qp(id, NULL, &qa));
	EXPECT_VOID(rdma_destroy_qp, rdma_destroy_qp(id));
	EXPECT(rdma_create_srq_ex, rdma_create_srq_ex(id, &sx));
	EXPECT_VOID(rdma_destroy_srq, rdma_destroy_srq(id));
	EXPECT(rdma_connect, rdma_connect(id, &cp));
	EXPECT(rdma_listen, rdma_listen(id, 1));
	EXPECT(rdma_accept, rdma_accept(id, &cp));
	EXPECT(rdma_reject, rdma_reject(id, NULL, 0));
	EXPECT(rdma_reject_ece, rdma_reject_ece(id, NULL, 0));
	EXPECT(rdma_notify, rdma_notify(id, IBV_EVENT_COMM_EST));
	EXPECT(rdma_disconnect, rdma_disconnect(id));
	EXPECT(rdma_establish, rdma_establish(id));
	mc.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS;
	mc.addr = addr;
	EXPECT(rdma_join_multicast_ex, rdma_join_multicast_ex(id, &mc, NULL));
	EXPECT(rdma_join_multicast_ex, rdma_join_multicast(id, addr, NULL));
	EXPECT(rdma_leave_multicast, rdma_leave_multicast(id, addr));
	EXPECT(rdma_set_option, rdma_set_option(id, RDMA_OPTION_ID,
						RDMA_OPTION_ID_TOS, &tos, 1));
	EXPECT(rdma_set_local_ece, rdma_set_local_ece(id, &ece));
	request(id, ch);
	EXPECT(rdma_get_remote_ece, rdma_get_remote_ece(id, &ece));
	EXPECT_FAILED(rdma_migrate_id, rdma_migrate_id(id, ch));
	EXPECT_FAILED(rdma_destroy_id, rdma_destroy_id(id));
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(7999) };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: cm_foreign IPV4-ADDRESS\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("FAIL: an event channel and an id (is rxdpd there?)");
		return 1;
	}
	/* the address rxdpd does not serve: the id becomes rdma-core's */
	EXPECT(rdma_bind_addr, rdma_bind_addr(id, (struct sockaddr *)&sin));
	calls(id, ch, (struct sockaddr *)&sin);
	if (failed) {
		fprintf(stderr, "cm_foreign: %d failed\n", failed);
		return 1;
	}
	printf("cm_foreign: every call on an id rdma-core's stands behind "
	       "reached rdma-core's, value and errno\n");
	return 0;
}
