/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rxdpd's internal state: links (from rtnetlink), the devices among them
 * (links whose rxdp pin directory exists), their GID tables, neighbours, QPs
 * and clients. One thread, one epoll loop: nothing here is locked.
 */
#ifndef RXDP_DAEMON_RXDPD_H
#define RXDP_DAEMON_RXDPD_H

#include <linux/types.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/ctl.h"
#include "daemon/mtu.h"
#include "common/ctl_client.h"
#include "engine/engine.h"
#include "rxdp/maps.h"
#include "rxdp/params.h"

struct rxdp_client;
struct hca_dev; /* hca.c: a device's data path (UMEM, sockets, engine) */
struct hca_ctx; /* hca.c: a client's verbs context and its objects */
struct hobj; /* hca.c: one verbs object */
struct cm_client; /* cm.c: a client's event channels and CM ids */
struct rxdp_engine;
struct rxdp_eah;

/* What an epoll event is about */
enum ep_kind {
	EP_LISTEN = 1,
	EP_NETLINK,
	EP_TIMER,
	EP_CLIENT,
	EP_CM, /* cm.c's fds: ptr is a struct cm_ep */
};
struct ep_tag {
	enum ep_kind kind;
	void *ptr;
};

struct rxdp_addr {
	struct rxdp_addr *next;
	__u8 family; /* AF_INET / AF_INET6 */
	__u8 prefixlen;
	__u8 ip[16]; /* IPv4 in the first 4 bytes */
	int gid_index; /* -1 when it has no GID slot (table full, or index 0) */
	unsigned int mark; /* resync generation */
};

struct rxdp_neigh {
	struct rxdp_neigh *next;
	int ifindex;
	__u8 family;
	__u8 ip[16];
	__u8 mac[6];
	__u16 state; /* NUD_* */
	unsigned int mark;
};

/*
 * A QP as the daemon knows it: what identifies it, whose it is, and its
 * engine QP, which is the QP (state, attributes, path: engine/qp.c)
 */
struct rxdp_qp {
	__u32 qpn;
	uid_t uid; /* charged to this user */
	__u32 qp_type; /* enum ibv_qp_type */
	int ifindex;
	struct rxdp_client *owner;
	struct hobj *hqp; /* its objects in hca.c (NULL: QP1, or being made) */
};

/* The pinned maps of a device, opened from its pin directory */
struct rxdp_maps {
	int qp_ctx;
	int qp_psn;
	int qp_stats;
	int xsks;
	int stats;
	int mcast; /* multicast groups with members (the engine writes it) */
	struct rxdp_qp_psn *psn; /* qp_psn mmapped, RXDP_MAX_QP entries */
	size_t psn_len;
	ino_t ino; /* inode of the qp_ctx pin, to notice a re-attach */
};

struct rxdp_dev {
	struct rxdp_maps maps;
	struct rxdp_engine_maps emaps; /* the fds the engine writes through */
	struct rxdp_qp *qps[RXDP_MAX_QP]; /* by QPN & RXDP_QP_INDEX_MASK */
	__u16 qp_gen[RXDP_MAX_QP];
	__u32 qp_next; /* where the QPN allocator looks first */
	__u32 nqps;
	struct hca_dev *hca; /* made at the device's first context */
	__u64 link_downed; /* the port went down (hw counter link_downed) */
	bool xdp_missing; /* no XDP program on the link any more */
	char dp_err[160]; /* why its data path (sockets, engine) is not up */
	bool port_active; /* as last told to clients (dev_port_update) */
	char dev_node[RXDP_NAME_MAX]; /* in /dev/infiniband (devnode.c) */
};

struct rxdp_link {
	struct rxdp_link *next;
	int ifindex;
	char ifname[IF_NAMESIZE];
	__u8 mac[6];
	unsigned int flags; /* IFF_* */
	__u32 mtu;
	__u32 num_rx_queues;
	__u32 speed_mbps;
	unsigned int mark;
	struct rxdp_addr *addrs;
	/* GID table (index 0: the link-local GID from the MAC) */
	__u8 gids[RXDP_GID_TBL_LEN][16];
	bool gid_used[RXDP_GID_TBL_LEN];

