/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* rxdp's limits, in one place. */
#ifndef RXDP_PARAMS_H
#define RXDP_PARAMS_H

/*
 * QPs per interface. A QP's number carries its context-array index in the low
 * RXDP_QP_INDEX_BITS bits and a generation count above them, so a number is
 * not handed out again soon after its QP is destroyed.
 */
#define RXDP_QP_INDEX_BITS 14
#define RXDP_MAX_QP (1U << RXDP_QP_INDEX_BITS)
#define RXDP_QP_INDEX_MASK (RXDP_MAX_QP - 1)
#define RXDP_QPN_MIN 2 /* 0 (SMI) and 1 (GSI) are reserved, IBTA 3.5.8 */

/* AF_XDP: owners (processes with a data path) x RX queues per interface */
#define RXDP_MAX_OWNERS 64
#define RXDP_MAX_QUEUES 16
#define RXDP_XSK_SLOTS (RXDP_MAX_OWNERS * RXDP_MAX_QUEUES)

/*
 * Multicast (UD QPs attached to groups, ibv_attach_mcast): groups per
 * device, QPs per group, attachments per device in all, and groups per QP.
 * One datagram to a group costs one receive per member: the caps bound it,
 * as a ConnectX's max_mcast_grp / max_mcast_qp_attach /
 * max_total_mcast_qp_attach do (Soft-RoCE: 8192, 56, 0x70000).
 */
#define RXDP_MAX_MCAST_GRP 1024
#define RXDP_MAX_MCAST_QP_ATTACH 56
#define RXDP_MAX_TOTAL_MCAST_QP_ATTACH 4096
#define RXDP_MAX_MCAST_PER_QP 64
/* The destination QPN of every multicast datagram (IBTA 10.5.2.4) */
#define RXDP_MCAST_QPN 0xffffffU

/*
 * Every rxdp verbs device's ibv_device.dev_name starts so (its null device
 * node in /dev/infiniband, daemon/devnode.c); a kernel device's is uverbsN,
 * so rxdp's librdmacm tells rxdp's devices from rdma-core's by it
 */
#define RXDP_DEV_NAME_PREFIX "uverbs-rxdp-"

/* bpffs: mounted here in the root mount namespace, visible to `ip netns exec` */
#define RXDP_BPFFS_ROOT "/run/rxdp/bpffs"

/* The maps are pinned under RXDP_BPFFS_ROOT/<netns>/<ifname>/ by their
 * names in the program (userspace/common/pins.h) */

#endif /* RXDP_PARAMS_H */
