// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control socket: clients, requests, replies (protocol in
 * common/ctl.h). Each client socket is non-blocking: a request is read
 * whole (SOCK_SEQPACKET), answered at once, and a client that does not read
 * its replies is disconnected rather than allowed to stall the daemon.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <libmnl/libmnl.h>

#include "common/ctl_cm.h"
#include "common/hw_counters.h"
#include "common/log.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"

#define MAX_CLIENTS 1024
#define MAX_CLIENTS_PER_USER 256 /* not root */
#define IDLE_MS 5000 /* a connection with nothing that says nothing goes */

static __u64 rbuf[RXDP_CTL_MSG_MAX / 8];
static __u64 wbuf[RXDP_CTL_MSG_MAX / 8];
static int nclients;

/* A socket file nobody listens on: left by a daemon that died */
static bool socket_stale(const struct sockaddr_un *sun, unsigned int sunlen)
{
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool stale;

	if (probe < 0)
		return false;
	stale = connect(probe, (const struct sockaddr *)sun, sunlen) &&
		errno == ECONNREFUSED;
	close(probe);
	return stale;
}

static int listen_fd = -1;
static char socket_file[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* Remove the socket file (not an abstract name) at exit */
void server_close(void)
{
	if (socket_file[0])
		unlink(socket_file);
}

static void on_listen(struct ep_tag *tag, __u32 events)
{
	server_accept();
}

static void on_client(struct ep_tag *tag, __u32 events)
{
	client_event(tag->ptr, events);
}

static void clients_notify(int ifindex, __u32 event_type, __u32 port_num);

static void on_port_event(const struct dev_event *ev)
{
	clients_notify(ev->ifindex, ev->ibv_event, ev->port);
}

/* Serve on fd, listening */
static int server_watch(int fd)
{
	static struct dev_listener li = { .fn = on_port_event,
					  .types = 1U << DEV_EV_PORT };
	static struct ep_tag tag;

	listen_fd = fd;
	dev_listen(&li);
	return ep_watch(&tag, fd, EPOLLIN, on_listen);
}

static struct rxdp_client *client_new(int fd, pid_t pid, uid_t uid,
				      bool allowed)
{
	struct rxdp_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->pid = pid;
	c->uid = uid;
	c->allowed = allowed;
	c->last_active = now_ms();
	c->tag.ptr = c;
	if (ep_watch(&c->tag, fd, EPOLLIN, on_client)) {
		free(c);
		return NULL;
	}
	c->next = rxdpd.clients;
	rxdpd.clients = c;
	nclients++;
	return c;
}

/* The clients adopted, by their tags in the state (a takeover) */
static struct {
	uint64_t tag;
	struct rxdp_client *c;
} * adopted;
static int nadopted;

struct rxdp_client *server_tko_client(uint64_t tag)
{
	for (int i = 0; i < nadopted; i++)
		if (adopted[i].tag == tag)
			return adopted[i].c;
	return NULL;
}

/* The predecessor's listening socket and clients (takeover.c) */
static int server_adopt(struct tko_in *in)
{
	struct tko_in it = *in;
	const struct tko_listen *li;
	const struct tko_client *tc;
	uint16_t type = TKO_LISTEN;
	size_t len;
	int fd;

	struct sockaddr_un sun;
	socklen_t sunlen = sizeof(sun);

	it.off = 0;
	li = tko_next(&it, &type, &len);
	fd = li && len == sizeof(*li) ? tko_take_fd(in, li->fd) : -1;
	if (fd < 0)
		return -EBADMSG;
	/* a socket file goes at exit, as when it was bound here */
	if (!getsockname(fd, (struct sockaddr *)&sun, &sunlen) &&
	    sunlen > offsetof(struct sockaddr_un, sun_path) && sun.sun_path[0])
		snprintf(socket_file, sizeof(socket_file), "%.*s",
			 (int)(sunlen - offsetof(struct sockaddr_un, sun_path)),
			 sun.sun_path);
	it.off = 0;
	while ((type = TKO_CLIENT, tc = tko_next(&it, &type, &len))) {
		struct rxdp_client *c;
		int cfd;

		if (len != sizeof(*tc) || tc->nsubs < 0 || tc->nsubs > 16)
			continue;
		cfd = tko_take_fd(in, tc->fd);
		if (cfd < 0)
			continue;
		c = client_new(cfd, tc->pid, tc->uid, tc->allowed);
		if (!c) {
			close(cfd);
			continue;
		}
		c->nsubs = tc->nsubs;
		memcpy(c->subs, tc->subs, sizeof(c->subs));
		if (!(nadopted & (nadopted - 1))) {
			void *a =
				realloc(adopted, (nadopted ? 2 * nadopted : 1) *
							 sizeof(*adopted));

			if (!a)
				continue;
			adopted = a;
		}
		adopted[nadopted].tag = tc->tag;
		adopted[nadopted++].c = c;
	}
	return server_watch(fd);
}

int server_listen_fd(void)
{
	return listen_fd;
}

/* Every client but except (the successor itself) into the state */
void server_tko_save(struct tko_out *o, const struct rxdp_client *except)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		struct tko_client tc = { .tag = (uintptr_t)c,
					 .pid = c->pid,
					 .uid = c->uid,
					 .allowed = c->allowed,
					 .nsubs = c->nsubs };

		if (c == except || c->dead)
			continue;
		tc.fd = tko_fd(o, c->fd);
		memcpy(tc.subs, c->subs, sizeof(tc.subs));
		tko_add(o, TKO_CLIENT, &tc, sizeof(tc));
	}
}

