/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Decoding of the rtnetlink messages rxdpd follows (RTM_NEWLINK/DELLINK,
 * RTM_NEWADDR/DELADDR, RTM_NEWNEIGH/DELNEIGH) into plain structs. Pure
 * functions over one message; every length is checked.
 */
#ifndef RXDP_DAEMON_NL_PARSE_H
#define RXDP_DAEMON_NL_PARSE_H

#include <linux/netlink.h>
#include <linux/types.h>
#include <net/if.h>

struct nl_link_msg {
	int ifindex;
	char ifname[IF_NAMESIZE];
	__u8 mac[6];
	int has_mac;
	unsigned int flags; /* IFF_* */
	__u32 mtu;
	__u32 num_rx_queues; /* 0 if not reported */
	__u16 type; /* ARPHRD_* */
};

struct nl_addr_msg {
	int ifindex;
	__u8 family;
	__u8 prefixlen;
	__u8 ip[16]; /* IPv4 in the first 4 bytes */
	__u32 flags; /* IFA_F_* */
};

struct nl_neigh_msg {
	int ifindex;
	__u8 family;
	__u8 ip[16];
	__u8 mac[6];
	int has_mac;
	__u16 state; /* NUD_* */
	__u8 flags; /* NTF_* */
};

/* 0, or -EINVAL for a message that is not well-formed */
int nl_parse_link(const struct nlmsghdr *nlh, struct nl_link_msg *out);
int nl_parse_addr(const struct nlmsghdr *nlh, struct nl_addr_msg *out);
int nl_parse_neigh(const struct nlmsghdr *nlh, struct nl_neigh_msg *out);

#endif /* RXDP_DAEMON_NL_PARSE_H */
