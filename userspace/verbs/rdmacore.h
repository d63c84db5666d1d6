/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdma-core beside rxdp (rdmacore.c): the host's own libibverbs.so.1 and the
 * devices it lists (mlx5, Soft-RoCE, ...) next to rxdpd's, in one process.
 *
 * Every exported verb that takes a device or an object first asks whether
 * it is rdma-core's (rxdp_foreign_*), and if so hands the call to rdma-core
 * unchanged (RXDP_SYS / RXDP_SYS_VOID). Verbs that programs call inline
 * through the context's ops (posts, polls, the extended verbs) reach
 * rdma-core's provider directly. Until rdma-core's library is loaded, which
 * happens only where the kernel has RDMA devices, nothing is foreign.
 */
#ifndef RXDP_VERBS_RDMACORE_H
#define RXDP_VERBS_RDMACORE_H

#include <infiniband/verbs.h>
#include <stdbool.h>

#include "common/sysdl.h"

struct rxdp_device;

/* Every verb handed to rdma-core, with the version node it is taken from */
#define RXDP_SYS_VERBS(X)                             \
	X(ibv_get_device_list, "IBVERBS_1.1")         \
	X(ibv_free_device_list, "IBVERBS_1.1")        \
	X(ibv_get_device_name, "IBVERBS_1.1")         \
	X(ibv_get_device_guid, "IBVERBS_1.1")         \
	X(ibv_get_device_index, "IBVERBS_1.9")        \
	X(ibv_open_device, "IBVERBS_1.1")             \
	X(ibv_close_device, "IBVERBS_1.1")            \
	X(ibv_import_device, "IBVERBS_1.10")          \
	X(ibv_fork_init, "IBVERBS_1.1")               \
	X(ibv_dontfork_range, "IBVERBS_1.1")          \
	X(ibv_dofork_range, "IBVERBS_1.1")            \
	X(ibv_query_device, "IBVERBS_1.1")            \
	X(ibv_query_port, "IBVERBS_1.1")              \
	X(ibv_query_gid, "IBVERBS_1.1")               \
	X(_ibv_query_gid_ex, "IBVERBS_1.11")          \
	X(_ibv_query_gid_table, "IBVERBS_1.11")       \
	X(ibv_query_gid_type, "IBVERBS_PRIVATE_34")   \
	X(ibv_query_pkey, "IBVERBS_1.1")              \
	X(ibv_get_pkey_index, "IBVERBS_1.5")          \
	X(ibv_resolve_eth_l2_from_gid, "IBVERBS_1.1") \
	X(ibv_get_async_event, "IBVERBS_1.1")         \
	X(ibv_ack_async_event, "IBVERBS_1.1")         \
	X(ibv_create_comp_channel, "IBVERBS_1.0")     \
	X(ibv_destroy_comp_channel, "IBVERBS_1.0")    \
	X(ibv_get_cq_event, "IBVERBS_1.1")            \
	X(ibv_ack_cq_events, "IBVERBS_1.1")           \
	X(ibv_alloc_pd, "IBVERBS_1.1")                \
	X(ibv_dealloc_pd, "IBVERBS_1.1")              \
	X(ibv_import_pd, "IBVERBS_1.10")              \
	X(ibv_unimport_pd, "IBVERBS_1.10")            \
	X(ibv_reg_mr, "IBVERBS_1.1")                  \
	X(ibv_reg_mr_iova, "IBVERBS_1.7")             \
	X(ibv_reg_mr_iova2, "IBVERBS_1.8")            \
	X(ibv_reg_dmabuf_mr, "IBVERBS_1.12")          \
	X(ibv_rereg_mr, "IBVERBS_1.1")                \
	X(ibv_dereg_mr, "IBVERBS_1.1")                \
	X(ibv_import_mr, "IBVERBS_1.10")              \
	X(ibv_unimport_mr, "IBVERBS_1.10")            \
	X(ibv_import_dm, "IBVERBS_1.13")              \
	X(ibv_unimport_dm, "IBVERBS_1.13")            \
	X(ibv_create_cq, "IBVERBS_1.1")               \
	X(ibv_resize_cq, "IBVERBS_1.1")               \
	X(ibv_destroy_cq, "IBVERBS_1.1")              \
	X(ibv_create_srq, "IBVERBS_1.1")              \
	X(ibv_modify_srq, "IBVERBS_1.1")              \
	X(ibv_query_srq, "IBVERBS_1.1")               \
	X(ibv_destroy_srq, "IBVERBS_1.1")             \
	X(ibv_create_qp, "IBVERBS_1.1")               \
	X(ibv_modify_qp, "IBVERBS_1.1")               \
	X(ibv_query_qp, "IBVERBS_1.1")                \
	X(ibv_destroy_qp, "IBVERBS_1.1")              \
	X(ibv_qp_to_qp_ex, "IBVERBS_1.6")             \
	X(ibv_query_ece, "IBVERBS_1.10")              \
	X(ibv_set_ece, "IBVERBS_1.10")                \
	X(ibv_query_qp_data_in_order, "IBVERBS_1.14") \
	X(ibv_attach_mcast, "IBVERBS_1.1")            \
	X(ibv_detach_mcast, "IBVERBS_1.1")            \
	X(ibv_create_ah, "IBVERBS_1.1")               \
	X(ibv_create_ah_from_wc, "IBVERBS_1.1")       \
	X(ibv_init_ah_from_wc, "IBVERBS_1.1")         \
	X(ibv_destroy_ah, "IBVERBS_1.1")

/*
 * rdma-core's entry points, typed as ours (each file that uses one sees
 * this library's prototype of it). The p_ prefix keeps the names clear of
 * the function-like macros <infiniband/verbs.h> defines over some verbs.
 */
struct rxdp_sys_verbs {
#define RXDP_SYS_MEMBER(fn, ver) void *p_##fn;
	RXDP_SYS_VERBS(RXDP_SYS_MEMBER)
#undef RXDP_SYS_MEMBER
};

extern struct rxdp_sys_verbs rxdp_sys;
extern int rxdp_sys_on; /* rdma-core's library is loaded and complete */

/* Load rdma-core's library if the kernel has RDMA devices and it is not yet */
void rxdp_sys_load(void);
/* rdma-core's errno (its own libc's) made this thread's errno */
void rxdp_sys_errno(void);

bool rxdp_dev_ours(const struct ibv_device *device);

static inline bool rxdp_sys_loaded(void)
{
	return __atomic_load_n(&rxdp_sys_on, __ATOMIC_ACQUIRE);
}

/* Is this device, or this context, rdma-core's? */
static inline bool rxdp_foreign_dev(const struct ibv_device *device)
{
	return rxdp_sys_loaded() && device && !rxdp_dev_ours(device);
}

static inline bool rxdp_foreign_ctx(const struct ibv_context *ctx)
{
	return rxdp_sys_loaded() && ctx && !rxdp_dev_ours(ctx->device);
}

/* An object of either kind: every verbs object names its context */
#define rxdp_foreign(obj) ((obj) && rxdp_foreign_ctx((obj)->context))

/* rdma-core's FN(...), its errno taken: the value of the call */
#define RXDP_SYS(fn, ...) \
	RXDP_SYSDL_CALL(rxdp_sys, rxdp_sys_errno, fn, __VA_ARGS__)
#define RXDP_SYS_VOID(fn, ...) \
	RXDP_SYSDL_VOID(rxdp_sys, rxdp_sys_errno, fn, __VA_ARGS__)

#endif
