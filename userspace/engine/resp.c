// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The responder (IBTA 9.7.4, 9.7.5.1; UC 9.8.3; UD 9.8.4): request packets
 * in PSN order into memory and receive WQEs, duplicates answered and never
 * executed twice, one ACK/NAK coalesced per pass, read and atomic
 * responses queued in PSN order. Engine lock held.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* wc.sl of a RoCE UD receive: its packet type (see resp_rx_ud) */
#define ROCE_WC_SL_UDP 0x8
#define ROCE_WC_SL_IPV6 0x1
#define ROCE_WC_SL_IPV4 0x2

/* --- responder ------------------------------------------------------------ */

static void resp_ack(struct rxdp_eqp *qp, uint8_t syndrome, uint32_t psn)
{
	/* an RNR NAK outranks the sequence NAKs its followers draw */
	if (qp->resp.ack_pending && qp->resp.ack_psn == psn &&
	    (qp->resp.ack_syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK &&
	    syndrome == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR))
		return;
	/*
	 * One coalesced ACK/NAK goes out after the queued read/atomic
	 * responses; a later one supersedes an earlier one, as each
	 * acknowledges everything before its PSN (9.7.5.1.1).
	 */
	if (qp->resp.ack_pending)
		eng_hwc(qp, RXDP_HWC_ACK_DEFERRED);
	qp->resp.ack_pending = true;
	qp->resp.ack_syndrome = syndrome;
	qp->resp.ack_psn = psn;
	/* it acknowledges what was written: after the writes (mem.c) */
	qp->ack_seq = qp->mem_seq;
}

/* Class C errors (9.9.3.1.3): NAK at once, then the QP goes to ERR. */
static void resp_fatal(struct rxdp_eqp *qp, uint8_t nak, uint32_t psn)
{
	struct pkt_desc d = { 0 };

	if (qp->type == IBV_QPT_UC) {
		/* 9.8.3: UC drops the message and carries on */
		qp->resp.rseq = RSEQ_DROP;
		return;
	}
	d.opcode = ROCE_RC_ACK;
	d.psn = psn;
	d.syndrome = ROCE_AETH_NAK | nak;
	d.msn = qp->resp.msn;
	send_pkt(qp, &d);
	pr_debug("engine: QP %u: NAK 0x%x at PSN %u, QP to ERR\n", qp->qpn, nak,
		 psn);
	qpstate_to_err(qp, true);
}

static struct rjob *resp_job_new(struct rxdp_eqp *qp)
{
	if (qp->resp.rjob_head - qp->resp.rjob_tail >= ENG_RJOBS)
		return NULL;
	return &qp->resp.rjobs[qp->resp.rjob_head % ENG_RJOBS];
}

/*
 * Queue the one-packet response to the request at psn (an atomic ACK with
 * orig, or RJOB_PLACED's), sent once what was written before it is
 * (mem_seq): 1 if there is no room now
 */
static int resp_job_one(struct rxdp_eqp *qp, enum rjob_type type, uint32_t psn,
			uint64_t orig)
{
	struct rjob *j = resp_job_new(qp);

	if (!j)
		return 1;
	*j = (struct rjob){ .type = type,
			    .psn = psn,
			    .first_psn = psn,
			    .npkts = 1,
			    .orig = orig,
			    .msn = qp->resp.msn,
			    .mem_seq = qp->mem_seq };
	qp->resp.rjob_head++;
	return 0;
}

static void resp_rnr(struct rxdp_eqp *qp, uint32_t psn)
{
	if (qp->type == IBV_QPT_UC) {
		qp->resp.rseq = RSEQ_DROP; /* no receive WQE: dropped (9.8.3) */
		return;
	}
	qp->e->stats.rnr_naks_sent++;
	eng_hwc(qp, RXDP_HWC_SEND_RNR);
	resp_ack(qp, ROCE_AETH_RNR_NAK | qp->min_rnr_timer, psn);
}

/*
 * Returns 0 (accepted), 1 (RNR: not accepted), 2 (dropped: the owner's
 * memory thread has too much to write; it comes again) or -1 (the QP
 * failed)
 */
