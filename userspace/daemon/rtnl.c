// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdpd's view of the network, from rtnetlink (libmnl): links, their
 * addresses (-> GID tables) and the neighbour table (-> destination MACs).
 *
 * Start-up dumps links, addresses and neighbours, then the socket follows
 * RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR and RTNLGRP_NEIGH.
 * A buffer overrun (ENOBUFS) means events were lost: everything is dumped
 * again, and what the dump no longer shows is removed (mark and sweep), so a
 * GID that still exists keeps its index.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "common/log.h"
#include "daemon/nl_parse.h"
#include "daemon/event.h"
#include "daemon/rxdpd.h"

/* 32 KiB: what the kernel puts in one dump message batch at most */
#define NL_BUF_SIZE 32768

static struct mnl_socket *nl;
static int nl_fd = -1;
static unsigned int nl_seq;
static struct rxdp_neigh *neighs; /* rtnl_neigh_lookup(), neigh_find() */
static bool resync_needed; /* the socket overran (ENOBUFS) */

/* NUD states in which the kernel's entry holds a usable MAC */
#define NUD_USABLE                                                           \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | \
	 NUD_DELAY)

struct rxdp_link *link_by_index(int ifindex)
{
	struct rxdp_link *l;

	for (l = rxdpd.links; l; l = l->next)
		if (l->ifindex == ifindex)
			return l;
	return NULL;
}

/* IPv4-mapped IPv6 address: the RoCEv2 GID of an IPv4 address (A17.4.5.1) */
static void gid_from_ip(const struct rxdp_addr *a, __u8 *gid)
{
	if (a->family == AF_INET6) {
		memcpy(gid, a->ip, 16);
		return;
	}
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, a->ip, 4);
}

/* fe80::/64 with the modified EUI-64 interface identifier (RFC 4291 2.5.1) */
static void gid_link_local(const __u8 *mac, __u8 *gid)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

/*
 * The GID table, the way Linux RoCE devices build theirs: index 0 the
 * default link-local GID from the MAC, then one entry per address, each
 * keeping its index while the address lives.
 */
void link_gid_rebuild(struct rxdp_link *l)
{
	__u8 before[RXDP_GID_TBL_LEN][16];
	struct rxdp_addr *a;
	int i;

	memcpy(before, l->gids, sizeof(before));
	memset(l->gids, 0, sizeof(l->gids));
	memset(l->gid_used, 0, sizeof(l->gid_used));
	gid_link_local(l->mac, l->gids[0]);
	l->gid_used[0] = true;
	for (a = l->addrs; a; a = a->next)
		if (a->gid_index > 0 && a->gid_index < RXDP_GID_TBL_LEN)
			l->gid_used[a->gid_index] = true;
	for (a = l->addrs; a; a = a->next) {
		__u8 gid[16];

		gid_from_ip(a, gid);
		if (!memcmp(gid, l->gids[0], 16)) {
			a->gid_index = 0; /* the link-local address itself */
			continue;
		}
		if (a->gid_index <= 0) {
			for (i = 1; i < RXDP_GID_TBL_LEN; i++)
				if (!l->gid_used[i])
					break;
			if (i == RXDP_GID_TBL_LEN) {
				a->gid_index = -1;
				pr_warn("%s: GID table full, no GID for an "
					"address\n",
					l->ifname);
				continue;
			}
			a->gid_index = i;
			l->gid_used[i] = true;
		}
		memcpy(l->gids[a->gid_index], gid, 16);
	}
	/* IBTA 11.6.3: GID table changes are an affiliated port event */
	if (l->dev && memcmp(before, l->gids, sizeof(before)))
		dev_announce_port(l->ifindex, IBV_EVENT_GID_CHANGE, 1);
}

static void link_announce(enum dev_event_type type, struct rxdp_link *l)
{
	struct dev_event ev = { .type = type, .l = l, .ifindex = l->ifindex };

	dev_announce(&ev);
}

static void link_free(struct rxdp_link *l)
{
	struct rxdp_addr *a, *n;

	link_announce(DEV_EV_LINK_GONE, l);
	for (a = l->addrs; a; a = n) {
		n = a->next;
		free(a);
	}
	free(l);
}

