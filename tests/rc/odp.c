// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * odp DEVICE GID_INDEX TEST: on-demand paging (IBV_ACCESS_ON_DEMAND), as a
 * verbs program sees it (built against the system's <infiniband/verbs.h>,
 * run on build/lib's libibverbs), with RDMA operations between two RC QPs
 * of one process looped back through rxdpd. TEST is one of:
 *
 *   caps      ibv_query_device_ex's odp_caps: ODP and implicit ODP, and
 *             per transport the operations rxdp serves on ODP memory
 *   untouched an ODP MR over memory never touched, larger than
 *             RLIMIT_MEMLOCK (which a pinned MR of that size exceeds):
 *             registered without being populated or re-backed; RDMA
 *             Write, Read, an atomic, Send and receive on it fault the
 *             pages in and move the right bytes
 *   munmap    a page unmapped inside an ODP MR: an RDMA Write or Read
 *             there is a remote access error, a Send from there a local
 *             error, a receive there an error completion (never a crash:
 *             small Sends too); new memory mapped at the hole is what
 *             the MR reaches then (it follows the page tables)
 *   implicit  ibv_reg_mr(pd, NULL, SIZE_MAX, ODP): its keys reach any
 *             address (heap, stack, fresh mmap) for RDMA Write, Read and
 *             atomics; an address nothing maps is a remote access error;
 *             without ODP such a registration is refused
 *   transports what odp_caps claims beyond RC, all in untouched ODP
 *             memory: UC Send, Write, receive (RQ and SRQ); UD Send and
 *             receive (RQ and SRQ)
 *   rereg     ibv_rereg_mr to ODP gives the pages back (private memory
 *             that follows the page tables), from ODP shares them again
 *   advise    ibv_advise_mr: sync prefetch faults the range in; bad lkey,
 *             a non-ODP MR, a range out of the MR, PREFETCH_WRITE
 *             without local write, bad flags, advice or count are the
 *             errors mlx5 gives (ENOENT, EPERM, EFAULT, EINVAL,
 *             EOPNOTSUPP)
 *
 * With VT_PEER=HOST:PORT the requester is an agent on another host
 * (`odp DEVICE GID_INDEX agent PORT` there, tests/lib/vtest.h): the WRs
 * cross the wire into this process's ODP memory. What only a requester's
 * own memory decides (a Write from, or a Read into, a hole; a Write from
 * an address nothing maps) stays a loopback check; untouched, munmap,
 * implicit and rereg run either way.
 *
 * Prints "ok ..." lines; exits 0 if every check held, 1 otherwise.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include <infiniband/verbs.h>

#include "../lib/vtest.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static int gid_index;
static long page;

static void qp_to_rts(struct ibv_qp *q, uint32_t dest)
{
	vt_rc_connect("odp", q, gid_index, dest, 14);
}

/* A fresh pair of connected QPs (an error completion leaves them in ERR) */
static void qps_new(void)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .send_cq = cq,
				       .recv_cq = cq,
				       .cap = { .max_send_wr = 16,
						.max_recv_wr = 16,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_wc wc;

	if ((qa && ibv_destroy_qp(qa)) || (qb && ibv_destroy_qp(qb)))
		vt_die("odp", "ibv_destroy_qp");
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	qb = ibv_create_qp(pd, &ia);
	if (!qb)
		vt_die("odp", "ibv_create_qp");
	if (vt_remote("odp")) {
		/* the requester is the agent's, on the other host */
		vt_remote_connect("odp", qb, gid_index);
		return;
	}
	qa = ibv_create_qp(pd, &ia);
	if (!qa)
		vt_die("odp", "ibv_create_qp");
	qp_to_rts(qa, qb->qp_num);
	qp_to_rts(qb, qa->qp_num);
}

static void setup(const char *dev)
{
	ctx = vt_open("odp", dev);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq)
		vt_die("odp", "PD/CQ");
	qps_new();
}

/* The next completion (of either QP) */
static struct ibv_wc wait_wc(void)
{
	return vt_wait_wc("odp", cq);
}

/*
 * One WR on qa: opcode with len bytes at buf (lkey), towards (raddr,
 * rkey); atomics add or compare-swap a and b. Its status.
 */
static enum ibv_wc_status post1(enum ibv_wr_opcode op, void *buf, uint32_t lkey,
				uint32_t len, uint64_t raddr, uint32_t rkey,
				uint64_t a, uint64_t b)
{
	if (!qa)
		return vt_remote_post1("odp", op, buf, len, raddr, rkey, a, b);
	return vt_post1("odp", qa, op, buf, lkey, len, raddr, rkey, a, b);
}

