// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The completer (IBTA 9.7.5.2, 9.7.6, 10.8.3): ACKs, NAKs and read/atomic
 * responses retire send WQEs in order into completions; a sequence NAK or
 * a timeout goes back (go-back-N), an RNR NAK waits, a fatal NAK fails the
 * WQE and takes the QP to ERR. Engine lock held.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

static uint64_t comp_timeout_ns(const struct rxdp_eqp *qp)
{
	/* IBTA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means infinite */
	return qp->timeout ? 4096ULL << qp->timeout : 0;
}

/* IBTA 9.7.5.2.8 Table 45: RNR NAK timer field -> microseconds x 100 */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1,    2,	   3,	 4,    6,     8,     12,    16,	   24,	  32,
	48,    64,   96,   128,	 192,  256,   384,   512,   768,   1024,  1536,
	2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

/* --- timers: adaptive retransmission, the tail-loss probe ---------------- */

/*
 * The retransmission timeout follows the path, as TCP's does (RFC 6298): a
 * smoothed round-trip time and its variance from the acknowledgement of one
 * timed packet at a time (never of a resent one: Karn), RTO = srtt +
 * 4 rttvar, at least ENG_RTO_MIN_NS, doubled on each expiry without
 * progress, and never later than the QP's own timeout attribute (IBTA
 * 9.7.6.1.3) counted from the last progress. An early expiry only resends;
 * the QP's timeout is what counts against retry_cnt, so a peer that is gone
 * still fails the QP after (retry_cnt + 1) timeouts, as on any HCA.
 */
#define ENG_RTO_BACKOFF_MAX 16

/*
 * Packets sent and not yet acknowledged: what the timers wait for. Not
 * those only posted: a QP held back by its pacing has nothing on the wire
 * between two packets, and no timer may expire for them.
 */
static bool req_outstanding(const struct rxdp_eqp *qp)
{
	return psn_before(qp->comp.una, qp->req.tx_hw);
}

static uint64_t req_rto(const struct rxdp_eqp *qp)
{
	uint64_t cap = comp_timeout_ns(qp), rto;

	if (!cap)
		cap = ENG_RTO_MAX_NS;
	rto = qp->comp.rtt_known ? qp->comp.srtt + 4 * qp->comp.rttvar
				 : ENG_RTO_INIT_NS;
	if (rto < ENG_RTO_MIN_NS)
		rto = ENG_RTO_MIN_NS;
	if (rto > cap >> qp->comp.backoff)
		return cap;
	return rto << qp->comp.backoff;
}

/*
 * Two round trips without an ACK: probe the tail (RFC 8985's PTO), or more
 * where round trips vary that much (a probe sent while the ACK is merely
 * late costs a packet read and sent again)
 */
static uint64_t req_pto(const struct rxdp_eqp *qp)
{
	uint64_t pto = 2 * qp->comp.srtt,
		 var = qp->comp.srtt + 4 * qp->comp.rttvar;

	if (pto < var)
		pto = var;
	return pto < ENG_TLP_MIN_NS ? ENG_TLP_MIN_NS : pto;
}

/* An RTT sample: the timeout's estimate, and the delay algorithm's input */
static void req_rtt_sample(struct rxdp_eqp *qp, uint64_t r)
{
	uint64_t d;

	eng_cc_rp_rtt(&qp->cc, &qp->e->cc, r, qp->e->now);
	if (!qp->comp.rtt_known || r < qp->comp.rtt_min)
		qp->comp.rtt_min = r;
	if (!qp->comp.rtt_known) {
		qp->comp.rtt_known = true;
		qp->comp.srtt = r;
		qp->comp.rttvar = r / 2;
		return;
	}
	d = qp->comp.srtt > r ? qp->comp.srtt - r : r - qp->comp.srtt;
	qp->comp.rttvar = (3 * qp->comp.rttvar + d) / 4;
	qp->comp.srtt = (7 * qp->comp.srtt + r) / 8;
}

