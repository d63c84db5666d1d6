/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The wire protocol of rxdpd's control socket, shared by the daemon and the
 * client library (userspace/common/ctl_client.c).
 *
 * Transport: a SOCK_SEQPACKET unix socket, by default the abstract name
 * "\0rxdp/rxdpd" (scoped to the network namespace), one message per
 * request and one per reply. File descriptors travel as SCM_RIGHTS.
 *
 * A message is a netlink-style message built with libmnl:
 *
 *   struct nlmsghdr    nlmsg_len = whole message, nlmsg_type = enum
 *                      rxdp_ctl_type, nlmsg_seq = the request's sequence
 *                      (the reply repeats it), nlmsg_flags = RXDP_CTL_F_*
 *   struct rxdp_ctl_hdr  protocol version, and in replies 0 or -errno
 *   attributes         (struct nlattr, 4-byte aligned) enum rxdp_ctl_attr
 *
 * Every reply carries RXDP_CTL_A_MSG when the request failed: a sentence a
 * person can act on. Structs travel as binary attributes of exactly their
 * size (the version number changes whenever one of them changes); scalars as
 * u32 attributes.
 */
#ifndef RXDP_CTL_H
#define RXDP_CTL_H

#include <linux/types.h>
#include <linux/netlink.h>
#include <stddef.h>

#include "common/ctl_client.h"

/*
 * 5: rxdp_dev_info.cc_algo, rxdp_ctl_qp_stats.srtt_us; 6: rxdp_dev_info's
 * service classes, rxdp_path.sl, rxdp_ctl_qp_stats.tc
 */
#define RXDP_CTL_VERSION 6

/* Abstract socket name (a NUL byte is put in front of it) */
#define RXDP_CTL_ABSTRACT_NAME "rxdp/rxdpd"
/* Environment variable overriding the socket; "@name" means abstract */
#define RXDP_CTL_ENV "RXDP_SOCKET"

/* Largest message either side sends or accepts */
#define RXDP_CTL_MSG_MAX 65536
/* Most file descriptors in one message (CTX_OPEN's reply) */
#define RXDP_CTL_MAX_FDS 4

/* The GID table length every device reports; empty slots are zero */
#define RXDP_GID_TBL_LEN 16
/* The P_Key table: one entry, the default full-membership P_Key */
#define RXDP_PKEY_TBL_LEN 1
#define RXDP_DEFAULT_PKEY 0xffff

struct rxdp_ctl_hdr {
	__u16 version; /* RXDP_CTL_VERSION */
	__u16 pad;
	__s32 error; /* replies: 0 or -errno */
};

/* nlmsg_flags */
#define RXDP_CTL_F_REPLY 0x1 /* a reply to the request with this seq */
#define RXDP_CTL_F_NOTIFY 0x2 /* unsolicited, from the daemon (seq 0) */

enum rxdp_ctl_type {
	RXDP_CTL_UNSPEC = NLMSG_MIN_TYPE, /* keep clear of NLMSG_ERROR & co */
	RXDP_CTL_LIST_DEVICES, /* -> DEV_INFO* */
	RXDP_CTL_QUERY_DEVICE, /* IFINDEX -> DEV_INFO */
	RXDP_CTL_QUERY_GID, /* IFINDEX, INDEX -> GID */
	RXDP_CTL_QUERY_PKEY, /* IFINDEX, INDEX -> PKEY */
	RXDP_CTL_RESOLVE, /* IFINDEX, AH -> PATH */
	RXDP_CTL_CREATE_QP, /* retired: a QP is made in a context (QP_CREATE) */
	RXDP_CTL_MODIFY_QP, /* IFINDEX, QPN, QP_ATTR, ATTR_MASK -> QP_INFO */
	RXDP_CTL_QUERY_QP, /* IFINDEX, QPN -> QP_INFO (the caller's user's
			      QPs; root: all) */
	RXDP_CTL_DESTROY_QP, /* retired (QP_DESTROY) */
	RXDP_CTL_CTX_OPEN, /* IFINDEX + the client's /proc/self/mem fd ->
			      fds: doorbell eventfd, device page memfd
			      (read-only), async event pipe */
	RXDP_CTL_LIST_QPS, /* IFINDEX (0: all), QPN (start after) ->
			      QP_INFO*, QP_STATS* (same order), MORE; only
			      the caller's user's QPs unless it is root */
	RXDP_CTL_QUERY_STATS, /* IFINDEX -> COUNTERS (enum rxdp_verdict) */
	RXDP_CTL_SUBSCRIBE, /* IFINDEX: send this device's events */
	RXDP_CTL_EVENT, /* daemon -> client, F_NOTIFY, seq 0: EVENT */
	/*
	 * The objects of the connection's context (after CTX_OPEN), each
	 * request and reply one OBJ (struct rxdp_ctl_obj); CQ, SRQ and QP
	 * replies carry the memfd of their queues, CHANNEL_CREATE the read
	 * end of the channel's event pipe.
	 */
	RXDP_CTL_PD_ALLOC,
	RXDP_CTL_PD_FREE,
	RXDP_CTL_MR_REG,
	RXDP_CTL_MR_REREG,
	RXDP_CTL_MR_DEREG,
	RXDP_CTL_CHANNEL_CREATE,
	RXDP_CTL_CHANNEL_DESTROY,
	RXDP_CTL_CQ_CREATE,
	RXDP_CTL_CQ_RESIZE, /* OBJ (cqe) -> OBJ + the new ring's memfd */
	RXDP_CTL_CQ_DESTROY,
	RXDP_CTL_SRQ_CREATE,
	RXDP_CTL_SRQ_MODIFY,
	RXDP_CTL_SRQ_DESTROY,
	RXDP_CTL_QP_CREATE, /* OBJ -> OBJ (qpn, granted caps, layout) */
	RXDP_CTL_QP_DESTROY,
	RXDP_CTL_AH_CREATE, /* OBJ + AH -> OBJ */
	RXDP_CTL_AH_DESTROY,
	RXDP_CTL_MW_ALLOC, /* OBJ (pd, mw_type) -> OBJ (handle, rkey) */
	RXDP_CTL_MW_DEALLOC,
	/*
	 * IFINDEX [, QPN] -> COUNTERS: the transport's counters of the device
	 * or of one QP (its user's, or root's), in the order of
	 * enum rxdp_hwc (common/hw_counters.h)
	 */
	RXDP_CTL_QUERY_COUNTERS,
	/* The connection manager (common/ctl_cm.h): CM -> CM (+ an fd) */
	RXDP_CTL_CM,
	/*
	 * OBJ (addr, length) + a memfd -> OBJ (handle): the client's memory
	 * [addr, addr+length) is that memfd's first length bytes from now on
	 * (its library re-backed registered memory with it); rxdpd maps it
	 * too and moves payload there with a memcpy (engine/mem.c)
	 */
	RXDP_CTL_MEM_SHARE,
	RXDP_CTL_MEM_UNSHARE, /* OBJ (handle) -> OBJ */
	/*
	 * ibv_attach_mcast / ibv_detach_mcast: OBJ (handle: the QP) + AH
	 * (dgid: the group's GID) -> OBJ
	 */
	RXDP_CTL_MCAST_ATTACH,
	RXDP_CTL_MCAST_DETACH,
	/*
	 * INDEX (the state version the successor reads) -> an empty reply,
	 * then the running rxdpd's state and descriptors in messages of
	 * daemon/takeover.c's own, and it exits (root or rxdpd's user only)
	 */
	RXDP_CTL_TAKEOVER,
	RXDP_CTL_TYPE_MAX,
};

