/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where rxdp pins its maps: RXDP_BPFFS_ROOT/net<netns inode>/<ifname>/.
 *
 * The netns component keeps two namespaces' interfaces of the same name
 * apart; the bpffs lives under /run so that commands started with
 * `ip netns exec` see it (see shared/notes/netns-and-bpffs.md).
 */
#ifndef RXDP_BPFFS_H
#define RXDP_BPFFS_H

#include <stddef.h>

/* Make sure RXDP_BPFFS_ROOT is a bpffs that outlives this process. 0/-errno */
int rxdp_bpffs_ensure(void);
/* RXDP_BPFFS_ROOT/net<inode> for this process's network namespace. 0/-errno */
int rxdp_bpffs_netns_dir(char *buf, size_t len);
/* The pin directory of one interface in this network namespace. 0/-errno */
int rxdp_bpffs_if_dir(const char *ifname, char *buf, size_t len);

#endif /* RXDP_BPFFS_H */