static int resp_send(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	struct eng_wtag tag = { .psn = psn };
	static __thread struct pkt_sg sg[ENG_MAX_SGE];
	bool first = pi->flags & ROCE_OPF_FIRST,
	     last = pi->flags & ROCE_OPF_LAST, scatter;
	struct rxdp_hca_cqd d;
	uint32_t total;
	int nsg;

	if (!eng_rq_take(qp)) {
		resp_rnr(qp, psn);
		return 1;
	}
	/* the buffers are looked up per packet: an MR may go away meanwhile */
	nsg = sge_resolve(qp->pd, qp->resp.cur_sge, qp->resp.cur_nsge,
			  IBV_ACCESS_LOCAL_WRITE, sg, &total);
	if (first) {
		qp->resp.recv_off = 0;
		qp->resp.recv_len = total;
	}
	if (nsg < 0) {
		cqe_recv(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, NULL);
		resp_fatal(qp, ROCE_NAK_REM_OP_ERR, psn);
		return -1;
	}
	if ((!last && pi->paylen != qp->mtu) ||
	    qp->resp.recv_off + pi->paylen > qp->resp.recv_len) {
		cqe_recv(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, NULL);
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	scatter = first && last &&
		  cqe_scatter_prep(qp, sg, nsg, pi->paylen, &d);
	if (scatter)
		memcpy(d.data, pi->payload, pi->paylen);
	else if (sge_copy_to(qp, sg, nsg, qp->resp.recv_off, pi->payload,
			     pi->paylen, &tag))
		return 2;
	qp->resp.recv_off += pi->paylen;
	/*
	 * Send with Invalidate (IBTA 9.4.1.1.3, 10.6.7.2.5): the named type 2
	 * window of this QP's PD is freed when the message completes; any
	 * other key is an invalid request (the receive completes in error)
	 */
	if (last && pi->ieth && mw_invalidate(qp, ieth_rkey(pi->ieth))) {
		cqe_recv(qp, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV, 0, NULL);
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (last) {
		cqe_recv_data(qp, IBV_WC_SUCCESS, IBV_WC_RECV,
			      qp->resp.recv_off, pi, scatter ? &d : NULL);
		qp->resp.msn = psn_add(qp->resp.msn, 1);
		qp->resp.rseq = RSEQ_NONE;
	} else {
		qp->resp.rseq = RSEQ_SEND;
	}
	return 0;
}

static int resp_write(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	struct eng_wtag tag = { .psn = psn };
	bool first = pi->flags & ROCE_OPF_FIRST,
	     last = pi->flags & ROCE_OPF_LAST;
	bool imm = pi->flags & ROCE_OPF_IMMDT;

	/* Write with immediate consumes an RQ WQE: check before any effect */
	if (imm && !eng_rq_take(qp)) {
		resp_rnr(qp, psn);
		return 1;
	}
	if (first) {
		uint64_t va = reth_va(pi->reth);
		uint32_t len = reth_len(pi->reth);

		if (!sge_rkey_check(qp, reth_rkey(pi->reth), va, len,
				    IBV_ACCESS_REMOTE_WRITE,
				    &qp->resp.wr_addr)) {
			resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
			return -1;
		}
		qp->resp.wr_left = qp->resp.wr_len = len;
	}
	/* 9.7.4.1.5: the payload must add up to the RETH's DMA length */
	if ((!last && pi->paylen != qp->mtu) || pi->paylen > qp->resp.wr_left ||
	    (last && pi->paylen != qp->resp.wr_left)) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (pi->paylen) {
		if (eng_mem_write(qp, qp->resp.wr_addr, pi->payload, pi->paylen,
				  &tag))
			return 2;
		qp->resp.wr_addr += pi->paylen;
		qp->resp.wr_left -= pi->paylen;
	}
	if (last) {
		if (imm)
			cqe_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
				 qp->resp.wr_len, pi);
		qp->resp.msn = psn_add(qp->resp.msn, 1);
		qp->resp.rseq = RSEQ_NONE;
	} else {
		qp->resp.rseq = RSEQ_WRITE;
	}
	return 0;
}

static uint32_t read_npkts(struct rxdp_eqp *qp, uint32_t len)
{
	return rxdp_read_npkts(len, (uint32_t)__builtin_ctz(qp->mtu));
}

/*
 * A duplicate read request at psn: the requester went back to psn and
 * resends every request from there (go-back-N, 9.7.6), so the responses
 * still queued for psn and beyond would arrive out of sequence and be
 * dropped. Cancel them: the requests they answered come again. (A copy the
 * network made of a request costs the requests behind it a resend; queued
 * next to each other, every resend of a long read would add its whole
 * length again, until the queue took longer to drain than the QP's
 * timeout.) Atomics cancelled here are answered again from the replay
 * cache.
 */
static void resp_jobs_cancel_from(struct rxdp_eqp *qp, uint32_t psn)
{
	for (uint32_t i = qp->resp.rjob_tail; i != qp->resp.rjob_head; i++) {
		struct rjob *j = &qp->resp.rjobs[i % ENG_RJOBS];

		if (psn_diff(psn, j->first_psn) >= (int32_t)j->npkts)
			continue; /* wholly before psn */
		qp->e->stats.rjobs_cancelled += qp->resp.rjob_head - i;
		qp->resp.rjob_head = i;
		return;
	}
}

/* Queue the responses of a read request; 1 if there is no room now */
static int resp_read(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn,
		     bool dup)
{
	uint32_t len = reth_len(pi->reth);
	struct rjob *j;
	uint64_t addr;

	if (!sge_rkey_check(qp, reth_rkey(pi->reth), reth_va(pi->reth), len,
			    IBV_ACCESS_REMOTE_READ, &addr)) {
		if (dup)
			return 1;
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	if (dup)
		resp_jobs_cancel_from(qp, psn);
	j = resp_job_new(qp);
	if (!j)
		return 1; /* the requester sends it again */
	if (!dup)
		qp->resp.msn = psn_add(qp->resp.msn, 1);
	*j = (struct rjob){ .type = RJOB_READ,
			    .psn = psn,
			    .first_psn = psn,
			    .npkts = read_npkts(qp, len),
			    .addr = addr,
			    .len = len,
			    .msn = qp->resp.msn,
			    .mem_seq = qp->mem_seq };
	qp->resp.rjob_head++;
	return 0;
}

static int resp_atomic(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	struct roce_atomiceth *a = pi->atomiceth;
	uint64_t va = atomiceth_va(a), orig;
	struct atomic_cache *c;
	uint64_t addr;
	int err;

	if (!resp_job_new(qp))
		return 1; /* no room for the answer: it comes again */
	/* 9.4.5: the target must be 8-byte aligned */
	if (va & 7) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	/*
	 * Atomic with respect to every other atomic of this device
	 * (IBV_ATOMIC_HCA): the CPU's own atomics on memory shared with rxdpd,
	 * else done in order by the owner's memory thread (mem.c), the
	 * request taken when its retransmission finds the result.
	 */
	if (!sge_rkey_check(qp, atomiceth_rkey(a), va, 8,
			    IBV_ACCESS_REMOTE_ATOMIC, &addr)) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	err = eng_mem_atomic(qp, psn, addr, pi->opcode == ROCE_RC_COMPARE_SWAP,
			     atomiceth_compare(a), atomiceth_swap_add(a),
			     &orig);
	if (err == -EAGAIN)
		return 1;
	if (err) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	/* 9.4.5.1: a duplicate must get the same answer, not run again */
	c = &qp->resp.acache[qp->resp.acache_next++ % ENG_ATOMIC_CACHE];
	c->valid = true;
	c->psn = psn;
	c->orig = orig;
	qp->resp.msn = psn_add(qp->resp.msn, 1);
	return resp_job_one(qp, RJOB_ATOMIC, psn, orig);
}

/*
 * Atomic Write (IBTA 1.5 A19): 8 bytes to an 8-byte aligned address,
 * written as one (eng_mem_store64), with remote write rights (Soft-RoCE
 * asks the QP and the region for IBV_ACCESS_REMOTE_WRITE, as for an RDMA
 * Write); answered, as a Flush is, by a zero-length RDMA Read Response
 * Only at its PSN (RJOB_PLACED; Soft-RoCE's send_read_response_ack())
 */
static int resp_atomic_write(struct rxdp_eqp *qp, struct pkt_info *pi,
			     uint32_t psn)
{
	struct eng_wtag tag = { .psn = psn };
	uint64_t va = reth_va(pi->reth), addr, v;

	if (!resp_job_new(qp))
		return 1; /* no room for the answer: it comes again */
	if (reth_len(pi->reth) != 8 || pi->paylen != 8) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (!sge_rkey_check(qp, reth_rkey(pi->reth), va, 8,
			    IBV_ACCESS_REMOTE_WRITE, &addr)) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	if (va & 7) { /* A19.4.2, as 9.4.5 for the other atomics */
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	memcpy(&v, pi->payload, 8);
	if (eng_mem_store64(qp, addr, v, &tag))
		return 2;
	qp->resp.msn = psn_add(qp->resp.msn, 1);
	return resp_job_one(qp, RJOB_PLACED, psn, 0);
}

/*
 * Flush (A19): the placement types asked for need their access rights on
 * the QP and the region (IBV_ACCESS_FLUSH_GLOBAL / _PERSISTENT). Global
 * visibility is what rxdpd's writes have once done: the answer (a
 * zero-length RDMA Read Response Only, as for an Atomic Write) waits for
 * the writes before it (mem_seq) and a fence (resp_tx). Persistence
 * no region of rxdp has (ibv_reg_mr refuses IBV_ACCESS_FLUSH_PERSISTENT,
 * as Soft-RoCE refuses it for memory that is not pmem), so a persistent
 * Flush is a remote access error.
 */
static int resp_flush(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	uint32_t plt = feth_plt(pi->feth), sel = feth_sel(pi->feth);
	unsigned int need = 0;

	if (!resp_job_new(qp))
		return 1;
	/* reserved placement types and selectivity levels */
	if (!plt || (plt & ~(ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT)) ||
	    sel > ROCE_FLUSH_MR) {
		resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
		return -1;
	}
	if (plt & ROCE_FLUSH_GLOBAL)
		need |= RXDP_ACCESS_FLUSH_GLOBAL;
	if (plt & ROCE_FLUSH_PERSISTENT)
		need |= RXDP_ACCESS_FLUSH_PERSISTENT;
	if (!sge_flush_check(qp, reth_rkey(pi->reth), reth_va(pi->reth),
			     reth_len(pi->reth), sel, need)) {
		resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, psn);
		return -1;
	}
	qp->resp.msn = psn_add(qp->resp.msn, 1);
	return resp_job_one(qp, RJOB_PLACED, psn, 0);
}

/* 9.7.5.1.2-4: duplicates are answered, never executed twice */
static void resp_duplicate(struct rxdp_eqp *qp, struct pkt_info *pi,
			   uint32_t psn)
{
	qp->e->stats.rx_duplicates++;
	eng_hwc(qp, RXDP_HWC_DUP_REQ);
	if (pi->opcode == ROCE_RC_READ_REQUEST) {
		resp_read(qp, pi, psn, true);
		return;
	}
	/*
	 * An Atomic Write run again would undo what later requests wrote
	 * there (A19): it is answered, as a Flush, with what it was answered
	 * the first time, when the writes it follows are done
	 */
	if (pi->flags & (ROCE_OPF_ATOMIC_WRITE | ROCE_OPF_FLUSH)) {
		resp_job_one(qp, RJOB_PLACED, psn, 0);
		return;
	}
	if (pi->flags & ROCE_OPF_ATOMIC) {
		for (int i = 0; i < ENG_ATOMIC_CACHE; i++) {
			struct atomic_cache *c = &qp->resp.acache[i];

			if (!c->valid || c->psn != psn)
				continue;
			resp_job_one(qp, RJOB_ATOMIC, psn, c->orig);
			return;
		}
		return;
	}
	/* Send/Write: acknowledge again, up to the newest PSN received */
	if (!qp->resp.ack_pending)
		resp_ack(qp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
			 psn_add(qp->resp.epsn, -1U));
}

/* The UC responder (IBTA 9.8.3): no ACKs, no NAKs, no duplicates */
static void resp_rx_uc(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	uint32_t psn = bth_psn(pi->bth), f = pi->flags;

	if (psn != qp->resp.epsn) {
		/* a gap: the message in progress is lost; resync on FIRST */
		qp->e->stats.rx_drop_psn++;
		qp->resp.rseq = RSEQ_DROP;
	}
	qp->resp.epsn = psn_add(psn, 1);
	if (f & ROCE_OPF_FIRST) {
		qp->resp.rseq = RSEQ_NONE; /* a partial message is abandoned */
	} else if (qp->resp.rseq == RSEQ_DROP) {
		return;
	} else if ((f & ROCE_OPF_SEND) && !(f & ROCE_OPF_WRITE)
			   ? qp->resp.rseq != RSEQ_SEND
			   : qp->resp.rseq != RSEQ_WRITE) {
		qp->resp.rseq = RSEQ_DROP;
		return;
	}
	/* a packet the owner's memory thread had no room for: message lost */
	if ((f & ROCE_OPF_WRITE ? resp_write(qp, pi, psn)
				: resp_send(qp, pi, psn)) == 2)
		qp->resp.rseq = RSEQ_DROP;
}

/*
 * The UD responder (IBTA 9.8.4, RoCEv2 A17.4.5.2): Q_Key check, one packet
 * per message, the 40-byte GRH area at the head of the receive buffer
 * (an IPv4 header goes in its last 20 bytes), drops without a word.
 */
static void resp_rx_ud(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	static __thread struct pkt_sg sg[ENG_MAX_SGE];
	uint8_t grh[ROCE_GRH_LEN] = { 0 };
	struct rxdp_engine *e = qp->e;
	struct rxdp_hca_cqd d;
	uint32_t total;
	struct ibv_wc wc;
	bool scatter;
	int nsg;

	if (!rxdp_qkey_ok(deth_qkey(pi->deth), qp->qkey) || !eng_rq_take(qp)) {
		e->stats.rx_drop_ud++;
		return;
	}
	nsg = sge_resolve(qp->pd, qp->resp.cur_sge, qp->resp.cur_nsge,
			  IBV_ACCESS_LOCAL_WRITE, sg, &total);
	if (nsg < 0 || total < ROCE_GRH_LEN + pi->paylen) {
		cqe_recv(qp, nsg < 0 ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_LEN_ERR,
			 IBV_WC_RECV, 0, NULL);
		return;
	}
	if (pi->ipv6)
		memcpy(grh, pi->l3, ROCE_GRH_LEN);
	else
		memcpy(grh + 20, pi->l3, 20);
	scatter = cqe_scatter_prep(qp, sg, nsg, ROCE_GRH_LEN + pi->paylen, &d);
	if (scatter) {
		memcpy(d.data, grh, ROCE_GRH_LEN);
		memcpy(d.data + ROCE_GRH_LEN, pi->payload, pi->paylen);
	} else if (sge_copy_to(qp, sg, nsg, 0, grh, ROCE_GRH_LEN, NULL) ||
		   sge_copy_to(qp, sg, nsg, ROCE_GRH_LEN, pi->payload,
			       pi->paylen, NULL)) {
		/* the owner's memory thread is behind: dropped (UD) */
		e->stats.rx_drop_ud++;
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->resp.cur_wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = ROCE_GRH_LEN + pi->paylen;
	wc.qp_num = qp->qpn;
	wc.src_qp = deth_sqp(pi->deth);
	wc.wc_flags = IBV_WC_GRH;
	/*
	 * The packet's type in sl, as ConnectX reports it for RoCE UD receives
	 * (and UCX reads it, not trusting the GRH area's first half): bit 3
	 * a UDP header (RoCE v2), bits 2..0 the L3 header, 1 IPv6, 2 IPv4
	 */
	wc.sl = ROCE_WC_SL_UDP | (pi->ipv6 ? ROCE_WC_SL_IPV6 : ROCE_WC_SL_IPV4);
	eng_hwc(qp, RXDP_HWC_RDMA_RECVS);
	if (pi->immdt) {
		wc.imm_data = immdt_imm(pi->immdt);
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	qp->resp.cur_valid = false;
	cqe_recv_add(qp, &wc, bth_se(pi->bth), scatter ? &d : NULL);
}

/*
 * The RC responder's steps for one request packet, each named (as rxe's
 * enum resp_states), and the classes of what ends one early
 */
enum resp_state {
	RESPST_CHK_PSN, /* 9.7.5.1.3: expected, duplicate or past a gap */
	RESPST_CHK_OP_SEQ, /* 9.7.4.1.2: opcode order inside a message */
	RESPST_EXECUTE, /* into memory, a receive WQE, a response queued */
	RESPST_ACKNOWLEDGE, /* the PSN taken, an ACK if it asked */
	RESPST_DUPLICATE, /* 9.7.5.1.1: answered again, never run again */
	RESPST_ERR_PSN_SEQ, /* class B: one sequence NAK per gap */
	RESPST_ERR_INVALID, /* class C: invalid request, NAK and ERR */
	RESPST_ERR_HANDLED, /* RNR, access or length: its step NAKed it */
	RESPST_DONE,
};

static const char *const resp_state_name[] = {
	[RESPST_CHK_PSN] = "CHK_PSN",
	[RESPST_CHK_OP_SEQ] = "CHK_OP_SEQ",
	[RESPST_EXECUTE] = "EXECUTE",
	[RESPST_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RESPST_DUPLICATE] = "DUPLICATE",
	[RESPST_ERR_PSN_SEQ] = "ERR_PSN_SEQ",
	[RESPST_ERR_INVALID] = "ERR_INVALID",
	[RESPST_ERR_HANDLED] = "ERR_HANDLED",
	[RESPST_DONE] = "DONE",
};

static enum resp_state resp_check_psn(struct rxdp_eqp *qp, uint32_t psn)
{
	int32_t d = psn_diff(psn, qp->resp.epsn);

	if (d < 0)
		return RESPST_DUPLICATE;
	if (d > 0)
		return RESPST_ERR_PSN_SEQ;
	/* the expected PSN (the XDP program clears its NAK_SENT itself) */
	qp->resp.nak_sent = false;
	return RESPST_CHK_OP_SEQ;
}

static enum resp_state resp_check_op_seq(struct rxdp_eqp *qp, uint32_t f)
{
	if (f & ROCE_OPF_FIRST)
		return qp->resp.rseq != RSEQ_NONE ? RESPST_ERR_INVALID
						  : RESPST_EXECUTE;
	if ((f & ROCE_OPF_SEND) && !(f & ROCE_OPF_WRITE)
		    ? qp->resp.rseq != RSEQ_SEND
		    : qp->resp.rseq != RSEQ_WRITE)
		return RESPST_ERR_INVALID;
	return RESPST_EXECUTE;
}

static enum resp_state resp_execute(struct rxdp_eqp *qp, struct pkt_info *pi,
				    uint32_t psn)
{
	uint32_t f = pi->flags;
	int r;

	if (f & ROCE_OPF_WRITE)
		r = resp_write(qp, pi, psn);
	else if (f & ROCE_OPF_SEND)
		r = resp_send(qp, pi, psn);
	else if (f & ROCE_OPF_READ)
		r = resp_read(qp, pi, psn, false);
	else if (f & ROCE_OPF_ATOMIC)
		r = resp_atomic(qp, pi, psn);
	else if (f & ROCE_OPF_ATOMIC_WRITE)
		r = resp_atomic_write(qp, pi, psn);
	else if (f & ROCE_OPF_FLUSH)
		r = resp_flush(qp, pi, psn);
	else
		return RESPST_ERR_INVALID;
	return r ? RESPST_ERR_HANDLED : RESPST_ACKNOWLEDGE;
}

static void resp_acknowledge(struct rxdp_eqp *qp, struct pkt_info *pi,
			     uint32_t psn)
{
	uint32_t f = pi->flags;

	if (pi->opcode == ROCE_RC_READ_REQUEST)
		qp->resp.epsn =
			psn_add(psn, read_npkts(qp, reth_len(pi->reth)));
	else
		qp->resp.epsn = psn_add(psn, 1);
	/*
	 * whether its requester now waits for this engine, and how deep a
	 * stream of RDMA Writes comes in (the core's scheduling counts)
	 */
	eng_sched_req(&qp->e->sched,
		      bth_ackreq(pi->bth) || (f & ROCE_OPF_RD_ATOMIC),
		      (f & ROCE_OPF_WRITE) && !(f & ROCE_OPF_SEND));
	if (bth_ackreq(pi->bth) && !(f & ROCE_OPF_RD_ATOMIC))
		resp_ack(qp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID, psn);
}

/* 9.7.5.1.3: one PSN sequence NAK per gap */
static void resp_nak_gap(struct rxdp_eqp *qp)
{
	if (qp->resp.nak_sent)
		return;
	qp->resp.nak_sent = true;
	qp->e->stats.seq_naks_sent++;
	resp_ack(qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR, qp->resp.epsn);
}

/*
 * Selective retransmission: the requests that come past a gap are held
 * (hold.c) rather than dropped, and taken in order once the gap is filled
 * (resp_take_held), so the requester need resend only what was lost. The
 * NAK of a gap says so (ROCE_BTH_RXDP_HELD, resp_tx) while everything that
 * came past it is held; once one is not (no room, more than a window
 * ahead), nothing more is, until the requester's go-back has brought epsn
 * past every request seen (lost_end).
 */
static void resp_hold(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	uint32_t end = psn_add(psn, 1);

	/* further ahead than an rxdp requester sends: not its, dropped */
	if (qp->e->cfg.go_back_n || qp->resp.goes_back ||
	    psn_diff(psn, qp->resp.epsn) >= RXDP_HOLD_WINDOW)
		return;
	if (!qp->resp.lost && hold_put(qp, pi, psn)) {
		qp->e->stats.rx_held++;
		return;
	}
	if (hold_count(qp) && psn_after(qp->resp.hold->end, end))
		end = qp->resp.hold->end;
	if (!qp->resp.lost || psn_after(end, qp->resp.lost_end))
		qp->resp.lost_end = end;
	qp->resp.lost = true;
	hold_flush(qp);
}

/*
 * A NAK that said held: what the requester sends after the gap's packet
 * tells whether it resends alone. An rxdp requester goes on with packets
 * it had not sent (past all that was held); a Soft-RoCE or ConnectX one
 * ignores the bit and goes back, sending the packet after the gap's
 * again, which the hold had already given; so do requesters of peers that
 * drop a NAK with a reserved bit set, once their timer goes back. An rxdp
 * requester goes back too now and then (a NAK after a timeout, a read), so
 * only a requester never seen to resend alone, and seen to go back
 * ENG_SR_MISSES gaps in a row, makes the QP hold nothing more: the copies
 * would only be duplicates.
 */
#define ENG_SR_MISSES 3

static void resp_sr_learn(struct rxdp_eqp *qp, uint32_t psn)
{
	if (psn == qp->resp.watch_psn) {
		qp->resp.watch_seen = true;
		return;
	}
	if (!qp->resp.watch_seen)
		return;
	qp->resp.watch = false;
	if (!psn_before(psn, qp->resp.watch_end)) {
		qp->resp.sr_seen = true;
		qp->resp.misses = 0;
		return;
	}
	if (psn != psn_add(qp->resp.watch_psn, 1) ||
	    !psn_before(psn, qp->resp.epsn) || qp->resp.sr_seen ||
	    ++qp->resp.misses < ENG_SR_MISSES)
		return;
	pr_debug("engine: QP %#x: its requester goes back: no hold\n", qp->qpn);
	qp->resp.goes_back = true;
	hold_flush(qp);
	qpmap_hold(qp, false);
}

/* Whether a sequence NAK for epsn may have the requester resend one packet */
static bool resp_holds(struct rxdp_eqp *qp)
{
	return hold_count(qp) && !qp->resp.lost;
}

static void resp_nak_seq(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	eng_hwc(qp, RXDP_HWC_OUT_OF_SEQ_REQ);
	resp_hold(qp, pi, psn);
	if (!hold_peek(qp, psn))
		qp->e->stats.rx_drop_psn++;
	resp_nak_gap(qp);
}

/* One RC request packet, step by step (enum resp_state) */
static void resp_rx_rc_step(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	uint32_t psn = bth_psn(pi->bth);
	enum resp_state st = RESPST_CHK_PSN;

	while (st != RESPST_DONE) {
		switch (st) {
		case RESPST_CHK_PSN:
			st = resp_check_psn(qp, psn);
			break;
		case RESPST_CHK_OP_SEQ:
			st = resp_check_op_seq(qp, pi->flags);
			break;
		case RESPST_EXECUTE:
			st = resp_execute(qp, pi, psn);
			break;
		case RESPST_ACKNOWLEDGE:
			resp_acknowledge(qp, pi, psn);
			st = RESPST_DONE;
			break;
		case RESPST_DUPLICATE:
			resp_duplicate(qp, pi, psn);
			st = RESPST_DONE;
			break;
		case RESPST_ERR_PSN_SEQ:
			resp_nak_seq(qp, pi, psn);
			st = RESPST_DONE;
			break;
		case RESPST_ERR_INVALID:
			pr_debug("engine: QP %u: PSN %u opcode 0x%x: %s\n",
				 qp->qpn, psn, pi->opcode, resp_state_name[st]);
			resp_fatal(qp, ROCE_NAK_INVALID_REQ, psn);
			st = RESPST_DONE;
			break;
		default: /* RESPST_ERR_HANDLED */
			st = RESPST_DONE;
			break;
		}
	}
}

/*
 * The requests held past a gap that the one just taken filled, in order,
 * up to one that does not go through (an RNR NAK, the owner's memory
 * thread behind; a fatal error flushes all): that one is a gap again,
 * whose copy comes again, and the rest stay held. A gap behind them is
 * NAKed at once (an RNR NAK outranks it), the rest acknowledged.
 */
static void resp_take_held(struct rxdp_eqp *qp)
{
	uint32_t psn = qp->resp.epsn;
	struct pkt_info *pi;
	bool took = false;

	while ((pi = hold_peek(qp, psn))) {
		resp_rx_rc_step(qp, pi);
		hold_drop(qp, psn);
		if (qp->resp.epsn == psn)
			break; /* not taken: it comes again */
		psn = qp->resp.epsn;
		took = true;
	}
	hold_drop_before(qp, psn);
	if (hold_count(qp))
		resp_nak_gap(qp);
	else if (took)
		resp_ack(qp, ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID,
			 psn_add(psn, -1U));
}

static void resp_rx_rc(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	uint32_t epsn = qp->resp.epsn;

	if (qp->resp.watch)
		resp_sr_learn(qp, bth_psn(pi->bth));
	resp_rx_rc_step(qp, pi);
	if (qp->resp.epsn == epsn || qp->e->cfg.go_back_n)
		return;
	if (qp->resp.lost && !psn_before(qp->resp.epsn, qp->resp.lost_end))
		qp->resp.lost = false;
	resp_take_held(qp);
	/*
	 * The program lets requests ahead of its epsn through without
	 * moving it, so it may have missed a PSN the responder took in
	 * order: it follows the responder's
	 */
	qpmap_epsn(qp);
}

void resp_rx(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	int state = atomic_load(&qp->state);

	if (!rxdp_state_takes_packets(state)) {
		qp->e->stats.rx_drop_state++;
		return;
	}
	if (qp->type == IBV_QPT_UC)
		resp_rx_uc(qp, pi);
	else if (qp->type == IBV_QPT_UD)
		resp_rx_ud(qp, pi);
	else
		resp_rx_rc(qp, pi);
}

int resp_tx(struct rxdp_eqp *qp, int budget)
{
	int sent = 0, err;

	while (sent < budget && qp->resp.rjob_tail != qp->resp.rjob_head) {
		struct rjob *j =
			&qp->resp.rjobs[qp->resp.rjob_tail % ENG_RJOBS];
		struct pkt_desc d = { 0 };
		struct pkt_sg sg;

		/* a response acknowledges the writes before it */
		if (!eng_mem_written(qp, j->mem_seq))
			return sent;
		d.psn = psn_add(j->first_psn, j->sent);
		d.msn = j->msn;
		d.syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
		if (j->type == RJOB_ATOMIC) {
			d.opcode = ROCE_RC_ATOMIC_ACK;
			d.orig = j->orig;
		} else if (j->type == RJOB_PLACED) {
			/* what was written is seen by all before the answer */
			atomic_thread_fence(memory_order_seq_cst);
			d.opcode = ROCE_RC_READ_RESPONSE_ONLY;
		} else {
			uint32_t off = j->sent * qp->mtu;
			bool first = j->sent == 0,
			     last = j->sent + 1 == j->npkts;

			d.opcode = first && last ? ROCE_RC_READ_RESPONSE_ONLY
				   : first	 ? ROCE_RC_READ_RESPONSE_FIRST
				   : last	 ? ROCE_RC_READ_RESPONSE_LAST
						 : ROCE_RC_READ_RESPONSE_MIDDLE;
			d.paylen = j->len - off < qp->mtu ? j->len - off
							  : qp->mtu;
			sg.addr = j->addr + off;
			sg.len = d.paylen;
			sg.span = j->len - off;
			d.sg = &sg;
			d.nsg = 1;
			d.mem = &qp->mem_resp;
			eng_stage_use(&qp->stage_resp, qp->pd, j, j->first_psn);
		}
		err = send_pkt(qp, &d);
		if (err == -EFAULT) {
			/* the source went away after the R_Key check */
			resp_fatal(qp, ROCE_NAK_REM_ACCESS_ERR, d.psn);
			return sent;
		}
		if (err)
			return sent;
		sent++;
		qp->resp.resp_sent = true;
		qp->resp.resp_sent_psn = d.psn;
		if (++j->sent == j->npkts) {
			qp->resp.rjob_tail++;
			eng_stage_release(&qp->stage_resp);
		}
	}
	/*
	 * A plain ACK for a PSN before a read/atomic response already sent
	 * says nothing new (the response acknowledged it, 9.7.5.1.1): the
	 * requester would only drop it as stale. NAKs always go.
	 */
	if (qp->resp.ack_pending && qp->resp.resp_sent &&
	    (qp->resp.ack_syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK &&
	    psn_before(qp->resp.ack_psn, qp->resp.resp_sent_psn))
		qp->resp.ack_pending = false;
	if (qp->resp.rjob_tail == qp->resp.rjob_head && qp->resp.ack_pending &&
	    eng_mem_written(qp, qp->ack_seq)) {
		struct pkt_desc d = { 0 };

		d.opcode = ROCE_RC_ACK;
		d.psn = qp->resp.ack_psn;
		d.syndrome = qp->resp.ack_syndrome;
		d.msn = qp->resp.msn;
		d.held = d.syndrome == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR) &&
			 d.psn == qp->resp.epsn && resp_holds(qp);
		if (!send_pkt(qp, &d)) {
			qp->resp.ack_pending = false;
			if (d.held && !qp->resp.watch) {
				qp->resp.watch = true;
				qp->resp.watch_seen = false;
				qp->resp.watch_psn = d.psn;
				qp->resp.watch_end = qp->resp.hold->end;
			}
			sent++;
		}
	}
	return sent;
}