	/* Set when the link is an rxdp device (its pin directory exists) */
	struct rxdp_dev *dev;
	/* Its pin directory exists but the maps did not open: -errno, since */
	int maps_err;
	long maps_err_since;
};

struct rxdp_client {
	struct rxdp_client *next;
	int fd; /* -1 once released */
	pid_t pid;
	uid_t uid;
	bool allowed; /* may open a context (--group) */
	struct hca_ctx *ctx; /* its verbs context, if it opened one */
	long last_active; /* ms: connections idle without a context go */
	bool dead;
	struct ep_tag tag;
	/* devices whose events this client asked for (rxdp_ctl_subscribe) */
	int subs[16];
	int nsubs;
	/* its connection manager objects (cm.c), if it made any */
	struct cm_client *cm;
	/* a request parked while its destination is resolved */
	void *pend;
	size_t pend_len;
	long pend_deadline;
};

struct rxdpd {
	int epfd;
	int listen_fd;
	int nl_fd;
	int timer_fd;
	unsigned int nl_seq;
	unsigned int mark;
	struct rxdp_link *links;
	struct rxdp_neigh *neighs;
	struct rxdp_client *clients;
	int ncpus;
	/* options */
	int fifo_prio; /* SCHED_FIFO priority of data-path threads, 0: none */
	cpu_set_t cpus; /* where data-path threads run, if ncpus_set */
	bool ncpus_set;
	bool poll; /* --poll: data-path threads spin, never sleep */
	int tx_thread; /* --tx-thread: RXDPD_TXT_* */
	__u16 xsk_mode; /* --xsk: XDP_COPY, XDP_ZEROCOPY, 0 the driver's best */
	int engines; /* --engines: per device (0, auto: a queue's, up to the CPUs) */
	gid_t group; /* --group: who may use the devices, with root */
	bool group_set;
	__u32 mtu_cap; /* the largest path MTU the data path carries */
	__u64 user_mem; /* --user-mem: rxdpd's memory a user may hold */
	const char *no_ecn; /* --no-ecn: interfaces sending without ECT(0) */
	bool resync_needed;
};

extern struct rxdpd rxdpd;

/* --tx-thread: a TX thread per engine, where CPUs are spare, always or never */
enum {
	RXDPD_TXT_AUTO,
	RXDPD_TXT_ON,
	RXDPD_TXT_OFF
};
/*
 * auto: on where the data path may use this many CPUs per engine (its two
 * threads and the applications'); --help and rxdpd.8 say 4
 */
#define RXDPD_TXT_CPUS_PER_ENGINE 4

/*
 * Slots no group of users can take from the rest (connections, CM channels
 * and ids): may a user holding mine of them take one more, with all held
 * in all? Root until max; a user holding none until max - max / 16 (a
 * share kept for root); any other until max - max / 8 (a share kept for
 * users who hold none) and per_user.
 */
static inline bool rxdpd_slot_ok(uid_t uid, unsigned int mine, unsigned int all,
				 unsigned int max, unsigned int per_user)
{
	if (!uid)
		return all < max;
	if (!mine)
		return all < max - max / 16;
	return all < max - max / 8 && mine < per_user;
}

/*
 * Data-path threads run SCHED_FIFO by default, as a softirq would: a packet
 * is served within microseconds even when every core runs an application
 * that spins. They block whenever they have no work (AF_XDP need_wakeup,
 * the doorbell), so the RT throttle never bites.
 */
#define RXDPD_FIFO_DEFAULT 10

/* rtnl.c: links, addresses, neighbours */
int rtnl_open(void);
int rtnl_resync(void);
void rtnl_event(void);
/* One datagram of rtnetlink messages, as the socket delivers them */
void rtnl_feed(const void *buf, size_t len);
struct rxdp_link *link_by_index(int ifindex);
struct rxdp_neigh *neigh_find(int ifindex, int family, const __u8 *ip);
int rtnl_neigh_lookup(int ifindex, int family, const __u8 *ip, __u8 *mac,
		      long *deadline_ms, int timeout_ms);