int server_open(const char *path)
{
	struct sockaddr_un sun;
	unsigned int sunlen;
	int fd, ret;

	if (tko_state)
		return server_adopt(tko_state);
	ret = rxdp_ctl_sockaddr(path, &sun, &sunlen);
	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	ret = bind(fd, (struct sockaddr *)&sun, sunlen) ? -errno : 0;
	if (ret == -EADDRINUSE && sun.sun_path[0] &&
	    socket_stale(&sun, sunlen)) {
		pr_info("removing the stale socket %s\n", sun.sun_path);
		unlink(sun.sun_path);
		ret = bind(fd, (struct sockaddr *)&sun, sunlen) ? -errno : 0;
	}
	if (ret) {
		close(fd);
		return ret;
	}
	/* a filesystem socket is for whoever may reach the path */
	if (sun.sun_path[0]) {
		chmod(sun.sun_path, 0666);
		memcpy(socket_file, sun.sun_path, sizeof(socket_file));
	}
	if (listen(fd, 64)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return server_watch(fd);
}

static int user_clients(uid_t uid)
{
	int n = 0;

	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next)
		if (!c->dead && c->uid == uid)
			n++;
	return n;
}

/* Root, or everyone, or (--group) the group's members */
static bool peer_allowed(int fd, const struct ucred *cred)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (!rxdpd.group_set || cred->uid == 0 || cred->gid == rxdpd.group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == rxdpd.group)
			return true;
	return false;
}

void server_accept(void)
{
	struct rxdp_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(fd);
		return;
	}
	/* a share of the slots kept for root and for users who hold none */
	if (!rxdpd_slot_ok(cred.uid, (unsigned int)user_clients(cred.uid),
			   (unsigned int)nclients, MAX_CLIENTS,
			   MAX_CLIENTS_PER_USER)) {
		pr_debug("user %u: no connection slot (%d in all, %d of its "
			 "own), refusing one\n",
			 (unsigned int)cred.uid, nclients,
			 user_clients(cred.uid));
		close(fd);
		return;
	}
	c = client_new(fd, cred.pid, cred.uid, peer_allowed(fd, &cred));
	if (!c) {
		close(fd);
		return;
	}
	pr_debug("client pid %d uid %d connected\n", (int)c->pid, (int)c->uid);
}

/*
 * Everything the client owned goes: its verbs context (every object, in
 * the engine and in the maps) and its CM state.
 */
void client_release(struct rxdp_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	cm_client_release(c);
	uverbs_ctx_release(c);
	if (c->fd >= 0) {
		ep_del(c->fd, &c->tag);
		close(c->fd);
		c->fd = -1;
	}
	free(c->pend);
	c->pend = NULL;
	pr_debug("client pid %d disconnected\n", (int)c->pid);
}