/* (Re)start the retransmission timer from now; off if nothing is out */
void req_arm_timer(struct rxdp_eqp *qp)
{
	uint64_t to = comp_timeout_ns(qp), at;

	if (!req_outstanding(qp)) {
		qp->comp.timer_at = qp->comp.tlp_at = 0;
		return;
	}
	at = qp->e->now + req_rto(qp);
	if (to && at > qp->comp.retry_epoch + to)
		at = qp->comp.retry_epoch + to;
	qp->comp.timer_at = at;
}

/* The QP's timeout starts over (IBTA 9.7.6.1.3: on progress, on a resend) */
static void req_restart_timer(struct rxdp_eqp *qp)
{
	qp->comp.retry_epoch = qp->e->now;
	req_arm_timer(qp);
}

/*
 * An RC request packet went out (req.c): start the timer if it was off,
 * time a first transmission that the responder answers at once (AckReq),
 * and push the tail-loss probe back: it fires two round trips after the
 * last packet sent, if no ACK came meanwhile.
 */
void req_sent(struct rxdp_eqp *qp, uint32_t psn, bool retx, bool ackreq)
{
	if (!qp->comp.timer_at) {
		/* the first packet out after a quiet spell */
		qp->comp.cwnd_una = qp->comp.una;
		req_restart_timer(qp);
	}
	if (!retx && ackreq && !qp->comp.rtt_timing) {
		qp->comp.rtt_timing = true;
		qp->comp.rtt_at = qp->e->now;
		qp->comp.rtt_psn = psn;
	}
	if (qp->comp.rtt_known && !qp->comp.tlp_sent)
		qp->comp.tlp_at = qp->e->now + req_pto(qp);
}

/* --- requester ------------------------------------------------------------ */

/* The started, unfinished WQE whose packets include psn (*idx its index) */
static struct swqe *req_wqe_of(struct rxdp_eqp *qp, uint32_t psn, uint32_t *idx)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (!w->started)
			return NULL;
		if (w->done || !psn_in_window(psn, w->first_psn,
					      psn_add(w->first_psn, w->npkts)))
			continue;
		*idx = i;
		return w;
	}
	return NULL;
}

/* Send from PSN psn again; a read restarts from its first missing response */
static void req_rewind(struct rxdp_eqp *qp, uint32_t psn)
{
	uint32_t i;
	struct swqe *w = req_wqe_of(qp, psn, &i);

	if (!w)
		return;
	qp->req.sq_cur = i;
	qp->req.send_psn = psn;
	if (w->opcode == IBV_WR_RDMA_READ) {
		/*
		 * The rest of the read, asked for again: once per gap until a
		 * timer says otherwise, as responses sent before the
		 * responder hears of it still arrive out of sequence for a
		 * while.
		 */
		qp->req.send_psn = w->resp_psn;
		qp->comp.read_rewound = true;
		qp->comp.read_rewind_psn = w->resp_psn;
	}
}

/*
 * Karn's rule after a rewind: the ACK of a packet sent twice times nothing,
 * so the timing ends if the timed packet goes again; one before the rewind
 * was sent once and still times the path. (Ending it at every rewind lost
 * every sample once the path's RTT rose past the tail-loss probe's: each
 * flight was probed before its ACK came, and srtt never moved.)
 */
static void req_rtt_resent(struct rxdp_eqp *qp, uint32_t psn)
{
	if (!psn_after(psn, qp->comp.rtt_psn))
		qp->comp.rtt_timing = false;
}

