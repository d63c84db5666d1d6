/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * IBTA 1.5's RDMA Flush and Atomic Write (Annex A19, Memory Placement
 * Extensions) in the verbs ABI. The installed <infiniband/verbs.h> is the
 * ABI rxdp builds against: Debian 12's rdma-core 44 has Atomic Write
 * (IBV_WR_ATOMIC_WRITE 15, IBV_WC_ATOMIC_WRITE 9, IBV_QP_EX_WITH_ATOMIC_WRITE
 * 1 << 12, ibv_qp_ex.wr_atomic_write) but none of Flush, which rdma-core 47
 * added. These are the values rdma-core 47 and the kernel's uapi give the
 * names in the comments; the RXDP_ names never collide with a newer
 * header's.
 */
#ifndef RXDP_COMMON_IBTA15_H
#define RXDP_COMMON_IBTA15_H

#include <infiniband/verbs.h>
#include <stddef.h>

#define RXDP_WR_FLUSH 14U /* IBV_WR_FLUSH */
#define RXDP_WC_FLUSH 8U /* IBV_WC_FLUSH (IB_UVERBS_WC_FLUSH) */
#define RXDP_QP_EX_WITH_FLUSH (1ULL << 11) /* IBV_QP_EX_WITH_FLUSH */
#define RXDP_ACCESS_FLUSH_GLOBAL (1U << 8) /* IBV_ACCESS_FLUSH_GLOBAL */
#define RXDP_ACCESS_FLUSH_PERSISTENT (1U << 9) /* ..._FLUSH_PERSISTENT */
#define RXDP_ACCESS_FLUSH \
	(RXDP_ACCESS_FLUSH_GLOBAL | RXDP_ACCESS_FLUSH_PERSISTENT)
/* ibv_wr_flush()'s type (enum ibv_placement_type, a mask) and level */
#define RXDP_FLUSH_GLOBAL 1U /* IBV_FLUSH_GLOBAL */
#define RXDP_FLUSH_PERSISTENT 2U /* IBV_FLUSH_PERSISTENT */
#define RXDP_FLUSH_RANGE 0U /* IBV_FLUSH_RANGE */
#define RXDP_FLUSH_MR 1U /* IBV_FLUSH_MR */
/* ibv_device_attr_ex.device_cap_flags_ex: IB_UVERBS_DEVICE_* */
#define RXDP_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define RXDP_DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define RXDP_DEVICE_ATOMIC_WRITE (1ULL << 40)

/*
 * rdma-core 47's struct ibv_qp_ex goes on after wr_atomic_write (its last
 * member in 44) with wr_flush: where a provider that offers Flush puts it
 */
struct rxdp_qp_ex47 {
	struct ibv_qp_ex qp_ex;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey,
			 uint64_t remote_addr, size_t len, uint8_t type,
			 uint8_t level);
};

_Static_assert(offsetof(struct rxdp_qp_ex47, wr_flush) ==
		       offsetof(struct ibv_qp_ex, wr_atomic_write) +
			       sizeof(void *),
	       "wr_flush right after 44's last member");

/* rdma-core 47's ibv_wr_flush(), for programs built against 44's headers */
static inline void rxdp_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
				 uint64_t remote_addr, size_t len, uint8_t type,
				 uint8_t level)
{
	((struct rxdp_qp_ex47 *)qp)
		->wr_flush(qp, rkey, remote_addr, len, type, level);
}

#endif /* RXDP_COMMON_IBTA15_H */
