// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The interface's memberships of multicast groups (RoCEv2 A17.4.5: a
 * multicast GID is an IP multicast address, and the network must deliver
 * the group's datagrams to this host). While a group has a QP attached on
 * the device (the engine says when: mcast_cb), a UDP socket of rxdpd's
 * holds the group on the interface (IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP
 * with its ifindex), as an application's would: the kernel answers the
 * network's IGMP/MLD queries for it, so that switches forward the group
 * here, and puts the group's Ethernet address (01:00:5e:.., 33:33:..) in
 * the NIC's filter. Closing the socket leaves the group. The socket is
 * bound to no port: it receives nothing (the XDP program takes the
 * group's RoCE datagrams first anyway).
 *
 * Control thread only (the engine calls back with its lock held from the
 * control thread's attach, detach and destroy).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/log.h"
#include "daemon/rxdpd.h"

struct mcast_join {
	struct mcast_join *next;
	__u8 gid[16];
	int fd; /* -1: the kernel refused the join (logged) */
};

static int gid_v4(const __u8 *gid)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, v4mapped, sizeof(v4mapped));
}

static int join_socket(int ifindex, const __u8 *gid)
{
	int v4 = gid_v4(gid), fd, ret;

	fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (v4) {
		struct ip_mreqn mr = { .imr_ifindex = ifindex };

		memcpy(&mr.imr_multiaddr, gid + 12, 4);
		ret = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				 sizeof(mr));
	} else {
		struct ipv6_mreq mr = { .ipv6mr_interface = ifindex };

		memcpy(&mr.ipv6mr_multiaddr, gid, 16);
		ret = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr,
				 sizeof(mr));
	}
	if (ret) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static void gid_str(const __u8 *gid, char *buf, size_t len)
{
	if (gid_v4(gid))
		inet_ntop(AF_INET, gid + 12, buf, len);
	else
		inet_ntop(AF_INET6, gid, buf, len);
}

void mcast_join(struct mcast_join **list, int ifindex, const __u8 *gid)
{
	struct mcast_join *j = calloc(1, sizeof(*j));
	char s[INET6_ADDRSTRLEN];

	gid_str(gid, s, sizeof(s));
	if (!j) {
		pr_warn("multicast: cannot join %s: out of memory\n", s);
		return;
	}
	memcpy(j->gid, gid, 16);
	j->fd = join_socket(ifindex, gid);
	if (j->fd < 0)
		/* the group still works where the link floods multicast */
		pr_warn("multicast: the interface (ifindex %d) cannot join "
			"%s: %s; its datagrams reach this host only where the "
			"network floods them\n",
			ifindex, s, strerror(-j->fd));
	else
		pr_info("multicast: joined %s on ifindex %d\n", s, ifindex);
	j->next = *list;
	*list = j;
}

void mcast_leave(struct mcast_join **list, const __u8 *gid)
{
	for (struct mcast_join **pp = list; *pp; pp = &(*pp)->next) {
		struct mcast_join *j = *pp;
		char s[INET6_ADDRSTRLEN];

		if (memcmp(j->gid, gid, 16))
			continue;
		*pp = j->next;
		if (j->fd >= 0)
			close(j->fd);
		gid_str(gid, s, sizeof(s));
		pr_info("multicast: left %s\n", s);
		free(j);
		return;
	}
}

void mcast_leave_all(struct mcast_join **list)
{
	while (*list)
		mcast_leave(list, (*list)->gid);
}
