/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where rxdp pins its maps: RXDP_BPFFS_ROOT/net<netns inode>/<ifname>/.
 *
 * The netns component keeps two namespaces' interfaces of the same name
 * apart; the bpffs lives under /run so that commands started with
 * `ip netns exec` see it (docs/design.md, "Two hosts on one machine").
 */
#ifndef RXDP_BPFFS_H
#define RXDP_BPFFS_H

#include <stddef.h>

/*
 * Make sure RXDP_BPFFS_ROOT is a bpffs that outlives this process: as
 * rxdp_bpffs_enter(), then mount one (mode 0700) in the mount namespace
 * entered if there is none. Single-threaded callers only. 0/-errno
 */
int rxdp_bpffs_ensure(void);
/* RXDP_BPFFS_ROOT/net<inode> for this process's network namespace. 0/-errno */
int rxdp_bpffs_netns_dir(char *buf, size_t len);
/* The pin directory of one interface in this network namespace. 0/-errno */
int rxdp_bpffs_if_dir(const char *ifname, char *buf, size_t len);

/*
 * Join the mount namespace in which RXDP_BPFFS_ROOT is (or is to be) the
 * bpffs, without mounting anything: the caller's own if the bpffs is visible
 * here, else (under `ip netns exec`) the nearest ancestor's that differs.
 * Changes the process's mount namespace, so call it before creating threads;
 * the network namespace is untouched. 0/-errno (-ENOENT: no bpffs yet).
 */
int rxdp_bpffs_enter(void);
/* Where libxdp keeps its dispatcher pins for this network namespace
 * (RXDP_BPFFS_ROOT/libxdp/net<inode>): set LIBXDP_BPFFS to it. 0/-errno */
int rxdp_bpffs_libxdp_dir(char *buf, size_t len);
/* RXDP_BPFFS_ROOT/net<inode>/<ifname>/<map>, a pinned map's path. 0/-errno */
int rxdp_bpffs_map_path(const char *ifname, const char *map, char *buf,
			size_t len);
/* mkdir -p, mode 0700. 0/-errno */
int rxdp_bpffs_mkdirs(const char *path);

#endif /* RXDP_BPFFS_H */
