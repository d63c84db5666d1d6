/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The connection manager's own interfaces inside rxdpd: QP1 (gsi.c) and
 * the CM (cm.c, cm_rdma.c, cm_ib.c: cm_id.h; cm_addr.c). Everything runs
 * on the control thread.
 */
#ifndef RXDP_DAEMON_CM_H
#define RXDP_DAEMON_CM_H

#include <linux/types.h>
#include <stddef.h>

#include "daemon/rxdpd.h"

/* --- gsi.c: QP1, the General Services Interface of a device ----------- */

/* The Q_Key of QP1 (IBTA 13.4.6.3: the well-known GSI Q_Key) */
#define GSI_QKEY 0x80010000U
#define GSI_QPN 1

/* A peer QP1 as a MAD came from it, or as one is sent to it */
struct gsi_peer {
	__u8 gid[16]; /* the peer's GID (IPv4-mapped for IPv4) */
	__u8 local_gid[16]; /* ours that it came to / goes from */
	__u32 qpn; /* the peer's QP: 1 */
	__u8 traffic_class;
	__u8 hop_limit;
};

struct gsi;
/* A MAD arrived on QP1 of ifindex (the CM's cm_mad_recv) */
typedef void (*gsi_recv_fn)(int ifindex, const struct gsi_peer *from,
			    const void *mad, size_t len);
/*
 * QP1 of device l, in RTS, its receive buffers posted; what arrives goes
 * to recv. Starts the device's data path if it was not. NULL + errno,
 * with a reason in msg.
 */
struct gsi *gsi_open(struct rxdp_link *l, gsi_recv_fn recv, char *msg,
		     size_t msglen);
void gsi_close(struct gsi *g);
/*
 * Send one MAD (CM_MAD_LEN bytes) to a peer's QP1. The path is resolved
 * here; while the neighbour is being resolved the MAD waits (gsi_retry()
 * sends it). -EHOSTUNREACH, -ENOBUFS (the queue is full): the MAD is lost,
 * and the CM's retries are what recover.
 */
int gsi_send(struct gsi *g, const struct gsi_peer *to, const void *mad);
void gsi_retry(struct gsi *g);

struct gsi_stats {
	__u64 rx, tx, rx_bad, tx_drop;
};
void gsi_get_stats(struct gsi *g, struct gsi_stats *s);

/* cm_ib.c: a MAD arrived on QP1 of ifindex */
void cm_mad_recv(int ifindex, const struct gsi_peer *from, const void *mad,
		 size_t len);

/* --- cm_addr.c: routes (RTM_GETROUTE) -------------------------------- */

struct cm_route {
	int ifindex; /* the output interface */
	int local; /* the destination is an address of this host */
	__u8 src[16]; /* preferred source (IPv4 in the first 4 bytes) */
	int has_src;
};
int cm_route_open(void);
void cm_route_close(void);
/* The route to dst (family AF_INET/AF_INET6, 4 or 16 bytes), from src if
 * given (NULL: any). 0 or -errno (-ENETUNREACH, ...). */
int cm_route_get(int family, const __u8 *dst, const __u8 *src,
		 struct cm_route *r);

#endif /* RXDP_DAEMON_CM_H */
