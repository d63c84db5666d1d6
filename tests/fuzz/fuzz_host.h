/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A "host" for the engine's fuzz target and its corpus generator: one
 * engine with an RC, a UC and a UD QP connected to the other host's, an MR
 * at a fixed I/O address, receives posted, and the same requests posted on
 * each side. The generator runs two of them over the in-memory wire and
 * records what host a sends host b; the fuzz target builds host b alone,
 * in the very state those frames were made for (QPNs, PSNs, addresses,
 * I/O addresses), and feeds it the recorded frames, mutated.
 */
#ifndef RXDP_TEST_FUZZ_HOST_H
#define RXDP_TEST_FUZZ_HOST_H

#include <stdint.h>

#include "engine/engine.h"
#include "poster.h"

#define FH_BUF (64u << 10)
#define FH_IOVA(side) (0x7000000000ULL + ((uint64_t)(side) << 32))

struct fuzz_host {
	struct rxdp_engine *e;
	struct rxdp_ecq *scq, *rcq;
	struct rxdp_eqp *rc, *uc, *ud;
	struct rxdp_emr *mr;
	struct tp_ah ah; /* UD: to the other host */
	uint8_t *buf; /* FH_BUF bytes, registered at FH_IOVA(side) */
	uint64_t iova;
};

/*
 * Host `side` (0: a, 1: b) on the port: engine, QPs connected to the other
 * side, receives posted. 0 or -errno.
 */
int fuzz_host_init(struct fuzz_host *h, int side,
		   const struct rxdp_port_ops *ops, void *port);
/* The QPs, MR and AH again (after fuzz_host_fini_qps) on the same engine */
int fuzz_host_qps(struct fuzz_host *h, int side);
void fuzz_host_fini_qps(struct fuzz_host *h);
/* Post the requests every host makes of its peer (peer_rkey: its MR's) */
int fuzz_host_post(struct fuzz_host *h, int side, uint32_t peer_rkey);
/* Post more receives (the generator: after RNR NAKs) */
int fuzz_host_post_recvs(struct fuzz_host *h);
/* Poll and discard every completion */
void fuzz_host_drain(struct fuzz_host *h);
void fuzz_host_fini(struct fuzz_host *h);

/*
 * A corpus file is records: one byte of flags, a little-endian 16-bit
 * length, then that many bytes of frame. The target does, per record:
 */
#define FUZZ_REC_FIX_ICRC 0x1 /* recompute the ICRC before the frame goes in */
#define FUZZ_REC_KEY 0x2 /* R_Key fields are XORed with b's MR's key */

/* Recompute the ICRC of a RoCEv2 frame in place; -1 if there is none */
int fuzz_icrc_fix(uint8_t *f, uint32_t len);
/* XOR every R_Key field (RETH, AtomicETH) with key; ICRC recomputed */
void fuzz_rkey_xor(uint8_t *f, uint32_t len, uint32_t key);

#endif
