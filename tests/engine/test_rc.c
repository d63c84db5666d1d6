// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The RC transport between two engines ("hosts" a and b) joined by the
 * in-memory wire: every opcode and message size, gather/scatter, immediate
 * data, atomics, memory windows, loss/duplication/reordering, RNR, retry
 * exhaustion, access errors and the verbs-level post errors, and the
 * counters each of them moves. Payloads are checked byte for byte. No root
 * needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/hw_counters.h"
#include "common/log.h"
#include "engine/engine.h"
#include "engine/pkt.h"
#include "memwire.h"
#include "poster.h"
#include "rxdp/params.h"
#include "rxdp/psn.h"
#include <arpa/inet.h>

#define MTU 1024
#define BUF (8u << 20)
#define BIG (3u << 20)
#define QPN_A 0x11
#define QPN_B 0x22

struct host {
	struct rxdp_engine *e;
	struct rxdp_ecq *scq, *rcq;
	struct rxdp_eqp *qp;
	uint8_t *buf; /* BUF bytes, registered */
	struct rxdp_emr *mr;
	struct rxdp_esrq *srq;
	struct rxdp_qp_psn psn[RXDP_MAX_QP];
};

struct pair {
	struct memwire *w;
	struct host h[2];
	int threads;
};

struct qp_opts {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd;
	int threads;
	uint32_t sq, rq;
	enum ibv_qp_type type; /* 0: RC */
	int srq; /* receives through an SRQ of 64 WQEs, limit 8 */
	int ipv6_vlan; /* IPv6 headers in VLAN 42 frames */
	int fifo; /* the progress threads' SCHED_FIFO priority (0: none) */
	unsigned int access; /* the QPs' remote access (0: write, read, atomic) */
	const struct eng_cc_params *cc; /* DCQCN's (NULL: mlx5's defaults) */
	int ecn_off; /* rxdp_engine_config's */
	enum eng_cc_algo cc_algo;
	const struct eng_tcs *tcs; /* service classes (NULL: one) */
	uint8_t sl; /* the paths' service level */
	uint8_t go_back_n; /* bit i: host i goes back (no selective resends) */
};

struct rxdp_eah;

/* a QP's loss window before any loss (the engine's ENG_WINDOW) */
#define ENG_WINDOW_TEST 256

/* async events seen, per host */
static int events[2][32];

static void on_event(void *arg, enum ibv_event_type ev, void *user)
{
	int side = (int)(uintptr_t)arg;

	if (ev < 32)
		events[side][ev]++;
	(void)user;
}

static const struct qp_opts default_opts = {
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 1,
	.max_rd = 4,
	.sq = 512,
	.rq = 512,
};

/*
 * Without progress threads the engines run on the test's own clock, which
 * moves only as the test drives them (drive(): 1 us a round): timers count
 * rounds of work, so a slow or descheduled test never sees a timer fire
 * that the engines could not have answered in time, and the timer tests
 * are exact. (A progress thread sleeps by the real clock: threaded pairs
 * use it.)
 */
#define VCLOCK_TICK 1000
static uint64_t vclock;

static uint64_t vclock_read(void *arg)
{
	return __atomic_load_n(&vclock, __ATOMIC_RELAXED);
}

/* Host i's engine as o has it, on its side of p's wire */
static struct rxdp_engine_config host_cfg(struct pair *p, int i,
					  const struct qp_opts *o)
{
	struct host *h = &p->h[i];

	return (struct rxdp_engine_config){
		.ops = &memwire_ops,
		.port = memwire_port(p->w, i),
		.psn_table = h->psn,
		.progress_thread = o->threads,
		.fifo_prio = o->fifo,
		.event_cb = on_event,
		.ah_lookup = tp_ah_lookup,
		.event_arg = (void *)(uintptr_t)i,
		.clock = o->threads ? NULL : vclock_read,
		.cc = o->cc,
		.ecn_off = o->ecn_off,
		.cc_algo = o->cc_algo,
		.tcs = o->tcs,
		.go_back_n = (o->go_back_n >> i) & 1,
	};
}

static void host_init(struct pair *p, int i, const struct qp_opts *o)
{
	struct host *h = &p->h[i];
	struct rxdp_engine_config cfg = host_cfg(p, i, o);
	struct rxdp_eqp_init init = {
		.qpn = i ? QPN_B : QPN_A,
		.qp_type = o->type ? o->type : IBV_QPT_RC,
		.cap = { .max_send_wr = o->sq,
			 .max_recv_wr = o->rq,
			 .max_send_sge = 8,
			 .max_recv_sge = 8,
			 .max_inline_data = 256 },
	};

	h->e = rxdp_engine_create(&cfg);
	assert_non_null(h->e);
	h->scq = rxdp_engine_create_cq(h->e, 4096, NULL, NULL);
	h->rcq = rxdp_engine_create_cq(h->e, 4096, NULL, NULL);
	assert_non_null(h->scq);
	assert_non_null(h->rcq);
	init.send_cq = h->scq;
	init.recv_cq = h->rcq;
	memset(events[i], 0, sizeof(events[i]));
	if (o->srq) {
		struct ibv_srq_attr sa = { .max_wr = 64,
					   .max_sge = 4,
					   .srq_limit = 8 };

		h->srq = rxdp_engine_create_srq(h->e, NULL, &sa, NULL, NULL, h);
		assert_non_null(h->srq);
		assert_int_equal(sa.max_wr, 64);
		init.srq = h->srq;
	}
	h->qp = rxdp_engine_create_qp(h->e, &init);
	assert_non_null(h->qp);
	h->buf = aligned_alloc(4096, BUF);
	assert_non_null(h->buf);
	memset(h->buf, 0, BUF);
	h->mr = rxdp_engine_reg_mr(
		h->e, h->buf, BUF, (uintptr_t)h->buf,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(h->mr);
}

static void qp_connect(struct rxdp_eqp *qp, int i, uint32_t dest,
		       const struct qp_opts *o);

/* One of the transport's counters (common/hw_counters.h) of a QP */
static uint64_t hwc(struct host *h, enum rxdp_hwc c)
{
	__u64 v[RXDP_HWC_MAX], dev[RXDP_HWC_MAX];

	rxdp_engine_hw_counters(h->e, h->qp, v);
	rxdp_engine_hw_counters(h->e, NULL, dev);
	assert_true(dev[c] >= v[c]); /* the device's include its QPs' */
	return v[c];
}

static void host_connect(struct pair *p, int i, const struct qp_opts *o)
{
	qp_connect(p->h[i].qp, i, i ? QPN_A : QPN_B, o);
}

/* INIT, RTR (to dest), RTS; i: which side, for addresses and PSNs */
static void qp_connect(struct rxdp_eqp *qp, int i, uint32_t dest,
		       const struct qp_opts *o)
{
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, (uint8_t)(1 + i) },
		.dmac = { 2, 0, 0, 0, 0, (uint8_t)(2 - i) },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, (uint8_t)(1 + i) },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, (uint8_t)(2 - i) },
		.hop_limit = 64,
		.udp_sport = 0xc000 + i,
		.sl = o->sl,
	};
	struct rxdp_qp_attr a = { 0 };

	if (o->ipv6_vlan) {
		uint8_t me[16] = { 0xfd, 0x42, [15] = (uint8_t)(1 + i) };
		uint8_t peer[16] = { 0xfd, 0x42, [15] = (uint8_t)(2 - i) };

		path.ipv6 = 1;
		path.vlan = 42;
		path.traffic_class = 0x68;
		path.flow_label = 0x12345;
		memcpy(path.sip, me, 16);
		memcpy(path.dip, peer, 16);
	}

	a.qp_access_flags = o->access ? o->access
				      : IBV_ACCESS_REMOTE_WRITE |
						IBV_ACCESS_REMOTE_READ |
						IBV_ACCESS_REMOTE_ATOMIC;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = i ? 0xfffff0 : 0x100; /* b's PSNs wrap during a test */
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = o->min_rnr_timer;
	a.sq_psn = i ? 0x100 : 0xfffff0;
	a.timeout = o->timeout;
	/*
	 * RXDP_TEST_TIMEOUT_MIN: no shorter transport timer (make check-asan:
	 * a sanitized build on a loaded machine can sleep past a 16 ms one
	 * seven times in a row, and these timers are the test's setting, not
	 * what it checks)
	 */
	if (getenv("RXDP_TEST_TIMEOUT_MIN") &&
	    a.timeout < atoi(getenv("RXDP_TEST_TIMEOUT_MIN")))
		a.timeout = atoi(getenv("RXDP_TEST_TIMEOUT_MIN"));
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = o->max_rd;
	assert_int_equal(tp_qp_connect(qp, o->type ? o->type : IBV_QPT_RC, &a,
				       &path),
			 0);
}

static int xdp_like(void *arg, uint8_t *frame, uint32_t len);
static uint64_t xdp_drops, xdp_resp_drops;

static struct pair *pair_new(const struct qp_opts *o)
{
	struct pair *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->w = memwire_create();
	assert_non_null(p->w);
	p->threads = o->threads;
	host_init(p, 0, o);
	host_init(p, 1, o);
	host_connect(p, 0, o);
	host_connect(p, 1, o);
	/* RXDP_TEST_XDP_FILTER=0: without the XDP program's PSN filtering */
	if (!getenv("RXDP_TEST_XDP_FILTER") ||
	    strcmp(getenv("RXDP_TEST_XDP_FILTER"), "0")) {
		memwire_set_filter(p->w, 0, xdp_like, p->h[0].psn);
		memwire_set_filter(p->w, 1, xdp_like, p->h[1].psn);
	}
	xdp_drops = xdp_resp_drops = 0;
	return p;
}

static void pair_free(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		struct host *h = &p->h[i];

		if (h->srq)
			assert_int_equal(rxdp_engine_destroy_srq(h->srq),
					 -EBUSY);
		assert_int_equal(rxdp_engine_destroy_qp(h->qp), 0);
		if (h->srq)
			assert_int_equal(rxdp_engine_destroy_srq(h->srq), 0);
		assert_int_equal(rxdp_engine_dereg_mr(h->mr), 0);
		assert_int_equal(rxdp_engine_destroy_cq(h->scq), 0);
		assert_int_equal(rxdp_engine_destroy_cq(h->rcq), 0);
	}
	for (int i = 0; i < 2; i++) {
		rxdp_engine_destroy(p->h[i].e);
		free(p->h[i].buf);
	}
	memwire_destroy(p->w);
	free(p);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round: both engines do what they have, and the test clock moves */
static void drive(struct pair *p)
{
	rxdp_engine_progress(p->h[0].e);
	rxdp_engine_progress(p->h[1].e);
	__atomic_add_fetch(&vclock, VCLOCK_TICK, __ATOMIC_RELAXED);
}

/*
 * Poll cq until n completions arrived, driving both engines (the peer is
 * passive without a progress thread). Fails after a generous 60 s.
 */
static void wait_wc(struct pair *p, struct rxdp_ecq *cq, struct ibv_wc *wc,
		    int n)
{
	double end = now_s() + 60;
	int got = 0;

	while (got < n) {
		int r = tp_poll_cq(cq, n - got, wc + got);

		assert_true(r >= 0);
		got += r;
		if (got == n)
			break;
		if (!p->threads)
			drive(p);
		if (now_s() > end)
			fail_msg("only %d of %d completions after 60 s", got,
				 n);
	}
	for (int i = 0; i < n; i++) {
		if (getenv("RXDP_TEST_DEBUG") && wc[i].status) {
			struct rxdp_engine_stats s[2];

			rxdp_engine_get_stats(p->h[0].e, &s[0]);
			rxdp_engine_get_stats(p->h[1].e, &s[1]);
			for (int k = 0; k < 2; k++)
				print_message(
					"%c: rx %llu tx %llu retx %llu to %llu "
					"dup %llu psn %llu seqnak %llu "
					"rnr %llu malformed %llu\n",
					'a' + k,
					(unsigned long long)s[k].rx_packets,
					(unsigned long long)s[k].tx_packets,
					(unsigned long long)s[k].retransmits,
					(unsigned long long)s[k].timeouts,
					(unsigned long long)s[k].rx_duplicates,
					(unsigned long long)s[k].rx_drop_psn,
					(unsigned long long)s[k].seq_naks_sent,
					(unsigned long long)s[k].rnr_naks_sent,
					(unsigned long long)s[k]
						.rx_drop_malformed);
			{
				struct memwire_stats ms;

				memwire_get_stats(p->w, &ms);
				print_message("wire: %llu frames, %llu lost; "
					      "XDP-like filter drops %llu\n",
					      (unsigned long long)ms.frames,
					      (unsigned long long)ms.lost,
					      (unsigned long long)xdp_drops);
			}
			break;
		}
	}
}

/* Nothing more arrives on cq for a while */
static void expect_no_wc(struct pair *p, struct rxdp_ecq *cq)
{
	struct ibv_wc wc;
	double end = now_s() + 0.05;

	while (now_s() < end) {
		drive(p);
		assert_int_equal(tp_poll_cq(cq, 1, &wc), 0);
	}
}

static void fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

static struct ibv_sge sge(struct host *h, uint32_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)h->buf + off,
				 .length = len,
				 .lkey = rxdp_emr_lkey(h->mr) };
}

static void post_recv1(struct host *h, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge s = sge(h, off, len);
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	assert_int_equal(tp_post_recv(h->qp, &wr, &bad), 0);
}

static void post_send1(struct host *h, enum ibv_wr_opcode op, uint64_t id,
		       uint32_t off, uint32_t len, uint64_t raddr,
		       uint32_t rkey, uint32_t imm, unsigned int flags)
{
	struct ibv_sge s = sge(h, off, len);
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = flags,
				  .imm_data = htonl(imm) };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(tp_post_send(h->qp, &wr, &bad), 0);
}

static const uint32_t sizes[] = {
	0, 1, MTU - 1, MTU, MTU + 1, 3 * MTU, BIG + 7
};

/* Send and Send with immediate, every size, checked at the receiver */
static void test_send_sizes(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int imm = 0; imm < 2; imm++) {
			uint32_t len = sizes[i];
			struct ibv_wc wc;

			fill(a->buf, len, i * 2 + imm);
			memset(b->buf, 0xee, len + 16);
			post_recv1(b, 100 + i, 0, BUF);
			post_send1(a, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				   200 + i, 0, len, 0, 0, 0xabc000 + i,
				   IBV_SEND_SIGNALED);
			wait_wc(p, a->scq, &wc, 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_SEND);
			assert_int_equal(wc.wr_id, 200 + i);
			wait_wc(p, b->rcq, &wc, 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_RECV);
			assert_int_equal(wc.wr_id, 100 + i);
			assert_int_equal(wc.byte_len, len);
			assert_int_equal(wc.qp_num, QPN_B);
			assert_int_equal(wc.src_qp, QPN_A);
			assert_int_equal(!!(wc.wc_flags & IBV_WC_WITH_IMM),
					 imm);
			if (imm)
				assert_int_equal(ntohl(wc.imm_data),
						 0xabc000 + i);
			assert_memory_equal(b->buf, a->buf, len);
			assert_int_equal(b->buf[len], 0xee);
		}
	}
	/* a clean wire: the XDP filter never drops what the engines need */
	assert_int_equal(__atomic_load_n(&xdp_drops, __ATOMIC_RELAXED), 0);
	pair_free(p);
}

/*
 * One WR per post, back to back: the requests behind the first one still
 * unacknowledged wait for a batch of 32 or the acknowledgement's pass
 * instead of a flush (a sendto()) each, and none is left behind. Without
 * progress threads and with b not driven the batches are exact: 1, 32, then
 * the rest once b's ACK reaches a. With threads, a never calls in again
 * after posting: its progress thread must flush what waits.
 */
static void test_tx_coalescing(void **state)
{
	for (int threads = 0; threads < 2; threads++) {
		struct qp_opts o = default_opts;
		struct pair *p;
		struct host *a, *b;
		struct memwire_stats st;
		struct ibv_wc wc[64];

		o.threads = threads;
		p = pair_new(&o);
		a = &p->h[0];
		b = &p->h[1];
		for (int i = 0; i < 64; i++)
			post_recv1(b, i, i * 64, 64);
		for (int i = 0; i < 64; i++) {
			fill(a->buf + i * 64, 64, i);
			post_send1(a, IBV_WR_SEND, 1000 + i, i * 64, 64, 0, 0,
				   0, 0);
		}
		if (!threads) {
			memwire_get_stats(p->w, &st);
			assert_int_equal(st.flushes[0], 2);
			assert_int_equal(st.batch_max[0], 32);
		}
		wait_wc(p, b->rcq, wc, 64);
		for (int i = 0; i < 64; i++) {
			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].wr_id, i);
		}
		assert_memory_equal(b->buf, a->buf, 64 * 64);
		memwire_get_stats(p->w, &st);
		if (!threads)
			assert_int_equal(st.flushes[0], 3);
		assert_true(st.frames >= 64);
		pair_free(p);
	}
}

/*
 * Multi-packet messages posted one at a time: batch flushes that end
 * between AckReq packets must not leave a tail waiting for an ACK nobody
 * will send (it would go only when the retransmission timer fires).
 */
static void test_tx_coalescing_messages(void **state)
{
	for (int threads = 0; threads < 2; threads++) {
		struct qp_opts o = default_opts;
		struct rxdp_engine_stats es;
		struct pair *p;
		struct host *a, *b;
		struct ibv_wc wc[16];
		const uint32_t len = 37 * MTU + 5; /* 38 packets */

		o.threads = threads;
		p = pair_new(&o);
		a = &p->h[0];
		b = &p->h[1];
		for (int round = 0; round < 20; round++) {
			for (int i = 0; i < 16; i++)
				post_recv1(b, i, 0, BUF);
			fill(a->buf, len, round);
			for (int i = 0; i < 16; i++)
				post_send1(a, IBV_WR_SEND, i, 0, len, 0, 0, 0,
					   i == 15 ? IBV_SEND_SIGNALED : 0);
			wait_wc(p, b->rcq, wc, 16);
			for (int i = 0; i < 16; i++)
				assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			wait_wc(p, a->scq, wc, 1);
			assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		}
		rxdp_engine_get_stats(a->e, &es);
		assert_int_equal(es.timeouts, 0);
		pair_free(p);
	}
}

/* requests arriving at b, and those that asked for an ACK */
static unsigned int ackreq_reqs, ackreq_set;

static int ackreq_count(void *arg, uint8_t *frame, uint32_t len)
{
	uint8_t copy[4096];
	struct pkt_info pi;

	memcpy(copy, frame, len < sizeof(copy) ? len : sizeof(copy));
	if (len <= sizeof(copy) && !pkt_parse(copy, len, &pi) &&
	    (roce_opcode_flags(pi.opcode) & ROCE_OPF_REQUEST)) {
		ackreq_reqs++;
		ackreq_set += bth_ackreq(pi.bth) != 0;
	}
	return xdp_like(arg, frame, len);
}

/*
 * A burst of small writes asks for an ACK per burst, not per message
 * (9.7.2: an ACK of a later PSN acknowledges the earlier ones): each ACK
 * costs the responder a packet out and the requester one in. The last
 * request of a burst still asks, or its completion would wait for the
 * tail-loss probe; so does one that only a local operation follows.
 */
static void test_ackreq_per_burst(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats es;
	struct ibv_send_wr wr[64], *bad;
	struct ibv_sge sg[64];
	struct ibv_wc wc[64];
	uint32_t rkey = rxdp_emr_rkey(b->mr);

	memwire_set_filter(p->w, 1, ackreq_count, b->psn);
	ackreq_reqs = ackreq_set = 0;
	fill(a->buf, 64 * 64, 5);
	/* one post of 64 (as an application's ring holds them at a pass) */
	for (int i = 0; i < 64; i++) {
		sg[i] = sge(a, i * 64, 64);
		wr[i] = (struct ibv_send_wr){ .wr_id = i,
					      .next = i < 63 ? &wr[i + 1]
							     : NULL,
					      .sg_list = &sg[i],
					      .num_sge = 1,
					      .opcode = IBV_WR_RDMA_WRITE,
					      .send_flags = IBV_SEND_SIGNALED };
		wr[i].wr.rdma.remote_addr = (uintptr_t)b->buf + i * 64;
		wr[i].wr.rdma.rkey = rkey;
	}
	assert_int_equal(tp_post_send(a->qp, wr, &bad), 0);
	wait_wc(p, a->scq, wc, 64);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	assert_memory_equal(b->buf, a->buf, 64 * 64);
	assert_int_equal(ackreq_reqs, 64);
	/* the burst's last, and one of every ENG_ACKREQ_EVERY at most */
	assert_in_range(ackreq_set, 1, 2);

	/* one write alone asks */
	{
		unsigned int before = ackreq_set;

		post_send1(a, IBV_WR_RDMA_WRITE, 100, 0, 8, (uintptr_t)b->buf,
			   rkey, 0, IBV_SEND_SIGNALED);
		wait_wc(p, a->scq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(ackreq_set, before + 1);
	}

	/* a write followed only by a local operation asks */
	{
		struct ibv_send_wr inv = { .wr_id = 201,
					   .opcode = IBV_WR_LOCAL_INV,
					   .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = 0x12345600 };
		unsigned int before = ackreq_set;

		sg[0] = sge(a, 0, 8);
		wr[0] = (struct ibv_send_wr){ .wr_id = 200,
					      .next = &inv,
					      .sg_list = &sg[0],
					      .num_sge = 1,
					      .opcode = IBV_WR_RDMA_WRITE,
					      .send_flags = IBV_SEND_SIGNALED };
		wr[0].wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr[0].wr.rdma.rkey = rkey;
		assert_int_equal(tp_post_send(a->qp, wr, &bad), 0);
		wait_wc(p, a->scq, wc, 2);
		assert_int_equal(wc[0].wr_id, 200);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(ackreq_set, before + 1);
	}
	/* nothing waited for a timer */
	rxdp_engine_get_stats(a->e, &es);
	assert_int_equal(es.tlp_probes, 0);
	assert_int_equal(es.timeouts, 0);
	assert_int_equal(es.rto_expiries, 0);
	pair_free(p);
}

/* RDMA Write and Write with immediate; b never posts or polls for plain
 * writes (a passive target) */
static void test_write_sizes(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int imm = 0; imm < 2; imm++) {
			uint32_t len = sizes[i], roff = 4096 + 3;
			struct ibv_wc wc;

			fill(a->buf, len, 77 + i * 2 + imm);
			memset(b->buf, 0xee, BUF);
			if (imm)
				post_recv1(b, 300 + i, 0, 0);
			post_send1(a,
				   imm ? IBV_WR_RDMA_WRITE_WITH_IMM
				       : IBV_WR_RDMA_WRITE,
				   400 + i, 0, len, (uintptr_t)b->buf + roff,
				   rxdp_emr_rkey(b->mr), 0x5150 + i,
				   IBV_SEND_SIGNALED);
			wait_wc(p, a->scq, &wc, 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
			if (imm) {
				wait_wc(p, b->rcq, &wc, 1);
				assert_int_equal(wc.status, IBV_WC_SUCCESS);
				assert_int_equal(wc.opcode,
						 IBV_WC_RECV_RDMA_WITH_IMM);
				assert_int_equal(wc.wr_id, 300 + i);
				assert_int_equal(wc.byte_len, len);
				assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
				assert_int_equal(ntohl(wc.imm_data),
						 0x5150 + i);
			}
			assert_memory_equal(b->buf + roff, a->buf, len);
			assert_int_equal(b->buf[roff - 1], 0xee);
			assert_int_equal(b->buf[roff + len], 0xee);
		}
	}
	/* a clean wire: the XDP filter never drops what the engines need */
	assert_int_equal(__atomic_load_n(&xdp_drops, __ATOMIC_RELAXED), 0);
	pair_free(p);
}

static void test_read_sizes(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i], roff = 8192 + 5;
		struct ibv_wc wc;

		fill(b->buf + roff, len, 999 + i);
		memset(a->buf, 0xee, len + 16);
		post_send1(a, IBV_WR_RDMA_READ, 500 + i, 0, len,
			   (uintptr_t)b->buf + roff, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		wait_wc(p, a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(a->buf, b->buf + roff, len);
		assert_int_equal(a->buf[len], 0xee);
	}
	/* a clean wire: the XDP filter never drops what the engines need */
	assert_int_equal(__atomic_load_n(&xdp_drops, __ATOMIC_RELAXED), 0);
	pair_free(p);
}

/* Gather lists, scatter lists, inline data, unsignaled WRs */
static void test_sge_inline_unsignaled(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_sge gs[3] = { sge(a, 100, 700), sge(a, 5000, 1),
				 sge(a, 9000, 2000) };
	struct ibv_sge ss[4] = { sge(b, 0, 10), sge(b, 20000, 1500),
				 sge(b, 40000, 3), sge(b, 60000, 4000) };
	struct ibv_send_wr wr = { .wr_id = 1,
				  .sg_list = gs,
				  .num_sge = 3,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = ss, .num_sge = 4 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	uint8_t expect[2701], got[2701], inl[200];
	struct ibv_wc wc[4];
	uint32_t off = 0;

	fill(a->buf, BUF / 2, 5);
	for (int i = 0; i < 3; i++) {
		memcpy(expect + off, (void *)(uintptr_t)gs[i].addr,
		       gs[i].length);
		off += gs[i].length;
	}
	assert_int_equal(tp_post_recv(b->qp, &rwr, &rbad), 0);
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, wc, 1);
	assert_int_equal(wc[0].byte_len, 2701);
	off = 0;
	for (int i = 0; i < 4 && off < 2701; i++) {
		uint32_t n = ss[i].length < 2701 - off ? ss[i].length
						       : 2701 - off;

		memcpy(got + off, (void *)(uintptr_t)ss[i].addr, n);
		off += n;
	}
	assert_memory_equal(got, expect, 2701);

	/* inline: the buffer may change right after the post */
	for (size_t i = 0; i < sizeof(inl); i++)
		inl[i] = (uint8_t)(i ^ 0x5a);
	{
		struct ibv_sge is = { .addr = (uintptr_t)inl,
				      .length = sizeof(inl) };

		wr = (struct ibv_send_wr){ .wr_id = 3,
					   .sg_list = &is,
					   .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_INLINE };
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 100000;
		wr.wr.rdma.rkey = rxdp_emr_rkey(b->mr);
		assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
		memset(inl, 0, sizeof(inl));
	}
	/* two unsignaled writes, then a signaled one: one completion */
	post_send1(a, IBV_WR_RDMA_WRITE, 4, 0, 300, (uintptr_t)b->buf + 200000,
		   rxdp_emr_rkey(b->mr), 0, 0);
	post_send1(a, IBV_WR_RDMA_WRITE, 5, 300, 300,
		   (uintptr_t)b->buf + 200300, rxdp_emr_rkey(b->mr), 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].wr_id, 5);
	expect_no_wc(p, a->scq);
	for (size_t i = 0; i < sizeof(inl); i++)
		assert_int_equal(b->buf[100000 + i], (uint8_t)(i ^ 0x5a));
	assert_memory_equal(b->buf + 200000, a->buf, 600);
	pair_free(p);
}