/*
 * A Send of len bytes at src (slkey) from qa into a receive of qb at dst
 * (dlkey): the send's and the receive's statuses
 */
static void send_recv(void *src, uint32_t slkey, void *dst, uint32_t dlkey,
		      uint32_t len, enum ibv_wc_status *ss,
		      enum ibv_wc_status *rs)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)dst,
				.length = len,
				.lkey = dlkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 },
			   *rbad;
	struct ibv_sge ssge = { .addr = (uintptr_t)src,
				.length = len,
				.lkey = slkey };
	struct ibv_send_wr swr = { .wr_id = 2,
				   .sg_list = &ssge,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED },
			   *sbad;

	*ss = *rs = IBV_WC_GENERAL_ERR;
	if (!qa) {
		/* the agent's Send; ours the receive, if the Send reached it */
		if (ibv_post_recv(qb, &rwr, &rbad))
			vt_die("odp", "post");
		*ss = vt_remote_post1("odp", IBV_WR_SEND, src, len, 0, 0, 0, 0);
		if (*ss == IBV_WC_SUCCESS || *ss == IBV_WC_REM_OP_ERR ||
		    *ss == IBV_WC_REM_ACCESS_ERR ||
		    *ss == IBV_WC_REM_INV_REQ_ERR)
			*rs = wait_wc().status;
		return;
	}
	if (ibv_post_recv(qb, &rwr, &rbad) || ibv_post_send(qa, &swr, &sbad))
		vt_die("odp", "post");
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_wc();

		if (wc.qp_num == qa->qp_num)
			*ss = wc.status;
		else
			*rs = wc.status;
		/* a failed send flushes nothing of qb's: one completion */
		if (wc.qp_num == qa->qp_num && wc.status != IBV_WC_SUCCESS &&
		    wc.status != IBV_WC_REM_OP_ERR &&
		    wc.status != IBV_WC_REM_ACCESS_ERR &&
		    wc.status != IBV_WC_REM_INV_REQ_ERR)
			break;
	}
}

static bool all_bytes(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return false;
	return true;
}

/* How many of the len bytes at p (page-aligned) are resident */
static size_t resident(void *p, size_t len)
{
	size_t n = (len + page - 1) / page, r = 0;
	unsigned char *v = malloc(n);

	if (!v || mincore(p, len, v))
		vt_die("odp", "mincore");
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r * page;
}

/* Is addr in a private anonymous mapping (not re-backed by rxdp's memfd)? */
static bool private_anon(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool ret = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		vt_die("odp", "/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, ino;
		char perm[5];

		if (sscanf(line, "%llx-%llx %4s %*x %*x:%*x %llu", &s, &e, perm,
			   &ino) < 4 ||
		    a < s || a >= e)
			continue;
		ret = !ino && perm[3] == 'p' && !strstr(line, "memfd:");
		break;
	}
	fclose(f);
	return ret;
}

static uint8_t *fresh(size_t len)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		vt_die("odp", "mmap");
	return p;
}

#define ODP_ALL                                             \
	(IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |    \
	 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* --- caps --------------------------------------------------------------- */

static void test_caps(void)
{
	struct ibv_device_attr_ex a;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	uint32_t uc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	uint32_t ud = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_SRQ_RECV;

	memset(&a, 0, sizeof(a));
	if (ibv_query_device_ex(ctx, NULL, &a))
		vt_die("odp", "ibv_query_device_ex");
	VT_CHECK(a.odp_caps.general_caps ==
			 (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
		 "caps: general_caps 0x%llx",
		 (unsigned long long)a.odp_caps.general_caps);
	VT_CHECK(a.odp_caps.per_transport_caps.rc_odp_caps == rc,
		 "caps: rc_odp_caps 0x%x",
		 a.odp_caps.per_transport_caps.rc_odp_caps);
	VT_CHECK(a.odp_caps.per_transport_caps.uc_odp_caps == uc,
		 "caps: uc_odp_caps 0x%x",
		 a.odp_caps.per_transport_caps.uc_odp_caps);
	VT_CHECK(a.odp_caps.per_transport_caps.ud_odp_caps == ud,
		 "caps: ud_odp_caps 0x%x",
		 a.odp_caps.per_transport_caps.ud_odp_caps);
	VT_CHECK(!a.xrc_odp_caps, "caps: xrc_odp_caps 0x%x", a.xrc_odp_caps);
	if (!vt_failed)
		printf("ok   caps: ODP, implicit ODP; RC, UC and UD "
		       "operations\n");
}

/* --- untouched ---------------------------------------------------------- */

/*
 * Without CAP_IPC_LOCK (which lifts RLIMIT_MEMLOCK) and with a 64 KiB
 * limit: what a pinned registration is held to
 */
static void memlock_small(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { 64 << 10, 64 << 10 };

	if (syscall(SYS_capget, &h, d))
		vt_die("odp", "capget");
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d) || setrlimit(RLIMIT_MEMLOCK, &rl))
		vt_die("odp", "dropping CAP_IPC_LOCK / RLIMIT_MEMLOCK");
}