void link_gid_rebuild(struct rxdp_link *l);

/* dev.c: devices = links with maps */
void dev_check(struct rxdp_link *l);
void dev_check_all(void);
void dev_release(struct rxdp_link *l);
void dev_info_fill(const struct rxdp_link *l, struct rxdp_dev_info *out);
/* Port ACTIVE: link up with carrier, and the XDP program still attached */
bool dev_port_active(const struct rxdp_link *l);
/* The port's state changed? Then tell its clients (PORT_ACTIVE/PORT_ERR) */
void dev_port_update(struct rxdp_link *l);
/* The device's data path failed (why) or is up (NULL): the port follows */
void dev_datapath_err(struct rxdp_link *l, const char *why);

/* health.c: what keeps rxdpd from serving, said where an operator looks */
#define RXDP_HEALTH_TEXT_MAX 500 /* fits a reply's RXDP_CTL_A_MSG */
void health_init(int bpffs_ret); /* at start: capabilities, the bpffs */
void health_update(void); /* after link events and every second */
const char *health_text(void); /* one line per problem; "" when none */

/* devnode.c: /dev/infiniband nodes for programs that look for them */
void devnode_create(struct rxdp_link *l);
void devnode_remove(struct rxdp_link *l);
void devnode_clean(void);

/* qp.c */
int qp_create(struct rxdp_link *l, struct rxdp_client *c, __u32 qp_type,
	      __u32 *qpn, char *msg, size_t msglen);
/* -EINPROGRESS: the path is being resolved, call again (same *deadline) */
int qp_modify(struct rxdp_link *l, struct rxdp_client *c, __u32 qpn,
	      const struct rxdp_qp_attr *attr, __u32 mask, long *deadline,
	      char *msg, size_t msglen);
int qp_destroy(struct rxdp_link *l, struct rxdp_qp *qp);
struct rxdp_qp *qp_lookup(struct rxdp_link *l, __u32 qpn);
/* May this client see the QP (list, query, an error naming its owner)? */
/*
 * mcast.c: the interface's memberships of the multicast groups its QPs
 * attached to (IGMP/MLD, and the Ethernet multicast address the NIC must
 * accept), one socket per group kept while the group has members
 */
struct mcast_join;
void mcast_join(struct mcast_join **list, int ifindex, const __u8 *gid);
void mcast_leave(struct mcast_join **list, const __u8 *gid);
void mcast_leave_all(struct mcast_join **list);

bool qp_visible(const struct rxdp_client *c, const struct rxdp_qp *qp);
void qp_info_fill(const struct rxdp_qp *qp, struct rxdp_qp_info *out);
int qp_stats_read(struct rxdp_link *l, __u32 qpn, struct rxdp_ctl_qp_stats *s);
/* DCQCN's current rate (kbit/s) and alpha of a QP of the data path */
void hca_qp_cc(struct rxdp_qp *qp, __u64 *rate_kbps, __u32 *alpha);
int path_resolve(struct rxdp_link *l, const struct rxdp_ah *ah, __u32 lqpn,
		 __u32 rqpn, struct rxdp_path *out, long *deadline, char *msg,
		 size_t msglen);
void qp_clean_all(struct rxdp_link *l);
/* A neighbour's MAC changed: the paths of the QPs that lead to it follow */
void qp_paths_update(int ifindex, int family, const __u8 *ip, const __u8 *mac);
/* The device's own QPs (QP1): their numbers held, no owner */
int qp_create_special(struct rxdp_link *l, __u32 qpn);
void qp_destroy_special(struct rxdp_link *l, __u32 qpn);

/* hca.c: the data path */
int hca_ctx_open(struct rxdp_client *c, struct rxdp_link *l, int mem_fd,
		 int *fds, char *msg, size_t msglen);
void hca_ctx_release(struct rxdp_client *c);
/* -EINPROGRESS: AH_CREATE waits for a neighbour, call again */
/* in_fd: the fd the request came with (MEM_SHARE's memfd), or -1 */
int hca_obj(struct rxdp_client *c, __u16 type, struct rxdp_ctl_obj *o,
	    const struct rxdp_ah *ah, int in_fd, int *fd, long *deadline,
	    char *msg, size_t msglen);
