// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The engine on its AF_XDP port: two network namespaces joined by a veth
 * pair, an AF_XDP socket on each end bound on the engine's UMEM memfd
 * (made here with libxdp, whose default XDP program redirects the queue's
 * frames to the socket; rxdpd and rxdp's own classifier do this in
 * production), and RC traffic of every kind between the two engines, with
 * progress threads, checked byte for byte; first, a socket added to a
 * running engine's port for the veth's second queue, and a flush of more
 * frames than one sendto() takes; last, a port handed to a successor (the
 * sockets and the UMEM adopted, traffic going on). Needs root: exits 77
 * otherwise, or when the kernel cannot do AF_XDP on veth.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#include <cmocka.h>

#include "common/ctl_client.h"
#include "engine/engine.h"
#include "poster.h"
#include "rxdp/params.h"

#define BUF (4u << 20)
#define NFRAMES 4096
#define RING 2048

static char ns[2][32], ifn[2][16];

struct side {
	struct rxdp_umem umem;
	struct xsk_umem *xumem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	struct rxdp_xsk_port *port;
	struct rxdp_engine *e;
	struct rxdp_ecq *scq, *rcq;
	struct rxdp_eqp *qp;
	struct rxdp_emr *mr;
	uint8_t *buf;
	struct rxdp_qp_psn psn[RXDP_MAX_QP];
	struct rxdp_umem *umem_adopted; /* test_xsk_takeover's port's */
};

static struct side *sides;

static void cleanup(void)
{
	char cmd[128];

	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null",
			 ns[i]);
		if (system(cmd)) {
			/* already gone */
		}
	}
}

static void on_signal(int sig)
{
	cleanup();
	_exit(128 + sig);
}

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int enter_ns(const char *name)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return ret;
}

/* s's engine on s->port, with a progress thread */
static struct rxdp_engine *side_engine(struct side *s, bool held)
{
	struct rxdp_engine_config cfg = { 0 };

	cfg.held = held;
	cfg.ops = &rxdp_xsk_port_ops;
	cfg.port = s->port;
	cfg.psn_table = s->psn;
	cfg.progress_thread = 1;
	s->e = rxdp_engine_create(&cfg);
	return s->e;
}