enum rxdp_ctl_attr {
	RXDP_CTL_A_UNSPEC,
	RXDP_CTL_A_MSG, /* string: the daemon's explanation */
	RXDP_CTL_A_IFINDEX, /* u32 */
	RXDP_CTL_A_INDEX, /* u32: GID or P_Key index */
	RXDP_CTL_A_QPN, /* u32 */
	RXDP_CTL_A_QP_TYPE, /* u32, enum ibv_qp_type */
	RXDP_CTL_A_ATTR_MASK, /* u32, enum ibv_qp_attr_mask */
	RXDP_CTL_A_PKEY, /* u32 (a P_Key in the low 16 bits) */
	RXDP_CTL_A_DEV_INFO, /* struct rxdp_dev_info */
	RXDP_CTL_A_GID, /* struct rxdp_gid_entry */
	RXDP_CTL_A_AH, /* struct rxdp_ah */
	RXDP_CTL_A_PATH, /* struct rxdp_path */
	RXDP_CTL_A_QP_ATTR, /* struct rxdp_qp_attr */
	RXDP_CTL_A_QP_INFO, /* struct rxdp_qp_info */
	RXDP_CTL_A_OBJ, /* struct rxdp_ctl_obj */
	RXDP_CTL_A_QP_STATS, /* struct rxdp_ctl_qp_stats */
	RXDP_CTL_A_COUNTERS, /* __u64[n], n <= RXDP_CTL_MAX_COUNTERS */
	RXDP_CTL_A_MORE, /* u32: a list reply was cut short, ask again */
	RXDP_CTL_A_EVENT, /* struct rxdp_ctl_event */
	RXDP_CTL_A_CM, /* struct rxdp_ctl_cm (common/ctl_cm.h) */
	RXDP_CTL_A_MAX,
};

#define RXDP_CTL_MAX_COUNTERS 64

/* A decoded message: pointers into the buffer it was decoded from */
struct rxdp_ctl_msg {
	const struct nlmsghdr *nlh;
	const struct rxdp_ctl_hdr *hdr;
	const struct nlattr *tb[RXDP_CTL_A_MAX];
};

/*
 * Check a received message and index its attributes. Rejects (-EBADMSG,
 * -EPROTO for a version mismatch) anything whose lengths do not add up,
 * an unknown or repeated attribute (repeats are allowed only for the list
 * attributes when allow_lists), an attribute of the wrong size, a string
 * without its NUL. Never reads outside buf[0..len).
 */
int rxdp_ctl_decode(const void *buf, size_t len, struct rxdp_ctl_msg *msg,
		    int allow_lists);
/* Validate one attribute against its type's policy. 0/-EBADMSG */
int rxdp_ctl_attr_check(const struct nlattr *attr);

/* Start a message in buf (RXDP_CTL_MSG_MAX bytes) */
struct nlmsghdr *rxdp_ctl_msg_start(void *buf, __u16 type, __u16 flags,
				    __u32 seq, __s32 error);

/*
 * Send one message with fds attached; 0/-errno. Receive one message into
 * buf (RXDP_CTL_MSG_MAX bytes) with at most maxfds fds (the rest are closed
 * and the call fails with -EMSGSIZE, as does a message longer than the
 * buffer); returns its length or -errno (0: the peer closed).
 */
int rxdp_ctl_sendmsg(int fd, const struct nlmsghdr *nlh, const int *fds,
		     int nfds);
ssize_t rxdp_ctl_recvmsg(int fd, void *buf, size_t len, int *fds, int *nfds,
			 int maxfds);

/* Fill a sockaddr_un for path (NULL: the default abstract name). */
struct sockaddr_un;
int rxdp_ctl_sockaddr(const char *path, struct sockaddr_un *sun,
		      unsigned int *sunlen);

const char *rxdp_ctl_type_name(unsigned int type);

#endif /* RXDP_CTL_H */