/*
 * The engine's modify and query of the QP (engine.h): path is the resolved
 * addressing of an RC/UC address vector (mask 0: a new path alone);
 * port_mtu the port's active path MTU
 */
int hca_qp_modify(struct rxdp_qp *qp, const struct rxdp_qp_attr *a, __u32 mask,
		  const struct rxdp_path *path, __u32 port_mtu, char *msg,
		  size_t msglen);
void hca_qp_query(const struct rxdp_qp *qp, struct rxdp_qp_attr *a,
		  struct rxdp_path *path);
/* Per-user QP limit (-EDQUOT past it; root is not limited) */
int hca_qp_charge(uid_t uid, char *msg, size_t msglen);
void hca_qp_uncharge(uid_t uid);
void hca_dev_release(struct rxdp_link *l);
/*
 * The interface now has count RX queues (ethtool -L): the data path, if
 * up, binds a socket on each new one, on a new engine while the device may
 * run more (--engines), else on one running. Queues never go: the kernel
 * refuses to take one from under an AF_XDP socket.
 */
void hca_queues_follow(struct rxdp_link *l, __u32 count);
/*
 * The largest path MTU (enum ibv_mtu) the device's data path carries:
 * rxdpd.mtu_cap, or 2048 once its sockets are bound without multi-buffer
 * (zero-copy on a driver that has no zero-copy multi-buffer)
 */
__u32 hca_mtu_cap(const struct rxdp_link *l);
/*
 * Its AF_XDP sockets' modes (rxdp_xsk_port_modes(): XDP_ZEROCOPY or
 * XDP_COPY, XDP_USE_SG), in queue order; 0 before the data path is up
 */
int hca_xsk_modes(const struct rxdp_link *l, __u16 *modes, int max);
/* A port/GID/device event to every context on ifindex */
void hca_port_event(int ifindex, __u32 type, __u32 port);
/*
 * The transport's counters (enum rxdp_hwc) of a device, or of its QP qpn
 * (qpn 0: the device's); only its user or root may read a QP's
 */
int hca_counters(struct rxdp_client *c, struct rxdp_link *l, __u32 qpn,
		 __u64 *out, char *msg, size_t msglen);
/* For rxdpd's own QP1: the engine (data path started), AHs by handle */
struct rxdp_engine *hca_dev_engine(struct rxdp_link *l, char *msg,
				   size_t msglen);
__u32 hca_sys_ah_add(struct rxdp_link *l, struct rxdp_eah *eah);
void hca_sys_ah_del(struct rxdp_link *l, __u32 handle);

/* cm.c: the connection manager (its own interfaces are in daemon/cm.h) */
int cm_init(void);
void cm_fini(void);
void cm_dev_up(struct rxdp_link *l); /* a device appeared: QP1 */
void cm_dev_down(struct rxdp_link *l); /* before its data path goes */
void cm_ep_event(void *ptr, __u32 events); /* an EP_CM fd is ready */
void cm_retry(void); /* neighbours may have appeared; a timer tick */
void cm_client_release(struct rxdp_client *c);
struct rxdp_ctl_cm;
/* One CM request (RXDP_CTL_CM); *cm becomes the reply, *fd an fd to send */
int cm_request(struct rxdp_client *c, struct rxdp_ctl_cm *cm, int *fd,
	       char *msg, size_t msglen);

/* server.c */
int server_open(const char *path);
void server_close(void);
void server_accept(void);
void client_event(struct rxdp_client *c, __u32 events);
void client_release(struct rxdp_client *c);
/* Close connections that hold nothing and said nothing for a while */
void clients_idle(long now_ms);
long now_ms(void);
void clients_reap(void);
void clients_retry(void);
/* Send an event (enum ibv_event_type) to the clients subscribed to ifindex */
void clients_notify(int ifindex, __u32 event_type, __u32 port_num);

int ep_add(int fd, struct ep_tag *tag);
int ep_mod(int fd, struct ep_tag *tag, __u32 events);
void ep_del(int fd);

#endif /* RXDP_DAEMON_RXDPD_H */
