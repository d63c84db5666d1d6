/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP classifier on a test bench, for tests/bpf/test_xdp.c and the
 * fuzz target tests/fuzz/fuzz_xdp.c: the program loaded (root), its maps
 * written as rxdpd writes them, a frame run through it with
 * BPF_PROG_TEST_RUN, and what every run must keep: the frame comes out
 * unchanged, exactly one verdict counter moves, by one, the action agrees
 * with it, and the engine's parser (pkt_parse) agrees with the verdict:
 * what the program drops as malformed it rejects as malformed, what the
 * program takes for RoCEv2 it parses, what the program passes as not RoCE
 * it refuses too (one parser for both sides). A frame longer than the
 * linear variant can see (on kernels without multi-buffer XDP, which never
 * hand it one) is the exception: that variant drops it as truncated.
 * Functions return 0 or -errno.
 */
#ifndef RXDP_TESTS_XDP_RIG_H
#define RXDP_TESTS_XDP_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "rxdp/maps.h"
#include "rxdp_xdp.skel.h"

#define XDP_RIG_PKT_MAX 8192 /* a 4096-byte payload with headers: two pages */
/* what a program without xdp.frags sees of a frame: a page less headroom
 * and the shared info at its end (BPF_PROG_TEST_RUN puts the rest in
 * fragments it cannot read) */
#define XDP_RIG_LINEAR_MAX 3520

struct xdp_rig {
	struct rxdp_xdp_bpf *skel;
	int prog_fd; /* the variant run: rxdp_xdp or rxdp_xdp_linear */
	bool linear;
	int ncpus;
};

/* The QPs the tests and the fuzz target set up (xdp_rig_set_qp) */
#define XDP_RIG_QP_RC 0x000102
#define XDP_RIG_QP_UC 0x000203
#define XDP_RIG_QP_UD 0x000304
#define XDP_RIG_QKEY 0x11111111

/* A frame from the peer (xdp_rig_build): what it is, and how it lies */
struct xdp_rig_pkt {
	int vlan; /* 0, 0x8100 or 0x88a8 */
	int ipv6;
	int ip_opt_words; /* IPv4 options, in 32-bit words */
	int frag; /* IPv4 MF set */
	uint16_t ethertype; /* 0: IP */
	uint16_t dport; /* 0: 4791 */
	int udp_len_delta; /* lie in the UDP length */
	uint8_t opcode;
	uint32_t qpn;
	uint32_t psn;
	uint16_t pkey; /* 0: 0xffff */
	uint8_t tver;
	uint8_t pad;
	uint32_t payload;
	uint32_t qkey; /* DETH */
	uint32_t dma_len; /* RETH */
	const uint8_t *dgid; /* destination address as a GID; NULL: ours */
};

/* The frame o describes into buf (XDP_RIG_PKT_MAX bytes): its length */
uint32_t xdp_rig_build(uint8_t *buf, const struct xdp_rig_pkt *o);

/* Where the frames of the tests come from, and where they go */
extern const uint8_t xdp_rig_peer_mac[6];
extern const uint8_t xdp_rig_peer_v4[16], xdp_rig_local_v4[16];
extern const uint8_t xdp_rig_peer_v6[16], xdp_rig_local_v6[16];

int xdp_rig_open(struct xdp_rig *r);
void xdp_rig_close(struct xdp_rig *r);
/* The variant run from now on */
void xdp_rig_variant(struct xdp_rig *r, bool linear);

/* A QP's context as rxdpd writes it at RTR: RC/UC from the IPv4 peer */
int xdp_rig_set_qp(struct xdp_rig *r, uint32_t qpn, int type, int state,
		   uint16_t pkey, uint32_t qkey, uint32_t owner_slot);
int xdp_rig_get_ctx(struct xdp_rig *r, uint32_t qpn, struct rxdp_qp_ctx *c);
int xdp_rig_put_ctx(struct xdp_rig *r, const struct rxdp_qp_ctx *c);
int xdp_rig_set_psn(struct xdp_rig *r, uint32_t qpn, uint32_t epsn,
		    uint32_t una, uint32_t next, uint32_t flags);
int xdp_rig_get_psn(struct xdp_rig *r, uint32_t qpn, struct rxdp_qp_psn *p);
/* The verdict counters, summed over CPUs */
int xdp_rig_stats(struct xdp_rig *r, uint64_t out[RXDP_V_MAX]);
int xdp_rig_qp_stats(struct xdp_rig *r, uint32_t qpn,
		     struct rxdp_qp_stats *sum);

/*
 * Run the program on len bytes of buf. 0 with *verdict (the one counter
 * that moved) and *action (its return code) when every rule above held;
 * else -EPROTO with why filled in.
 */
int xdp_rig_run(struct xdp_rig *r, const uint8_t *buf, uint32_t len,
		uint32_t *verdict, int *action, char *why, size_t wsz);

#endif
