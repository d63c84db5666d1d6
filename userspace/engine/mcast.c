// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Multicast (IBTA 10.5.2.4, RoCEv2 A17.4.5): UD QPs attached to groups
 * (ibv_attach_mcast), and datagrams to QPN 0xFFFFFF delivered to every QP
 * of the device attached to the group their destination address names,
 * each its own receive completion within its own Q_Key (resp.c's UD
 * responder), as Soft-RoCE's rxe_rcv_mcast_pkt() does.
 *
 * The group table is the engine's (engine lock held throughout): a small
 * hash of groups by GID, each with the QPs attached to it. The caps
 * (include/rxdp/params.h: groups per device, QPs per group, attachments per
 * device and per QP) bound what one datagram costs (a receive per member)
 * and what one owner can take. The XDP program learns the groups with
 * members from the mcast map (qpmap.c writes it) and drops datagrams for
 * every other group; the owner of the engine (rxdpd) is told when a group
 * gains its first member or loses its last (cfg.mcast_cb), to make the
 * interface join or leave it (IGMP/MLD).
 *
 * A datagram a QP of this device sends to a group also reaches the
 * device's own members (a frame on the wire does not come back to its
 * sender): loopback, as Soft-RoCE delivers it and a ConnectX does unless
 * the QP was made with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB.
 *
 * Several engines of one device (cfg.group): each keeps the groups of its
 * own QPs; the group of engines keeps which engines have members of which
 * group (under its mc_lock), so that the map and the owner hear of a
 * group's first member and last leave on the device, not per engine, and
 * a datagram an engine receives or sends is copied to the inbox of every
 * other engine with members (eng_mcast_handoff), which delivers it to its
 * own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* A RoCE v2 multicast GID: IPv6 ff00::/8, or IPv4-mapped 224.0.0.0/4 */
bool rxdp_gid_is_multicast(const uint8_t *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4mapped, 12) && (gid[12] & 0xf0) == 0xe0;
}

static uint32_t mcast_bucket(const uint8_t *gid)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (int i = 0; i < 16; i++)
		h = (h ^ gid[i]) * 16777619u;
	return h % ENG_MCAST_BUCKETS;
}

struct eng_mcast_grp *eng_mcast_find(struct rxdp_engine *e, const uint8_t *gid,
				     struct eng_mcast_grp ***link)
{
	struct eng_mcast_grp **pp = &e->mcast[mcast_bucket(gid)];

	for (; *pp; pp = &(*pp)->next)
		if (!memcmp((*pp)->gid, gid, 16))
			break;
	if (link)
		*link = pp;
	return *pp;
}

struct eng_group_mc {
	uint8_t gid[16];
	uint32_t engines; /* bit k: engine k has members */
};

/*
 * This engine's members of gid went from none to some (member) or back:
 * true if the device's did too (a lone engine's always)
 */
static bool mcast_device_update(struct rxdp_engine *e, const uint8_t *gid,
				bool member)
{
	struct rxdp_engine_group *g = e->cfg.group;
	uint32_t bit = 1U << e->cfg.group_index, i;
	bool changed = true;

	if (!g)
		return true;
	pthread_mutex_lock(&g->mc_lock);
	for (i = 0; i < g->nmc && memcmp(g->mc[i].gid, gid, 16); i++)
		;
	if (member) {
		if (i == g->nmc) {
			struct eng_group_mc *m =
				realloc(g->mc, (g->nmc + 1) * sizeof(*m));

			if (!m) /* untracked: announced as a lone engine's */
				goto out;
			g->mc = m;
			memcpy(m[i].gid, gid, 16);
			m[i].engines = 0;
			g->nmc++;
		}
		changed = !g->mc[i].engines;
		g->mc[i].engines |= bit;
	} else if (i < g->nmc) {
		g->mc[i].engines &= ~bit;
		changed = !g->mc[i].engines;
		if (changed)
			g->mc[i] = g->mc[--g->nmc];
	}
out:
	pthread_mutex_unlock(&g->mc_lock);
	return changed;
}

/* A new group here would pass the device's cap (the mcast map's size) */
static bool mcast_device_full(struct rxdp_engine *e, const uint8_t *gid)
{
	struct rxdp_engine_group *g = e->cfg.group;
	bool full;

	if (!g)
		return false;
	pthread_mutex_lock(&g->mc_lock);
	full = g->nmc >= RXDP_MAX_MCAST_GRP;
	for (uint32_t i = 0; full && i < g->nmc; i++)
		if (!memcmp(g->mc[i].gid, gid, 16))
			full = false; /* another engine's: the device has it */
	pthread_mutex_unlock(&g->mc_lock);
	return full;
}

/*
 * A datagram to gid (f: its frame) that this engine received or sent: a
 * copy to every other engine of the group with members of gid
 */
