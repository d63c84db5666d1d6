/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rxdp's libibverbs.so.1: what the files of the library share, and what the
 * provider (dataplane.c) builds on. Everything here is internal: the
 * version script (libibverbs.map) exports only the rdma-core symbol set.
 */
#ifndef RXDP_VERBS_PRIV_H
#define RXDP_VERBS_PRIV_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/hca.h"
#include "common/log.h"
#include "verbs/ops.h"

#define RXDP_VERBS_FW_VER "rxdp 0.1"

/*
 * Device limits reported by ibv_query_device, and checked here before a
 * request goes to rxdpd, whose engine holds to them too (its ENG_* and
 * common/hca.h's limits are the same or larger).
 * vendor_id: rxdp has no IEEE OUI; 0xffffff is the "none" value Soft-RoCE
 * reports too. It is neither Mellanox (0x02c9) nor EFA (0x1d0f), so perftest
 * takes the classic ibv_post_send path.
 */
#define RXDP_VERBS_VENDOR_ID 0xffffff
#define RXDP_VERBS_VENDOR_PART_ID 0x7864 /* "xd" */
#define RXDP_VERBS_HW_VER 1
#define RXDP_VERBS_MAX_MR_SIZE (1ULL << 40)
#define RXDP_VERBS_PAGE_SIZE_CAP 0xfffff000ULL /* 4 KiB and up */
#define RXDP_VERBS_MAX_QP_WR 16384
#define RXDP_VERBS_MAX_SGE 32
#define RXDP_VERBS_MAX_SGE_RD 32
#define RXDP_VERBS_MAX_CQ 16384
#define RXDP_VERBS_MAX_CQE RXDP_HCA_MAX_CQE
#define RXDP_VERBS_MAX_MR 65536
#define RXDP_VERBS_MAX_PD 65536
#define RXDP_VERBS_MAX_QP_RD_ATOM 16
#define RXDP_VERBS_MAX_QP_INIT_RD_ATOM 16
#define RXDP_VERBS_MAX_SRQ 4096
#define RXDP_VERBS_MAX_SRQ_WR 16384
#define RXDP_VERBS_MAX_SRQ_SGE 32
#define RXDP_VERBS_MAX_AH 65536
#define RXDP_VERBS_MAX_INLINE 256
#define RXDP_VERBS_MAX_PKEYS 1
#define RXDP_VERBS_DEFAULT_PKEY 0xffff /* IBTA 10.9.1.1: full-member default */
#define RXDP_VERBS_LOCAL_CA_ACK_DELAY 15
#define RXDP_VERBS_MAX_MSG_SZ (1U << 31) /* IBTA 9.4: messages up to 2^31 */
#define RXDP_VERBS_IBDEV_DIR "/sys/class/infiniband/"

/*
 * One verbs device per interface the daemon serves. Devices are kept for the
 * life of the process (rdma-core keeps them while referenced), so an
 * ibv_device pointer stays valid after ibv_free_device_list and after the
 * interface goes away; only `listed` changes.
 */
struct rxdp_device {
	struct ibv_device ibdev; /* first: an ibv_device * is an rxdp_device * */
	struct rxdp_dev_info info; /* as of the last device list */
	int listed; /* in the daemon's list the last time we asked */
	struct rxdp_device *next;
};

static inline struct rxdp_device *to_rxdp_dev(struct ibv_device *d)
{
	return (struct rxdp_device *)d;
}

/*
 * An open device. The application sees vctx.context; verbs_get_ctx() in
 * <infiniband/verbs.h> finds vctx from it because abi_compat is
 * __VERBS_ABI_IS_EXTENDED and vctx.context is the last member of vctx.
 */
/* MRs by lkey, for the small sends the library gathers (dataplane.c) */
#define RXDP_MR_HASH 256
struct rxdp_mr;

struct rxdp_context {
	struct rxdp_device *dev;
	pthread_mutex_t ctl_lock; /* one request at a time on ctl */
	pthread_rwlock_t mr_lock; /* mr_hash: posts read, registrations write */
	struct rxdp_mr *mr_hash[RXDP_MR_HASH];
	struct rxdp_ctl *ctl; /* this context's connection to rxdpd */
	int doorbell; /* wakes rxdpd's data-path thread (an eventfd) */
	struct rxdp_hca_dev *page; /* the device page, mapped read-only */
	int dead; /* rxdpd is gone */
	pthread_mutex_t qps_lock;
	struct rxdp_qp *qps; /* every QP, for the flush when rxdpd is gone */
	struct verbs_context vctx; /* last: context must end the struct */
};

