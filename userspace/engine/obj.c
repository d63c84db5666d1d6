// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The engine's memory objects (the API: each call takes the engine lock):
 * protection domains, memory regions and windows (named by keys from one
 * table, keys.h; their checks in sge.c and mw.c), address handles, and the
 * owners' memory (mem.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* --- protection domains --------------------------------------------------- */

struct rxdp_epd *rxdp_engine_alloc_pd(struct rxdp_engine *e,
				      struct rxdp_emem *m)
{
	struct rxdp_epd *pd;

	if (m && m->e != e) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->e = e;
	pd->m = m ? m : &e->mem0;
	return pd;
}

int rxdp_engine_dealloc_pd(struct rxdp_epd *pd)
{
	struct rxdp_engine *e = pd->e;

	eng_lock(e);
	if (pd->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	eng_unlock(e);
	free(pd);
	return 0;
}

/* --- memory regions ------------------------------------------------------ */

/*
 * A new region or window (k, allocated) into the key table (keys.h): a
 * new index and a random key byte make its key. k, or NULL and errno
 * (ENOMEM: the table is full) with k freed.
 */
static struct rxdp_emr *key_add(struct rxdp_emr *k, enum eng_key_kind kind)
{
	struct rxdp_engine *e = k->e;
	int err;

	eng_lock(e);
	err = eng_key_add(&e->keys, &k->k, (uint8_t)kind, -1);
	if (err) {
		eng_unlock(e);
		free(k);
		errno = err == -ENOSPC ? ENOMEM : -err;
		return NULL;
	}
	k->pd->refs++;
	eng_unlock(e);
	return k;
}

/*
 * Where an MR may lie: a range of the owner's memory that does not wrap,
 * or, with on-demand paging, the whole address space (implicit ODP: addr
 * and iova 0, len SIZE_MAX, as ibv_reg_mr(pd, NULL, SIZE_MAX, ...) asks)
 */
static bool mr_range_ok(uint64_t addr, uint64_t len, uint64_t iova,
			unsigned int access)
{
	if (!addr && len == UINT64_MAX && !iova)
		return access & IBV_ACCESS_ON_DEMAND;
	return (addr || !len) && addr + len >= addr && iova + len >= iova;
}

struct rxdp_emr *rxdp_engine_reg_mr_pd(struct rxdp_epd *pd, uint64_t addr,
				       size_t len, uint64_t iova,
				       unsigned int access)
{
	struct rxdp_engine *e = pd->e;
	struct rxdp_emr *mr;

	/* IBTA 10.6.3.1 / ibv_reg_mr(3): remote write/atomic need local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * IBTA 1.5 A19: a persistent Flush places data in the persistence
	 * domain, and no memory rxdp reaches is persistent memory (an
	 * application's pages, re-backed by shmem): refused, as Soft-RoCE
	 * refuses it for pages that are not pmem
	 */
	if (access & RXDP_ACCESS_FLUSH_PERSISTENT) {
		errno = EINVAL;
		return NULL;
	}
	if (!mr_range_ok(addr, len, iova, access)) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	mr->e = e;
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->iova = iova;
	mr->access = access & ENG_MR_ACCESS_KNOWN;
	return key_add(mr, ENG_KEY_MR);
}

struct rxdp_emr *rxdp_engine_alloc_mw(struct rxdp_engine *e,
				      struct rxdp_epd *pd,
				      enum ibv_mw_type type)
{
	struct rxdp_emr *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	mw->e = e;
	mw->pd = eng_pd_or_default(e, pd);
	mw->mw_type = (uint8_t)type;
	return key_add(mw, ENG_KEY_MW);
}

struct rxdp_emr *rxdp_engine_reg_mr(struct rxdp_engine *e, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access)
{
	return rxdp_engine_reg_mr_pd(e->pd0, (uintptr_t)addr, len, iova,
				     access);
}

int rxdp_engine_rereg_mr(struct rxdp_emr *mr, struct rxdp_epd *pd,
			 uint64_t addr, size_t len, uint64_t iova,
			 unsigned int access)
{
	struct rxdp_engine *e = mr->e;
	bool new_key;
	int err = 0;

	if (!pd)
		pd = e->pd0;
	access &= ENG_MR_ACCESS_KNOWN;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & RXDP_ACCESS_FLUSH_PERSISTENT)
		return -EINVAL; /* as a registration (above) */
	if (!mr_range_ok(addr, len, iova, access) || pd->e != e || mr->mw_type)
		return -EINVAL;
	eng_lock(e);
	/* the windows bound to it hold its translation */
	if (mr->nmw) {
		eng_unlock(e);
		return -EBUSY;
	}
	/*
	 * A key someone was given must not reach other memory, another PD's
	 * QPs or a right taken away: then the MR gets a new key and the old
	 * one matches nothing. A change that only adds rights keeps it, as
	 * mlx5 and Soft-RoCE do and rdma-core's tests expect
	 * (test_mr_rereg_access writes through the R_Key it had before).
	 */
	new_key = addr != mr->addr || len != mr->len || iova != mr->iova ||
		  pd != mr->pd || (mr->access & ~access);
	if (new_key)
		err = eng_key_renew(&e->keys, &mr->k);
	if (!err) {
		mr->pd->refs--;
		mr->pd = pd;
		pd->refs++;
		mr->addr = addr;
		mr->len = len;
		mr->iova = iova;
		mr->access = access;
	}
	eng_unlock(e);
	return err;
}