static void test_untouched(void)
{
	size_t len = 16 << 20, n = 1 << 20;
	uint8_t *buf = fresh(len), *src = malloc(n), *dst = malloc(n);
	struct ibv_mr *mr, *smr, *dmr, *omr, *pinned;
	enum ibv_wc_status ss, rs;
	uint64_t *orig = malloc(8);

	smr = ibv_reg_mr(pd, src, n, 0);
	dmr = ibv_reg_mr(pd, dst, n, IBV_ACCESS_LOCAL_WRITE);
	omr = ibv_reg_mr(pd, orig, 8, IBV_ACCESS_LOCAL_WRITE);
	if (!src || !dst || !orig || !smr || !dmr || !omr)
		vt_die("odp", "source/destination buffers");
	memlock_small();
	pinned = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	VT_CHECK(!pinned && errno == ENOMEM,
		 "untouched: a pinned MR of 16 MiB under a 64 KiB "
		 "RLIMIT_MEMLOCK: %s",
		 pinned ? "registered" : strerror(errno));
	mr = ibv_reg_mr(pd, buf, len, ODP_ALL);
	if (!mr)
		vt_die("odp",
		       "ibv_reg_mr (ODP, 16 MiB, 64 KiB RLIMIT_MEMLOCK)");
	VT_CHECK(private_anon(buf) && private_anon(buf + len - 1),
		 "untouched: the ODP MR's memory was re-backed");
	VT_CHECK(!resident(buf, len),
		 "untouched: registering populated %zu bytes",
		 resident(buf, len));

	/* RDMA Write into pages never touched, 1 MiB in */
	memset(src, 'W', n);
	VT_CHECK(post1(IBV_WR_RDMA_WRITE, src, smr->lkey, (uint32_t)n,
		       (uintptr_t)buf + n, mr->rkey, 0, 0) == IBV_WC_SUCCESS,
		 "untouched: RDMA Write failed");
	VT_CHECK(all_bytes(buf + n, n, 'W'), "untouched: RDMA Write's bytes");
	VT_CHECK(resident(buf, n) == 0, "untouched: pages outside the write");

	/* RDMA Read of pages never touched: zeros */
	memset(dst, 'x', n);
	VT_CHECK(post1(IBV_WR_RDMA_READ, dst, dmr->lkey, (uint32_t)n,
		       (uintptr_t)buf + 4 * n, mr->rkey, 0,
		       0) == IBV_WC_SUCCESS,
		 "untouched: RDMA Read failed");
	VT_CHECK(all_bytes(dst, n, 0), "untouched: RDMA Read's bytes");

	/* atomics on an untouched page */
	VT_CHECK(post1(IBV_WR_ATOMIC_FETCH_AND_ADD, orig, omr->lkey, 8,
		       (uintptr_t)buf + 6 * n, mr->rkey, 5,
		       0) == IBV_WC_SUCCESS,
		 "untouched: Fetch&Add failed");
	VT_CHECK(*orig == 0 && *(uint64_t *)(buf + 6 * n) == 5,
		 "untouched: Fetch&Add: orig %llu, now %llu",
		 (unsigned long long)*orig,
		 (unsigned long long)*(uint64_t *)(buf + 6 * n));

	/* Send from untouched ODP pages into an untouched ODP receive */
	send_recv(buf + 8 * n, mr->lkey, buf + 10 * n, mr->lkey, (uint32_t)n,
		  &ss, &rs);
	VT_CHECK(ss == IBV_WC_SUCCESS && rs == IBV_WC_SUCCESS &&
			 all_bytes(buf + 10 * n, n, 0),
		 "untouched: Send %s, receive %s", ibv_wc_status_str(ss),
		 ibv_wc_status_str(rs));
	/* and a small one (a receive rxdpd may hand to the library) */
	memset(buf + 12 * n, 's', 64);
	send_recv(buf + 12 * n, mr->lkey, buf + 14 * n, mr->lkey, 64, &ss, &rs);
	VT_CHECK(ss == IBV_WC_SUCCESS && rs == IBV_WC_SUCCESS &&
			 all_bytes(buf + 14 * n, 64, 's'),
		 "untouched: small Send %s, receive %s", ibv_wc_status_str(ss),
		 ibv_wc_status_str(rs));
	VT_CHECK(!ibv_dereg_mr(mr), "untouched: ibv_dereg_mr");
	VT_CHECK(private_anon(buf) && all_bytes(buf + n, n, 'W'),
		 "untouched: memory after deregistration");
	if (!vt_failed)
		printf("ok   untouched: 16 MiB ODP MR under a 64 KiB "
		       "RLIMIT_MEMLOCK, not populated nor re-backed; Write, "
		       "Read, Fetch&Add, Send and receive fault pages in\n");
}