/* Retire finished WQEs in order; a failed one takes the QP to ERR. */
void req_retire(struct rxdp_eqp *qp)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t cons =
		atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	while (cons != prod) {
		struct swqe *w = &qp->sq[cons & (qp->sq_size - 1)];
		struct ibv_wc wc;
		bool failed, signaled;

		/* and what it read has been written (mem.c) */
		if (!w->started || !w->done || !eng_mem_written(qp, w->mem_seq))
			break;
		if (qp->stage_req.who == w)
			eng_stage_release(&qp->stage_req);
		signaled = cqe_send_wc(qp, w, &wc);
		failed = w->status != IBV_WC_SUCCESS;
		if (!failed && w->npkts)
			eng_hwc(qp, RXDP_HWC_RDMA_SENDS);
		/* the slot is the posters' once sq_cons passes it */
		qpstate_sq_free(qp, ++cons);
		/* whoever sees the error completion sees the QP in ERR */
		if (failed)
			qpstate_set(qp, IBV_QPS_ERR);
		if (signaled)
			eng_cq_add(qp->scq, &wc, false);
		if (failed) {
			qp->req.sq_cur = cons;
			qpstate_to_err(qp, true);
			return;
		}
	}
	/*
	 * An ACK may pass the resend position (a go-back that was not needed:
	 * the packets were late, not lost): resume at una, and never at a
	 * retired WQE, whose slot a poster may be filling again.
	 */
	if (psn_before(qp->req.send_psn, qp->comp.una) ||
	    (int32_t)(qp->req.sq_cur - cons) < 0) {
		req_rewind(qp, qp->comp.una);
		if (psn_before(qp->req.send_psn, qp->comp.una) ||
		    (int32_t)(qp->req.sq_cur - cons) < 0) {
			/* everything sent is acknowledged */
			qp->req.sq_cur = cons;
			qp->req.send_psn = qp->comp.una;
		}
	}
}

/*
 * How much may be in flight. Go-back-N pays for a loss with everything
 * sent after it, and a window fuller than the path needs only lengthens
 * the queue in front of the responder (a software one, a CPU's worth of
 * packets), not the throughput. So the window halves on a loss (once per
 * window of packets) down to its floor (req_cwnd_floor()), and grows by a
 * packet per window acknowledged up to ENG_WINDOW, as TCP's congestion
 * avoidance does; a timeout starts it again from the floor. A loss that
 * one packet resent alone repairs (selective retransmission) costs only
 * that packet: the window loses an eighth. Through the lossy hop, 64 KiB
 * writes, MTU 1500, four alternating rounds (2-core VM), an eighth
 * against a quarter: at 0.1% loss 4.48-5.20 Gbit/s against 2.11-3.63
 * (medians 4.86 / 3.42; clean 5.08 / 4.81), at 1% 2.63-3.46 against
 * 2.38-3.26 (3.09 / 2.54), every round better at both. Before, a quarter
 * against halving: 4.89 / 4.57 at 0.1%, 3.41 / 3.47 at 1%; and no cut at
 * all lost at 1% (3.10 against a quarter's 3.52): a window that never
 * shrinks keeps more than one loss in flight at once there.
 */

/*
 * The floor: ENG_CWND_MIN (32), which keeps go-back-N's clean rate through
 * random loss (1% through a lossy hop: 0.71 of the clean goodput, against
 * 0.47 with a floor of 8 and 0.39 with 2); but 64 QPs of 32 packets each
 * overrun a receiver's ring (incast 16x4 with congestion control off: 57 000
 * overruns, against 7 700 with 8 and 4 600 with 2). So once congestion
 * control has cut a QP's rate (its share of the path, measured), the
 * floor is what that rate carries in the least round trip seen (the path
 * without its queues), 2 packets at least: the window then never holds
 * more than the QP's share needs.
 */
static uint32_t req_cwnd_floor(const struct rxdp_eqp *qp)
{
	uint64_t bytes;

	if (!eng_cc_rp_paced(&qp->cc) || !qp->comp.rtt_known)
		return ENG_CWND_MIN;
	/* kbit/s * ns / 8e6: bytes in flight at the rate, queues aside */
	bytes = qp->cc.rc * qp->comp.rtt_min / 8000000;
	if (bytes / qp->mtu >= ENG_CWND_MIN)
		return ENG_CWND_MIN;
	return bytes / qp->mtu > ENG_CWND_LOW ? (uint32_t)(bytes / qp->mtu)
					      : ENG_CWND_LOW;
}

enum req_cut {
	REQ_CUT_LOSS, /* a go-back: half */
	REQ_CUT_RESENT, /* a packet resent alone: an eighth */
	REQ_CUT_TIMEOUT, /* to the floor */
};

static void req_cwnd_cut(struct rxdp_eqp *qp, enum req_cut how)
{
	uint32_t floor = req_cwnd_floor(qp), w = qp->comp.cwnd;

	if (qp->comp.cwr && how != REQ_CUT_TIMEOUT)
		return; /* this loss belongs to a window already cut */
	w = how == REQ_CUT_TIMEOUT  ? floor
	    : how == REQ_CUT_RESENT ? w - w / 8
				    : w / 2;
	qp->comp.cwnd = w < floor ? floor : w;
	qp->comp.cwnd_acked = 0;
	qp->comp.cwr = true;
	qp->comp.cwr_psn = psn_add(qp->req.tx_hw, -1U);
}