/* 0, or 77 for "this kernel cannot", or 1 */
static int side_init(struct side *s, int i)
{
	struct xsk_umem_config ucfg = {
		.fill_size = RING,
		.comp_size = RING,
		.frame_size = 4096,
		.frame_headroom = 0,
	};
	struct xsk_socket_config xcfg = {
		.rx_size = RING,
		.tx_size = RING,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	int fd, err;

	if (enter_ns(ns[i]))
		return 1;
	err = rxdp_umem_create(&s->umem, NFRAMES, 4096);
	if (err)
		return 1;
	err = xsk_umem__create(&s->xumem, s->umem.area, s->umem.size, &s->fill,
			       &s->comp, &ucfg);
	if (err) {
		fprintf(stderr, "xsk_umem__create: %s\n", strerror(-err));
		return err == -EOPNOTSUPP || err == -EAFNOSUPPORT ? 77 : 1;
	}
	err = xsk_socket__create(&s->xsk, ifn[i], 0, s->xumem, &s->rx, &s->tx,
				 &xcfg);
	if (err) {
		fprintf(stderr, "xsk_socket__create on %s: %s\n", ifn[i],
			strerror(-err));
		return err == -EOPNOTSUPP ? 77 : 1;
	}
	fd = xsk_socket__fd(s->xsk);
	/* the port maps the rings from the fd, as it does with rxdpd's */
	s->port = rxdp_xsk_port_create(&s->umem, &fd, 1, RING, 0);
	if (!s->port) {
		fprintf(stderr, "rxdp_xsk_port_create: %s\n", strerror(errno));
		return 1;
	}
	return side_engine(s, false) ? 0 : 1;
}

static void qp_setup(struct side *s, int i)
{
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0xaa, (uint8_t)(1 + i) },
		.dmac = { 2, 0, 0, 0, 0xaa, (uint8_t)(2 - i) },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 77, 0, (uint8_t)(1 + i) },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 77, 0, (uint8_t)(2 - i) },
		.hop_limit = 64,
		.udp_sport = 0xd000 + i,
	};
	struct rxdp_eqp_init init = {
		.qpn = 0x100 + i,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256,
			 .max_recv_wr = 256,
			 .max_send_sge = 4,
			 .max_recv_sge = 4,
			 .max_inline_data = 128 },
	};
	struct rxdp_qp_attr a = { 0 };

	s->scq = rxdp_engine_create_cq(s->e, 1024, NULL, NULL);
	s->rcq = rxdp_engine_create_cq(s->e, 1024, NULL, NULL);
	assert_non_null(s->scq);
	assert_non_null(s->rcq);
	init.send_cq = s->scq;
	init.recv_cq = s->rcq;
	s->qp = rxdp_engine_create_qp(s->e, &init);
	assert_non_null(s->qp);
	s->buf = aligned_alloc(4096, BUF);
	assert_non_null(s->buf);
	memset(s->buf, 0, BUF);
	s->mr = rxdp_engine_reg_mr(
		s->e, s->buf, BUF, (uintptr_t)s->buf,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(s->mr);
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x100 + !i;
	a.rq_psn = 1000 * (2 - i);
	a.max_dest_rd_atomic = 8;
	a.min_rnr_timer = 1;
	a.sq_psn = 1000 * (1 + i);
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 8;
	assert_int_equal(tp_qp_connect(s->qp, IBV_QPT_RC, &a, &path), 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_wc(struct rxdp_ecq *cq, struct ibv_wc *wc, int n)
{
	static uint64_t last_to;
	static int calls;
	double end = now_s() + 60;
	int got = 0;

	while (got < n) {
		int r = tp_poll_cq(cq, n - got, wc + got);

		assert_true(r >= 0);
		got += r;
		if (now_s() > end)
			fail_msg("only %d of %d completions after 60 s", got,
				 n);
		if (!r)
			sched_yield();
	}
	calls++;
	if (getenv("RXDP_TEST_DEBUG")) {
		struct rxdp_engine_stats st;

		rxdp_engine_get_stats(sides[0].e, &st);
		if (st.timeouts != last_to)
			print_message(
				"timeout before completion %d (wr_id %llu)\n",
				calls, (unsigned long long)wc[0].wr_id);
		last_to = st.timeouts;
	}
}

static void fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 2654435761u + seed) >> 11);
}

static void post(struct side *s, enum ibv_wr_opcode op, uint64_t id,
		 uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint32_t imm)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf + off,
			      .length = len,
			      .lkey = rxdp_emr_lkey(s->mr) };
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &sg,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(imm) };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(tp_post_send(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf + off,
			      .length = len,
			      .lkey = rxdp_emr_lkey(s->mr) };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(tp_post_recv(s->qp, &wr, &bad), 0);
}

static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, (1u << 20) + 7 };

/* Every RC opcode over AF_XDP; b is passive for writes and reads */
/*
 * A queue gained while the engine runs (rxdpd follows ethtool -L this
 * way): a queue the veth does not have is refused and leaves the port as
 * it was; its second queue gets a socket of its own UMEM. The traffic
 * tests after run on the port of two sockets.
 */
static void test_xsk_port_add(void **state)
{
	struct rxdp_xsk_queue_add a = { 0 };
	int fds[4], fd;

	(void)state;
	assert_int_equal(enter_ns(ns[0]), 0);
	a.ifindex = (int)if_nametoindex(ifn[0]);
	assert_true(a.ifindex > 0);
	a.queue = 2;
	fd = rxdp_engine_port_call(sides[0].e, rxdp_xsk_port_add_call, &a);
	assert_true(fd < 0);
	assert_non_null(a.why);
	assert_int_equal(rxdp_xsk_port_fds(sides[0].port, fds, 4), 1);
	a.queue = 1;
	a.why = NULL;
	fd = rxdp_engine_port_call(sides[0].e, rxdp_xsk_port_add_call, &a);
	if (fd < 0)
		fprintf(stderr, "queue 1: %s: %s\n", a.why, strerror(-fd));
	assert_true(fd >= 0);
	assert_int_equal(rxdp_xsk_port_fds(sides[0].port, fds, 4), 2);
	assert_int_equal(fds[1], fd);
}

