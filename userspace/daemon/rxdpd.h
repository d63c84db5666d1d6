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
#include "daemon/event.h"
#include "daemon/loop.h"
#include "daemon/mtu.h"
#include "common/ctl_client.h"
#include "engine/engine.h"
#include "rxdp/maps.h"
#include "rxdp/params.h"

struct rxdp_client;
struct uverbs_dev; /* uverbs.c: a device's data path (UMEM, sockets, engine) */
struct uverbs_ctx; /* uverbs.c: a client's verbs context and its objects */
struct uobj; /* uverbs.c: one verbs object */
struct cm_client; /* cm.c: a client's event channels and CM ids */
struct rxdp_engine;
struct rxdp_eah;

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
struct qp_handle {
	__u32 qpn;
	uid_t uid; /* charged to this user */
	__u32 qp_type; /* enum ibv_qp_type */
	int ifindex;
	struct rxdp_client *owner;
	/* the engine's QP and its engine (NULL: QP1, or being made) */
	struct rxdp_engine *e;
	struct rxdp_eqp *eqp;
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
	struct qp_handle *qps[RXDP_MAX_QP]; /* by QPN & RXDP_QP_INDEX_MASK */
	__u16 qp_gen[RXDP_MAX_QP];
	__u32 qp_next; /* where the QPN allocator looks first */
	__u32 nqps;
	struct uverbs_dev *uv; /* its data path: made at its first context */
	/* what its data path carries and how its sockets are bound, written
	 * by uverbs.c when the data path comes up or gains a queue */
	__u32 mtu_cap; /* the largest path MTU (enum ibv_mtu) */
	__u16 xsk_modes[RXDP_CTL_MAX_XSKS]; /* rxdp_xsk_port_modes() */
	__u32 nxsks;
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
	struct uverbs_ctx *ctx; /* its verbs context, if it opened one */
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

#define RXDPD_CC_ALGO_MAX 16 /* --cc-algo's IFNAME=ALGO entries */
#define RXDPD_TC_IFS_MAX 16 /* interfaces --tc names */

struct rxdpd {
	unsigned int mark;
	struct rxdp_link *links;
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
	int engines_per_queue; /* --engines-per-queue, 0: auto */
	gid_t group; /* --group: who may use the devices, with root */
	bool group_set;
	__u32 mtu_cap; /* the largest path MTU the data path carries */
	__u64 user_mem; /* --user-mem: rxdpd's memory a user may hold */
	const char *no_ecn; /* --no-ecn: interfaces sending without ECT(0) */
	const char *
		go_back_n; /* --go-back-n: interfaces without selective resends */
	struct eng_cc_params
		cc; /* --cc: the algorithms' parameters, every device's */
	/* --cc-algo: each named interface's algorithm, and the others' */
	struct {
		char ifname[IF_NAMESIZE];
		enum eng_cc_algo algo;
	} cc_algo[RXDPD_CC_ALGO_MAX];
	int ncc_algo;
	enum eng_cc_algo cc_algo_rest; /* default ENG_CC_DCQCN */
	/* --tc: each named interface's service classes, and the others' */
	struct {
		char ifname[IF_NAMESIZE];
		struct eng_tcs tcs;
	} tc[RXDPD_TC_IFS_MAX];
	int ntc;
	struct eng_tcs tc_rest; /* eng_tcs_default() unless --tc */
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
int rtnl_fd(void); /* its socket, to watch */
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
void dev_init(void); /* listens to rtnl.c's links */
void dev_check(struct rxdp_link *l);
void dev_check_all(void);
void dev_release(struct rxdp_link *l);
void dev_info_fill(const struct rxdp_link *l, struct rxdp_dev_info *out);
/* The congestion control of the device on ifname (--cc-algo) */
enum eng_cc_algo dev_cc_algo(const char *ifname);
const struct eng_tcs *dev_tcs(const char *ifname);
/*
 * The largest path MTU (enum ibv_mtu) the device's data path carries
 * (struct rxdp_dev's mtu_cap, uverbs.c's to say)
 */
static inline __u32 dev_mtu_cap(const struct rxdp_link *l)
{
	return l->dev ? l->dev->mtu_cap : rxdpd.mtu_cap;
}
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
void qp_init(void); /* listens to rtnl.c's neighbours */
int qp_create(struct rxdp_link *l, struct rxdp_client *c, __u32 qp_type,
	      __u32 *qpn, char *msg, size_t msglen);
/* -EINPROGRESS: the path is being resolved, call again (same *deadline) */
int qp_modify(struct rxdp_link *l, struct rxdp_client *c, __u32 qpn,
	      const struct rxdp_qp_attr *attr, __u32 mask, long *deadline,
	      char *msg, size_t msglen);
int qp_destroy(struct rxdp_link *l, struct qp_handle *qp);
struct qp_handle *qp_lookup(struct rxdp_link *l, __u32 qpn);
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

bool qp_visible(const struct rxdp_client *c, const struct qp_handle *qp);
void qp_info_fill(const struct qp_handle *qp, struct rxdp_qp_info *out);
int qp_stats_read(struct rxdp_link *l, __u32 qpn, struct rxdp_ctl_qp_stats *s);
int path_resolve(struct rxdp_link *l, const struct rxdp_ah *ah, __u32 lqpn,
		 __u32 rqpn, struct rxdp_path *out, long *deadline, char *msg,
		 size_t msglen);
void qp_clean_all(struct rxdp_link *l);
int qp_adopt(struct rxdp_link *l, struct rxdp_client *c, __u32 qp_type,
	     __u32 qpn);
/* The device's own QPs (QP1): their numbers held, no owner */
int qp_create_special(struct rxdp_link *l, __u32 qpn);
void qp_destroy_special(struct rxdp_link *l, __u32 qpn);

/* uverbs.c: the devices' data path and the clients' verbs contexts */
int uverbs_ctx_open(struct rxdp_client *c, struct rxdp_link *l, int mem_fd,
		    int *fds, char *msg, size_t msglen);
void uverbs_ctx_release(struct rxdp_client *c);
/* One request on the objects of a client's verbs context (RXDP_CTL_OBJ) */
struct uverbs_req {
	__u16 type; /* enum rxdp_ctl_type: what the request is */
	struct rxdp_ctl_obj *o; /* the request, then the reply */
	const struct rxdp_ah *ah; /* AH_CREATE, MCAST_*: the address */
	int in_fd; /* the fd the request came with (MEM_SHARE's memfd), or -1 */
	int fd; /* one to send with the reply, or -1 */
	long *deadline; /* of the neighbour resolution AH_CREATE waits on */
	char *msg;
	size_t msglen;
};
/* -EINPROGRESS: it waits for a neighbour, call again */
typedef int (*uverbs_obj_fn)(struct uverbs_ctx *x, struct uverbs_req *r);
/* fn on c's context (-EINVAL and a message when it has none) */
int uverbs_obj(struct rxdp_client *c, uverbs_obj_fn fn, struct uverbs_req *r);
/* The requests, each the function of its type (server.c's table) */
int uverbs_pd_alloc(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_pd_free(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_mr(struct uverbs_ctx *x,
	      struct uverbs_req *r); /* REG, REREG, DEREG */
int uverbs_mem_share(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_mem_unshare(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_channel_create(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_channel_destroy(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_cq(struct uverbs_ctx *x,
	      struct uverbs_req *r); /* CREATE, RESIZE, DESTROY */
int uverbs_srq(struct uverbs_ctx *x,
	       struct uverbs_req *r); /* CREATE, MODIFY, DESTROY */
int uverbs_qp(struct uverbs_ctx *x, struct uverbs_req *r); /* CREATE, DESTROY */
int uverbs_ah_create(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_ah_destroy(struct uverbs_ctx *x, struct uverbs_req *r);
int uverbs_mw(struct uverbs_ctx *x, struct uverbs_req *r); /* ALLOC, DEALLOC */
int uverbs_mcast(struct uverbs_ctx *x,
		 struct uverbs_req *r); /* ATTACH, DETACH */
/* Listens to the devices' events: gone, queues, port events */
void uverbs_init(void);
/*
 * The transport's counters (enum rxdp_hwc) of a device, or of its QP qpn
 * (qpn 0: the device's); only its user or root may read a QP's
 */
int uverbs_counters(struct rxdp_client *c, struct rxdp_link *l, __u32 qpn,
		    __u64 *out, char *msg, size_t msglen);
/* What each of the device's service classes moved, into di (its ntcs) */
void uverbs_tc_counters(const struct rxdp_link *l, struct rxdp_dev_info *di);
/* For rxdpd's own QP1: the engine (data path started), AHs by handle */
struct rxdp_engine *uverbs_dev_engine(struct rxdp_link *l, char *msg,
				      size_t msglen);
__u32 uverbs_sys_ah_add(struct rxdp_link *l, struct rxdp_eah *eah);
void uverbs_sys_ah_del(struct rxdp_link *l, __u32 handle);
/*
 * A takeover (takeover.c): what of the data path cannot be handed over
 * yet (0, or -errno with msg); every device's engines halted for good;
 * every device's data path written into the state. The successor's data
 * path of a device is the one in tko_state where there is one.
 */
struct tko_out;
int uverbs_tko_refusal(char *msg, size_t msglen);
void uverbs_tko_halt(void);
/* After the handover: the AF_XDP sockets' rings unmapped and their
 * descriptors closed, so that a successor may bind the queues again */
void uverbs_tko_let_go(void);
/* A successor binds a queue its predecessor still holds: tries 10 ms
 * apart */
#define TKO_BIND_TRIES 200
void uverbs_tko_save(struct tko_out *o);
/* Then the clients' contexts: what keeps one from being handed over
 * (before the halt), and every one with its objects (false: one failed) */
int uverbs_tko_ctx_refusal(char *msg, size_t msglen);
bool uverbs_tko_save_ctxs(struct tko_out *o);
/*
 * The successor: the clients' contexts and objects made again (client_of:
 * the adopted connection a state's tag names; release: what a client whose
 * context cannot be made again gets), then every engine released (they
 * were held from their start)
 */
void uverbs_tko_restore(struct rxdp_client *(*client_of)(uint64_t tag),
			void (*release)(struct rxdp_client *c));

/* cm.c: the connection manager (its own interfaces are in daemon/cm.h) */
int cm_init(void);
void cm_fini(void);
void cm_retry(void); /* neighbours may have appeared; a timer tick */
void cm_client_release(struct rxdp_client *c);
struct rxdp_ctl_cm;
/*
 * A takeover: what of the CM cannot be handed over yet (events queued),
 * its event channels and ids into the state, and made again from it
 */
int cm_tko_refusal(char *msg, size_t msglen);
void cm_tko_save(struct tko_out *o);
void cm_tko_restore(struct rxdp_client *(*client_of)(uint64_t tag));
/* One CM request (RXDP_CTL_CM); *cm becomes the reply, *fd an fd to send */
int cm_request(struct rxdp_client *c, struct rxdp_ctl_cm *cm, int *fd,
	       char *msg, size_t msglen);

/*
 * takeover.c: the running rxdpd hands everything to the successor c (or
 * says why not: -errno and msg, and goes on), never returning when it
 * does; the successor asks for it (0, or an exit status after a line),
 * then lets go of what nothing took
 */
struct tko_in;
int takeover_give(struct rxdp_client *c, __u32 version, __u32 seq, char *msg,
		  size_t msglen);
int takeover_take(const char *path, struct tko_in *in);
void takeover_restore(void); /* once rxdpd is open on tko_state */
void takeover_done(struct tko_in *in); /* ends takeover_urgent() too */
/* The successor serves, its parent told: the predecessor may go */
void takeover_serving(void);
/*
 * A takeover's dark time (the engines halted, a successor restoring)
 * runs at the engines' priority (--fifo): on a machine without a core to
 * spare, a SCHED_OTHER thread shares its CPU with every application
 * spinning on a completion queue, while their peers' transports count
 * their retries. Its children do not inherit it.
 */
void takeover_urgent(bool on);
/*
 * Through systemd's file descriptor store (--fdstore): on SIGTERM the
 * running rxdpd stores everything there and exits RXDPD_EXIT_STORED (or
 * says why not, -1: it stops as without it); the next one's start takes
 * it (0), finds none (1), or cannot use it (-1, after a line: it starts
 * anew, the previous one's clients lose their connections)
 */
#define RXDPD_EXIT_STORED 3
int takeover_store(void);
int takeover_from_store(struct tko_in *in);

/* server.c (with tko_state set, the listening socket and the clients are
 * the predecessor's) */
int server_open(const char *path);
int server_listen_fd(void);
void server_tko_save(struct tko_out *o, const struct rxdp_client *except);
/* The client adopted from the predecessor's named tag, or NULL */
struct rxdp_client *server_tko_client(uint64_t tag);
/* Who answers RXDP_CTL_TAKEOVER (takeover_give(), registered by main.c) */
typedef int (*server_takeover_fn)(struct rxdp_client *c, __u32 version,
				  __u32 seq, char *msg, size_t msglen);
void server_on_takeover(server_takeover_fn fn);
void server_close(void);
void server_accept(void);
void client_event(struct rxdp_client *c, __u32 events);
void client_release(struct rxdp_client *c);
/* Close connections that hold nothing and said nothing for a while */
void clients_idle(long now_ms);
void clients_reap(void);
void clients_retry(void);

#endif /* RXDP_DAEMON_RXDPD_H */