static void post_atomic(struct host *h, enum ibv_wr_opcode op, uint64_t id,
			uint32_t off, uint64_t raddr, uint32_t rkey,
			uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge s = sge(h, off, 8);
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	assert_int_equal(tp_post_send(h->qp, &wr, &bad), 0);
}

static void test_atomics(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	uint64_t *target = (uint64_t *)(b->buf + 4096);
	uint64_t *res = (uint64_t *)a->buf;
	uint32_t rkey = rxdp_emr_rkey(b->mr);
	struct ibv_wc wc[64];

	*target = 40;
	post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, (uintptr_t)target,
		    rkey, 2, 0);
	post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 2, 8, (uintptr_t)target, rkey,
		    42, 1000); /* matches: swapped */
	post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 3, 16, (uintptr_t)target,
		    rkey, 42, 7); /* does not match */
	wait_wc(p, a->scq, wc, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i + 1);
		assert_int_equal(wc[i].byte_len, 8);
	}
	assert_int_equal(wc[0].opcode, IBV_WC_FETCH_ADD);
	assert_int_equal(wc[1].opcode, IBV_WC_COMP_SWAP);
	assert_int_equal(res[0], 40);
	assert_int_equal(res[1], 42);
	assert_int_equal(res[2], 1000);
	assert_int_equal(*target, 1000);

	/* many fetch-adds in flight, the results are a permutation */
	*target = 0;
	for (int i = 0; i < 64; i++)
		post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 100 + i, 8 * i,
			    (uintptr_t)target, rkey, 1, 0);
	wait_wc(p, a->scq, wc, 64);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 100 + i); /* in order */
		assert_int_equal(res[i], i);
	}
	assert_int_equal(*target, 64);
	pair_free(p);
}

/*
 * Loss, duplication and reordering while a mixed stream of large writes,
 * sends and reads runs in both directions, with progress threads: nothing
 * lost, nothing corrupted, every completion in order.
 */
static void test_lossy(void **state)
{
	struct qp_opts o = default_opts;
	struct memwire_faults f = {
		.loss = 150, .dup = 100, .reorder = 200, .seed = 12345
	};
	struct rxdp_engine_stats st;
	struct memwire_stats ms;
	struct pair *p;
	struct host *a, *b;
	const uint32_t chunk = 256 * 1024 + 17, n = 8;
	struct ibv_wc wc[3 * 8];

	o.threads = 1;
	o.timeout = 12; /* 16 ms */
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	memwire_set_faults(p->w, &f);
	fill(a->buf, BUF, 1);
	fill(b->buf, BUF, 2);
	for (uint32_t i = 0; i < n; i++)
		post_recv1(b, 1000 + i, BUF / 2 + i * chunk, chunk);
	for (uint32_t i = 0; i < n; i++) {
		/* a: write chunk i of a's first quarter to b's second quarter */
		post_send1(a, IBV_WR_RDMA_WRITE, 3 * i, i * chunk, chunk,
			   (uintptr_t)b->buf + BUF / 4 + i * chunk,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
		/* a: send chunk i to b's receive i */
		post_send1(a, IBV_WR_SEND, 3 * i + 1, i * chunk, chunk, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		/* a: read b's first-quarter chunk i into a's third quarter */
		post_send1(a, IBV_WR_RDMA_READ, 3 * i + 2, BUF / 2 + i * chunk,
			   chunk, (uintptr_t)b->buf + i * chunk,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	}
	wait_wc(p, a->scq, wc, 3 * n);
	for (uint32_t i = 0; i < 3 * n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	wait_wc(p, b->rcq, wc, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 1000 + i);
		assert_int_equal(wc[i].byte_len, chunk);
	}
	assert_memory_equal(b->buf + BUF / 4, a->buf, n * chunk);
	assert_memory_equal(b->buf + BUF / 2, a->buf, n * chunk);
	assert_memory_equal(a->buf + BUF / 2, b->buf, n * chunk);
	memwire_get_stats(p->w, &ms);
	rxdp_engine_get_stats(a->e, &st);
	print_message("xdp filter drops %llu (responses %llu)\n",
		      (unsigned long long)xdp_drops,
		      (unsigned long long)xdp_resp_drops);
	print_message("wire: %llu frames, %llu lost, %llu dup, %llu reordered; "
		      "a: %llu retransmitted, %llu timeouts\n",
		      (unsigned long long)ms.frames,
		      (unsigned long long)ms.lost,
		      (unsigned long long)ms.duplicated,
		      (unsigned long long)ms.reordered,
		      (unsigned long long)st.retransmits,
		      (unsigned long long)st.timeouts);
	assert_true(ms.lost > 0 && ms.duplicated > 0 && ms.reordered > 0);
	assert_true(st.retransmits > 0);
	/* the counters Soft-RoCE names: loss and duplicates show in them */
	assert_true(hwc(a, RXDP_HWC_COMP_RETRY) > 0);
	assert_true(hwc(b, RXDP_HWC_DUP_REQ) > 0);
	assert_true(hwc(b, RXDP_HWC_OUT_OF_SEQ_REQ) > 0);
	assert_true(hwc(a, RXDP_HWC_RCVD_SEQ_ERR) > 0);
	assert_int_equal(hwc(a, RXDP_HWC_RDMA_SENDS), 3 * n);
	assert_int_equal(hwc(b, RXDP_HWC_RDMA_RECVS), n);
	assert_true(hwc(a, RXDP_HWC_SENT_PKTS) >= 3 * n);
	assert_true(hwc(b, RXDP_HWC_RCVD_BYTES) >= 2 * n * chunk);
	pair_free(p);
}

/*
 * Atomics on a lossy, duplicating wire: each runs exactly once (duplicates
 * are answered from the replay cache), the answers come back in order.
 */
static void test_lossy_atomics(void **state)
{
	struct qp_opts o = default_opts;
	struct memwire_faults f = {
		.loss = 300, .dup = 500, .reorder = 300, .seed = 777
	};
	struct pair *p;
	struct host *a, *b;
	uint64_t *target, *res;
	struct ibv_wc wc[200];

	o.threads = 1;
	o.timeout = 12;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	target = (uint64_t *)(b->buf + 8192);
	res = (uint64_t *)a->buf;
	memwire_set_faults(p->w, &f);
	for (int i = 0; i < 200; i++)
		post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, i, 8 * i,
			    (uintptr_t)target, rxdp_emr_rkey(b->mr), 3, 0);
	wait_wc(p, a->scq, wc, 200);
	for (int i = 0; i < 200; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
		assert_int_equal(res[i], 3 * i);
	}
	assert_int_equal(__atomic_load_n(target, __ATOMIC_SEQ_CST), 600);
	pair_free(p);
}

/*
 * A fenced WR waits for the reads before it (IBTA 10.8.3.3): a Send of the
 * buffer a Read fills carries what the Read brought.
 */
static void test_fence(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_wc wc[2];

	for (int round = 0; round < 20; round++) {
		uint32_t len = 3000 + round;

		memset(a->buf, 0x11, len);
		fill(b->buf + 65536, len, round);
		post_recv1(b, round, 0, 8192);
		post_send1(a, IBV_WR_RDMA_READ, 1, 0, len,
			   (uintptr_t)b->buf + 65536, rxdp_emr_rkey(b->mr), 0,
			   0);
		post_send1(a, IBV_WR_SEND, 2, 0, len, 0, 0, 0,
			   IBV_SEND_SIGNALED | IBV_SEND_FENCE);
		wait_wc(p, a->scq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[0].wr_id, 2);
		wait_wc(p, b->rcq, wc, 1);
		assert_int_equal(wc[0].byte_len, len);
		assert_memory_equal(b->buf, b->buf + 65536, len);
	}
	pair_free(p);
}

/* --- IBTA 1.5: Atomic Write and Flush (Annex A19) --------------------------- */

static void post_atomic_write(struct host *h, uint64_t id, uint64_t va,
			      uint32_t rkey, const void *val,
			      unsigned int flags)
{
	assert_int_equal(tp_post_atomic_write(h->qp, id, flags, rkey, va, val),
			 0);
}

static void post_flush(struct host *h, uint64_t id, uint64_t va, uint32_t rkey,
		       uint64_t len, uint8_t type, uint8_t level)
{
	assert_int_equal(tp_post_flush(h->qp, id, IBV_SEND_SIGNALED, rkey, va,
				       len, type, level),
			 0);
}

/* The QPs of a pair that may be flushed through (and written, read...) */
static const struct qp_opts flush_opts = {
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 1,
	.max_rd = 4,
	.sq = 512,
	.rq = 512,
	.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC | RXDP_ACCESS_FLUSH_GLOBAL,
};

/*
 * Atomic Write: its 8 bytes land as the WR gave them, and nothing else;
 * in order with the RDMA Writes to the same place; more of them in flight
 * than max_rd_atomic (each waits for a responder resource); the completion
 * says IBV_WC_ATOMIC_WRITE and 8 bytes. Soft-RoCE asks the region for
 * remote write rights, not atomic ones: so does rxdp.
 */
static void test_atomic_write(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	uint8_t *target = b->buf + 4096;
	const uint8_t v[8] = { 'r', 'x', 'd', 'p', 0xa1, 0x19, 0x00, 0xff };
	struct rxdp_emr *wo;
	struct ibv_wc wc[64];
	uint64_t x;

	memset(target - 8, 0x11, 24);
	post_atomic_write(a, 1, (uintptr_t)target, rxdp_emr_rkey(b->mr), v,
			  IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].opcode, IBV_WC_ATOMIC_WRITE);
	assert_int_equal(wc[0].byte_len, 8);
	assert_memory_equal(target, v, 8);
	for (int i = -8; i < 16; i++)
		if (i < 0 || i >= 8)
			assert_int_equal(target[i], 0x11);

	/* a region with remote write and no remote atomic rights takes it */
	wo = rxdp_engine_reg_mr(b->e, b->buf, 8192, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(wo);
	/* in order with RDMA Writes: Write, Atomic Write, Write, Atomic Write */
	for (int i = 0; i < 4; i++) {
		x = 0x1000 + i;
		if (i & 1) {
			post_atomic_write(a, 10 + i, (uintptr_t)target,
					  rxdp_emr_rkey(wo), &x,
					  i == 3 ? IBV_SEND_SIGNALED : 0);
		} else {
			memcpy(a->buf + 8 * i, &x, 8);
			post_send1(a, IBV_WR_RDMA_WRITE, 10 + i, 8 * i, 8,
				   (uintptr_t)target, rxdp_emr_rkey(wo), 0, 0);
		}
	}
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 13);
	memcpy(&x, target, 8);
	assert_int_equal(x, 0x1003);
	assert_int_equal(rxdp_engine_dereg_mr(wo), 0);

	/* 64 in flight, 4 at a time (max_rd_atomic), completed in order */
	for (int i = 0; i < 64; i++) {
		x = 0x5eed0000 + i;
		post_atomic_write(a, 100 + i, (uintptr_t)b->buf + 8192 + 8 * i,
				  rxdp_emr_rkey(b->mr), &x, IBV_SEND_SIGNALED);
	}
	wait_wc(p, a->scq, wc, 64);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 100 + i);
		memcpy(&x, b->buf + 8192 + 8 * i, 8);
		assert_int_equal(x, 0x5eed0000 + i);
	}
	assert_int_equal(hwc(a, RXDP_HWC_RDMA_SENDS), 69);
	pair_free(p);
}

/* The first Atomic Write frame b gets, as it arrived, for a replay */
static uint8_t aw_frame[4096];
static uint32_t aw_len;

static int aw_capture(void *arg, uint8_t *frame, uint32_t len)
{
	if (!aw_len && len <= sizeof(aw_frame) && len > 54 &&
	    frame[14 + 20 + 8] == ROCE_RC_ATOMIC_WRITE) {
		memcpy(aw_frame, frame, len);
		aw_len = len;
	}
	return xdp_like(arg, frame, len);
}

/*
 * A duplicate Atomic Write is answered, never run again: run again after
 * an RDMA Write to the same place, it would undo that write (IBTA 1.5
 * A19; Soft-RoCE replays it from its responder resources)
 */
static void test_atomic_write_dup(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	uint8_t *target = b->buf + 4096;
	uint64_t x = 0xaaaaaaaaaaaaaaaaULL, y = 0x5555555555555555ULL, got;
	struct rxdp_engine_stats s0, s1;
	struct ibv_wc wc;

	aw_len = 0;
	memwire_set_filter(p->w, 1, aw_capture, b->psn);
	post_atomic_write(a, 1, (uintptr_t)target, rxdp_emr_rkey(b->mr), &x,
			  IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_true(aw_len > 0);
	memcpy(a->buf, &y, 8);
	post_send1(a, IBV_WR_RDMA_WRITE, 2, 0, 8, (uintptr_t)target,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	rxdp_engine_get_stats(b->e, &s0);
	for (int i = 0; i < 5; i++)
		memwire_inject(p->w, 1, aw_frame, aw_len);
	for (int i = 0; i < 10; i++)
		drive(p);
	rxdp_engine_get_stats(b->e, &s1);
	assert_int_equal(s1.rx_duplicates - s0.rx_duplicates, 5);
	/* each answered (a drops the answers: it asked for nothing) */
	assert_int_equal(s1.tx_packets - s0.tx_packets, 5);
	memcpy(&got, target, 8);
	assert_true(got == y);
	assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_RTS);
	assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_RTS);
	/* and the QPs go on */
	post_atomic_write(a, 3, (uintptr_t)target, rxdp_emr_rkey(b->mr), &x,
			  IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	memcpy(&got, target, 8);
	assert_true(got == x);
	pair_free(p);
}

/*
 * Flush (global visibility): the writes before it are placed when it
 * completes (IBV_WC_FLUSH, its length); selectivity range or the whole
 * region (whose va and length are not looked at); a zero-length range;
 * more in flight than max_rd_atomic, completed in order
 */
static void test_flush(void **state)
{
	struct pair *p = pair_new(&flush_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	const uint32_t len = 3 * MTU + 5;
	struct rxdp_emr *fl;
	struct ibv_wc wc[32];
	uint32_t rkey;

	fl = rxdp_engine_reg_mr(b->e, b->buf, BUF / 2, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE |
					RXDP_ACCESS_FLUSH_GLOBAL);
	assert_non_null(fl);
	rkey = rxdp_emr_rkey(fl);
	fill(a->buf, len, 3);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, (uintptr_t)b->buf + 8192,
		   rkey, 0, 0);
	post_flush(a, 2, (uintptr_t)b->buf + 8192, rkey, len, RXDP_FLUSH_GLOBAL,
		   RXDP_FLUSH_RANGE);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].opcode, RXDP_WC_FLUSH);
	assert_int_equal(wc[0].byte_len, len);
	assert_memory_equal(b->buf + 8192, a->buf, len);

	post_flush(a, 3, 0, rkey, 0, RXDP_FLUSH_GLOBAL, RXDP_FLUSH_MR);
	post_flush(a, 4, (uintptr_t)b->buf + BUF / 2, rkey, 0,
		   RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE);
	wait_wc(p, a->scq, wc, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 3 + i);
		assert_int_equal(wc[i].byte_len, 0);
	}
	for (int i = 0; i < 32; i++)
		post_flush(a, 10 + i, (uintptr_t)b->buf + 4096 * i, rkey, 4096,
			   RXDP_FLUSH_GLOBAL, i & 1);
	wait_wc(p, a->scq, wc, 32);
	for (int i = 0; i < 32; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 10 + i);
		assert_int_equal(wc[i].opcode, RXDP_WC_FLUSH);
	}
	assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_RTS);
	assert_int_equal(rxdp_engine_dereg_mr(fl), 0);
	pair_free(p);
}

/*
 * What the responder refuses (a remote access error NAK, then both QPs in
 * ERR and the requester's next WR flushed): a Flush through a region or a
 * QP without the placement type's right, past the region, persistent (no
 * region may have that right), with another PD's key; an Atomic Write into
 * a region without remote write, or past its end
 */
static void test_flush_atomic_write_access(void **state)
{
	for (int c = 0; c < 7; c++) {
		struct pair *p = pair_new(c == 1 ? &default_opts : &flush_opts);
		struct host *a = &p->h[0], *b = &p->h[1];
		uint64_t va = (uintptr_t)b->buf, x = 42;
		struct rxdp_emr *mr = NULL;
		struct rxdp_epd *pd2 = NULL;
		unsigned int acc = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   RXDP_ACCESS_FLUSH_GLOBAL;
		struct ibv_wc wc[2];

		if (c == 0 || c == 5)
			acc = IBV_ACCESS_REMOTE_READ;
		if (c == 4) {
			pd2 = rxdp_engine_alloc_pd(b->e, NULL);
			assert_non_null(pd2);
			mr = rxdp_engine_reg_mr_pd(pd2, va, 4096, va, acc);
		} else {
			mr = rxdp_engine_reg_mr(b->e, b->buf, 4096, va, acc);
		}
		assert_non_null(mr);
		switch (c) {
		case 0: /* the region has no IBV_ACCESS_FLUSH_GLOBAL */
		case 1: /* the QP has none */
		case 4: /* a key of another PD */
			post_flush(a, 1, va, rxdp_emr_rkey(mr), 64,
				   RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE);
			break;
		case 2: /* past the region's end */
			post_flush(a, 1, va + 4000, rxdp_emr_rkey(mr), 97,
				   RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE);
			break;
		case 3: /* persistent: no region of rxdp may be flushed so */
			post_flush(a, 1, va, rxdp_emr_rkey(mr), 64,
				   RXDP_FLUSH_PERSISTENT, RXDP_FLUSH_MR);
			break;
		case 5: /* Atomic Write into a read-only region */
			post_atomic_write(a, 1, va, rxdp_emr_rkey(mr), &x,
					  IBV_SEND_SIGNALED);
			break;
		case 6: /* ... past its end */
			post_atomic_write(a, 1, va + 4096, rxdp_emr_rkey(mr),
					  &x, IBV_SEND_SIGNALED);
			break;
		}
		post_send1(a, IBV_WR_SEND, 2, 0, 1, 0, 0, 0, 0);
		wait_wc(p, a->scq, wc, 2);
		assert_int_equal(wc[0].wr_id, 1);
		assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
		assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_ERR);
		assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_ERR);
		assert_int_equal(b->buf[0], 0); /* nothing was written */
		assert_int_equal(rxdp_engine_dereg_mr(mr), 0);
		if (pd2)
			assert_int_equal(rxdp_engine_dealloc_pd(pd2), 0);
		pair_free(p);
	}
}

/* The syndrome of the last NAK that went to a */
static uint8_t nak_syndrome;

static int nak_watch(void *arg, uint8_t *frame, uint32_t len)
{
	uint8_t copy[4096];
	struct pkt_info pi;

	memcpy(copy, frame, len);
	if (!pkt_parse(copy, len, &pi) && pi.opcode == ROCE_RC_ACK &&
	    (aeth_syndrome(pi.aeth) & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
		nak_syndrome = aeth_syndrome(pi.aeth);
	return 1;
}

/*
 * What no rxdp requester sends but a peer may: an Atomic Write that is
 * not 8 bytes or not 8-byte aligned, a Flush with a reserved placement
 * type or selectivity level: an Invalid Request NAK (class C: b's QP to
 * ERR), nothing written
 */
static void test_flush_atomic_write_invalid(void **state)
{
	const struct rxdp_path a_path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
	};

	(void)state;
	for (int c = 0; c < 6; c++) {
		struct pair *p = pair_new(&flush_opts);
		struct host *b = &p->h[1];
		static uint8_t val[16], frame[4096];
		struct pkt_sg sg = { (uintptr_t)val, 8, 8 };
		struct pkt_desc d = { .opcode = ROCE_RC_ATOMIC_WRITE,
				      .pkey = 0xffff,
				      .dqpn = QPN_B,
				      .psn = 0xfffff0, /* a's first */
				      .va = (uintptr_t)b->buf + 64,
				      .rkey = rxdp_emr_rkey(b->mr),
				      .dma_len = 8,
				      .ackreq = 1,
				      .sg = &sg,
				      .nsg = 1,
				      .paylen = 8 };
		struct pkt_path pp;
		int n;

		memset(val, 0xee, sizeof(val));
		switch (c) {
		case 0: /* misaligned */
			d.va += 4;
			break;
		case 1: /* 16 bytes */
			d.dma_len = sg.len = sg.span = d.paylen = 16;
			break;
		case 2: /* the RETH says 8, 4 come */
			d.paylen = sg.len = 4;
			break;
		case 3: /* Flush: no placement type */
		case 4: /* a reserved one */
		case 5: /* a reserved selectivity level */
			d.opcode = ROCE_RC_FLUSH;
			d.paylen = 0;
			d.nsg = 0;
			d.flush_type = c == 3 ? 0 : c == 4 ? 4 : 1;
			d.flush_level = c == 5 ? 2 : 0;
			break;
		}
		nak_syndrome = 0;
		memwire_set_filter(p->w, 0, nak_watch, NULL);
		pkt_path_init(&pp, &a_path);
		n = pkt_build(frame, sizeof(frame), &pp, &d);
		assert_true(n > 0);
		memwire_inject(p->w, 1, frame, n);
		for (int i = 0; i < 4; i++)
			drive(p);
		assert_int_equal(nak_syndrome,
				 ROCE_AETH_NAK | ROCE_NAK_INVALID_REQ);
		assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_ERR);
		for (int i = 0; i < 128; i++)
			assert_int_equal(b->buf[i], 0);
		pair_free(p);
	}
}

/* Drops b's zero-length read responses (the answers to a's Flushes) */
static int placed_drop(void *arg, uint8_t *frame, uint32_t len)
{
	uint8_t copy[4096];
	struct pkt_info pi;

	memcpy(copy, frame, len);
	if (!pkt_parse(copy, len, &pi) &&
	    pi.opcode == ROCE_RC_READ_RESPONSE_ONLY && !pi.paylen)
		return 0;
	return xdp_like(arg, frame, len);
}

/*
 * A read response with payload at a Flush's PSN answers no Flush: the
 * Flush completes with IBV_WC_BAD_RESP_ERR (Soft-RoCE's completer takes
 * only a zero-length one too)
 */
static void test_flush_bad_response(void **state)
{
	const struct rxdp_path b_path = {
		.smac = { 2, 0, 0, 0, 0, 2 },
		.dmac = { 2, 0, 0, 0, 0, 1 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
	};
	struct pair *p = pair_new(&flush_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	static uint8_t pay[4], frame[4096];
	struct pkt_sg sg = { (uintptr_t)pay, 4, 4 };
	struct pkt_desc d = { .opcode = ROCE_RC_READ_RESPONSE_ONLY,
			      .pkey = 0xffff,
			      .dqpn = QPN_A,
			      .psn = 0xfffff0, /* a's first */
			      .syndrome = ROCE_AETH_ACK |
					  ROCE_AETH_CREDIT_INVALID,
			      .msn = 1,
			      .sg = &sg,
			      .nsg = 1,
			      .paylen = 4 };
	struct rxdp_emr *fl;
	struct pkt_path pp;
	struct ibv_wc wc;
	int n;

	(void)state;
	fl = rxdp_engine_reg_mr(b->e, b->buf, 4096, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					RXDP_ACCESS_FLUSH_GLOBAL);
	assert_non_null(fl);
	memwire_set_filter(p->w, 0, placed_drop, a->psn);
	post_flush(a, 1, (uintptr_t)b->buf, rxdp_emr_rkey(fl), 64,
		   RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE);
	for (int i = 0; i < 4; i++)
		drive(p);
	assert_int_equal(tp_poll_cq(a->scq, 1, &wc), 0);
	pkt_path_init(&pp, &b_path);
	n = pkt_build(frame, sizeof(frame), &pp, &d);
	assert_true(n > 0);
	memwire_inject(p->w, 0, frame, n);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, IBV_WC_BAD_RESP_ERR);
	assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_ERR);
	assert_int_equal(rxdp_engine_dereg_mr(fl), 0);
	pair_free(p);
}

/* Another RC QP of host h, on pd (NULL: the default one), with h's CQs */
static struct rxdp_eqp *qp_more(struct host *h, struct rxdp_epd *pd,
				uint32_t qpn)
{
	struct rxdp_eqp_init init = {
		.pd = pd,
		.qpn = qpn,
		.qp_type = IBV_QPT_RC,
		.send_cq = h->scq,
		.recv_cq = h->rcq,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 64,
			 .max_send_sge = 4,
			 .max_recv_sge = 4 },
	};
	struct rxdp_eqp *qp = rxdp_engine_create_qp(h->e, &init);

	assert_non_null(qp);
	return qp;
}

/*
 * A PD of h's whose memory its engine does not map: reached through
 * /proc/self/mem by the owner's memory thread (*m), as rxdpd reaches a
 * client's
 */
static struct rxdp_epd *pd_batched(struct host *h, struct rxdp_emem **m)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	struct rxdp_epd *pd;

	assert_true(fd >= 0);
	*m = rxdp_engine_mem_create(h->e, fd);
	assert_non_null(*m);
	pd = rxdp_engine_alloc_pd(h->e, *m);
	assert_non_null(pd);
	return pd;
}

/* A second RC pair, a's QP 0x33 to b's 0x44 on pd, connected */
static void pair_more(struct pair *p, struct rxdp_epd *pd, struct rxdp_eqp **qa,
		      struct rxdp_eqp **qb)
{
	*qb = qp_more(&p->h[1], pd, 0x44);
	*qa = qp_more(&p->h[0], NULL, 0x33);
	qp_connect(*qa, 0, 0x44, &flush_opts);
	qp_connect(*qb, 1, 0x33, &flush_opts);
}

/* ... gone, with b's MR on its PD (pd_batched's) and the pair */
static void pair_more_free(struct pair *p, struct rxdp_eqp *qa,
			   struct rxdp_eqp *qb, struct rxdp_emr *mr,
			   struct rxdp_epd *pd, struct rxdp_emem *m)
{
	assert_int_equal(rxdp_engine_destroy_qp(qa), 0);
	assert_int_equal(rxdp_engine_destroy_qp(qb), 0);
	assert_int_equal(rxdp_engine_dereg_mr(mr), 0);
	assert_int_equal(rxdp_engine_dealloc_pd(pd), 0);
	rxdp_engine_mem_destroy(m);
	pair_free(p);
}

/*
 * The batched path of an owner's memory (mem.c): b's QP on a PD whose
 * memory rxdpd does not map, reached through /proc/self/mem by the owner's
 * memory thread as rxdpd reaches a client's. The Atomic Write is queued
 * with the RDMA Write before it, and at the Flush's completion both are
 * placed. (That the answer waits for them is the rjob's mem_seq; the
 * memory thread is too quick for this test to catch an answer that did
 * not wait, and a userfaultfd cannot hold it: a write through /proc/PID/mem
 * to a missing page of a userfaultfd range fails at once, on Linux 6.18.)
 */