/* --- munmap ------------------------------------------------------------- */

static void test_munmap(void)
{
	size_t len = 4 * page;
	uint8_t *buf = fresh(len), *hole = buf + 2 * page, *src = malloc(len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, ODP_ALL),
		      *smr = ibv_reg_mr(pd, src, len,
					IBV_ACCESS_LOCAL_WRITE |
						IBV_ACCESS_REMOTE_WRITE |
						IBV_ACCESS_REMOTE_READ);
	enum ibv_wc_status st, ss, rs;

	if (!mr || !smr)
		vt_die("odp", "ibv_reg_mr");
	memset(buf, 'A', len);
	if (munmap(hole, page))
		vt_die("odp", "munmap");
	memset(src, 'B', len);

	st = post1(IBV_WR_RDMA_WRITE, src, smr->lkey, (uint32_t)page,
		   (uintptr_t)hole, mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR,
		 "munmap: RDMA Write to the hole: %s", ibv_wc_status_str(st));
	qps_new();
	/* across the edge: the mapped part may be written, the WR fails */
	st = post1(IBV_WR_RDMA_WRITE, src, smr->lkey, (uint32_t)(2 * page),
		   (uintptr_t)buf + page + page / 2, mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR,
		 "munmap: RDMA Write across the hole: %s",
		 ibv_wc_status_str(st));
	qps_new();
	st = post1(IBV_WR_RDMA_READ, src, smr->lkey, 64, (uintptr_t)hole,
		   mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR,
		 "munmap: RDMA Read of the hole: %s", ibv_wc_status_str(st));
	qps_new();
	st = post1(IBV_WR_ATOMIC_FETCH_AND_ADD, src, smr->lkey, 8,
		   (uintptr_t)hole, mr->rkey, 1, 0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR,
		 "munmap: Fetch&Add in the hole: %s", ibv_wc_status_str(st));
	qps_new();
	/* local: an RDMA Write, and a Send, from the hole (ours alone) */
	if (qa) {
		st = post1(IBV_WR_RDMA_WRITE, hole, mr->lkey, 64,
			   (uintptr_t)src, smr->rkey, 0, 0);
		VT_CHECK(st == IBV_WC_LOC_PROT_ERR,
			 "munmap: RDMA Write from the hole: %s",
			 ibv_wc_status_str(st));
		qps_new();
		st = post1(IBV_WR_RDMA_READ, hole, mr->lkey, 64, (uintptr_t)src,
			   smr->rkey, 0, 0);
		VT_CHECK(st == IBV_WC_LOC_PROT_ERR,
			 "munmap: RDMA Read into the hole: %s",
			 ibv_wc_status_str(st));
		qps_new();
	}
	/* receives into the hole: a small Send and a large one */
	for (uint32_t n = 32; n <= 4096; n *= 128) {
		send_recv(src, smr->lkey, hole, mr->lkey, n, &ss, &rs);
		VT_CHECK(ss != IBV_WC_SUCCESS && rs != IBV_WC_SUCCESS,
			 "munmap: a %u-byte Send into the hole: send %s, "
			 "receive %s",
			 n, ibv_wc_status_str(ss), ibv_wc_status_str(rs));
		qps_new();
	}
	VT_CHECK(all_bytes(buf, 2 * page, 'A') ||
			 all_bytes(buf + page + page / 2, page / 2, 'B'),
		 "munmap: the mapped pages around the hole");
	VT_CHECK(all_bytes(buf + 3 * page, page, 'A'),
		 "munmap: the page after the hole was written");

	/* new memory in the hole: the MR follows the page tables */
	if (mmap(hole, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != hole)
		vt_die("odp", "mmap");
	memset(src, 'C', page);
	st = post1(IBV_WR_RDMA_WRITE, src, smr->lkey, (uint32_t)page,
		   (uintptr_t)hole, mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS && all_bytes(hole, page, 'C'),
		 "munmap: RDMA Write to new memory in the hole: %s",
		 ibv_wc_status_str(st));
	VT_CHECK(!ibv_dereg_mr(mr) && !ibv_dereg_mr(smr), "munmap: dereg");
	if (!vt_failed)
		printf("ok   munmap: a hole in an ODP MR is an access error "
		       "for "
		       "Write, Read, atomics, Send and receive; new memory "
		       "there is reached\n");
}

/* --- implicit ----------------------------------------------------------- */

static uint64_t in_data = 40;

static void test_implicit(void)
{
	struct ibv_mr *imr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ALL), *bad;
	uint8_t *heap = malloc(3000), *far = fresh(64 << 20);
	uint8_t stack[1500];
	uint64_t *res = malloc(8);
	enum ibv_wc_status st;

	if (!imr)
		vt_die("odp", "ibv_reg_mr (implicit ODP)");
	VT_CHECK(imr->addr == NULL && imr->length == SIZE_MAX,
		 "implicit: addr %p length %zu", imr->addr, imr->length);
	bad = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE);
	VT_CHECK(!bad, "implicit: registered without IBV_ACCESS_ON_DEMAND");

	/* heap -> fresh mapping, 40 MiB in (untouched), through imr alone */
	memset(heap, 'h', 3000);
	st = post1(IBV_WR_RDMA_WRITE, heap, imr->lkey, 3000,
		   (uintptr_t)far + (40 << 20) + 123, imr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS &&
			 all_bytes(far + (40 << 20) + 123, 3000, 'h'),
		 "implicit: RDMA Write heap -> mmap: %s",
		 ibv_wc_status_str(st));
	/* stack <- RDMA Read of the fresh mapping's bytes */
	memset(stack, 0, sizeof(stack));
	st = post1(IBV_WR_RDMA_READ, stack, imr->lkey, sizeof(stack),
		   (uintptr_t)far + (40 << 20) + 200, imr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS && all_bytes(stack, sizeof(stack), 'h'),
		 "implicit: RDMA Read mmap -> stack: %s",
		 ibv_wc_status_str(st));
	/* an atomic on a global */
	st = post1(IBV_WR_ATOMIC_CMP_AND_SWP, res, imr->lkey, 8,
		   (uintptr_t)&in_data, imr->rkey, 40, 41);
	VT_CHECK(st == IBV_WC_SUCCESS && *res == 40 &&
			 *(volatile uint64_t *)&in_data == 41,
		 "implicit: Compare&Swap on a global: %s, orig %llu, now %llu",
		 ibv_wc_status_str(st), (unsigned long long)*res,
		 (unsigned long long)in_data);
	/* an address nothing maps */
	st = post1(IBV_WR_RDMA_WRITE, heap, imr->lkey, 64, 4096, imr->rkey, 0,
		   0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR,
		 "implicit: RDMA Write to address 4096: %s",
		 ibv_wc_status_str(st));
	qps_new();
	if (qa) { /* a requester's own memory */
		st = post1(IBV_WR_RDMA_WRITE, (void *)4096, imr->lkey, 64,
			   (uintptr_t)far, imr->rkey, 0, 0);
		VT_CHECK(st == IBV_WC_LOC_PROT_ERR,
			 "implicit: RDMA Write from address 4096: %s",
			 ibv_wc_status_str(st));
	}
	VT_CHECK(!ibv_dereg_mr(imr), "implicit: dereg");
	if (!vt_failed)
		printf("ok   implicit: one MR for the address space: heap, "
		       "stack, globals and fresh mappings; nothing mapped is "
		       "an access error\n");
}