static inline struct rxdp_context *to_rxdp_ctx(struct ibv_context *ctx)
{
	return (struct rxdp_context *)((char *)ctx -
				       offsetof(struct rxdp_context,
						vctx.context));
}

/*
 * A completion channel: channel.fd is the read end of a pipe rxdpd writes
 * CQ pointers to (the cookies the library gave it)
 */
struct rxdp_comp_channel {
	struct ibv_comp_channel channel;
	uint32_t handle;
};

/* A protection domain (pd.handle: rxdpd's), counted by its objects */
struct rxdp_pd {
	struct ibv_pd pd;
	int users; /* atomic: MRs, QPs, SRQs, AHs on this PD */
};

static inline struct rxdp_pd *to_rxdp_pd(struct ibv_pd *pd)
{
	return (struct rxdp_pd *)pd;
}

/* --- for the provider: obj.c ---------------------------------------------- */

/* Run fn-style requests to rxdpd on the context's connection, serialised */
void rxdp_ctx_ctl_lock(struct rxdp_context *c);
void rxdp_ctx_ctl_unlock(struct rxdp_context *c);

/* PD reference held by each MR/QP/SRQ/AH (ibv_dealloc_pd says EBUSY if any) */
void rxdp_pd_get(struct ibv_pd *pd);
void rxdp_pd_put(struct ibv_pd *pd);

/* The addressing of an ibv_ah_attr, for rxdp_ctl_resolve/modify_qp */
void rxdp_ah_from_attr(const struct ibv_ah_attr *attr, struct rxdp_ah *ah);

/* --- events.c ------------------------------------------------------------- */

/*
 * Initialise the common part of a CQ (context, channel and its refcnt,
 * cq_context, cqe, event counters, mutex, cond). Exported to providers as
 * verbs_init_cq as well.
 */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
/* Undo verbs_init_cq: drops the channel reference, destroys mutex/cond */
void rxdp_cq_fini(struct ibv_cq *cq);

/*
 * Block until the application acknowledged comp_events completion events
 * and async_events async events of cq (ibv_destroy_cq must not return before,
 * as in rdma-core). Same for QPs and SRQs with their events_completed.
 */
void rxdp_cq_wait_acked(struct ibv_cq *cq, uint32_t comp_events,
			uint32_t async_events);
void rxdp_qp_wait_acked(struct ibv_qp *qp, uint32_t events);
void rxdp_srq_wait_acked(struct ibv_srq *srq, uint32_t events);

/*
 * obj (a CQ, QP, SRQ) is being destroyed and will raise no more events;
 * comp_posted completion events and async_posted async events were queued
 * for it in all. *comp_read / *async_read get how many of them the
 * application has read: the destroy waits for their acks, as rdma-core's
 * does; the rest are discarded when read, as uverbs does. Returns 1 if
 * records are still queued: mem (the object's allocation) is then freed
 * with the last of them and the caller must not free it; 0: free it.
 */
int rxdp_events_destroyed(struct ibv_context *ctx, const void *obj, void *mem,
			  uint32_t comp_posted, uint32_t async_posted,
			  uint32_t *comp_read, uint32_t *async_read);
/* The context of an async event's object; NULL: a port's or the device's */
struct ibv_context *rxdp_event_ctx(const struct ibv_async_event *ev);
/* ibv_close_device: forget the context's objects (its async fd is gone) */
void rxdp_events_ctx_closed(struct ibv_context *ctx);

/* --- the data path (dataplane.c) ---------------------------------------- */

/* Fill context.ops with the data-path entry points */
void rxdp_dp_set_ops(struct ibv_context_ops *ops);

/* --- device.c, misc.c ------------------------------------------------------ */

/* Is device one rxdp listed (rxdpd's), not rdma-core's? */
bool rxdp_dev_ours(const struct ibv_device *device);
int rxdp_device_refresh(struct rxdp_context *c, struct rxdp_dev_info *out);
int rxdp_sysfs_synth(const char *dir, const char *file, char *buf,
		     size_t size); /* length, -1 + errno, or -2: not ours */
void rxdp_verbs_log_init(void);

#endif /* RXDP_VERBS_PRIV_H */
