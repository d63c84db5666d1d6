/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The client side of rxdpd's control socket: what the verbs library and the
 * command-line tools call. Every call is one request and one reply; on error
 * it returns -errno and rxdp_ctl_strerror() has the daemon's message.
 *
 * This is the contract between the daemon, the verbs library and the engine.
 * Values use libibverbs' numbering (enum ibv_port_state, enum ibv_mtu, enum
 * ibv_qp_attr_mask, ...) so the verbs library can pass them through.
 */
#ifndef RXDP_CTL_CLIENT_H
#define RXDP_CTL_CLIENT_H

#include <linux/types.h>
#include <stdint.h>

struct rxdp_ctl;

/*
 * Connect to the daemon of this network namespace (path NULL: the default
 * abstract socket; or $RXDP_SOCKET; or an explicit path). NULL + errno.
 * A path that starts with '@' names an abstract socket ("@rxdp/rxdpd" is
 * the default). The connection is blocking; calls retry on EINTR.
 */
struct rxdp_ctl *rxdp_ctl_connect(const char *path);
void rxdp_ctl_close(struct rxdp_ctl *c);
const char *rxdp_ctl_strerror(struct rxdp_ctl *c); /* last daemon message */
int rxdp_ctl_fd(struct rxdp_ctl *c); /* for poll(): async notifications */

#define RXDP_NAME_MAX 64
#define RXDP_CTL_MAX_XSKS 16
#define RXDP_CTL_MAX_TCS 4 /* service classes of a device (rxdpd --tc) */

struct rxdp_dev_info {
	char name[RXDP_NAME_MAX]; /* verbs device name, "rxdp_<ifname>" */
	char ifname[16];
	__u32 ifindex;
	__u8 mac[6];
	__u8 pad[2];
	__u64 node_guid; /* EUI-64 from the MAC, network order as ibv wants */
	__u32 port_state; /* enum ibv_port_state */
	__u32 active_mtu; /* enum ibv_mtu */
	__u32 max_mtu; /* enum ibv_mtu */
	__u32 if_mtu; /* the interface's MTU in bytes */
	__u32 gid_tbl_len;
	__u32 num_rx_queues;
	__u32 speed_mbps; /* link speed if the driver reports one, else 0 */
	__u32 max_qp;
	/*
	 * The name of the device's node in /dev/infiniband that rxdpd made
	 * (its ibv_device dev_name; empty: none), see daemon/devnode.c
	 */
	char dev_node[RXDP_NAME_MAX];
	/*
	 * The data path's AF_XDP sockets, one per RX queue (rxdpd binds them
	 * at the device's first verbs context: 0 before), and each one's
	 * mode as the kernel has it: XDP_ZEROCOPY or XDP_COPY, with
	 * XDP_USE_SG where bound multi-buffer (<linux/if_xdp.h>)
	 */
	__u32 nxsks;
	__u16 xsk_modes[RXDP_CTL_MAX_XSKS];
	/* what moves its QPs' rates: "dcqcn", "delay" or "off" (--cc-algo) */
	char cc_algo[8];
	/* its service classes (rxdpd --tc), in class order */
	__u32 ntcs;
	__u32 pad2;
	struct rxdp_ctl_tc {
		char sls[40]; /* its SLs: "0-4,6-15" */
		__u8 strict; /* strict priority; else weighted */
		__u8 weight; /* among the weighted classes */
		__u8 pad[6];
		/* packets and payload bytes its QPs sent and received */
		__u64 tx_packets, tx_bytes, rx_packets, rx_bytes;
	} tcs[RXDP_CTL_MAX_TCS];
};

int rxdp_ctl_list_devices(struct rxdp_ctl *c, struct rxdp_dev_info *out,
			  int max); /* count or -errno */
int rxdp_ctl_query_device(struct rxdp_ctl *c, __u32 ifindex,
			  struct rxdp_dev_info *out);

/* enum ibv_gid_type's RoCE v2 value */
#define RXDP_GID_TYPE_ROCE_V2 2

struct rxdp_gid_entry {
	__u8 gid[16]; /* all zero for an empty slot */
	__u32 index;
	__u32 gid_type; /* RXDP_GID_TYPE_ROCE_V2 */
};

/* A zeroed gid for an index that exists but is empty, -EINVAL past the end */
int rxdp_ctl_query_gid(struct rxdp_ctl *c, __u32 ifindex, __u32 index,
		       struct rxdp_gid_entry *out);
int rxdp_ctl_query_pkey(struct rxdp_ctl *c, __u32 ifindex, __u32 index,
			__u16 *pkey);

