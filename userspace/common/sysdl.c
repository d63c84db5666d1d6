// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rdma-core's libraries loaded beside rxdp's (sysdl.h) */
#include <dirent.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sysdl.h"

/* Where the build found rdma-core's libraries ("" where it did not) */
#ifndef RXDP_RDMA_CORE_VERBS
#define RXDP_RDMA_CORE_VERBS ""
#endif
#ifndef RXDP_RDMA_CORE_CM
#define RXDP_RDMA_CORE_CM ""
#endif
#define SYSFS_VERBS "/sys/class/infiniband_verbs"

/* Does the kernel have an RDMA device (a uverbs node) at all? */
static bool kernel_has_rdma(void)
{
	struct dirent *e;
	bool any = false;
	DIR *d;

	d = opendir(SYSFS_VERBS);
	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

/*
 * RXDP_RDMA_CORE names the library whatever the kernel has ("0": none);
 * otherwise the build's, once the kernel has an RDMA device
 */
const char *rxdp_sysdl_verbs_path(void)
{
	/* never in a set-user-ID program: it names code to load */
	const char *env = secure_getenv(RXDP_RDMA_CORE_ENV);

	if (env && env[0])
		return strcmp(env, "0") ? env : NULL;
	return kernel_has_rdma() ? RXDP_RDMA_CORE_VERBS : NULL;
}

const char *rxdp_sysdl_cm_path(void)
{
	const char *env = secure_getenv(RXDP_RDMA_CORE_CM_ENV);

	return env && env[0] ? env : RXDP_RDMA_CORE_CM;
}

bool rxdp_sysdl_is_self(const char *path, const void *self)
{
	struct stat a, b;
	Dl_info info;

	if (!dladdr(self, &info) || !info.dli_fname ||
	    stat(info.dli_fname, &a) || stat(path, &b))
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The first loaded segment of the object loaded as path, if any */
struct sysdl_find {
	const char *path;
	const void *addr;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sysdl_find *f = data;

	if (!info->dlpi_name || strcmp(info->dlpi_name, f->path))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			f->addr = (const void *)(info->dlpi_addr +
						 info->dlpi_phdr[i].p_vaddr);
			return 1;
		}
	}
	return 0;
}

/*
 * The namespace (not the program's) where path is loaded, if any: glibc's
 * dl_iterate_phdr() walks every namespace. (Asking dlmopen(RTLD_NOLOAD)
 * namespace by namespace would not do: one that does not exist leaves
 * the loader's lock held, and every other thread's dlopen hangs.)
 */
static bool loaded_in(const char *path, Lmid_t *lm)
{
	struct sysdl_find f = { .path = path };
	struct link_map *map = NULL;
	Dl_info info;

	dl_iterate_phdr(find_loaded, &f);
	return f.addr &&
	       dladdr1(f.addr, &info, (void **)&map, RTLD_DL_LINKMAP) && map &&
	       !dlinfo(map, RTLD_DI_LMID, lm) && *lm != LM_ID_BASE;
}

void *rxdp_sysdl_open(const char *verbs, const char *path, const char **why)
{
	Lmid_t lm;
	void *h;

	if (verbs[0] != '/' || path[0] != '/') {
		*why = "not found when rxdp was built (set " RXDP_RDMA_CORE_ENV
		       " to libibverbs.so.1's path)";
		return NULL;
	}
	if (!loaded_in(verbs, &lm)) {
		/* a new namespace, where its libibverbs comes first */
		h = dlmopen(LM_ID_NEWLM, verbs, RTLD_NOW | RTLD_LOCAL);
		if (!h || dlinfo(h, RTLD_DI_LMID, &lm)) {
			*why = dlerror();
			return NULL;
		}
	}
	h = dlmopen(lm, path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		*why = dlerror();
	return h;
}

int *(*rxdp_sysdl_errno(void *handle))(void)
{
	void *libc = NULL;
	Lmid_t lm;

	if (!dlinfo(handle, RTLD_DI_LMID, &lm))
		libc = dlmopen(lm, "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	return libc ? (int *(*)(void))dlsym(libc, "__errno_location") : NULL;
}