static void test_flush_batched(void **state)
{
	struct pair *p = pair_new(&flush_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	const uint32_t len = 256 * 1024 + 9, half = 512 * 1024;
	struct rxdp_eqp *qa, *qb;
	struct rxdp_emem *m;
	struct rxdp_epd *pd;
	struct rxdp_emr *mr;
	struct ibv_wc wc[2];
	uint8_t *far;
	uint64_t x = 0x0123456789abcdefULL, got;

	(void)state;
	pd = pd_batched(b, &m);
	far = aligned_alloc(4096, 2 * half);
	assert_non_null(far);
	memset(far, 0x33, 2 * half);
	mr = rxdp_engine_reg_mr_pd(pd, (uintptr_t)far, 2 * half, (uintptr_t)far,
				   IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE |
					   RXDP_ACCESS_FLUSH_GLOBAL);
	assert_non_null(mr);
	pair_more(p, pd, &qa, &qb);

	for (int round = 0; round < 8; round++) {
		struct ibv_sge s = sge(a, 0, len);
		struct ibv_send_wr wr = { .wr_id = 1,
					  .sg_list = &s,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE },
				   *bad;
		uint8_t *at = far + (round & 1) * half;
		/* after the written bytes, 8-byte aligned */
		uint8_t *aw = at + ((len + 7) & ~7U) + 8;

		fill(a->buf, len, 11 + round);
		x += round;
		wr.wr.rdma.remote_addr = (uintptr_t)at;
		wr.wr.rdma.rkey = rxdp_emr_rkey(mr);
		assert_int_equal(tp_post_send(qa, &wr, &bad), 0);
		assert_int_equal(tp_post_atomic_write(qa, 2, 0,
						      rxdp_emr_rkey(mr),
						      (uintptr_t)aw, &x),
				 0);
		assert_int_equal(tp_post_flush(qa, 3, IBV_SEND_SIGNALED,
					       rxdp_emr_rkey(mr), (uintptr_t)at,
					       len, RXDP_FLUSH_GLOBAL,
					       RXDP_FLUSH_RANGE),
				 0);
		wait_wc(p, a->scq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[0].wr_id, 3);
		memcpy(&got, aw, 8);
		assert_true(got == x);
		assert_memory_equal(at, a->buf, len);
	}
	{ /* all of it through the owner's memory thread */
		__u64 v[RXDP_HWC_MAX];

		rxdp_engine_hw_counters(b->e, NULL, v);
		assert_true(v[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] >=
			    8 * ((uint64_t)len + 8));
		assert_int_equal(v[RXDP_HWC_PAYLOAD_DIRECT_BYTES], 0);
	}
	pair_more_free(p, qa, qb, mr, pd, m);
	free(far);
}

/* An RC QP of b back to RTS after ERR, as an application does it */
static void qp_renew(struct rxdp_eqp *qp, int i, uint32_t dest)
{
	struct rxdp_qp_attr at = { .qp_state = IBV_QPS_RESET };

	assert_int_equal(rxdp_engine_qp_modify(qp, &at, IBV_QP_STATE, NULL, 0,
					       NULL, 0),
			 0);
	qp_connect(qp, i, dest, &flush_opts);
}

/*
 * The batched path stops at a failed write: two RDMA Writes posted
 * together, the first into a page the owner has unmapped, the second into
 * a mapped one. The engine queues both before the memory thread finds the
 * hole; the first fails (REM_ACCESS_ERR, the QP to ERR) and nothing after
 * it may land, as on a responder that stops at the error, so the second's
 * bytes are never written. After a reset the QP writes again.
 */
static void test_batched_stops_at_fault(void **state)
{
	struct pair *p = pair_new(&flush_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	const size_t pg = 4096;
	struct rxdp_eqp *qa, *qb;
	struct rxdp_emem *m;
	struct rxdp_epd *pd;
	struct rxdp_emr *mr;
	struct ibv_wc wc[2];
	uint8_t *far, want[64];

	(void)state;
	pd = pd_batched(b, &m);
	far = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(far != MAP_FAILED);
	memset(far, 0x33, 3 * pg);
	assert_int_equal(munmap(far + pg, pg), 0);
	mr = rxdp_engine_reg_mr_pd(pd, (uintptr_t)far, 3 * pg, (uintptr_t)far,
				   IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	pair_more(p, pd, &qa, &qb);
	fill(a->buf, 128, 5);

	for (int round = 0; round < 2; round++) {
		struct ibv_sge s[2] = { sge(a, 0, 64), sge(a, 64, 64) };
		struct ibv_send_wr wr[2], *bad;

		/* the hole, then the page after it: one post, one pass */
		for (int i = 0; i < 2; i++)
			wr[i] = (struct ibv_send_wr){
				.wr_id = 1 + (uint64_t)i,
				.next = i ? NULL : &wr[1],
				.sg_list = &s[i],
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr =
						     (uintptr_t)far +
						     (size_t)(1 + i) * pg,
					     .rkey = rxdp_emr_rkey(mr) },
			};
		/* renewed: the mapped page only */
		assert_int_equal(tp_post_send(qa, round ? &wr[1] : wr, &bad),
				 0);
		if (!round) {
			wait_wc(p, a->scq, wc, 2);
			assert_int_equal(wc[0].wr_id, 1);
			assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
			assert_int_equal(wc[1].wr_id, 2);
			assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
			memset(want, 0x33, sizeof(want));
			assert_memory_equal(far + 2 * pg, want, sizeof(want));
			assert_int_equal(rxdp_engine_qp_state(qb), IBV_QPS_ERR);
			qp_renew(qa, 0, 0x44);
			qp_renew(qb, 1, 0x33);
		} else {
			wait_wc(p, a->scq, wc, 1);
			assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
			assert_memory_equal(far + 2 * pg, a->buf + 64, 64);
		}
	}
	pair_more_free(p, qa, qb, mr, pd, m);
	munmap(far, pg);
	munmap(far + 2 * pg, pg);
}

/*
 * What the library and the engine refuse before anything goes out: a
 * Flush with no or an unknown placement type, an unknown selectivity
 * level, more than 2^31 bytes, on a UC QP; an Atomic Write to a misaligned
 * address; either as an ibv_send_wr (their arguments have no place there);
 * a region with IBV_ACCESS_FLUSH_PERSISTENT (no memory of rxdp is
 * persistent), registered or re-registered; a Flush WQE written into the
 * ring past the library's checks
 */
static void test_flush_atomic_write_post_errors(void **state)
{
	struct qp_opts uc = default_opts;
	struct pair *p = pair_new(&flush_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	uint32_t rkey = rxdp_emr_rkey(b->mr);
	uint64_t va = (uintptr_t)b->buf, x = 7;
	struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_WRITE }, *bad;
	struct rxdp_eqp_rings r;
	struct rxdp_hca_swqe *d;
	struct rxdp_emr *mr;
	struct ibv_wc wc;
	uint32_t prod;

	assert_int_equal(tp_post_flush(a->qp, 1, 0, rkey, va, 8, 0, 0), EINVAL);
	assert_int_equal(tp_post_flush(a->qp, 1, 0, rkey, va, 8, 4, 0), EINVAL);
	assert_int_equal(tp_post_flush(a->qp, 1, 0, rkey, va, 8,
				       RXDP_FLUSH_GLOBAL, 2),
			 EINVAL);
	assert_int_equal(tp_post_flush(a->qp, 1, 0, rkey, va, (1ULL << 31) + 1,
				       RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE),
			 EINVAL);
	assert_int_equal(tp_post_atomic_write(a->qp, 1, 0, rkey, va + 4, &x),
			 EINVAL);
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), EINVAL);
	wr.opcode = (enum ibv_wr_opcode)RXDP_WR_FLUSH;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), EINVAL);

	errno = 0;
	assert_null(rxdp_engine_reg_mr(b->e, b->buf, 4096, va,
				       IBV_ACCESS_LOCAL_WRITE |
					       RXDP_ACCESS_FLUSH_PERSISTENT));
	assert_int_equal(errno, EINVAL);
	mr = rxdp_engine_reg_mr(b->e, b->buf, 4096, va,
				IBV_ACCESS_LOCAL_WRITE |
					RXDP_ACCESS_FLUSH_GLOBAL);
	assert_non_null(mr);
	assert_int_equal(rxdp_engine_rereg_mr(mr, NULL, va, 4096, va,
					      IBV_ACCESS_LOCAL_WRITE |
						      RXDP_ACCESS_FLUSH),
			 -EINVAL);
	assert_int_equal(rxdp_engine_dereg_mr(mr), 0);

	/* past the library: the engine completes it in error in its turn */
	rxdp_engine_qp_rings(a->qp, &r);
	prod = atomic_load(&r.sq.wq->prod);
	d = rxdp_hca_slot(r.sq.slots, prod, r.sq.size, r.sq.stride);
	memset(d, 0, sizeof(*d));
	d->wr_id = 77;
	d->opcode = RXDP_WR_FLUSH;
	d->send_flags = IBV_SEND_SIGNALED;
	rxdp_hca_swqe_flush(d, rkey, va, 8, 0, 0);
	atomic_store(&r.sq.wq->prod, prod + 1);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.status, IBV_WC_LOC_QP_OP_ERR);
	assert_int_equal(wc.opcode, RXDP_WC_FLUSH);
	pair_free(p);

	/* UC has neither (IBTA 1.5: RC only) */
	uc.type = IBV_QPT_UC;
	p = pair_new(&uc);
	assert_int_equal(tp_post_flush(p->h[0].qp, 1, 0, rkey, va, 8,
				       RXDP_FLUSH_GLOBAL, RXDP_FLUSH_RANGE),
			 EINVAL);
	assert_int_equal(tp_post_atomic_write(p->h[0].qp, 1, 0, rkey, va, &x),
			 EINVAL);
	pair_free(p);
}

/*
 * Atomic Writes and Flushes on a lossy, duplicating, reordering wire, with
 * progress threads: every one completes, in order, and each of two slots
 * ends with the last value written to it (that a copy is not run again,
 * test_atomic_write_dup shows: here one rarely comes late enough to tell)
 */
static void test_lossy_atomic_write(void **state)
{
	struct qp_opts o = flush_opts;
	struct memwire_faults f = {
		.loss = 300, .dup = 500, .reorder = 300, .seed = 4242
	};
	struct pair *p;
	struct host *a, *b;
	struct rxdp_emr *fl;
	enum {
		N = 600,
		SLOTS = 2
	};
	static struct ibv_wc wc[N];
	uint64_t x;

	o.threads = 1;
	o.timeout = 12;
	o.sq = 1024;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	fl = rxdp_engine_reg_mr(b->e, b->buf, BUF, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE |
					RXDP_ACCESS_FLUSH_GLOBAL);
	assert_non_null(fl);
	memwire_set_faults(p->w, &f);
	for (int i = 0; i < N; i++) {
		x = 0xc0de000000000000ULL + i;
		if (i % 10 == 9)
			post_flush(a, i, (uintptr_t)b->buf, rxdp_emr_rkey(fl),
				   128, RXDP_FLUSH_GLOBAL, i & 1);
		else
			post_atomic_write(a, i,
					  (uintptr_t)b->buf + 8 * (i % SLOTS),
					  rxdp_emr_rkey(fl), &x,
					  IBV_SEND_SIGNALED);
	}
	wait_wc(p, a->scq, wc, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	/* slot 0 was written last by N - 2, slot 1 by N - 3 (N - 1 flushed) */
	for (int s = 0; s < SLOTS; s++) {
		memcpy(&x, b->buf + 8 * s, 8);
		assert_true(x == 0xc0de000000000000ULL + (N - 2 - s));
	}
	assert_true(hwc(b, RXDP_HWC_DUP_REQ) > 0);
	assert_int_equal(rxdp_engine_dereg_mr(fl), 0);
	pair_free(p);
}

/*
 * UC: Send and Write of every size; then on a lossy wire, messages that
 * lost a packet are dropped whole and the others arrive intact, while the
 * sender completes everything (no ACKs). Reads and atomics are refused.
 */
static void test_uc(void **state)
{
	struct qp_opts o = default_opts;
	struct memwire_faults f = { .loss = 300, .reorder = 0, .seed = 99 };
	struct pair *p;
	struct host *a, *b;
	struct ibv_sge s;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc[64];
	int got = 0, n;

	o.type = IBV_QPT_UC;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		fill(a->buf, len, 40 + i);
		post_recv1(b, i, 0, BUF / 2);
		post_send1(a, IBV_WR_SEND_WITH_IMM, i, 0, len, 0, 0, 7,
			   IBV_SEND_SIGNALED);
		wait_wc(p, a->scq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		wait_wc(p, b->rcq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[0].byte_len, len);
		assert_int_equal(ntohl(wc[0].imm_data), 7);
		assert_memory_equal(b->buf, a->buf, len);
		post_send1(a, IBV_WR_RDMA_WRITE, i, 0, len,
			   (uintptr_t)b->buf + BUF / 2, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		wait_wc(p, a->scq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		/* the target is passive: let it take the packets in */
		expect_no_wc(p, b->rcq);
		assert_memory_equal(b->buf + BUF / 2, a->buf, len);
	}
	s = sge(a, 0, 8);
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), EINVAL);

	/*
	 * 64 messages of 3 packets, each stamped with its number (not in the
	 * first bytes: tshark would take 08 00 there for an EtherType)
	 */
	memwire_set_faults(p->w, &f);
	for (int i = 0; i < 64; i++) {
		fill(a->buf + i * 4096, 3000, 1000 + i);
		memcpy(a->buf + i * 4096 + 100, &i, sizeof(i));
		post_recv1(b, i, (1u << 20) + i * 4096, 4096);
	}
	for (int i = 0; i < 64; i++)
		post_send1(a, IBV_WR_SEND, i, i * 4096, 3000, 0, 0, 0,
			   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
	for (int k = 0; k < 100; k++) {
		rxdp_engine_progress(b->e);
		n = tp_poll_cq(b->rcq, 64 - got, wc + got);
		assert_true(n >= 0);
		got += n;
	}
	print_message("UC: %d of 64 messages arrived\n", got);
	assert_true(got > 0 && got < 64);
	for (int i = 0; i < got; i++) {
		/* receive i holds whichever message came i-th */
		uint8_t *m = b->buf + (1u << 20) + wc[i].wr_id * 4096;
		int idx;

		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].byte_len, 3000);
		memcpy(&idx, m + 100, sizeof(idx));
		assert_true(idx >= 0 && idx < 64);
		assert_memory_equal(m, a->buf + idx * 4096, 3000);
	}
	pair_free(p);
}

/*
 * An SRQ: receives come from it (post_recv on the QP is refused), RNR while
 * it is empty, the limit event fires once when it drops below the limit,
 * and a QP on it that fails reports its last WQE.
 */
static void test_srq(void **state)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a, *b;
	struct ibv_recv_wr rw = { 0 }, *rbad;
	struct rxdp_engine_stats st;
	struct ibv_srq_attr sa;
	struct ibv_wc wc[40];

	o.srq = 1;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	assert_int_equal(tp_post_recv(b->qp, &rw, &rbad), EINVAL);
	/* nothing posted yet: the first Send draws RNR NAKs */
	fill(a->buf, 32 * 2048, 5);
	post_send1(a, IBV_WR_SEND, 0, 0, 2000, 0, 0, 0, IBV_SEND_SIGNALED);
	do {
		drive(p);
		rxdp_engine_get_stats(b->e, &st);
	} while (st.rnr_naks_sent < 1);
	for (int i = 0; i < 40; i++) {
		struct ibv_sge s[2] = { sge(b, i * 4096, 1000),
					sge(b, i * 4096 + 1000, 3096) };
		struct ibv_recv_wr r = { .wr_id = 500 + i,
					 .sg_list = s,
					 .num_sge = 2 };

		assert_int_equal(tp_post_srq_recv(b->srq, &r, &rbad), 0);
	}
	for (int i = 1; i < 32; i++)
		post_send1(a, IBV_WR_SEND, i, i * 2048, 2000, 0, 0, 0,
			   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 32);
	wait_wc(p, b->rcq, wc, 32);
	for (int i = 0; i < 32; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 500 + i);
		assert_int_equal(wc[i].qp_num, QPN_B);
		assert_int_equal(wc[i].byte_len, 2000);
		assert_memory_equal(b->buf + i * 4096, a->buf + i * 2048, 2000);
	}
	/* 40 posted, 32 used: 8 left, not below the limit of 8 yet */
	assert_int_equal(events[1][IBV_EVENT_SRQ_LIMIT_REACHED], 0);
	post_send1(a, IBV_WR_SEND, 99, 0, 10, 0, 0, 0, IBV_SEND_SIGNALED);
	wait_wc(p, b->rcq, wc, 1);
	assert_int_equal(events[1][IBV_EVENT_SRQ_LIMIT_REACHED], 1);
	assert_int_equal(rxdp_engine_query_srq(b->srq, &sa), 0);
	assert_int_equal(sa.srq_limit, 0); /* disarmed */
	/* b's QP fails (a bad rkey): QP_FATAL and LAST_WQE_REACHED */
	post_send1(a, IBV_WR_RDMA_WRITE, 100, 0, 10, (uintptr_t)b->buf, 0x42, 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 2);
	assert_int_equal(wc[1].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(events[1][IBV_EVENT_QP_FATAL], 1);
	assert_int_equal(events[1][IBV_EVENT_QP_LAST_WQE_REACHED], 1);
	pair_free(p);
}

/*
 * Multicast (IBTA 10.5.2.4): a UD Send to QPN 0xFFFFFF and a group's GID
 * reaches every QP attached to that group on the receiving device, each
 * its own completion with the GRH, within its own Q_Key; a QP not attached
 * and a QP with another Q_Key get nothing; the sender's device delivers
 * to its own members too (loopback, as Soft-RoCE does). Attach refuses
 * what is not UD or not a multicast GID, detach what is not attached; the
 * caps hold; destroying a QP detaches it.
 */
static void test_ud_multicast(void **state)
{
	static const uint8_t grp[16] = { [10] = 0xff, 0xff, 239, 1, 2, 3 };
	static const uint8_t grp6[16] = { 0xff, 0x0e, [15] = 0x42 };
	static const uint8_t ucast[16] = { [10] = 0xff, 0xff, 10, 0, 0, 2 };
	struct qp_opts o = default_opts;
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 1, 0, 0x5e, 1, 2, 3 },
		/* as rxdpd's path_resolve() has IPv4: the last 4 bytes */
		.sip = { [12] = 10, 0, 0, 1 },
		.dip = { [12] = 239, 1, 2, 3 },
		.hop_limit = 1,
		.udp_sport = 0xc321
	};
	const uint32_t qkey = 0x01234567, len = 200;
	struct rxdp_qp_attr qa = { .qkey = qkey };
	struct rxdp_eqp *extra[3], *rcqp;
	struct rxdp_engine_stats st;
	struct tp_ah ah = { 0 };
	struct pair *p;
	struct host *a, *b;
	struct ibv_sge s;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc[8];
	char why[256];
	int got[3] = { 0 };

	o.type = IBV_QPT_UD;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	for (int i = 0; i < 2; i++)
		assert_int_equal(rxdp_engine_qp_modify(p->h[i].qp, &qa,
						       IBV_QP_QKEY, NULL, 0,
						       NULL, 0),
				 0);
	/* on b: two more UD QPs (one with another Q_Key) on b's CQs */
	for (int i = 0; i < 3; i++) {
		struct rxdp_eqp_init init = {
			.qpn = 0x400 + i,
			.qp_type = i < 2 ? IBV_QPT_UD : IBV_QPT_RC,
			.send_cq = b->scq,
			.recv_cq = b->rcq,
			.cap = { .max_send_wr = 16,
				 .max_recv_wr = 16,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct rxdp_qp_attr xa = { .qkey = i == 1 ? 0x77 : qkey };

		extra[i] = rxdp_engine_create_qp(b->e, &init);
		assert_non_null(extra[i]);
		if (i < 2)
			assert_int_equal(tp_qp_connect(extra[i], IBV_QPT_UD,
						       &xa, NULL),
					 0);
	}
	rcqp = extra[2];

	/* what attach and detach refuse */
	assert_int_equal(rxdp_engine_mcast_attach(rcqp, grp, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(rxdp_engine_mcast_attach(b->qp, ucast, why,
						  sizeof(why)),
			 -EINVAL);
	assert_int_equal(rxdp_engine_mcast_detach(b->qp, grp, why, sizeof(why)),
			 -EINVAL);
	/* b's QP first (the group is new: 1), again (nothing), the others */
	assert_int_equal(rxdp_engine_mcast_attach(b->qp, grp, why, sizeof(why)),
			 1);
	assert_int_equal(rxdp_engine_mcast_attach(b->qp, grp, why, sizeof(why)),
			 -EALREADY);
	assert_int_equal(
		rxdp_engine_mcast_attach(extra[1], grp, why, sizeof(why)), 0);
	assert_int_equal(
		rxdp_engine_mcast_attach(b->qp, grp6, why, sizeof(why)), 1);
	/* a's own QP is a member too: it gets its own datagram back */
	assert_int_equal(rxdp_engine_mcast_attach(a->qp, grp, why, sizeof(why)),
			 1);

	tp_ah_init(&ah, rxdp_engine_create_ah(a->e, NULL, &path));
	assert_non_null(ah.eah);
	post_recv1(b, 1, 0, 4096);
	post_recv1(a, 2, 8192, 4096);
	s = sge(b, 16384, 4096);
	s.lkey = rxdp_emr_lkey(b->mr);
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 3;
	rwr.sg_list = &s;
	rwr.num_sge = 1;
	assert_int_equal(tp_post_recv(extra[0], &rwr, &rbad), 0);
	rwr.wr_id = 4;
	assert_int_equal(tp_post_recv(extra[1], &rwr, &rbad), 0);

	fill(a->buf, len, 77);
	s = sge(a, 0, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = &ah.ibv;
	wr.wr.ud.remote_qpn = RXDP_MCAST_QPN;
	wr.wr.ud.remote_qkey = qkey;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);

	/* b: its own QP only (extra[0] is not attached, extra[1] has another
	 * Q_Key) */
	wait_wc(p, b->rcq, wc, 1);
	expect_no_wc(p, b->rcq);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].qp_num, QPN_B);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].src_qp, QPN_A);
	assert_int_equal(wc[0].byte_len, ROCE_GRH_LEN + len);
	assert_true(wc[0].wc_flags & IBV_WC_GRH);
	assert_memory_equal(b->buf + 20 + 16, path.dip + 12, 4);
	assert_memory_equal(b->buf + ROCE_GRH_LEN, a->buf, len);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rx_mcast, 1);
	assert_int_equal(st.rx_drop_ud, 1); /* extra[1]'s Q_Key */
	/* a: loopback to its own member */
	wait_wc(p, a->rcq, wc, 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].byte_len, ROCE_GRH_LEN + len);
	assert_memory_equal(a->buf + 8192 + ROCE_GRH_LEN, a->buf, len);

	/* extra[0] joins, extra[1] takes a's Q_Key: all three get the next */
	assert_int_equal(
		rxdp_engine_mcast_attach(extra[0], grp, why, sizeof(why)), 0);
	assert_int_equal(rxdp_engine_qp_modify(extra[1], &qa, IBV_QP_QKEY, NULL,
					       0, NULL, 0),
			 0);
	post_recv1(b, 5, 0, 4096);
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
	wait_wc(p, a->scq, wc, 1);
	for (int n = 0; n < 3;) {
		drive(p);
		for (int k = tp_poll_cq(b->rcq, 8, wc); k > 0; k--) {
			struct ibv_wc *c = &wc[k - 1];

			assert_int_equal(c->status, IBV_WC_SUCCESS);
			assert_int_equal(c->byte_len, ROCE_GRH_LEN + len);
			got[c->qp_num == QPN_B	 ? 0
			    : c->qp_num == 0x400 ? 1
						 : 2]++;
			n++;
		}
	}
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 1);
	expect_no_wc(p, b->rcq);

	/* a QP destroyed leaves its groups; the last member's detach empties
	 * the group and a datagram to it lands nowhere */
	assert_int_equal(rxdp_engine_destroy_qp(extra[0]), 0);
	assert_int_equal(
		rxdp_engine_mcast_detach(extra[1], grp, why, sizeof(why)), 0);
	assert_int_equal(rxdp_engine_mcast_detach(extra[1], grp, why,
						  sizeof(why)),
			 -EINVAL);
	assert_int_equal(rxdp_engine_mcast_detach(b->qp, grp, why, sizeof(why)),
			 0);
	post_recv1(b, 6, 0, 4096);
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
	wait_wc(p, a->scq, wc, 1);
	expect_no_wc(p, b->rcq);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rx_mcast, 2);

	/* caps: QPs per group */
	{
		struct rxdp_eqp *many[RXDP_MAX_MCAST_QP_ATTACH + 1];
		int n = 0;

		for (; n < RXDP_MAX_MCAST_QP_ATTACH + 1; n++) {
			struct rxdp_eqp_init init = {
				.qpn = 0x500 + n,
				.qp_type = IBV_QPT_UD,
				.send_cq = b->scq,
				.recv_cq = b->rcq,
				.cap = { .max_send_wr = 1, .max_recv_wr = 1 },
			};

			many[n] = rxdp_engine_create_qp(b->e, &init);
			assert_non_null(many[n]);
			assert_int_equal(rxdp_engine_mcast_attach(many[n], grp,
								  why,
								  sizeof(why)),
					 n == RXDP_MAX_MCAST_QP_ATTACH ? -ENOMEM
					 : n == 0		       ? 1
								       : 0);
		}
		/* groups per QP */
		for (int g = 0; g < RXDP_MAX_MCAST_PER_QP; g++) {
			uint8_t gid[16] = { 0xff,
					    0x0e, [14] = 1, [15] = (uint8_t)g };

			assert_int_equal(
				rxdp_engine_mcast_attach(many[0], gid, why,
							 sizeof(why)),
				g == RXDP_MAX_MCAST_PER_QP - 1 ? -ENOMEM : 1);
		}
		while (n--)
			assert_int_equal(rxdp_engine_destroy_qp(many[n]), 0);
	}
	tp_ah_fini(&ah);
	assert_int_equal(rxdp_engine_destroy_ah(ah.eah), 0);
	assert_int_equal(rxdp_engine_destroy_qp(extra[1]), 0);
	assert_int_equal(rxdp_engine_destroy_qp(rcqp), 0);
	pair_free(p);
}

/*
 * UD: Send (with immediate) up to the MTU with the GRH area filled in and
 * the source QP reported; a wrong Q_Key is dropped; a message over the MTU
 * fails locally. RDMA opcodes are refused.
 */
