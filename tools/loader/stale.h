/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Stale pins: what rxdp-loader pinned and nothing uses any more. A network
 * namespace deleted while rxdp was attached in it leaves its pin directory
 * (RXDP_BPFFS_ROOT/net<inode>, and libxdp's beside it); the kernel reuses
 * the inode number, so a later namespace would meet those maps. An
 * interface deleted, or its program taken off with ip link, leaves its own.
 * `rxdp-loader status` lists them, `rxdp-loader clean` removes them.
 */
#ifndef RXDP_LOADER_STALE_H
#define RXDP_LOADER_STALE_H

#include <limits.h>

enum stale_why {
	STALE_NETNS_GONE, /* the network namespace no longer exists */
	STALE_IF_GONE, /* this namespace's interface no longer exists */
	STALE_NOT_ATTACHED, /* the interface is there, rxdp is not on it */
};

struct stale_pin {
	char path[PATH_MAX];
	enum stale_why why;
};

/*
 * The stale pin directories under RXDP_BPFFS_ROOT (entered already), into a
 * new array *out (free() it): their count, or -errno. attached(ifindex)
 * says whether rxdp holds an interface of this network namespace (1, 0,
 * -errno: not knowing counts as attached). A namespace counts as alive
 * while a task is in it, a file descriptor holds it or ip netns names it;
 * one held only by a bind mount of another mount namespace looks dead from
 * here. Outside the host's pid namespace, other namespaces are not judged.
 */
int stale_list(int (*attached)(int ifindex), struct stale_pin **out);
/* Remove a stale directory and everything in it. 0/-errno */
int stale_remove(const char *path);
/* Why a directory is stale, in words */
const char *stale_why_str(enum stale_why why);

#endif /* RXDP_LOADER_STALE_H */
