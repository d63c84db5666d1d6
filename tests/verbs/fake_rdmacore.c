// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A stand-in for rdma-core's libibverbs.so.1 (test_verbs_foreign loads it
 * beside rxdp's with RXDP_RDMA_CORE): one device, one context, and every
 * other verb rxdp's library hands to rdma-core answering with a value and
 * an errno derived from its own name (fake_rdmacore_mark()), so the test
 * sees which function of this library a call reached and that its errno
 * (this namespace's libc's) came back. Versioned with rxdp's own
 * libibverbs.map, which has rdma-core's nodes.
 *
 * The verbs are defined without prototypes (no <infiniband/verbs.h>): at
 * the ABI level each takes whatever it is called with and returns a long
 * in the return register, which every caller reads as its return type.
 */
#include <errno.h>
#include <stddef.h>

#include "fake_rdmacore.h"

/* The device and the context: an ibv_context begins with its device */
static char fake_dev[1024];
static struct {
	void *device;
	char rest[4096];
} fake_ctx = { .device = fake_dev };
static void *fake_list[] = { fake_dev, NULL };

void **ibv_get_device_list(int *num)
{
	if (num)
		*num = 1;
	return fake_list;
}

void ibv_free_device_list(void **list)
{
}

void *ibv_open_device(void *device)
{
	if (device != fake_dev) {
		errno = ENODEV;
		return NULL;
	}
	return &fake_ctx;
}

/* clang-format off */
#define FAKE(fn) FAKE_RDMACORE(fn)
FAKE(ibv_get_device_name) FAKE(ibv_get_device_guid)
FAKE(ibv_get_device_index) FAKE(ibv_close_device) FAKE(ibv_import_device)
FAKE(ibv_fork_init) FAKE(ibv_dontfork_range) FAKE(ibv_dofork_range)
FAKE(ibv_query_device) FAKE(ibv_query_port) FAKE(ibv_query_gid)
FAKE(_ibv_query_gid_ex) FAKE(_ibv_query_gid_table) FAKE(ibv_query_gid_type)
FAKE(ibv_query_pkey) FAKE(ibv_get_pkey_index)
FAKE(ibv_resolve_eth_l2_from_gid) FAKE(ibv_get_async_event)
FAKE(ibv_ack_async_event) FAKE(ibv_create_comp_channel)
FAKE(ibv_destroy_comp_channel) FAKE(ibv_get_cq_event) FAKE(ibv_ack_cq_events)
FAKE(ibv_alloc_pd) FAKE(ibv_dealloc_pd) FAKE(ibv_import_pd)
FAKE(ibv_unimport_pd) FAKE(ibv_reg_mr) FAKE(ibv_reg_mr_iova)
FAKE(ibv_reg_mr_iova2) FAKE(ibv_reg_dmabuf_mr) FAKE(ibv_rereg_mr)
FAKE(ibv_dereg_mr) FAKE(ibv_import_mr) FAKE(ibv_unimport_mr)
FAKE(ibv_import_dm) FAKE(ibv_unimport_dm) FAKE(ibv_create_cq)
FAKE(ibv_resize_cq) FAKE(ibv_destroy_cq) FAKE(ibv_create_srq)
FAKE(ibv_modify_srq) FAKE(ibv_query_srq) FAKE(ibv_destroy_srq)
FAKE(ibv_create_qp) FAKE(ibv_modify_qp) FAKE(ibv_query_qp)
FAKE(ibv_destroy_qp) FAKE(ibv_qp_to_qp_ex) FAKE(ibv_query_ece)
FAKE(ibv_set_ece) FAKE(ibv_query_qp_data_in_order) FAKE(ibv_attach_mcast)
FAKE(ibv_detach_mcast) FAKE(ibv_create_ah) FAKE(ibv_create_ah_from_wc)
FAKE(ibv_init_ah_from_wc) FAKE(ibv_destroy_ah)
	/* clang-format on */