static void req_cwnd_grow(struct rxdp_eqp *qp)
{
	qp->comp.cwnd_acked += psn_diff(qp->comp.una, qp->comp.cwnd_una);
	qp->comp.cwnd_una = qp->comp.una;
	if (qp->comp.cwr && psn_after(qp->comp.una, qp->comp.cwr_psn))
		qp->comp.cwr = false;
	while (qp->comp.cwnd < ENG_WINDOW &&
	       qp->comp.cwnd_acked >= qp->comp.cwnd) {
		qp->comp.cwnd_acked -= qp->comp.cwnd;
		qp->comp.cwnd++;
	}
}

/*
 * Go back to psn and resend everything from there (go-back-N, IBTA 9.7.6):
 * on a sequence NAK, a timeout, lost read responses. The window is cut,
 * and the first packet resent asks for an ACK.
 */
static void req_go_back_(struct rxdp_eqp *qp, uint32_t psn)
{
	req_rewind(qp, psn);
	req_rtt_resent(qp, qp->req.send_psn);
	qp->req.resend = false; /* it goes again with the rest */
	qp->comp.sr_recovery = false;
	qp->req.ackreq_next = true;
	req_cwnd_cut(qp, REQ_CUT_LOSS);
	qp->e->stats.go_backs++;
}

#define req_go_back(qp, psn, why)                                             \
	do {                                                                  \
		pr_debug("engine: QP %#x: resend from PSN %#x (%s; una %#x, " \
			 "next %#x)\n",                                       \
			 (qp)->qpn, (psn), (why), (qp)->comp.una,             \
			 (qp)->req.next_psn);                                 \
		req_go_back_((qp), (psn));                                    \
	} while (0)

/* The first WQE not yet done, or NULL */
static struct swqe *req_oldest(struct rxdp_eqp *qp, uint32_t *idx)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);

	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (!w->started)
			return NULL;
		if (!w->done) {
			if (idx)
				*idx = i;
			return w;
		}
	}
	return NULL;
}

static void req_fail(struct rxdp_eqp *qp, enum ibv_wc_status st)
{
	struct swqe *w = req_oldest(qp, NULL);

	if (w) {
		w->status = st;
		w->done = true;
	}
	req_retire(qp);
	if (!w)
		qpstate_to_err(qp, true);
}

/* The peer answers, though it makes no progress yet: the timers start over */
static void req_alive(struct rxdp_eqp *qp)
{
	req_restart_timer(qp);
	if (qp->comp.rtt_known && !qp->comp.tlp_sent)
		qp->comp.tlp_at = qp->e->now + req_pto(qp);
}

/*
 * A QP restored from a predecessor's state (takeover.c): its timers start
 * from now, as its predecessor's would have on its last progress. What the
 * handover lost (packets the predecessor had not flushed, answers that came
 * while no engine ran) is recovered as any loss is: going back from una at
 * once would resend a window the peer mostly has (test_takeover_mid_stream:
 * 256 packets against 4).
 */
void req_resume(struct rxdp_eqp *qp)
{
	qp->comp.rtt_timing = false;
	req_alive(qp);
}

/* una moved: the path works, every timer and counter starts over */
static void req_progress(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;

	if (qp->comp.rtt_timing && psn_after(qp->comp.una, qp->comp.rtt_psn)) {
		req_rtt_sample(qp, e->now - qp->comp.rtt_at);
		qp->comp.rtt_timing = false;
		/* Karn: a backed-off timeout stays until a sample says less */
		qp->comp.backoff = 0;
	}
	req_cwnd_grow(qp);
	qp->comp.seq_nak_seen = false;
	qp->comp.probing = false;
	qp->comp.tlp_sent = false;
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	req_restart_timer(qp);
	qp->comp.tlp_at = req_outstanding(qp) && qp->comp.rtt_known
				  ? e->now + req_pto(qp)
				  : 0;
}