/*
 * Frames queued beyond what one copy-mode sendto() takes (32 descriptors
 * in 6.x, which then says EAGAIN) all go out in one flush: n frames of
 * 64 bytes (not RoCE: b's engine counts them malformed), one tx_flush,
 * which must not report frames still waiting
 */
struct flush_run {
	uint32_t n, queued;
	int left;
};

static int flush_call(void *port, void *arg)
{
	struct flush_run *r = arg;
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;

	for (r->queued = 0; r->queued < r->n; r->queued++) {
		uint32_t cap = 0;
		uint8_t *f = ops->tx_get(port, &cap);

		if (!f || cap < 64)
			break;
		memset(f, 0, 64);
		memset(f, 0xff, 6); /* broadcast, from a MAC of its own */
		f[6] = 2, f[11] = 0x5e;
		f[12] = 0x88, f[13] = 0xb5; /* local experimental EtherType */
		ops->tx_put(port, f, 64);
	}
	r->left = ops->tx_flush(port);
	return 0;
}

static void test_xsk_flush_all(void **state)
{
	struct flush_run r = { .n = 200 };
	struct rxdp_engine_stats st0, st;

	(void)state;
	rxdp_engine_get_stats(sides[1].e, &st0);
	rxdp_engine_port_call(sides[0].e, flush_call, &r);
	assert_int_equal(r.queued, r.n);
	assert_int_equal(r.left, 0);
	for (int i = 0; i < 1000; i++) {
		rxdp_engine_get_stats(sides[1].e, &st);
		if (st.rx_drop_malformed - st0.rx_drop_malformed >= r.n)
			break;
		usleep(1000);
	}
	assert_int_equal(st.rx_drop_malformed - st0.rx_drop_malformed, r.n);
}

/*
 * rx_fill: how full b's receive path is, as the engine's receiver-side
 * congestion point reads it. b's engine is held (a port call) while a
 * sends n frames (in sends of 100, as veth's ring of 256 between the two
 * would drop more at once); b's bursts then find them waiting in its RX
 * ring, of its
 * RING frames for RX: 100 are under a twentieth, 1200 over half (the
 * engine's ENG_RX_CROWDED). Each burst is read until one finds them all
 * (frames still on their way make the first ones find fewer).
 */
struct fill_run {
	uint32_t n, most;
	int got;
};

static int fill_call(void *port, void *arg)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;
	struct fill_run *r = arg;
	struct rxdp_frame f[64];
	double end = now_s() + 5;

	/* in sends of 100, each given time to arrive (veth's own ring) */
	for (uint32_t sent = 0; sent < r->n; sent += 100) {
		struct flush_run fr = { .n = r->n - sent < 100 ? r->n - sent
							       : 100 };

		rxdp_engine_port_call(sides[0].e, flush_call, &fr);
		usleep(2000);
	}
	r->most = 0;
	r->got = 0;
	while ((uint32_t)r->got < r->n && now_s() < end) {
		int n = ops->rx_burst(port, f, 64);

		if (n > 0) {
			uint32_t v = ops->rx_fill(port);

			if (v > r->most)
				r->most = v;
			ops->rx_release(port, f, n);
			r->got += n;
		} else {
			usleep(1000);
		}
		if (r->most * RING >= r->n * 1000U - 1000U)
			break; /* a burst found them all waiting */
	}
	return 0;
}

static void test_xsk_rx_fill(void **state)
{
	struct fill_run r = { .n = 100 };

	(void)state;
	rxdp_engine_port_call(sides[1].e, fill_call, &r);
	print_message("%u frames: the fullest burst found %u/1000\n", r.n,
		      r.most);
	assert_true(r.most > 0);
	assert_true(r.most <= r.n * 1000 / RING + 1);
	r.n = 1200;
	rxdp_engine_port_call(sides[1].e, fill_call, &r);
	print_message("%u frames: the fullest burst found %u/1000\n", r.n,
		      r.most);
	assert_true(r.most >= 500);
}

/*
 * Loopback takes turns with the wire: b's engine is held while a sends 10
 * frames to it and b queues 200 looped back (to its own MAC, as a QP
 * talking to a QP of the same device does); b's bursts then give the
 * wire's frames within the first two, not after the loop's 200 (four
 * bursts of 64, as when the loop always went first), and every frame of
 * both comes.
 */
