// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fuzz targets' engine host (fuzz_host.h) */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pkt.h"
#include "fuzz_host.h"

#define QKEY 0x1234

/* QPNs: host a 0x11.., host b 0x21..; RC, UC, UD */
static uint32_t qpn(int side, int k)
{
	return (side ? 0x21 : 0x11) + k;
}

/* a's requests start just before the PSN wrap, b's at 0x100 */
static uint32_t sq_psn(int side)
{
	return side ? 0x100 : 0xfffff8;
}

static void path_to_peer(int side, struct rxdp_path *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->smac, (uint8_t[6]){ 2, 0, 0, 0, 0, (uint8_t)(1 + side) }, 6);
	memcpy(p->dmac, (uint8_t[6]){ 2, 0, 0, 0, 0, (uint8_t)(2 - side) }, 6);
	p->sip[10] = p->sip[11] = p->dip[10] = p->dip[11] = 0xff;
	p->sip[12] = p->dip[12] = 10;
	p->sip[15] = (uint8_t)(1 + side);
	p->dip[15] = (uint8_t)(2 - side);
	p->hop_limit = 64;
	p->udp_sport = 0xc000 + side;
}


static int connect_qp(struct rxdp_eqp *qp, int side, int k)
{
	struct ibv_qp_attr a = { 0 };
	struct rxdp_path path;
	int err;

	path_to_peer(side, &path);
	a.qp_state = IBV_QPS_INIT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	a.qkey = QKEY;
	err = rxdp_engine_qp_modify(
		qp, &a,
		IBV_QP_STATE | (k == 2 ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS),
		NULL);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qpn(!side, k);
	a.rq_psn = sq_psn(!side);
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	err = rxdp_engine_qp_modify(
		qp, &a,
		IBV_QP_STATE |
			(k == 2 ? 0
				: IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN |
					  (k == 0 ? IBV_QP_MAX_DEST_RD_ATOMIC |
							    IBV_QP_MIN_RNR_TIMER
						  : 0)),
		k == 2 ? NULL : &path);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn(side);
	a.timeout = 10;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return rxdp_engine_qp_modify(
		qp, &a,
		IBV_QP_STATE | IBV_QP_SQ_PSN |
			(k == 0 ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					  IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC
				: 0),
		NULL);
}

static int post_recv(struct rxdp_eqp *qp, struct fuzz_host *h, uint32_t off,
		     uint32_t len)
{
	struct ibv_sge s = { h->iova + off, len, rxdp_emr_lkey(h->mr) };
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return tp_post_recv(qp, &wr, &bad);
}

int fuzz_host_post_recvs(struct fuzz_host *h)
{
	return post_recv(h->rc, h, 0xa000, 4096) ?:
	       post_recv(h->uc, h, 0xb000, 4096) ?:
	       post_recv(h->ud, h, 0xc000, 4096);
}

int fuzz_host_init(struct fuzz_host *h, int side,
		   const struct rxdp_port_ops *ops, void *port)
{
	struct rxdp_engine_config cfg = {
		.ops = ops,
		.port = port,
		.ah_lookup = tp_ah_lookup,
		.max_mtu = 4096,
	};

	memset(h, 0, sizeof(*h));
	h->iova = FH_IOVA(side);
	h->buf = calloc(1, FH_BUF);
	h->e = rxdp_engine_create(&cfg);
	if (!h->buf || !h->e)
		return -ENOMEM;
	h->scq = rxdp_engine_create_cq(h->e, 256, NULL, NULL);
	h->rcq = rxdp_engine_create_cq(h->e, 256, NULL, NULL);
	if (!h->scq || !h->rcq)
		return -ENOMEM;
	return fuzz_host_qps(h, side);
}

int fuzz_host_qps(struct fuzz_host *h, int side)
{
	struct rxdp_eqp **qps[3] = { &h->rc, &h->uc, &h->ud };
	static const enum ibv_qp_type types[3] = { IBV_QPT_RC, IBV_QPT_UC,
						   IBV_QPT_UD };
	struct rxdp_path path;
	int err;

	memset(h->buf, 0, FH_BUF);
	h->mr = rxdp_engine_reg_mr(
		h->e, h->buf, FH_BUF, h->iova,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!h->mr)
		return -ENOMEM;
	for (int k = 0; k < 3; k++) {
		struct rxdp_eqp_init init = {
			.qpn = qpn(side, k),
			.qp_type = types[k],
			.send_cq = h->scq,
			.recv_cq = h->rcq,
			.cap = { .max_send_wr = 16,
				 .max_recv_wr = 16,
				 .max_send_sge = 2,
				 .max_recv_sge = 2,
				 .max_inline_data = 64 },
		};

		*qps[k] = rxdp_engine_create_qp(h->e, &init);
		if (!*qps[k])
			return -errno;
		err = connect_qp(*qps[k], side, k);
		if (err)
			return err;
	}
	path_to_peer(side, &path);
	tp_ah_init(&h->ah, rxdp_engine_create_ah(h->e, NULL, &path));
	if (!h->ah.eah || !h->ah.handle)
		return -errno;
	/* a leaves its RC peer one receive short for a while: RNR NAKs */
	for (int i = 0; i < 2 + side; i++) {
		err = post_recv(h->rc, h, 0x8000 + 0x1000 * i, 4096)
			      ?: post_recv(h->uc, h, 0xd000 + 0x1000 * (i % 2),
					   4096);
		if (err)
			return -err;
	}
	return -post_recv(h->ud, h, 0xf000, 4096);
}

