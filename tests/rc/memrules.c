// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * memrules DEVICE GID_INDEX TEST: the rules registered memory keeps now
 * that its pages are shared with rxdpd (userspace/verbs/regmem.c), checked
 * through a verbs program (built against the system's <infiniband/verbs.h>,
 * run on build/lib's libibverbs) and RDMA Writes between two RC QPs of one
 * process, looped back through rxdpd. TEST is one of:
 *
 *   race      threads write next to (and inside) a region while it is
 *             registered and deregistered 100 times: no write is lost
 *   fork      after fork() the child has its own copy of a registered
 *             buffer, and the parent's stays the HCA's
 *   dontneed  MADV_DONTNEED keeps a registered range's contents, and the
 *             MR still works
 *   munmap    an MR keeps the pages it was made on when the range is
 *             unmapped and mapped anew; a new MR gets the new ones
 *   private   deregistration gives back ordinary private memory; an MR
 *             over memory that is not mapped is refused (EFAULT)
 *   shared    an MR over a shared file mapping (the batched path): RDMA
 *             Writes land in the file, RDMA Reads and atomics read it, a
 *             Send's receive completes with its bytes there
 *
 * With VT_PEER=HOST:PORT the requester is an agent on another host
 * (`memrules DEVICE GID_INDEX agent PORT` there, tests/lib/vtest.h): the
 * WRs cross the wire, XDP and AF_XDP, into this process's memory, which
 * keeps its rules the same.
 *
 * Prints "ok ..." lines; exits 0 if every check held, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../lib/vtest.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static int gid_index;

static void qp_to_rts(struct ibv_qp *q, uint32_t dest)
{
	vt_rc_connect("memrules", q, gid_index, dest, 14);
}

static void setup(const char *dev)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16,
						.max_recv_wr = 16,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };

	ctx = vt_open("memrules", dev);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	if (!cq)
		vt_die("memrules", "PD/CQ");
	ia.send_cq = ia.recv_cq = cq;
	qb = ibv_create_qp(pd, &ia);
	if (!qb)
		vt_die("memrules", "ibv_create_qp");
	if (vt_remote("memrules")) {
		/* the requester is the agent's, on the other host */
		vt_remote_connect("memrules", qb, gid_index);
		return;
	}
	qa = ibv_create_qp(pd, &ia);
	if (!qa)
		vt_die("memrules", "ibv_create_qp");
	qp_to_rts(qa, qb->qp_num);
	qp_to_rts(qb, qa->qp_num);
}

/* The next completion's status (wr_id: which WR it is) */
static enum ibv_wc_status wait_wc(uint64_t *wr_id)
{
	struct ibv_wc wc = vt_wait_wc("memrules", cq);

	if (wr_id)
		*wr_id = wc.wr_id;
	return wc.status;
}

/*
 * One WR on qa (the agent's, across the wire): opcode with len bytes at buf
 * (lkey), towards (raddr, rkey); atomics add or compare-swap a and b. Its
 * status.
 */
static enum ibv_wc_status post1(enum ibv_wr_opcode op, void *buf, uint32_t lkey,
				uint32_t len, uint64_t raddr, uint32_t rkey,
				uint64_t a, uint64_t b)
{
	if (!qa)
		return vt_remote_post1("memrules", op, buf, len, raddr, rkey, a,
				       b);
	return vt_post1("memrules", qa, op, buf, lkey, len, raddr, rkey, a, b);
}

/* RDMA Write of len bytes from src (lkey) to (raddr, rkey): its status */
static enum ibv_wc_status rdma_write(void *src, uint32_t lkey, uint32_t len,
				     uint64_t raddr, uint32_t rkey)
{
	return post1(IBV_WR_RDMA_WRITE, src, lkey, len, raddr, rkey, 0, 0);
}

static bool all_bytes(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return false;
	return true;
}

