/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The AF_XDP sockets bound on an interface, as the kernel lists them
 * (sock_diag for AF_XDP, net/xdp/xsk_diag.c): `rxdp-loader status` shows
 * each one's mode from the kernel itself, not from what rxdpd believes.
 */
#ifndef RXDP_LOADER_XSKS_H
#define RXDP_LOADER_XSKS_H

#include <linux/types.h>

struct rxdp_xsk_diag {
	__u32 queue;
	__u32 inode; /* the socket's, as ss --xdp and /proc/PID/fd show it */
	__u32 umem_id; /* sockets sharing a UMEM share its id */
	__u32 chunk_size; /* the UMEM's frame size */
	int zerocopy; /* the UMEM is the driver's (XDP_DU_F_ZEROCOPY) */
};

/*
 * The AF_XDP sockets of this network namespace bound on ifindex, in queue
 * order, up to max: the count, or -errno (-ENOENT: the kernel has no
 * AF_XDP sock_diag, CONFIG_XDP_SOCKETS_DIAG).
 */
int rxdp_xsks_list(int ifindex, struct rxdp_xsk_diag *out, int max);

#endif /* RXDP_LOADER_XSKS_H */
