// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma-core's librdmacm beside rxdp's (rdmacm_priv.h): loaded by its real
 * path into the namespace of rdma-core's libibverbs (common/sysdl.c), once
 * the kernel has RDMA devices; its ids stand behind ours for the addresses
 * rxdpd does not serve, and its events come out of our channels.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_verbs.h>

#include "common/log.h"
#include "common/sysdl.h"
#include "rdmacm/rdmacm_priv.h"

struct cma_sys_calls cma_sys;
static int sys_state; /* 0 not (yet), 1 loaded, -1 never: said why */
static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int *(*sys_errno_location)(void);

void cma_sys_errno(void)
{
	if (sys_errno_location)
		errno = *sys_errno_location();
}

static int sys_open(void)
{
	const char *verbs = rxdp_sysdl_verbs_path(), *why = NULL;
	const char *path = rxdp_sysdl_cm_path(), *missing = NULL;
	struct cma_sys_calls c;
	void *h;

	if (!verbs)
		return 0; /* no kernel RDMA device yet: ask again next time */
	if (path[0] == '/' && rxdp_sysdl_is_self(path, (void *)sys_open)) {
		pr_warn("rxdp: %s is rxdp's own librdmacm, not rdma-core's; "
			"the kernel's RDMA-CM is not used\n",
			path);
		return -1;
	}
	h = rxdp_sysdl_open(verbs, path, &why);
	if (!h) {
		pr_warn("rxdp: cannot load rdma-core's librdmacm: %s; the "
			"kernel's RDMA-CM is not used\n",
			why);
		return -1;
	}
#define CMA_SYS_RESOLVE(fn, ver)        \
	c.p_##fn = dlvsym(h, #fn, ver); \
	if (!c.p_##fn && !missing)      \
		missing = #fn "@" ver;
	CMA_SYS_CALLS(CMA_SYS_RESOLVE)
#undef CMA_SYS_RESOLVE
	sys_errno_location = rxdp_sysdl_errno(h);
	if (missing || !sys_errno_location) {
		pr_warn("rxdp: %s lacks %s; the kernel's RDMA-CM is not used\n",
			path, missing ? missing : "libc's __errno_location");
		sys_errno_location = NULL;
		return -1;
	}
	cma_sys = c;
	pr_debug("rdma-core's librdmacm loaded from %s\n", path);
	return 1;
}

int cma_sys_load(void)
{
	int s = __atomic_load_n(&sys_state, __ATOMIC_ACQUIRE);

	if (s)
		return s > 0;
	pthread_mutex_lock(&sys_lock);
	if (!sys_state)
		__atomic_store_n(&sys_state, sys_open(), __ATOMIC_RELEASE);
	s = sys_state;
	/* 0 stays: a later channel looks again */
	pthread_mutex_unlock(&sys_lock);
	return s > 0;
}

int cma_sys_mirror(struct cma_id *id, int ret)
{
	struct rdma_cm_id *s = id->sys, *c = &id->id;
	int e = errno;

	c->verbs = s->verbs;
	c->route = s->route;
	c->port_num = s->port_num;
	c->ps = s->ps;
	c->qp_type = s->qp_type;
	c->pd = s->pd;
	c->qp = s->qp;
	c->srq = s->srq;
	c->send_cq = s->send_cq;
	c->recv_cq = s->recv_cq;
	c->send_cq_channel = s->send_cq_channel;
	c->recv_cq_channel = s->recv_cq_channel;
	errno = e;
	return ret;
}

static int sa_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

static int sa_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return 0;
}

/* The interface that holds address sa, or 0 */
static int addr_ifindex(const struct sockaddr *sa)
{
	struct ifaddrs *all, *a;
	int ifindex = 0;

	if (getifaddrs(&all))
		return 0;
	for (a = all; a && !ifindex; a = a->ifa_next)
		if (a->ifa_addr && sa_same_ip(a->ifa_addr, sa))
			ifindex = (int)if_nametoindex(a->ifa_name);
	freeifaddrs(all);
	return ifindex;
}

/* The source address the kernel's routes give toward dst */
static int route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	struct sockaddr_storage d;
	int fd, ret;

	memset(&d, 0, sizeof(d));
	memcpy(&d, dst,
	       dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					  : sizeof(struct sockaddr_in));
	/* any port: connect() on a datagram socket only picks the route */
	if (d.ss_family == AF_INET)
		((struct sockaddr_in *)&d)->sin_port = htons(4791);
	else
		((struct sockaddr_in6 *)&d)->sin6_port = htons(4791);
	fd = socket(d.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ret = connect(fd, (struct sockaddr *)&d,
		      d.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					      : sizeof(struct sockaddr_in));
	if (!ret)
		ret = getsockname(fd, (struct sockaddr *)src, &len);
	close(fd);
	return ret;
}

int cma_sys_ifindex(struct cma_id *id, const struct sockaddr *src,
		    const struct sockaddr *dst)
{
	struct sockaddr_storage via;

	if (id->sys || id->bound || !to_cma_chan(id->id.channel)->sys)
		return 0;
	if (!src || sa_is_any(src)) {
		/* a wildcard bind stays rxdp's; a resolve goes by the route */
		if (!dst || route_src(dst, &via))
			return 0;
		src = (struct sockaddr *)&via;
	}
	if (src->sa_family != AF_INET && src->sa_family != AF_INET6)
		return 0;
	return addr_ifindex(src);
}

int cma_sys_wait(struct cma_chan *ch, void *r, size_t len,
		 struct rdma_cm_event **out)
{
	struct epoll_event e;