/*
 * Every PSN up to and including psn is acknowledged (an ACK, or implied by
 * a NAK or a response, IBTA 9.7.5.2.1). Sends and writes it covers are
 * done. A read or atomic it covers whose responses have not all come was
 * answered, and the answers were lost: ask again (9.7.5.2.4).
 */
static void req_ack_upto(struct rxdp_eqp *qp, uint32_t psn)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_acquire);
	uint32_t i = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	uint32_t una = psn_add(psn, 1);
	bool read_lost = false;

	if (!rxdp_resp_psn_ok(psn, qp->comp.una, qp->req.next_psn))
		return; /* acknowledges nothing new */
	for (; i != prod; i++) {
		struct swqe *w = &qp->sq[i & (qp->sq_size - 1)];
		uint32_t last = psn_add(w->first_psn, w->npkts - 1);

		if (!w->started)
			break;
		if (w->done)
			continue;
		if (!(rxdp_wr_flags(w->opcode) & RXDP_WR_RESPONSE)) {
			if (psn_diff(last, psn) > 0)
				break;
			/* every packet sent, or the ACK could not cover it */
			w->done = true;
			continue;
		}
		if (psn_diff(last, psn) <= 0 &&
		    !(qp->comp.read_rewound &&
		      qp->comp.read_rewind_psn == w->resp_psn))
			read_lost = true;
		if (psn_after(una, w->resp_psn))
			una = w->resp_psn;
		break;
	}
	if (psn_after(una, qp->comp.una)) {
		qp->comp.una = una;
		qpmap_una(qp);
		req_progress(qp);
	}
	if (read_lost)
		req_go_back(qp, una, "an ACK passed an unanswered read");
	req_retire(qp);
}

/* The one response of a one-PSN WQE at psn arrived: it is done */
static void req_resp_done(struct rxdp_eqp *qp, struct swqe *w, uint32_t psn)
{
	w->done = true;
	w->resp_psn = psn_add(psn, 1);
	qp->req.rd_outstanding--;
	qp->comp.una = w->resp_psn;
	qpmap_una(qp);
	req_progress(qp);
	req_retire(qp);
}

/*
 * An Atomic Write or a Flush is answered by an RDMA Read Response Only
 * with no payload (IBTA 1.5 A19; Soft-RoCE's send_read_response_ack()):
 * done when it comes at the request's PSN. Anything else at that PSN
 * (payload, another read response) is not an answer to it.
 */
static void req_rx_placed(struct rxdp_eqp *qp, struct pkt_info *pi,
			  struct swqe *w, uint32_t psn)
{
	if (psn != w->first_psn)
		return; /* stale */
	if (pi->opcode != ROCE_RC_READ_RESPONSE_ONLY || pi->paylen) {
		pr_warn("engine: QP %u: opcode 0x%x with %u bytes answers %s\n",
			qp->qpn, pi->opcode, pi->paylen,
			w->opcode == IBV_WR_ATOMIC_WRITE ? "an Atomic Write"
							 : "a Flush");
		w->status = IBV_WC_BAD_RESP_ERR;
		w->done = true;
		qp->req.rd_outstanding--;
		req_retire(qp);
		return;
	}
	req_resp_done(qp, w, psn);
}

