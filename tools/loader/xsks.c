// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The AF_XDP sockets of an interface from the kernel's sock_diag: one dump
 * request (SOCK_DIAG_BY_FAMILY, AF_XDP, with the socket's binding and its
 * UMEM), the replies filtered by ifindex. The UMEM's zero-copy flag is set
 * once a driver took it for zero-copy (xp_assign_dev()); sockets sharing
 * it are all in that mode, since a shared UMEM binds in its owner's mode.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>

#include "xsks.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define XSKS_SEQ 1

/* One reply message's socket, if it is bound on ifindex: 1, else 0 */
static int xsk_parse(const struct nlmsghdr *nlh, int ifindex,
		     struct rxdp_xsk_diag *x)
{
	const struct xdp_diag_msg *m = NLMSG_DATA(nlh);
	int len = (int)nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	const struct rtattr *a;
	int bound = 0;

	if (len < 0)
		return 0;
	memset(x, 0, sizeof(*x));
	x->inode = m->xdiag_ino;
	a = (const struct rtattr *)((const char *)m + NLMSG_ALIGN(sizeof(*m)));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == XDP_DIAG_INFO &&
		    RTA_PAYLOAD(a) >= sizeof(struct xdp_diag_info)) {
			const struct xdp_diag_info *i = RTA_DATA(a);

			bound = (int)i->ifindex == ifindex;
			x->queue = i->queue_id;
		} else if (a->rta_type == XDP_DIAG_UMEM &&
			   RTA_PAYLOAD(a) >= sizeof(struct xdp_diag_umem)) {
			const struct xdp_diag_umem *u = RTA_DATA(a);

			x->umem_id = u->id;
			x->chunk_size = u->chunk_size;
			x->zerocopy = !!(u->flags & XDP_DU_F_ZEROCOPY);
		}
	}
	return bound;
}

/* Insert x into out[0..n) by queue (n < max); the new count */
static int xsk_insert(struct rxdp_xsk_diag *out, int n,
		      const struct rxdp_xsk_diag *x)
{
	int k = n;

	while (k > 0 && out[k - 1].queue > x->queue) {
		out[k] = out[k - 1];
		k--;
	}
	out[k] = *x;
	return n + 1;
}

int rxdp_xsks_list(int ifindex, struct rxdp_xsk_diag *out, int max)
{
	struct {
		struct nlmsghdr nlh;
		struct xdp_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = XSKS_SEQ,
		},
		.req = {
			.sdiag_family = AF_XDP,
			.xdiag_show = XDP_SHOW_INFO | XDP_SHOW_UMEM,
		},
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	long buf[8192 / sizeof(long)];
	int fd, n = 0, err = 0;

	if (max < 1)
		return -EINVAL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		int left = (int)got;
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!got) {
			err = -EPROTO;
			goto out;
		}
		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			struct rxdp_xsk_diag x;

			if (h->nlmsg_seq != XSKS_SEQ)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				err = e->error ? e->error : -EPROTO;
				goto out;
			}
			if (n < max && xsk_parse(h, ifindex, &x))
				n = xsk_insert(out, n, &x);
		}
	}
out:
	close(fd);
	return err ? err : n;
}
