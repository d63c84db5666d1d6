/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A fake rxdpd for the verbs library's tests (see fake_rxdpd.c) */
#ifndef RXDP_TEST_FAKE_RXDPD_H
#define RXDP_TEST_FAKE_RXDPD_H

#include <linux/types.h>

#include "common/ctl.h"

#define IFINDEX_A 7
#define IFINDEX_B 9
#define IFINDEX_GONE 11 /* listed, then says ENODEV */

extern int fake_port_state_b; /* enum ibv_port_state of rxdp_veth9 */
extern const __u8 fake_dmac[6]; /* what RESOLVE answers */

/* The GIDs served: 0 link-local, 1 ::ffff:10.0.0.1, the rest empty */
void fake_gid_of(__u32 index, __u8 gid[16]);

void fake_rxdpd_start(void); /* aborts if it cannot listen */
/*
 * The write ends rxdpd would write events to: the last context's async
 * pipe (struct rxdp_hca_event records), a channel's pipe (CQ pointers)
 */
int fake_rxdpd_async_wfd(void);
int fake_rxdpd_channel_wfd(__u32 handle);
void fake_rxdpd_stop(void); /* idempotent */

#endif