/* --- transports --------------------------------------------------------- */

/* A UC or UD QP (on srq if not NULL) in INIT */
static struct ibv_qp *xqp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = { .qp_type = type,
				       .send_cq = cq,
				       .recv_cq = cq,
				       .srq = srq,
				       .cap = { .max_send_wr = 16,
						.max_recv_wr = srq ? 0 : 16,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *q = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qkey = 0x11111111,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (!q)
		vt_die("odp", "ibv_create_qp (UC/UD)");
	mask |= type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(q, &a, mask))
		vt_die("odp", "INIT");
	return q;
}

/* q (UC: connected to dest) to RTR and RTS */
static void xqp_rts(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (q->qp_type == IBV_QPT_UC) {
		if (ibv_query_gid(ctx, 1, gid_index, &a.ah_attr.grh.dgid))
			vt_die("odp", "ibv_query_gid");
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (ibv_modify_qp(q, &a, mask))
		vt_die("odp", "RTR");
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		vt_die("odp", "RTS");
}

/*
 * On q (a UC or UD QP, ah for UD) to dst: an RDMA Write (UC) of len bytes
 * at wsrc to wdst if wsrc, then a Send of len bytes at src, received at rbuf
 * (through srq, or dst's RQ): the receive's status and byte_len
 */
static enum ibv_wc_status xsend(struct ibv_qp *q, struct ibv_ah *ah,
				struct ibv_qp *dst, struct ibv_srq *srq,
				uint32_t lkey, uint32_t rkey, void *wsrc,
				void *wdst, void *src, void *rbuf, uint32_t len,
				uint32_t rlen, uint32_t *got)
{
	struct ibv_sge rs = { (uintptr_t)rbuf, rlen, lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 },
			   *rbad;
	struct ibv_sge ws = { (uintptr_t)wsrc, len, lkey };
	struct ibv_send_wr wwr = { .wr_id = 3,
				   .sg_list = &ws,
				   .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE },
			   *bad;
	struct ibv_sge ss = { (uintptr_t)src, len, lkey };
	struct ibv_send_wr swr = { .wr_id = 2,
				   .sg_list = &ss,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	enum ibv_wc_status rst = IBV_WC_GENERAL_ERR;

	wwr.wr.rdma.remote_addr = (uintptr_t)wdst;
	wwr.wr.rdma.rkey = rkey;
	if (ah) {
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = dst->qp_num;
		swr.wr.ud.remote_qkey = 0x11111111;
	}
	if ((srq ? ibv_post_srq_recv(srq, &rwr, &rbad)
		 : ibv_post_recv(dst, &rwr, &rbad)) ||
	    (wsrc && ibv_post_send(q, &wwr, &bad)) ||
	    ibv_post_send(q, &swr, &bad))
		vt_die("odp", "post (UC/UD)");
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = wait_wc();

		if (wc.wr_id == 1) {
			rst = wc.status;
			*got = wc.byte_len;
		} else if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "FAIL transports: send %s\n",
				ibv_wc_status_str(wc.status));
			vt_failed = 1;
		}
	}
	return rst;
}

