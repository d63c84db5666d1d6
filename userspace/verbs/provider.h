/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The provider's objects, shared by dataplane.c (the classic verbs),
 * extended.c (ibv_create_qp_ex/cq_ex/srq_ex and the ibv_wr_* and
 * ibv_start_poll families) and mw.c (memory windows). Each wraps the
 * libibverbs object it hands out, first, so a pointer to one is a pointer
 * to the other; the extended ones are a superset (ibv_cq_ex starts as
 * ibv_cq does, ibv_qp_ex with an ibv_qp), so one wrapper serves both.
 */
#ifndef RXDP_VERBS_PROVIDER_H
#define RXDP_VERBS_PROVIDER_H

#include <errno.h>
#include <stdbool.h>

#include "common/hca.h"
#include "verbs/verbs_priv.h"

struct regmem_ref;

struct rxdp_mr {
	struct ibv_mr mr;
	uint32_t handle;
	struct regmem_ref *mem; /* the shared extents it is over (regmem.c) */
	uint64_t iova; /* as registered, for ibv_rereg_mr */
	unsigned int access;
	struct rxdp_mr *hnext; /* the context's mr_hash chain */
};

/* A mapping of a memfd rxdpd made (queues) */
struct shm {
	void *p;
	size_t len;
};

struct rxdp_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex; /* ibv_create_cq_ex */
	};
	uint32_t handle;
	struct shm mem;
	struct rxdp_hca_cq *sh;
	struct rxdp_hca_cqd *data; /* the entries' data slots */
	uint32_t size;
	uint32_t flags; /* RXDP_CTL_CQ_F_* */
	pthread_spinlock_t lock; /* pollers */
	unsigned int
		idle; /* empty polls, to look for a dead rxdpd now and then */
	/* ibv_start_poll .. ibv_end_poll: the entry read now (lock held) */
	uint32_t cur;
	const struct ibv_wc *wc;
};

struct rxdp_srq {
	struct ibv_srq srq;
	uint32_t handle;
	struct shm mem;
	struct rxdp_hca_wq *wq;
	void *ring;
	uint32_t size, stride, max_sge;
	pthread_spinlock_t lock; /* posters */
};

struct rxdp_qp {
	union {
		struct ibv_qp qp;
		struct { /* as struct rxdp_qp_ex47 (ibta15.h) */
			struct ibv_qp_ex qp_ex; /* ibv_create_qp_ex, ibv_wr_* */
			void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey,
					 uint64_t remote_addr, size_t len,
					 uint8_t type, uint8_t level);
		};
	};
	bool ex; /* made by ibv_create_qp_ex: ibv_qp_to_qp_ex gives qp_ex */
	uint32_t handle;
	struct shm mem;
	struct rxdp_hca_qp *sh;
	void *sq, *rq;
	uint32_t sq_size, sq_stride, rq_size, rq_stride;
	struct rxdp_hca_qp_caps hcaps;
	pthread_spinlock_t sq_lock, rq_lock; /* posters */
	struct ibv_qp_cap cap; /* as granted */
	int sq_sig_all;
	struct ibv_qp_attr attr; /* every attribute set so far (query_qp) */
	/*
	 * ibv_wr_start .. ibv_wr_complete (sq_lock held): the WQEs built so far
	 * go from the ring's prod to wr_cur, unpublished; wr_err the first
	 * error, which wr_complete returns, posting none of them
	 */
	uint32_t wr_cur;
	int wr_err;
	/* the context's list; once rxdpd is gone, the WQEs flushed so far */
	struct rxdp_qp *next;
	bool flushing;
	uint32_t sq_flushed, rq_flushed;
};

struct rxdp_vah {
	struct ibv_ah ah;
	uint32_t handle;
};

static inline struct rxdp_cq *to_cq(struct ibv_cq *cq)
{
	return (struct rxdp_cq *)cq;
}

static inline struct rxdp_qp *to_qp(struct ibv_qp *qp)
{
	return (struct rxdp_qp *)qp;
}

static inline struct rxdp_srq *to_srq(struct ibv_srq *srq)
{
	return (struct rxdp_srq *)srq;
}

static inline void *fail_ptr(int err)
{
	errno = err;
	return NULL;
}

/* obj.c: one object request to rxdpd; 0 or a positive errno (errno too) */
int obj_call(struct ibv_context *ctx, uint16_t type, struct rxdp_ctl_obj *o,
	     const struct rxdp_ah *ah, int *fd);
/* The same with an fd sent along (MEM_SHARE) */
int obj_call_fd(struct ibv_context *ctx, uint16_t type, struct rxdp_ctl_obj *o,
		int in_fd);

/* dataplane.c */
void doorbell(struct ibv_context *ctx);
/* An empty CQ: 0, EOVERFLOW (completions were lost) or EIO (rxdpd died) */
int cq_idle(struct rxdp_cq *w);
/*
 * A small send's bytes (its SGEs) to dst, if the library knows the MRs
 * (common/hca.h: RXDP_HCA_SEND_GATHERED)
 */
int rxdp_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
bool gather(struct rxdp_context *c, struct ibv_pd *pd,
	    const struct ibv_send_wr *wr, uint8_t *dst);
/*
 * The objects with queues, made for the classic verbs and the extended
 * ones alike: NULL + errno. cq_create's flags are RXDP_CTL_CQ_F_*; a QP
 * from qp_create is not yet an extended one.
 */
struct rxdp_cq *cq_create(struct ibv_context *context, int cqe,
			  void *cq_context, struct ibv_comp_channel *channel,
			  int comp_vector, uint32_t flags);
struct rxdp_qp *qp_create(struct ibv_pd *pd,
			  struct ibv_qp_init_attr *init_attr);
struct rxdp_srq *srq_create(struct ibv_pd *pd,
			    struct ibv_srq_init_attr *srq_init_attr);
/* What posting to w's send queue brings (common/hca.h) */
void qp_poster(struct rxdp_qp *w, struct rxdp_hca_poster *p);

/*
 * regmem.c: registered memory shared with rxdpd. The extents over
 * [addr, addr+len), made where they can be, shared with ctx's rxdpd, into
 * *ref (NULL: none). 0, or EFAULT if the range is not all mapped readable
 * (and writable if write), as pinning it would fail.
 */
int regmem_get(struct rxdp_context *ctx, uintptr_t addr, size_t len, bool write,
	       struct regmem_ref **ref);
/* After the MR is deregistered: its extents, given back when unused */
void regmem_put(struct rxdp_context *ctx, struct regmem_ref *ref);
/* ibv_close_device: rxdpd drops the context's shares itself */
void regmem_ctx_gone(struct rxdp_context *ctx);

/* mw.c: ibv_alloc_mw, ibv_bind_mw, ibv_dealloc_mw (context ops) */
struct ibv_mw *rxdp_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int rxdp_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
int rxdp_dealloc_mw(struct ibv_mw *mw);

/* extended.c: the verbs_context ops */
struct ibv_cq_ex *rxdp_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *rxdp_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
struct ibv_srq *rxdp_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int rxdp_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values);

#endif /* RXDP_VERBS_PROVIDER_H */