static void test_ud(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
		.hop_limit = 9,
		.udp_sport = 0xc123
	};
	const uint32_t lens[] = { 0, 1, 100, MTU };
	struct rxdp_qp_attr qa = { .qkey = 0x11223344 };
	struct rxdp_engine_stats st;
	struct tp_ah ah = { 0 };
	struct pair *p;
	struct host *a, *b;
	struct ibv_sge s;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	o.type = IBV_QPT_UD;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	for (int i = 0; i < 2; i++)
		assert_int_equal(rxdp_engine_qp_modify(p->h[i].qp, &qa,
						       IBV_QP_QKEY, NULL, 0,
						       NULL, 0),
				 0);
	tp_ah_init(&ah, rxdp_engine_create_ah(a->e, NULL, &path));
	assert_non_null(ah.eah);
	assert_true(ah.handle);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]) + 2; i++) {
		bool wrong_qkey = i == sizeof(lens) / sizeof(lens[0]);
		bool too_long = i == sizeof(lens) / sizeof(lens[0]) + 1;
		uint32_t len = too_long ? MTU + 1 : wrong_qkey ? 10 : lens[i];

		fill(a->buf, len, 300 + i);
		memset(b->buf, 0, 4096);
		post_recv1(b, 70 + i, 0, 4096);
		s = sge(a, 0, len);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0xfeed0000 + i);
		wr.wr.ud.ah = &ah.ibv;
		wr.wr.ud.remote_qpn = QPN_B;
		/* high bit set: the QP's own Q_Key */
		wr.wr.ud.remote_qkey = wrong_qkey ? 0x55 : 0x80000000;
		assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
		wait_wc(p, a->scq, &wc, 1);
		if (too_long) {
			assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
			break;
		}
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		if (wrong_qkey) {
			expect_no_wc(p, b->rcq);
			rxdp_engine_get_stats(b->e, &st);
			assert_int_equal(st.rx_drop_ud, 1);
			/* the receive is still there for the next one */
			continue;
		}
		wait_wc(p, b->rcq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 70 + i);
		assert_int_equal(wc.byte_len, ROCE_GRH_LEN + len);
		assert_int_equal(wc.src_qp, QPN_A);
		assert_true(wc.wc_flags & IBV_WC_GRH);
		assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
		assert_int_equal(ntohl(wc.imm_data), 0xfeed0000 + i);
		/* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 */
		assert_int_equal(b->buf[20], 0x45);
		assert_int_equal(b->buf[20 + 8], 9); /* TTL = hop_limit */
		assert_memory_equal(b->buf + 20 + 12, path.sip + 12, 4);
		assert_memory_equal(b->buf + ROCE_GRH_LEN, a->buf, len);
	}
	s = sge(a, 0, 8);
	wr.opcode = IBV_WR_RDMA_WRITE;
	assert_int_equal(tp_post_send(a->qp, &wr, &bad), EINVAL);
	tp_ah_fini(&ah);
	assert_int_equal(rxdp_engine_destroy_ah(ah.eah), 0);
	pair_free(p);
}

/*
 * A UD message is one packet of up to the port's active MTU (IBTA 9.8.4;
 * rxe takes its port's MTU, ConnectX the same), not of the 1024 a QP's
 * path MTU starts at: UD has no path MTU attribute. Here the port says
 * 4096 and the engine's frames hold 2048: 2048 bytes go, 2049 fail
 * locally; a port of 1024 gives 1024.
 */
static void test_ud_port_mtu(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
		.hop_limit = 64,
	};
	struct rxdp_qp_attr qa = { .qkey = 0x11223344 };
	const struct {
		uint32_t port_mtu, len;
		enum ibv_wc_status status;
	} cases[] = {
		{ IBV_MTU_4096, 2048, IBV_WC_SUCCESS },
		{ IBV_MTU_4096, 1500, IBV_WC_SUCCESS },
		{ IBV_MTU_4096, 2049, IBV_WC_LOC_LEN_ERR },
		{ IBV_MTU_1024, 1024, IBV_WC_SUCCESS },
		{ IBV_MTU_1024, 1025, IBV_WC_LOC_LEN_ERR },
	};
	struct tp_ah ah = { 0 };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge s;
	struct ibv_wc wc;

	o.type = IBV_QPT_UD;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pair *p = pair_new(&o);
		struct host *a = &p->h[0], *b = &p->h[1];
		uint32_t len = cases[c].len;

		/* as rxdpd modifies every QP: with its port's active MTU */
		for (int i = 0; i < 2; i++)
			assert_int_equal(rxdp_engine_qp_modify(
						 p->h[i].qp, &qa, IBV_QP_QKEY,
						 NULL, cases[c].port_mtu, NULL,
						 0),
					 0);
		tp_ah_init(&ah, rxdp_engine_create_ah(a->e, NULL, &path));
		fill(a->buf, len, 7 + (uint32_t)c);
		memset(b->buf, 0, 8192);
		post_recv1(b, 1, 0, 8192);
		s = sge(a, 0, len);
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = &ah.ibv;
		wr.wr.ud.remote_qpn = QPN_B;
		wr.wr.ud.remote_qkey = 0x80000000;
		assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
		wait_wc(p, a->scq, &wc, 1);
		assert_int_equal(wc.status, cases[c].status);
		if (cases[c].status == IBV_WC_SUCCESS) {
			wait_wc(p, b->rcq, &wc, 1);
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.byte_len, ROCE_GRH_LEN + len);
			assert_memory_equal(b->buf + ROCE_GRH_LEN, a->buf, len);
		}
		tp_ah_fini(&ah);
		assert_int_equal(rxdp_engine_destroy_ah(ah.eah), 0);
		pair_free(p);
	}
}

/* The same transport over IPv6 in VLAN-tagged frames, with some loss */
static void test_ipv6_vlan(void **state)
{
	struct qp_opts o = default_opts;
	struct memwire_faults f = { .loss = 100, .seed = 4242 };
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc[3];
	const uint32_t len = 300000;

	o.ipv6_vlan = 1;
	o.threads = 1;
	o.timeout = 12;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	memwire_set_faults(p->w, &f);
	fill(a->buf, len, 1);
	fill(b->buf + BUF / 2, len, 2);
	post_recv1(b, 1, 0, len);
	post_send1(a, IBV_WR_SEND_WITH_IMM, 1, 0, len, 0, 0, 5,
		   IBV_SEND_SIGNALED);
	post_send1(a, IBV_WR_RDMA_WRITE, 2, 0, len, (uintptr_t)b->buf + BUF / 4,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	post_send1(a, IBV_WR_RDMA_READ, 3, BUF / 2, len,
		   (uintptr_t)b->buf + BUF / 2, rxdp_emr_rkey(b->mr), 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, wc, 1);
	assert_int_equal(wc[0].byte_len, len);
	assert_memory_equal(b->buf, a->buf, len);
	assert_memory_equal(b->buf + BUF / 4, a->buf, len);
	assert_memory_equal(a->buf + BUF / 2, b->buf + BUF / 2, len);
	pair_free(p);
}

#define MQ 8 /* extra QPs per host */
#define MQ_MSGS 32
#define MQ_LEN 8192

struct mq_worker {
	struct pair *p;
	struct rxdp_eqp *qps[2];
	int idx[2];
};

static void *mq_post(void *arg)
{
	struct mq_worker *w = arg;
	struct host *a = &w->p->h[0], *b = &w->p->h[1];

	for (int m = 0; m < MQ_MSGS; m++) {
		for (int k = 0; k < 2; k++) {
			uint32_t q = w->idx[k];
			uint32_t off = (q * MQ_MSGS + m) * MQ_LEN;
			struct ibv_sge s = sge(a, off, MQ_LEN);
			struct ibv_send_wr wr[2] = {
				{ .wr_id = q << 16 | m,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .next = &wr[1] },
				{ .wr_id = q << 16 | m | 0x8000,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			};
			struct ibv_send_wr *bad;
			int err;

			wr[0].wr.rdma.remote_addr = (uintptr_t)b->buf + off;
			wr[0].wr.rdma.rkey = rxdp_emr_rkey(b->mr);
			while ((err = tp_post_send(w->qps[k], wr, &bad)) ==
				       ENOMEM &&
			       bad == wr)
				sched_yield();
			if (err == ENOMEM) { /* the write went, the send not */
				while (tp_post_send(w->qps[k], &wr[1], &bad) ==
				       ENOMEM)
					sched_yield();
			} else if (err) {
				return (void *)1;
			}
		}
	}
	return NULL;
}

/*
 * Many QPs on one pair of engines sharing CQs, posted to by four threads at
 * once while the progress threads run: every completion arrives once, with
 * its QP's number, and every byte lands where it should.
 */
static void test_many_qps_threads(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_eqp *qa[MQ], *qb[MQ];
	struct mq_worker w[MQ / 2];
	pthread_t th[MQ / 2];
	struct pair *p;
	struct host *a, *b;
	static int seen[MQ][MQ_MSGS][2], recvd[MQ];
	struct ibv_wc wc[64];
	int total = 0, rtotal = 0;

	o.threads = 1;
	o.sq = 16; /* small queues: the posters meet ENOMEM and retry */
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	memset(seen, 0, sizeof(seen));
	memset(recvd, 0, sizeof(recvd));
	fill(a->buf, MQ * MQ_MSGS * MQ_LEN, 3);
	for (int q = 0; q < MQ; q++) {
		for (int side = 0; side < 2; side++) {
			struct host *h = &p->h[side];
			struct rxdp_eqp_init init = {
				.qpn = 0x100 + 2 * q + side,
				.qp_type = IBV_QPT_RC,
				.send_cq = h->scq,
				.recv_cq = h->rcq,
				.cap = { .max_send_wr = 16,
					 .max_recv_wr = MQ_MSGS,
					 .max_send_sge = 1,
					 .max_recv_sge = 1 },
			};
			struct rxdp_eqp *qp =
				rxdp_engine_create_qp(h->e, &init);

			assert_non_null(qp);
			*(side ? &qb[q] : &qa[q]) = qp;
		}
		qp_connect(qa[q], 0, 0x100 + 2 * q + 1, &o);
		qp_connect(qb[q], 1, 0x100 + 2 * q, &o);
		for (int m = 0; m < MQ_MSGS; m++) {
			struct ibv_sge s =
				sge(b, BUF / 2 + (q * MQ_MSGS + m) * MQ_LEN,
				    MQ_LEN);
			struct ibv_recv_wr r = { .wr_id = q << 16 | m,
						 .sg_list = &s,
						 .num_sge = 1 };
			struct ibv_recv_wr *rbad;

			assert_int_equal(tp_post_recv(qb[q], &r, &rbad), 0);
		}
	}
	for (int t = 0; t < MQ / 2; t++) {
		w[t] = (struct mq_worker){ .p = p,
					   .qps = { qa[2 * t], qa[2 * t + 1] },
					   .idx = { 2 * t, 2 * t + 1 } };
		assert_int_equal(pthread_create(&th[t], NULL, mq_post, &w[t]),
				 0);
	}
	while (total < MQ * MQ_MSGS * 2 || rtotal < MQ * MQ_MSGS) {
		int n = tp_poll_cq(a->scq, 64, wc);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			int q = wc[i].wr_id >> 16 & 0xff,
			    m = wc[i].wr_id & 0xff;
			int send = !!(wc[i].wr_id & 0x8000);

			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].qp_num, 0x100 + 2 * q);
			assert_int_equal(seen[q][m][send]++, 0);
			total++;
		}
		n = tp_poll_cq(b->rcq, 64, wc);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			int q = wc[i].wr_id >> 16;

			assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
			assert_int_equal(wc[i].qp_num, 0x100 + 2 * q + 1);
			assert_int_equal(wc[i].wr_id & 0xffff, recvd[q]++);
			rtotal++;
		}
		if (!n)
			sched_yield();
	}
	for (int t = 0; t < MQ / 2; t++) {
		void *r;

		pthread_join(th[t], &r);
		assert_null(r);
	}
	assert_memory_equal(b->buf, a->buf, MQ * MQ_MSGS * MQ_LEN);
	assert_memory_equal(b->buf + BUF / 2, a->buf, MQ * MQ_MSGS * MQ_LEN);
	for (int q = 0; q < MQ; q++) {
		assert_int_equal(rxdp_engine_destroy_qp(qa[q]), 0);
		assert_int_equal(rxdp_engine_destroy_qp(qb[q]), 0);
	}
	pair_free(p);
}

/*
 * What the XDP program does with RC packets (see the qp_psn map in
 * include/rxdp/maps.h), applied as they arrive at a host, against the
 * qp_psn entries of that host: requests before the expected PSN pass; the
 * expected one passes and advances it (by the response packets a Read asks
 * for) and clears NAK_SENT; the first one ahead passes and sets NAK_SENT,
 * later ones are dropped while it is set, unless the engine holds what
 * comes past a gap (HOLD: all within RXDP_HOLD_WINDOW pass); responses pass only inside
 * [una_psn, next_psn), which the engine keeps current.
 */

/* response packets of a Read of len bytes at the tests' path MTU */
static uint32_t xdp_read_npkts(uint32_t len)
{
	uint32_t mtu = 1024;

	return len ? (len + mtu - 1) / mtu : 1;
}

static int xdp_like(void *arg, uint8_t *frame, uint32_t len)
{
	struct rxdp_qp_psn *tab = arg, *q;
	uint8_t copy[4096];
	struct pkt_info pi;
	uint32_t psn;

	memcpy(copy, frame, len);
	/* the engine's to count; CNPs pass without a PSN check, as there */
	if (pkt_parse(copy, len, &pi) || !(pi.flags & ROCE_OPF_SVC_RC) ||
	    (pi.flags & ROCE_OPF_CNP))
		return 1;
	q = &tab[bth_qpn(pi.bth) & RXDP_QP_INDEX_MASK];
	psn = bth_psn(pi.bth);
	if (pi.flags & ROCE_OPF_REQUEST) {
		uint32_t epsn = __atomic_load_n(&q->epsn, __ATOMIC_ACQUIRE);
		int32_t d = psn_diff(psn, epsn);

		if (d < 0)
			return 1;
		if (d == 0) {
			uint32_t n = 1;

			if (pi.opcode == ROCE_RC_READ_REQUEST)
				n = xdp_read_npkts(reth_len(pi.reth));
			__atomic_compare_exchange_n(&q->epsn, &epsn,
						    psn_add(psn, n), false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
			__atomic_fetch_and(&q->flags, ~RXDP_PSNF_NAK_SENT,
					   __ATOMIC_ACQ_REL);
			return 1;
		}
		if ((__atomic_load_n(&q->flags, __ATOMIC_ACQUIRE) &
		     RXDP_PSNF_HOLD) &&
		    d < RXDP_HOLD_WINDOW)
			return 1;
		if (__atomic_fetch_or(&q->flags, RXDP_PSNF_NAK_SENT,
				      __ATOMIC_ACQ_REL) &
		    RXDP_PSNF_NAK_SENT) {
			__atomic_fetch_add(&xdp_drops, 1, __ATOMIC_RELAXED);
			return 0;
		}
		return 1;
	}
	if (psn_in_window(psn, __atomic_load_n(&q->una_psn, __ATOMIC_ACQUIRE),
			  __atomic_load_n(&q->next_psn, __ATOMIC_ACQUIRE)))
		return 1;
	__atomic_fetch_add(&xdp_drops, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&xdp_resp_drops, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The lossy mixed stream again, with the XDP program's PSN filtering in
 * front of both engines: the engines keep the map current enough that
 * nothing needed is ever filtered out.
 */
static void test_lossy_xdp_filter(void **state)
{
	struct qp_opts o = default_opts;
	struct memwire_faults f = {
		.loss = 150, .dup = 100, .reorder = 200, .seed = 31337
	};
	struct pair *p;
	struct host *a, *b;
	const uint32_t chunk = 200 * 1024 + 5, n = 6;
	struct ibv_wc wc[3 * 6 + 8];
	uint64_t *target;

	o.threads = 1;
	o.timeout = 12;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	xdp_drops = 0;
	memwire_set_filter(p->w, 0, xdp_like, a->psn);
	memwire_set_filter(p->w, 1, xdp_like, b->psn);
	memwire_set_faults(p->w, &f);
	fill(a->buf, BUF, 11);
	fill(b->buf, BUF, 12);
	target = (uint64_t *)(b->buf + BUF - 64);
	*target = 0;
	for (uint32_t i = 0; i < n; i++)
		post_recv1(b, 1000 + i, BUF / 2 + i * chunk, chunk);
	for (uint32_t i = 0; i < n; i++) {
		post_send1(a, IBV_WR_RDMA_WRITE, 3 * i, i * chunk, chunk,
			   (uintptr_t)b->buf + BUF / 4 + i * chunk,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
		post_send1(a, IBV_WR_SEND, 3 * i + 1, i * chunk, chunk, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		post_send1(a, IBV_WR_RDMA_READ, 3 * i + 2, BUF / 2 + i * chunk,
			   chunk, (uintptr_t)b->buf + i * chunk,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	}
	for (int i = 0; i < 8; i++)
		post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 100 + i,
			    BUF - 4096 + 8 * i, (uintptr_t)target,
			    rxdp_emr_rkey(b->mr), 1, 0);
	wait_wc(p, a->scq, wc, 3 * n + 8);
	for (uint32_t i = 0; i < 3 * n + 8; i++)
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, wc, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(wc[i].byte_len, chunk);
	assert_memory_equal(b->buf + BUF / 4, a->buf, n * chunk);
	assert_memory_equal(b->buf + BUF / 2, a->buf, n * chunk);
	assert_memory_equal(a->buf + BUF / 2, b->buf, n * chunk);
	assert_int_equal(*target, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(((uint64_t *)(a->buf + BUF - 4096))[i], i);
	{
		struct rxdp_engine_stats sa, sb;
		struct memwire_stats ms;

		memwire_get_stats(p->w, &ms);
		rxdp_engine_get_stats(a->e, &sa);
		rxdp_engine_get_stats(b->e, &sb);
		print_message("XDP-like filter dropped %llu of %llu frames; "
			      "a: retx %llu timeouts %llu; b: seq NAKs %llu "
			      "psn drops %llu dup %llu\n",
			      (unsigned long long)xdp_drops,
			      (unsigned long long)ms.frames,
			      (unsigned long long)sa.retransmits,
			      (unsigned long long)sa.timeouts,
			      (unsigned long long)sb.seq_naks_sent,
			      (unsigned long long)sb.rx_drop_psn,
			      (unsigned long long)sb.rx_duplicates);
	}
	/* (how much it drops depends on timing: not asserted) */
	pair_free(p);
}

/* --- loss recovery, on the test clock (no progress threads) ------------- */

/*
 * Targeted faults on the way to one side, in front of xdp_like(): the
 * frames of one kind whose PSN is in [lo, hi] are dropped the first
 * `times` times each passes; the first sequence NAK is kept, to be
 * injected again.
 */
enum fault_kind {
	FAULT_REQ,
	FAULT_ACK,
	FAULT_NAK
};

struct fault {
	struct rxdp_qp_psn *tab; /* the receiving host's, for xdp_like() */
	int no_xdp; /* the engine sees every frame (no XDP-like filter) */
	enum fault_kind kind;
	uint32_t lo, hi;
	int times;
	int seen[64]; /* passes of PSN lo + i so far */
	uint64_t dropped;
	uint8_t nak[4096]; /* the first sequence NAK, as it arrived */
	uint32_t nak_len;
	uint8_t read[4096]; /* the first read request, as it arrived */
	uint32_t read_len;
};

static int fault_filter(void *arg, uint8_t *frame, uint32_t len)
{
	struct fault *f = arg;
	uint8_t copy[4096];
	struct pkt_info pi;
	enum fault_kind kind;
	uint32_t psn, i;

	memcpy(copy, frame, len);
	if (pkt_parse(copy, len, &pi))
		return 1;
	psn = bth_psn(pi.bth);
	if (pi.flags & ROCE_OPF_REQUEST)
		kind = FAULT_REQ;
	else if (pi.opcode == ROCE_RC_ACK &&
		 (aeth_syndrome(pi.aeth) & ROCE_AETH_TYPE_MASK) ==
			 ROCE_AETH_NAK)
		kind = FAULT_NAK;
	else
		kind = FAULT_ACK;
	if (kind == FAULT_NAK &&
	    (aeth_syndrome(pi.aeth) & 0x1f) == ROCE_NAK_PSN_SEQ_ERR &&
	    !f->nak_len) {
		memcpy(f->nak, frame, len);
		f->nak_len = len;
	}
	if (pi.opcode == ROCE_RC_READ_REQUEST && !f->read_len) {
		memcpy(f->read, frame, len);
		f->read_len = len;
	}
	i = psn - f->lo;
	if (kind == f->kind && psn_in_window(psn, f->lo, psn_add(f->hi, 1)) &&
	    i < 64 && f->seen[i]++ < f->times) {
		f->dropped++;
		return 0;
	}
	return f->no_xdp ? 1 : xdp_like(f->tab, frame, len);
}

/* a's first PSN (qp_connect): the PSNs of a's requests count from here */
#define A_PSN0 0xfffff0u

static void fault_set(struct pair *p, int to, struct fault *f,
		      enum fault_kind kind, uint32_t lo, uint32_t hi, int times)
{
	memset(f, 0, sizeof(*f));
	f->tab = p->h[to].psn;
	f->kind = kind;
	f->lo = lo;
	f->hi = hi;
	f->times = times;
	memwire_set_filter(p->w, to, fault_filter, f);
}

/* One clean Write from a to b: the requester learns the round trip */
static void warm_up(struct pair *p)
{
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_wc wc;

	post_send1(a, IBV_WR_RDMA_WRITE, 0, 0, 100, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

/* A Write of n packets from a to b (at a's PSN psn0 + 1), checked */
static void write_n(struct pair *p, uint32_t npkts, uint32_t seed)
{
	struct host *a = &p->h[0], *b = &p->h[1];
	uint32_t len = npkts * MTU - 100;
	struct ibv_wc wc;

	fill(a->buf, len, seed);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, (uintptr_t)b->buf + BUF / 2,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + BUF / 2, a->buf, len);
}

static void stats_of(struct pair *p, struct rxdp_engine_stats *sa,
		     struct rxdp_engine_stats *sb)
{
	rxdp_engine_get_stats(p->h[0].e, sa);
	rxdp_engine_get_stats(p->h[1].e, sb);
}

/*
 * The last two packets of a Write are lost: the tail-loss probe (the last
 * packet again, with AckReq) draws a sequence NAK for the first of them,
 * all in a fraction of the QP's timeout and with no timer expiry at all.
 * Going back, both are resent; between rxdp peers the responder held the
 * probe and its NAK says so: the first is resent alone.
 */
static void test_tail_loss_probe(void **state)
{
	for (int gbn = 0; gbn < 2; gbn++) {
		struct qp_opts o = default_opts;
		struct rxdp_engine_stats sa, sb;
		struct fault f;
		struct pair *p;
		uint64_t t0, took;

		o.go_back_n = gbn ? 3 : 0;
		p = pair_new(&o);
		warm_up(p);
		/* PSN A_PSN0 went to the warm-up; the Write has 1..8 */
		fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 7),
			  psn_add(A_PSN0, 8), 1);
		t0 = vclock;
		write_n(p, 8, 1);
		took = vclock - t0;
		stats_of(p, &sa, &sb);
		print_message("%s: tail lost: repaired in %llu us (QP timeout "
			      "%llu us): %llu probe(s), %llu retransmitted, "
			      "%llu go-back(s), %llu resent alone\n",
			      gbn ? "go-back-N" : "selective",
			      (unsigned long long)took / 1000,
			      (4096ULL << default_opts.timeout) / 1000,
			      (unsigned long long)sa.tlp_probes,
			      (unsigned long long)sa.retransmits,
			      (unsigned long long)sa.go_backs,
			      (unsigned long long)sa.sr_resends);
		assert_int_equal(f.dropped, 2);
		assert_int_equal(sa.tlp_probes, 1);
		assert_int_equal(sa.timeouts, 0);
		assert_int_equal(sa.rto_expiries, 0);
		assert_int_equal(sb.seq_naks_sent, 1);
		/* the probe, then what it found missing */
		assert_int_equal(sa.go_backs, gbn ? 1 : 0);
		assert_int_equal(sa.sr_resends, gbn ? 0 : 1);
		assert_int_equal(sb.rx_held, gbn ? 0 : 1);
		assert_int_equal(sa.retransmits, gbn ? 3 : 2);
		assert_true(took < (4096ULL << default_opts.timeout) / 20);
		pair_free(p);
	}
}

/*
 * Everything arrived but the ACK of the last packet was lost: the probe is
 * a duplicate, which the responder acknowledges at once (no coalescing
 * holds back the ACK a requester waits for), and nothing is resent.
 */
static void test_tail_ack_lost(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct rxdp_engine_stats sa, sb;
	struct fault f;

	warm_up(p);
	fault_set(p, 0, &f, FAULT_ACK, psn_add(A_PSN0, 8), psn_add(A_PSN0, 8),
		  1);
	write_n(p, 8, 2);
	stats_of(p, &sa, &sb);
	assert_int_equal(f.dropped, 1);
	assert_int_equal(sa.tlp_probes, 1);
	assert_int_equal(sa.retransmits, 1);
	assert_int_equal(sa.go_backs, 0);
	assert_int_equal(sa.timeouts, 0);
	assert_int_equal(sa.rto_expiries, 0);
	assert_int_equal(sb.rx_duplicates, 1);
	pair_free(p);
}

/*
 * A sequence NAK arrives 21 times (the network copied it, or a peer
 * repeats itself): the requester acts once, and resends exactly the
 * packets from the lost one on (going back), or the lost one alone.
 */
static void nak_storm(int gbn)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a, *b;
	struct rxdp_engine_stats sa, sb;
	const uint32_t npkts = 64, lost = 20;
	uint32_t len = npkts * MTU - 100;
	struct ibv_wc wc;
	struct fault f;
	int injected = 0, got = 0;

	o.go_back_n = gbn ? 3 : 0;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	warm_up(p);
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, lost),
		  psn_add(A_PSN0, lost), 1);
	/* the NAKs on their way to a are seen (and kept) by a second filter */
	{
		static struct fault fa;

		fault_set(p, 0, &fa, FAULT_ACK, 1, 0, 0);
		fill(a->buf, len, 3);
		post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len,
			   (uintptr_t)b->buf + BUF / 2, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		while (!got) {
			/* b answers the gap; a has not seen the NAK yet */
			rxdp_engine_progress(b->e);
			if (fa.nak_len && !injected) {
				for (int i = 0; i < 20; i++)
					memwire_inject(p->w, 0, fa.nak,
						       fa.nak_len);
				injected = 1;
			}
			rxdp_engine_progress(a->e);
			__atomic_add_fetch(&vclock, VCLOCK_TICK,
					   __ATOMIC_RELAXED);
			got = tp_poll_cq(a->scq, 1, &wc);
			assert_true(got >= 0);
		}
	}
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + BUF / 2, a->buf, len);
	stats_of(p, &sa, &sb);
	print_message("NAK storm: %llu go-back(s), %llu NAKs ignored, %llu "
		      "packets resent\n",
		      (unsigned long long)sa.go_backs,
		      (unsigned long long)sa.naks_ignored,
		      (unsigned long long)sa.retransmits);
	assert_true(injected);
	assert_int_equal(sb.seq_naks_sent, 1);
	assert_int_equal(sa.go_backs, gbn ? 1 : 0);
	assert_int_equal(sa.sr_resends, gbn ? 0 : 1);
	assert_int_equal(sa.naks_ignored, 20);
	/* PSNs A_PSN0 + lost .. A_PSN0 + npkts: the Write's packets lost-1.. */
	assert_int_equal(sa.retransmits, gbn ? npkts - lost + 1 : 1);
	assert_int_equal(sa.tlp_probes + sa.rto_expiries + sa.timeouts, 0);
	pair_free(p);
}

static void test_nak_storm(void **state)
{
	nak_storm(1);
	nak_storm(0);
}

/*
 * A read request that comes again (a go-back, or copies the network made)
 * replaces the responses still queued for it: five copies of a 100-packet
 * read make the responder send its data about once more, not five times.
 */
static void test_read_dup_replaces(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats sa, sb0, sb;
	const uint32_t len = 100 * MTU;
	struct ibv_wc wc;
	struct fault f;
	int got = 0;

	warm_up(p);
	stats_of(p, &sa, &sb0);
	fault_set(p, 1, &f, FAULT_REQ, 1, 0, 0); /* keeps the read request */
	fill(b->buf + BUF / 2, len, 7);
	post_send1(a, IBV_WR_RDMA_READ, 1, 0, len, (uintptr_t)b->buf + BUF / 2,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	/* b queues the responses; a takes the first batch */
	rxdp_engine_progress(b->e);
	rxdp_engine_progress(a->e);
	assert_true(f.read_len > 0);
	for (int i = 0; i < 5; i++)
		memwire_inject(p->w, 1, f.read, f.read_len);
	while (!got) {
		drive(p);
		got = tp_poll_cq(a->scq, 1, &wc);
		assert_true(got >= 0);
	}
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(a->buf, b->buf + BUF / 2, len);
	stats_of(p, &sa, &sb);
	print_message("5 copies of a 100-packet read: %llu responses sent, "
		      "%llu cancelled\n",
		      (unsigned long long)(sb.tx_packets - sb0.tx_packets),
		      (unsigned long long)sb.rjobs_cancelled);
	assert_int_equal(sb.rx_duplicates - sb0.rx_duplicates, 5);
	assert_true(sb.rjobs_cancelled >= 1);
	assert_true(sb.tx_packets - sb0.tx_packets < 3 * 100);
	pair_free(p);
}

/*
 * The responder NAKs a gap once (IBTA 9.7.5.1.3), however many packets
 * arrive behind it, here with no XDP program in front to drop them.
 */
static void test_one_nak_per_gap(void **state)
{
	for (int gbn = 0; gbn < 2; gbn++) {
		struct qp_opts o = default_opts;
		struct rxdp_engine_stats sa, sb;
		struct fault f;
		struct pair *p;

		o.go_back_n = gbn ? 3 : 0;
		p = pair_new(&o);
		warm_up(p);
		fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 5),
			  psn_add(A_PSN0, 5), 1);
		f.no_xdp = 1;
		write_n(p, 40, 4);
		stats_of(p, &sa, &sb);
		assert_int_equal(sb.seq_naks_sent, 1);
		/* dropped, or held and taken once the gap was filled */
		assert_int_equal(sb.rx_drop_psn, gbn ? 40 - 5 : 0);
		assert_int_equal(sb.rx_held, gbn ? 0 : 40 - 5);
		assert_int_equal(sa.go_backs, gbn ? 1 : 0);
		assert_int_equal(sa.retransmits, gbn ? 40 - 5 + 1 : 1);
		pair_free(p);
	}
}

