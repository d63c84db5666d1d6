/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the verbs test programs (tests/rc/memrules.c, odp.c, fatal.c) share:
 * built against the system's <infiniband/verbs.h>, run on build/lib's
 * libibverbs. Each call exits the program with a line naming prog on
 * failure.
 */
#ifndef RXDP_TESTS_VTEST_H
#define RXDP_TESTS_VTEST_H

#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>

/* Set by VT_CHECK: some check failed (the program's exit code) */
extern int vt_failed;

/* A check that goes on: "FAIL <message>" on stderr, vt_failed set */
#define VT_CHECK(c, ...)                              \
	do {                                          \
		if (!(c)) {                           \
			fprintf(stderr, "FAIL ");     \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n");        \
			vt_failed = 1;                \
		}                                     \
	} while (0)

/* "prog: what: strerror(errno)" on stderr, and exit 1 */
void vt_die(const char *prog, const char *what) __attribute__((noreturn));

/* The device called name, opened */
struct ibv_context *vt_open(const char *prog, const char *name);
/* The index of the port's first IPv4-mapped GID */
int vt_ipv4_gid(const char *prog, struct ibv_context *ctx);
/*
 * An RC QP to INIT, RTR and RTS towards QP dest behind GID gid_index of
 * its own device (loopback through rxdpd): path MTU 1024, remote write,
 * read and atomic access, the ACK timeout given, retries 7
 */
void vt_rc_connect(const char *prog, struct ibv_qp *q, int gid_index,
		   uint32_t dest, uint8_t timeout);
/* The same towards QP dest behind GID dgid (another host's) */
void vt_rc_connect_gid(const char *prog, struct ibv_qp *q, int gid_index,
		       uint32_t dest, const union ibv_gid *dgid,
		       uint8_t timeout);

/* The next completion of cq (waits 100 s at most) */
struct ibv_wc vt_wait_wc(const char *prog, struct ibv_cq *cq);
/*
 * One signaled WR on q: opcode with len bytes at buf (lkey), towards
 * (raddr, rkey); atomics add or compare-swap a and b. Its completion's
 * status, from cq (q's send CQ, with nothing else pending).
 */
enum ibv_wc_status vt_post1(const char *prog, struct ibv_qp *q,
			    enum ibv_wr_opcode op, void *buf, uint32_t lkey,
			    uint32_t len, uint64_t raddr, uint32_t rkey,
			    uint64_t a, uint64_t b);

/*
 * Across the wire: a requester in another process on another host (the
 * agent) posts one WR at a time on an RC QP of its own, from buffers of
 * its own, towards the test's QP, which is the responder: the bytes of a
 * Write or a Send go to the agent over TCP first, those a Read or an
 * atomic brought come back. So a test of what a responder's memory does
 * (its rules, on-demand paging) runs the same over XDP and AF_XDP as
 * looped back in one process.
 *
 *   vt_agent          serve one test's requests on TCP port port (the
 *                     agent's main: `PROG DEVICE GID_INDEX agent PORT`),
 *                     exit 0 when it hangs up
 *   vt_remote         true when $VT_PEER (HOST:PORT, an agent) is set:
 *                     connects to it the first time
 *   vt_remote_connect a new QP of the agent's, and q connected with it both
 *                     ways (again after an error left them in ERR)
 *   vt_remote_post1   vt_post1, done by the agent: opcode with len bytes
 *                     (from buf: Write, Send; into buf: Read, atomics)
 */
void vt_agent(const char *prog, struct ibv_context *ctx, int gid_index,
	      const char *port) __attribute__((noreturn));
int vt_remote(const char *prog);
void vt_remote_connect(const char *prog, struct ibv_qp *q, int gid_index);
enum ibv_wc_status vt_remote_post1(const char *prog, enum ibv_wr_opcode op,
				   void *buf, uint32_t len, uint64_t raddr,
				   uint32_t rkey, uint64_t a, uint64_t b);

#endif
