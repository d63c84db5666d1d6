// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A stand-in for rdma-core's librdmacm.so.1 (cm-foreign.sh loads it beside
 * rxdp's with RXDP_RDMA_CORE_CM, and tests/verbs' stand-in libibverbs with
 * RXDP_RDMA_CORE): event channels with an eventfd, ids of zeroes, and every
 * other call rxdp's librdmacm hands to rdma-core answering with a value and
 * an errno derived from its name (tests/verbs/fake_rdmacore.h), so that
 * cm_foreign sees which function a call reached and that its errno came
 * back. rdma_listen() and rdma_get_cm_event() (fake_rdmacm_event.c) make
 * one connection request for the listener. Versioned with rxdp's
 * librdmacm.map, which has rdma-core's nodes; defined without prototypes,
 * as tests/verbs/fake_rdmacore.c explains.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>

#include "../verbs/fake_rdmacore.h"

struct fake_channel {
	int fd; /* struct rdma_event_channel */
};

struct fake_channel *rdma_create_event_channel(void)
{
	struct fake_channel *ch = calloc(1, sizeof(*ch));

	if (ch)
		ch->fd = eventfd(0, EFD_CLOEXEC);
	return ch;
}

void rdma_destroy_event_channel(struct fake_channel *ch)
{
}

/* fake_rdmacm_event.c's answers too */
long fake_answer(const char *fn);

long fake_answer(const char *fn)
{
	return fake_rdmacore_answer(fn);
}

/* clang-format off */
#define FAKE(fn) FAKE_RDMACORE(fn)
FAKE(rdma_destroy_id) FAKE(rdma_bind_addr) FAKE(rdma_resolve_addr)
FAKE(rdma_resolve_route) FAKE(rdma_init_qp_attr) FAKE(rdma_create_qp_ex)
FAKE(rdma_destroy_qp) FAKE(rdma_create_srq_ex) FAKE(rdma_destroy_srq)
FAKE(rdma_connect) FAKE(rdma_accept) FAKE(rdma_reject)
FAKE(rdma_reject_ece) FAKE(rdma_notify) FAKE(rdma_disconnect)
FAKE(rdma_establish) FAKE(rdma_join_multicast_ex) FAKE(rdma_leave_multicast)
FAKE(rdma_set_option) FAKE(rdma_migrate_id) FAKE(rdma_ack_cm_event)
FAKE(rdma_set_local_ece) FAKE(rdma_get_remote_ece)
	/* clang-format on */