/*
 * What maps addr: 1 a memfd rxdp made (shared with rxdpd), 0 private
 * anonymous memory, -1 something else
 */
static int mapped_as(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	int ret = -1;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		vt_die("memrules", "/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, ino;
		char perm[5], path[256] = "";

		if (sscanf(line, "%llx-%llx %4s %*x %*x:%*x %llu %255s", &s, &e,
			   perm, &ino, path) < 4)
			continue;
		if (a < s || a >= e)
			continue;
		if (strstr(line, "memfd:rxdp-mr") && perm[3] == 's')
			ret = 1;
		else if (!ino && perm[3] == 'p')
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* --- race --------------------------------------------------------------- */

#define RACE_LEN (4 << 20) /* a copy long enough for writers to hit it */
#define WRITERS 3
#define RACE_ROUNDS 100

static uint8_t *race_buf;
static atomic_bool race_stop;
static atomic_ulong race_lost, race_writes;

/*
 * One writer: increments its own counters, spread over the whole range
 * (inside the MR and on the pages around it); a counter that reads back
 * less than it wrote lost a write
 */
static void *race_writer(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	unsigned long v = 0, lost = 0, n = 0;

	while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
		v++;
		for (size_t off = k * 64; off < RACE_LEN; off += 4096 * 7) {
			volatile unsigned long *c =
				(volatile unsigned long *)(race_buf + off);

			if (*c != v - 1)
				lost++;
			*c = v;
			n++;
		}
	}
	atomic_fetch_add(&race_lost, lost);
	atomic_fetch_add(&race_writes, n);
	return NULL;
}

static void test_race(void)
{
	pthread_t t[WRITERS];
	int shared = 0;

	race_buf = mmap(NULL, RACE_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (race_buf == MAP_FAILED)
		vt_die("memrules", "mmap");
	memset(race_buf, 0, RACE_LEN);
	for (uintptr_t i = 0; i < WRITERS; i++)
		pthread_create(&t[i], NULL, race_writer, (void *)i);
	for (int r = 0; r < RACE_ROUNDS; r++) {
		/* not page-aligned: its first and last pages hold others */
		struct ibv_mr *mr = ibv_reg_mr(
			pd, race_buf + 100, RACE_LEN - 200,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

		if (!mr)
			vt_die("memrules", "ibv_reg_mr");
		shared += mapped_as(race_buf) == 1 &&
			  mapped_as(race_buf + RACE_LEN - 1) == 1;
		if (ibv_dereg_mr(mr))
			vt_die("memrules", "ibv_dereg_mr");
	}
	atomic_store(&race_stop, true);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	VT_CHECK(shared == RACE_ROUNDS,
		 "race: the region was shared with rxdpd in %d rounds of %d",
		 shared, RACE_ROUNDS);
	VT_CHECK(!atomic_load(&race_lost),
		 "race: %lu of %lu writes lost while the region was registered "
		 "and deregistered",
		 atomic_load(&race_lost), atomic_load(&race_writes));
	if (!vt_failed)
		printf("ok   race: %lu writes by %d threads during %d "
		       "registrations, none lost\n",
		       atomic_load(&race_writes), WRITERS, RACE_ROUNDS);
	munmap(race_buf, RACE_LEN);
}

/* --- fork --------------------------------------------------------------- */

static void test_fork(void)
{
	size_t len = 3 * 4096;
	uint8_t *buf = aligned_alloc(4096, len), *src = malloc(len);
	struct ibv_mr *mr, *smr;
	int p2c[2], c2p[2], st;
	char c = 0;
	pid_t pid;

	memset(buf, 'A', len);
	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	smr = ibv_reg_mr(pd, src, len, 0);
	if (!mr || !smr || pipe(p2c) || pipe(c2p))
		vt_die("memrules", "setup");
	VT_CHECK(mapped_as(buf) == 1,
		 "fork: the buffer is not shared with rxdpd");
	pid = fork();
	if (pid < 0)
		vt_die("memrules", "fork");
	if (!pid) {
		/* the child: its own copy, as it was at fork() */
		int bad = !all_bytes(buf, len, 'A') || mapped_as(buf) != 0;

		memset(buf, 'B', len);
		if (write(c2p[1], &c, 1) != 1 || read(p2c[0], &c, 1) != 1)
			_exit(3);
		/* the parent's RDMA Write went to the parent's pages only */
		bad |= !all_bytes(buf, len, 'B') << 1;
		_exit(bad);
	}
	if (read(c2p[0], &c, 1) != 1)
		vt_die("memrules", "child");
	VT_CHECK(all_bytes(buf, len, 'A'),
		 "fork: the child's writes reached the parent's buffer");
	memset(src, 'C', len);
	VT_CHECK(rdma_write(src, smr->lkey, (uint32_t)len, (uintptr_t)buf,
			    mr->rkey) == IBV_WC_SUCCESS,
		 "fork: RDMA Write after fork failed");
	VT_CHECK(all_bytes(buf, len, 'C'),
		 "fork: the RDMA Write after fork did not reach the parent");
	if (write(p2c[1], &c, 1) != 1 || waitpid(pid, &st, 0) != pid)
		vt_die("memrules", "child");
	VT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "fork: the child saw %s (status %#x)",
		 WEXITSTATUS(st) & 1 ? "a buffer not its own copy"
				     : "the parent's RDMA Write",
		 st);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(smr);
	if (!vt_failed)
		printf("ok   fork%s: the child has its own copy; the parent's "
		       "buffer stays the HCA's\n",
		       getenv("RDMAV_FORK_SAFE") ? " (RDMAV_FORK_SAFE)" : "");
	free(buf);
	free(src);
}

/* --- dontneed, munmap -------------------------------------------------- */

/*
 * len bytes of fresh memory filled with 'A' and an MR a peer may write
 * over them, and a source buffer of as many bytes with its MR
 */
static uint8_t *target(size_t len, struct ibv_mr **mr, uint8_t **src,
		       struct ibv_mr **smr)
{
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*src = malloc(len);
	if (buf == MAP_FAILED || !*src)
		vt_die("memrules", "memory");
	memset(buf, 'A', len);
	*mr = ibv_reg_mr(pd, buf, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	*smr = ibv_reg_mr(pd, *src, len, 0);
	if (!*mr || !*smr)
		vt_die("memrules", "ibv_reg_mr");
	return buf;
}

static void test_dontneed(void)
{
	size_t len = 8 * 4096;
	struct ibv_mr *mr, *smr;
	uint8_t *src, *buf = target(len, &mr, &src, &smr);
	VT_CHECK(!madvise(buf, len, MADV_DONTNEED), "dontneed: madvise");
	VT_CHECK(all_bytes(buf, len, 'A'),
		 "dontneed: a registered range lost its contents");
	memset(src, 'C', len);
	VT_CHECK(rdma_write(src, smr->lkey, (uint32_t)len, (uintptr_t)buf,
			    mr->rkey) == IBV_WC_SUCCESS,
		 "dontneed: RDMA Write failed");
	VT_CHECK(all_bytes(buf, len, 'C'),
		 "dontneed: the RDMA Write is not in the process's memory");
	ibv_dereg_mr(mr);
	ibv_dereg_mr(smr);
	munmap(buf, len);
	free(src);
	if (!vt_failed)
		printf("ok   dontneed: contents kept, the MR still the "
		       "process's memory\n");
}

static void test_munmap(void)
{
	size_t len = 8 * 4096;
	struct ibv_mr *mr, *mr2, *smr;
	uint8_t *src, *buf = target(len, &mr, &src, &smr);
	/* new memory where the registered range was */
	if (munmap(buf, len) ||
	    mmap(buf, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != buf)
		vt_die("memrules", "munmap/mmap");
	memset(src, 'C', len);
	VT_CHECK(rdma_write(src, smr->lkey, (uint32_t)len, (uintptr_t)buf,
			    mr->rkey) == IBV_WC_SUCCESS,
		 "munmap: an RDMA Write to the old MR failed");
	VT_CHECK(all_bytes(buf, len, 0),
		 "munmap: an RDMA Write to the old MR reached the new memory");
	mr2 = ibv_reg_mr(pd, buf, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr2)
		vt_die("memrules", "ibv_reg_mr (new memory)");
	memset(src, 'D', len);
	VT_CHECK(rdma_write(src, smr->lkey, (uint32_t)len, (uintptr_t)buf,
			    mr2->rkey) == IBV_WC_SUCCESS,
		 "munmap: an RDMA Write to the new MR failed");
	VT_CHECK(all_bytes(buf, len, 'D'), "munmap: the RDMA Write to the new "
					   "MR is not in the new memory");
	ibv_dereg_mr(mr);
	ibv_dereg_mr(mr2);
	ibv_dereg_mr(smr);
	VT_CHECK(mapped_as(buf) == 0 && all_bytes(buf, len, 'D'),
		 "munmap: the new memory is not private and intact after "
		 "deregistration");
	munmap(buf, len);
	free(src);
	if (!vt_failed)
		printf("ok   munmap: the old MR keeps its pages, a new MR gets "
		       "the new ones\n");
}

/* --- private ------------------------------------------------------------ */

static void test_private(void)
{
	size_t len = 4 * 4096;
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr, *mr2;

	memset(buf, 'A', len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	/* two MRs over the same pages share them */
	mr2 = ibv_reg_mr(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !mr2)
		vt_die("memrules", "ibv_reg_mr");
	VT_CHECK(mapped_as(buf) == 1, "private: not shared while registered");
	ibv_dereg_mr(mr);
	VT_CHECK(mapped_as(buf + 4096) == 1,
		 "private: given back while another MR is over it");
	ibv_dereg_mr(mr2);
	VT_CHECK(mapped_as(buf) == 0 && mapped_as(buf + len - 1) == 0,
		 "private: not private anonymous memory after deregistration");
	VT_CHECK(all_bytes(buf, len, 'A'), "private: contents changed");
	/* anonymous memory again: what the kernel frees reads as zero */
	madvise(buf, len, MADV_DONTNEED);
	VT_CHECK(all_bytes(buf, len, 0),
		 "private: MADV_DONTNEED after deregistration kept the bytes");
	/* as pinning it would on an HCA: memory that is not there */
	munmap(buf, len);
	errno = 0;
	VT_CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE) &&
			 errno == EFAULT,
		 "private: an MR over unmapped memory (errno %d)", errno);
	if (!vt_failed)
		printf("ok   private: deregistration gives back private "
		       "anonymous memory; unmapped memory is EFAULT\n");
}

/* --- shared: the batched path ------------------------------------------- */

static void test_shared(const char *path)
{
	size_t len = 64 * 4096;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	uint8_t *buf, *src = malloc(len), *check = malloc(len);
	struct ibv_mr *mr, *smr;

	if (fd < 0 || ftruncate(fd, (off_t)len))
		vt_die("memrules", path);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		vt_die("memrules", "mmap");
	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC);
	smr = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !smr)
		vt_die("memrules", "ibv_reg_mr");
	VT_CHECK(mapped_as(buf) == -1,
		 "shared: a shared file mapping was moved");
	for (int r = 0; r < 16; r++) {
		memset(src, 'a' + r, len);
		VT_CHECK(rdma_write(src, smr->lkey, (uint32_t)len,
				    (uintptr_t)buf, mr->rkey) == IBV_WC_SUCCESS,
			 "shared: RDMA Write %d failed", r);
	}
	VT_CHECK(pread(fd, check, len, 0) == (ssize_t)len &&
			 all_bytes(check, len, 'a' + 15),
		 "shared: the RDMA Writes are not in the file");
	/* an RDMA Read of it (staged), twice: the second sees the change */
	for (int r = 0; r < 2; r++) {
		enum ibv_wc_status st;

		memset(buf, 'r' + r, len);
		memset(src, 0, len);
		st = post1(IBV_WR_RDMA_READ, src, smr->lkey, (uint32_t)len,
			   (uintptr_t)buf, mr->rkey, 0, 0);
		VT_CHECK(st == IBV_WC_SUCCESS && all_bytes(src, len, 'r' + r),
			 "shared: RDMA Read %d of the file mapping: %s, %#x", r,
			 ibv_wc_status_str(st), src[0]);
	}
	/* atomics on it (done by rxdpd's memory thread for the client) */
	memset(buf, 0, 8);
	for (int r = 0; r < 5; r++) {
		enum ibv_wc_status st = post1(IBV_WR_ATOMIC_FETCH_AND_ADD, src,
					      smr->lkey, 8, (uintptr_t)buf,
					      mr->rkey, 3, 0);

		VT_CHECK(st == IBV_WC_SUCCESS &&
				 *(uint64_t *)src == (uint64_t)r * 3,
			 "shared: fetch and add %d: %s, %llu", r,
			 ibv_wc_status_str(st),
			 (unsigned long long)*(uint64_t *)src);
	}
	VT_CHECK(post1(IBV_WR_ATOMIC_CMP_AND_SWP, src, smr->lkey, 8,
		       (uintptr_t)buf, mr->rkey, 15, 99) == IBV_WC_SUCCESS &&
			 *(uint64_t *)src == 15 && *(uint64_t *)buf == 99,
		 "shared: compare and swap: orig %llu, now %llu",
		 (unsigned long long)*(uint64_t *)src,
		 (unsigned long long)*(uint64_t *)buf);
	/* a Send into it: the receive completes once its bytes are there */
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf,
				       .length = (uint32_t)len,
				       .lkey = mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 9,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *rbad;
		uint64_t id[2] = { 0 };
		enum ibv_wc_status st[2];

		memset(src, 's', len);
		if (ibv_post_recv(qb, &rw, &rbad))
			vt_die("memrules", "ibv_post_recv");
		st[0] = post1(IBV_WR_SEND, src, smr->lkey, (uint32_t)len, 0, 0,
			      0, 0);
		st[1] = wait_wc(&id[1]);
		VT_CHECK(st[0] == IBV_WC_SUCCESS && st[1] == IBV_WC_SUCCESS &&
				 all_bytes(buf, len, 's'),
			 "shared: a Send into the file mapping (%d, %d)", st[0],
			 st[1]);
	}
	ibv_dereg_mr(mr);
	ibv_dereg_mr(smr);
	munmap(buf, len);
	close(fd);
	unlink(path);
	free(src);
	free(check);
	if (!vt_failed)
		printf("ok   shared: RDMA Writes, Reads, atomics and a Send of "
		       "%zu bytes on a shared file mapping\n",
		       len);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: memrules DEVICE GID_INDEX "
				"race|fork|dontneed|munmap|private|shared "
				"[FILE] | agent PORT\n");
		return 2;
	}
	gid_index = atoi(argv[2]);
	if (!strcmp(argv[3], "agent") && argc > 4)
		vt_agent("memrules", vt_open("memrules", argv[1]), gid_index,
			 argv[4]);
	setup(argv[1]);
	if (!strcmp(argv[3], "race"))
		test_race();
	else if (!strcmp(argv[3], "fork"))
		test_fork();
	else if (!strcmp(argv[3], "dontneed"))
		test_dontneed();
	else if (!strcmp(argv[3], "munmap"))
		test_munmap();
	else if (!strcmp(argv[3], "private"))
		test_private();
	else if (!strcmp(argv[3], "shared") && argc > 4)
		test_shared(argv[4]);
	else
		return 2;
	return vt_failed;
}