/*
 * Selective retransmission, a burst: three packets in a row are lost in a
 * Write of 64. The responder holds what comes after; each NAK has the
 * requester resend one packet alone, and the next gap is NAKed as soon as
 * the one before is filled: three NAKs, three packets resent, nothing
 * from the window sent twice, every byte where it belongs.
 */
static void test_sr_burst(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct rxdp_engine_qp_cc cc;
	struct rxdp_engine_stats sa, sb;
	struct fault f;

	warm_up(p);
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 10), psn_add(A_PSN0, 12),
		  1);
	write_n(p, 64, 8);
	stats_of(p, &sa, &sb);
	print_message("3 lost in a row: %llu NAKs, %llu resent alone, %llu "
		      "retransmitted, %llu held\n",
		      (unsigned long long)sb.seq_naks_sent,
		      (unsigned long long)sa.sr_resends,
		      (unsigned long long)sa.retransmits,
		      (unsigned long long)sb.rx_held);
	assert_int_equal(f.dropped, 3);
	assert_int_equal(sb.seq_naks_sent, 3);
	assert_int_equal(sa.sr_resends, 3);
	assert_int_equal(sa.retransmits, 3);
	assert_int_equal(sa.go_backs, 0);
	assert_int_equal(sb.rx_held, 64 - 12);
	assert_int_equal(sb.rx_duplicates, 0);
	assert_int_equal(sa.tlp_probes + sa.rto_expiries + sa.timeouts, 0);
	assert_true(p->h[1].psn[QPN_B & RXDP_QP_INDEX_MASK].flags &
		    RXDP_PSNF_HOLD);
	/* one loss of the window's: an eighth off, once */
	rxdp_engine_qp_cc(p->h[0].qp, &cc);
	assert_int_equal(cc.cwnd, ENG_WINDOW_TEST - ENG_WINDOW_TEST / 8);
	pair_free(p);
}

/*
 * What a's requests and b's answers show of one repair: the request at
 * PSN lost dropped once, the highest request PSN b saw, and that highest
 * when the first ACK covering lost reached a
 */
struct sr_watch {
	struct pair *p;
	uint32_t lost, hi;
	int dropped, acked;
	uint32_t hi_at_ack;
};

static int sr_watch_req(void *arg, uint8_t *frame, uint32_t len)
{
	struct sr_watch *w = arg;
	uint8_t copy[4096];
	struct pkt_info pi;
	uint32_t psn;

	memcpy(copy, frame, len);
	if (!pkt_parse(copy, len, &pi) && (pi.flags & ROCE_OPF_REQUEST)) {
		psn = bth_psn(pi.bth);
		if (psn == w->lost && !w->dropped++)
			return 0;
		if (psn_after(psn, w->hi))
			w->hi = psn;
	}
	return xdp_like(w->p->h[1].psn, frame, len);
}

static int sr_watch_ack(void *arg, uint8_t *frame, uint32_t len)
{
	struct sr_watch *w = arg;
	uint8_t copy[4096];
	struct pkt_info pi;

	memcpy(copy, frame, len);
	if (!pkt_parse(copy, len, &pi) && pi.opcode == ROCE_RC_ACK &&
	    (aeth_syndrome(pi.aeth) & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK &&
	    !psn_before(bth_psn(pi.bth), w->lost) && !w->acked++)
		w->hi_at_ack = w->hi;
	return xdp_like(w->p->h[0].psn, frame, len);
}

/*
 * While a packet resent alone repairs a gap, the window counts from what
 * was sent when the NAK came, not from una (held, not on the wire): with
 * the window at its floor of 32 after a timeout, a loss in a 200-packet
 * Write does not stop the requester 32 packets past it for the round trip
 * of the repair; it has sent further when the repair's ACK comes.
 */
static void test_sr_window_in_recovery(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats sa, sb;
	struct rxdp_engine_qp_cc cc;
	struct sr_watch w = { .p = p };
	struct ibv_wc wc;
	uint64_t end;

	warm_up(p);
	/* a timeout: the window falls to its floor */
	memwire_cut(p->w, 1);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 4 * MTU, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	for (end = vclock + 3000000; vclock < end;)
		drive(p);
	memwire_cut(p->w, 0);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(cc.cwnd, 32);
	/* the Write's PSNs follow the 4 packets above and the warm-up's */
	w.lost = psn_add(A_PSN0, 1 + 4 + 10);
	w.hi = psn_add(A_PSN0, 4);
	memwire_set_filter(p->w, 1, sr_watch_req, &w);
	memwire_set_filter(p->w, 0, sr_watch_ack, &w);
	write_n(p, 200, 14);
	stats_of(p, &sa, &sb);
	print_message("window 32, a loss 10 packets in: %d packets past it "
		      "sent when its repair was acknowledged\n",
		      psn_diff(w.hi_at_ack, w.lost));
	assert_int_equal(w.dropped, 2);
	assert_true(w.acked);
	assert_int_equal(sa.sr_resends, 1);
	assert_true(psn_diff(w.hi_at_ack, w.lost) > 32);
	pair_free(p);
}

/*
 * Every other peer: a responder that goes back (as Soft-RoCE and ConnectX
 * without selective repeat do) sends a plain NAK, and rxdp's requester goes
 * back; a requester that goes back ignores what a NAK says of holding,
 * and the responder answers the copies of what it held as duplicates,
 * and after three gaps so, holds nothing for that QP: the fourth is not
 * held.
 */
static void test_sr_peers(void **state)
{
	for (int side = 0; side < 2; side++) {
		struct qp_opts o = default_opts;
		struct rxdp_engine_qp_cc cc;
		struct rxdp_engine_stats sa, sb;
		struct fault f;
		struct pair *p;

		o.go_back_n = side ? 1 : 2; /* a goes back / b goes back */
		p = pair_new(&o);
		warm_up(p);
		fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 20),
			  psn_add(A_PSN0, 20), 1);
		write_n(p, 64, 9 + side);
		stats_of(p, &sa, &sb);
		assert_int_equal(sb.seq_naks_sent, 1);
		assert_int_equal(sa.go_backs, 1);
		assert_int_equal(sa.sr_resends, 0);
		assert_int_equal(sa.retransmits, 64 - 20 + 1);
		/* b held what came past the gap only where it holds */
		assert_int_equal(sb.rx_held, side ? 64 - 20 : 0);
		if (side)
			assert_true(sb.rx_duplicates > 0);
		/* a go-back halves the window */
		rxdp_engine_qp_cc(p->h[0].qp, &cc);
		assert_int_equal(cc.cwnd, ENG_WINDOW_TEST / 2);
		/*
		 * Write k's PSNs are 64 k + 1 .. 64 k + 64: b holds past the
		 * first three gaps of a requester never seen to resend alone,
		 * not past the fourth
		 */
		for (uint32_t k = 1; k < 4; k++) {
			fault_set(p, 1, &f, FAULT_REQ,
				  psn_add(A_PSN0, 64 * k + 20),
				  psn_add(A_PSN0, 64 * k + 20), 1);
			write_n(p, 64, 11 + side + k);
			assert_int_equal(f.dropped, 1);
		}
		stats_of(p, &sa, &sb);
		assert_int_equal(sb.seq_naks_sent, 4);
		assert_int_equal(sa.go_backs, 4);
		assert_int_equal(sb.rx_held, side ? 3 * (64 - 20) : 0);
		/* nor does b's XDP program let through what b no longer holds */
		assert_false(p->h[1].psn[QPN_B & RXDP_QP_INDEX_MASK].flags &
			     RXDP_PSNF_HOLD);
		pair_free(p);
	}
}

/*
 * An rxdp requester goes back now and then after a NAK that said held
 * (here: the lost packet is a read's request, which it asks again with
 * all that follows): once seen to resend alone, it keeps the hold through
 * any number of those, and the next Write's loss is resent alone again.
 */
static void test_sr_read_gaps_keep_hold(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats sa, sb;
	const uint32_t wlen = 40 * MTU;
	struct ibv_wc wc[2];
	struct fault f;
	uint32_t psn;

	(void)state;
	warm_up(p);
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 20), psn_add(A_PSN0, 20),
		  1);
	write_n(p, 64, 16); /* PSNs + 1 .. + 64: resent alone */
	psn = psn_add(A_PSN0, 65);
	for (int k = 0; k < 4; k++, psn = psn_add(psn, 41)) {
		/* a one-packet read at psn, its request lost; a Write after */
		fault_set(p, 1, &f, FAULT_REQ, psn, psn, 1);
		fill(b->buf + BUF / 4, MTU, 17 + k);
		fill(a->buf, wlen, 27 + k);
		post_send1(a, IBV_WR_RDMA_READ, 1, BUF / 2, MTU,
			   (uintptr_t)b->buf + BUF / 4, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		post_send1(a, IBV_WR_RDMA_WRITE, 2, 0, wlen,
			   (uintptr_t)b->buf + BUF / 2, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		wait_wc(p, a->scq, wc, 2);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[1].status, IBV_WC_SUCCESS);
		assert_int_equal(f.dropped, 1);
		assert_memory_equal(a->buf + BUF / 2, b->buf + BUF / 4, MTU);
		assert_memory_equal(b->buf + BUF / 2, a->buf, wlen);
	}
	stats_of(p, &sa, &sb);
	assert_int_equal(sa.go_backs, 4);
	assert_int_equal(sa.sr_resends, 1);
	/* and after them, a Write's loss is resent alone */
	fault_set(p, 1, &f, FAULT_REQ, psn_add(psn, 20), psn_add(psn, 20), 1);
	write_n(p, 64, 31);
	stats_of(p, &sa, &sb);
	assert_int_equal(f.dropped, 1);
	assert_int_equal(sa.go_backs, 4);
	assert_int_equal(sa.sr_resends, 2);
	pair_free(p);
}

/*
 * A held request that cannot be taken when its turn comes (a Send with no
 * receive WQE): its RNR NAK has the requester wait and go back there.
 * Four Sends, the second lost, two receives posted: the first two
 * complete, the third draws the RNR, and all four arrive in order, each
 * into its own receive, once the receives are there.
 */
static void test_sr_rnr_ends_hold(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats sa, sb;
	struct ibv_wc wc[4];
	struct fault f;

	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 1), psn_add(A_PSN0, 1),
		  1);
	fill(a->buf, 4 * 512, 13);
	for (int i = 0; i < 2; i++)
		post_recv1(b, 100 + i, i * 512, 512);
	for (int i = 0; i < 4; i++)
		post_send1(a, IBV_WR_SEND, i, i * 512, 512, 0, 0, 0,
			   IBV_SEND_SIGNALED);
	do {
		drive(p);
		rxdp_engine_get_stats(b->e, &sb);
	} while (!sb.rnr_naks_sent);
	rxdp_engine_get_stats(a->e, &sa);
	assert_int_equal(sb.rx_held, 2);
	assert_int_equal(sa.sr_resends, 1);
	for (int i = 2; i < 4; i++)
		post_recv1(b, 100 + i, i * 512, 512);
	wait_wc(p, a->scq, wc, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	wait_wc(p, b->rcq, wc, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 100 + i);
	}
	assert_memory_equal(b->buf, a->buf, 4 * 512);
	pair_free(p);
}

/*
 * Random loss (1% of frames both ways) under a 1 000-packet Write stream,
 * on the engines' own clock: going back resends a window's worth per
 * loss, selective retransmission about what was lost. Both finish with
 * every byte in place; the resends are counted.
 */
static void test_sr_random_loss(void **state)
{
	uint64_t resent[2], lost[2];

	for (int gbn = 0; gbn < 2; gbn++) {
		struct memwire_faults mf = { .loss = 100, .seed = 4242 };
		struct qp_opts o = default_opts;
		struct rxdp_engine_stats sa, sb;
		struct memwire_stats ms;
		struct pair *p;

		o.go_back_n = gbn ? 3 : 0;
		p = pair_new(&o);
		warm_up(p);
		memwire_set_faults(p->w, &mf);
		for (uint32_t i = 0; i < 10; i++)
			write_n(p, 100, 20 + i);
		stats_of(p, &sa, &sb);
		memwire_get_stats(p->w, &ms);
		resent[gbn] = sa.retransmits;
		lost[gbn] = ms.lost;
		print_message("%s: %llu frames lost, %llu resent (%llu alone, "
			      "%llu go-backs, %llu probes, %llu expiries)\n",
			      gbn ? "go-back-N" : "selective",
			      (unsigned long long)ms.lost,
			      (unsigned long long)sa.retransmits,
			      (unsigned long long)sa.sr_resends,
			      (unsigned long long)sa.go_backs,
			      (unsigned long long)sa.tlp_probes,
			      (unsigned long long)sa.rto_expiries);
		pair_free(p);
	}
	assert_true(lost[0] > 5 && lost[1] > 5);
	/* at most three packets resent per frame lost (its resend lost, a probe) */
	assert_true(resent[0] <= 3 * lost[0]);
	assert_true(resent[1] > 4 * resent[0]);
}

/*
 * A go-back whose first packet is lost again: the responder drops all
 * that follows it, so the window was halved for the go-back and at most
 * that many packets are wasted before the timer resends; then it is done.
 */
static void test_goback_window(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct rxdp_engine_stats sa, sb;
	const uint32_t npkts = 250, lost = 10;
	struct fault f;

	warm_up(p);
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, lost),
		  psn_add(A_PSN0, lost), 2);
	write_n(p, npkts, 5);
	stats_of(p, &sa, &sb);
	print_message("lost twice: %llu resent, %llu go-backs, %llu probes, "
		      "%llu timer expiries\n",
		      (unsigned long long)sa.retransmits,
		      (unsigned long long)sa.go_backs,
		      (unsigned long long)sa.tlp_probes,
		      (unsigned long long)sa.rto_expiries);
	assert_int_equal(f.dropped, 2);
	assert_int_equal(sa.timeouts, 0);
	/* the NAK's go-back (half a window), then the timer's or probe's */
	assert_true(sa.retransmits <= 256 / 2 + 1 + npkts - lost + 1);
	pair_free(p);
}

/*
 * The peer is unreachable for 20 ms: the retransmission timer backs off
 * (a handful of expiries, not one per floor of 500 us), none of them is
 * the QP's own timeout, and the transfer finishes once the path is back.
 */
static void test_rto_backoff(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct rxdp_engine_stats sa, sb;
	struct host *a = &p->h[0], *b = &p->h[1];
	uint32_t len = 16 * MTU;
	struct ibv_wc wc;
	uint64_t end;

	warm_up(p);
	fill(a->buf, len, 6);
	memwire_cut(p->w, 1);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, (uintptr_t)b->buf + BUF / 2,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	for (end = vclock + 20000000; vclock < end;)
		drive(p);
	memwire_cut(p->w, 0);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + BUF / 2, a->buf, len);
	stats_of(p, &sa, &sb);
	print_message("20 ms cut: %llu timer expiries, %llu probes\n",
		      (unsigned long long)sa.rto_expiries,
		      (unsigned long long)sa.tlp_probes);
	/* 0.5, 1.5, 3.5, 7.5, 15.5 ms, then 31.5 ms after the post */
	assert_true(sa.rto_expiries >= 3 && sa.rto_expiries <= 8);
	assert_int_equal(sa.timeouts, 0);
	pair_free(p);
}

/*
 * A peer that is gone: the adaptive timer resends early, but only the
 * QP's own timeout counts against retry_cnt (IBTA 9.7.6.1.3), so the QP
 * fails after retry_cnt + 1 of those, no sooner.
 */
static void test_retry_counts_timeouts(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_engine_stats sa, sb;
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc;
	uint64_t t0, to;

	o.retry_cnt = 2;
	o.timeout = 10; /* 4.2 ms */
	to = 4096ULL << o.timeout;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	warm_up(p);
	memwire_cut(p->w, 1);
	t0 = vclock;
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 3000, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	stats_of(p, &sa, &sb);
	print_message("gone: failed after %llu us, %llu timeouts, %llu early "
		      "expiries\n",
		      (unsigned long long)(vclock - t0) / 1000,
		      (unsigned long long)sa.timeouts,
		      (unsigned long long)sa.rto_expiries);
	assert_int_equal(sa.timeouts, 3);
	assert_true(sa.rto_expiries > 0);
	assert_true(vclock - t0 >= 3 * to);
	pair_free(p);
}

/* One signaled WR of h's: the status of its completion */
static enum ibv_wc_status post_wr1(struct pair *p, struct host *h,
				   struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	assert_int_equal(tp_post_send(h->qp, wr, &bad), 0);
	wait_wc(p, h->scq, &wc, 1);
	assert_int_equal(wc.wr_id, wr->wr_id);
	return wc.status;
}

/*
 * Memory windows in the engine alone: a type 2 window bound by b's Bind MW
 * WR takes the bind's key byte; a reaches b's memory through it, only
 * inside it; a's Send with Invalidate frees it (b's receive names the
 * key) and an access after that is a remote access error. The region
 * cannot be deregistered while the window is bound.
 */
static void test_memory_windows(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_sge s = sge(a, 0, 4096);
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1 };
	struct rxdp_emr *mr, *mw;
	struct ibv_mw vmw = { 0 };
	struct ibv_mr vmr = { 0 };
	struct ibv_wc wc;
	uint32_t rkey;

	mr = rxdp_engine_reg_mr(b->e, b->buf, BUF, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_MW_BIND);
	mw = rxdp_engine_alloc_mw(b->e, NULL, IBV_MW_TYPE_2);
	assert_non_null(mr);
	assert_non_null(mw);
	vmw.rkey = rxdp_emr_rkey(mw);
	vmr.lkey = rxdp_emr_lkey(mr);
	rkey = (vmw.rkey & ~0xffu) | 0x3c;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = &vmw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = &vmr,
		.addr = (uintptr_t)b->buf + 8192,
		.length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	assert_int_equal(post_wr1(p, b, &wr), IBV_WC_SUCCESS);
	assert_int_equal(rxdp_emr_rkey(mw), rkey);
	assert_int_equal(rxdp_engine_dereg_mr(mr), -EBUSY);

	fill(a->buf, 4096, 9);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 8192;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(post_wr1(p, a, &wr), IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + 8192, a->buf, 4096);

	post_recv1(b, 3, 0, 100);
	s.length = 100;
	wr.wr_id = 3;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = rkey;
	assert_int_equal(post_wr1(p, a, &wr), IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_true(wc.wc_flags & IBV_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, rkey);
	assert_memory_equal(b->buf, a->buf, 100);

	wr.wr_id = 4;
	wr.opcode = IBV_WR_RDMA_WRITE;
	assert_int_equal(post_wr1(p, a, &wr), IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(rxdp_engine_dealloc_mw(mw), 0);
	assert_int_equal(rxdp_engine_dereg_mr(mr), 0);
	pair_free(p);
}

/* No receive posted: RNR NAKs until rnr_retry runs out */
static void test_rnr_exhausted(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_engine_stats st;
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc[2];

	o.rnr_retry = 2;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	post_send1(a, IBV_WR_SEND, 1, 0, 10, 0, 0, 0, IBV_SEND_SIGNALED);
	post_send1(a, IBV_WR_SEND, 2, 0, 10, 0, 0, 0, 0);
	wait_wc(p, a->scq, wc, 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(wc[1].wr_id, 2); /* unsignaled, but flushed */
	assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_ERR);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rnr_naks_sent, 3);
	assert_int_equal(hwc(b, RXDP_HWC_SEND_RNR), 3);
	assert_int_equal(hwc(a, RXDP_HWC_RCVD_RNR), 3);
	assert_int_equal(hwc(a, RXDP_HWC_RNR_RETRY_EXCEEDED), 1);
	assert_int_equal(hwc(a, RXDP_HWC_RDMA_SENDS), 0);
	pair_free(p);
}

/* RNR with rnr_retry 7 (infinite): the send goes once a receive is posted */
static void test_rnr_then_recv(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats st;
	struct ibv_wc wc;

	fill(a->buf, 5000, 3);
	post_send1(a, IBV_WR_SEND, 1, 0, 5000, 0, 0, 0, IBV_SEND_SIGNALED);
	do {
		drive(p);
		rxdp_engine_get_stats(b->e, &st);
	} while (st.rnr_naks_sent < 3);
	post_recv1(b, 9, 0, 8192);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 5000);
	assert_memory_equal(b->buf, a->buf, 5000);
	pair_free(p);
}

struct recv_once {
	struct host *h;
	bool done;
};

static void post_recv_once(void *arg)
{
	struct recv_once *r = arg;

	if (!r->done) {
		r->done = true;
		post_recv1(r->h, 9, 0, 8192);
	}
}

/*
 * A receive posted after the pass drained the ring, before the Send that
 * needs it arrives: the responder takes it from the ring then, as an HCA
 * fetches a WQE it was told of, and answers no RNR NAK (a peer with
 * rnr_retry 0 would fail on one)
 */
static void test_recv_posted_during_pass(void **state)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a, *b;
	struct rxdp_engine_stats st;
	struct recv_once r;
	struct ibv_wc wc;

	o.rnr_retry = 0;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	r = (struct recv_once){ .h = b };
	memwire_set_rx_hook(p->w, 1, post_recv_once, &r);
	fill(a->buf, 5000, 4);
	post_send1(a, IBV_WR_SEND, 1, 0, 5000, 0, 0, 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 9);
	assert_memory_equal(b->buf, a->buf, 5000);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rnr_naks_sent, 0);
	memwire_set_rx_hook(p->w, 1, NULL, NULL);
	pair_free(p);
}

static void *try_fifo(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	*(int *)arg = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	return NULL;
}

/*
 * The progress threads run SCHED_FIFO: a ping-pong of 64 KiB Sends (payload
 * both ways in turn) keeps them there, retransmissions included; a one-way
 * stream of writes takes them out, the sender's to spin through it
 * (eng_stream_check)
 */
