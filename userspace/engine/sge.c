// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Scatter/gather lists and the keys that name them (a service of the
 * transport): local SGEs checked against their MRs (L_Keys), remote
 * accesses against the R_Key of an MR or a window, and payload copied into
 * the owner's buffers. Engine lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/*
 * Copy len bytes into a scatter list (the owner's memory) at byte offset
 * off: 0, or -EAGAIN (nothing lost: drop the packet, it comes again)
 */
int sge_copy_to(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		uint32_t off, const uint8_t *src, uint32_t len,
		const struct eng_wtag *tag)
{
	struct pkt_sg piece[ENG_MAX_SGE];
	int n = sge_slice(sg, nsg, off, len, piece);

	for (int i = 0; i < n; i++) {
		if (eng_mem_write(qp, piece[i].addr, src, piece[i].len, tag))
			return -EAGAIN;
		src += piece[i].len;
	}
	return 0;
}

/* The part [off, off+len) of a gather list, as a gather list */
int sge_slice(const struct pkt_sg *sg, int nsg, uint32_t off, uint32_t len,
	      struct pkt_sg *out)
{
	int n = 0;

	for (int i = 0; i < nsg && len; i++) {
		uint32_t k;

		if (off >= sg[i].len) {
			off -= sg[i].len;
			continue;
		}
		k = sg[i].len - off;
		if (k > len)
			k = len;
		out[n].addr = sg[i].addr + off;
		out[n].span = sg[i].span - off;
		out[n++].len = k;
		len -= k;
		off = 0;
	}
	return n;
}

/*
 * A local SGE list -> the owner's buffers, checking lkey (an MR of the QP's
 * PD, IBTA 10.6.3.2), bounds and access
 */
int sge_resolve(struct rxdp_epd *pd, const struct ibv_sge *sge, int num,
		unsigned int need, struct pkt_sg *out, uint32_t *total)
{
	struct rxdp_engine *e = pd->e;

	int n = 0;

	*total = 0;
	for (int i = 0; i < num; i++) {
		struct rxdp_emr *mr;

		if (!sge[i].length)
			continue;
		/* an L_Key names a region, never a window (IBTA 10.6.7) */
		mr = eng_mr_lookup(e, sge[i].lkey);
		if (!mr || mr->pd != pd || (mr->access & need) != need ||
		    sge[i].addr < mr->iova ||
		    sge[i].addr - mr->iova + sge[i].length > mr->len)
			return -EACCES;
		out[n].addr = mr->addr + (sge[i].addr - mr->iova);
		out[n].span = sge[i].length;
		out[n++].len = sge[i].length;
		*total += sge[i].length;
	}
	return n;
}

/*
 * R_Key check for a remote access (IBTA 10.6.3.3 / 9.7.4.1.7-9): the key
 * must name an MR of the QP's PD with the rights (every one in need), the
 * QP must grant them, and [va, va+len) must lie inside the MR. true and
 * *addr (the owner's address) if allowed.
 */
static bool rkey_range_ok(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
			  uint64_t len, unsigned int need, uint64_t *addr)
{
	struct rxdp_emr *mr = eng_key_lookup(qp->e, rkey);

	if (!mr || mr->pd != qp->pd || (qp->access & need) != need)
		return false;
	if (mr->mw_type)
		return mw_access(qp, mr, va, len, need, addr);
	if ((mr->access & need) != need)
		return false;
	if (va < mr->iova || va - mr->iova > mr->len ||
	    len > mr->len - (va - mr->iova))
		return false;
	*addr = mr->addr + (va - mr->iova);
	return true;
}

/* ... where a zero-length access checks nothing (C9-88) */
bool sge_rkey_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		    uint64_t len, unsigned int need, uint64_t *addr)
{
	*addr = 0;
	return !len || rkey_range_ok(qp, rkey, va, len, need, addr);
}

/*
 * A Flush (IBTA 1.5 A19): the key is checked whatever the length, as
 * Soft-RoCE does (a zero-length Flush still says something of the memory
 * it names); selectivity MR flushes the whole region the key names, a
 * range must lie inside it. need: the placement types' access rights.
 */
bool sge_flush_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		     uint32_t len, uint32_t sel, unsigned int need)
{
	struct rxdp_emr *mr = eng_key_lookup(qp->e, rkey);
	uint64_t addr;

	if (!mr)
		return false;
	if (sel == ROCE_FLUSH_MR)
		return rkey_range_ok(qp, rkey, mr->iova, mr->len, need, &addr);
	return rkey_range_ok(qp, rkey, va, len, need, &addr);
}