/*
 * The addressing part of ibv_ah_attr (RoCE: is_global is always 1), and
 * what the daemon resolves it to: the headers the engine puts on the wire.
 */
struct rxdp_ah {
	__u8 dgid[16];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl;
};

struct rxdp_path {
	__u8 smac[6];
	__u8 dmac[6];
	__u16 vlan; /* 0: untagged */
	__u8 ipv6; /* 1: IPv6 headers, 0: IPv4 (IPv4-mapped GIDs) */
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 sl; /* the AH's service level: the QP's class (rxdpd --tc) */
	__u8 pad[2];
	__u8 sip[16]; /* IPv4 in the last 4 bytes when !ipv6 */
	__u8 dip[16];
	__u32 flow_label;
	__u16 udp_sport; /* per-QP entropy, RoCEv2 A17.3.4 */
	__u16 pad2;
};

/* Resolve an address (ibv_create_ah): GID -> MAC via the neighbour table */
int rxdp_ctl_resolve(struct rxdp_ctl *c, __u32 ifindex,
		     const struct rxdp_ah *ah, struct rxdp_path *out);

/* ibv_qp_attr, the fields the daemon's state machine checks and keeps */
struct rxdp_qp_attr {
	__u32 qp_state; /* enum ibv_qp_state */
	__u32 cur_qp_state;
	__u32 path_mtu; /* enum ibv_mtu */
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
	__u16 pkey_index;
	__u8 sq_draining;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 en_sqd_async_notify;
	__u8 pad;
	struct rxdp_ah ah; /* ah_attr */
};

struct rxdp_qp_info {
	__u32 qpn;
	__u32 qp_type; /* enum ibv_qp_type: RC, UC, UD */
	__u32 owner_pid;
	__u32 pad;
	struct rxdp_qp_attr attr; /* everything set so far */
	struct rxdp_path path; /* RC/UC after RTR: the resolved path */
};

/*
 * Validate and apply one transition (IBTA 10.3, attribute masks per
 * transport). -EINVAL and nothing changed on an illegal transition or a
 * missing/extra attribute. On success *info (if not NULL) holds the QP as it
 * now is, including the resolved path after RTR.
 */
int rxdp_ctl_modify_qp(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
		       const struct rxdp_qp_attr *attr, __u32 attr_mask,
		       struct rxdp_qp_info *info);
int rxdp_ctl_query_qp(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
		      struct rxdp_qp_info *info);

/* multi-buffer AF_XDP (Linux 6.6; not in Debian 12's UAPI headers) */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0) /* xdp_desc.options: the packet goes on */
#endif

/*
 * A verbs context on this connection (one per connection): rxdpd runs its
 * queues. mem_fd: this process's /proc/self/mem, opened read-write (rxdpd
 * moves payload through it, and can reach nothing else of the process).
 * The fds back: [0] the doorbell (an eventfd: write 1 to wake the data
 * path, see common/hca.h), [1] the device page (a memfd to map read-only),
 * [2] the read end of the async event pipe (struct rxdp_hca_event records).
 */
struct rxdp_ctx_fds {
	int doorbell;
	int dev_page;
	int async;
};
int rxdp_ctl_ctx_open(struct rxdp_ctl *c, __u32 ifindex, int mem_fd,
		      struct rxdp_ctx_fds *out);

/*
 * One verbs object of the context, as a request and its reply carry it
 * (the fields each request uses are named in common/ctl.h's types).
 */
struct rxdp_ctl_obj {
	__u32 handle; /* the object (0: none) */
	__u32 pd; /* its PD's handle (MR, SRQ, QP, AH) */
	__u64 cookie; /* the library's pointer, given back in events */
	/* MR */
	__u64 addr;
	__u64 length;
	__u64 iova;
	__u32 access;
	__u32 lkey;
	__u32 rkey;
	/* CQ: cqe asked for, its size in the reply; its channel (0: none) */
	__u32 cqe;
	__u32 channel;
	/* QP */
	__u32 qp_type;
	__u32 qpn;
	__u32 send_cq;
	__u32 recv_cq;
	__u32 srq;
	__u32 sq_sig_all;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	/* SRQ (max_recv_wr, max_recv_sge above), and its modify mask */
	__u32 srq_limit;
	__u32 attr_mask;
	/* the memfd of the queues (reply): bytes, ring offsets and strides */
	__u64 mem_size;
	__u64 sq_off;
	__u64 rq_off;
	__u32 sq_stride;
	__u32 rq_stride;
	/* destroy replies: events sent about the object, in all */
	__u32 comp_events;
	__u32 async_events;
	/* MW_ALLOC: enum ibv_mw_type (the R_Key comes back in rkey) */
	__u32 mw_type;
	/* CQ_CREATE: RXDP_CTL_CQ_F_* */
	__u32 cq_flags;
};

