/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the connection manager, as the kernel splits it, top down:
 *
 *   cm.c       the RDMA CM's user-facing part (the kernel's ucma.c): event
 *              channels, the ids of each client connection, the requests
 *              of the library (RXDP_CTL_CM) and the events it reads
 *   cm_rdma.c  rdma_cm's address and route logic (cma.c): binding, ports,
 *              address and route resolution, listening, the attributes
 *              of the application's QP, connecting on a resolved route
 *   cm_ib.c    the IB CM's wire state machine (cm.c): QP1 per device,
 *              REQ/MRA/REJ/REP/RTU/DREQ/DREP and SIDR, timers and retries
 *
 * One record per id (struct cm_id) carries each layer's part, and each
 * layer's state: the RDMA CM's (enum cma_state) and, while a connection
 * is being made or is up, the IB CM's (enum ib_cm_state). A lower layer
 * calls up only through struct cm_ib_ops, which cm.c gives cm_ib.c.
 */
#ifndef RXDP_DAEMON_CM_ID_H
#define RXDP_DAEMON_CM_ID_H

#include <stdbool.h>
#include <sys/socket.h>

#include "common/ctl_cm.h"
#include "daemon/cm.h"
#include "daemon/cm_mad.h"

/*
 * Times, as 5-bit IBTA exponents of 4.096 us (cm_time_ms()). The CM
 * answers within ~1 s; a RoCE packet lives at most ~67 ms; a QP's
 * retransmission timer is ~268 ms unless the application sets
 * RDMA_OPTION_ID_ACK_TIMEOUT; an MRA asks for ~68 s (what Linux asks for a
 * connection its application has not accepted yet).
 */
#define CM_RESPONSE_TIMEOUT 18
#define CM_PACKET_LIFETIME 14
#define CM_ACK_TIMEOUT 16
#define CM_MRA_TIMEOUT 24
#define CM_MAX_RETRIES 15
#define CM_HOP_LIMIT 64
#define CM_RATE_10G 3 /* IBTA rate encoding: 10 Gb/s */
#define CM_TARGET_ACK_DELAY 15

#define CM_MAX_IDS 4096 /* per client connection */
#define CM_MAX_CHANNELS 256 /* per client connection */
#define CM_USER_IDS 16384 /* per user but root, all connections */
#define CM_USER_CHANNELS 1024 /* (each holds a socket in rxdpd) */
#define CM_ALL_IDS 65536 /* all users, a share kept (rxdpd_slot_ok) */
#define CM_ALL_CHANNELS 4096
#define CM_MAX_HALF_OPEN 4096 /* incoming requests not yet answered */
#define CM_MAX_BACKLOG 1024
#define CM_CHAN_QUEUE 4096 /* events waiting for a full channel socket */
#define CM_EPHEMERAL_LO 32768
#define CM_EPHEMERAL_HI 60999

/* An event channel's state (cm.c) */
enum cm_chan_state {
	CM_CHAN_OPEN,
	CM_CHAN_HUP, /* the library's end is closed: nobody reads */
	CM_CHAN_ZOMBIE, /* destroyed, its socket kept until the library's end
			 * closes (a thread may still block in a read) */
};

/* The RDMA CM's state of an id (cm_rdma.c; the kernel's rdma_cm_state) */
enum cma_state {
	CMA_IDLE = 0,
	CMA_ADDR_BOUND,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_LISTEN,
	CMA_CONNECT, /* on the wire: the IB CM's state says where */
	CMA_DISCONNECTED, /* after TimeWait: nothing on the wire any more */
};

