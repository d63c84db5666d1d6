// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A QP's images in the BPF maps the XDP program reads (include/rxdp/maps.h):
 * every write rxdp makes to qp_ctx, qp_psn and qp_stats is here, from the
 * engine's QP record, which is the only record of a QP's state and
 * attributes (the daemon keeps handles, owners and quotas).
 *
 * Who writes what:
 * - qp_ctx: this file, one whole element per bpf_map_update_elem() (a hash
 *   map update swaps in a new element under RCU, so the program never sees
 *   half a context): at create, at every transition the engine makes
 *   (modify, or the transport taking the QP to ERR), when the path's MAC
 *   changes; deleted at destroy.
 * - qp_psn: una_psn and next_psn this file only (32-bit release stores
 *   through the mapping, no system call per packet), and with una_psn the
 *   QP's rate and alpha (cc_rate_kbps, cc_alpha; and at each CNP); epsn
 *   seeded here when
 *   the QP gets its rq_psn, advanced from then on by the XDP program (it
 *   sees requests before the engine, whose view lags the wire), and moved
 *   on here, never back, past requests the responder held or took that
 *   the program let by without moving it (HOLD); flags: the program sets
 *   NAK_SENT, this file clears it with epsn and sets HOLD; qpn claimed here
 *   at create, freed at destroy.
 * - qp_stats: zeroed here at create; counted by the program.
 * - mcast: an entry per multicast group with members (mcast.c says when).
 * Engine lock held throughout; without maps (tests) only the PSN slot,
 * the QP's own or the table the test gives, is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "common/log.h"
#include "engine/engine_int.h"