struct turn_run {
	int first_wire; /* the burst that brought the first wire frame */
	uint32_t wire, loop;
};

static int turn_call(void *port, void *arg)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;
	struct flush_run fr = { .n = 10 };
	struct turn_run *r = arg;
	struct rxdp_frame f[64];

	rxdp_engine_port_call(sides[0].e, flush_call, &fr);
	usleep(20000); /* on the veth and into b's RX ring */
	for (int i = 0; i < 200; i++) {
		uint32_t cap = 0;
		uint8_t *b = ops->tx_get(port, &cap);

		assert_non_null(b);
		memset(b, 0, 64);
		b[0] = b[6] = 2, b[5] = b[11] = 0x77; /* from and to itself */
		b[12] = 0x88, b[13] = 0xb5;
		ops->tx_put(port, b, 64);
	}
	r->first_wire = -1;
	for (int k = 0; k < 20 && r->wire + r->loop < 210; k++) {
		int n = ops->rx_burst(port, f, 64);

		for (int i = 0; i < n; i++) {
			if (((uint8_t *)f[i].data)[0] == 0xff) {
				r->wire++;
				if (r->first_wire < 0)
					r->first_wire = k;
			} else {
				r->loop++;
			}
		}
		if (n > 0)
			ops->rx_release(port, f, n);
	}
	return 0;
}

static void test_xsk_loop_turns(void **state)
{
	struct turn_run r = { 0 };

	(void)state;
	rxdp_engine_port_call(sides[1].e, turn_call, &r);
	print_message("the wire's first frame in burst %d; %u wire, %u loop "
		      "frames\n",
		      r.first_wire, r.wire, r.loop);
	assert_int_equal(r.wire, 10);
	assert_int_equal(r.loop, 200);
	assert_true(r.first_wire >= 0 && r.first_wire <= 1);
}

/*
 * The TX thread (rxdp_xsk_port_tx_thread()): a flush of 8 frames or more
 * starts it and leaves the kicking to it, and the peer gets every frame; a
 * flush of a few, with the thread asleep after its spin, is kicked by the
 * engine itself at once. The thread stops with the port (destroy joins it);
 * the tests after this one run with it (test_xsk_port_add reallocates the
 * port's sockets under it).
 */
static int tx_thread_call(void *port, void *arg)
{
	(void)arg;
	rxdp_xsk_port_tx_thread(port, NULL);
	return 0;
}

static int tx_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "rxdp-tx\n"))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void wait_malformed(uint64_t want)
{
	struct rxdp_engine_stats st;

	for (int i = 0; i < 1000; i++) {
		rxdp_engine_get_stats(sides[1].e, &st);
		if (st.rx_drop_malformed >= want)
			break;
		usleep(1000);
	}
	assert_int_equal(st.rx_drop_malformed, want);
}

static void test_xsk_tx_thread(void **state)
{
	struct flush_run r = { .n = 2 };
	struct rxdp_engine_stats st0;

	(void)state;
	rxdp_engine_get_stats(sides[1].e, &st0);
	assert_int_equal(tx_threads(), 0);
	rxdp_engine_port_call(sides[0].e, tx_thread_call, NULL);
	/* too few to start it */
	rxdp_engine_port_call(sides[0].e, flush_call, &r);
	assert_int_equal(r.left, 0);
	assert_int_equal(tx_threads(), 0);
	wait_malformed(st0.rx_drop_malformed + 2);
	r.n = 200;
	rxdp_engine_port_call(sides[0].e, flush_call, &r);
	assert_int_equal(r.queued, r.n);
	assert_int_equal(tx_threads(), 1);
	wait_malformed(st0.rx_drop_malformed + 202);
	usleep(20000); /* past its spin: asleep */
	r.n = 2;
	rxdp_engine_port_call(sides[0].e, flush_call, &r);
	assert_int_equal(r.left, 0);
	wait_malformed(st0.rx_drop_malformed + 204);
	assert_int_equal(tx_threads(), 1);
}