static void link_del(int ifindex)
{
	struct rxdp_link **pp, *l;

	for (pp = &rxdpd.links; (l = *pp); pp = &l->next) {
		if (l->ifindex == ifindex) {
			*pp = l->next;
			pr_info("link %s (ifindex %d) removed\n", l->ifname,
				l->ifindex);
			link_free(l);
			return;
		}
	}
}

static void handle_link(const struct nlmsghdr *nlh)
{
	struct nl_link_msg m;
	struct rxdp_link *l;

	if (nl_parse_link(nlh, &m)) {
		pr_debug("rtnl: malformed link message ignored\n");
		return;
	}
	if (nlh->nlmsg_type == RTM_DELLINK) {
		link_del(m.ifindex);
		return;
	}
	/* RoCE runs over Ethernet only */
	if (m.type != ARPHRD_ETHER)
		return;
	l = link_by_index(m.ifindex);
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l) {
			pr_warn("out of memory tracking link %d\n", m.ifindex);
			return;
		}
		l->ifindex = m.ifindex;
		l->next = rxdpd.links;
		rxdpd.links = l;
	}
	l->mark = rxdpd.mark;
	if (m.ifname[0] && strcmp(l->ifname, m.ifname)) {
		/* a rename: the pin directory is by name, look again */
		link_announce(DEV_EV_LINK_GONE, l);
		memcpy(l->ifname, m.ifname, sizeof(l->ifname));
	}
	if (m.has_mac && memcmp(l->mac, m.mac, 6)) {
		memcpy(l->mac, m.mac, 6);
		link_gid_rebuild(l);
	}
	if (l->flags != m.flags || l->mtu != m.mtu)
		pr_debug("%s: flags %#x mtu %u\n", l->ifname, m.flags, m.mtu);
	l->flags = m.flags;
	if (m.mtu)
		l->mtu = m.mtu;
	/* the queues allocated: ethtool's count (dev.c), where there is
	 * one, is the queues in use */
	if (m.num_rx_queues && !l->num_rx_queues)
		l->num_rx_queues = m.num_rx_queues;
	/* the device (if any) follows: its port state and events */
	link_announce(DEV_EV_LINK, l);
}

static void handle_addr(const struct nlmsghdr *nlh)
{
	struct nl_addr_msg m;
	struct rxdp_link *l;
	struct rxdp_addr **pp, *a;

	if (nl_parse_addr(nlh, &m))
		return;
	l = link_by_index(m.ifindex);
	if (!l)
		return;
	for (pp = &l->addrs; (a = *pp); pp = &a->next)
		if (a->family == m.family && !memcmp(a->ip, m.ip, 16))
			break;
	if (nlh->nlmsg_type == RTM_DELADDR) {
		if (a) {
			*pp = a->next;
			free(a);
			link_gid_rebuild(l);
			/* a GID only matters on an interface rxdpd serves */
			if (l->dev)
				pr_info("%s: address removed, GID table "
					"updated\n",
					l->ifname);
		}
		return;
	}
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return;
		a->family = m.family;
		memcpy(a->ip, m.ip, 16);
		/* new GIDs go at the end of the list: older ones keep slots */
		*pp = a;
		a->gid_index = -1;
		a->mark = rxdpd.mark;
		link_gid_rebuild(l);
		if (l->dev)
			pr_info("%s: address added, GID index %d\n", l->ifname,
				a->gid_index);
	}
	a->prefixlen = m.prefixlen;
	a->mark = rxdpd.mark;
}

struct rxdp_neigh *neigh_find(int ifindex, int family, const __u8 *ip)
{
	struct rxdp_neigh *n;

	for (n = neighs; n; n = n->next)
		if (n->ifindex == ifindex && n->family == family &&
		    !memcmp(n->ip, ip, 16))
			return n;
	return NULL;
}

static void neigh_del(struct rxdp_neigh *x)
{
	struct rxdp_neigh **pp, *n;

	for (pp = &neighs; (n = *pp); pp = &n->next) {
		if (n == x) {
			*pp = n->next;
			free(n);
			return;
		}
	}
}

