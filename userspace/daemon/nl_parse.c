// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rtnetlink message decoding for rxdpd (see nl_parse.h). */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "daemon/nl_parse.h"

#define MAX_TB 64

struct tb {
	const struct nlattr *a[MAX_TB];
};

static int tb_cb(const struct nlattr *attr, void *data)
{
	struct tb *tb = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type < MAX_TB)
		tb->a[type] = attr;
	return MNL_CB_OK;
}

/* The fixed header after nlmsghdr must fit, then the attributes parse */
static int parse_tb(const struct nlmsghdr *nlh, size_t hdrlen, struct tb *tb)
{
	memset(tb, 0, sizeof(*tb));
	/* libmnl walks attributes up to the aligned length: the kernel's
	 * messages are aligned, and an unaligned one is refused rather than
	 * read up to 3 bytes past its end */
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + MNL_ALIGN(hdrlen) ||
	    nlh->nlmsg_len != MNL_ALIGN(nlh->nlmsg_len))
		return -EINVAL;
	if (mnl_attr_parse(nlh, hdrlen, tb_cb, tb) < 0)
		return -EINVAL;
	return 0;
}

static int copy_ip(const struct nlattr *a, __u8 family, __u8 *ip)
{
	size_t len = mnl_attr_get_payload_len(a);

	if ((family == AF_INET && len != 4) ||
	    (family == AF_INET6 && len != 16))
		return -EINVAL;
	memset(ip, 0, 16);
	memcpy(ip, mnl_attr_get_payload(a), len);
	return 0;
}

int nl_parse_link(const struct nlmsghdr *nlh, struct nl_link_msg *out)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct tb tb;
	const struct nlattr *a;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return -EINVAL;
	if (parse_tb(nlh, sizeof(*ifi), &tb))
		return -EINVAL;
	if (ifi->ifi_index <= 0)
		return -EINVAL;
	out->ifindex = ifi->ifi_index;
	out->flags = ifi->ifi_flags;
	out->type = ifi->ifi_type;
	a = tb.a[IFLA_IFNAME];
	if (a) {
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ||
		    mnl_attr_get_payload_len(a) > IF_NAMESIZE)
			return -EINVAL;
		strcpy(out->ifname, mnl_attr_get_str(a));
	}
	a = tb.a[IFLA_ADDRESS];
	if (a && mnl_attr_get_payload_len(a) == 6) {
		memcpy(out->mac, mnl_attr_get_payload(a), 6);
		out->has_mac = 1;
	}
	a = tb.a[IFLA_MTU];
	if (a) {
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return -EINVAL;
		out->mtu = mnl_attr_get_u32(a);
	}
	a = tb.a[IFLA_NUM_RX_QUEUES];
	if (a) {
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return -EINVAL;
		out->num_rx_queues = mnl_attr_get_u32(a);
	}
	return 0;
}

int nl_parse_addr(const struct nlmsghdr *nlh, struct nl_addr_msg *out)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct tb tb;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWADDR && nlh->nlmsg_type != RTM_DELADDR)
		return -EINVAL;
	if (parse_tb(nlh, sizeof(*ifa), &tb))
		return -EINVAL;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return -EINVAL;
	out->ifindex = ifa->ifa_index;
	out->family = ifa->ifa_family;
	out->prefixlen = ifa->ifa_prefixlen;
	out->flags = ifa->ifa_flags;
	if (tb.a[IFA_FLAGS] &&
	    mnl_attr_validate(tb.a[IFA_FLAGS], MNL_TYPE_U32) == 0)
		out->flags = mnl_attr_get_u32(tb.a[IFA_FLAGS]);
	/* IFA_LOCAL is the interface's own address (it differs from
	 * IFA_ADDRESS only on point-to-point links); IPv6 sends IFA_ADDRESS */
	a = tb.a[IFA_LOCAL] ? tb.a[IFA_LOCAL] : tb.a[IFA_ADDRESS];
	if (!a || out->ifindex <= 0)
		return -EINVAL;
	return copy_ip(a, out->family, out->ip);
}

int nl_parse_neigh(const struct nlmsghdr *nlh, struct nl_neigh_msg *out)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct tb tb;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWNEIGH && nlh->nlmsg_type != RTM_DELNEIGH)
		return -EINVAL;
	if (parse_tb(nlh, sizeof(*nd), &tb))
		return -EINVAL;
	if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6)
		return -EINVAL;
	out->ifindex = nd->ndm_ifindex;
	out->family = nd->ndm_family;
	out->state = nd->ndm_state;
	out->flags = nd->ndm_flags;
	a = tb.a[NDA_DST];
	if (!a || out->ifindex <= 0 || copy_ip(a, out->family, out->ip))
		return -EINVAL;
	a = tb.a[NDA_LLADDR];
	if (a && mnl_attr_get_payload_len(a) == 6) {
		memcpy(out->mac, mnl_attr_get_payload(a), 6);
		out->has_mac = 1;
	}
	return 0;
}