/* A region with windows bound to it stays (-EBUSY); a window is unbound */
int rxdp_engine_dereg_mr(struct rxdp_emr *mr)
{
	struct rxdp_engine *e = mr->e;

	eng_lock(e);
	if (mr->nmw) {
		eng_unlock(e);
		return -EBUSY;
	}
	if (mr->mw_type)
		mw_unbind(mr);
	eng_key_del(&e->keys, &mr->k);
	mr->pd->refs--;
	eng_unlock(e);
	free(mr);
	return 0;
}

int rxdp_engine_dealloc_mw(struct rxdp_emr *mw)
{
	return mw->mw_type ? rxdp_engine_dereg_mr(mw) : -EINVAL;
}

uint32_t rxdp_emr_lkey(const struct rxdp_emr *mr)
{
	return mr->k.key;
}

uint32_t rxdp_emr_rkey(const struct rxdp_emr *mr)
{
	return mr->k.key;
}

/* --- address handles ---------------------------------------------------- */

struct rxdp_eah *rxdp_engine_create_ah(struct rxdp_engine *e,
				       struct rxdp_epd *pd,
				       const struct rxdp_path *path)
{
	struct rxdp_eah *ah;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ah->pd = eng_pd_or_default(e, pd);
	eng_path_init(e, &ah->path, path);
	eng_lock(e);
	ah->pd->refs++;
	eng_unlock(e);
	return ah;
}

int rxdp_engine_destroy_ah(struct rxdp_eah *ah)
{
	struct rxdp_engine *e = ah->pd->e;

	eng_lock(e);
	ah->pd->refs--;
	eng_unlock(e);
	free(ah);
	return 0;
}

/* --- the owners' memory (mem.c) ------------------------------------------ */

struct rxdp_emem *rxdp_engine_mem_create(struct rxdp_engine *e, int fd)
{
	struct rxdp_emem *m = eng_mem_new(e, fd);

	if (!m)
		return NULL;
	eng_lock(e);
	m->next = e->mems;
	e->mems = m;
	eng_unlock(e);
	return m;
}

/* After the PDs on it: the engine forgets it now */
void rxdp_engine_mem_destroy(struct rxdp_emem *m)
{
	struct rxdp_engine *e;

	if (!m || m == &m->e->mem0)
		return;
	e = m->e;
	eng_lock(e);
	for (struct rxdp_emem **p = &e->mems; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			break;
		}
	eng_mem_close(m);
	eng_unlock(e);
	eng_mem_stop(m);
}

int rxdp_engine_mem_map(struct rxdp_emem *m, uint64_t addr, uint64_t len,
			void *local)
{
	struct rxdp_engine *e = m->e;
	int err;

	if (!len || !local || addr + len < addr || m == &e->mem0)
		return -EINVAL;
	eng_lock(e);
	err = eng_mem_win_add(m, addr, len, local);
	eng_unlock(e);
	return err;
}

int rxdp_engine_mem_unmap(struct rxdp_emem *m, uint64_t addr)
{
	struct rxdp_engine *e = m->e;
	int err;

	eng_lock(e);
	err = eng_mem_win_del(m, addr);
	eng_unlock(e);
	return err;
}