static void test_xsk_rc(void **state)
{
	struct side *a = &sides[0], *b = &sides[1];
	uint32_t rkey = rxdp_emr_rkey(b->mr);
	uintptr_t rbase = (uintptr_t)b->buf;
	struct rxdp_engine_stats st;
	struct ibv_wc wc;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		/* Send with immediate */
		fill(a->buf, len, i);
		post_recv(b, 10 + i, 0, BUF / 2);
		post(a, IBV_WR_SEND_WITH_IMM, 20 + i, 0, len, 0, 0, 0x77 + i);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		wait_wc(b->rcq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(ntohl(wc.imm_data), 0x77 + i);
		assert_memory_equal(b->buf, a->buf, len);

		/* RDMA Write */
		fill(a->buf, len, 100 + i);
		post(a, IBV_WR_RDMA_WRITE, 30 + i, 0, len, rbase + BUF / 2,
		     rkey, 0);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_memory_equal(b->buf + BUF / 2, a->buf, len);

		/* RDMA Write with immediate */
		post_recv(b, 40 + i, 0, 0);
		post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 50 + i, 0, len,
		     rbase + BUF / 4, rkey, 0x99);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		wait_wc(b->rcq, &wc, 1);
		assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(b->buf + BUF / 4, a->buf, len);

		/* RDMA Read */
		fill(b->buf + BUF / 2, len, 200 + i);
		post(a, IBV_WR_RDMA_READ, 60 + i, BUF / 2, len, rbase + BUF / 2,
		     rkey, 0);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(a->buf + BUF / 2, b->buf + BUF / 2, len);
	}

	/* Fetch&Add and Compare&Swap */
	*(uint64_t *)(b->buf + 64) = 5;
	{
		struct ibv_sge sg = { .addr = (uintptr_t)a->buf,
				      .length = 8,
				      .lkey = rxdp_emr_lkey(a->mr) };
		struct ibv_send_wr wr = { .wr_id = 99,
					  .sg_list = &sg,
					  .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		wr.wr.atomic.remote_addr = rbase + 64;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 10;
		assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(*(uint64_t *)a->buf, 5);
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 15;
		wr.wr.atomic.swap = 1;
		assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
		wait_wc(a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(*(uint64_t *)a->buf, 15);
		assert_int_equal(*(uint64_t *)(b->buf + 64), 1);
	}
	rxdp_engine_get_stats(a->e, &st);
	print_message("a: tx %llu rx %llu retransmits %llu timeouts %llu "
		      "icrc drops %llu\n",
		      (unsigned long long)st.tx_packets,
		      (unsigned long long)st.rx_packets,
		      (unsigned long long)st.retransmits,
		      (unsigned long long)st.timeouts,
		      (unsigned long long)st.rx_drop_icrc);
	assert_int_equal(st.rx_drop_icrc, 0);
	for (int i = 0; i < 2; i++) {
		struct xdp_statistics xs;
		socklen_t l = sizeof(xs);

		if (!getsockopt(xsk_socket__fd(sides[i].xsk), SOL_XDP,
				XDP_STATISTICS, &xs, &l))
			print_message(
				"xsk %c: rx_dropped %llu rx_ring_full "
				"%llu fill_empty %llu tx_invalid %llu\n",
				'a' + i, (unsigned long long)xs.rx_dropped,
				(unsigned long long)xs.rx_ring_full,
				(unsigned long long)xs.rx_fill_ring_empty_descs,
				(unsigned long long)xs.tx_invalid_descs);
	}
}

/*
 * b's port (the first side's: two sockets, test_xsk_port_add's with a UMEM
 * of its own, and a TX thread) handed to a successor, as rxdpd hands it
 * over (README.md, "Takeover"), within this process: the descriptors
 * dup()ed as SCM_RIGHTS would pass them, the UMEM mapped again from its
 * memfd. b's engine is halted with 50 numbered frames from a in its RX
 * ring, 10 frames queued looped back to itself and 20 to a not yet sent; a
 * sends 30 more while no port runs. The saved state with another version and the descriptors
 * miscounted are refused, the fds still the caller's. The successor's port
 * receives the 80 in order, byte for byte, and none of the looped-back
 * ones; a got the 20; every TX buffer of the port is free, and 100 more
 * reach a. Then b gets a new engine on the port, both ends new QPs, and
 * test_xsk_rc's traffic runs again over it.
 */
#define TK_LEN 200
#define TK_TYPE 0xb6

struct seq_run {
	uint32_t first, n;
};

static void tk_frame(uint8_t *f, uint32_t seq)
{
	memset(f, 0xff, 6); /* broadcast */
	memcpy(f + 6, "\x02\x00\x00\x00\xaa\x02", 6);
	f[12] = 0x88, f[13] = TK_TYPE;
	memcpy(f + 14, &seq, 4);
	for (uint32_t i = 18; i < TK_LEN; i++)
		f[i] = (uint8_t)(seq * 7 + i);
}

static int seq_call(void *port, void *arg)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;
	struct seq_run *r = arg;

	for (uint32_t k = 0; k < r->n; k++) {
		uint32_t cap = 0;
		uint8_t *f = ops->tx_get(port, &cap);

		assert_non_null(f);
		tk_frame(f, r->first + k);
		ops->tx_put(port, f, TK_LEN);
	}
	ops->tx_flush(port); /* a's TX thread may send them */
	return 0;
}