static int post(struct rxdp_eqp *qp, struct fuzz_host *h, enum ibv_wr_opcode op,
		uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { h->iova + off, len, rxdp_emr_lkey(h->mr) };
	struct ibv_send_wr wr = { .wr_id = off,
				  .sg_list = &s,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0xc0ffee) };
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 7;
	} else if (qp == h->ud) {
		wr.wr.ud.ah = &h->ah.ibv;
		wr.wr.ud.remote_qpn = (uint32_t)raddr;
		wr.wr.ud.remote_qkey = QKEY;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return tp_post_send(qp, &wr, &bad);
}

int fuzz_host_post(struct fuzz_host *h, int side, uint32_t rkey)
{
	uint64_t peer = FH_IOVA(!side);

	for (int i = 0; i < 256; i++)
		h->buf[i] = (uint8_t)(i * 7 + side);
	return post(h->rc, h, IBV_WR_SEND, 0, 100, 0, 0) ?:
	       post(h->rc, h, IBV_WR_RDMA_WRITE, 0, 3000, peer + 0x1000,
		    rkey) ?:
	       post(h->rc, h, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 10, peer + 0x2000,
		    rkey) ?:
	       post(h->rc, h, IBV_WR_RDMA_READ, 0x4000, 3000, peer + 0x1000,
		    rkey) ?:
	       post(h->rc, h, IBV_WR_ATOMIC_FETCH_AND_ADD, 0x5000, 8,
		    peer + 0x3000, rkey) ?:
	       post(h->rc, h, IBV_WR_ATOMIC_CMP_AND_SWP, 0x5008, 8,
		    peer + 0x3008, rkey) ?:
	       post(h->rc, h, IBV_WR_SEND_WITH_IMM, 0, 2000, 0, 0) ?:
	       post(h->uc, h, IBV_WR_SEND, 0, 100, 0, 0) ?:
	       post(h->uc, h, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 2000,
		    peer + 0x6000, rkey) ?:
	       post(h->uc, h, IBV_WR_SEND, 0, 3000, 0, 0) ?:
	       post(h->ud, h, IBV_WR_SEND_WITH_IMM, 0, 200, qpn(!side, 2), 0);
}

void fuzz_host_drain(struct fuzz_host *h)
{
	struct ibv_wc wc[16];

	while (tp_poll_cq(h->scq, 16, wc) > 0)
		;
	while (tp_poll_cq(h->rcq, 16, wc) > 0)
		;
}

void fuzz_host_fini_qps(struct fuzz_host *h)
{
	struct rxdp_eqp *qps[3] = { h->rc, h->uc, h->ud };

	for (int k = 0; k < 3; k++)
		if (qps[k])
			rxdp_engine_destroy_qp(qps[k]);
	if (h->ah.eah) {
		tp_ah_fini(&h->ah);
		rxdp_engine_destroy_ah(h->ah.eah);
	}
	if (h->mr)
		rxdp_engine_dereg_mr(h->mr);
	fuzz_host_drain(h); /* what the QPs left in the CQs */
	h->rc = h->uc = h->ud = NULL;
	h->ah.eah = NULL;
	h->mr = NULL;
}

void fuzz_host_fini(struct fuzz_host *h)
{
	fuzz_host_fini_qps(h);
	if (h->scq)
		rxdp_engine_destroy_cq(h->scq);
	if (h->rcq)
		rxdp_engine_destroy_cq(h->rcq);
	if (h->e)
		rxdp_engine_destroy(h->e);
	free(h->buf);
	memset(h, 0, sizeof(*h));
}

/* --- frames -------------------------------------------------------------- */

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* The IP header, its version and the IP datagram's length, if plausible */
static uint8_t *frame_l3(uint8_t *f, uint32_t len, int *ipv6, uint32_t *iplen)
{
	uint32_t off = PKT_ETH_LEN, et;

	if (len < PKT_ETH_LEN + PKT_VLAN_LEN + PKT_IP6_LEN)
		return NULL;
	et = get16(f + 12);
	if (et == 0x8100) {
		et = get16(f + 16);
		off += PKT_VLAN_LEN;
	}
	*ipv6 = et == 0x86dd;
	if (et != 0x0800 && et != 0x86dd)
		return NULL;
	*iplen = *ipv6 ? PKT_IP6_LEN + get16(f + off + 4) : get16(f + off + 2);
	if (*iplen > len - off || *iplen < (*ipv6 ? PKT_IP6_LEN : PKT_IP4_LEN) +
						   PKT_UDP_LEN + ROCE_ICRC_LEN)
		return NULL;
	return f + off;
}

int fuzz_icrc_fix(uint8_t *f, uint32_t len)
{
	uint32_t iplen, icrc;
	uint8_t *l3, *p;
	int ipv6;

	l3 = frame_l3(f, len, &ipv6, &iplen);
	if (!l3)
		return -1;
	icrc = pkt_icrc(l3, iplen - ROCE_ICRC_LEN, ipv6);
	p = l3 + iplen - ROCE_ICRC_LEN;
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
	return 0;
}

void fuzz_rkey_xor(uint8_t *f, uint32_t len, uint32_t key)
{
	struct pkt_info pi;

	if (fuzz_icrc_fix(f, len) || pkt_parse(f, len, &pi))
		return;
	if (pi.reth)
		pi.reth->rkey = htonl(ntohl(pi.reth->rkey) ^ key);
	if (pi.atomiceth)
		pi.atomiceth->rkey = htonl(ntohl(pi.atomiceth->rkey) ^ key);
	fuzz_icrc_fix(f, len);
}