static void handle_neigh(const struct nlmsghdr *nlh)
{
	struct nl_neigh_msg m;
	struct rxdp_neigh *n;

	if (nl_parse_neigh(nlh, &m))
		return;
	n = neigh_find(m.ifindex, m.family, m.ip);
	if (nlh->nlmsg_type == RTM_DELNEIGH) {
		if (n)
			neigh_del(n);
		return;
	}
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return;
		n->ifindex = m.ifindex;
		n->family = m.family;
		memcpy(n->ip, m.ip, 16);
		n->next = neighs;
		neighs = n;
	}
	n->state = m.state;
	if (m.has_mac && (m.state & NUD_USABLE) && memcmp(n->mac, m.mac, 6)) {
		struct dev_event ev = { .type = DEV_EV_NEIGH,
					.ifindex = m.ifindex,
					.family = m.family,
					.ip = m.ip,
					.mac = m.mac };

		dev_announce(&ev);
	}
	if (m.has_mac)
		memcpy(n->mac, m.mac, 6);
	else if (!(m.state & NUD_USABLE))
		memset(n->mac, 0, 6);
	n->mark = rxdpd.mark;
}

static int rtnl_cb(const struct nlmsghdr *nlh, void *data)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		handle_link(nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		handle_addr(nlh);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		handle_neigh(nlh);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int subscribe(void)
{
	static const int groups[] = { RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR,
				      RTNLGRP_IPV6_IFADDR, RTNLGRP_NEIGH };
	unsigned int i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP,
					  (void *)&groups[i], sizeof(int)) < 0)
			return -errno;
	return 0;
}

int rtnl_fd(void)
{
	return nl_fd;
}

int rtnl_open(void)
{
	int on = 1, bufsz = 4 << 20;
	const char *test_bufsz = getenv("RXDPD_NETLINK_RCVBUF");

	/* tests shrink the buffer to provoke ENOBUFS and the resync */
	if (test_bufsz && atoi(test_bufsz) > 0)
		bufsz = atoi(test_bufsz);

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err;
	/* a large buffer makes overruns rare; they are still handled */
	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE,
		       &bufsz, sizeof(bufsz)))
		setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUF, &bufsz,
			   sizeof(bufsz));
	/* extended ACKs give readable errors for the requests we send */
	setsockopt(mnl_socket_get_fd(nl), SOL_NETLINK, NETLINK_EXT_ACK, &on,
		   sizeof(on));
	/* join the groups before the first dump: nothing falls in between */
	if (subscribe())
		goto err;
	nl_fd = mnl_socket_get_fd(nl);
	return 0;
err:
	mnl_socket_close(nl);
	nl = NULL;
	return -errno;
}

/* One dump; events arriving meanwhile are handled by the same callback. */
static int dump(int type, int family)
{
	char buf[NL_BUF_SIZE];
	struct nlmsghdr *nlh;
	struct rtgenmsg *g;
	unsigned int seq = ++nl_seq;
	unsigned int portid = mnl_socket_get_portid(nl);
	int ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	g->rtgen_family = family;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0)
			return -errno;
		/* multicast events carry seq 0 and portid 0: accept them */
		ret = mnl_cb_run(buf, n, 0, 0, rtnl_cb, NULL);
		if (ret < 0 && errno != ESRCH && errno != EPROTO)
			return -errno;
		{
			/* done when our dump's NLMSG_DONE went by */
			const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
			int len = (int)n;

			for (; mnl_nlmsg_ok(h, len);
			     h = mnl_nlmsg_next(h, &len)) {
				if (h->nlmsg_seq != seq ||
				    h->nlmsg_pid != portid)
					continue;
				if (h->nlmsg_flags & NLM_F_DUMP_INTR)
					return -EINTR;
				if (h->nlmsg_type == NLMSG_DONE)
					return 0;
				if (h->nlmsg_type == NLMSG_ERROR)
					return -EIO;
			}
		}
	}
}