/* n frames from port, looped back or to a, sent or only queued */
static void tk_put(struct rxdp_xsk_port *port, uint32_t n, bool looped,
		   bool flush)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t cap = 0;
		uint8_t *f = ops->tx_get(port, &cap);

		assert_non_null(f);
		memset(f, 0, 64);
		memset(f, 0xff, 6);
		if (looped) /* from and to its own MAC */
			memcpy(f, "\x02\x00\x00\x00\xaa\x01", 6);
		memcpy(f + 6, "\x02\x00\x00\x00\xaa\x01", 6);
		f[12] = 0x88, f[13] = 0xb5;
		ops->tx_put(port, f, 64);
	}
	if (flush)
		ops->tx_flush(port);
}

/* From port: n numbered frames in order from 0, checked, and no other */
static void tk_receive(struct rxdp_xsk_port *port, uint32_t n)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;
	uint8_t want[TK_LEN];
	uint32_t got = 0, other = 0;
	double end = now_s() + 5;
	struct rxdp_frame f[64];

	while (now_s() < end) {
		int k = ops->rx_burst(port, f, 64);

		for (int i = 0; i < k; i++) {
			const uint8_t *d = f[i].data;

			if (f[i].len != TK_LEN || d[13] != TK_TYPE) {
				other++;
				continue;
			}
			tk_frame(want, got);
			assert_memory_equal(d, want, TK_LEN);
			got++;
		}
		if (k > 0)
			ops->rx_release(port, f, k);
		else if (got >= n)
			break;
		else
			usleep(1000);
	}
	assert_int_equal(got, n);
	assert_int_equal(other, 0);
}

static void tk_malformed(struct side *s, uint64_t want)
{
	struct rxdp_engine_stats st;

	for (int i = 0; i < 1000; i++) {
		rxdp_engine_get_stats(s->e, &st);
		if (st.rx_drop_malformed >= want)
			break;
		usleep(1000);
	}
	assert_int_equal(st.rx_drop_malformed, want);
}

static void side_objects_free(struct side *s)
{
	assert_int_equal(rxdp_engine_destroy_qp(s->qp), 0);
	assert_int_equal(rxdp_engine_dereg_mr(s->mr), 0);
	assert_int_equal(rxdp_engine_destroy_cq(s->scq), 0);
	assert_int_equal(rxdp_engine_destroy_cq(s->rcq), 0);
	free(s->buf);
}

