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

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/ctl_cm.h"
#include "common/sysdl.h"

/* An rxdp device as the CM uses it: its verbs context and default PD */
struct cma_dev {
	struct ibv_device *device;
	struct ibv_context *verbs; /* opened once, kept for the process */
	struct ibv_pd *pd;
	int ifindex;
	int refcnt; /* ids using pd */
	uint8_t max_resp_res, max_init_depth;
};

/*
 * ch.fd is the socket rxdpd writes the channel's events to (sock), or,
 * where rdma-core's librdmacm is loaded beside this one (sys.c), an epoll
 * set of that socket and rdma-core's channel (sys): readable when either is
 */
struct cma_chan {
	struct rdma_event_channel ch;
	uint32_t handle;
	int sock;
	struct rdma_event_channel *sys;
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

struct cma_ops;

struct cma_id {
	struct rdma_cm_id id;
	const struct cma_ops *ops; /* rxdp's, or rdma-core's once sys is set */
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
	int bound; /* bound by rxdpd: stays rxdp's */
	struct rdma_cm_id *sys; /* rdma-core's id this one stands for */
};

struct cma_event {
	struct rdma_cm_event event;
	struct cma_id *id_priv; /* whose events_completed the ack counts */
	struct rdma_cm_event *sys; /* rdma-core's, acknowledged with this one */
	uint8_t private_data[RXDP_CM_PDATA_MAX];
};

/*
 * The calls on an id, one table per CM: rxdp's (cma.c), and rdma-core's
 * (sys.c) for an id that stands for one of its ids. id->ops is rxdp's from
 * rdma_create_id, rdma-core's once the id's first bind or resolve names an
 * address rxdpd does not serve, and for the ids rdma-core's listeners'
 * connection requests bring (cma.c, stand_for()). The exported calls check
 * their arguments, then make one call through it; 0, or -1 with errno, as
 * librdmacm.
 */
struct cma_ops {
	int (*destroy_id)(struct cma_id *id);
	int (*bind_addr)(struct cma_id *id, struct sockaddr *addr);
	int (*resolve_addr)(struct cma_id *id, struct sockaddr *src,
			    struct sockaddr *dst, int timeout_ms);
	int (*resolve_route)(struct cma_id *id, int timeout_ms);
	int (*init_qp_attr)(struct cma_id *id, struct ibv_qp_attr *attr,
			    int *mask);
	int (*create_qp_ex)(struct cma_id *id,
			    struct ibv_qp_init_attr_ex *attr);
	void (*destroy_qp)(struct cma_id *id);
	int (*create_srq_ex)(struct cma_id *id,
			     struct ibv_srq_init_attr_ex *attr);
	void (*destroy_srq)(struct cma_id *id);
	int (*connect)(struct cma_id *id, struct rdma_conn_param *param);
	int (*listen)(struct cma_id *id, int backlog);
	int (*accept)(struct cma_id *id, struct rdma_conn_param *param);
	/* reason: 0, or the REJ's (rdma_reject_ece) */
	int (*reject)(struct cma_id *id, const void *pdata, uint8_t len,
		      uint32_t reason);
	int (*notify)(struct cma_id *id, enum ibv_event_type event);
	int (*disconnect)(struct cma_id *id);
	int (*establish)(struct cma_id *id);
	int (*join_multicast)(struct cma_id *id,
			      struct rdma_cm_join_mc_attr_ex *attr,
			      void *context);
	int (*leave_multicast)(struct cma_id *id, struct sockaddr *addr);
	int (*set_option)(struct cma_id *id, int level, int optname,
			  void *optval, size_t optlen);
	/* the move itself: its events from now on come to channel */
	int (*migrate_id)(struct cma_id *id,
			  struct rdma_event_channel *channel);
	int (*set_local_ece)(struct cma_id *id, struct ibv_ece *ece);
	int (*get_remote_ece)(struct cma_id *id, struct ibv_ece *ece);
};

extern const struct cma_ops cma_rxdp_ops, cma_sys_ops;

/*
 * What resolve_addr, resolve_route, connect, accept, disconnect and
 * join_multicast return for a call that succeeded with no event to follow
 * (rxdp's UD accept); 0 is a success whose event a synchronous id waits for
 */
#define CMA_NO_EVENT INT_MAX

/* One request to rxdpd: 0, or -1 with errno */
int cma_call(struct rxdp_ctl_cm *cm, int *fd);
/* The id's device, opened if needed (ENODEV if none) */
int cma_attach_dev(struct cma_id *id, int ifindex);

/*
 * rdma-core's librdmacm beside this one (sys.c): addresses on interfaces
 * rxdpd does not serve are the kernel's RDMA-CM's, where the kernel has
 * RDMA devices. An id whose first bind or resolve names such an address
 * hands everything to an rdma-core id (cma_id.sys), whose fields it
 * mirrors, and whose events come through its channel translated.
 */
#define CMA_SYS_CALLS(X)                            \
	X(rdma_create_event_channel, "RDMACM_1.0")  \
	X(rdma_destroy_event_channel, "RDMACM_1.0") \
	X(rdma_create_id, "RDMACM_1.0")             \
	X(rdma_destroy_id, "RDMACM_1.0")            \
	X(rdma_bind_addr, "RDMACM_1.0")             \
	X(rdma_resolve_addr, "RDMACM_1.0")          \
	X(rdma_resolve_route, "RDMACM_1.0")         \
	X(rdma_init_qp_attr, "RDMACM_1.2")          \
	X(rdma_create_qp_ex, "RDMACM_1.0")          \
	X(rdma_destroy_qp, "RDMACM_1.0")            \
	X(rdma_create_srq_ex, "RDMACM_1.0")         \
	X(rdma_destroy_srq, "RDMACM_1.0")           \
	X(rdma_connect, "RDMACM_1.0")               \
	X(rdma_listen, "RDMACM_1.0")                \
	X(rdma_accept, "RDMACM_1.0")                \
	X(rdma_reject, "RDMACM_1.0")                \
	X(rdma_reject_ece, "RDMACM_1.3")            \
	X(rdma_notify, "RDMACM_1.0")                \
	X(rdma_disconnect, "RDMACM_1.0")            \
	X(rdma_establish, "RDMACM_1.2")             \
	X(rdma_join_multicast_ex, "RDMACM_1.1")     \
	X(rdma_leave_multicast, "RDMACM_1.0")       \
	X(rdma_set_option, "RDMACM_1.0")            \
	X(rdma_migrate_id, "RDMACM_1.0")            \
	X(rdma_get_cm_event, "RDMACM_1.0")          \
	X(rdma_ack_cm_event, "RDMACM_1.0")          \
	X(rdma_set_local_ece, "RDMACM_1.3")         \
	X(rdma_get_remote_ece, "RDMACM_1.3")

struct cma_sys_calls {
#define CMA_SYS_MEMBER(fn, ver) void *p_##fn;
	CMA_SYS_CALLS(CMA_SYS_MEMBER)
#undef CMA_SYS_MEMBER
};

extern struct cma_sys_calls cma_sys;

/* Load rdma-core's librdmacm if the kernel has RDMA devices: is it? */
int cma_sys_load(void);
void cma_sys_errno(void);
/* id's fields made its rdma-core id's; ret passed through */
int cma_sys_mirror(struct cma_id *id, int ret);
/*
 * The interface of the source address of id's first bind or resolve (src,
 * or the route's toward dst) where rdma-core's CM could take the id: its
 * channel has rdma-core's side, and src is no wildcard. 0: it stays rxdp's
 */
int cma_sys_ifindex(struct cma_id *id, const struct sockaddr *src,
		    const struct sockaddr *dst);
/*
 * The next event of ch: 1 an rxdpd record in r, 0 rdma-core's event in *se
 * (its ids rdma-core's), -1 with errno
 */
int cma_sys_wait(struct cma_chan *ch, void *r, size_t len,
		 struct rdma_cm_event **se);

/* rdma-core's FN(...) with its errno made ours */
#define CMA_SYS(fn, ...) \
	RXDP_SYSDL_CALL(cma_sys, cma_sys_errno, fn, __VA_ARGS__)
#define CMA_SYS_VOID(fn, ...) \
	RXDP_SYSDL_VOID(cma_sys, cma_sys_errno, fn, __VA_ARGS__)

static inline struct cma_id *to_cma_id(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static inline struct cma_chan *to_cma_chan(struct rdma_event_channel *ch)
{
	return (struct cma_chan *)ch;
}

#endif /* RXDP_RDMACM_PRIV_H */