/*
 * What odp_caps claims beyond RC, with every buffer in an ODP MR over
 * memory never touched before: UC Send, Receive (RQ and SRQ) and RDMA
 * Write; UD Send and Receive (RQ and SRQ, the GRH landing in ODP memory)
 */
static void test_transports(void)
{
	size_t len = 8 << 20;
	uint32_t n = 3000, got = 0;
	uint8_t *buf = fresh(len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, ODP_ALL);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_qp *ua, *ub, *da, *db;
	enum ibv_wc_status st;

	if (!mr || !srq || ibv_query_gid(ctx, 1, gid_index, &aa.grh.dgid))
		vt_die("odp", "ODP MR / SRQ");
	aa.grh.sgid_index = (uint8_t)gid_index;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &aa);
	if (!ah)
		vt_die("odp", "ibv_create_ah");
	for (int use_srq = 0; use_srq < 2; use_srq++) {
		struct ibv_srq *q = use_srq ? srq : NULL;
		uint8_t *base = buf + (size_t)use_srq * (4 << 20);
		uint8_t *src = base, *wdst = base + (1 << 20),
			*rbuf = base + (2 << 20);

		/* UC: the sender's bytes written by the CPU, the rest untouched */
		memset(src, 'u', n);
		ua = xqp(IBV_QPT_UC, NULL);
		ub = xqp(IBV_QPT_UC, q);
		xqp_rts(ua, ub->qp_num);
		xqp_rts(ub, ua->qp_num);
		st = xsend(ua, NULL, ub, q, mr->lkey, mr->rkey, src, wdst, src,
			   rbuf, n, n, &got);
		VT_CHECK(st == IBV_WC_SUCCESS && got == n &&
				 all_bytes(rbuf, n, 'u') &&
				 all_bytes(wdst, n, 'u'),
			 "transports: UC%s: receive %s, %u bytes",
			 use_srq ? " (SRQ)" : "", ibv_wc_status_str(st), got);
		ibv_destroy_qp(ua);
		ibv_destroy_qp(ub);

		/* UD: the receive holds the GRH first */
		da = xqp(IBV_QPT_UD, NULL);
		db = xqp(IBV_QPT_UD, q);
		xqp_rts(da, 0);
		xqp_rts(db, 0);
		memset(src, 'd', 512);
		st = xsend(da, ah, db, q, mr->lkey, 0, NULL, NULL, src,
			   rbuf + (1 << 19), 512, 512 + 40, &got);
		VT_CHECK(st == IBV_WC_SUCCESS && got == 512 + 40 &&
				 all_bytes(rbuf + (1 << 19) + 40, 512, 'd'),
			 "transports: UD%s: receive %s, %u bytes",
			 use_srq ? " (SRQ)" : "", ibv_wc_status_str(st), got);
		ibv_destroy_qp(da);
		ibv_destroy_qp(db);
	}
	ibv_destroy_ah(ah);
	ibv_destroy_srq(srq);
	VT_CHECK(!ibv_dereg_mr(mr), "transports: dereg");
	if (!vt_failed)
		printf("ok   transports: UC Send, Write and receive (RQ, SRQ), "
		       "UD Send and receive (RQ, SRQ) in untouched ODP "
		       "memory\n");
}