static void test_xsk_takeover(void **state)
{
	const struct rxdp_port_ops *ops = &rxdp_xsk_port_ops;
	struct side *b = &sides[0], *a = &sides[1];
	struct seq_run before = { 0, 50 }, during = { 50, 30 },
		       after = { 80, 20 };
	struct rxdp_engine_stats st, st_held;
	struct rxdp_umem *umem;
	int fds[8], dups[8], nfd, ntx = 0;
	uint8_t *st_buf;
	void *bufs[4096];
	char why[128];
	long n;

	assert_int_equal(enter_ns(ns[0]), 0);
	rxdp_engine_get_stats(a->e, &st);
	rxdp_engine_halt(b->e);
	rxdp_engine_port_call(a->e, seq_call, &before);
	tk_put(b->port, 10, true, false);
	tk_put(b->port, 20, false, false);
	usleep(20000); /* into b's RX ring */
	n = rxdp_xsk_ports_save(&b->port, 1, NULL, 0);
	assert_true(n > 0);
	st_buf = malloc((size_t)n);
	assert_non_null(st_buf);
	assert_int_equal(rxdp_xsk_ports_save(&b->port, 1, st_buf, (size_t)n),
			 n);
	/* its two sockets (test_xsk_port_add's has a UMEM of its own) */
	nfd = rxdp_xsk_ports_takeover_fds(&b->port, 1, fds, 8);
	assert_int_equal(nfd, 3);
	for (int i = 0; i < nfd; i++) {
		dups[i] = dup(fds[i]);
		assert_true(dups[i] >= 0);
	}
	umem = calloc(1, sizeof(*umem));
	assert_non_null(umem);
	assert_int_equal(rxdp_umem_adopt(umem, dup(b->umem.fd), 4096), 0);
	side_objects_free(b);
	rxdp_engine_destroy(b->e);
	rxdp_xsk_port_destroy(b->port);
	b->port = NULL;
	rxdp_engine_port_call(a->e, seq_call, &during);
	tk_malformed(a, st.rx_drop_malformed + 20);

	((uint32_t *)st_buf)[1] = 99;
	assert_int_equal(rxdp_xsk_ports_adopt(umem, dups, nfd, st_buf,
					      (size_t)n, &b->port, 1, why,
					      sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "version 99"));
	((uint32_t *)st_buf)[1] = 1;
	assert_int_equal(rxdp_xsk_ports_adopt(umem, dups, nfd - 1, st_buf,
					      (size_t)n, &b->port, 1, why,
					      sizeof(why)),
			 -EINVAL);
	print_message("refused: %s\n", why);
	for (int i = 0; i < nfd; i++) /* still the caller's */
		assert_true(fcntl(dups[i], F_GETFD) >= 0);
	if (rxdp_xsk_ports_adopt(umem, dups, nfd, st_buf, (size_t)n, &b->port,
				 1, why, sizeof(why)) != 1)
		fail_msg("adopt: %s", why);
	free(st_buf);

	usleep(20000);
	tk_receive(b->port, 80);
	/* every TX buffer is free: socket 0's 2048 (half its 4096 frames) */
	for (uint32_t cap = 0; ntx < 4096; ntx++) {
		bufs[ntx] = ops->tx_get(b->port, &cap);
		if (!bufs[ntx])
			break;
	}
	assert_int_equal(ntx, 2048);
	for (int i = 0; i < ntx; i++)
		ops->tx_abort(b->port, bufs[i]);
	tk_put(b->port, 100, false, true);
	tk_malformed(a, st.rx_drop_malformed + 120);

	/* an engine on the port again, held as a successor's is while it
	 * restores: what comes waits in the ring and its thread sleeps (a
	 * wake-up at each look at the ring would own its CPU, at SCHED_FIFO
	 * the successor's too) until released */
	assert_non_null(side_engine(b, true));
	rxdp_engine_get_stats(b->e, &st);
	rxdp_engine_port_call(a->e, seq_call, &after);
	usleep(200000);
	rxdp_engine_get_stats(b->e, &st_held);
	print_message("held 200 ms, 20 frames in its ring: %llu sleep(s)\n",
		      (unsigned long long)(st_held.sleeps - st.sleeps));
	assert_int_equal(st_held.rx_drop_malformed, st.rx_drop_malformed);
	assert_true(st_held.sleeps - st.sleeps <= 2);
	rxdp_engine_hold(b->e, false);
	tk_malformed(b, st.rx_drop_malformed + after.n);
	/* new QPs at both ends, traffic */
	side_objects_free(a);
	qp_setup(b, 0);
	qp_setup(a, 1);
	test_xsk_rc(state);
	/* the UMEM goes with the port, after its engine (main) */
	b->umem_adopted = umem;
}

/*
 * With RXDP_BENCH=1: RDMA Write throughput, 64 KiB messages, 16 in flight,
 * for a rough figure (printed, never asserted: the machine is shared).
 */
