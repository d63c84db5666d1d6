// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Registered memory shared with rxdpd, so that its engine moves payload with
 * a memcpy, as an HCA's DMA does, instead of a system call on this process's
 * /proc/self/mem (engine/mem.c).
 *
 * ibv_reg_mr re-backs the pages of the region with a memfd: the bytes are
 * copied into it and it is mapped over them (MAP_SHARED, MAP_FIXED), and
 * rxdpd maps the same memfd (RXDP_CTL_MEM_SHARE). Such a range is an
 * extent: process-wide, shared by every MR over its pages (in every
 * context), given back as ordinary private memory when the last of them is
 * deregistered. What it keeps true:
 *
 * - No write is lost while the pages change hands. Other threads may write
 *   the region, or its neighbours on the same pages, meanwhile: the range
 *   is write-protected with a userfaultfd (reads go on) while the bytes are
 *   copied, and a writer waits in the kernel until the new mapping is in
 *   place, then writes there. Where the kernel offers only user-mode
 *   faults to this user (vm.unprivileged_userfaultfd = 0), a system call
 *   that writes into the range during those microseconds fails with
 *   EFAULT instead of waiting. Deregistration does the same the other way
 *   (shmem write protection: Linux 5.19); before 5.19 the range becomes a
 *   private mapping of the memfd instead, which loses nothing either.
 * - fork(): the child gets a private copy of the registered pages, made
 *   before fork() returns in it, and the parent keeps its own, which rxdpd
 *   goes on reading and writing, as a ConnectX on a kernel that copies
 *   pinned pages at fork (ibv_fork_init() and RDMAV_FORK_SAFE change
 *   nothing, as there). Writes the parent's other threads (or rxdpd) make
 *   during that copy may show in the child.
 * - munmap() or a new mmap() over a registered range leaves the MR on the
 *   old pages (rxdpd still maps them), as on pinned memory. Registering
 *   the new memory finds the old extent gone and makes a new one; the old
 *   MR then follows the process's mapping (through the system call path).
 * - madvise(MADV_DONTNEED) keeps the contents of a registered range (they
 *   are the memfd's), where a ConnectX gives the process zeroed pages and
 *   goes on using the old ones: with either, memory must be deregistered
 *   before it is given back.
 *
 * Memory that cannot be re-backed this way stays as it is and rxdpd
 * reaches it through /proc/self/mem: shared mappings (files, SysV and POSIX
 * shared memory), writable private file mappings, hugetlb pages, the main
 * stack, and everything where userfaultfd is not allowed (seccomp).
 * RXDP_SHARE_MEM=0 turns re-backing off; RXDP_SHARE_MEM=nowp re-backs without
 * holding writers (unsafe: for tests/rc/memrules.sh, which shows that writes
 * are then lost).
 *
 * One lock for the registry, held across its requests to rxdpd (and across
 * fork(), so that the child never sees a range half moved).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "verbs/provider.h"

/* One range of this process re-backed by a memfd */
struct regmem_ext {
	uintptr_t start, end; /* page-aligned */
	int fd;
	dev_t dev;
	ino_t ino;
	unsigned int refs; /* MRs (of every context) over it */
	bool live; /* still what maps [start, end) (else: orphaned) */
	struct regmem_share *shares;
};

/* A context rxdpd was told of an extent on */
struct regmem_share {
	struct regmem_share *next;
	struct rxdp_context *ctx;
	uint32_t handle; /* rxdpd's */
	unsigned int refs; /* the context's MRs over the extent */
};

/* What an MR holds */
struct regmem_ref {
	uint32_t n;
	struct regmem_ext *ext[];
};

/* A line of /proc/self/maps */
struct vma {
	uintptr_t start, end;
	int prot;
	bool priv;
	bool anon; /* no file behind it (the heap, anonymous mmaps) */
	bool special; /* the stack, the vDSO and the like */
	dev_t dev;
	ino_t ino;
	uint64_t off;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static struct regmem_ext **exts; /* every extent, live or orphaned */
static size_t nexts, cap_exts;
static int reg_off; /* RXDP_SHARE_MEM=0 */
static int reg_nowp; /* RXDP_SHARE_MEM=nowp */
static long pagesz;

/*
 * The mapping calls, straight to the kernel: libraries that hook libc's
 * (UCX's memory hooks, its registration cache) must not take the pages
 * changing hands under the same addresses for memory the program unmapped
 */
static void *sys_mmap(void *a, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

static void *sys_mremap(void *old, size_t len, void *to)
{
	return (void *)syscall(SYS_mremap, old, len, len,
			       MREMAP_MAYMOVE | MREMAP_FIXED, to);
}

static int sys_munmap(void *a, size_t len)
{
	return (int)syscall(SYS_munmap, a, len);
}

static int sys_mprotect(void *a, size_t len, int prot)
{
	return (int)syscall(SYS_mprotect, a, len, prot);
}

/* --- /proc/self/maps ------------------------------------------------------ */

/*
 * The mappings over [s, e): as many as *n allows (*n updated), in address
 * order. 0, or -ENOMEM if there were more.
 */
static int vmas_read(uintptr_t s, uintptr_t e, struct vma **out, size_t *n)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct vma *v = NULL;
	size_t cap = 0, k = 0;
	char line[512];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off, ino;
		unsigned int maj, min;
		char perm[5], path[256] = "";
		struct vma *t;

		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %255s", &a, &b,
			   perm, &off, &maj, &min, &ino, path) < 7)
			continue;
		if (!strchr(line, '\n')) { /* a long path: skip the rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (b <= s)
			continue;
		if (a >= e)
			break;
		if (k == cap) {
			cap = cap ? cap * 2 : 8;
			t = realloc(v, cap * sizeof(*v));
			if (!t) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = t;
		}
		v[k] = (struct vma){
			.start = a,
			.end = b,
			.prot = (perm[0] == 'r' ? PROT_READ : 0) |
				(perm[1] == 'w' ? PROT_WRITE : 0) |
				(perm[2] == 'x' ? PROT_EXEC : 0),
			.priv = perm[3] == 'p',
			.anon = !ino && (!path[0] || !strcmp(path, "[heap]") ||
					 !strncmp(path, "[anon:", 6)),
			.dev = makedev(maj, min),
			.ino = ino,
			.off = off,
		};
		v[k].special = !ino && !v[k].anon;
		k++;
	}
	fclose(f);
	*out = v;
	*n = k;
	return 0;
}

/* [s, e) wholly mapped, readable (and writable if write)? */
static bool vmas_cover(const struct vma *v, size_t n, uintptr_t s, uintptr_t e,
		       bool write)
{
	uintptr_t at = s;

	for (size_t i = 0; i < n && at < e; i++) {
		if (v[i].start > at || !(v[i].prot & PROT_READ) ||
		    (write && !(v[i].prot & PROT_WRITE)))
			return false;
		at = v[i].end;
	}
	return at >= e;
}

/* Is [s, e) (inside v[i]) the extent's memfd, at the right offset? */
static bool vma_is_ext(const struct vma *v, const struct regmem_ext *x)
{
	return !v->priv && v->dev == x->dev && v->ino == x->ino &&
	       v->off == v->start - x->start;
}

/* --- moving pages -------------------------------------------------------- */

static int uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	/* a user without the right still has user-mode faults (5.11+) */
	if (fd < 0 && errno == EPERM)
		fd = (int)syscall(SYS_userfaultfd,
				  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	return fd;
}

/*
 * A userfaultfd that write-protects [s, s+len): writers wait until
 * uffd_release(). shmem: the range is a shared mapping. -1 (errno) if the
 * kernel cannot.
 */
static int uffd_protect(uintptr_t s, size_t len, bool shmem)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = shmem ? UFFD_FEATURE_WP_HUGETLBFS_SHMEM : 0,
	};
	struct uffdio_register reg = {
		.range = { .start = s, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { .start = s, .len = len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	int fd = uffd_open(), err;

	if (fd < 0)
		return -1;
	/*
	 * Write protection marks page table entries: every page gets one
	 * first (a read maps the zero page or the file's page), or a write to
	 * a page never touched would not wait
	 */
	for (uintptr_t p = s; p < s + len; p += (uintptr_t)pagesz)
		(void)*(volatile const char *)p;
	if (ioctl(fd, UFFDIO_API, &api) ||
	    ioctl(fd, UFFDIO_REGISTER, &reg) ||
	    !(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT)) ||
	    ioctl(fd, UFFDIO_WRITEPROTECT, &wp)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Let the writers that wait on [s, s+len) go on (on the new mapping) */
static void uffd_release(int fd, uintptr_t s, size_t len)
{
	struct uffdio_range r = { .start = s, .len = len };

	if (fd < 0)
		return;
	/* every writer that faulted on the old mapping is queued by now */
	ioctl(fd, UFFDIO_WAKE, &r);
	close(fd);
}

/*
 * Re-back [s, e) (private, one protection) with a new memfd; x gets it.
 * 0 or -errno, the range untouched then.
 */
static int reback(uintptr_t s, uintptr_t e, int prot, struct regmem_ext *x)
{
	size_t len = e - s;
	int fd, uffd = -1, err;
	struct stat st;
	void *m;

	fd = memfd_create("rxdp-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	m = sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	/* a read-only range has no writers to hold */
	if ((prot & PROT_WRITE) && !reg_nowp &&
	    (uffd = uffd_protect(s, len, false)) < 0) {
		err = -errno;
		goto fail;
	}
	memcpy(m, (const void *)s, len);
	if ((prot != (PROT_READ | PROT_WRITE) && sys_mprotect(m, len, prot)) ||
	    sys_mremap(m, len, (void *)s) ==
		    MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	uffd_release(uffd, s, len);
	x->start = s;
	x->end = e;
	x->fd = fd;
	x->dev = st.st_dev;
	x->ino = st.st_ino;
	return 0;
fail:
	if (uffd >= 0) {
		struct uffdio_writeprotect wp = { .range = { s, len } };

		ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
		uffd_release(uffd, s, len);
	}
	sys_munmap(m, len);
	close(fd);
	return err;
}

/*
 * [s, e) of extent x (still its memfd, protection prot) becomes private
 * memory again. child: in a forked child, the only thread.
 */
static void privatize(const struct regmem_ext *x, uintptr_t s, uintptr_t e,
		      int prot, bool child)
{
	size_t len = e - s;
	int uffd = -1;
	void *t;

	if (!child && (prot & PROT_WRITE) && !reg_nowp &&
	    (uffd = uffd_protect(s, len, true)) < 0) {
		/*
		 * No shmem write protection (before 5.19): a private mapping of
		 * the memfd replaces the shared one in one step, and holds
		 * every byte written before it
		 */
		if (sys_mmap((void *)s, len, prot, MAP_PRIVATE | MAP_FIXED, x->fd,
			 (off_t)(s - x->start)) == MAP_FAILED)
			pr_warn("rxdp: cannot give back [%#lx, %#lx): %s\n",
				(unsigned long)s, (unsigned long)e,
				strerror(errno));
		return;
	}
	t = sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (t != MAP_FAILED) {
		memcpy(t, (const void *)s, len);
		if ((prot != (PROT_READ | PROT_WRITE) &&
		     sys_mprotect(t, len, prot)) ||
		    sys_mremap(t, len, (void *)s) == MAP_FAILED) {
			sys_munmap(t, len);
			t = MAP_FAILED;
		}
	}
	if (t == MAP_FAILED)
		pr_warn("rxdp: cannot give back [%#lx, %#lx): %s\n",
			(unsigned long)s, (unsigned long)e, strerror(errno));
	uffd_release(uffd, s, len);
}

/* Every piece of x that is still its memfd becomes private memory again */
static void ext_privatize(struct regmem_ext *x, bool child)
{
	struct vma *v;
	size_t n;

	if (x->fd < 0 || vmas_read(x->start, x->end, &v, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		uintptr_t s = v[i].start > x->start ? v[i].start : x->start;
		uintptr_t e = v[i].end < x->end ? v[i].end : x->end;

		if (vma_is_ext(&v[i], x))
			privatize(x, s, e, v[i].prot, child);
	}
	free(v);
}

/* --- the registry ---------------------------------------------------------- */

static void share_drop(struct regmem_ext *x, struct regmem_share *sh)
{
	struct rxdp_ctl_obj o = { .handle = sh->handle };

	for (struct regmem_share **p = &x->shares; *p; p = &(*p)->next)
		if (*p == sh) {
			*p = sh->next;
			break;
		}
	if (!sh->ctx->dead)
		obj_call(&sh->ctx->vctx.context, RXDP_CTL_MEM_UNSHARE, &o,
			 NULL, NULL);
	free(sh);
}

/* The range no longer maps x: rxdpd must stop taking it for the process's */
static void ext_orphan(struct regmem_ext *x)
{
	x->live = false;
	while (x->shares)
		share_drop(x, x->shares);
}

static void ext_put(struct regmem_ext *x)
{
	if (--x->refs)
		return;
	while (x->shares)
		share_drop(x, x->shares);
	ext_privatize(x, false);
	if (x->fd >= 0)
		close(x->fd);
	for (size_t i = 0; i < nexts; i++)
		if (exts[i] == x) {
			exts[i] = exts[--nexts];
			break;
		}
	free(x);
}

static int ext_add(struct regmem_ext *x)
{
	if (nexts == cap_exts) {
		size_t cap = cap_exts ? cap_exts * 2 : 16;
		struct regmem_ext **t = realloc(exts, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		exts = t;
		cap_exts = cap;
	}
	exts[nexts++] = x;
	return 0;
}

/* The live extent holding address a, or NULL */
static struct regmem_ext *ext_at(uintptr_t a)
{
	for (size_t i = 0; i < nexts; i++)
		if (exts[i]->live && a >= exts[i]->start && a < exts[i]->end)
			return exts[i];
	return NULL;
}

/* The start of the first live extent after a, or lim */
static uintptr_t ext_next(uintptr_t a, uintptr_t lim)
{
	for (size_t i = 0; i < nexts; i++)
		if (exts[i]->live && exts[i]->start > a &&
		    exts[i]->start < lim)
			lim = exts[i]->start;
	return lim;
}

/* Tell rxdpd of x for ctx (once per context; counted per MR) */
static void ext_share(struct regmem_ext *x, struct rxdp_context *ctx)
{
	struct rxdp_ctl_obj o = { 0 };
	struct regmem_share *sh;

	for (sh = x->shares; sh; sh = sh->next)
		if (sh->ctx == ctx) {
			sh->refs++;
			return;
		}
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return;
	o.addr = x->start;
	o.length = x->end - x->start;
	if (obj_call_fd(&ctx->vctx.context, RXDP_CTL_MEM_SHARE, &o, x->fd)) {
		/* rxdpd reaches it through the system call path, as before */
		pr_debug("rxdp: [%#lx, +%zu) not shared with rxdpd: %s\n",
			 (unsigned long)x->start, (size_t)(x->end - x->start),
			 strerror(errno));
		free(sh);
		return;
	}
	sh->ctx = ctx;
	sh->handle = o.handle;
	sh->refs = 1;
	sh->next = x->shares;
	x->shares = sh;
}

static void share_put(struct regmem_ext *x, struct rxdp_context *ctx)
{
	for (struct regmem_share *sh = x->shares; sh; sh = sh->next)
		if (sh->ctx == ctx) {
			if (!--sh->refs)
				share_drop(x, sh);
			return;
		}
}

/* In a forked child: its own copy of every registered page */
static void reg_child(void)
{
	for (size_t i = 0; i < nexts; i++) {
		struct regmem_ext *x = exts[i];
		struct regmem_share *sh, *next;

		ext_privatize(x, true);
		close(x->fd);
		x->fd = -1;
		x->live = false;
		for (sh = x->shares; sh; sh = next) {
			next = sh->next;
			free(sh);
		}
		x->shares = NULL;
	}
	pthread_mutex_unlock(&reg_lock);
}

static void reg_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void reg_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void reg_init(void)
{
	const char *e = getenv("RXDP_SHARE_MEM");

	reg_off = e && !strcmp(e, "0");
	reg_nowp = e && !strcmp(e, "nowp");
	pagesz = sysconf(_SC_PAGESIZE);
	pthread_atfork(reg_prepare, reg_parent, reg_child);
}

/*
 * Can [s, e), which v maps (from its start), be re-backed? Its first
 * mapping decides; *end gets where the run of mappings like it ends.
 */
static bool vma_run(const struct vma *v, size_t n, uintptr_t s, uintptr_t e,
		    uintptr_t *end, int *prot)
{
	size_t i = 0;

	*end = e;
	while (i < n && v[i].end <= s)
		i++;
	if (i == n)
		return false;
	*prot = v[i].prot;
	*end = v[i].end < e ? v[i].end : e;
	/*
	 * Private, and anonymous unless read-only (a file's private pages
	 * cannot be write-protected while they move)
	 */
	if (!v[i].priv || v[i].special || !(v[i].prot & PROT_READ) ||
	    (!v[i].anon && (v[i].prot & PROT_WRITE)))
		return false;
	while (++i < n && *end < e && v[i].start == *end &&
	       v[i].prot == *prot && v[i].priv && v[i].anon == v[i - 1].anon)
		*end = v[i].end < e ? v[i].end : e;
	return true;
}

int regmem_get(struct rxdp_context *ctx, uintptr_t addr, size_t len,
	       bool write, struct regmem_ref **out)
{
	struct regmem_ref *ref = NULL;
	uintptr_t s, e, at;
	struct vma *v = NULL;
	size_t n = 0;
	int err = 0;

	*out = NULL;
	pthread_once(&reg_once, reg_init);
	if (!len)
		return 0;
	s = addr & ~(uintptr_t)(pagesz - 1);
	e = (addr + len + (uintptr_t)pagesz - 1) & ~(uintptr_t)(pagesz - 1);
	if (e <= s)
		return EINVAL;
	pthread_mutex_lock(&reg_lock);
	if (vmas_read(s, e, &v, &n)) {
		err = ENOMEM;
		goto out;
	}
	/* what an HCA finds when it pins: nothing there is EFAULT */
	if (!vmas_cover(v, n, s, e, write)) {
		err = EFAULT;
		goto out;
	}
	if (reg_off)
		goto out;
	/* an extent whose pages the process unmapped or replaced */
	for (size_t i = 0; i < n; i++) {
		struct regmem_ext *x = ext_at(v[i].start > s ? v[i].start : s);

		if (x && !vma_is_ext(&v[i], x))
			ext_orphan(x);
	}
	ref = calloc(1, sizeof(*ref) + 8 * sizeof(ref->ext[0]));
	for (at = s; ref && at < e;) {
		struct regmem_ext *x = ext_at(at);
		uintptr_t end;
		int prot;

		if (!x) {
			uintptr_t gap = ext_next(at, e);

			if (!vma_run(v, n, at, gap, &end, &prot)) {
				at = end; /* reached through the system call */
				continue;
			}
			x = calloc(1, sizeof(*x));
			if (x && reback(at, end, prot, x)) {
				free(x);
				x = NULL;
			} else if (x && ext_add(x)) {
				ext_privatize(x, false);
				close(x->fd);
				free(x);
				x = NULL;
			}
			if (!x) {
				at = end;
				continue;
			}
			x->live = true;
		}
		if ((ref->n & (ref->n - 1)) == 0 && ref->n >= 8) {
			struct regmem_ref *t = realloc(
				ref, sizeof(*ref) + 2 * ref->n * sizeof(x));

			if (!t)
				break;
			ref = t;
		}
		ref->ext[ref->n++] = x;
		x->refs++;
		ext_share(x, ctx);
		at = x->end;
	}
out:
	pthread_mutex_unlock(&reg_lock);
	free(v);
	if (!err)
		*out = ref;
	else
		free(ref);
	return err;
}

void regmem_put(struct rxdp_context *ctx, struct regmem_ref *ref)
{
	if (!ref)
		return;
	pthread_mutex_lock(&reg_lock);
	for (uint32_t i = 0; i < ref->n; i++) {
		share_put(ref->ext[i], ctx);
		ext_put(ref->ext[i]);
	}
	pthread_mutex_unlock(&reg_lock);
	free(ref);
}

/* The context is closing: rxdpd forgets its shares itself */
void regmem_ctx_gone(struct rxdp_context *ctx)
{
	pthread_once(&reg_once, reg_init);
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < nexts; i++) {
		struct regmem_share **p = &exts[i]->shares;

		while (*p) {
			struct regmem_share *sh = *p;

			if (sh->ctx == ctx) {
				*p = sh->next;
				free(sh);
			} else {
				p = &sh->next;
			}
		}
	}
	pthread_mutex_unlock(&reg_lock);
}