/* --- rereg ------------------------------------------------------------- */

/* Is addr in memory rxdp re-backed with its memfd (shared with rxdpd)? */
static bool rebacked(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool ret = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		vt_die("odp", "/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && a >= s && a < e) {
			ret = strstr(line, "memfd:rxdp-mr") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

static void test_rereg(void)
{
	size_t len = 4 * page;
	uint8_t *buf = fresh(len), *src = malloc(64);
	struct ibv_mr *mr, *smr = ibv_reg_mr(pd, src, 64, 0);
	enum ibv_wc_status st;

	memset(buf, 'A', len);
	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr || !smr)
		vt_die("odp", "ibv_reg_mr");
	VT_CHECK(rebacked(buf), "rereg: a pinned MR is not shared with rxdpd");
	/* to ODP: given back as private memory, and it follows the tables */
	VT_CHECK(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       ODP_ALL),
		 "rereg: to ODP: %s", strerror(errno));
	VT_CHECK(private_anon(buf) && all_bytes(buf, len, 'A'),
		 "rereg: to ODP: the memory is not private and intact");
	if (munmap(buf + page, page))
		vt_die("odp", "munmap");
	memset(src, 'B', 64);
	st = post1(IBV_WR_RDMA_WRITE, src, smr->lkey, 64, (uintptr_t)buf + page,
		   mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_REM_ACCESS_ERR, "rereg: ODP hole: %s",
		 ibv_wc_status_str(st));
	qps_new();
	/* back to pinned, over the mapped part: shared again */
	VT_CHECK(!ibv_rereg_mr(mr,
			       IBV_REREG_MR_CHANGE_ACCESS |
				       IBV_REREG_MR_CHANGE_TRANSLATION,
			       NULL, buf + 2 * page, 2 * page,
			       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE),
		 "rereg: back from ODP: %s", strerror(errno));
	VT_CHECK(rebacked(buf + 2 * page), "rereg: back from ODP: not shared");
	st = post1(IBV_WR_RDMA_WRITE, src, smr->lkey, 64,
		   (uintptr_t)buf + 2 * page, mr->rkey, 0, 0);
	VT_CHECK(st == IBV_WC_SUCCESS && all_bytes(buf + 2 * page, 64, 'B'),
		 "rereg: back from ODP: RDMA Write %s", ibv_wc_status_str(st));
	VT_CHECK(!ibv_dereg_mr(mr) && !ibv_dereg_mr(smr), "rereg: dereg");
	if (!vt_failed)
		printf("ok   rereg: to ODP gives the memory back, from ODP "
		       "shares it again\n");
}

/* --- advise ------------------------------------------------------------- */