void eng_mcast_handoff(struct rxdp_engine *e, const uint8_t *gid,
		       const struct rxdp_frame *f)
{
	struct rxdp_engine_group *g = e->cfg.group;
	uint32_t mask = 0;

	if (!g)
		return;
	pthread_mutex_lock(&g->mc_lock);
	for (uint32_t i = 0; i < g->nmc; i++) {
		if (!memcmp(g->mc[i].gid, gid, 16)) {
			mask = g->mc[i].engines;
			break;
		}
	}
	pthread_mutex_unlock(&g->mc_lock);
	mask &= ~(1U << e->cfg.group_index);
	for (int k = 0; mask; k++, mask >>= 1)
		if (mask & 1)
			eng_inbox_put(e, k, f, false);
}

/* The group's member count changed between 0 and 1: tell the map and rxdpd */
static void mcast_announce(struct rxdp_engine *e, const uint8_t *gid,
			   bool member)
{
	if (!mcast_device_update(e, gid, member))
		return;
	qpmap_mcast(e, gid, member);
	if (e->cfg.mcast_cb)
		e->cfg.mcast_cb(e->cfg.mcast_arg, gid, member);
}

/* Take qp out of the group at *link; frees an emptied group */
static void mcast_remove(struct rxdp_engine *e, struct eng_mcast_grp **link,
			 uint32_t i)
{
	struct eng_mcast_grp *g = *link;

	g->qp[i]->mcast_n--;
	g->qp[i] = g->qp[--g->n];
	e->mcast_nattach--;
	if (g->n)
		return;
	*link = g->next;
	e->mcast_ngrp--;
	mcast_announce(e, g->gid, false);
	free(g);
}

/* Engine lock held (qp.c): qp joins the group of gid */
int eng_mcast_join(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
		   size_t whylen)
{
	struct rxdp_engine *e = qp->e;
	struct eng_mcast_grp *g, **link;
	int ret = 0;

	if (qp->type != IBV_QPT_UD || !rxdp_gid_is_multicast(gid)) {
		snprintf(why, whylen, "%s",
			 qp->type != IBV_QPT_UD
				 ? "only UD QPs attach to multicast groups"
				 : "not a multicast GID (ff00::/8 or "
				   "::ffff:224.0.0.0/4)");
		return -EINVAL;
	}
	g = eng_mcast_find(e, gid, &link);
	if (g) {
		for (uint32_t i = 0; i < g->n; i++)
			if (g->qp[i] == qp) {
				ret = -EALREADY; /* ibv_attach_mcast: 0 */
				goto out;
			}
	}
	if (qp->mcast_n >= RXDP_MAX_MCAST_PER_QP ||
	    e->mcast_nattach >= RXDP_MAX_TOTAL_MCAST_QP_ATTACH ||
	    (g && g->n >= RXDP_MAX_MCAST_QP_ATTACH) ||
	    (!g && (e->mcast_ngrp >= RXDP_MAX_MCAST_GRP ||
		    mcast_device_full(e, gid)))) {
		snprintf(why, whylen,
			 "multicast limits: %u groups per QP, %u QPs per "
			 "group, %u groups and %u attachments per device",
			 RXDP_MAX_MCAST_PER_QP, RXDP_MAX_MCAST_QP_ATTACH,
			 RXDP_MAX_MCAST_GRP, RXDP_MAX_TOTAL_MCAST_QP_ATTACH);
		ret = -ENOMEM;
		goto out;
	}
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(g->gid, gid, 16);
		*link = g;
		e->mcast_ngrp++;
		mcast_announce(e, gid, true);
		ret = 1;
	}
	g->qp[g->n++] = qp;
	qp->mcast_n++;
	e->mcast_nattach++;
out:
	return ret;
}

/* Engine lock held (qp.c): qp leaves the group of gid */
int eng_mcast_leave(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
		    size_t whylen)
{
	struct rxdp_engine *e = qp->e;
	struct eng_mcast_grp *g, **link;
	int ret = -EINVAL;

	if (qp->type != IBV_QPT_UD || !rxdp_gid_is_multicast(gid)) {
		snprintf(why, whylen, "%s",
			 qp->type != IBV_QPT_UD
				 ? "only UD QPs attach to multicast groups"
				 : "not a multicast GID");
		return -EINVAL;
	}
	g = eng_mcast_find(e, gid, &link);
	for (uint32_t i = 0; g && i < g->n; i++) {
		if (g->qp[i] == qp) {
			mcast_remove(e, link, i);
			ret = 0;
			break;
		}
	}
	if (ret)
		snprintf(why, whylen, "QP %#x is not attached to that group",
			 qp->qpn);
	return ret;
}

/* The QP goes (engine lock held): out of every group it is in */
void eng_mcast_qp_gone(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;

	for (uint32_t b = 0; b < ENG_MCAST_BUCKETS && qp->mcast_n; b++) {
		struct eng_mcast_grp **link = &e->mcast[b];

		while (*link) {
			struct eng_mcast_grp *g = *link;
			bool gone = false;

			for (uint32_t i = 0; i < g->n; i++) {
				if (g->qp[i] == qp) {
					gone = g->n == 1;
					mcast_remove(e, link, i);
					break;
				}
			}
			if (!gone)
				link = &g->next;
		}
	}
}
