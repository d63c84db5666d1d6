// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Routes for rdma_resolve_addr(): which interface (so which rxdp device)
 * and which source address lead to a destination, asked of the kernel with
 * RTM_GETROUTE on a socket of its own (rtnl.c's socket carries the
 * multicast notifications, and a reply must not be mistaken for one). The
 * kernel answers a route query at once, so the control thread waits for it.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/rtnetlink.h>

#include <libmnl/libmnl.h>

#include "daemon/cm.h"

static struct mnl_socket *route_nl;
static unsigned int route_seq;

int cm_route_open(void)
{
	route_nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!route_nl)
		return -errno;
	if (mnl_socket_bind(route_nl, 0, MNL_SOCKET_AUTOPID)) {
		int err = -errno;

		mnl_socket_close(route_nl);
		route_nl = NULL;
		return err;
	}
	route_seq = (unsigned int)time(NULL);
	return 0;
}

void cm_route_close(void)
{
	if (route_nl)
		mnl_socket_close(route_nl);
	route_nl = NULL;
}

struct route_cb {
	struct cm_route *r;
	int family;
	int found;
};

static int route_attr(const struct nlattr *a, void *data)
{
	struct route_cb *cb = data;
	size_t alen = cb->family == AF_INET ? 4 : 16;

	switch (mnl_attr_get_type(a)) {
	case RTA_OIF:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			cb->r->ifindex = (int)mnl_attr_get_u32(a);
		break;
	case RTA_PREFSRC:
		if (mnl_attr_get_payload_len(a) == alen) {
			memcpy(cb->r->src, mnl_attr_get_payload(a), alen);
			cb->r->has_src = 1;
		}
		break;
	}
	return MNL_CB_OK;
}

static int route_msg(const struct nlmsghdr *nlh, void *data)
{
	struct route_cb *cb = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	cb->r->local = rtm->rtm_type == RTN_LOCAL;
	cb->found = 1;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr, cb);
	return MNL_CB_OK;
}

int cm_route_get(int family, const __u8 *dst, const __u8 *src,
		 struct cm_route *r)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct route_cb cb = { .r = r, .family = family };
	size_t alen = family == AF_INET ? 4 : 16;
	unsigned int seq, portid;
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	ssize_t n;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!route_nl)
		return -ENOTCONN;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq = ++route_seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_dst_len = (unsigned char)(alen * 8);
	mnl_attr_put(nlh, RTA_DST, alen, dst);
	if (src) {
		rtm->rtm_src_len = (unsigned char)(alen * 8);
		mnl_attr_put(nlh, RTA_SRC, alen, src);
	}
	if (mnl_socket_sendto(route_nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	portid = mnl_socket_get_portid(route_nl);
	for (;;) {
		n = mnl_socket_recvfrom(route_nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, route_msg, &cb);
		if (ret < 0)
			return errno ? -errno : -ENETUNREACH;
		if (cb.found)
			return r->ifindex ? 0 : -ENETUNREACH;
		if (ret == MNL_CB_STOP)
			return -ENETUNREACH;
	}
}