/* The IB CM's state of a connection (cm_ib.c; IBTA 12.9.6) */
enum ib_cm_state {
	IB_CM_IDLE = 0,
	IB_CM_REQ_SENT, /* active: waiting for REP (or MRA, REJ) */
	IB_CM_MRA_REQ_RCVD, /* active: the passive side asked for more time */
	IB_CM_REP_RCVD, /* active: REP delivered, RTU not sent yet */
	IB_CM_REQ_RCVD, /* passive: CONNECT_REQUEST delivered */
	IB_CM_MRA_REQ_SENT, /* passive: MRA sent for a duplicate REQ */
	IB_CM_REP_SENT, /* passive: waiting for RTU */
	IB_CM_ESTABLISHED,
	IB_CM_DREQ_SENT,
	IB_CM_DREQ_RCVD,
	IB_CM_TIMEWAIT,
	IB_CM_SIDR_REQ_SENT,
	IB_CM_SIDR_REQ_RCVD,
	IB_CM_SIDR_REP_SENT, /* passive: kept to answer a retransmitted SIDR_REQ */
};

struct cm_qev {
	struct cm_qev *next;
	struct rxdp_cm_event ev;
};

struct cm_chan {
	struct ep_tag ep; /* our end of the event socket, EPOLLOUT when full */
	struct cm_chan *next;
	struct cm_client *owner;
	__u32 handle;
	int wfd;
	struct cm_qev *qhead, *qtail; /* waiting for room in the socket */
	unsigned int qlen;
	unsigned int dropped;
	enum cm_chan_state state;
};

struct cm_client {
	struct rxdp_client *c;
	struct cm_chan *chans;
	unsigned int nchans, nids;
};

struct cm_id {
	struct cm_id *next; /* every id */
	/* cm.c: whose it is */
	struct cm_client *owner; /* NULL: detached (destroyed, lingering) */
	struct cm_chan *chan;
	__u32 handle;
	__u16 ps;
	__u32 qp_type;
	/* cm_rdma.c: options, addresses and route */
	enum cma_state cma;
	__u8 tos;
	bool reuseaddr, afonly;
	__u8 ack_timeout;
	bool ack_timeout_set;
	struct rxdp_cm_addr src, dst;
	bool bound;
	int ifindex; /* 0: no device (a wildcard listener) */
	__u8 sgid[16], dgid[16];
	__u8 sgid_index;
	__u8 mtu;
	bool route_resolved;
	long addr_deadline;
	long neigh_deadline;
	int backlog, pending; /* listening */
	struct cm_id *listener; /* a request's listener, until answered */
	/* cm_ib.c: the connection */
	enum ib_cm_state ib;
	__u32 local_comm_id, remote_comm_id;
	__u64 remote_ca_guid;
	__u32 local_qpn, remote_qpn;
	/*
	 * A REQ's or REP's Starting PSN is its sender's rq_psn, and the
	 * receiver's sq_psn (Linux's cm.c reads it so; so do the HCAs)
	 */
	__u32 sq_psn, rq_psn;
	__u32 qkey;
	__u8 resp_res, init_depth; /* max_dest_rd_atomic, max_rd_atomic */
	__u8 retry_count, rnr_retry_count, flow_control, srq;
	__u8 local_ack_timeout; /* the QP's, from the path */
	__u8 peer_resp_timeout; /* how long the peer's CM takes to answer */
	__u8 max_cm_retries;
	__u32 ece_vendor_id, ece_options;
	bool connected_once; /* access flags for the QP */
	/* what is (re)sent, to whom, until when */
	struct gsi_peer peer;
	__u8 mad[CM_MAD_LEN];
	bool mad_valid;
	__u8 rtu[CM_MAD_LEN]; /* active: for a retransmitted REP */
	bool rtu_valid;
	__u64 tid;
	int retries_left;
	long timer; /* ms, 0: none */
};

/* One request of a client (RXDP_CTL_CM), as its op's handler sees it */
struct cm_call {
	struct rxdp_client *c;
	struct cm_client *cl;
	struct rxdp_ctl_cm *cm; /* the request, then the reply */
	struct cm_id *id; /* the id it is on, for ops on one */
	int *fd; /* one to send with the reply, or -1 */
	char *msg;
	size_t msglen;
};

static inline size_t cm_alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static inline bool cm_is_ud(const struct cm_id *id)
{
	return id->qp_type == IBV_QPT_UD;
}

