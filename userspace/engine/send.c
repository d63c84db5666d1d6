// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sending a packet (a service of the transport): built along a path into a
 * frame of the port and queued. Engine lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/*
 * Build one packet along pp (d->dqpn already set) into a frame of the
 * port: the frame and *len its length, or NULL and *len -errno
 */
void *send_build(struct rxdp_eqp *qp, struct pkt_desc *d,
		 const struct pkt_path *pp, int *len)
{
	struct rxdp_engine *e = qp->e;
	uint32_t cap = 0;
	void *buf;
	int n;

	buf = e->cfg.ops->tx_get(e->cfg.port, &cap);
	if (!buf) {
		e->tx_blocked = true;
		e->stats.tx_no_buf++;
		*len = -EAGAIN;
		return NULL;
	}
	d->pkey = qp->pkey;
	n = pkt_build(buf, cap, pp, d);
	if (n < 0) {
		e->cfg.ops->tx_abort(e->cfg.port, buf);
		*len = n;
		if (n == -EAGAIN) /* its payload is being staged (mem.c) */
			return NULL;
		eng_hwc(qp, RXDP_HWC_SEND_ERR);
		if (n != -EFAULT)
			pr_warn("engine: QP %u: cannot build opcode 0x%x: %d\n",
				qp->qpn, d->opcode, n);
		return NULL;
	}
	*len = n;
	return buf;
}

/* Queue the frame send_build() made of d: n bytes */
void send_queue(struct rxdp_eqp *qp, const struct pkt_desc *d, void *buf, int n)
{
	struct rxdp_engine *e = qp->e;
	/* to its own MAC: the port loops it back (no stream: engine.c) */
	bool loop = pkt_looped(buf, (uint32_t)n);

	e->cfg.ops->tx_put(e->cfg.port, buf, n);
	e->stats.tx_packets++;
	if (!loop)
		eng_sched_data(&e->sched, false, d->paylen != 0);
	/* a message out, not a retransmission (tail-loss probes included) */
	if (!loop &&
	    (roce_opcode_flags(d->opcode) &
	     (ROCE_OPF_REQUEST | ROCE_OPF_LAST)) ==
		    (ROCE_OPF_REQUEST | ROCE_OPF_LAST) &&
	    !psn_before(d->psn, qp->req.tx_hw))
		eng_sched_msg(&e->sched, false);
	eng_hwc(qp, RXDP_HWC_SENT_PKTS);
	eng_hwc_add(qp, RXDP_HWC_SENT_BYTES, d->paylen);
	e->stats.tc[qp->tc].tx_packets++;
	e->stats.tc[qp->tc].tx_bytes += d->paylen;
	/*
	 * An RC request behind requests already on the wire may wait for the
	 * next flush if their acknowledgement is sure to bring a pass
	 * (eng_ack_due). Anything else (the first one out, a retransmission, a
	 * response, UC, UD) goes out this pass.
	 */
	e->tx_unflushed++;
	if (d->ackreq)
		qp->req.ackreq_end = psn_add(d->psn, 1);
	if (qp->type != IBV_QPT_RC ||
	    (roce_opcode_flags(d->opcode) & ROCE_OPF_RESPONSE) ||
	    !eng_ack_due(qp) || psn_before(d->psn, qp->req.flushed_psn))
		e->tx_urgent = true;
}

/* Build and queue one packet along pp (d->dqpn already set) */
int send_pkt_path(struct rxdp_eqp *qp, struct pkt_desc *d,
		  const struct pkt_path *pp)
{
	int n;
	void *buf = send_build(qp, d, pp, &n);

	if (!buf)
		return n;
	send_queue(qp, d, buf, n);
	return 0;
}

/* ... to the connected peer */
int send_pkt(struct rxdp_eqp *qp, struct pkt_desc *d)
{
	d->dqpn = qp->dest_qpn;
	return send_pkt_path(qp, d, &qp->path);
}
