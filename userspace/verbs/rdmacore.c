// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma-core beside rxdp. This library owns the name libibverbs.so.1 in the
 * program's namespace, so the host's own libibverbs (rdma-core's) is loaded
 * by its real path into a link-map namespace of its own (dlmopen with
 * LM_ID_NEWLM): there the providers it loads (libmlx5, librxe, ...) bind to
 * it, not to this library, and it lists the kernel's RDMA devices as it
 * would in any program. ibv_get_device_list() lists them before rxdpd's,
 * and each verb on one of them or on what was made from them goes through
 * the ops table filled here (ops.h, rxdp_sys_ops).
 *
 * Loaded only once the kernel has RDMA devices (/sys/class/infiniband_verbs
 * has an entry), so on a host without any nothing changes. RXDP_RDMA_CORE
 * names the library to load instead of the one found at build time, or
 * turns this off with "0" (common/sysdl.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include "common/sysdl.h"
#include "verbs/provider.h"
#include "verbs/ops.h"
#include "verbs/rdmacore.h"

struct rxdp_sys_verbs rxdp_sys;
struct verbs_ops rxdp_sys_ops;
int rxdp_sys_on;

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int sys_given_up; /* said why once; never tried again */
static int *(*sys_errno_location)(void);

void rxdp_sys_errno(void)
{
	if (sys_errno_location)
		errno = *sys_errno_location();
}

/* Why rdma-core's devices are not listed, once a process */
static void give_up(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void give_up(const char *fmt, ...)
{
	va_list ap;

	sys_given_up = 1;
	va_start(ap, fmt);
	rxdp_log_vprint(RXDP_LOG_WARN, fmt, ap);
	va_end(ap);
}

static void sys_open(const char *path)
{
	const char *missing = NULL, *why = NULL;
	struct rxdp_sys_verbs v;
	struct verbs_ops o;
	void *h;

	if (path[0] == '/' && rxdp_sysdl_is_self(path, (void *)sys_open)) {
		give_up("rxdp: %s is rxdp's own library, not rdma-core's; the "
			"kernel's RDMA devices are not listed\n",
			path);
		return;
	}
	h = rxdp_sysdl_open(path, path, &why);
	if (!h) {
		give_up("rxdp: cannot load rdma-core's libibverbs: %s; the "
			"kernel's RDMA devices are not listed\n",
			why);
		return;
	}
#define RXDP_SYS_RESOLVE(fn, ver)       \
	v.p_##fn = dlvsym(h, #fn, ver); \
	if (!v.p_##fn && !missing)      \
		missing = #fn "@" ver;
	RXDP_SYS_VERBS(RXDP_SYS_RESOLVE)
#undef RXDP_SYS_RESOLVE
#define RXDP_SYS_OP(op, fn, ver)                      \
	o.op = (__typeof__(o.op))dlvsym(h, #fn, ver); \
	if (!o.op && !missing)                        \
		missing = #fn "@" ver;
	VERBS_OPS(RXDP_SYS_OP)
#undef RXDP_SYS_OP
	o.take_errno = rxdp_sys_errno;
	sys_errno_location = rxdp_sysdl_errno(h);
	if (missing || !sys_errno_location) {
		give_up("rxdp: %s lacks %s; the kernel's RDMA devices are not "
			"listed\n",
			path, missing ? missing : "libc's __errno_location");
		sys_errno_location = NULL;
		return;
	}
	rxdp_sys = v;
	rxdp_sys_ops = o;
	__atomic_store_n(&rxdp_sys_on, 1, __ATOMIC_RELEASE);
	pr_debug("rdma-core's libibverbs loaded from %s\n", path);
}

void rxdp_sys_load(void)
{
	const char *path;

	if (rxdp_sys_loaded() ||
	    __atomic_load_n(&sys_given_up, __ATOMIC_RELAXED))
		return;
	path = rxdp_sysdl_verbs_path();
	if (!path)
		return;
	pthread_mutex_lock(&sys_lock);
	if (!rxdp_sys_loaded() && !sys_given_up)
		sys_open(path);
	pthread_mutex_unlock(&sys_lock);
}