	for (;;) {
		ssize_t n = recv(ch->sock, r, len, MSG_DONTWAIT);

		if (n == (ssize_t)len)
			return 1;
		if (n >= 0) {
			errno = n == 0 ? ENODEV : EPROTO;
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (!CMA_SYS(rdma_get_cm_event, ch->sys, out))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		/* the program made the channel non-blocking: so are we */
		if (fcntl(ch->ch.fd, F_GETFL) & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (epoll_wait(ch->ch.fd, &e, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

/* --- rdma-core's CM: the calls on an id that stands for one of its ids --- */

static int sys_destroy_id(struct cma_id *id)
{
	return CMA_SYS(rdma_destroy_id, id->sys);
}

static int sys_bind_addr(struct cma_id *id, struct sockaddr *addr)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_bind_addr, id->sys, addr));
}

static int sys_resolve_addr(struct cma_id *id, struct sockaddr *src,
			    struct sockaddr *dst, int timeout_ms)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_resolve_addr, id->sys, src, dst,
					  timeout_ms));
}

static int sys_resolve_route(struct cma_id *id, int timeout_ms)
{
	return cma_sys_mirror(id,
			      CMA_SYS(rdma_resolve_route, id->sys, timeout_ms));
}

static int sys_init_qp_attr(struct cma_id *id, struct ibv_qp_attr *attr,
			    int *mask)
{
	return CMA_SYS(rdma_init_qp_attr, id->sys, attr, mask);
}

static int sys_create_qp_ex(struct cma_id *id, struct ibv_qp_init_attr_ex *attr)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_create_qp_ex, id->sys, attr));
}

static void sys_destroy_qp(struct cma_id *id)
{
	CMA_SYS_VOID(rdma_destroy_qp, id->sys);
	cma_sys_mirror(id, 0);
}

static int sys_create_srq_ex(struct cma_id *id,
			     struct ibv_srq_init_attr_ex *attr)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_create_srq_ex, id->sys, attr));
}

static void sys_destroy_srq(struct cma_id *id)
{
	CMA_SYS_VOID(rdma_destroy_srq, id->sys);
	cma_sys_mirror(id, 0);
}

/* rdma_create_ep()'s connection data goes where no parameters are given */
static int sys_connect(struct cma_id *id, struct rdma_conn_param *p)
{
	struct rdma_conn_param def = {
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	if (!p && id->connect) {
		def.private_data = id->connect;
		def.private_data_len = (uint8_t)id->connect_len;
		p = &def;
	}
	return cma_sys_mirror(id, CMA_SYS(rdma_connect, id->sys, p));
}

static int sys_listen(struct cma_id *id, int backlog)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_listen, id->sys, backlog));
}

static int sys_accept(struct cma_id *id, struct rdma_conn_param *p)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_accept, id->sys, p));
}

static int sys_reject(struct cma_id *id, const void *pd, uint8_t len,
		      uint32_t reason)
{
	return reason ? CMA_SYS(rdma_reject_ece, id->sys, pd, len)
		      : CMA_SYS(rdma_reject, id->sys, pd, len);
}

static int sys_notify(struct cma_id *id, enum ibv_event_type event)
{
	return CMA_SYS(rdma_notify, id->sys, event);
}

static int sys_disconnect(struct cma_id *id)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_disconnect, id->sys));
}

static int sys_establish(struct cma_id *id)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_establish, id->sys));
}

static int sys_join_multicast(struct cma_id *id,
			      struct rdma_cm_join_mc_attr_ex *attr,
			      void *context)
{
	return cma_sys_mirror(id, CMA_SYS(rdma_join_multicast_ex, id->sys, attr,
					  context));
}

static int sys_leave_multicast(struct cma_id *id, struct sockaddr *addr)
{
	return CMA_SYS(rdma_leave_multicast, id->sys, addr);
}

static int sys_set_option(struct cma_id *id, int level, int optname,
			  void *optval, size_t optlen)
{
	return CMA_SYS(rdma_set_option, id->sys, level, optname, optval,
		       optlen);
}

/* Only to a channel with rdma-core's beside rxdpd's */
static int sys_migrate_id(struct cma_id *id, struct rdma_event_channel *channel)
{
	if (!to_cma_chan(channel)->sys) {
		errno = ENODEV;
		return -1;
	}
	return CMA_SYS(rdma_migrate_id, id->sys, to_cma_chan(channel)->sys);
}

static int sys_set_local_ece(struct cma_id *id, struct ibv_ece *ece)
{
	return CMA_SYS(rdma_set_local_ece, id->sys, ece);
}

static int sys_get_remote_ece(struct cma_id *id, struct ibv_ece *ece)
{
	return CMA_SYS(rdma_get_remote_ece, id->sys, ece);
}

const struct cma_ops cma_sys_ops = {
	.destroy_id = sys_destroy_id,
	.bind_addr = sys_bind_addr,
	.resolve_addr = sys_resolve_addr,
	.resolve_route = sys_resolve_route,
	.init_qp_attr = sys_init_qp_attr,
	.create_qp_ex = sys_create_qp_ex,
	.destroy_qp = sys_destroy_qp,
	.create_srq_ex = sys_create_srq_ex,
	.destroy_srq = sys_destroy_srq,
	.connect = sys_connect,
	.listen = sys_listen,
	.accept = sys_accept,
	.reject = sys_reject,
	.notify = sys_notify,
	.disconnect = sys_disconnect,
	.establish = sys_establish,
	.join_multicast = sys_join_multicast,
	.leave_multicast = sys_leave_multicast,
	.set_option = sys_set_option,
	.migrate_id = sys_migrate_id,
	.set_local_ece = sys_set_local_ece,
	.get_remote_ece = sys_get_remote_ece,
};
