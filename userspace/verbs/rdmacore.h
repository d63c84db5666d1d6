/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdma-core beside rxdp (rdmacore.c): the host's own libibverbs.so.1 and the
 * devices it lists (mlx5, Soft-RoCE, ...) next to rxdpd's, in one process.
 *
 * The verbs that take a device, a context or an object reach rdma-core's
 * through its instance of the ops table (ops.h: rxdp_sys_ops); the few
 * that take none (the device list, fork, importing a device) call it here
 * (RXDP_SYS). Verbs that programs call inline through the context's ops
 * (posts, polls, the extended verbs) reach rdma-core's provider directly.
 * Until rdma-core's library is loaded, which happens only where the kernel
 * has RDMA devices, every device is rxdp's.
 */
#ifndef RXDP_VERBS_RDMACORE_H
#define RXDP_VERBS_RDMACORE_H

#include <infiniband/verbs.h>
#include <stdbool.h>

#include "common/sysdl.h"

/* The verbs handed to rdma-core that take no device, context or object */
#define RXDP_SYS_VERBS(X)                      \
	X(ibv_get_device_list, "IBVERBS_1.1")  \
	X(ibv_free_device_list, "IBVERBS_1.1") \
	X(ibv_import_device, "IBVERBS_1.10")   \
	X(ibv_fork_init, "IBVERBS_1.1")        \
	X(ibv_dontfork_range, "IBVERBS_1.1")   \
	X(ibv_dofork_range, "IBVERBS_1.1")

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

static inline bool rxdp_sys_loaded(void)
{
	return __atomic_load_n(&rxdp_sys_on, __ATOMIC_ACQUIRE);
}

/* rdma-core's FN(...), its errno taken: the value of the call */
#define RXDP_SYS(fn, ...) \
	RXDP_SYSDL_CALL(rxdp_sys, rxdp_sys_errno, fn, __VA_ARGS__)
#define RXDP_SYS_VOID(fn, ...) \
	RXDP_SYSDL_VOID(rxdp_sys, rxdp_sys_errno, fn, __VA_ARGS__)

#endif