static void test_stream_mode(void **state)
{
	struct qp_opts o = default_opts;
	const uint32_t len = 65536, rounds = 300;
	struct rxdp_engine_stats sa, sb;
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc[64];
	struct fault f;
	pthread_t t;
	int err = -1;

	pthread_create(&t, NULL, try_fifo, &err);
	pthread_join(t, NULL);
	if (err) {
		print_message("no SCHED_FIFO here (%s): nothing to check\n",
			      strerror(err));
		skip();
	}
	o.threads = 1;
	o.fifo = 10;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	fill(a->buf, len, 5);
	/*
	 * a packet in the middle of one of a's Sends lost twice: a sequence
	 * NAK, a go-back that loses it again, then the timeout's; the Send's
	 * last packet goes out (and comes in) three times, still one message
	 */
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 100 * len / MTU + 10),
		  psn_add(A_PSN0, 100 * len / MTU + 10), 2);
	for (uint32_t i = 0; i < rounds; i++) {
		post_recv1(b, i, BUF / 2, len);
		post_recv1(a, i, BUF / 2, len);
		post_send1(a, IBV_WR_SEND, i, 0, len, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		wait_wc(p, b->rcq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		post_send1(b, IBV_WR_SEND, i, BUF / 2, len, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		wait_wc(p, a->rcq, wc, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		wait_wc(p, a->scq, wc, 1);
		wait_wc(p, b->scq, wc, 1);
	}
	assert_memory_equal(a->buf + BUF / 2, a->buf, len);
	rxdp_engine_get_stats(a->e, &sa);
	rxdp_engine_get_stats(b->e, &sb);
	assert_int_equal(f.dropped, 2);
	assert_int_equal(sa.streams + sb.streams, 0);
	assert_int_equal(sa.rx_coalesced + sb.rx_coalesced, 0);
	/* 64 MiB one way, 32 writes of 256 KiB at a time */
	for (uint32_t i = 0; i < 256; i++) {
		post_send1(a, IBV_WR_RDMA_WRITE, i, 0, 256 * 1024,
			   (uintptr_t)b->buf + BUF / 2, rxdp_emr_rkey(b->mr), 0,
			   IBV_SEND_SIGNALED);
		if (i % 32 == 31)
			wait_wc(p, a->scq, wc, 32);
	}
	for (uint32_t i = 0; i < 32; i++)
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
	rxdp_engine_get_stats(a->e, &sa);
	rxdp_engine_get_stats(b->e, &sb);
	assert_true(sa.streams >= 1);
	assert_true(sb.streams >= 1);
	/* the sender never coalesces (the receiver may: eng_stream_in) */
	assert_int_equal(sa.rx_coalesced, 0);
	pair_free(p);
}

/* the request packets that reached b, by destination QPN, in order */
#define TC_SEEN 2048
static uint32_t tc_seen[TC_SEEN];
static unsigned int tc_nseen;

static int tc_record(void *arg, uint8_t *frame, uint32_t len)
{
	struct pkt_info pi;

	(void)arg;
	if (!pkt_parse(frame, len, &pi) && (pi.flags & ROCE_OPF_REQUEST) &&
	    tc_nseen < TC_SEEN)
		tc_seen[tc_nseen++] = bth_qpn(pi.bth);
	return 1;
}

/*
 * Service classes (tc.h, engine.c's pass): SL 5 strict, SL 1 weight 3, the
 * rest (SL 0) weight 1, a quantum of 192 KiB. Four QPs of each weighted
 * class with 256 packets each (4 Writes of 64 KiB, MTU 1024), one strict
 * QP's 64-byte Send posted last, and one SL 0 QP's: the strict one's packet
 * goes first, the weighted classes share 3:1 while both have packets (each
 * pass 192 KiB and 64 KiB: the first 1024 packets), and the SL 0 QP with
 * one message waits for no other QP's second turn (64 packets) in its
 * class. Every byte lands; the counters of each class count its packets.
 */
static void test_tc_sched(void **state)
{
	struct qp_opts o = default_opts, oq;
	const uint32_t len = 65536, nq = 10;
	struct rxdp_eqp *q[2][10];
	struct rxdp_engine_stats st;
	struct eng_tcs tcs;
	struct ibv_wc wc[64];
	struct pair *p;
	struct host *a, *b;
	unsigned int c1 = 0, c2 = 0, per[10] = { 0 }, small_at = 0;

	(void)state;
	eng_tcs_default(&tcs);
	assert_int_equal(eng_tcs_add(&tcs, "5=strict"), 0);
	assert_int_equal(eng_tcs_add(&tcs, "1=3"), 0);
	assert_int_equal(eng_tcs_finish(&tcs), 0);
	tcs.quantum = 192 * 1024;
	o.tcs = &tcs;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	fill(a->buf, 8 * 4 * len, 11);
	/* k 0-3: SL 1; 4-7 and 9: SL 0; 8: SL 5 */
	for (uint32_t k = 0; k < nq; k++) {
		for (int side = 0; side < 2; side++) {
			struct host *h = &p->h[side];
			struct rxdp_eqp_init init = {
				.qpn = 0x200 + 2 * k + (uint32_t)side,
				.qp_type = IBV_QPT_RC,
				.send_cq = h->scq,
				.recv_cq = h->rcq,
				.cap = { .max_send_wr = 16,
					 .max_recv_wr = 4,
					 .max_send_sge = 1,
					 .max_recv_sge = 1 },
			};

			q[side][k] = rxdp_engine_create_qp(h->e, &init);
			assert_non_null(q[side][k]);
		}
		oq = o;
		oq.sl = k < 4 ? 1 : k == 8 ? 5 : 0;
		qp_connect(q[0][k], 0, 0x200 + 2 * k + 1, &oq);
		qp_connect(q[1][k], 1, 0x200 + 2 * k, &oq);
	}
	tc_nseen = 0;
	memwire_set_filter(p->w, 1, tc_record, NULL);
	for (uint32_t k = 8; k < nq; k++) {
		struct ibv_sge s = sge(b, BUF - 4096 * (k - 7), 64);
		struct ibv_recv_wr r = { .wr_id = k,
					 .sg_list = &s,
					 .num_sge = 1 };
		struct ibv_recv_wr *bad;

		assert_int_equal(tp_post_recv(q[1][k], &r, &bad), 0);
	}
	tp_hold = true;
	for (uint32_t k = 0; k < nq; k++) {
		for (uint32_t m = 0; m < (k < 8 ? 4 : 1); m++) {
			uint32_t off = (k * 4 + m) * len;
			struct ibv_sge s = sge(a, off, k < 8 ? len : 64);
			struct ibv_send_wr wr = {
				.wr_id = k << 8 | m,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = k < 8 ? IBV_WR_RDMA_WRITE
						: IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
			};
			struct ibv_send_wr *bad;

			wr.wr.rdma.remote_addr = (uintptr_t)b->buf + off;
			wr.wr.rdma.rkey = rxdp_emr_rkey(b->mr);
			/* the strict QP's after everything else */
			assert_int_equal(tp_post_send(q[0][k < 8 ? k : 17 - k],
						      &wr, &bad),
					 0);
		}
	}
	tp_hold = false;
	wait_wc(p, a->scq, wc, 34);
	for (int i = 0; i < 34; i++)
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
	wait_wc(p, b->rcq, wc, 2);
	assert_memory_equal(b->buf, a->buf, 8 * 4 * len);
	assert_true(tc_nseen >= 1024 + 2);
	assert_int_equal(tc_seen[0], 0x200 + 2 * 8 + 1);
	for (unsigned int i = 1; i < tc_nseen; i++) {
		uint32_t k = (tc_seen[i] - 0x201) / 2;

		assert_true(k < nq);
		if (k == 9) {
			small_at = i;
			/* no other QP of its class had a second turn */
			for (uint32_t j = 4; j < 8; j++)
				assert_true(per[j] <= 64);
		}
		per[k]++;
		if (i > 1024 + 1)
			continue;
		if (k < 4)
			c1++;
		else if (k < 8)
			c2++;
	}
	assert_true(small_at > 0);
	print_message("first 1024 packets: SL 1 %u, SL 0 %u; the one "
		      "message of SL 0 at %u\n",
		      c1, c2, small_at);
	assert_true(c1 * 10 >= c2 * 28 && c1 * 10 <= c2 * 32);
	rxdp_engine_get_stats(a->e, &st);
	assert_int_equal(st.tc[0].tx_packets, 1);
	assert_int_equal(st.tc[0].tx_bytes, 64);
	assert_true(st.tc[1].tx_packets >= 4 * 256);
	assert_true(st.tc[1].tx_bytes >= 4 * 4 * len);
	assert_true(st.tc[2].tx_packets >= 4 * 256 + 1);
	assert_int_equal(st.tc[3].tx_packets, 0);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.tc[0].rx_packets, 1);
	assert_true(st.tc[1].rx_bytes >= 4 * 4 * len);
	for (uint32_t k = 0; k < nq; k++)
		for (int side = 0; side < 2; side++)
			assert_int_equal(rxdp_engine_destroy_qp(q[side][k]), 0);
	pair_free(p);
}

/* The peer disappears: retry_cnt timeouts, then RETRY_EXC_ERR and flush */
static void test_retry_exhausted(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_engine_stats st;
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc[3];

	o.retry_cnt = 3;
	o.timeout = 6; /* 262 us */
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	memwire_cut(p->w, 1);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 3000, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	post_send1(a, IBV_WR_RDMA_READ, 2, 0, 100, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	post_recv1(a, 3, 0, 100);
	wait_wc(p, a->scq, wc, 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	wait_wc(p, a->rcq, wc, 1);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	rxdp_engine_get_stats(a->e, &st);
	assert_int_equal(st.timeouts, 4);
	/* three go-back-N restarts, then the fourth timeout is the last */
	assert_int_equal(hwc(a, RXDP_HWC_COMP_RETRY), 3);
	assert_int_equal(hwc(a, RXDP_HWC_RETRY_EXCEEDED), 1);
	/* posting in ERR is accepted and flushed at once */
	post_send1(a, IBV_WR_SEND, 4, 0, 1, 0, 0, 0, 0);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].wr_id, 4);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	pair_free(p);
}

/*
 * A responder that is slow, not gone: the requester's timer fires while its
 * window still waits at the responder. Each timeout sends one packet to
 * ask where the responder stands, not the window again (which would bury a
 * slow responder under duplicates until retry_cnt ran out); once the
 * responder catches up, its ACKs finish the write and nothing it has is
 * sent again.
 */
static void test_slow_responder(void **state)
{
	const uint32_t len = 200 * MTU;
	struct qp_opts o = default_opts;
	struct rxdp_engine_stats sa;
	struct pair *p;
	struct host *a, *b;
	struct ibv_wc wc;
	uint64_t end;

	o.timeout = 10; /* 4 ms */
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	fill(a->buf, len, 11);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	/*
	 * The responder stalls for three timeouts: only a runs, on the
	 * engine's clock, 100 us a pass (three timeouts of 268 ms, the
	 * sanitized build's floor, are thousands of passes, not millions),
	 * for at most a minute of that clock, however slow the machine
	 */
	end = vclock + 60 * 1000000000ULL;
	do {
		rxdp_engine_progress(a->e);
		__atomic_add_fetch(&vclock, 100 * VCLOCK_TICK,
				   __ATOMIC_RELAXED);
		rxdp_engine_get_stats(a->e, &sa);
	} while (sa.timeouts < 3 && vclock < end);
	assert_int_equal(sa.timeouts, 3);
	/*
	 * Each expiry (the adaptive timer's earlier ones, and the QP's
	 * timeouts) sent one packet again, not the window
	 */
	assert_true(sa.rto_expiries > 0);
	assert_int_equal(sa.retransmits, sa.timeouts + sa.rto_expiries);
	assert_true(sa.tx_packets >= 64 &&
		    sa.tx_packets <= len / MTU + sa.retransmits);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf, a->buf, len);
	pair_free(p);
}

/* Wrong rkey, out of bounds, missing access right: REM_ACCESS_ERR */
static void test_access_errors(void **state)
{
	for (int c = 0; c < 5; c++) {
		struct pair *p = pair_new(&default_opts);
		struct host *a = &p->h[0], *b = &p->h[1];
		uint32_t rkey = rxdp_emr_rkey(b->mr);
		struct rxdp_emr *ro = NULL;
		struct rxdp_epd *pd2 = NULL;
		struct ibv_wc wc[2];

		switch (c) {
		case 0: /* wrong rkey */
			post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10,
				   (uintptr_t)b->buf, rkey + 1, 0,
				   IBV_SEND_SIGNALED);
			break;
		case 1: /* read past the end */
			post_send1(a, IBV_WR_RDMA_READ, 1, 0, 4096,
				   (uintptr_t)b->buf + BUF - 100, rkey, 0,
				   IBV_SEND_SIGNALED);
			break;
		case 2: /* write below the start */
			post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10,
				   (uintptr_t)b->buf - 8, rkey, 0,
				   IBV_SEND_SIGNALED);
			break;
		case 3: /* write into a read-only MR */
			ro = rxdp_engine_reg_mr(b->e, b->buf, 4096,
						(uintptr_t)b->buf,
						IBV_ACCESS_REMOTE_READ);
			assert_non_null(ro);
			post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10,
				   (uintptr_t)b->buf, rxdp_emr_rkey(ro), 0,
				   IBV_SEND_SIGNALED);
			break;
		case 4: /* an MR of another PD (another process, in rxdpd) */
			pd2 = rxdp_engine_alloc_pd(b->e, NULL);
			assert_non_null(pd2);
			ro = rxdp_engine_reg_mr_pd(
				pd2, (uintptr_t)b->buf, 4096, (uintptr_t)b->buf,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
			assert_non_null(ro);
			assert_int_equal(rxdp_engine_dealloc_pd(pd2), -EBUSY);
			post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10,
				   (uintptr_t)b->buf, rxdp_emr_rkey(ro), 0,
				   IBV_SEND_SIGNALED);
			break;
		}
		post_send1(a, IBV_WR_SEND, 2, 0, 1, 0, 0, 0, 0);
		wait_wc(p, a->scq, wc, 2);
		assert_int_equal(wc[0].wr_id, 1);
		assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
		assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_ERR);
		assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_ERR);
		if (ro)
			assert_int_equal(rxdp_engine_dereg_mr(ro), 0);
		if (pd2)
			assert_int_equal(rxdp_engine_dealloc_pd(pd2), 0);
		pair_free(p);
	}
}

/* An RDMA Write of 10 bytes to b with rkey: its completion status */
static enum ibv_wc_status write_with(uint32_t rkey, struct pair *p)
{
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_wc wc;

	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10, (uintptr_t)b->buf, rkey, 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	return wc.status;
}

/* Any one wrong byte of an R_Key is a remote access error */
static void test_key_bytes(void **state)
{
	(void)state;
	for (int byte = 0; byte < 4; byte++) {
		struct pair *p = pair_new(&default_opts);
		uint32_t rkey = rxdp_emr_rkey(p->h[1].mr);

		assert_int_equal(write_with(rkey ^ (0x5aU << 8 * byte), p),
				 IBV_WC_REM_ACCESS_ERR);
		pair_free(p);
	}
}

/*
 * A reregistration that moves the MR, changes its PD or takes a right away
 * gives it a new key, and the old one matches nothing (a remote access
 * error); one that only adds rights keeps the key, as rdma-core's
 * test_mr_rereg_access expects.
 */
static void test_rereg_keys(void **state)
{
	const unsigned int rw = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;

	(void)state;
	for (int c = 0; c < 5; c++) {
		struct pair *p = pair_new(&default_opts);
		struct host *b = &p->h[1];
		uint64_t addr = (uintptr_t)b->buf;
		struct rxdp_epd *pd2 = NULL;
		struct rxdp_emr *mr;
		uint32_t old;

		mr = rxdp_engine_reg_mr(b->e, b->buf, 4096, addr,
					c ? rw : IBV_ACCESS_LOCAL_WRITE);
		assert_non_null(mr);
		old = rxdp_emr_rkey(mr);
		switch (c) {
		case 0: /* rights added: the same key, now good for writes */
			assert_int_equal(rxdp_engine_rereg_mr(mr, NULL, addr,
							      4096, addr, rw),
					 0);
			assert_int_equal(rxdp_emr_rkey(mr), old);
			assert_int_equal(write_with(old, p), IBV_WC_SUCCESS);
			break;
		case 1: /* remote write taken away */
			assert_int_equal(rxdp_engine_rereg_mr(
						 mr, NULL, addr, 4096, addr,
						 rw & ~IBV_ACCESS_REMOTE_WRITE),
					 0);
			break;
		case 2: /* moved */
		case 3:
			assert_int_equal(rxdp_engine_rereg_mr(mr, NULL,
							      addr + 4096, 4096,
							      addr, rw),
					 0);
			break;
		case 4: /* to another PD */
			pd2 = rxdp_engine_alloc_pd(b->e, NULL);
			assert_non_null(pd2);
			assert_int_equal(rxdp_engine_rereg_mr(mr, pd2, addr,
							      4096, addr, rw),
					 0);
			break;
		}
		if (c) {
			uint32_t k = rxdp_emr_rkey(mr);

			assert_int_not_equal(k >> 8, old >> 8);
			assert_int_equal(rxdp_emr_lkey(mr), k);
			if (c == 3) { /* the new key reaches the new place */
				fill(p->h[0].buf, 10, 5);
				assert_int_equal(write_with(k, p),
						 IBV_WC_SUCCESS);
				assert_memory_equal(b->buf + 4096, p->h[0].buf,
						    10);
			} else {
				assert_int_equal(write_with(old, p),
						 IBV_WC_REM_ACCESS_ERR);
			}
		}
		assert_int_equal(rxdp_engine_dereg_mr(mr), 0);
		if (pd2)
			assert_int_equal(rxdp_engine_dealloc_pd(pd2), 0);
		pair_free(p);
	}
}

/*
 * Implicit ODP: (addr 0, len UINT64_MAX, iova 0) with IBV_ACCESS_ON_DEMAND
 * is one MR over the whole address space, its keys good for any address
 * (here this process's: the engine's own memory), the bounds checked at
 * the access (a range that wraps is a remote access error); without ODP,
 * or with an iova, such a registration is refused. A rereg may make an MR
 * implicit, under the same rule.
 */
static void test_implicit_odp(void **state)
{
	const unsigned int odp = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE;
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	uint8_t *far = calloc(1, 64);
	struct rxdp_emr *imr, *mr;
	struct ibv_wc wc;

	(void)state;
	assert_null(rxdp_engine_reg_mr(b->e, NULL, SIZE_MAX, 0,
				       odp & ~IBV_ACCESS_ON_DEMAND));
	assert_int_equal(errno, EINVAL);
	assert_null(rxdp_engine_reg_mr(b->e, NULL, SIZE_MAX, 4096, odp));
	assert_null(rxdp_engine_reg_mr(b->e, NULL, 4096, 0, odp));
	imr = rxdp_engine_reg_mr(b->e, NULL, SIZE_MAX, 0, odp);
	assert_non_null(imr);

	/* anywhere: memory no other MR covers */
	fill(a->buf, 10, 3);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10, (uintptr_t)far + 20,
		   rxdp_emr_rkey(imr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(far + 20, a->buf, 10);
	/* a range that wraps around the top of the address space */
	post_send1(a, IBV_WR_RDMA_WRITE, 2, 0, 10, UINT64_MAX - 4,
		   rxdp_emr_rkey(imr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(rxdp_engine_dereg_mr(imr), 0);

	/* rereg: implicit with ODP only */
	mr = rxdp_engine_reg_mr(b->e, b->buf, 4096, (uintptr_t)b->buf, odp);
	assert_non_null(mr);
	assert_int_equal(rxdp_engine_rereg_mr(mr, NULL, 0, SIZE_MAX, 0,
					      odp & ~IBV_ACCESS_ON_DEMAND),
			 -EINVAL);
	assert_int_equal(rxdp_engine_rereg_mr(mr, NULL, 0, SIZE_MAX, 0, odp),
			 0);
	assert_int_equal(rxdp_engine_dereg_mr(mr), 0);
	free(far);
	pair_free(p);
}

/* A send larger than the receive buffer: LOC_LEN_ERR there, REM_INV_REQ here */
static void test_recv_too_small(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_wc wc;

	post_recv1(b, 1, 0, 100);
	post_send1(a, IBV_WR_SEND, 2, 0, 3000, 0, 0, 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_REM_INV_REQ_ERR);
	wait_wc(p, b->rcq, &wc, 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	pair_free(p);
}

/* A bad lkey fails locally with LOC_PROT_ERR */
static void test_local_protection(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0];
	struct ibv_sge s = { .addr = (uintptr_t)a->buf,
			     .length = 10,
			     .lkey = 0xdead00 };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	assert_int_equal(tp_post_send(a->qp, &wr, &bad), 0);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, IBV_WC_LOC_PROT_ERR);
	pair_free(p);
}

/* Verbs post semantics: positive errno, *bad at the first WR refused */
static void test_post_errors(void **state)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a;
	struct ibv_sge s[9];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_recv_wr rwr = { 0 }, *rbad = NULL;
	int n = 0;

	o.sq = 4;
	p = pair_new(&o);
	a = &p->h[0];
	for (int i = 0; i < 9; i++)
		s[i] = sge(a, 0, 1);
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		wr[i].sg_list = s;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = (uintptr_t)p->h[1].buf;
		wr[i].wr.rdma.rkey = rxdp_emr_rkey(p->h[1].mr);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = 9; /* more than max_send_sge */
	assert_int_equal(tp_post_send(a->qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	wr[1].num_sge = 1;
	wr[2].opcode = 77;
	assert_int_equal(tp_post_send(a->qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[2]);
	wr[2].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[2].wr.atomic.remote_addr = 3; /* misaligned */
	assert_int_equal(tp_post_send(a->qp, &wr[2], &bad), EINVAL);
	wr[0].next = NULL;
	wr[0].send_flags = IBV_SEND_INLINE;
	wr[0].sg_list = s;
	s[0].length = 257; /* more than max_inline_data */
	assert_int_equal(tp_post_send(a->qp, wr, &bad), EINVAL);
	s[0].length = 1;
	wr[0].send_flags = 0;
	/*
	 * A full SQ: ENOMEM. The first WR of each of the first two chains
	 * was posted (3 WRs, unacknowledged: b never runs), so one more fits.
	 */
	while (tp_post_send(a->qp, wr, &bad) == 0)
		n++;
	assert_int_equal(n, 1);
	assert_int_equal(tp_post_send(a->qp, wr, &bad), ENOMEM);
	rwr.num_sge = 9;
	assert_int_equal(tp_post_recv(a->qp, &rwr, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rwr);
	pair_free(p);

	/* before RTS: send refused; in RESET: receive refused too */
	p = calloc(1, sizeof(*p));
	p->w = memwire_create();
	host_init(p, 0, &default_opts);
	host_init(p, 1, &default_opts);
	rwr.num_sge = 0;
	assert_int_equal(tp_post_recv(p->h[0].qp, &rwr, &rbad), EINVAL);
	assert_int_equal(tp_post_send(p->h[0].qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, wr);
	pair_free(p);
}

/*
 * What an owner writes in its rings is not believed (drain.c): a send WQE
 * that breaks the rules completes with IBV_WC_LOC_QP_OP_ERR in its turn;
 * a producer index that leaps past what the ring holds is a fatal error of
 * that QP at once (IBV_EVENT_QP_FATAL, ERR), with no more than a pass of
 * work for it; the other QP of the same engine goes on.
 */
static void test_hostile_rings(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_eqp_rings r;
	struct rxdp_hca_swqe *d;
	struct rxdp_engine_stats st;
	struct ibv_wc wc[2];
	uint32_t prod;

	/* a WQE with an opcode no transport has, written into the ring */
	rxdp_engine_qp_rings(a->qp, &r);
	prod = atomic_load(&r.sq.wq->prod);
	d = rxdp_hca_slot(r.sq.slots, prod, r.sq.size, r.sq.stride);
	memset(d, 0, sizeof(*d));
	d->wr_id = 77;
	d->opcode = 99;
	d->send_flags = IBV_SEND_SIGNALED;
	atomic_store(&r.sq.wq->prod, prod + 1);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].wr_id, 77);
	assert_int_equal(wc[0].status, IBV_WC_LOC_QP_OP_ERR);
	assert_int_equal(rxdp_engine_qp_state(a->qp), IBV_QPS_ERR);

	/* b's producer index leaps by 2^31 - 1: fatal, not two minutes */
	rxdp_engine_qp_rings(b->qp, &r);
	assert_int_equal(events[1][IBV_EVENT_QP_FATAL], 0);
	atomic_fetch_add(&r.sq.wq->prod, 0x7fffffffU);
	for (int i = 0; i < 4; i++)
		drive(p);
	assert_int_equal(events[1][IBV_EVENT_QP_FATAL], 1);
	assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_ERR);
	rxdp_engine_get_stats(b->e, &st);
	assert_true(st.bad_wqes >= 1);
	/* it stays so: no more work is taken from that ring */
	for (int i = 0; i < 4; i++)
		drive(p);
	assert_int_equal(events[1][IBV_EVENT_QP_FATAL], 1);
	assert_int_equal(tp_poll_cq(b->scq, 2, wc), 0);
	pair_free(p);
}

/* Too many completions for the CQ: an overflow error, not a crash */
static void test_cq_overflow(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats st;
	struct rxdp_ecq *small;
	struct ibv_wc wc[8];
	int actual = 0;

	small = rxdp_engine_create_cq(b->e, 3, &actual, NULL);
	assert_non_null(small);
	assert_int_equal(actual, 4); /* rounded up */
	assert_int_equal(rxdp_engine_destroy_cq(small), 0);
	assert_null(rxdp_engine_create_cq(b->e, 0, NULL, NULL));
	/* a's send CQ holds 4096: the 4097th completion overflows it */
	for (int i = 0; i < 4097; i++) {
		post_send1(a, IBV_WR_RDMA_WRITE, i, 0, 1, (uintptr_t)b->buf,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
		if (i % 256 == 255) {
			for (int k = 0; k < 20; k++)
				drive(p);
		}
	}
	do {
		drive(p);
		rxdp_engine_get_stats(a->e, &st);
	} while (!st.cq_overflows);
	assert_int_equal(st.cq_overflows, 1);
	/* what fit is still there, in order; then the error */
	assert_int_equal(tp_poll_cq(a->scq, 8, wc), 8);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[7].wr_id, 7);
	pair_free(p);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Peer input never crashes the engine nor writes outside registered
 * memory: b gets random well-formed packets of every opcode (PSNs near the
 * expected one, keys and addresses sometimes valid, lengths anything), and
 * corrupted ones. Whenever b's QP has failed it is connected again. Then b
 * still works.
 */
static void test_fuzz_peer_input(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 }
	};
	const uint32_t win_off = 1u << 20, win_len = 1u << 20;
	struct rxdp_emr *win;
	struct rxdp_engine_stats st;
	struct pkt_path pp;
	uint8_t pay[4096], frame[4096];
	uint64_t seed = 0x1234567;
	uint32_t epsn;
	struct ibv_wc wc;
	int reconnects = 0;

	/* only [win_off, win_off + win_len) is remotely accessible */
	assert_int_equal(rxdp_engine_dereg_mr(b->mr), 0);
	b->mr = rxdp_engine_reg_mr(b->e, b->buf, BUF, (uintptr_t)b->buf,
				   IBV_ACCESS_LOCAL_WRITE);
	win = rxdp_engine_reg_mr(
		b->e, b->buf + win_off, win_len, (uintptr_t)b->buf + win_off,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(win);
	memset(b->buf, 0x5a, BUF);
	memwire_cut(p->w, 1); /* b's answers go nowhere; a stays quiet */
	pkt_path_init(&pp, &path);
	for (int round = 0; round < 300; round++) {
		for (int i = 0; i < 8; i++) {
			struct ibv_sge s = sge(b, win_off + 4096 * i,
					       1 + rnd(&seed) % 4096);
			struct ibv_recv_wr rw = { .wr_id = i,
						  .sg_list = &s,
						  .num_sge = 1 };
			struct ibv_recv_wr *rbad;
			int err = tp_post_recv(b->qp, &rw, &rbad);

			assert_true(err == 0 || err == ENOMEM); /* RQ full */
		}
		for (int k = 0; k < 64; k++) {
			uint64_t r = rnd(&seed);
			struct pkt_sg sg = { (uintptr_t)pay, 0 };
			struct pkt_desc d = { 0 };
			int n, op;

			do { /* the RC range, Flush and Atomic Write too */
				op = rnd(&seed) % 0x1e;
			} while (!roce_opcode_flags(op));
			d.opcode = op;
			d.pkey = 0xffff;
			d.dqpn = r & 1 ? QPN_B : (uint32_t)rnd(&seed);
			/* around what b's XDP stand-in expects now */
			epsn = __atomic_load_n(&b->psn[QPN_B].epsn,
					       __ATOMIC_RELAXED);
			d.psn = (epsn + (int)(rnd(&seed) % 5) - 2) & 0xffffff;
			d.ackreq = r >> 1 & 1;
			d.rkey = r >> 2 & 1 ? rxdp_emr_rkey(win)
					    : (uint32_t)rnd(&seed);
			d.va = (uintptr_t)b->buf + win_off - 64 +
			       rnd(&seed) % (win_len + 128);
			if (r >> 3 & 1)
				d.va = rnd(&seed);
			d.dma_len = r >> 4 & 1 ? rnd(&seed) % 5000
					       : (uint32_t)rnd(&seed);
			d.swap_add = rnd(&seed);
			d.compare = rnd(&seed);
			d.syndrome = rnd(&seed);
			d.orig = rnd(&seed);
			d.flush_type = rnd(&seed) & 7;
			d.flush_level = rnd(&seed) & 3;
			d.paylen = roce_opcode_flags(op) & ROCE_OPF_PAYLOAD
					   ? rnd(&seed) % 1500
					   : 0;
			for (uint32_t i = 0; i < d.paylen; i++)
				pay[i] = rnd(&seed);
			sg.len = d.paylen;
			d.sg = &sg;
			d.nsg = 1;
			n = pkt_build(frame, sizeof(frame), &pp, &d);
			assert_true(n > 0);
			if (r >> 5 & 1) /* corrupt a byte, or cut it short */
				frame[rnd(&seed) % n] ^= 1 + rnd(&seed) % 255;
			if ((r >> 6 & 7) == 0)
				n = rnd(&seed) % n;
			memwire_inject(p->w, 1, frame, n);
		}
		rxdp_engine_progress(b->e);
		while (tp_poll_cq(b->rcq, 1, &wc) > 0)
			;
		if (rxdp_engine_qp_state(b->qp) == IBV_QPS_ERR) {
			struct rxdp_qp_attr at = { .qp_state = IBV_QPS_RESET };

			assert_int_equal(
				rxdp_engine_qp_modify(b->qp, &at, IBV_QP_STATE,
						      NULL, 0, NULL, 0),
				0);
			host_connect(p, 1, &default_opts);
			reconnects++;
		}
	}
	rxdp_engine_get_stats(b->e, &st);
	print_message("fuzz: %llu packets, %llu bad ICRC, %llu malformed, "
		      "%llu for other QPs, %d reconnects\n",
		      (unsigned long long)st.rx_packets,
		      (unsigned long long)st.rx_drop_icrc,
		      (unsigned long long)st.rx_drop_malformed,
		      (unsigned long long)st.rx_drop_no_qp, reconnects);
	assert_true(st.rx_drop_icrc > 0 && st.rx_drop_no_qp > 0);
	assert_true(reconnects > 0);
	/* nothing outside the remotely writable window changed */
	for (uint32_t i = 0; i < BUF; i++) {
		if (i == win_off) {
			i += win_len - 1;
			continue;
		}
		if (b->buf[i] != 0x5a)
			fail_msg("byte %u outside the window changed", i);
	}
	/* and b still works: a fresh pair of QPs moves data */
	memwire_cut(p->w, 0);
	{
		struct rxdp_qp_attr at = { .qp_state = IBV_QPS_RESET };

		for (int i = 0; i < 2; i++)
			assert_int_equal(rxdp_engine_qp_modify(
						 p->h[i].qp, &at, IBV_QP_STATE,
						 NULL, 0, NULL, 0),
					 0);
		rxdp_engine_progress(b->e); /* drain what is left */
		host_connect(p, 0, &default_opts);
		host_connect(p, 1, &default_opts);
	}
	fill(a->buf, 10000, 9);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 10000,
		   (uintptr_t)b->buf + win_off, rxdp_emr_rkey(win), 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + win_off, a->buf, 10000);
	assert_int_equal(rxdp_engine_dereg_mr(win), 0);
	pair_free(p);
}

/* One RDMA Write Only of len bytes of 0xee along pp, to b's QP */
static void inject_write(struct pair *p, const struct rxdp_path *path,
			 uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	static uint8_t evil[1024], frame[4096];
	struct pkt_sg sg = { (uintptr_t)evil, len };
	struct pkt_desc d = { .opcode = ROCE_RC_WRITE_ONLY,
			      .pkey = 0xffff,
			      .dqpn = QPN_B,
			      .psn = psn,
			      .va = va,
			      .rkey = rkey,
			      .dma_len = len,
			      .ackreq = 1,
			      .sg = &sg,
			      .nsg = 1,
			      .paylen = len };
	struct pkt_path pp;
	int n;

	memset(evil, 0xee, sizeof(evil));
	pkt_path_init(&pp, path);
	n = pkt_build(frame, sizeof(frame), &pp, &d);
	assert_true(n > 0);
	memwire_inject(p->w, 1, frame, n);
}

/*
 * A third host on the segment knows b's QPN, expected PSN, R_Key and
 * buffer address: its RDMA Writes from its own address, from a's address
 * with its own MAC, to another of b's addresses, or over IPv6, and a sweep
 * of PSNs, land nowhere and are counted (rx_drop_source); then a burst of
 * duplicates and out-of-sequence requests from a's own address (a replay)
 * executes nothing either. b's expected PSN has not moved: a's real
 * transfer lands byte for byte. (b's XDP stand-in is off: this is the
 * engine's own check.)
 */
static void test_forged_source(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	const struct rxdp_path a_path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
	};
	struct rxdp_path forged[4];
	const uint32_t epsn = 0xfffff0, victim = 4096, len = 1000;
	uint32_t rkey = rxdp_emr_rkey(b->mr), sent = 0;
	uint64_t va = (uintptr_t)b->buf + victim;
	struct rxdp_engine_stats st;
	struct ibv_wc wc[2];

	(void)state;
	memwire_set_filter(p->w, 1, NULL, NULL);
	for (int i = 0; i < 4; i++)
		forged[i] = a_path;
	forged[0].smac[5] = 0x66; /* another host */
	forged[0].sip[15] = 0x66;
	forged[1].smac[5] = 0x66; /* a's address, its own MAC */
	forged[2].dip[15] = 0x03; /* to another address of b */
	forged[3].ipv6 = 1; /* a's IPv4 address as IPv6 */
	memset(forged[3].sip, 0, 10);
	for (int i = 0; i < 4; i++, sent++)
		inject_write(p, &forged[i], epsn, va, rkey, len);
	for (uint32_t psn = 0; psn < 0x1000; psn++, sent++) {
		inject_write(p, &forged[psn & 1], psn_add(epsn, psn - 0x800),
			     va, rkey, 64);
		if (psn % 256 == 0)
			rxdp_engine_progress(b->e);
	}
	rxdp_engine_progress(b->e);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rx_drop_source, sent);
	for (uint32_t i = 0; i < BUF; i++)
		if (b->buf[i])
			fail_msg("a forged write landed at byte %u", i);

	/* a replay from a itself: duplicates and requests ahead of epsn */
	for (uint32_t k = 1; k < 300; k++) {
		inject_write(p, &a_path, psn_add(epsn, -k), va, rkey, len);
		inject_write(p, &a_path, psn_add(epsn, k * 977), va, rkey, len);
	}
	rxdp_engine_progress(b->e);
	for (uint32_t i = 0; i < BUF; i++)
		if (b->buf[i])
			fail_msg("a replayed write landed at byte %u", i);
	rxdp_engine_get_stats(b->e, &st);
	assert_int_equal(st.rx_drop_source, sent);
	assert_true(st.rx_duplicates >= 299 && st.rx_drop_psn >= 299);
	assert_int_equal(rxdp_engine_qp_state(b->qp), IBV_QPS_RTS);

	/* the real transfer, to the same place */
	fill(a->buf, len, 77);
	post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, va, rkey, 0,
		   IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, wc, 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_memory_equal(b->buf + victim, a->buf, len);
	pair_free(p);
}

