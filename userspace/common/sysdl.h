/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdma-core's own libraries beside rxdp's (verbs/rdmacore.c,
 * rdmacm/sys.c). rxdp's libibverbs.so.1 and librdmacm.so.1 own those names
 * in the program's namespace, so rdma-core's are loaded by their real
 * paths into a link-map namespace of their own (dlmopen), one for both:
 * there rdma-core's librdmacm and providers bind to rdma-core's
 * libibverbs. That namespace has its own libc, so its errno is its own.
 */
#ifndef RXDP_SYSDL_H
#define RXDP_SYSDL_H

#include <dlfcn.h>
#include <stdbool.h>

/* Another libibverbs path to load, or "0": none; and another librdmacm */
#define RXDP_RDMA_CORE_ENV "RXDP_RDMA_CORE"
#define RXDP_RDMA_CORE_CM_ENV "RXDP_RDMA_CORE_CM"

/* rdma-core's libibverbs path to load, or NULL: not now (see sysdl.c) */
const char *rxdp_sysdl_verbs_path(void);
/* rdma-core's librdmacm path ("" where the build found none) */
const char *rxdp_sysdl_cm_path(void);
/*
 * PATH loaded into the namespace that holds rdma-core's libibverbs
 * (VERBS, loaded there first if no namespace holds it yet); NULL with a
 * reason in *why (dlerror()'s or this function's).
 */
void *rxdp_sysdl_open(const char *verbs, const char *path, const char **why);
/* Is PATH the same file as the library that holds SELF? */
bool rxdp_sysdl_is_self(const char *path, const void *self);
/* The errno of the namespace that holds HANDLE (its libc's), or NULL */
int *(*rxdp_sysdl_errno(void *handle))(void);

/*
 * rdma-core's fn(...) through table.p_fn, typed as this library's fn, then
 * take_errno() (its errno made ours): the value of the call
 */
#define RXDP_SYSDL_CALL(table, take_errno, fn, ...)                     \
	({                                                              \
		__auto_type r_ =                                        \
			((__typeof__(&fn))(table).p_##fn)(__VA_ARGS__); \
		take_errno();                                           \
		r_;                                                     \
	})

#define RXDP_SYSDL_VOID(table, take_errno, fn, ...)             \
	do {                                                    \
		((__typeof__(&fn))(table).p_##fn)(__VA_ARGS__); \
		take_errno();                                   \
	} while (0)

#endif