static void bench_write(void **state)
{
	struct side *a = &sides[0], *b = &sides[1];
	const uint32_t msg = 64 * 1024, depth = 16, total = 4096;
	uint32_t posted = 0, done = 0;
	struct ibv_wc wc[16];
	double t0, t;

	if (!getenv("RXDP_BENCH"))
		skip();
	t0 = now_s();
	while (done < total) {
		while (posted < total && posted - done < depth) {
			post(a, IBV_WR_RDMA_WRITE, posted, (posted % 32) * msg,
			     msg, (uintptr_t)b->buf + (posted % 32) * msg,
			     rxdp_emr_rkey(b->mr), 0);
			posted++;
		}
		int n = tp_poll_cq(a->scq, 16, wc);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		done += n;
	}
	t = now_s() - t0;
	print_message(
		"RDMA Write %u x %u KiB: %.2f s, %.0f MB/s, %.0f kpkt/s\n",
		total, msg / 1024, t, total * (double)msg / t / 1e6,
		total * (double)(msg / 1024) / t / 1e3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xsk_flush_all),
		cmocka_unit_test(test_xsk_rx_fill),
		cmocka_unit_test(test_xsk_loop_turns),
		cmocka_unit_test(test_xsk_tx_thread),
		/* with the TX thread running: the port's sockets reallocated */
		cmocka_unit_test(test_xsk_port_add),
		cmocka_unit_test(test_xsk_rc),
		cmocka_unit_test(bench_write),
		cmocka_unit_test(test_xsk_takeover),
	};
	int ret;

	if (geteuid() != 0) {
		fprintf(stderr, "test_xsk: needs root, skipped\n");
		return 77;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(ns[i], sizeof(ns[i]), "rxeng%d%c", getpid(), 'a' + i);
		snprintf(ifn[i], sizeof(ifn[i]), "rxe%d%c", getpid(), 'a' + i);
	}
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (sh("ip netns add %s && ip netns add %s", ns[0], ns[1]) ||
	    sh("ip link add %s netns %s numrxqueues 2 numtxqueues 2 type veth "
	       "peer name %s netns %s numrxqueues 2 numtxqueues 2",
	       ifn[0], ns[0], ifn[1], ns[1]) ||
	    /* no IPv6: its autoconfiguration frames would reach b's engine */
	    sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=1",
	       ns[0], ifn[0]) ||
	    sh("ip netns exec %s sysctl -qw net.ipv6.conf.%s.disable_ipv6=1",
	       ns[1], ifn[1]) ||
	    sh("ip -n %s link set %s address 02:00:00:00:aa:01 up", ns[0],
	       ifn[0]) ||
	    sh("ip -n %s link set %s address 02:00:00:00:aa:02 up", ns[1],
	       ifn[1])) {
		fprintf(stderr, "test_xsk: cannot build the veth pair\n");
		return 1;
	}
	if (getenv("RXDP_NETEM"))
		sh("ip netns exec %s tc qdisc add dev %s root netem %s", ns[0],
		   ifn[0], getenv("RXDP_NETEM"));
	/* libbpf/libxdp explain their fallbacks (no bpffs here): quiet */
	libbpf_set_print(NULL);
	libxdp_set_print(NULL);
	sides = calloc(2, sizeof(*sides));
	if (!sides)
		return 1;
	for (int i = 0; i < 2; i++) {
		ret = side_init(&sides[i], i);
		if (ret)
			return ret;
	}
	for (int i = 0; i < 2; i++)
		qp_setup(&sides[i], i);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (getenv("RXDP_TEST_DEBUG"))
		sh("ip -n %s -s link show %s; ip -n %s -s link show %s", ns[0],
		   ifn[0], ns[1], ifn[1]);
	/* the progress threads stop before the sockets go */
	for (int i = 0; i < 2; i++) {
		/* libxdp detaches its program by ifindex: in the right netns */
		if (enter_ns(ns[i]))
			return 1;
		rxdp_engine_destroy_qp(sides[i].qp);
		rxdp_engine_dereg_mr(sides[i].mr);
		rxdp_engine_destroy_cq(sides[i].scq);
		rxdp_engine_destroy_cq(sides[i].rcq);
		rxdp_engine_destroy(sides[i].e);
		rxdp_xsk_port_destroy(sides[i].port);
		if (sides[i].umem_adopted) {
			rxdp_umem_destroy(sides[i].umem_adopted);
			free(sides[i].umem_adopted);
		}
		xsk_socket__delete(sides[i].xsk);
		xsk_umem__delete(sides[i].xumem);
		rxdp_umem_destroy(&sides[i].umem);
	}
	return ret;
}