static void req_rx_read_resp(struct rxdp_eqp *qp, struct pkt_info *pi,
			     uint32_t psn)
{
	struct eng_wtag tag = { .psn = ~0U };
	struct swqe *w;
	bool last = pi->flags & ROCE_OPF_LAST;

	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	w = req_oldest(qp, NULL);
	if (pi->aeth &&
	    (aeth_syndrome(pi->aeth) & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		return;
	if (w && (w->opcode == IBV_WR_ATOMIC_WRITE ||
		  (unsigned int)w->opcode == RXDP_WR_FLUSH)) {
		req_rx_placed(qp, pi, w, psn);
		return;
	}
	if (!w || w->opcode != IBV_WR_RDMA_READ ||
	    !psn_in_window(psn, w->first_psn, psn_add(w->first_psn, w->npkts)))
		return; /* stale */
	if (psn != w->resp_psn) {
		/* a gap: responses were lost, ask for the rest once */
		if (psn_after(psn, w->resp_psn) &&
		    !(qp->comp.read_rewound &&
		      qp->comp.read_rewind_psn == w->resp_psn))
			req_go_back(qp, w->resp_psn, "a gap in read responses");
		/*
		 * Either way the responder is answering this read (responses
		 * sent before it heard of a resend drain for a while, a long
		 * read's for milliseconds): no timer fires while they come.
		 */
		req_alive(qp);
		return;
	}
	if (pi->paylen > w->length - w->resp_off ||
	    (!last && pi->paylen != qp->mtu) ||
	    (last && w->resp_off + pi->paylen != w->length)) {
		pr_warn("engine: QP %u: read response of %u bytes does not "
			"fit\n",
			qp->qpn, pi->paylen);
		w->status = IBV_WC_BAD_RESP_ERR;
		w->done = true;
		qp->req.rd_outstanding--;
		req_retire(qp);
		return;
	}
	tag.wqe = (uint32_t)(w - qp->sq);
	/* no room with the owner's memory thread: it comes again (a gap) */
	if (sge_copy_to(qp, w->sg, w->nsg, w->resp_off, pi->payload, pi->paylen,
			&tag))
		return;
	w->mem_seq = qp->mem_seq;
	w->resp_off += pi->paylen;
	w->resp_psn = psn_add(psn, 1);
	qp->comp.una = w->resp_psn;
	qpmap_una(qp);
	if (last) {
		w->done = true;
		qp->req.rd_outstanding--;
	}
	req_progress(qp);
	req_retire(qp);
}

static void req_rx_atomic_ack(struct rxdp_eqp *qp, struct pkt_info *pi,
			      uint32_t psn)
{
	struct eng_wtag tag = { .psn = ~0U };
	struct swqe *w;
	uint64_t orig;

	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	w = req_oldest(qp, NULL);
	if (!w || w->first_psn != psn ||
	    (w->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	     w->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD))
		return;
	/*
	 * The original value lands in the local buffer in host order; with no
	 * room at the owner's memory thread, the ACK is dropped and the timer
	 * asks again (the responder answers from its replay cache)
	 */
	orig = atomicacketh_orig(pi->atomicacketh);
	tag.wqe = (uint32_t)(w - qp->sq);
	if (sge_copy_to(qp, w->sg, w->nsg, 0, (const uint8_t *)&orig, 8, &tag))
		return;
	w->mem_seq = qp->mem_seq;
	req_resp_done(qp, w, psn);
}

/*
 * Selective retransmission: a sequence NAK that says its responder holds
 * what came past the gap (ROCE_BTH_RXDP_HELD: an rxdp peer) has the packet
 * at psn resent alone (req_tx), not everything from it, where that is a
 * Send's or a Write's that went out. Else, and for a device that goes
 * back (cfg.go_back_n), after a timeout (probing) or for a read or an
 * atomic: go-back-N. false: go back.
 */
static bool req_resend_one(struct rxdp_eqp *qp, const struct pkt_info *pi,
			   uint32_t psn)
{
	struct swqe *w;
	uint32_t i;

	if (!bth_rxdp_held(pi->bth) || qp->e->cfg.go_back_n ||
	    qp->comp.probing || !psn_before(psn, qp->req.tx_hw))
		return false;
	w = req_wqe_of(qp, psn, &i);
	if (!w || (rxdp_wr_flags(w->opcode) & RXDP_WR_RESPONSE))
		return false;
	pr_debug("engine: QP %#x: resend PSN %#x alone (una %#x, next %#x)\n",
		 qp->qpn, psn, qp->comp.una, qp->req.next_psn);
	qp->req.resend = true;
	qp->req.resend_psn = psn;
	qp->req.resend_wqe = i;
	qp->comp.sr_recovery = true;
	qp->comp.sr_recovery_psn = qp->req.tx_hw;
	req_rtt_resent(qp, psn);
	req_cwnd_cut(qp, REQ_CUT_RESENT);
	return true;
}

static void req_rx_ack(struct rxdp_eqp *qp, struct pkt_info *pi, uint32_t psn)
{
	uint8_t syn = aeth_syndrome(pi->aeth);
	struct rxdp_engine *e = qp->e;

	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		req_ack_upto(qp, psn);
		return;
	case ROCE_AETH_RNR_NAK:
		/* 9.7.5.2.8: wait the responder's time, then resend psn */
		eng_hwc(qp, RXDP_HWC_RCVD_RNR);
		req_ack_upto(qp, psn_add(psn, -1U));
		if (atomic_load(&qp->state) == IBV_QPS_ERR)
			return;
		if (qp->rnr_retry != 7 && qp->comp.rnr_left == 0) {
			eng_hwc(qp, RXDP_HWC_RNR_RETRY_EXCEEDED);
			req_fail(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->rnr_retry != 7)
			qp->comp.rnr_left--;
		qp->comp.rnr_at =
			e->now + (uint64_t)rnr_timer_10us[syn & 0x1f] * 10000;
		qp->comp.rnr_psn = psn;
		qp->comp.probing = false;
		qp->comp.timer_at = qp->comp.tlp_at = 0;
		return;
	case ROCE_AETH_NAK:
		break;
	default:
		return; /* reserved */
	}
	req_ack_upto(qp, psn_add(psn, -1U));
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		return;
	switch (syn & 0x1f) {
	case ROCE_NAK_PSN_SEQ_ERR:
		eng_hwc(qp, RXDP_HWC_RCVD_SEQ_ERR);
		/* packets sent after an RNR NAK draw this too: ignore them */
		if (qp->comp.rnr_at && psn == qp->comp.rnr_psn)
			return;
		if (!psn_in_window(psn, qp->comp.una,
				   psn_add(qp->req.next_psn, 1)))
			return;
		/*
		 * The responder NAKs a gap once (9.7.5.1.3): the same NAK
		 * again before its resend made progress (or timed out) is a
		 * copy the network made, or a peer that repeats itself. One
		 * go-back per gap.
		 */
		if (qp->comp.seq_nak_seen && qp->comp.seq_nak_psn == psn) {
			e->stats.naks_ignored++;
			return;
		}
		qp->comp.seq_nak_seen = true;
		qp->comp.seq_nak_psn = psn;
		/*
		 * A sequence NAK proves the responder alive and tells where
		 * it stands: go back there at once. It does not use up
		 * retry_cnt, which counts timeouts (an unreachable peer);
		 * go-back-N behind a read that blocks una would otherwise
		 * exhaust it on a merely lossy path.
		 */
		eng_hwc(qp, RXDP_HWC_COMP_RETRY);
		if (!req_resend_one(qp, pi, psn)) {
			qp->comp.probing = false;
			req_go_back(qp, psn, "sequence NAK");
		}
		req_arm_timer(qp);
		return;
	case ROCE_NAK_INVALID_REQ:
		req_fail(qp, IBV_WC_REM_INV_REQ_ERR);
		return;
	case ROCE_NAK_REM_ACCESS_ERR:
		req_fail(qp, IBV_WC_REM_ACCESS_ERR);
		return;
	case ROCE_NAK_INVALID_RD_REQ:
		req_fail(qp, IBV_WC_REM_INV_RD_REQ_ERR);
		return;
	default:
		req_fail(qp, IBV_WC_REM_OP_ERR);
		return;
	}
}

void req_rx(struct rxdp_eqp *qp, struct pkt_info *pi)
{
	int state = atomic_load(&qp->state);
	uint32_t psn = bth_psn(pi->bth);

	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD &&
	    state != IBV_QPS_SQE) {
		qp->e->stats.rx_drop_state++;
		return;
	}
	/* responses only ever answer PSNs in [una - 1, next_psn) */
	if (!psn_in_window(psn, psn_add(qp->comp.una, -1U), qp->req.next_psn)) {
		qp->e->stats.rx_drop_psn++;
		return;
	}
	if (pi->opcode == ROCE_RC_ACK)
		req_rx_ack(qp, pi, psn);
	else if (pi->opcode == ROCE_RC_ATOMIC_ACK)
		req_rx_atomic_ack(qp, pi, psn);
	else if (pi->flags & ROCE_OPF_READ)
		req_rx_read_resp(qp, pi, psn);
}

/*
 * Nothing acknowledged for two round trips since the last packet went out:
 * send that packet again, asking for an ACK. The responder answers it at
 * once, with an ACK if it has everything (the ACK was lost) or a sequence
 * NAK for the first packet it misses (the tail was lost), so a lost tail
 * costs a round trip instead of a timeout. One probe per tail.
 */
static int req_probe(struct rxdp_eqp *qp)
{
	qp->comp.tlp_at = 0;
	/*
	 * A lone packet has no tail to probe: resending it is the timer's
	 * job (RFC 8985 waits a delayed ACK's time longer for it), and a
	 * probe there would only race an ACK that is late.
	 */
	if (!req_outstanding(qp) || qp->comp.tlp_sent ||
	    psn_diff(qp->req.send_psn, qp->comp.una) < 2)
		return 0;
	pr_debug("engine: QP %#x: tail-loss probe at PSN %#x (una %#x)\n",
		 qp->qpn, psn_add(qp->req.send_psn, -1U), qp->comp.una);
	qp->comp.tlp_sent = true;
	qp->e->stats.tlp_probes++;
	req_rewind(qp, psn_add(qp->req.send_psn, -1U));
	req_rtt_resent(qp, qp->req.send_psn);
	qp->req.ackreq_next = true;
	return 1;
}

int comp_timers(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	int state = atomic_load(&qp->state);
	uint64_t to;

	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD)
		return 0;
	if (qp->comp.rnr_at && e->now >= qp->comp.rnr_at) {
		qp->comp.rnr_at = 0;
		req_rewind(qp, qp->comp.rnr_psn);
		req_restart_timer(qp);
		return 1;
	}
	if (qp->comp.tlp_at && e->now >= qp->comp.tlp_at &&
	    (!qp->comp.timer_at || qp->comp.tlp_at < qp->comp.timer_at))
		return req_probe(qp);
	if (!qp->comp.timer_at || e->now < qp->comp.timer_at)
		return 0;
	if (!req_outstanding(qp)) {
		qp->comp.timer_at = 0;
		return 0;
	}
	to = comp_timeout_ns(qp);
	if (to && e->now >= qp->comp.retry_epoch + to) {
		/* the QP's own timeout (9.7.6.1.3): retry_cnt counts these */
		e->stats.timeouts++;
		if (qp->comp.retry_left == 0) {
			eng_hwc(qp, RXDP_HWC_RETRY_EXCEEDED);
			req_fail(qp, IBV_WC_RETRY_EXC_ERR);
			return 1;
		}
		eng_hwc(qp, RXDP_HWC_COMP_RETRY);
		qp->comp.retry_left--;
		qp->comp.retry_epoch = e->now;
	} else {
		e->stats.rto_expiries++;
	}
	if (qp->comp.backoff < ENG_RTO_BACKOFF_MAX)
		qp->comp.backoff++;
	qp->comp.seq_nak_seen = false;
	qp->comp.tlp_sent = true; /* the timer has it now */
	qp->comp.tlp_at = 0;
	req_cwnd_cut(qp, REQ_CUT_TIMEOUT);
	/*
	 * An expiry says nothing of where the responder stands: one packet
	 * (with AckReq) asks, and its answer (an ACK up to the newest PSN it
	 * has, or a NAK) reopens the window (req_progress()). Resending the
	 * window instead buries a responder that is merely slow under
	 * duplicates, so that it falls further behind with each expiry until
	 * retry_cnt runs out (a Soft-RoCE peer, or rxdp, in a slow VM).
	 */
	qp->comp.probing = true;
	req_go_back(qp, qp->comp.una, "timeout");
	req_arm_timer(qp);
	return 1;
}

uint64_t comp_deadline(struct rxdp_eqp *qp)
{
	uint64_t d = UINT64_MAX;

	if (qp->comp.timer_at && qp->comp.timer_at < d)
		d = qp->comp.timer_at;
	if (qp->comp.rnr_at && qp->comp.rnr_at < d)
		d = qp->comp.rnr_at;
	if (qp->comp.tlp_at && qp->comp.tlp_at < d)
		d = qp->comp.tlp_at;
	return d;
}