/* The RDMA CM's state: the IB CM's is idle in every one but CMA_CONNECT */
static inline void cma_set(struct cm_id *id, enum cma_state s)
{
	id->cma = s;
	id->ib = IB_CM_IDLE;
}

/* --- cm_ib.c ------------------------------------------------------------- */

/* What the IB CM asks of the layers above (cm.c gives it at cm_init) */
struct cm_ib_ops {
	/* an event for the application (on its channel) */
	void (*event)(struct cm_id *id, struct rxdp_cm_event *ev);
	/* the listener of (ps, port) for a request to dst on ifindex */
	struct cm_id *(*listener)(__u16 ps, __u16 port, int ifindex,
				  const struct rxdp_cm_addr *dst);
	/* a new id on listener l for a request, its addresses set */
	struct cm_id *(*child)(struct cm_id *l, int ifindex,
			       const struct cm_ip_hdr *h, __u16 port,
			       const struct gsi_peer *from);
	/* the timer of an id in a state of the RDMA CM's expired */
	void (*expired)(struct cm_id *id);
};

extern struct cm_id *cm_ids; /* every id */

int cm_ib_init(const struct cm_ib_ops *ops);
void cm_ib_fini(void);
/* QP1 of every device tried again if it is not up, its waiting MADs sent */
void cm_ib_retry(void);
/* Does ifindex have QP1 (so the CM on the wire)? */
bool cm_ib_has_qp1(int ifindex);
const char *cm_ib_state_name(enum ib_cm_state s);
/* The IB CM's state (the RDMA CM's is CMA_CONNECT meanwhile) */
void cm_ib_set(struct cm_id *id, enum ib_cm_state s);
__u32 cm_rand32(void);
void cm_timer_rearm(void);
void cm_timer_set(struct cm_id *id, long ms);
void cm_id_free(struct cm_id *id);
/* Take id off the wire as its state asks; true: it must linger */
bool cm_ib_shutdown(struct cm_id *id);
__u8 cm_ack_timeout(const struct cm_id *id);
/* Events for the application */
void cm_info_fill(const struct cm_id *id, struct rxdp_cm_info *in);
void cm_ev_init(struct rxdp_cm_event *ev, const struct cm_id *id, int event,
		int status);
void cm_ev_send(struct cm_id *id, struct rxdp_cm_event *ev);
void cm_ev_simple(struct cm_id *id, int event, int status);
int cm_pdata_check(size_t len, size_t max, char *msg, size_t msglen);
/* The active side's REQ (SIDR_REQ for UD), its private data led by ip_hdr
 * (CM_IP_HDR_LEN bytes) */
int cm_ib_connect(struct cm_call *q, const __u8 *ip_hdr);
/* The library's requests on a connection */
int cm_ib_accept(struct cm_call *q);
int cm_ib_reject(struct cm_call *q);
int cm_ib_disconnect(struct cm_call *q);
int cm_ib_establish(struct cm_call *q);
int cm_ib_notify(struct cm_call *q);

/* --- cm_rdma.c ----------------------------------------------------------- */

const char *cm_state_name(const struct cm_id *id); /* for logs, rxdp-ctl */
int cma_bind(struct cm_call *q);
int cma_resolve_addr(struct cm_call *q);
int cma_resolve_route(struct cm_call *q);
int cma_listen(struct cm_call *q);
int cma_connect(struct cm_call *q);
int cma_init_qp_attr(struct cm_call *q);
int cma_set_option(struct cm_call *q);
struct cm_id *cma_listener_find(__u16 ps, __u16 port, int ifindex,
				const struct rxdp_cm_addr *dst);
/* A request's id: its addresses and route from the request */
void cma_child_init(struct cm_id *id, struct cm_id *l, int ifindex,
		    const struct cm_ip_hdr *h, __u16 port,
		    const struct gsi_peer *from);
void cma_expired(struct cm_id *id);
/* Address queries waiting on a neighbour go on */
void cma_retry(void);

#endif /* RXDP_DAEMON_CM_ID_H */