/*
 * A request held that the responder never takes: a forged one, from the
 * requester's own address, at a PSN inside a read's range (no requester
 * sends one there). Once the read passes it, it goes: it is never run,
 * and a later gap's repair ends with an ACK, not a NAK for a gap that a
 * stale copy would seem to leave.
 */
static void test_sr_stale_hold(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	const struct rxdp_path a_path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
	};
	uint8_t *victim = b->buf + BUF - 4096;
	struct rxdp_engine_stats sa, sb;
	struct ibv_wc wc;
	struct fault f;

	(void)state;
	warm_up(p);
	/* b expects A_PSN0 + 1; the read below takes + 1 .. + 3 */
	inject_write(p, &a_path, psn_add(A_PSN0, 3), (uintptr_t)victim,
		     rxdp_emr_rkey(b->mr), 64);
	rxdp_engine_progress(b->e);
	rxdp_engine_get_stats(b->e, &sb);
	assert_int_equal(sb.rx_held, 1);
	post_send1(a, IBV_WR_RDMA_READ, 1, 0, 3 * MTU, (uintptr_t)b->buf,
		   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	/* the Write's PSNs: + 4 .. + 67 */
	fault_set(p, 1, &f, FAULT_REQ, psn_add(A_PSN0, 24), psn_add(A_PSN0, 24),
		  1);
	write_n(p, 64, 15);
	stats_of(p, &sa, &sb);
	assert_int_equal(f.dropped, 1);
	assert_int_equal(sa.sr_resends, 1);
	assert_int_equal(sa.go_backs, 0);
	/* the forged request's (a had sent nothing past it) and the gap's */
	assert_int_equal(sb.seq_naks_sent, 2);
	for (int i = 0; i < 64; i++)
		assert_int_not_equal(victim[i], 0xee);
	pair_free(p);
}

/* --- congestion: ECN, CNPs, DCQCN (engine README.md, "Congestion") ---- */

/* Mark an IPv4 frame CE as a switch does: the ECN bits, the header checksum */
static void ce_mark(uint8_t *frame)
{
	uint8_t *l3 = frame + PKT_ETH_LEN;
	uint32_t sum = 0;

	l3[1] |= PKT_ECN_CE;
	l3[10] = l3[11] = 0;
	for (int i = 0; i < PKT_IP4_LEN; i += 2)
		sum += (uint32_t)(l3[i] << 8 | l3[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	l3[10] = (uint8_t)(sum >> 8);
	l3[11] = (uint8_t)sum;
}

/* What a side of the wire saw (cc_filter), in front of xdp_like */
struct cc_watch {
	struct rxdp_qp_psn *psn;
	bool mark; /* CE on every RoCE frame but CNPs */
	uint32_t marked, ect; /* frames marked; frames that came ECT(0) */
	uint64_t np_next; /* the rule, computed here: CNPs expected */
	uint32_t cnps_expected;
	uint32_t cnps, cnps_bad; /* CNPs seen, those with a field wrong */
	uint64_t cnp_gap_min; /* ns between two CNPs, the least */
	uint64_t cnp_at;
	uint64_t data_bytes, first_at, last_at;
	uint32_t last_len;
};

static int cc_filter(void *arg, uint8_t *frame, uint32_t len)
{
	struct cc_watch *w = arg;
	uint64_t now = vclock_read(NULL);
	uint8_t copy[4096];
	struct pkt_info pi;

	memcpy(copy, frame, len);
	if (pkt_parse(copy, len, &pi))
		return xdp_like(w->psn, frame, len);
	if (pi.opcode == ROCE_CNP) {
		/* A17.9.3; DSCP np_cnp_dscp (48), not ECN-capable */
		static const uint8_t zero[16];

		if (bth_qpn(pi.bth) != QPN_A || !bth_becn(pi.bth) ||
		    bth_psn(pi.bth) || bth_pad(pi.bth) || bth_se(pi.bth) ||
		    bth_ackreq(pi.bth) || pi.paylen || pi.ecn ||
		    pi.l3[1] >> 2 != 48 ||
		    memcmp((uint8_t *)pi.bth + sizeof(struct roce_bth), zero,
			   16))
			w->cnps_bad++;
		if (w->cnps && now - w->cnp_at < w->cnp_gap_min)
			w->cnp_gap_min = now - w->cnp_at;
		w->cnp_at = now;
		w->cnps++;
		return xdp_like(w->psn, frame, len);
	}
	if (pi.ecn == PKT_ECN_ECT0)
		w->ect++;
	if (w->mark) {
		ce_mark(frame);
		w->marked++;
		if (now >= w->np_next) {
			w->cnps_expected++;
			w->np_next = now + 4000;
		}
	}
	if (pi.paylen) {
		if (!w->data_bytes)
			w->first_at = now;
		w->data_bytes += len;
		w->last_at = now;
		w->last_len = len;
	}
	return xdp_like(w->psn, frame, len);
}

static void cc_watch(struct pair *p, struct cc_watch w[2])
{
	for (int i = 0; i < 2; i++) {
		w[i] = (struct cc_watch){ .psn = p->h[i].psn,
					  .cnp_gap_min = UINT64_MAX };
		memwire_set_filter(p->w, i, cc_filter, &w[i]);
	}
}

/* RDMA Writes of len bytes, n of them, a to b; waits for the last */
static void cc_writes(struct pair *p, int n, uint32_t len)
{
	struct host *a = &p->h[0], *b = &p->h[1];
	struct ibv_wc wc;

	for (int i = 0; i < n; i++)
		post_send1(a, IBV_WR_RDMA_WRITE, i, 0, len,
			   (uintptr_t)b->buf + (uint64_t)i * len,
			   rxdp_emr_rkey(b->mr), 0,
			   i == n - 1 ? IBV_SEND_SIGNALED : 0);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

/*
 * The notification point: every frame to b marked CE -> CNPs to a's QP,
 * one per np_min_time_between_cnps (4 us of the engines' clock) while they
 * come, in A17.9.3's format; a takes each (rp_cnp_handled) and its rate
 * drops. Packets went ECT(0).
 */
static void test_cc_notification_point(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_qp_cc cc;
	struct cc_watch w[2];

	cc_watch(p, w);
	w[1].mark = true;
	cc_writes(p, 32, 16 * MTU);
	print_message("CE: %u marked, %u CNPs (%u expected), %llu ns apart "
		      "at least\n",
		      w[1].marked, w[0].cnps, w[1].cnps_expected,
		      (unsigned long long)w[0].cnp_gap_min);
	assert_true(w[1].marked >= 32 * 16);
	assert_int_equal(w[1].ect, w[1].marked);
	assert_int_equal(w[0].cnps_bad, 0);
	assert_true(w[0].cnps > 1);
	assert_true(w[0].cnp_gap_min >= 4000);
	assert_int_equal(w[0].cnps, w[1].cnps_expected);
	assert_int_equal(hwc(b, RXDP_HWC_NP_ECN_MARKED), w[1].marked);
	assert_int_equal(hwc(b, RXDP_HWC_NP_CNP_SENT), w[0].cnps);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), w[0].cnps);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_IGNORED), 0);
	/* a marked no ACK: b got none */
	assert_int_equal(hwc(a, RXDP_HWC_NP_CNP_SENT), 0);
	assert_int_equal(w[1].cnps, 0);
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_true(cc.rate_kbps < 100000000);
	pair_free(p);
}

/* DCQCN's parameters where the first CNP sets the rate, and nothing raises it */
static void cc_params_fixed(struct eng_cc_params *cp, uint32_t mbps)
{
	eng_cc_params_default(cp);
	cp->rp_rate_to_set_on_first_cnp = mbps;
	cp->rp_time_reset = 0;
	cp->rp_byte_reset = 0;
}

/*
 * A CNP to a's QP from src (10.0.0.src), as ConnectX sends it: the fields
 * of scapy's (golden.h "cnp", which test_pkt rebuilds bit-exactly)
 */
static void cc_inject_cnp(struct pair *p, uint8_t src)
{
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 2 },
		.dmac = { 2, 0, 0, 0, 0, 1 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, src },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.hop_limit = 64,
		.traffic_class = 48 << 2,
		.udp_sport = 0xc123,
	};
	struct pkt_desc d = {
		.opcode = ROCE_CNP, .becn = 1, .pkey = 0xffff, .dqpn = QPN_A
	};
	struct pkt_path pp;
	uint8_t frame[256];
	int n;

	pkt_path_init(&pp, &path);
	n = pkt_build(frame, sizeof(frame), &pp, &d);
	assert_true(n > 0);
	memwire_inject(p->w, 0, frame, (uint32_t)n);
	drive(p);
}

/*
 * The reaction point: a CNP from the peer cuts a's rate by the amount
 * computed by hand (the line rate 100 Gbit/s, alpha 1023); one from another
 * address is ignored; the next, 10 us later, cuts with alpha decayed.
 */
static void test_cc_reaction_point(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0];
	/* its slot of qp_psn, where bpftool reads the rate and alpha */
	const struct rxdp_qp_psn *slot = &a->psn[QPN_A & RXDP_QP_INDEX_MASK];
	struct rxdp_engine_qp_cc cc;

	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(cc.rate_kbps, 100000000);
	assert_false(cc.paced);
	assert_int_equal(slot->cc_rate_kbps, 100000000);
	cc_inject_cnp(p, 2);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), 1);
	/* 100,000,000 * 1023 / 2048 = 49,951,171.9: 49,951,171 off */
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(cc.rate_kbps, 50048829);
	assert_int_equal(cc.target_kbps, 100000000);
	assert_int_equal(cc.alpha, 1023);
	assert_true(cc.paced);
	assert_int_equal(slot->cc_rate_kbps, 50048829);
	assert_int_equal(slot->cc_alpha, 1023);
	/* not the peer: ignored, nothing moves */
	cc_inject_cnp(p, 9);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_IGNORED), 1);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), 1);
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(cc.rate_kbps, 50048829);
	assert_int_equal(slot->cc_rate_kbps, 50048829);
	/*
	 * 10 us after the first (the wrong one's drive and 9 more): alpha's
	 * 10 periods, the first with the CNP: 1023, then 9 decays
	 * (a * 1019 / 1024): 1018 1013 1008 1003 998 993 988 983 978. The cut:
	 * 50,048,829 * 978 / 2048 = 23,900,270.9; 26,148,559 left; the target
	 * stays (no increase since).
	 */
	for (int i = 0; i < 8; i++)
		drive(p);
	cc_inject_cnp(p, 2);
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), 2);
	assert_int_equal(cc.alpha, 978);
	assert_int_equal(cc.rate_kbps, 26148559);
	assert_int_equal(cc.target_kbps, 100000000);
	assert_int_equal(slot->cc_rate_kbps, 26148559);
	assert_int_equal(slot->cc_alpha, 978);
	pair_free(p);
}

/* --- a QP handed to a successor (takeover.c) ------------------------------ */

/* What a host's owner holds, as a client of rxdpd does: its CQs' and QP's rings */
struct tk_rings {
	struct rxdp_hca_cq *scq, *rcq;
	void *qp;
	struct rxdp_hca_wq *srq; /* with o->srq: its header, then its ring */
	uint32_t srq_limit; /* the SRQ made with its limit armed at this */
	struct rxdp_eqp_init init;
};

#define TK_SRQ_WR 64
#define TK_SRQ_SGE 4
#define TK_SRQ_LIMIT 8

#define TK_CQ 4096

/* Host i's CQs and QP made on rings of r (an engine's objects on them) */
static void tk_objects(struct pair *p, int i, struct tk_rings *r)
{
	struct host *a = &p->h[i];

	if (r->srq) {
		struct ibv_srq_attr sa = { .max_wr = TK_SRQ_WR,
					   .max_sge = TK_SRQ_SGE,
					   .srq_limit = r->srq_limit };

		a->srq = rxdp_engine_create_srq(a->e, NULL, &sa, r->srq,
						r->srq + 1, a);
		assert_non_null(a->srq);
		r->init.srq = a->srq;
	}
	a->scq = rxdp_engine_create_cq_shared(a->e, r->scq, TK_CQ, NULL);
	a->rcq = rxdp_engine_create_cq_shared(a->e, r->rcq, TK_CQ, NULL);
	assert_non_null(a->scq);
	assert_non_null(a->rcq);
	r->init.send_cq = a->scq;
	r->init.recv_cq = a->rcq;
	a->qp = rxdp_engine_create_qp(a->e, &r->init);
	assert_non_null(a->qp);
	host_connect(p, i, &default_opts);
}

/* Host i's QP and CQs, made again on rings the test holds */
static void tk_rings_new(struct pair *p, int i, struct tk_rings *r)
{
	struct host *a = &p->h[i];
	struct ibv_qp_cap cap = { .max_send_wr = default_opts.sq,
				  .max_recv_wr = default_opts.rq,
				  .max_send_sge = 8,
				  .max_recv_sge = 8,
				  .max_inline_data = 256 };
	struct rxdp_hca_qp_layout lay;
	struct rxdp_hca_qp *sh;
	uint32_t ss, rs;

	assert_int_equal(rxdp_engine_destroy_qp(a->qp), 0);
	assert_int_equal(rxdp_engine_destroy_cq(a->scq), 0);
	assert_int_equal(rxdp_engine_destroy_cq(a->rcq), 0);
	r->srq = NULL;
	if (a->srq) {
		uint32_t stride = rxdp_hca_rwqe_stride(TK_SRQ_SGE);

		assert_int_equal(rxdp_engine_destroy_srq(a->srq), 0);
		r->srq = calloc(1, sizeof(*r->srq) + TK_SRQ_WR * stride);
		assert_non_null(r->srq);
		r->srq->size = TK_SRQ_WR;
		r->srq->stride = stride;
		r->srq_limit = TK_SRQ_LIMIT; /* as the test's pairs have it */
	}
	assert_int_equal(rxdp_engine_qp_caps(&cap), 0);
	ss = rxdp_hca_swqe_stride(cap.max_send_sge, cap.max_inline_data);
	rs = rxdp_hca_rwqe_stride(cap.max_recv_sge);
	rxdp_hca_qp_layout(cap.max_send_wr, ss, cap.max_recv_wr, rs, &lay);
	r->scq = calloc(1, rxdp_hca_cq_bytes(TK_CQ));
	r->rcq = calloc(1, rxdp_hca_cq_bytes(TK_CQ));
	r->qp = aligned_alloc(4096, (lay.bytes + 4095) & ~(size_t)4095);
	assert_non_null(r->scq);
	assert_non_null(r->rcq);
	assert_non_null(r->qp);
	memset(r->qp, 0, lay.bytes);
	sh = r->qp;
	sh->sq.size = cap.max_send_wr;
	sh->sq.stride = ss;
	sh->rq.size = cap.max_recv_wr;
	sh->rq.stride = rs;
	r->init = (struct rxdp_eqp_init){ .sh = sh,
					  .sh_sq = (char *)r->qp + lay.sq_off,
					  .sh_rq = (char *)r->qp + lay.rq_off,
					  .qpn = i ? QPN_B : QPN_A,
					  .qp_type = IBV_QPT_RC,
					  .cap = cap };
	tk_objects(p, i, r);
}

/*
 * Host i's engine stops where it is, as rxdpd hands over to a successor: its
 * QP's state saved, its engine gone (nothing flushed, nothing completed);
 * a new engine on the same wire, its CQs, MR (with its key) and QP made
 * again on the same rings and the state restored. The saved bytes, with
 * their version changed, are refused first.
 */
static void tk_takeover(struct pair *p, int i, struct tk_rings *r,
			const struct qp_opts *o)
{
	struct host *a = &p->h[i];
	struct rxdp_engine_config cfg = host_cfg(p, i, o);
	uint32_t key = rxdp_emr_lkey(a->mr);
	__u64 dev[RXDP_HWC_MAX];
	long n, ns = 0;
	uint8_t *st, *bad, srq_st[64];
	char why[128];

	/* a running engine's state would move on under the save */
	assert_int_equal(rxdp_engine_qp_save(a->qp, NULL, 0), -EAGAIN);
	rxdp_engine_halt(a->e);
	n = rxdp_engine_qp_save(a->qp, NULL, 0);
	st = malloc((size_t)n);
	bad = malloc((size_t)n);
	assert_true(n > 0);
	assert_non_null(st);
	assert_non_null(bad);
	n = rxdp_engine_qp_save(a->qp, st, (size_t)n);
	assert_true(n > 0);
	if (a->srq) {
		ns = rxdp_engine_srq_save(a->srq, srq_st, sizeof(srq_st));
		assert_true(ns > 0 && ns <= (long)sizeof(srq_st));
	}
	rxdp_engine_hw_counters(a->e, NULL, dev);
	assert_int_equal(rxdp_engine_destroy_qp(a->qp), 0);
	assert_int_equal(rxdp_engine_dereg_mr(a->mr), 0);
	assert_int_equal(rxdp_engine_destroy_cq(a->scq), 0);
	assert_int_equal(rxdp_engine_destroy_cq(a->rcq), 0);
	if (a->srq)
		assert_int_equal(rxdp_engine_destroy_srq(a->srq), 0);
	rxdp_engine_destroy(a->e);
	/*
	 * The blackout: the peer goes on alone and what it sends meanwhile
	 * is lost (what was on its way before is not: a socket's RX ring
	 * keeps it for the successor)
	 */
	memwire_cut(p->w, 1);
	for (int k = 0; k < 5; k++) {
		if (p->threads) {
			usleep(2000);
			continue;
		}
		rxdp_engine_progress(p->h[!i].e);
		__atomic_add_fetch(&vclock, VCLOCK_TICK, __ATOMIC_RELAXED);
	}
	memwire_cut(p->w, 0);

	a->e = rxdp_engine_create(&cfg);
	assert_non_null(a->e);
	rxdp_engine_hw_counters_set(a->e, dev);
	r->srq_limit = 0; /* the saved state arms it, if it was */
	a->mr = rxdp_engine_reg_mr(
		a->e, a->buf, BUF, (uintptr_t)a->buf,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(a->mr);
	assert_int_equal(rxdp_engine_mr_set_key(a->mr, key), 0);
	assert_int_equal(rxdp_emr_lkey(a->mr), key);
	tk_objects(p, i, r);
	if (a->srq) { /* before its QP, which carries the receive it fills */
		srq_st[4] = 99; /* the version's low byte */
		assert_int_equal(rxdp_engine_srq_restore(a->srq, srq_st,
							 (size_t)ns, why,
							 sizeof(why)),
				 -EINVAL);
		assert_non_null(strstr(why, "version 99"));
		srq_st[4] = 1;
		assert_int_equal(rxdp_engine_srq_restore(a->srq, srq_st,
							 (size_t)ns, why,
							 sizeof(why)),
				 0);
	}
	/* a version this engine does not read: refused, one reason */
	memcpy(bad, st, (size_t)n);
	((uint32_t *)bad)[1] = 99;
	assert_int_equal(rxdp_engine_qp_restore(a->qp, bad, (size_t)n, why,
						sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "version 99"));
	assert_int_equal(rxdp_engine_qp_restore(a->qp, st, (size_t)n, why,
						sizeof(why)),
			 0);
	free(st);
	free(bad);
}

/* Both QPs still in RTS, no event at either end; the pair and r freed */
static void tk_end(struct pair *p, struct tk_rings *r)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rxdp_engine_qp_state(p->h[i].qp), IBV_QPS_RTS);
		for (int k = 0; k < 32; k++)
			assert_int_equal(events[i][k], 0);
	}
	pair_free(p);
	free(r->scq);
	free(r->rcq);
	free(r->qp);
	free(r->srq);
}

/*
 * A stream handed over mid-flight: a posts 48 Writes of 16 packets to b
 * and 8 Reads of 8 packets from b, the engines run a few rounds (some
 * Writes acknowledged, some in flight, some not sent), a's engine is
 * replaced by a successor that restores the QP, and the stream goes on:
 * every WR completes once, in order, successfully; every byte is where it
 * belongs at both ends; neither side saw an error or an event; a's
 * counters went on from the predecessor's.
 */