/* The CQ keeps completion timestamps after its ring (common/hca.h) */
#define RXDP_CTL_CQ_F_TIMESTAMP 0x1

/*
 * Send one object request (type RXDP_CTL_PD_ALLOC ... AH_DESTROY) with *o,
 * and *o becomes the reply's object. ah: AH_CREATE's address (else NULL).
 * *fd (if not NULL) gets the fd the reply carries, or -1. 0 or -errno.
 */
int rxdp_ctl_obj(struct rxdp_ctl *c, __u16 type, struct rxdp_ctl_obj *o,
		 const struct rxdp_ah *ah, int *fd);
/* The same with an fd sent along (MEM_SHARE's memfd); no fd comes back */
int rxdp_ctl_obj_fd(struct rxdp_ctl *c, __u16 type, struct rxdp_ctl_obj *o,
		    int in_fd);

/* For tools: every QP the daemon knows, with state and owner */
int rxdp_ctl_list_qps(struct rxdp_ctl *c, __u32 ifindex,
		      struct rxdp_qp_info *out, int max); /* count or -errno */

/*
 * Additions for tools (rxdp-ctl): per-QP receive counters, summed over CPUs,
 * and the QP's current PSNs,
 * in the same order as the QPs of rxdp_ctl_list_qps_stats(), and the XDP
 * program's verdict counters (enum rxdp_verdict) of one device.
 */
struct rxdp_ctl_qp_stats {
	__u32 ifindex;
	__u32 qpn;
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 rx_drops;
	/* the live sequence state in qp_psn, as the engine keeps it */
	__u32 epsn;
	__u32 una_psn;
	__u32 next_psn;
	__u32 psn_flags;
	/*
	 * Congestion (userspace/engine/README.md "Congestion"): the rate,
	 * DCQCN's alpha/1024, the requester's smoothed RTT (0: none yet)
	 */
	__u64 cc_rate_kbps;
	__u32 cc_alpha;
	__u32 srtt_us;
	/* its service class: its path's SL's (rxdp_dev_info.tcs[tc]) */
	__u32 tc;
	/*
	 * the engine of its device that serves it (rxdpd --engines); padding
	 * before, always 0, which older rxdpds still send: engine 0
	 */
	__u32 engine;
};

int rxdp_ctl_list_qps_stats(struct rxdp_ctl *c, __u32 ifindex,
			    struct rxdp_qp_info *out,
			    struct rxdp_ctl_qp_stats *stats,
			    int max); /* count or -errno */
int rxdp_ctl_query_stats(struct rxdp_ctl *c, __u32 ifindex, __u64 *counters,
			 int max); /* number of counters or -errno */
/*
 * The transport's counters (enum rxdp_hwc, common/hw_counters.h) of a
 * device (qpn 0) or of one QP: how many, or -errno
 */
int rxdp_ctl_query_counters(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
			    __u64 *counters, int max);

/*
 * Asynchronous events (additive): after rxdp_ctl_subscribe(ifindex), the
 * daemon sends the device's events on this connection: IBV_EVENT_PORT_ACTIVE
 * and IBV_EVENT_PORT_ERR when the link goes up or down, IBV_EVENT_GID_CHANGE
 * when the GID table changes, IBV_EVENT_DEVICE_FATAL when rxdp is detached
 * from the interface (the device is gone). Events that arrive while a call
 * waits for its reply are kept (up to RXDP_CTL_EVENT_QUEUE; older ones are
 * dropped first and counted in .dropped). rxdp_ctl_fd() polls readable when
 * one may be there; rxdp_ctl_get_event() never blocks: 1 and *ev, 0 if none,
 * or -errno.
 */
#define RXDP_CTL_EVENT_QUEUE 64

struct rxdp_ctl_event {
	__u32 ifindex;
	__u32 event_type; /* enum ibv_event_type */
	__u32 port_num; /* 1 for port events, else 0 */
	__u32 dropped; /* events lost before this one (queue full) */
};

int rxdp_ctl_subscribe(struct rxdp_ctl *c, __u32 ifindex);
int rxdp_ctl_get_event(struct rxdp_ctl *c, struct rxdp_ctl_event *ev);

#endif /* RXDP_CTL_CLIENT_H */
