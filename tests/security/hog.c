// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hog DEVICE GID_INDEX ATTACK [ARG]: an unprivileged local user attacking
 * the HCA every user shares (rxdpd), through the verbs API and the memory
 * the library shares with rxdpd, for tests/security/isolation.sh. Built
 * against the system's <infiniband/verbs.h>, run on build/lib's libibverbs.
 *
 *   storm SECONDS [odp]
 *                  two QPs of its own (looped back) move data into and
 *                  out of a region rxdpd reaches only through the
 *                  process's memory (a shared memfd mapping: the batched
 *                  path; with odp, private memory in ODP MRs, which takes
 *                  it too), while a thread keeps the process's mmap lock
 *                  busy with mprotect over a large range
 *   jump N         N QPs in ERR whose send and receive producer indexes
 *                  leap by 2^31-1 in the shared rings; waits for each
 *                  QP's IBV_EVENT_QP_FATAL, then exits without cleaning up
 *   qps            RC QPs of the largest size until one is refused; prints
 *                  "qps N errno E", then holds them until stdin closes
 *   contexts       verbs contexts (connections to rxdpd) until one is
 *                  refused; prints "contexts N", holds them likewise
 *   fuse FILE      an MR over a shared mapping of FILE (on a FUSE file
 *                  system whose server withholds its answers): one RDMA
 *                  Read out of it, which waits for that server; prints
 *                  how long it took and its status
 *
 * Exits 0 if the attack ran as planned (whatever rxdpd did to it), 1 if it
 * could not.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "common/hca.h"

static struct ibv_device *dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static int gid_index;

static void die(const char *what)
{
	fprintf(stderr, "hog: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev || !(ctx = ibv_open_device(dev)))
		die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	if (!cq)
		die("PD/CQ");
}

static struct ibv_qp *rc_qp(uint32_t wr, uint32_t sge)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .send_cq = cq,
				       .recv_cq = cq,
				       .cap = { .max_send_wr = wr,
						.max_recv_wr = wr,
						.max_send_sge = sge,
						.max_recv_sge = sge } };

	return ibv_create_qp(pd, &ia);
}

/* INIT, RTR towards dest (this device's GID), RTS */
static void connect_qp(struct ibv_qp *q, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };
	union ibv_gid gid;

	if (ibv_query_gid(ctx, 1, gid_index, &gid) ||
	    ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* --- storm ------------------------------------------------------------------ */

static atomic_bool storm_stop;

/* Keep the mmap lock busy: mprotect over a large range of zero pages */
static void *storm_mprotect(void *arg)
{
	size_t len = (size_t)4 << 30;
	char *p = mmap(NULL, len, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long n = 0;

	if (p == MAP_FAILED)
		return NULL;
	/* every page present (the zero page): mprotect walks them all */
	madvise(p, len, MADV_POPULATE_READ);
	while (!atomic_load(&storm_stop)) {
		mprotect(p, len, n++ & 1 ? PROT_READ : PROT_NONE);
	}
	fprintf(stderr, "hog: %lu mprotect calls over %zu GiB\n", n, len >> 30);
	munmap(p, len);
	return NULL;
}

/*
 * odp: both buffers private memory registered with IBV_ACCESS_ON_DEMAND,
 * which rxdpd reaches through the process too (and faults in)
 */
static int storm(double seconds, bool odp)
{
	size_t len = 1 << 20;
	int fd = memfd_create("hog", 0);
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mr, *smr;
	uint8_t *buf, *src = malloc(len);
	unsigned long ok = 0, failed = 0;
	double end = now_s() + seconds;
	unsigned int od = odp ? IBV_ACCESS_ON_DEMAND : 0;
	pthread_t t;

	if (fd < 0 || ftruncate(fd, (off_t)len) || !src)
		die("memfd");
	/* rxdpd reaches it through the process, not a window */
	buf = odp ? mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		  : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	mr = ibv_reg_mr(pd, buf, len,
			od | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	smr = ibv_reg_mr(pd, src, len, od | IBV_ACCESS_LOCAL_WRITE);
	qa = rc_qp(64, 1);
	qb = rc_qp(64, 1);
	if (!mr || !smr || !qa || !qb)
		die("MR/QP");
	connect_qp(qa, qb->qp_num);
	connect_qp(qb, qa->qp_num);
	pthread_create(&t, NULL, storm_mprotect, NULL);
	while (now_s() < end) {
		struct ibv_sge s = { (uintptr_t)src, (uint32_t)len, smr->lkey };
		struct ibv_send_wr wr = { .sg_list = &s,
					  .num_sge = 1,
					  .opcode = ok & 1 ? IBV_WR_RDMA_READ
							   : IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_wc wc;
		int n;

		wr.wr.rdma.remote_addr = (uintptr_t)buf;
		wr.wr.rdma.rkey = mr->rkey;
		if (ibv_post_send(qa, &wr, &bad))
			break;
		while (!(n = ibv_poll_cq(cq, 1, &wc)) && now_s() < end + 30)
			usleep(100);
		if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
			failed++;
			break; /* the QP is in ERR now: its requests end */
		}
		ok++;
	}
	atomic_store(&storm_stop, true);
	pthread_join(t, NULL);
	printf("storm: %lu transfers of %zu bytes done, %lu failed\n", ok, len,
	       failed);
	return 0;
}

/* --- jump ------------------------------------------------------------------- */

/* The shared rings of each QP, found as the attacker finds them */
static int qp_rings(struct rxdp_hca_qp **out, int max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned long s;

		if (strstr(line, "memfd:rxdp-qp") &&
		    sscanf(line, "%lx-", &s) == 1)
			out[n++] = (struct rxdp_hca_qp *)s;
	}
	if (f)
		fclose(f);
	return n;
}

static int jump(int nqp)
{
	struct rxdp_hca_qp *rings[64];
	struct ibv_qp *q[64];
	int fatal = 0, n;
	double t0;

	if (nqp > 64)
		nqp = 64;
	for (int i = 0; i < nqp; i++) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		q[i] = rc_qp(16384, 32);
		if (!q[i] || ibv_modify_qp(q[i], &a, IBV_QP_STATE))
			die("QP");
	}
	n = qp_rings(rings, 64);
	if (n < nqp) {
		fprintf(stderr, "hog: %d QP rings found, not %d\n", n, nqp);
		return 1;
	}
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		atomic_fetch_add(&rings[i]->sq.prod, 0x7fffffffU);
		atomic_fetch_add(&rings[i]->rq.prod, 0x7fffffffU);
	}
	/* a receive WR in ERR rings the doorbell (and flushes) */
	for (int i = 0; i < nqp; i++) {
		struct ibv_recv_wr wr = { 0 }, *bad;

		ibv_post_recv(q[i], &wr, &bad);
	}
	while (fatal < nqp && now_s() < t0 + 20) {
		struct pollfd p = { ctx->async_fd, POLLIN, 0 };
		struct ibv_async_event ev;

		if (poll(&p, 1, 1000) != 1)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			break;
		fatal += ev.event_type == IBV_EVENT_QP_FATAL;
		ibv_ack_async_event(&ev);
	}
	printf("jump: %d of %d QPs fatal after %.3f s\n", fatal, nqp,
	       now_s() - t0);
	fflush(stdout);
	_exit(fatal == nqp ? 0 : 1); /* the QPs are left to rxdpd */
}