static void test_takeover_mid_stream(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	enum {
		NW = 48,
		NR = 8,
		WLEN = 16 * MTU,
		RLEN = 8 * MTU
	};
	struct ibv_wc wc[NW + NR];
	struct rxdp_engine_stats sa;
	struct tk_rings r;
	uint64_t sent;

	tk_rings_new(p, 0, &r);
	warm_up(p);
	fill(a->buf, NW * WLEN, 7);
	fill(b->buf + BUF / 2, NR * RLEN, 9);
	tp_hold = true;
	for (uint32_t i = 0; i < NW; i++)
		post_send1(a, IBV_WR_RDMA_WRITE, i, i * WLEN, WLEN,
			   (uintptr_t)b->buf + i * WLEN, rxdp_emr_rkey(b->mr),
			   0, IBV_SEND_SIGNALED);
	for (uint32_t i = 0; i < NR; i++)
		post_send1(a, IBV_WR_RDMA_READ, NW + i, BUF / 2 + i * RLEN,
			   RLEN, (uintptr_t)b->buf + BUF / 2 + i * RLEN,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
	tp_hold = false;
	for (int i = 0; i < 2; i++)
		drive(p);
	sent = hwc(a, RXDP_HWC_SENT_PKTS);
	/* mid-stream: some acknowledged, some sent and not yet, some not sent */
	print_message("handed over at una %#x, next %#x (from %#x to %#x)\n",
		      a->psn[QPN_A & RXDP_QP_INDEX_MASK].una_psn,
		      a->psn[QPN_A & RXDP_QP_INDEX_MASK].next_psn,
		      psn_add(A_PSN0, 1),
		      psn_add(A_PSN0, 1 + NW * 16 + NR * 8));
	assert_true(psn_after(a->psn[QPN_A & RXDP_QP_INDEX_MASK].una_psn,
			      psn_add(A_PSN0, 16)));
	assert_true(psn_after(a->psn[QPN_A & RXDP_QP_INDEX_MASK].next_psn,
			      a->psn[QPN_A & RXDP_QP_INDEX_MASK].una_psn));
	assert_true(psn_before(a->psn[QPN_A & RXDP_QP_INDEX_MASK].next_psn,
			       psn_add(A_PSN0, 1 + NW * 16 + NR * 8)));
	tk_takeover(p, 0, &r, &default_opts);
	assert_true(hwc(a, RXDP_HWC_SENT_PKTS) >= sent);
	wait_wc(p, a->scq, wc, NW + NR);
	for (uint32_t i = 0; i < NW + NR; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	expect_no_wc(p, a->scq);
	rxdp_engine_get_stats(a->e, &sa);
	print_message("the successor: %llu retransmitted, %llu probes, %llu "
		      "timer expiries\n",
		      (unsigned long long)sa.retransmits,
		      (unsigned long long)sa.tlp_probes,
		      (unsigned long long)(sa.rto_expiries + sa.timeouts));
	/* what the handover lost is resent, not the window */
	assert_true(sa.retransmits < 64);
	assert_memory_equal(b->buf, a->buf, NW * WLEN);
	assert_memory_equal(a->buf + BUF / 2, b->buf + BUF / 2, NR * RLEN);
	tk_end(p, &r);
}

/*
 * The same with progress threads, as rxdpd runs engines: a's thread is
 * halted while it streams 256 Writes of 8 packets to b, whose thread goes
 * on alone through the handover; a's successor runs a thread of its own.
 * Every Write completes once and in order, every byte lands, no event.
 */
static void test_takeover_threaded(void **state)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a, *b;
	enum {
		NW = 256,
		WLEN = 8 * MTU
	};
	struct ibv_wc *wc = calloc(NW, sizeof(*wc));
	struct tk_rings r;

	assert_non_null(wc);
	o.threads = 1;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	tk_rings_new(p, 0, &r);
	warm_up(p);
	fill(a->buf, NW * WLEN, 13);
	for (uint32_t i = 0; i < NW; i++)
		post_send1(a, IBV_WR_RDMA_WRITE, i, i * WLEN, WLEN,
			   (uintptr_t)b->buf + i * WLEN, rxdp_emr_rkey(b->mr),
			   0, IBV_SEND_SIGNALED);
	usleep(1000);
	tk_takeover(p, 0, &r, &o);
	wait_wc(p, a->scq, wc, NW);
	for (uint32_t i = 0; i < NW; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	assert_memory_equal(b->buf, a->buf, NW * WLEN);
	free(wc);
	tk_end(p, &r);
}

/*
 * The responder handed over mid-stream: a sends 48 Sends of 16 packets to
 * b, every third followed by a fetch-and-add on one word of b's; b's
 * engine is replaced after a few rounds (its expected PSN, MSN, the
 * receive it was filling and its atomic replay cache carried). Every Send
 * lands once, whole and in order, in its receive; every fetch-and-add is
 * done exactly once (the word ends at their count, each one's result its
 * rank); no error, no event at either end.
 */
static void test_takeover_responder(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	enum {
		NS = 48,
		NA = NS / 3,
		LEN = 16 * MTU
	};
	struct ibv_wc wc[NS + NA];
	uint64_t *word = (uint64_t *)(b->buf + BUF - 8);
	uint64_t *res = (uint64_t *)(a->buf + BUF / 2);
	struct fault fa, fb;
	struct tk_rings r;
	uint32_t k = 0, epsn, base = psn_add(A_PSN0, 1);

	tk_rings_new(p, 1, &r);
	warm_up(p);
	*word = 0;
	fill(a->buf, NS * LEN, 11);
	for (uint32_t i = 0; i < NS; i++)
		post_recv1(b, i, i * LEN, LEN);
	tp_hold = true;
	for (uint32_t i = 0; i < NS; i++) {
		post_send1(a, IBV_WR_SEND, k++, i * LEN, LEN, 0, 0, 0,
			   IBV_SEND_SIGNALED);
		if (i % 3 == 2)
			post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, k++,
				    BUF / 2 + 8 * (i / 3), (uintptr_t)word,
				    rxdp_emr_rkey(b->mr), 1, 0);
	}
	tp_hold = false;
	/*
	 * (PSNs from base: 3 Sends of 16 and a fetch-and-add, 49 a group.)
	 * The first two fetch-and-adds' answers (base + 48, + 97) are lost on
	 * their way to a, and b takes the eighth Send's first half only
	 * (base + 114 to + 121; the rest comes later): the successor answers
	 * the fetch-and-adds asked again from its replay cache and finishes
	 * that Send's receive
	 */
	fault_set(p, 1, &fb, FAULT_REQ, psn_add(base, 122), psn_add(base, 129),
		  1);
	fault_set(p, 0, &fa, FAULT_ACK, psn_add(base, 48), psn_add(base, 97),
		  1);
	drive(p);
	epsn = b->psn[QPN_B & RXDP_QP_INDEX_MASK].epsn;
	print_message("handed over at b's epsn %#x (from %#x to %#x)\n", epsn,
		      base, psn_add(base, NS * 16 + NA));
	/* inside the eighth Send, its first packets taken */
	assert_true(psn_after(epsn, psn_add(base, 114)));
	assert_true(psn_before(epsn, psn_add(base, 130)));
	tk_takeover(p, 1, &r, &default_opts);
	memwire_set_filter(p->w, 0, xdp_like, a->psn);
	memwire_set_filter(p->w, 1, xdp_like, b->psn);
	print_message("dropped: %llu requests to b, %llu answers to a\n",
		      (unsigned long long)fb.dropped,
		      (unsigned long long)fa.dropped);
	wait_wc(p, a->scq, wc, NS + NA);
	for (uint32_t i = 0; i < NS + NA; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	wait_wc(p, b->rcq, wc, NS);
	for (uint32_t i = 0; i < NS; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
		assert_int_equal(wc[i].byte_len, LEN);
	}
	expect_no_wc(p, b->rcq);
	assert_memory_equal(b->buf, a->buf, NS * LEN);
	assert_int_equal(*word, NA);
	for (uint32_t i = 0; i < NA; i++)
		assert_int_equal(res[i], i);
	tk_end(p, &r);
}

/*
 * A requester handed over in an RNR wait: b has no receive posted, so a's
 * Send of 4 packets draws an RNR NAK and a waits its RNR timer; a's engine
 * is replaced then (the wait, its PSN and the retries left carried), b
 * posts the receive, and the Send completes once, whole, with no error
 * and no event; the RNR retries counted on.
 */
static void test_takeover_rnr_wait(void **state)
{
	struct pair *p = pair_new(&default_opts);
	struct host *a = &p->h[0], *b = &p->h[1];
	struct rxdp_engine_stats sb;
	struct tk_rings r;
	struct ibv_wc wc;
	uint64_t rnr0;

	tk_rings_new(p, 0, &r);
	warm_up(p);
	fill(a->buf, 4 * MTU, 21);
	post_send1(a, IBV_WR_SEND, 7, 0, 4 * MTU, 0, 0, 0, IBV_SEND_SIGNALED);
	/* until a has the RNR NAK and waits */
	do {
		drive(p);
		rxdp_engine_get_stats(b->e, &sb);
	} while (!hwc(a, RXDP_HWC_RCVD_RNR));
	rnr0 = hwc(a, RXDP_HWC_RCVD_RNR);
	print_message("handed over in an RNR wait (%llu RNR NAKs sent)\n",
		      (unsigned long long)sb.rnr_naks_sent);
	tk_takeover(p, 0, &r, &default_opts);
	assert_true(hwc(a, RXDP_HWC_RCVD_RNR) >= rnr0);
	post_recv1(b, 70, 0, 4 * MTU);
	wait_wc(p, a->scq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 7);
	wait_wc(p, b->rcq, &wc, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 70);
	assert_int_equal(wc.byte_len, 4 * MTU);
	assert_memory_equal(b->buf, a->buf, 4 * MTU);
	expect_no_wc(p, a->scq);
	tk_end(p, &r);
}

/*
 * A responder on an SRQ handed over mid-stream: b takes its receives from
 * an SRQ of 64 (its limit event armed at 8), 40 posted; a sends 40 Sends
 * of 8 packets; b's engine is replaced inside the eleventh (the SRQ's
 * place carried, and the receive the QP was filling). Every
 * Send lands once, whole, in order, in the SRQ's receives in posting
 * order; the limit event, still armed, fires once in the successor when
 * fewer than 8 are left; no error, no other event. The SRQ state with a
 * version it does not read is refused.
 */
static void test_takeover_srq(void **state)
{
	struct qp_opts o = default_opts;
	struct pair *p;
	struct host *a, *b;
	enum {
		NS = 40,
		LEN = 8 * MTU
	};
	struct ibv_wc wc[NS];
	struct tk_rings r;
	struct fault fb;
	uint32_t epsn, base = psn_add(A_PSN0, 1);

	o.srq = 1;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	tk_rings_new(p, 1, &r);
	warm_up(p);
	fill(a->buf, NS * LEN, 17);
	for (uint32_t i = 0; i < NS; i++) {
		struct ibv_sge s = sge(b, i * LEN, LEN);
		struct ibv_recv_wr rw = { .wr_id = 100 + i,
					  .sg_list = &s,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		assert_int_equal(tp_post_srq_recv(b->srq, &rw, &bad), 0);
	}
	tp_hold = true;
	for (uint32_t i = 0; i < NS; i++)
		post_send1(a, IBV_WR_SEND, i, i * LEN, LEN, 0, 0, 0,
			   IBV_SEND_SIGNALED);
	tp_hold = false;
	/* b takes the eleventh Send's first half only (the rest later) */
	fault_set(p, 1, &fb, FAULT_REQ, psn_add(base, 84), psn_add(base, 147),
		  1);
	drive(p);
	epsn = b->psn[QPN_B & RXDP_QP_INDEX_MASK].epsn;
	print_message("handed over at b's epsn %#x (from %#x to %#x)\n", epsn,
		      base, psn_add(base, NS * 8));
	assert_int_equal(epsn, psn_add(base, 84));
	assert_int_equal(events[1][IBV_EVENT_SRQ_LIMIT_REACHED], 0);
	tk_takeover(p, 1, &r, &o);
	memwire_set_filter(p->w, 0, xdp_like, a->psn);
	memwire_set_filter(p->w, 1, xdp_like, b->psn);
	wait_wc(p, a->scq, wc, NS);
	for (uint32_t i = 0; i < NS; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, i);
	}
	wait_wc(p, b->rcq, wc, NS);
	for (uint32_t i = 0; i < NS; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 100 + i);
		assert_int_equal(wc[i].byte_len, LEN);
	}
	expect_no_wc(p, b->rcq);
	assert_memory_equal(b->buf, a->buf, NS * LEN);
	assert_int_equal(events[1][IBV_EVENT_SRQ_LIMIT_REACHED], 1);
	events[1][IBV_EVENT_SRQ_LIMIT_REACHED] = 0;
	tk_end(p, &r);
}

/*
 * The knobs: ecn_off sends the traffic class as the path gives it (not
 * ECT(0)); the algorithm off sends no CNP for CE and takes none (rp_cnp_ignored)
 */
static void test_cc_off(void **state)
{
	struct qp_opts o = default_opts;
	struct rxdp_engine_qp_cc cc;
	struct cc_watch w[2];
	struct pair *p;

	o.ecn_off = 1;
	o.cc_algo = ENG_CC_OFF;
	p = pair_new(&o);
	cc_watch(p, w);
	w[1].mark = true;
	cc_writes(p, 4, 16 * MTU);
	assert_true(w[1].marked >= 4 * 16);
	assert_int_equal(w[1].ect, 0);
	assert_int_equal(w[0].cnps, 0);
	assert_int_equal(hwc(&p->h[1], RXDP_HWC_NP_ECN_MARKED), 0);
	cc_inject_cnp(p, 2);
	assert_int_equal(hwc(&p->h[0], RXDP_HWC_RP_CNP_IGNORED), 1);
	assert_int_equal(hwc(&p->h[0], RXDP_HWC_RP_CNP_HANDLED), 0);
	rxdp_engine_qp_cc(p->h[0].qp, &cc);
	assert_false(cc.paced);
	pair_free(p);
}

/*
 * A QP paced slowly still hears from its responder often: at 10 Mbit/s a
 * 1 KiB packet leaves every 0.8 ms, so AckReq every 64 packets would leave
 * 50 ms without an ACK, and the retransmission timer (0.5 ms at least)
 * would resend what is merely waiting for its turn. A paced QP asks for an
 * ACK whenever its last request for one is ENG_PACED_ACKREQ_NS old: 64
 * packets paced go without a single retransmission, every byte arriving.
 */
static void test_cc_paced_acks(void **state)
{
	struct rxdp_engine_stats es;
	struct eng_cc_params cp;
	struct qp_opts o = default_opts;
	struct host *a, *b;
	struct pair *p;
	const uint32_t len = 64 * MTU;

	cc_params_fixed(&cp, 10);
	o.cc = &cp;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	/* an RTT sample first, as any QP has: its timeout follows the path */
	cc_writes(p, 1, MTU);
	cc_inject_cnp(p, 2);
	fill(a->buf, len, 43);
	cc_writes(p, 1, len);
	assert_memory_equal(b->buf, a->buf, len);
	rxdp_engine_get_stats(a->e, &es);
	print_message("64 packets at 10 Mbit/s: %llu resent, %llu timer "
		      "expiries, %llu tail-loss probes\n",
		      (unsigned long long)es.retransmits,
		      (unsigned long long)es.rto_expiries,
		      (unsigned long long)es.tlp_probes);
	assert_int_equal(es.retransmits, 0);
	assert_int_equal(es.rto_expiries + es.timeouts + es.tlp_probes, 0);
	pair_free(p);
}

/*
 * The loss window's floor follows the QP's rate: a timeout takes an
 * unpaced QP's window to ENG_CWND_MIN (32), but one paced to 10 Mbit/s
 * (a round trip of 1-2 us carries no packet at that rate) to 2. Every
 * byte still arrives once the wire is back.
 */
static void test_cc_window_floor(void **state)
{
	struct eng_cc_params cp;
	struct qp_opts o = default_opts;

	cc_params_fixed(&cp, 10);
	o.cc = &cp;
	for (int paced = 0; paced < 2; paced++) {
		struct rxdp_engine_qp_cc cc;
		struct rxdp_engine_stats sa;
		struct host *a, *b;
		struct pair *p = pair_new(&o);
		const uint32_t len = 4 * MTU;
		struct ibv_wc wc;

		a = &p->h[0];
		b = &p->h[1];
		cc_writes(p, 1, MTU); /* an RTT sample */
		if (paced)
			cc_inject_cnp(p, 2);
		fill(a->buf, len, 44 + (uint32_t)paced);
		memwire_cut(p->w, 1);
		post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, len, (uintptr_t)b->buf,
			   rxdp_emr_rkey(b->mr), 0, IBV_SEND_SIGNALED);
		do {
			drive(p);
			rxdp_engine_get_stats(a->e, &sa);
		} while (!sa.rto_expiries);
		rxdp_engine_qp_cc(a->qp, &cc);
		print_message("%s: the window after a timeout: %u packets\n",
			      paced ? "paced to 10 Mbit/s" : "not paced",
			      cc.cwnd);
		assert_int_equal(cc.cwnd, paced ? 2 : 32);
		memwire_cut(p->w, 0);
		wait_wc(p, a->scq, &wc, 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_memory_equal(b->buf, a->buf, len);
		pair_free(p);
	}
}

/*
 * The delay algorithm end to end: a's rate moves by the RTT of the wire,
 * never by a CNP. With delay_target 200 us of the engines' clock: a wire
 * of no latency leaves the rate at the line rate, unpaced; 400 us towards
 * b makes every sample exceed it, and a's rate falls (paced); a CNP from
 * the peer is ignored; back to no latency, each sample raises the rate
 * again. Every Write's bytes arrive.
 */
static void test_cc_delay(void **state)
{
	struct eng_cc_params cp;
	struct qp_opts o = default_opts;
	struct rxdp_engine_qp_cc cc, cut;
	struct host *a, *b;
	struct pair *p;
	const uint32_t len = 16 * MTU;

	eng_cc_params_default(&cp);
	cp.delay_target = 200;
	o.cc = &cp;
	o.cc_algo = ENG_CC_DELAY;
	p = pair_new(&o);
	a = &p->h[0];
	b = &p->h[1];
	fill(a->buf, len, 41);
	cc_writes(p, 8, len);
	rxdp_engine_qp_cc(a->qp, &cc);
	print_message("no latency: rate %llu kbit/s, srtt %llu ns\n",
		      (unsigned long long)cc.rate_kbps,
		      (unsigned long long)cc.srtt_ns);
	assert_true(cc.srtt_ns > 0 && cc.srtt_ns < 20000);
	assert_int_equal(cc.rate_kbps, 100000000);
	assert_false(cc.paced);

	/*
	 * The first samples after the jump are lost to Karn's rule (the
	 * timers, set for 1 us, resend first); the later writes' count
	 */
	memwire_set_latency(p->w, 1, 400000, vclock_read, NULL);
	for (int k = 0; k < 4; k++)
		cc_writes(p, 8, len);
	for (int i = 0; i < 8; i++)
		assert_memory_equal(b->buf + (size_t)i * len, a->buf, len);
	rxdp_engine_qp_cc(a->qp, &cut);
	print_message("400 us towards b: rate %llu kbit/s, srtt %llu ns\n",
		      (unsigned long long)cut.rate_kbps,
		      (unsigned long long)cut.srtt_ns);
	assert_true(cut.srtt_ns > 100000); /* smoothed, on its way to 400 */
	assert_true(cut.rate_kbps < 100000000);
	assert_true(cut.paced);
	/* CNPs do not move a delay-driven rate */
	cc_inject_cnp(p, 2);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_IGNORED), 1);
	assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), 0);
	rxdp_engine_qp_cc(a->qp, &cc);
	assert_int_equal(cc.rate_kbps, cut.rate_kbps);

	memwire_set_latency(p->w, 1, 0, vclock_read, NULL);
	fill(a->buf, len, 42);
	cc_writes(p, 8, len);
	for (int i = 0; i < 8; i++)
		assert_memory_equal(b->buf + (size_t)i * len, a->buf, len);
	rxdp_engine_qp_cc(a->qp, &cc);
	print_message("latency gone: rate %llu kbit/s\n",
		      (unsigned long long)cc.rate_kbps);
	assert_true(cc.rate_kbps > cut.rate_kbps);
	pair_free(p);
}

/*
 * The receiver as a congestion point: b's receive path (the wire towards
 * it, as an AF_XDP ring) holds qlen frames; a burst that finds it half
 * full or more makes each ECT packet count as CE-marked
 * (np_rx_congested_packets), with CNPs by the usual rule, which a takes.
 * A deep path never is; packets that are not ECT never count. Every
 * Write's bytes arrive.
 */
static void test_cc_receiver_crowded(void **state)
{
	for (int c = 0; c < 3; c++) {
		struct qp_opts o = default_opts;
		struct rxdp_engine_qp_cc cc;
		struct cc_watch w[2];
		struct host *a, *b;
		struct pair *p;
		const uint32_t len = 16 * MTU;

		o.ecn_off = c == 2;
		p = pair_new(&o);
		a = &p->h[0];
		b = &p->h[1];
		if (c) /* a's pass sends ENG_TX_BUDGET (64) packets at most */
			memwire_set_qlen(p->w, 1, 64);
		cc_watch(p, w);
		fill(a->buf, len, 77 + (uint32_t)c);
		cc_writes(p, 32, len);
		for (int i = 0; i < 32; i++)
			assert_memory_equal(b->buf + (size_t)i * len, a->buf,
					    len);
		rxdp_engine_qp_cc(a->qp, &cc);
		print_message("receive path of %s frames%s: %llu counted CE, "
			      "%llu CNPs, a's rate %llu kbit/s\n",
			      c ? "64" : "65536", c == 2 ? ", not ECT" : "",
			      (unsigned long long)hwc(b,
						      RXDP_HWC_NP_RX_CONGESTED),
			      (unsigned long long)hwc(b, RXDP_HWC_NP_CNP_SENT),
			      (unsigned long long)cc.rate_kbps);
		assert_int_equal(hwc(b, RXDP_HWC_NP_ECN_MARKED), 0);
		assert_int_equal(w[0].cnps_bad, 0);
		assert_int_equal(w[0].cnps, hwc(b, RXDP_HWC_NP_CNP_SENT));
		assert_int_equal(hwc(a, RXDP_HWC_RP_CNP_HANDLED), w[0].cnps);
		if (c == 1) {
			assert_true(hwc(b, RXDP_HWC_NP_RX_CONGESTED) > 0);
			assert_true(w[0].cnps > 0);
			assert_true(cc.rate_kbps < 100000000);
		} else {
			assert_int_equal(hwc(b, RXDP_HWC_NP_RX_CONGESTED), 0);
			assert_int_equal(w[0].cnps, 0);
			assert_false(cc.paced);
		}
		pair_free(p);
	}
}

/*
 * Pacing: a CNP sets a's rate to 1 Gbit/s (rp_rate_to_set_on_first_cnp,
 * no increases): 256 packets of RDMA Write then reach b at that rate of the
 * engines' clock, within a tick's rounding, and not faster.
 */
static void test_cc_pacing(void **state)
{
	struct eng_cc_params cp;
	struct qp_opts o = default_opts;
	struct cc_watch w[2];
	struct pair *p;
	double gbps;

	cc_params_fixed(&cp, 1000);
	o.cc = &cp;
	p = pair_new(&o);
	cc_watch(p, w);
	cc_inject_cnp(p, 2);
	cc_writes(p, 16, 16 * MTU);
	/* the bytes before the last, over the time to the last */
	gbps = (double)(w[1].data_bytes - w[1].last_len) * 8 /
	       (double)(w[1].last_at - w[1].first_at);
	print_message("paced to 1 Gbit/s: %llu bytes in %llu ns: %.4f Gbit/s\n",
		      (unsigned long long)w[1].data_bytes,
		      (unsigned long long)(w[1].last_at - w[1].first_at), gbps);
	assert_true(gbps <= 1.0);
	assert_true(gbps > 0.95);
	pair_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_tx_coalescing),
		cmocka_unit_test(test_tx_coalescing_messages),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_ackreq_per_burst),
		cmocka_unit_test(test_read_sizes),
		cmocka_unit_test(test_sge_inline_unsignaled),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_lossy),
		cmocka_unit_test(test_lossy_atomics),
		cmocka_unit_test(test_fence),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_atomic_write_dup),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_flush_atomic_write_access),
		cmocka_unit_test(test_flush_atomic_write_invalid),
		cmocka_unit_test(test_flush_bad_response),
		cmocka_unit_test(test_flush_batched),
		cmocka_unit_test(test_batched_stops_at_fault),
		cmocka_unit_test(test_flush_atomic_write_post_errors),
		cmocka_unit_test(test_lossy_atomic_write),
		cmocka_unit_test(test_uc),
		cmocka_unit_test(test_srq),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_ud_port_mtu),
		cmocka_unit_test(test_ud_multicast),
		cmocka_unit_test(test_ipv6_vlan),
		cmocka_unit_test(test_many_qps_threads),
		cmocka_unit_test(test_lossy_xdp_filter),
		cmocka_unit_test(test_tail_loss_probe),
		cmocka_unit_test(test_tail_ack_lost),
		cmocka_unit_test(test_nak_storm),
		cmocka_unit_test(test_sr_burst),
		cmocka_unit_test(test_sr_window_in_recovery),
		cmocka_unit_test(test_sr_peers),
		cmocka_unit_test(test_sr_read_gaps_keep_hold),
		cmocka_unit_test(test_sr_rnr_ends_hold),
		cmocka_unit_test(test_sr_stale_hold),
		cmocka_unit_test(test_sr_random_loss),
		cmocka_unit_test(test_one_nak_per_gap),
		cmocka_unit_test(test_read_dup_replaces),
		cmocka_unit_test(test_goback_window),
		cmocka_unit_test(test_rto_backoff),
		cmocka_unit_test(test_retry_counts_timeouts),
		cmocka_unit_test(test_memory_windows),
		cmocka_unit_test(test_rnr_exhausted),
		cmocka_unit_test(test_rnr_then_recv),
		cmocka_unit_test(test_recv_posted_during_pass),
		cmocka_unit_test(test_stream_mode),
		cmocka_unit_test(test_tc_sched),
		cmocka_unit_test(test_retry_exhausted),
		cmocka_unit_test(test_slow_responder),
		cmocka_unit_test(test_access_errors),
		cmocka_unit_test(test_key_bytes),
		cmocka_unit_test(test_rereg_keys),
		cmocka_unit_test(test_implicit_odp),
		cmocka_unit_test(test_recv_too_small),
		cmocka_unit_test(test_local_protection),
		cmocka_unit_test(test_post_errors),
		cmocka_unit_test(test_cq_overflow),
		cmocka_unit_test(test_hostile_rings),
		cmocka_unit_test(test_fuzz_peer_input),
		cmocka_unit_test(test_forged_source),
		cmocka_unit_test(test_cc_notification_point),
		cmocka_unit_test(test_cc_reaction_point),
		cmocka_unit_test(test_takeover_mid_stream),
		cmocka_unit_test(test_takeover_responder),
		cmocka_unit_test(test_takeover_srq),
		cmocka_unit_test(test_takeover_rnr_wait),
		cmocka_unit_test(test_takeover_threaded),
		cmocka_unit_test(test_cc_pacing),
		cmocka_unit_test(test_cc_off),
		cmocka_unit_test(test_cc_delay),
		cmocka_unit_test(test_cc_paced_acks),
		cmocka_unit_test(test_cc_window_floor),
		cmocka_unit_test(test_cc_receiver_crowded),
	};

	if (getenv("RXDP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RXDP_TEST_FILTER"));
	/* RXDP_TEST_DEBUG: the engines' debug messages (what they resend, why) */
	if (getenv("RXDP_TEST_DEBUG"))
		rxdp_log_set_level(RXDP_LOG_DEBUG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
