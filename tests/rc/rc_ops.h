/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What rc_ops.c (the program, its agent protocol, the classic verbs
 * groups) and rc_ops_mw.c (the extended verbs and memory window groups)
 * share.
 */
#ifndef RXDP_TESTS_RC_OPS_H
#define RXDP_TESTS_RC_OPS_H

#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "common/ibta15.h"

#define MIB (1024 * 1024)
#define BUF_LEN (10 * MIB)
#define RO_LEN 4096
#define MAX_QP 16
#define MAX_SG 8
#define QP_WR 256
#define GUARD 0xa5
#define GUARD_LEN 16
#define POLL_MS 10000

/* --- out-of-band protocol ------------------------------------------------ */

enum {
	C_HELLO = 1,
	C_QP_CREATE,
	C_QP_CONNECT,
	C_QP_DESTROY,
	C_QP_STATE,
	C_FILL,
	C_VERIFY,
	C_POST_RECV,
	C_POLL_RECV,
	C_GET64,
	C_SET64,
	C_ADD_START,
	C_ADD_JOIN,
	C_DIE,
	C_BYE,
	/* memory windows of the server (rc_ops_mw.c) */
	C_MW_ALLOC,
	C_MW_BIND,
	C_MW_INV,
	C_MW_DEALLOC,
	C_MW_DEREG,
	/*
	 * IBTA 1.5: a region of the server's buffer that remote Flushes may
	 * reach (IBV_ACCESS_FLUSH_GLOBAL): its rkey; val what a registration
	 * with IBV_ACCESS_FLUSH_PERSISTENT got (an errno, 0: it succeeded)
	 */
	C_FLUSH_MR,
};

struct qp_params {
	uint32_t sq_sig_all;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	/*
	 * ex: ibv_create_qp_ex with every operation (the ibv_wr_* API) and
	 * ibv_create_cq_ex with completion timestamps; srq_ex: the receives
	 * through an SRQ made with ibv_create_srq_ex
	 */
	uint8_t ex, srq_ex;
};

struct qp_info {
	uint32_t qpn, psn;
	uint8_t gid[16];
};

struct sge_d {
	uint64_t off;
	uint32_t len;
};

struct req {
	uint32_t cmd, qp;
	struct qp_params p;
	struct qp_info peer;
	uint64_t off, len, val, wr_id;
	uint32_t seed, pattern; /* pattern 0: the constant byte seed */
	uint32_t nsge;
	struct sge_d sge[MAX_SG];
	/* C_POLL_RECV: what the completion must say */
	uint32_t status, opcode, byte_len, imm_flag, imm;
	uint32_t inv; /* an R_Key invalidated (IBV_WC_WITH_INV), or 0 */
};

struct rep {
	int32_t status; /* 0: done / as expected */
	struct qp_info info;
	uint32_t rkey, ro_rkey, mtu;
	uint64_t addr, ro_addr, len, val;
	char msg[240];
};

struct conn {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq; /* receives, when made with qp_params.srq_ex */
	struct ibv_qp_ex *qx; /* the ibv_wr_* API, with qp_params.ex */
	struct ibv_cq_ex *scq_ex; /* the send CQ's ibv_start_poll API, too */
	struct ibv_cq_ex *rcq_ex; /* and the receive CQ's (qp_params.ex) */
	struct qp_info info;
};

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *ro_mr;
	uint8_t *buf, *ro;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
	uint32_t mtu_bytes;
	uint32_t max_inline;
	struct conn c[MAX_QP];
};

/* Where things go in both buffers */
#define L_SRC (64 * 1024 + 3) /* gather source / read destination */
#define R_DST (5 * MIB + 5) /* scatter / write destination */
#define R_ATOMIC (BUF_LEN - 4096) /* 8-byte aligned, apart from the rest */

extern struct host srv, cli;
extern int sock;
extern struct rep hello;
extern int checks, failures;
extern uint32_t seed_next;
extern struct qp_params default_params;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		checks++;                                                 \
		if (!(cond)) {                                            \
			failures++;                                       \
			printf("  FAILED (%s:%d): ", __func__, __LINE__); \
			printf(__VA_ARGS__);                              \
			putchar('\n');                                    \
		}                                                         \
	} while (0)

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void fill(uint8_t *p, uint64_t len, uint32_t seed, int pattern, uint64_t base);
int64_t check(const uint8_t *p, uint64_t len, uint32_t seed, int pattern,
	      uint64_t base);
void fill_sg(uint8_t *buf, const struct sge_d *sg, int n, uint64_t len,
	     uint32_t seed);
int check_sg(const uint8_t *buf, uint64_t buf_len, const struct sge_d *sg,
	     int n, uint64_t len, uint32_t seed, char *msg, size_t msz);
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/* The same through ibv_start_poll/ibv_next_poll and ibv_wc_read_* */
int poll_n_ex(struct ibv_cq_ex *cq, struct ibv_wc *wc, int n, int ms);
struct rep rpc(struct req *q);
int rpc_ok(struct req *q, const char *what);
int pair_up(int i, const struct qp_params *p);
void pair_down(int i);
int layout(struct sge_d *sg, uint64_t base, uint64_t len, int nsg,
	   uint32_t cap_extra);
int post(int i, enum ibv_wr_opcode op, const struct sge_d *sg, int n, int flags,
	 uint64_t wr_id, uint64_t raddr, uint32_t rkey, uint64_t add_or_cmp,
	 uint64_t swap, uint32_t imm);
int send_done(int i, uint64_t wr_id, enum ibv_wc_opcode op, const char *what);
/* The server's memory at off: len bytes of seed's pattern, guards around */
void srv_verify(uint64_t off, uint64_t len, uint32_t seed, const char *what);
uint64_t srv_get64(uint64_t off);
void srv_set64(uint64_t off, uint64_t v);

/*
 * rc_ops_mw.c: the server's side of C_MW_* and C_FLUSH_MR, and the
 * client's groups
 */
void serve_mw(const struct req *q, struct rep *r);
void serve_mw_close(void);
void group_ext(void);
void group_mw(void);

#endif /* RXDP_TESTS_RC_OPS_H */