void clients_idle(long now)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		if (c->dead || c->ctx || c->nsubs || c->pend || c->cm ||
		    now - c->last_active < IDLE_MS)
			continue;
		pr_debug("pid %d said nothing for %d s: disconnecting it\n",
			 (int)c->pid, IDLE_MS / 1000);
		client_release(c);
	}
}

/* Free released clients; called between event batches. */
void clients_reap(void)
{
	struct rxdp_client **pp, *c;

	for (pp = &rxdpd.clients; (c = *pp);) {
		if (c->dead) {
			*pp = c->next;
			nclients--;
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

/* ---- request handlers ---------------------------------------------------- */

struct req {
	struct rxdp_client *c;
	const struct rxdp_ctl_msg *m;
	struct nlmsghdr *rep;
	int fds[RXDP_CTL_MAX_FDS]; /* closed once the reply is sent */
	int nfds;
	int in_fd; /* the fd that came with the request, or -1 */
	long *deadline; /* of the neighbour resolution this request waits on */
	char msg[512];
};

static int need(struct req *r, int attr, const char *what)
{
	if (r->m->tb[attr])
		return 0;
	snprintf(r->msg, sizeof(r->msg), "request lacks %s", what);
	return -EINVAL;
}

/* rxdpd --group: only its members make QPs and CM ids */
static int need_allowed(struct req *r)
{
	if (r->c->allowed)
		return 0;
	snprintf(r->msg, sizeof(r->msg),
		 "user %u may not use rxdp devices (--group)",
		 (unsigned int)r->c->uid);
	return -EACCES;
}

static __u32 get_u32(struct req *r, int attr)
{
	return mnl_attr_get_u32(r->m->tb[attr]);
}

static struct rxdp_link *get_dev(struct req *r, int *err)
{
	struct rxdp_link *l;
	__u32 ifindex;

	*err = need(r, RXDP_CTL_A_IFINDEX, "the ifindex");
	if (*err)
		return NULL;
	ifindex = get_u32(r, RXDP_CTL_A_IFINDEX);
	l = link_by_index(ifindex);
	if (!l || !l->dev) {
		if (!l)
			snprintf(r->msg, sizeof(r->msg),
				 "no interface with ifindex %u", ifindex);
		else
			snprintf(r->msg, sizeof(r->msg),
				 "%s is not an rxdp device (run: rxdp-loader "
				 "attach %s)",
				 l->ifname, l->ifname);
		*err = -ENODEV;
		return NULL;
	}
	return l;
}

/*
 * The devices, and (RXDP_CTL_A_MSG of a successful reply) what keeps
 * rxdpd from serving, if anything does (health.c): rxdp-ctl prints it,
 * the verbs library names it when it finds no device.
 */
static int do_list_devices(struct req *r)
{
	const char *problems = health_text();
	struct rxdp_link *l;

	if (problems[0])
		mnl_attr_put_strz_check(r->rep, RXDP_CTL_MSG_MAX,
					RXDP_CTL_A_MSG, problems);

	for (l = rxdpd.links; l; l = l->next) {
		struct rxdp_dev_info di;

		if (!l->dev)
			continue;
		dev_info_fill(l, &di);
		uverbs_tc_counters(l, &di);
		if (!mnl_attr_put_check(r->rep, RXDP_CTL_MSG_MAX,
					RXDP_CTL_A_DEV_INFO, sizeof(di), &di))
			break;
	}
	return 0;
}

static int do_query_device(struct req *r)
{
	struct rxdp_dev_info di;
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	dev_info_fill(l, &di);
	uverbs_tc_counters(l, &di);
	mnl_attr_put(r->rep, RXDP_CTL_A_DEV_INFO, sizeof(di), &di);
	return 0;
}

static int do_query_gid(struct req *r)
{
	struct rxdp_gid_entry g;
	struct rxdp_link *l;
	__u32 idx;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	if ((err = need(r, RXDP_CTL_A_INDEX, "the GID index")))
		return err;
	idx = get_u32(r, RXDP_CTL_A_INDEX);
	if (idx >= RXDP_GID_TBL_LEN) {
		snprintf(r->msg, sizeof(r->msg),
			 "GID index %u is past the table (%d entries)", idx,
			 RXDP_GID_TBL_LEN);
		return -EINVAL;
	}
	memset(&g, 0, sizeof(g));
	if (l->gid_used[idx])
		memcpy(g.gid, l->gids[idx], 16);
	g.index = idx;
	g.gid_type = RXDP_GID_TYPE_ROCE_V2;
	mnl_attr_put(r->rep, RXDP_CTL_A_GID, sizeof(g), &g);
	return 0;
}

static int do_query_pkey(struct req *r)
{
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	if ((err = need(r, RXDP_CTL_A_INDEX, "the P_Key index")))
		return err;
	if (get_u32(r, RXDP_CTL_A_INDEX) >= RXDP_PKEY_TBL_LEN) {
		snprintf(r->msg, sizeof(r->msg),
			 "P_Key index %u: the table has one entry",
			 get_u32(r, RXDP_CTL_A_INDEX));
		return -EINVAL;
	}
	mnl_attr_put_u32(r->rep, RXDP_CTL_A_PKEY, RXDP_DEFAULT_PKEY);
	return 0;
}

static int do_resolve(struct req *r)
{
	struct rxdp_path path;
	struct rxdp_ah ah;
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	if ((err = need(r, RXDP_CTL_A_AH, "the address")))
		return err;
	memcpy(&ah, mnl_attr_get_payload(r->m->tb[RXDP_CTL_A_AH]), sizeof(ah));
	err = path_resolve(l, &ah, 0, 0, &path, r->deadline, r->msg,
			   sizeof(r->msg));
	if (err)
		return err;
	mnl_attr_put(r->rep, RXDP_CTL_A_PATH, sizeof(path), &path);
	return 0;
}

static int put_qp_info(struct req *r, int ifindex, __u32 qpn)
{
	struct rxdp_link *l = link_by_index(ifindex);
	struct qp_handle *qp = qp_lookup(l, qpn);
	struct rxdp_qp_info info;

	if (!qp || !qp_visible(r->c, qp)) {
		snprintf(r->msg, sizeof(r->msg), "no QP %#x", qpn);
		return -ENOENT;
	}
	qp_info_fill(qp, &info);
	mnl_attr_put(r->rep, RXDP_CTL_A_QP_INFO, sizeof(info), &info);
	return 0;
}

static int do_modify_qp(struct req *r)
{
	struct rxdp_qp_attr attr;
	struct rxdp_link *l;
	__u32 qpn;
	int err, ifindex;

	l = get_dev(r, &err);
	if (!l)
		return err;
	if ((err = need(r, RXDP_CTL_A_QPN, "the QP number")) ||
	    (err = need(r, RXDP_CTL_A_ATTR_MASK, "the attribute mask")) ||
	    (err = need(r, RXDP_CTL_A_QP_ATTR, "the attributes")))
		return err;
	ifindex = l->ifindex;
	qpn = get_u32(r, RXDP_CTL_A_QPN);
	memcpy(&attr, mnl_attr_get_payload(r->m->tb[RXDP_CTL_A_QP_ATTR]),
	       sizeof(attr));
	err = qp_modify(l, r->c, qpn, &attr, get_u32(r, RXDP_CTL_A_ATTR_MASK),
			r->deadline, r->msg, sizeof(r->msg));
	if (err)
		return err;
	/* l may be stale after a neighbour wait: look up again */
	return put_qp_info(r, ifindex, qpn);
}

static int do_query_qp(struct req *r)
{
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	if ((err = need(r, RXDP_CTL_A_QPN, "the QP number")))
		return err;
	return put_qp_info(r, l->ifindex, get_u32(r, RXDP_CTL_A_QPN));
}

static int do_ctx_open(struct req *r)
{
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	err = uverbs_ctx_open(r->c, l, r->in_fd, r->fds, r->msg,
			      sizeof(r->msg));
	if (!err)
		r->nfds = 3;
	return err;
}

/* An object of the client's verbs context: the command's uverbs.c function */
static int do_obj(struct req *r, uverbs_obj_fn fn)
{
	const struct nlattr *ah = r->m->tb[RXDP_CTL_A_AH];
	struct rxdp_ctl_obj o;
	struct uverbs_req hr = { .type = r->m->nlh->nlmsg_type,
				 .o = &o,
				 .ah = ah ? mnl_attr_get_payload(ah) : NULL,
				 .in_fd = r->in_fd,
				 .deadline = r->deadline,
				 .msg = r->msg,
				 .msglen = sizeof(r->msg) };
	int err;

	if ((err = need(r, RXDP_CTL_A_OBJ, "the object")))
		return err;
	memcpy(&o, mnl_attr_get_payload(r->m->tb[RXDP_CTL_A_OBJ]), sizeof(o));
	err = uverbs_obj(r->c, fn, &hr);
	if (err)
		return err;
	if (hr.fd >= 0)
		r->fds[r->nfds++] = hr.fd;
	mnl_attr_put(r->rep, RXDP_CTL_A_OBJ, sizeof(o), &o);
	return 0;
}

static int do_cm(struct req *r)
{
	struct rxdp_ctl_cm cm;
	int err, fd = -1;

	if ((err = need(r, RXDP_CTL_A_CM, "the CM request")))
		return err;
	if ((err = need_allowed(r)))
		return err;
	memcpy(&cm, mnl_attr_get_payload(r->m->tb[RXDP_CTL_A_CM]), sizeof(cm));
	err = cm_request(r->c, &cm, &fd, r->msg, sizeof(r->msg));
	if (err)
		return err;
	if (fd >= 0)
		r->fds[r->nfds++] = fd;
	mnl_attr_put(r->rep, RXDP_CTL_A_CM, sizeof(cm), &cm);
	return 0;
}

static int do_list_qps(struct req *r)
{
	__u32 want = 0, start_if = 0, start_idx = 0;
	const size_t need_len = 2 * MNL_ATTR_HDRLEN +
				MNL_ALIGN(sizeof(struct rxdp_qp_info)) +
				MNL_ALIGN(sizeof(struct rxdp_ctl_qp_stats));
	int prev;

	if (r->m->tb[RXDP_CTL_A_IFINDEX])
		want = get_u32(r, RXDP_CTL_A_IFINDEX);
	if (r->m->tb[RXDP_CTL_A_QPN] && r->m->tb[RXDP_CTL_A_INDEX]) {
		start_if = get_u32(r, RXDP_CTL_A_INDEX);
		start_idx =
			(get_u32(r, RXDP_CTL_A_QPN) & RXDP_QP_INDEX_MASK) + 1;
	}
	prev = start_if ? (int)start_if - 1 : 0;
	/* devices in ifindex order, from the cursor on */
	for (;;) {
		struct rxdp_link *l, *best = NULL;
		__u32 i;

		for (l = rxdpd.links; l; l = l->next) {
			if (!l->dev || (want && l->ifindex != (int)want))
				continue;
			if (l->ifindex <= prev)
				continue;
			if (!best || l->ifindex < best->ifindex)
				best = l;
		}
		if (!best)
			return 0;
		prev = best->ifindex;
		i = start_if && best->ifindex == (int)start_if ? start_idx : 0;
		for (; i < RXDP_MAX_QP; i++) {
			struct qp_handle *qp = best->dev->qps[i];
			struct rxdp_qp_info info;
			struct rxdp_ctl_qp_stats st;

			/* QP1 is the device's own, not a client's */
			if (!qp || !qp->owner || !qp_visible(r->c, qp))
				continue;
			if (r->rep->nlmsg_len + need_len >
			    RXDP_CTL_MSG_MAX - 64) {
				mnl_attr_put_u32(r->rep, RXDP_CTL_A_MORE, 1);
				return 0;
			}
			qp_info_fill(qp, &info);
			qp_stats_read(best, qp->qpn, &st);
			mnl_attr_put(r->rep, RXDP_CTL_A_QP_INFO, sizeof(info),
				     &info);
			mnl_attr_put(r->rep, RXDP_CTL_A_QP_STATS, sizeof(st),
				     &st);
		}
	}
}

static int do_query_stats(struct req *r)
{
	__u64 counters[RXDP_V_MAX], *v;
	struct rxdp_link *l;
	__u32 k;
	int err, i;

	l = get_dev(r, &err);
	if (!l)
		return err;
	v = calloc(rxdpd.ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < RXDP_V_MAX; k++) {
		counters[k] = 0;
		if (bpf_map_lookup_elem(l->dev->maps.stats, &k, v))
			continue;
		for (i = 0; i < rxdpd.ncpus; i++)
			counters[k] += v[i];
	}
	free(v);
	mnl_attr_put(r->rep, RXDP_CTL_A_COUNTERS, sizeof(counters), counters);
	return 0;
}

static int do_query_counters(struct req *r)
{
	__u64 counters[RXDP_HWC_MAX];
	struct rxdp_link *l;
	int err;

	l = get_dev(r, &err);
	if (!l)
		return err;
	err = uverbs_counters(
		r->c, l,
		r->m->tb[RXDP_CTL_A_QPN] ? get_u32(r, RXDP_CTL_A_QPN) : 0,
		counters, r->msg, sizeof(r->msg));
	if (err)
		return err;
	mnl_attr_put(r->rep, RXDP_CTL_A_COUNTERS, sizeof(counters), counters);
	return 0;
}

static server_takeover_fn takeover_fn;

void server_on_takeover(server_takeover_fn fn)
{
	takeover_fn = fn;
}

/* A successor asks for everything (takeover.c): no return if it gets it */
static int do_takeover(struct req *r)
{
	int err = need(r, RXDP_CTL_A_INDEX, "the state version");

	if (err)
		return err;
	if (!takeover_fn) {
		snprintf(r->msg, sizeof(r->msg),
			 "this rxdpd hands nothing over");
		return -EOPNOTSUPP;
	}
	return takeover_fn(r->c, get_u32(r, RXDP_CTL_A_INDEX),
			   r->m->nlh->nlmsg_seq, r->msg, sizeof(r->msg));
}

static int do_subscribe(struct req *r)
{
	struct rxdp_link *l;
	int err, i;

	l = get_dev(r, &err);
	if (!l)
		return err;
	for (i = 0; i < r->c->nsubs; i++)
		if (r->c->subs[i] == l->ifindex)
			return 0;
	if (r->c->nsubs == (int)(sizeof(r->c->subs) / sizeof(r->c->subs[0]))) {
		snprintf(r->msg, sizeof(r->msg),
			 "too many subscriptions on one connection");
		return -ENOSPC;
	}
	r->c->subs[r->c->nsubs++] = l->ifindex;
	return 0;
}

/* A device's event to the clients subscribed to it (rxdp_ctl_subscribe) */
static void clients_notify(int ifindex, __u32 event_type, __u32 port_num)
{
	static __u64 nbuf[256];
	struct rxdp_ctl_event ev = { .ifindex = ifindex,
				     .event_type = event_type,
				     .port_num = port_num };
	struct rxdp_client *c;
	struct nlmsghdr *nlh;
	int i, ret;

	for (c = rxdpd.clients; c; c = c->next) {
		if (c->dead || c->fd < 0)
			continue;
		for (i = 0; i < c->nsubs && c->subs[i] != ifindex; i++)
			;
		if (i == c->nsubs)
			continue;
		nlh = rxdp_ctl_msg_start(nbuf, RXDP_CTL_EVENT,
					 RXDP_CTL_F_NOTIFY, 0, 0);
		mnl_attr_put(nlh, RXDP_CTL_A_EVENT, sizeof(ev), &ev);
		ret = rxdp_ctl_sendmsg(c->fd, nlh, NULL, 0);
		if (ret)
			pr_warn("pid %d does not read its events (%s): event "
				"%u of ifindex %d dropped\n",
				(int)c->pid, strerror(-ret), event_type,
				ifindex);
	}
}

/*
 * The requests: each type's handler, or the uverbs.c function of an object
 * request (do_obj), and whether it may come with file descriptors
 */
struct cmd {
	int (*fn)(struct req *r);
	uverbs_obj_fn obj;
	bool fds;
};

static const struct cmd cmds[RXDP_CTL_TYPE_MAX] = {
	[RXDP_CTL_LIST_DEVICES] = { .fn = do_list_devices },
	[RXDP_CTL_QUERY_DEVICE] = { .fn = do_query_device },
	[RXDP_CTL_QUERY_GID] = { .fn = do_query_gid },
	[RXDP_CTL_QUERY_PKEY] = { .fn = do_query_pkey },
	[RXDP_CTL_RESOLVE] = { .fn = do_resolve },
	[RXDP_CTL_MODIFY_QP] = { .fn = do_modify_qp },
	[RXDP_CTL_QUERY_QP] = { .fn = do_query_qp },
	[RXDP_CTL_CTX_OPEN] = { .fn = do_ctx_open, .fds = true },
	[RXDP_CTL_LIST_QPS] = { .fn = do_list_qps },
	[RXDP_CTL_QUERY_STATS] = { .fn = do_query_stats },
	[RXDP_CTL_SUBSCRIBE] = { .fn = do_subscribe },
	[RXDP_CTL_QUERY_COUNTERS] = { .fn = do_query_counters },
	[RXDP_CTL_CM] = { .fn = do_cm },
	[RXDP_CTL_PD_ALLOC] = { .obj = uverbs_pd_alloc },
	[RXDP_CTL_PD_FREE] = { .obj = uverbs_pd_free },
	[RXDP_CTL_MR_REG] = { .obj = uverbs_mr },
	[RXDP_CTL_MR_REREG] = { .obj = uverbs_mr },
	[RXDP_CTL_MR_DEREG] = { .obj = uverbs_mr },
	[RXDP_CTL_MEM_SHARE] = { .obj = uverbs_mem_share, .fds = true },
	[RXDP_CTL_MEM_UNSHARE] = { .obj = uverbs_mem_unshare },
	[RXDP_CTL_CHANNEL_CREATE] = { .obj = uverbs_channel_create },
	[RXDP_CTL_CHANNEL_DESTROY] = { .obj = uverbs_channel_destroy },
	[RXDP_CTL_CQ_CREATE] = { .obj = uverbs_cq },
	[RXDP_CTL_CQ_RESIZE] = { .obj = uverbs_cq },
	[RXDP_CTL_CQ_DESTROY] = { .obj = uverbs_cq },
	[RXDP_CTL_SRQ_CREATE] = { .obj = uverbs_srq },
	[RXDP_CTL_SRQ_MODIFY] = { .obj = uverbs_srq },
	[RXDP_CTL_SRQ_DESTROY] = { .obj = uverbs_srq },
	[RXDP_CTL_QP_CREATE] = { .obj = uverbs_qp },
	[RXDP_CTL_QP_DESTROY] = { .obj = uverbs_qp },
	[RXDP_CTL_AH_CREATE] = { .obj = uverbs_ah_create },
	[RXDP_CTL_AH_DESTROY] = { .obj = uverbs_ah_destroy },
	[RXDP_CTL_MW_ALLOC] = { .obj = uverbs_mw },
	[RXDP_CTL_MW_DEALLOC] = { .obj = uverbs_mw },
	[RXDP_CTL_MCAST_ATTACH] = { .obj = uverbs_mcast },
	[RXDP_CTL_MCAST_DETACH] = { .obj = uverbs_mcast },
	[RXDP_CTL_TAKEOVER] = { .fn = do_takeover },
};

/* Build and send the reply; a client that cannot take it is dropped. */
static void reply(struct rxdp_client *c, __u16 type, __u32 seq, int err,
		  struct req *r, struct nlmsghdr *rep)
{
	struct rxdp_ctl_hdr *hdr = mnl_nlmsg_get_payload(rep);
	int ret;

	rep->nlmsg_type = type;
	rep->nlmsg_seq = seq;
	hdr->error = err;
	if (err) {
		/* an error reply carries only the message */
		rep = rxdp_ctl_msg_start(wbuf, type, RXDP_CTL_F_REPLY, seq,
					 err);
		if (!r->msg[0])
			snprintf(r->msg, sizeof(r->msg), "%s", strerror(-err));
		mnl_attr_put_strz(rep, RXDP_CTL_A_MSG, r->msg);
	}
	ret = rxdp_ctl_sendmsg(c->fd, rep, r->fds, err ? 0 : r->nfds);
	/* the client has its copies now (or never will) */
	for (int i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = 0;
	if (ret) {
		pr_warn("client pid %d does not take replies (%s): "
			"disconnecting it\n",
			(int)c->pid, strerror(-ret));
		client_release(c);
	}
}

/*
 * Decode and run one request (buf, n bytes; n < 0: the receive already
 * failed with that error) and reply, unless it must wait for a neighbour:
 * then a copy is parked on the client, whose socket is not read until the
 * request is answered (replies stay in order), and 1 is returned.
 */
static int process(struct rxdp_client *c, const void *buf, ssize_t n, int in_fd,
		   int nfds, long *deadline)
{
	const struct nlmsghdr *in = buf;
	struct rxdp_ctl_msg m;
	struct req r;
	__u32 seq = 0;
	__u16 type = RXDP_CTL_UNSPEC;
	int err;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.m = &m;
	r.deadline = deadline;
	r.in_fd = in_fd;
	r.rep = rxdp_ctl_msg_start(wbuf, RXDP_CTL_UNSPEC, RXDP_CTL_F_REPLY, 0,
				   0);
	if (n < 0) {
		snprintf(r.msg, sizeof(r.msg),
			 "message too large (limit %d bytes) or too many file "
			 "descriptors",
			 RXDP_CTL_MSG_MAX);
		err = -EMSGSIZE;
		goto out;
	}
	/* answer with the request's seq and type if the header is there */
	if ((size_t)n >= sizeof(struct nlmsghdr)) {
		seq = in->nlmsg_seq;
		type = in->nlmsg_type;
	}
	err = rxdp_ctl_decode(buf, n, &m, 0);
	if (err) {
		snprintf(r.msg, sizeof(r.msg),
			 err == -EPROTO
				 ? "protocol version mismatch: rxdpd speaks "
				   "version %d"
				 : "malformed request (lengths or attributes "
				   "do not add up; protocol version %d)",
			 RXDP_CTL_VERSION);
		goto out;
	}
	if (type >= RXDP_CTL_TYPE_MAX || (!cmds[type].fn && !cmds[type].obj)) {
		snprintf(r.msg, sizeof(r.msg), "unknown request type %u", type);
		err = -EOPNOTSUPP;
		goto out;
	}
	if (nfds && !cmds[type].fds) {
		snprintf(r.msg, sizeof(r.msg), "%s takes no file descriptors",
			 rxdp_ctl_type_name(type));
		err = -EINVAL;
		goto out;
	}
	err = cmds[type].fn ? cmds[type].fn(&r) : do_obj(&r, cmds[type].obj);
	if (err == -EINPROGRESS)
		return 1;
out:
	reply(c, type, seq, err, &r, r.rep);
	return 0;
}

static void unpark(struct rxdp_client *c)
{
	free(c->pend);
	c->pend = NULL;
	c->pend_len = 0;
	c->pend_deadline = 0;
	if (!c->dead && c->fd >= 0)
		ep_mod(c->fd, &c->tag, EPOLLIN);
}

void client_event(struct rxdp_client *c, __u32 events)
{
	int fds[RXDP_CTL_MAX_FDS], nfds = 0, i;
	long deadline = 0;
	ssize_t n;

	if (c->dead)
		return;
	if (c->pend) {
		/* not reading while a request is parked; only notice hang-ups */
		if (events & (EPOLLHUP | EPOLLERR))
			client_release(c);
		return;
	}
	n = rxdp_ctl_recvmsg(c->fd, rbuf, sizeof(rbuf), fds, &nfds, 1);
	if (n == -EAGAIN)
		return;
	if (n == 0 || (n < 0 && n != -EMSGSIZE)) {
		client_release(c);
		return;
	}
	c->last_active = now_ms();
	if (process(c, rbuf, n, nfds ? fds[0] : -1, nfds, &deadline) == 1) {
		c->pend = malloc(n);
		if (!c->pend) {
			const struct nlmsghdr *in = (const void *)rbuf;
			struct req r = { .c = c };

			snprintf(r.msg, sizeof(r.msg), "out of memory");
			reply(c, in->nlmsg_type, in->nlmsg_seq, -ENOMEM, &r,
			      rxdp_ctl_msg_start(wbuf, 0, RXDP_CTL_F_REPLY, 0,
						 0));
		} else {
			memcpy(c->pend, rbuf, n);
			c->pend_len = n;
			c->pend_deadline = deadline;
			ep_mod(c->fd, &c->tag, 0);
		}
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

/* Run the parked requests again: a neighbour may have appeared, or its
 * deadline passed. Called after netlink events and on timer ticks. */
void clients_retry(void)
{
	struct rxdp_client *c;

	for (c = rxdpd.clients; c; c = c->next) {
		if (!c->pend || c->dead)
			continue;
		if (process(c, c->pend, c->pend_len, -1, 0,
			    &c->pend_deadline) == 0)
			unpark(c);
	}
}