static void test_advise(void)
{
	size_t len = 64 * page;
	uint8_t *buf = fresh(len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, ODP_ALL),
		      *ro = ibv_reg_mr(pd, buf, len, IBV_ACCESS_ON_DEMAND),
		      *pin = ibv_reg_mr(pd, malloc(4096), 4096,
					IBV_ACCESS_LOCAL_WRITE),
		      *imr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ALL);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_sge sge = { (uintptr_t)buf, (uint32_t)(8 * page), 0 };
	int r;

	if (!mr || !ro || !pin || !imr || !pd2)
		vt_die("odp", "ibv_reg_mr / ibv_alloc_pd");
	sge.lkey = mr->lkey;
#define ADVISE(p, advice, flags, sg, n, want, what)                           \
	do {                                                                  \
		r = ibv_advise_mr(p, advice, flags, sg, n);                   \
		VT_CHECK(r == (want), "advise: %s: %d (%s), not %d", what, r, \
			 strerror(r), want);                                  \
	} while (0)

	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1, 0, "sync PREFETCH_WRITE");
	VT_CHECK(resident(buf, 8 * page) == (size_t)(8 * page) &&
			 resident(buf + 8 * page, len - 8 * page) == 0,
		 "advise: sync prefetch: %zu of %zu bytes resident",
		 resident(buf, len), (size_t)(8 * page));
	sge.addr += 8 * page;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, 0, "sync PREFETCH");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1, 0,
	       "async PREFETCH");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1, 0, "PREFETCH_NO_FAULT");
	sge.lkey = imr->lkey;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1, 0, "implicit MR");

	/* errors */
	sge.lkey = mr->lkey ^ 0x100;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, ENOENT, "an lkey that names nothing");
	sge.lkey = pin->lkey;
	sge.addr = (uintptr_t)pin->addr;
	sge.length = 64;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, ENOENT, "an MR without ODP");
	sge.lkey = mr->lkey;
	sge.addr = (uintptr_t)buf + len - 64;
	sge.length = 128;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, EFAULT, "a range past the MR's end");
	sge.addr = (uintptr_t)buf - 64;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, EFAULT, "a range before the MR");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1, 0,
	       "a range before the MR, async (mlx5 does not say)");
	sge.addr = (uintptr_t)buf;
	sge.length = 64;
	ADVISE(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, EPERM, "an MR of another PD");
	sge.lkey = ro->lkey;
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1, EPERM,
	       "PREFETCH_WRITE without local write");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 1, 0, "PREFETCH without local write");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, &sge, 1, EINVAL,
	       "unknown flags");
	ADVISE(pd, (enum ibv_advise_mr_advice)7, IBV_ADVISE_MR_FLAG_FLUSH, &sge,
	       1, EOPNOTSUPP, "unknown advice");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
	       &sge, 0, EINVAL, "no SGE");
	/* a hole: sync prefetch fails, async does not say */
	if (munmap(buf + 32 * page, page))
		vt_die("odp", "munmap");
	sge.lkey = mr->lkey;
	sge.addr = (uintptr_t)buf + 30 * page;
	sge.length = (uint32_t)(4 * page);
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
	       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1, EFAULT,
	       "sync prefetch over a hole");
	ADVISE(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sge, 1, 0,
	       "async prefetch over a hole");
	ibv_dereg_mr(mr);
	ibv_dereg_mr(ro);
	ibv_dereg_mr(imr);
	if (!vt_failed)
		printf("ok   advise: sync prefetch faults the range in; "
		       "errors for bad keys, ranges, rights, flags, advice\n");
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: odp DEVICE GID_INDEX "
				"caps|untouched|munmap|implicit|transports|"
				"rereg|advise | agent PORT\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	gid_index = atoi(argv[2]);
	if (!strcmp(argv[3], "agent") && argc > 4)
		vt_agent("odp", vt_open("odp", argv[1]), gid_index, argv[4]);
	setup(argv[1]);
	if (!strcmp(argv[3], "caps"))
		test_caps();
	else if (!strcmp(argv[3], "untouched"))
		test_untouched();
	else if (!strcmp(argv[3], "munmap"))
		test_munmap();
	else if (!strcmp(argv[3], "implicit"))
		test_implicit();
	else if (!strcmp(argv[3], "transports"))
		test_transports();
	else if (!strcmp(argv[3], "rereg"))
		test_rereg();
	else if (!strcmp(argv[3], "advise"))
		test_advise();
	else
		return 2;
	return vt_failed;
}
