// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The owners' memory: where the engine reads and writes payload, below the
 * transport roles (req.c, resp.c, comp.c call eng_mem_read/eng_mem_write
 * with an owner's addresses, never anything else).
 *
 * An owner is a process whose verbs objects the engine serves (rxdpd: one
 * per client context; tests and rxdpd's own QP1: this process). Its memory
 * is reached two ways:
 *
 * - Windows: ranges of the owner's address space that rxdpd maps too (the
 *   verbs library re-backs registered memory with a memfd and hands it
 *   over, userspace/verbs/regmem.c). A payload there is one memcpy, as an
 *   HCA's DMA is: no system call, nothing the owner can make wait (the
 *   pages are shmem, sealed against shrinking, so the mapping cannot
 *   SIGBUS; the owner's mmap lock is not involved).
 * - Everything else through the /proc/PID/mem the owner opened itself and
 *   handed over: a system call per contiguous piece, counted in the
 *   device's payload_syscalls. It reaches exactly the address space the
 *   owner had when it opened it (an execve() leaves it reading nothing, a
 *   recycled pid cannot redirect it). Short means EFAULT.
 *
 * Windows are kept sorted by address and never overlap; they change only
 * under the engine lock, so an access (engine lock held) never meets a
 * window being unmapped. A window says nothing about rights: the MR and
 * R_Key checks come first, in the transport.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"

struct rxdp_emem *rxdp_engine_mem_create(struct rxdp_engine *e, int fd)
{
	struct rxdp_emem *m;

	if (fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->e = e;
	m->fd = fd;
	return m;
}

void rxdp_engine_mem_destroy(struct rxdp_emem *m)
{
	if (!m || m == &m->e->mem0)
		return;
	free(m->win);
	free(m);
}

/* The index of the first window that ends after addr (nwin: none) */
static uint32_t win_search(const struct rxdp_emem *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->nwin;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct eng_win *w = &m->win[mid];

		if (w->addr + w->len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rxdp_engine_mem_map(struct rxdp_emem *m, uint64_t addr, uint64_t len,
			void *local)
{
	struct rxdp_engine *e = m->e;
	uint32_t i;
	int err = 0;

	if (!len || !local || addr + len < addr || m == &e->mem0)
		return -EINVAL;
	eng_lock(e);
	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr < addr + len) {
		err = -EEXIST;
	} else if (m->nwin == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 8;
		struct eng_win *w = realloc(m->win, cap * sizeof(*w));

		if (w) {
			m->win = w;
			m->cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err) {
		memmove(&m->win[i + 1], &m->win[i],
			(m->nwin - i) * sizeof(*m->win));
		m->win[i] = (struct eng_win){ .addr = addr,
					      .len = len,
					      .local = local };
		m->nwin++;
	}
	eng_unlock(e);
	return err;
}

int rxdp_engine_mem_unmap(struct rxdp_emem *m, uint64_t addr)
{
	struct rxdp_engine *e = m->e;
	uint32_t i;
	int err = -ENOENT;

	eng_lock(e);
	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr == addr) {
		memmove(&m->win[i], &m->win[i + 1],
			(m->nwin - i - 1) * sizeof(*m->win));
		m->nwin--;
		m->hint = 0;
		err = 0;
	}
	eng_unlock(e);
	return err;
}

/*
 * The window holding addr, or NULL and *gap: how many bytes from addr on
 * are in no window. The last window found is tried first: a message's
 * packets land in the same one.
 */
static const struct eng_win *win_find(struct rxdp_emem *m, uint64_t addr,
				      uint64_t *gap)
{
	const struct eng_win *w;
	uint32_t i;

	if (m->hint < m->nwin) {
		w = &m->win[m->hint];
		if (addr >= w->addr && addr - w->addr < w->len)
			return w;
	}
	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr <= addr) {
		m->hint = i;
		return &m->win[i];
	}
	*gap = i < m->nwin ? m->win[i].addr - addr : UINT64_MAX - addr;
	return NULL;
}

/* Through the owner's /proc/PID/mem: one system call */
static int mem_sys(struct rxdp_emem *m, void *buf, uint64_t addr, size_t len,
		   bool write)
{
	ssize_t n;

	m->e->hwc[RXDP_HWC_PAYLOAD_SYSCALLS]++;
	n = write ? pwrite(m->fd, buf, len, (off_t)addr)
		  : pread(m->fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_copy(struct rxdp_emem *m, void *buf, uint64_t addr, size_t len,
		    bool write)
{
	uint8_t *p = buf;

	if (m == &m->e->mem0) { /* this process: addresses are pointers */
		if (write)
			memcpy((void *)(uintptr_t)addr, buf, len);
		else
			memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	while (len) {
		uint64_t n = len, gap = 0;
		const struct eng_win *w = win_find(m, addr, &gap);

		if (w) {
			uint8_t *at = w->local + (addr - w->addr);

			if (n > w->len - (addr - w->addr))
				n = w->len - (addr - w->addr);
			if (write)
				memcpy(at, p, n);
			else
				memcpy(p, at, n);
			m->e->hwc[RXDP_HWC_PAYLOAD_DIRECT_BYTES] += n;
		} else {
			if (n > gap)
				n = gap;
			if (mem_sys(m, p, addr, n, write))
				return -EFAULT;
			m->e->hwc[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] += n;
		}
		p += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int eng_mem_read(struct rxdp_epd *pd, void *dst, uint64_t addr, size_t len)
{
	int ret = len ? mem_copy(pd->m, dst, addr, len, false) : 0;

	if (ret)
		pd->e->stats.mem_faults++;
	return ret;
}

int eng_mem_write(struct rxdp_epd *pd, uint64_t addr, const void *src,
		  size_t len)
{
	int ret = len ? mem_copy(pd->m, (void *)src, addr, len, true) : 0;

	if (ret)
		pd->e->stats.mem_faults++;
	return ret;
}

/* pkt_build's reader: arg is the PD */
int eng_pkt_read(void *arg, void *dst, uint64_t addr, size_t len)
{
	return eng_mem_read(arg, dst, addr, len);
}

/*
 * Whether [addr, addr+len) lies in windows (or this process's memory): the
 * engine writes it without a system call, so a small receive needs no
 * scatter to CQE (common/hca.h)
 */
bool eng_mem_direct(struct rxdp_epd *pd, uint64_t addr, uint64_t len)
{
	struct rxdp_emem *m = pd->m;

	if (m == &m->e->mem0)
		return true;
	while (len) {
		uint64_t gap, n;
		const struct eng_win *w = win_find(m, addr, &gap);

		if (!w)
			return false;
		n = w->len - (addr - w->addr);
		if (n >= len)
			return true;
		addr += n;
		len -= n;
	}
	return true;
}
