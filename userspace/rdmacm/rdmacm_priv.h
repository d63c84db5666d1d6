/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The drop-in librdmacm.so.1's internals. rxdpd is the device and speaks
 * the IBTA CM (userspace/daemon/cm.c); this library is to it what
 * rdma-core's librdmacm is to /dev/infiniband/rdma_cm: requests on one
 * control connection per process (common/ctl_cm.h), events read from one
 * socket per event channel, and the QP transitions the CM asks for done
 * with the application's verbs.
 */
#ifndef RXDP_RDMACM_PRIV_H
#define RXDP_RDMACM_PRIV_H

#include <pthread.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/ctl_cm.h"

/* An rxdp device as the CM uses it: its verbs context and default PD */
struct cma_dev {
	struct ibv_device *device;
	struct ibv_context *verbs; /* opened once, kept for the process */
	struct ibv_pd *pd;
	int ifindex;
	int refcnt; /* ids using pd */
	uint8_t max_resp_res, max_init_depth;
};

struct cma_chan {
	struct rdma_event_channel ch;
	uint32_t handle;
};

/* A multicast group an id joined (rdma_join_multicast) */
struct cma_mc {
	struct cma_mc *next;
	struct sockaddr_storage addr;
	void *context;
	uint64_t seq; /* names it in its MULTICAST_JOIN event */
	uint16_t join_flags; /* enum rdma_cm_join_mc_attr_flags */
	union ibv_gid mgid;
	int attached; /* the id's QP is attached to mgid */
};

struct cma_id {
	struct rdma_cm_id id;
	struct cma_id *next;
	uint32_t handle;
	int sync; /* made without a channel: operations wait for their event */
	struct cma_dev *dev;
	pthread_mutex_t mut;
	pthread_cond_t cond;
	uint32_t events_reported; /* read from the channel (under the lock) */
	uint32_t events_completed; /* acknowledged */
	uint8_t initiator_depth, responder_resources;
	int connect_error;
	struct ibv_qp_init_attr *qp_init_attr; /* rdma_create_ep, passive */
	void *connect; /* rdma_create_ep: private data for rdma_connect */
	size_t connect_len;
	struct ibv_ece local_ece, remote_ece;
	struct ibv_sa_path_rec path;
	struct cma_mc *mc_list; /* groups joined (under mut) */
};

struct cma_event {
	struct rdma_cm_event event;
	struct cma_id *id_priv; /* whose events_completed the ack counts */
	uint8_t private_data[RXDP_CM_PDATA_MAX];
};

/* One request to rxdpd: 0, or -1 with errno */
int cma_call(struct rxdp_ctl_cm *cm, int *fd);
/* The id's device, opened if needed (ENODEV if none) */
int cma_attach_dev(struct cma_id *id, int ifindex);

static inline struct cma_id *to_cma_id(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static inline struct cma_chan *to_cma_chan(struct rdma_event_channel *ch)
{
	return (struct cma_chan *)ch;
}

#endif /* RXDP_RDMACM_PRIV_H */
