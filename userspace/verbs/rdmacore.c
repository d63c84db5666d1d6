// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma-core beside rxdp. This library owns the name libibverbs.so.1 in the
 * program's namespace, so the host's own libibverbs (rdma-core's) is loaded
 * by its real path into a link-map namespace of its own (dlmopen with
 * LM_ID_NEWLM): there the providers it loads (libmlx5, librxe, ...) bind to
 * it, not to this library, and it lists the kernel's RDMA devices as it
 * would in any program. ibv_get_device_list() lists them after rxdpd's, and
 * each verb on one of them or on what was made from them is handed to it
 * (rdmacore.h).
 *
 * Loaded only once the kernel has RDMA devices (/sys/class/infiniband_verbs
 * has an entry), so on a host without any nothing changes. RXDP_RDMA_CORE
 * names the library to load instead of the one found at build time, or
 * turns this off with "0".
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs/provider.h"
#include "verbs/rdmacore.h"

#ifndef RXDP_RDMA_CORE_LIB
#define RXDP_RDMA_CORE_LIB ""
#endif
#define RXDP_RDMA_CORE_ENV "RXDP_RDMA_CORE"
#define RXDP_SYSFS_VERBS "/sys/class/infiniband_verbs"

struct rxdp_sys_verbs rxdp_sys;
int rxdp_sys_on;

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int sys_given_up; /* said why once; never tried again */
static int *(*sys_errno_location)(void);

void rxdp_sys_errno(void)
{
	if (sys_errno_location)
		errno = *sys_errno_location();
}

/* Does the kernel have an RDMA device (a uverbs node) at all? */
static bool kernel_has_rdma(void)
{
	struct dirent *e;
	bool any = false;
	DIR *d;

	d = opendir(RXDP_SYSFS_VERBS);
	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

/* Is PATH this very library (an install that put rxdp in rdma-core's place)? */
static bool is_this_library(const char *path)
{
	struct stat self, other;
	Dl_info info;

	if (!dladdr((void *)is_this_library, &info) || !info.dli_fname ||
	    stat(info.dli_fname, &self) || stat(path, &other))
		return false;
	return self.st_dev == other.st_dev && self.st_ino == other.st_ino;
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
	const char *missing = NULL;
	struct rxdp_sys_verbs v;
	void *h, *libc;
	Lmid_t lm;

	if (path[0] != '/') {
		give_up("rxdp: rdma-core's libibverbs.so.1 was not found when "
			"rxdp was built; the kernel's RDMA devices are not "
			"listed (set " RXDP_RDMA_CORE_ENV " to its path)\n");
		return;
	}
	if (is_this_library(path)) {
		give_up("rxdp: %s is rxdp's own library, not rdma-core's; the "
			"kernel's RDMA devices are not listed\n",
			path);
		return;
	}
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		give_up("rxdp: cannot load rdma-core's libibverbs: %s; the "
			"kernel's RDMA devices are not listed\n",
			dlerror());
		return;
	}
#define RXDP_SYS_RESOLVE(fn, ver)       \
	v.p_##fn = dlvsym(h, #fn, ver); \
	if (!v.p_##fn && !missing)      \
		missing = #fn "@" ver;
	RXDP_SYS_VERBS(RXDP_SYS_RESOLVE)
#undef RXDP_SYS_RESOLVE
	/* its errno is its own libc's, which the namespace loaded again */
	libc = NULL;
	if (!dlinfo(h, RTLD_DI_LMID, &lm))
		libc = dlmopen(lm, "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (libc)
		sys_errno_location = dlsym(libc, "__errno_location");
	if (missing || !sys_errno_location) {
		give_up("rxdp: %s lacks %s; the kernel's RDMA devices are not "
			"listed\n",
			path, missing ? missing : "libc's __errno_location");
		dlclose(h);
		return;
	}
	rxdp_sys = v;
	__atomic_store_n(&rxdp_sys_on, 1, __ATOMIC_RELEASE);
	pr_debug("rdma-core's libibverbs loaded from %s\n", path);
}

void rxdp_sys_load(void)
{
	const char *path = getenv(RXDP_RDMA_CORE_ENV);
	bool forced = path && path[0];

	if (rxdp_sys_loaded() ||
	    __atomic_load_n(&sys_given_up, __ATOMIC_RELAXED))
		return;
	if (forced && !strcmp(path, "0"))
		return;
	if (!forced && !kernel_has_rdma())
		return;
	pthread_mutex_lock(&sys_lock);
	if (!rxdp_sys_loaded() && !sys_given_up)
		sys_open(forced ? path : RXDP_RDMA_CORE_LIB);
	pthread_mutex_unlock(&sys_lock);
}