static void psn_store(__u32 *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The rate congestion control gives the QP, and alpha, for bpftool */
void qpmap_cc(struct rxdp_eqp *qp)
{
	uint64_t kbps = qp->cc.rc;

	psn_store(&qp->psn->cc_rate_kbps,
		  kbps > UINT32_MAX ? UINT32_MAX : (uint32_t)kbps);
	psn_store(&qp->psn->cc_alpha, qp->cc.alpha);
}

/* The requester's window, for the program's response check; its rate */
void qpmap_una(struct rxdp_eqp *qp)
{
	psn_store(&qp->psn->una_psn, qp->comp.una);
	qpmap_cc(qp);
}

void qpmap_next(struct rxdp_eqp *qp)
{
	psn_store(&qp->psn->next_psn, qp->req.next_psn);
}

void qpmap_psn_sync(struct rxdp_eqp *qp)
{
	qpmap_una(qp);
	qpmap_next(qp);
}

/* Whether the responder holds what comes past a gap (resp.c) */
void qpmap_hold(struct rxdp_eqp *qp, bool hold)
{
	if (hold)
		__atomic_fetch_or(&qp->psn->flags, RXDP_PSNF_HOLD,
				  __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&qp->psn->flags, ~RXDP_PSNF_HOLD,
				   __ATOMIC_RELEASE);
}

/*
 * The responder's expected PSN, which the program advances from here on;
 * and it holds (RC, unless the device goes back: cfg.go_back_n)
 */
void qpmap_seed_epsn(struct rxdp_eqp *qp)
{
	psn_store(&qp->psn->epsn, qp->resp.epsn);
	__atomic_fetch_and(&qp->psn->flags, ~RXDP_PSNF_NAK_SENT,
			   __ATOMIC_RELEASE);
	qpmap_hold(qp, qp->type == IBV_QPT_RC && !qp->e->cfg.go_back_n);
}

/*
 * The responder took held requests: the program's epsn moves on to the
 * engine's, never back (it may have moved further meanwhile)
 */
void qpmap_epsn(struct rxdp_eqp *qp)
{
	uint32_t cur = __atomic_load_n(&qp->psn->epsn, __ATOMIC_ACQUIRE);

	while (psn_before(cur, qp->resp.epsn) &&
	       !__atomic_compare_exchange_n(&qp->psn->epsn, &cur, qp->resp.epsn,
					    false, __ATOMIC_RELEASE,
					    __ATOMIC_ACQUIRE))
		;
}

/* The QP's context as the program must see it now: 0 or -errno */
int qpmap_ctx(struct rxdp_eqp *qp)
{
	const struct rxdp_engine_maps *maps = qp->e->cfg.maps;
	struct rxdp_qp_ctx ctx;

	if (!maps)
		return 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.qpn = qp->qpn;
	ctx.qp_type = qp->type;
	ctx.state = (__u8)atomic_load(&qp->state);
	ctx.pkey = qp->pkey;
	ctx.dest_qpn = qp->type == IBV_QPT_UD ? 0 : qp->dest_qpn;
	ctx.qkey = qp->type == IBV_QPT_UD ? qp->qkey : 0;
	ctx.owner_slot = qp->e->cfg.xsk_slot; /* its engine's sockets */
	ctx.owner_pid = qp->owner_pid;
	ctx.flags = ctx.state == IBV_QPS_SQD ? RXDP_QPF_SQ_DRAINING : 0;
	/* the MTU its packets carry: the engine's, which the frames can cap */
	ctx.path_mtu = (__u8)(__builtin_ctz(qp->mtu) - 7);
	ctx.access_flags = qp->attr.qp_access_flags;
	if (qp->type != IBV_QPT_UD) {
		/* the path's peer is the only source (all zero before RTR) */
		memcpy(ctx.peer_ip, qp->rpath.dip, 16);
		memcpy(ctx.local_ip, qp->rpath.sip, 16);
		memcpy(ctx.peer_mac, qp->rpath.dmac, 6);
		if (qp->rpath.ipv6)
			ctx.flags |= RXDP_QPF_PEER_IPV6;
		/* its MAC too, where the path resolved a unicast one (rules.h) */
		if (rxdp_peer_mac_checked(qp->rpath.dmac))
			ctx.flags |= RXDP_QPF_PEER_MAC;
	}
	if (bpf_map_update_elem(maps->qp_ctx, &ctx.qpn, &ctx, BPF_ANY)) {
		int err = -errno;

		pr_warn("engine: QP %#x: cannot write its context: %s\n",
			qp->qpn, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * A new QP: its PSN slot and counters first, the context (which makes it
 * visible to the program) last. 0 or -errno (nothing left behind).
 */
int qpmap_create(struct rxdp_eqp *qp)
{
	const struct rxdp_engine_maps *maps = qp->e->cfg.maps;
	__u32 idx = qp->qpn & RXDP_QP_INDEX_MASK;
	int err = 0;

	memset(qp->psn, 0, sizeof(*qp->psn));
	psn_store(&qp->psn->qpn, qp->qpn);
	if (maps) {
		size_t sz = sizeof(struct rxdp_qp_stats) * (size_t)maps->ncpus;
		void *zero = calloc(1, sz);

		if (!zero)
			err = -ENOMEM;
		else if (bpf_map_update_elem(maps->qp_stats, &idx, zero,
					     BPF_ANY))
			err = -errno;
		free(zero);
	}
	if (!err)
		err = qpmap_ctx(qp);
	if (err)
		psn_store(&qp->psn->qpn, 0);
	return err;
}

/* The QP goes: the context first (the program stops steering to it) */
void qpmap_destroy(struct rxdp_eqp *qp)
{
	const struct rxdp_engine_maps *maps = qp->e->cfg.maps;

	if (maps && bpf_map_delete_elem(maps->qp_ctx, &qp->qpn) &&
	    errno != ENOENT)
		pr_warn("engine: QP %#x: cannot delete its context: %s\n",
			qp->qpn, strerror(errno));
	if (qp->psn->qpn == qp->qpn)
		memset(qp->psn, 0, sizeof(*qp->psn));
}

/* A multicast group got its first member here, or lost its last */
void qpmap_mcast(struct rxdp_engine *e, const uint8_t *gid, bool member)
{
	const struct rxdp_engine_maps *maps = e->cfg.maps;
	struct rxdp_mcast_grp g = { .members = 1 };
	struct rxdp_mcast_key k;
	int err;

	if (!maps || maps->mcast <= 0)
		return;
	memcpy(k.gid, gid, 16);
	err = member ? bpf_map_update_elem(maps->mcast, &k, &g, BPF_ANY)
		     : bpf_map_delete_elem(maps->mcast, &k);
	if (err && errno != ENOENT)
		pr_warn("engine: cannot %s a multicast group in the map: %s\n",
			member ? "add" : "remove", strerror(errno));
}

/*
 * The contexts and PSN slots a previous owner of the maps left (an rxdpd
 * that was killed: its transport state died with it): removed. How many.
 */
unsigned int rxdp_engine_maps_clean(const struct rxdp_engine_maps *maps,
				    struct rxdp_qp_psn *psn)
{
	unsigned int n = 0;
	__u32 key;

	while (!bpf_map_get_next_key(maps->qp_ctx, NULL, &key)) {
		if (bpf_map_delete_elem(maps->qp_ctx, &key))
			break;
		n++;
	}
	if (maps->mcast > 0) {
		struct rxdp_mcast_key k;

		while (!bpf_map_get_next_key(maps->mcast, NULL, &k))
			if (bpf_map_delete_elem(maps->mcast, &k))
				break;
	}
	for (__u32 i = 0; i < RXDP_MAX_QP; i++)
		if (psn[i].qpn)
			memset(&psn[i], 0, sizeof(psn[i]));
	return n;
}
