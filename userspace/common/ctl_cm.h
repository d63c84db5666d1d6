/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The connection manager's part of rxdpd's control protocol, shared by the
 * daemon (userspace/daemon/cm.c) and the drop-in librdmacm.so.1
 * (userspace/rdmacm). rxdpd is the device: it owns QP1 and speaks the IBTA
 * CM on the wire; the library is what /dev/infiniband/rdma_cm is to
 * rdma-core's librdmacm.
 *
 * Requests: RXDP_CTL_CM with one RXDP_CTL_A_CM attribute (struct
 * rxdp_ctl_cm, op says what to do); the reply carries the same struct back,
 * filled in. RXDP_CM_CHANNEL_CREATE's reply also carries a file descriptor:
 * the read end of the channel's event socket (SOCK_SEQPACKET), on which
 * rxdpd writes one struct rxdp_cm_event per event. That fd is the
 * application's rdma_event_channel.fd: it polls and blocks like rdma-core's.
 *
 * Objects (channels, ids) belong to the connection that made them and go
 * with it: an id that was connected sends a DREQ, one that was being
 * connected to a REJ.
 */
#ifndef RXDP_COMMON_CTL_CM_H
#define RXDP_COMMON_CTL_CM_H

#include <linux/types.h>

#include "common/ctl_client.h"

enum rxdp_cm_op {
	RXDP_CM_CHANNEL_CREATE = 1, /* -> channel + fd */
	RXDP_CM_CHANNEL_DESTROY, /* channel (its ids go with it) */
	RXDP_CM_CREATE_ID, /* channel, ps, qp_type -> id */
	RXDP_CM_DESTROY_ID, /* id */
	RXDP_CM_MIGRATE_ID, /* id, channel */
	RXDP_CM_BIND, /* id, src -> info */
	RXDP_CM_RESOLVE_ADDR, /* id, src (family 0: none), dst, timeout_ms */
	RXDP_CM_RESOLVE_ROUTE, /* id, timeout_ms */
	RXDP_CM_LISTEN, /* id, backlog -> info */
	RXDP_CM_CONNECT, /* id, conn, private data */
	RXDP_CM_ACCEPT, /* id, conn, private data */
	RXDP_CM_REJECT, /* id, reason (0: consumer defined), private data */
	RXDP_CM_DISCONNECT, /* id */
	RXDP_CM_ESTABLISH, /* id: active, after CONNECT_RESPONSE: send RTU */
	RXDP_CM_NOTIFY, /* id, value = enum ibv_event_type (COMM_EST) */
	RXDP_CM_INIT_QP_ATTR, /* id, value = qp_state -> qp_attr, attr_mask */
	RXDP_CM_QUERY, /* id -> info */
	RXDP_CM_SET_OPTION, /* id, level, optname, value */
	/*
	 * channel, event: write an event the library read back to a channel
	 * (rdma_migrate_id moves the unread events of the id it migrates,
	 * as the kernel's does). Only for the client's own ids and channels.
	 */
	RXDP_CM_REPOST,
	/*
	 * id (a cursor, 0 first) -> the next id by handle, for tools: id,
	 * ps, qp_type, value = its owner's pid (0: closing, no owner), info,
	 * and its state's name as a string in private_data. Root sees every
	 * id, another user its own. -ENOENT past the last.
	 */
	RXDP_CM_NEXT,
	RXDP_CM_OP_MAX,
};

/* An address as sockaddr_in/in6 have it, compact (ports network order) */
struct rxdp_cm_addr {
	__u16 family; /* AF_INET, AF_INET6, 0: none */
	__be16 port;
	__u32 scope_id;
	__u32 flowinfo;
	__u8 addr[16]; /* IPv4: the first four bytes */
};

/* What an id is bound to, and its route (ibv_sa_path_rec's fields) */
struct rxdp_cm_info {
	__u32 ifindex; /* the device (0: none, a wildcard listener) */
	__u32 state; /* rxdpd's state, for debugging */
	struct rxdp_cm_addr src;
	struct rxdp_cm_addr dst;
	__u8 sgid[16];
	__u8 dgid[16];
	__u16 pkey;
	__u8 sgid_index;
	__u8 mtu; /* enum ibv_mtu */
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 packet_life_time;
	__u8 rate;
	__u32 flow_label;
	__u8 route_resolved;
	__u8 pad[3];
};

/* rdma_conn_param and rdma_ud_param, as requests and events carry them */
struct rxdp_cm_conn {
	__u32 qp_num;
	__u32 qkey; /* UD */
	__u8 responder_resources;
	__u8 initiator_depth;
	__u8 flow_control;
	__u8 retry_count;
	__u8 rnr_retry_count;
	__u8 srq;
	__u8 private_data_len;
	__u8 pad;
	__u32 ece_vendor_id;
	__u32 ece_options;
};

#define RXDP_CM_PDATA_MAX 224

/* One event, as rxdpd writes it to a channel's event socket */
struct rxdp_cm_event {
	__u32 id; /* the id; CONNECT_REQUEST: the new id */
	__u32 listen_id; /* CONNECT_REQUEST: the listening id */
	__u32 event; /* enum rdma_cm_event_type */
	__s32 status;
	struct rxdp_cm_conn conn;
	/* UD (ESTABLISHED of an SIDR exchange): the peer, for ah_attr */
	__u8 ud_valid;
	__u8 pad[3];
	struct rxdp_cm_info info; /* the id as it is now */
	__u8 private_data[RXDP_CM_PDATA_MAX];
};

struct rxdp_ctl_cm {
	__u32 op; /* enum rxdp_cm_op */
	__u32 id;
	__u32 channel;
	__u32 ps; /* enum rdma_port_space */
	__u32 qp_type; /* enum ibv_qp_type */
	__u32 timeout_ms;
	__u32 backlog;
	__u32 reason; /* REJECT */
	__u32 level; /* SET_OPTION */
	__u32 optname;
	__u64 value; /* SET_OPTION's value, INIT_QP_ATTR's state, ... */
	__u32 attr_mask; /* INIT_QP_ATTR's reply: enum ibv_qp_attr_mask */
	__u32 pad;
	struct rxdp_cm_addr src;
	struct rxdp_cm_addr dst;
	struct rxdp_cm_conn conn;
	struct rxdp_cm_info info;
	struct rxdp_qp_attr qp_attr;
	__u8 private_data[RXDP_CM_PDATA_MAX];
	struct rxdp_cm_event event; /* REPOST */
};

/* rxdp_ctl_cm(): one CM request, *cm replaced by the reply; *fd (if not
 * NULL) gets the fd the reply carries or -1. 0 or -errno. */
struct rxdp_ctl;
int rxdp_ctl_cm(struct rxdp_ctl *c, struct rxdp_ctl_cm *cm, int *fd);

#endif /* RXDP_COMMON_CTL_CM_H */