static void sweep(void)
{
	struct rxdp_link **lp, *l;
	struct rxdp_neigh **np, *n;

	for (lp = &rxdpd.links; (l = *lp);) {
		struct rxdp_addr **ap, *a;
		int changed = 0;

		if (l->mark != rxdpd.mark) {
			*lp = l->next;
			link_free(l);
			continue;
		}
		for (ap = &l->addrs; (a = *ap);) {
			if (a->mark != rxdpd.mark) {
				*ap = a->next;
				free(a);
				changed = 1;
			} else {
				ap = &a->next;
			}
		}
		if (changed)
			link_gid_rebuild(l);
		lp = &l->next;
	}
	for (np = &neighs; (n = *np);) {
		if (n->mark != rxdpd.mark) {
			*np = n->next;
			free(n);
		} else {
			np = &n->next;
		}
	}
}

/* Dump everything again; what the dumps do not mention is gone. */
int rtnl_resync(void)
{
	int tries, ret = 0;

	for (tries = 0; tries < 5; tries++) {
		if (!rxdpd.mark++)
			rxdpd.mark++;
		ret = dump(RTM_GETLINK, AF_UNSPEC);
		if (!ret)
			ret = dump(RTM_GETADDR, AF_UNSPEC);
		if (!ret)
			ret = dump(RTM_GETNEIGH, AF_UNSPEC);
		if (ret == -EINTR || ret == -ENOBUFS)
			continue; /* changed under us: once more */
		break;
	}
	if (ret) {
		pr_warn("rtnetlink dump failed: %s\n", strerror(-ret));
		return ret;
	}
	sweep();
	resync_needed = false;
	return 0;
}

/* Read what the socket holds now (non-blocking), resync on overrun */
void rtnl_event(void)
{
	char buf[NL_BUF_SIZE];

	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				pr_warn("rtnetlink: events lost (ENOBUFS), "
					"resynchronising\n");
				resync_needed = true;
				continue;
			}
			break;
		}
		rtnl_feed(buf, (size_t)n);
	}
	if (resync_needed)
		rtnl_resync();
}

/*
 * Each message its own length says, whole inside the datagram (libmnl's
 * mnl_nlmsg_ok() takes a length past 2^31 for a short one: a kernel never
 * sends one, but this is the check that holds for any)
 */
void rtnl_feed(const void *buf, size_t len)
{
	const char *p = buf;

	while (len >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const void *)p;
		size_t n = nlh->nlmsg_len, step = NLMSG_ALIGN(n);

		if (n < sizeof(*nlh) || n > len) {
			pr_debug(
				"rtnl: a message of %zu bytes in %zu ignored\n",
				n, len);
			return;
		}
		rtnl_cb(nlh, NULL);
		if (step >= len)
			return;
		p += step;
		len -= step;
	}
}

/* Ask the kernel to resolve ip (NTF_USE: neigh_event_send() on the entry) */
static int neigh_kick(int ifindex, int family, const __u8 *ip)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	nlh->nlmsg_seq = ++nl_seq;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = family;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, family == AF_INET ? 4 : 16, ip);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return 0;
}

/*
 * The MAC of ip on ifindex from the neighbour table, without waiting: 0 and
 * the MAC; -EINPROGRESS after asking the kernel to resolve it (the first
 * call, *deadline_ms 0, sets the deadline); -EHOSTUNREACH once the kernel
 * gave up (NUD_FAILED) or the deadline passed. The caller retries on
 * neighbour events and timer ticks.
 */
int rtnl_neigh_lookup(int ifindex, int family, const __u8 *ip, __u8 *mac,
		      long *deadline_ms, int timeout_ms)
{
	struct rxdp_neigh *n = neigh_find(ifindex, family, ip);
	long now = now_ms();

	if (n && (n->state & NUD_USABLE)) {
		memcpy(mac, n->mac, 6);
		return 0;
	}
	if (!*deadline_ms) {
		int err = neigh_kick(ifindex, family, ip);

		if (err)
			pr_debug("neighbour request failed: %s\n",
				 strerror(-err));
		/* the kick restarts a failed entry: do not take the old
		 * verdict for the new attempt's */
		if (n && (n->state & NUD_FAILED))
			n->state = NUD_INCOMPLETE;
		*deadline_ms = now + timeout_ms;
		return -EINPROGRESS;
	}
	if (n && (n->state & NUD_FAILED))
		return -EHOSTUNREACH;
	return now >= *deadline_ms ? -EHOSTUNREACH : -EINPROGRESS;
}
