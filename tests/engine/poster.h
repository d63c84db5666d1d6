/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The application's side of an engine's queues in tests: posting to and
 * polling the same rings (common/hca.h) the verbs library uses, through
 * the same code (common/hca_post.c), with libibverbs' conventions. Where no
 * progress thread runs, posting and an empty poll drive the engine.
 */
#ifndef RXDP_TESTS_POSTER_H
#define RXDP_TESTS_POSTER_H

#include "engine/engine.h"

/* An address handle as a test's UD WRs name it (wr.ud.ah) */
struct tp_ah {
	struct ibv_ah ibv;
	struct rxdp_eah *eah;
	uint32_t handle;
};

/* Give ah a handle for eah; tp_ah_lookup is the engines' cfg.ah_lookup */
void tp_ah_init(struct tp_ah *ah, struct rxdp_eah *eah);
void tp_ah_fini(struct tp_ah *ah);
struct rxdp_eah *tp_ah_lookup(void *arg, uint32_t handle);

int tp_post_send(struct rxdp_eqp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad);
/*
 * Set: posting drives no engine, so that what a test posts on several QPs
 * is all there at the next pass (as posts made while the engine works)
 */
extern bool tp_hold;
/*
 * IBTA 1.5's Atomic Write (the 8 bytes at val) and Flush, built as
 * ibv_wr_atomic_write and ibv_wr_flush build them: 0 or EINVAL/ENOMEM
 */
int tp_post_atomic_write(struct rxdp_eqp *qp, uint64_t wr_id,
			 unsigned int flags, uint32_t rkey, uint64_t raddr,
			 const void *val);
int tp_post_flush(struct rxdp_eqp *qp, uint64_t wr_id, unsigned int flags,
		  uint32_t rkey, uint64_t raddr, uint64_t len, uint8_t type,
		  uint8_t level);
int tp_post_recv(struct rxdp_eqp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad);
int tp_post_srq_recv(struct rxdp_esrq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad);
/* Up to n completions (count), -EOVERFLOW once completions were lost */
int tp_poll_cq(struct rxdp_ecq *cq, int n, struct ibv_wc *wc);
/* ibv_req_notify_cq */
void tp_arm_cq(struct rxdp_ecq *cq, int solicited_only);

/*
 * A QP through INIT and RTR to RTS as a verbs program takes it there, with
 * the attribute masks its type needs (IBTA Table 98): a's values (its
 * qp_state ignored), RC and UC towards a->dest_qp_num along path. 0, or
 * -errno with the engine's reason printed.
 */
int tp_qp_connect(struct rxdp_eqp *qp, enum ibv_qp_type type,
		  const struct rxdp_qp_attr *a, const struct rxdp_path *path);

#endif /* RXDP_TESTS_POSTER_H */