/* --- fuse ------------------------------------------------------------------ */

static int fuse(const char *path)
{
	size_t len = 64 << 10;
	int fd = open(path, O_RDWR);
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mr, *smr;
	uint8_t *buf, *dst = malloc(len);
	struct ibv_sge s;
	struct ibv_send_wr wr = { .sg_list = &s,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	double t0;
	int n;

	if (fd < 0 || !dst)
		die(path);
	/* not touched here: the first access is rxdpd's, and waits */
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	smr = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	qa = rc_qp(16, 1);
	qb = rc_qp(16, 1);
	if (!mr || !smr || !qa || !qb)
		die("MR/QP");
	connect_qp(qa, qb->qp_num);
	connect_qp(qb, qa->qp_num);
	s = (struct ibv_sge){ (uintptr_t)dst, (uint32_t)len, smr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)buf;
	wr.wr.rdma.rkey = mr->rkey;
	t0 = now_s();
	if (ibv_post_send(qa, &wr, &bad))
		die("ibv_post_send");
	while (!(n = ibv_poll_cq(cq, 1, &wc)) && now_s() < t0 + 120)
		usleep(1000);
	printf("fuse: an RDMA Read of a FUSE file's pages took %.1f s: %s\n",
	       now_s() - t0, n > 0 ? ibv_wc_status_str(wc.status) : "none");
	return 0;
}

/* --- qps, contexts -------------------------------------------------------- */

static void hold(void)
{
	char c;

	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

static int qps(void)
{
	long n = 0;
	int err = 0;

	for (;; n++) {
		if (!rc_qp(16384, 32)) {
			err = errno;
			break;
		}
	}
	printf("qps %ld errno %d\n", n, err);
	hold();
	return 0;
}

static int contexts(void)
{
	long n = 0;

	while (ibv_open_device(dev))
		n++;
	printf("contexts %ld errno %d\n", n + 1, errno);
	hold();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: hog DEVICE GID_INDEX "
				"storm SECONDS [odp]|jump N|qps|contexts\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	open_dev(argv[1]);
	if (!strcmp(argv[3], "storm") && argc > 4)
		return storm(atof(argv[4]),
			     argc > 5 && !strcmp(argv[5], "odp"));
	if (!strcmp(argv[3], "jump") && argc > 4)
		return jump(atoi(argv[4]));
	if (!strcmp(argv[3], "qps"))
		return qps();
	if (!strcmp(argv[3], "contexts"))
		return contexts();
	if (!strcmp(argv[3], "fuse") && argc > 4)
		return fuse(argv[4]);
	return 2;
}
