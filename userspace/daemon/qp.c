// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * QP contexts: numbers, state transitions, and their images in the pinned
 * maps the XDP program reads.
 *
 * Consistency rules:
 * - qp_ctx is written only here, one whole element per bpf_map_update_elem()
 *   (a hash map update swaps in a new element under RCU), so the program
 *   never sees half a context.
 * - qp_psn belongs to the owning engine once the QP runs; the daemon seeds
 *   single fields through its own shared mapping with 32-bit stores and
 *   never rewrites the element, so it cannot undo the engine's updates.
 * - A transition is validated completely before anything is written; if the
 *   map write fails, the daemon's copy is restored: -errno, nothing changed.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <bpf/bpf.h>
#include <infiniband/verbs.h>

#include "common/log.h"
#include "daemon/qp_sm.h"
#include "daemon/rxdpd.h"
#include "rxdp/psn.h"

#define QPN_MAX 0xffffffU /* 24 bits, IBTA 9.2 */
#define QPN_GEN_MASK (QPN_MAX >> RXDP_QP_INDEX_BITS)
#define RESOLVE_TIMEOUT_MS 3000

/*
 * Least information: a QP's PSNs, peer and owner are shown to the user who
 * made it and to root, and to no one else: to the others it does not exist
 * (as another user's processes with /proc's hidepid).
 */
bool qp_visible(const struct rxdp_client *c, const struct rxdp_qp *qp)
{
	return c->uid == 0 || qp->uid == c->uid;
}

struct rxdp_qp *qp_lookup(struct rxdp_link *l, __u32 qpn)
{
	struct rxdp_qp *qp;

	if (!l || !l->dev || qpn > QPN_MAX)
		return NULL;
	qp = l->dev->qps[qpn & RXDP_QP_INDEX_MASK];
	return qp && qp->qpn == qpn ? qp : NULL;
}

static struct rxdp_qp_psn *psn_slot(struct rxdp_link *l, __u32 qpn)
{
	return &l->dev->maps.psn[qpn & RXDP_QP_INDEX_MASK];
}

static void psn_store(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/*
 * Whether a packet from the path's peer must also come from its MAC: where
 * the path resolved a unicast neighbour (or our own MAC, for loopback); not
 * for a multicast destination, whose MAC is derived, not a source.
 */
bool path_mac_checked(const struct rxdp_path *p)
{
	static const __u8 zero[6];

	return !(p->dmac[0] & 1) && memcmp(p->dmac, zero, 6);
}

static int ctx_write(struct rxdp_link *l, const struct rxdp_qp *qp)
{
	struct rxdp_qp_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.qpn = qp->qpn;
	ctx.qp_type = qp->qp_type;
	ctx.state = qp->state;
	ctx.pkey = RXDP_DEFAULT_PKEY;
	ctx.dest_qpn = qp->qp_type == IBV_QPT_UD ? 0 : qp->attr.dest_qp_num;
	ctx.qkey = qp->qp_type == IBV_QPT_UD ? qp->attr.qkey : 0;
	ctx.owner_slot = 0; /* rxdpd's own sockets receive every QP's */
	ctx.owner_pid = qp->owner ? (__u32)qp->owner->pid : 0;
	ctx.flags = qp->state == IBV_QPS_SQD ? RXDP_QPF_SQ_DRAINING : 0;
	ctx.path_mtu = qp->attr.path_mtu ? qp->attr.path_mtu
					 : rxdp_ib_mtu(l->mtu, rxdpd.mtu_cap);
	ctx.access_flags = qp->attr.qp_access_flags;
	if (qp->qp_type != IBV_QPT_UD) {
		/* the path's peer is the only source (all zero before RTR) */
		memcpy(ctx.peer_ip, qp->path.dip, 16);
		memcpy(ctx.local_ip, qp->path.sip, 16);
		memcpy(ctx.peer_mac, qp->path.dmac, 6);
		if (qp->path.ipv6)
			ctx.flags |= RXDP_QPF_PEER_IPV6;
		if (path_mac_checked(&qp->path))
			ctx.flags |= RXDP_QPF_PEER_MAC;
	}
	if (bpf_map_update_elem(l->dev->maps.qp_ctx, &ctx.qpn, &ctx, BPF_ANY))
		return -errno;
	return 0;
}

static int stats_zero(struct rxdp_link *l, __u32 qpn)
{
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;
	size_t sz = sizeof(struct rxdp_qp_stats) * (size_t)rxdpd.ncpus;
	void *zero = calloc(1, sz);
	int ret = 0;

	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(l->dev->maps.qp_stats, &idx, zero, BPF_ANY))
		ret = -errno;
	free(zero);
	return ret;
}

int qp_stats_read(struct rxdp_link *l, __u32 qpn, struct rxdp_ctl_qp_stats *s)
{
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_stats *v;
	int i, ret = 0;

	memset(s, 0, sizeof(*s));
	s->ifindex = l->ifindex;
	s->qpn = qpn;
	if (l->dev->maps.psn[idx].qpn == qpn) {
		const struct rxdp_qp_psn *p = &l->dev->maps.psn[idx];

		s->epsn = __atomic_load_n(&p->epsn, __ATOMIC_RELAXED);
		s->una_psn = __atomic_load_n(&p->una_psn, __ATOMIC_RELAXED);
		s->next_psn = __atomic_load_n(&p->next_psn, __ATOMIC_RELAXED);
		s->psn_flags = __atomic_load_n(&p->flags, __ATOMIC_RELAXED);
	}
	v = calloc(rxdpd.ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(l->dev->maps.qp_stats, &idx, v)) {
		ret = -errno;
	} else {
		for (i = 0; i < rxdpd.ncpus; i++) {
			s->rx_packets += v[i].rx_packets;
			s->rx_bytes += v[i].rx_bytes;
			s->rx_drops += v[i].rx_drops;
		}
	}
	free(v);
	return ret;
}

/* Index in the low bits, a generation above; never 0 or 1 (IBTA 3.5.8),
 * and a freed index is taken again only after all others were tried. */
static int qpn_alloc(struct rxdp_dev *d, __u32 *qpn)
{
	__u32 i;

	for (i = 0; i < RXDP_MAX_QP; i++) {
		__u32 idx = (d->qp_next + i) & RXDP_QP_INDEX_MASK;
		__u32 n;

		if (d->qps[idx])
			continue;
		n = ((__u32)(d->qp_gen[idx] & QPN_GEN_MASK)
		     << RXDP_QP_INDEX_BITS) |
		    idx;
		if (n < RXDP_QPN_MIN) {
			d->qp_gen[idx]++;
			n = ((__u32)(d->qp_gen[idx] & QPN_GEN_MASK)
			     << RXDP_QP_INDEX_BITS) |
			    idx;
		}
		d->qp_next = idx + 1;
		*qpn = n;
		return 0;
	}
	return -ENOSPC;
}

int qp_create(struct rxdp_link *l, struct rxdp_client *c, __u32 qp_type,
	      __u32 *qpn, char *msg, size_t msglen)
{
	struct rxdp_dev *d = l->dev;
	struct rxdp_qp_psn *ps;
	struct rxdp_qp *qp;
	int ret;

	if (qp_type != IBV_QPT_RC && qp_type != IBV_QPT_UC &&
	    qp_type != IBV_QPT_UD) {
		snprintf(msg, msglen,
			 "QP type %u is not supported (RC, UC and UD are)",
			 qp_type);
		return -EOPNOTSUPP;
	}
	ret = hca_qp_charge(c->uid, msg, msglen);
	if (ret)
		return ret;
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		hca_qp_uncharge(c->uid);
		return -ENOMEM;
	}
	qp->uid = c->uid;
	ret = qpn_alloc(d, &qp->qpn);
	if (ret) {
		snprintf(msg, msglen, "rxdp_%s has no free QP (%u in use)",
			 l->ifname, d->nqps);
		hca_qp_uncharge(c->uid);
		free(qp);
		return ret;
	}
	qp->qp_type = qp_type;
	qp->state = IBV_QPS_RESET;
	qp->ifindex = l->ifindex;
	qp->owner = c;

	/* The PSN slot and counters first, the context (which makes the QP
	 * visible to the XDP program) last */
	ps = psn_slot(l, qp->qpn);
	psn_store(&ps->epsn, 0);
	psn_store(&ps->una_psn, 0);
	psn_store(&ps->next_psn, 0);
	psn_store(&ps->flags, 0);
	psn_store(&ps->qpn, qp->qpn);
	ret = stats_zero(l, qp->qpn);
	if (!ret)
		ret = ctx_write(l, qp);
	if (ret) {
		psn_store(&ps->qpn, 0);
		snprintf(msg, msglen, "cannot write the QP context: %s",
			 strerror(-ret));
		hca_qp_uncharge(c->uid);
		free(qp);
		return ret;
	}
	d->qps[qp->qpn & RXDP_QP_INDEX_MASK] = qp;
	d->nqps++;
	*qpn = qp->qpn;
	pr_info("rxdp_%s: QP %#x (%s) created for pid %d\n", l->ifname, qp->qpn,
		rxdp_qp_type_name(qp_type), (int)c->pid);
	return 0;
}

int qp_destroy(struct rxdp_link *l, struct rxdp_qp *qp)
{
	struct rxdp_dev *d = l->dev;
	__u32 idx = qp->qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_psn *ps = psn_slot(l, qp->qpn);
	int ret = 0;

	/* the context first: the program stops steering to this QP */
	if (bpf_map_delete_elem(d->maps.qp_ctx, &qp->qpn) && errno != ENOENT)
		ret = -errno;
	if (ps->qpn == qp->qpn) {
		psn_store(&ps->qpn, 0);
		psn_store(&ps->epsn, 0);
		psn_store(&ps->una_psn, 0);
		psn_store(&ps->next_psn, 0);
		psn_store(&ps->flags, 0);
	}
	d->qps[idx] = NULL;
	d->qp_gen[idx]++;
	d->nqps--;
	hca_qp_uncharge(qp->uid);
	pr_info("rxdp_%s: QP %#x destroyed\n", l->ifname, qp->qpn);
	free(qp);
	return ret;
}

static int gid_is_v4(const __u8 *gid)
{
	static const __u8 prefix[12] = { 0, 0, 0, 0, 0,	   0,
					 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * RoCEv2 A17.3.4: the UDP source port carries flow entropy, in
 * 0xC000..0xFFFF, fixed for a QP so its packets stay in order. From the flow
 * label when the application set one, else from both QP numbers.
 */
static __u16 udp_sport(__u32 flow_label, __u32 lqpn, __u32 rqpn)
{
	__u64 v = flow_label;

	if (!v) {
		v = ((__u64)lqpn << 24 | rqpn) * 0x9e3779b97f4a7c15ULL;
		v ^= v >> 29;
	}
	v ^= v >> 14;
	return (__u16)(0xc000 | (v & 0x3fff));
}

int path_resolve(struct rxdp_link *l, const struct rxdp_ah *ah, __u32 lqpn,
		 __u32 rqpn, struct rxdp_path *out, long *deadline, char *msg,
		 size_t msglen)
{
	const __u8 *sgid;
	char dst[INET6_ADDRSTRLEN];
	int ifindex = l->ifindex, family, ret;
	struct rxdp_addr *a;

	memset(out, 0, sizeof(*out));
	if (ah->sgid_index >= RXDP_GID_TBL_LEN ||
	    !l->gid_used[ah->sgid_index]) {
		snprintf(msg, msglen, "sgid_index %u of rxdp_%s is empty",
			 ah->sgid_index, l->ifname);
		return -EINVAL;
	}
	sgid = l->gids[ah->sgid_index];
	if (gid_is_v4(sgid) != gid_is_v4(ah->dgid)) {
		snprintf(msg, msglen,
			 "sgid_index %u and the destination GID are of "
			 "different IP versions",
			 ah->sgid_index);
		return -EINVAL;
	}
	family = gid_is_v4(ah->dgid) ? AF_INET : AF_INET6;
	out->ipv6 = family == AF_INET6;
	if (out->ipv6) {
		memcpy(out->sip, sgid, 16);
		memcpy(out->dip, ah->dgid, 16);
	} else {
		memcpy(out->sip + 12, sgid + 12, 4);
		memcpy(out->dip + 12, ah->dgid + 12, 4);
	}
	memcpy(out->smac, l->mac, 6);
	/* an IP TTL/hop limit of 0 would not leave the host */
	out->hop_limit = ah->hop_limit ? ah->hop_limit : 64;
	out->traffic_class = ah->traffic_class;
	out->flow_label = ah->flow_label & 0xfffff;
	if (!lqpn && !rqpn) {
		/* an address handle (UD): entropy from the destination */
		__u32 w[4];

		memcpy(w, ah->dgid, 16);
		lqpn = (w[0] ^ w[1] ^ w[2] ^ w[3]) & 0xffffff;
		rqpn = (w[3] >> 8) | 1;
	}
	out->udp_sport = udp_sport(out->flow_label, lqpn, rqpn);
	inet_ntop(family, out->ipv6 ? out->dip : out->dip + 12, dst,
		  sizeof(dst));

	/* Multicast: the MAC is a function of the address (RFC 1112, 2464) */
	if (out->ipv6 && ah->dgid[0] == 0xff) {
		__u8 m[6] = { 0x33,	    0x33,	  ah->dgid[12],
			      ah->dgid[13], ah->dgid[14], ah->dgid[15] };

		memcpy(out->dmac, m, 6);
		return 0;
	}
	if (!out->ipv6 && (ah->dgid[12] & 0xf0) == 0xe0) {
		__u8 m[6] = { 0x01,	    0x00,
			      0x5e,	    ah->dgid[13] & 0x7f,
			      ah->dgid[14], ah->dgid[15] };

		memcpy(out->dmac, m, 6);
		return 0;
	}
	/* One of our own addresses: this interface's MAC */
	for (a = l->addrs; a; a = a->next) {
		if (a->family == family &&
		    !memcmp(a->ip, out->ipv6 ? ah->dgid : ah->dgid + 12,
			    family == AF_INET ? 4 : 16)) {
			memcpy(out->dmac, l->mac, 6);
			return 0;
		}
	}
	{
		__u8 ip[16] = { 0 };

		memcpy(ip, out->ipv6 ? ah->dgid : ah->dgid + 12,
		       family == AF_INET ? 4 : 16);
		ret = rtnl_neigh_lookup(ifindex, family, ip, out->dmac,
					deadline, RESOLVE_TIMEOUT_MS);
	}
	if (ret == -EINPROGRESS)
		return ret;
	if (ret) {
		snprintf(msg, msglen,
			 "%s is unreachable: no neighbour entry (ARP/ND) for "
			 "it appeared within %d s; is the peer up and on this "
			 "link?",
			 dst, RESOLVE_TIMEOUT_MS / 1000);
		return -EHOSTUNREACH;
	}
	return 0;
}

static int check_values(struct rxdp_link *l, const struct rxdp_qp *qp,
			const struct rxdp_qp_attr *a, __u32 mask, char *msg,
			size_t msglen)
{
	if ((mask & IBV_QP_PORT) && a->port_num != 1) {
		snprintf(msg, msglen, "port_num %u: rxdp devices have port 1",
			 a->port_num);
		return -EINVAL;
	}
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= RXDP_PKEY_TBL_LEN) {
		snprintf(msg, msglen,
			 "pkey_index %u: the P_Key table has one entry",
			 a->pkey_index);
		return -EINVAL;
	}
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 ||
	     a->path_mtu > rxdp_ib_mtu(l->mtu, rxdpd.mtu_cap))) {
		snprintf(msg, msglen,
			 "path_mtu %u exceeds the port's active MTU %u "
			 "(interface MTU %u)",
			 a->path_mtu, rxdp_ib_mtu(l->mtu, rxdpd.mtu_cap),
			 l->mtu);
		return -EINVAL;
	}
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) {
		snprintf(msg, msglen, "timeout %u: at most 31", a->timeout);
		return -EINVAL;
	}
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) {
		snprintf(msg, msglen, "retry_cnt %u: at most 7", a->retry_cnt);
		return -EINVAL;
	}
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) {
		snprintf(msg, msglen, "rnr_retry %u: at most 7", a->rnr_retry);
		return -EINVAL;
	}
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) {
		snprintf(msg, msglen, "min_rnr_timer %u: at most 31",
			 a->min_rnr_timer);
		return -EINVAL;
	}
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > QPN_MAX) {
		snprintf(msg, msglen, "dest_qp_num %#x is not a 24-bit QPN",
			 a->dest_qp_num);
		return -EINVAL;
	}
	(void)qp;
	return 0;
}

static void apply(struct rxdp_qp *qp, const struct rxdp_qp_attr *a, __u32 mask)
{
	struct rxdp_qp_attr *t = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		t->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		t->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		t->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		t->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		t->ah = a->ah;
	if (mask & IBV_QP_PATH_MTU)
		t->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		t->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		t->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		t->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		t->rq_psn = a->rq_psn & (ROCE_PSN_MOD - 1);
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		t->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		t->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		t->sq_psn = a->sq_psn & (ROCE_PSN_MOD - 1);
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		t->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_DEST_QPN)
		t->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		t->en_sqd_async_notify = a->en_sqd_async_notify;
}

int qp_modify(struct rxdp_link *l, struct rxdp_client *c, __u32 qpn,
	      const struct rxdp_qp_attr *attr, __u32 mask, long *deadline,
	      char *msg, size_t msglen)
{
	struct rxdp_qp_sm_result res;
	struct rxdp_path path;
	struct rxdp_qp *qp, saved;
	bool new_path = false;
	int ret;

	qp = qp_lookup(l, qpn);
	if (!qp || !qp_visible(c, qp)) {
		snprintf(msg, msglen, "no QP %#x on rxdp_%s", qpn, l->ifname);
		return -ENOENT;
	}
	if (qp->owner != c) {
		snprintf(msg, msglen, "QP %#x belongs to pid %d", qpn,
			 qp->owner ? (int)qp->owner->pid : 0);
		return -EPERM;
	}
	ret = rxdp_qp_sm_check(qp->qp_type, qp->state, mask, attr->qp_state,
			       attr->cur_qp_state, &res);
	if (ret) {
		char m1[256] = "", m2[256] = "";

		rxdp_qp_mask_str(res.missing, m1, sizeof(m1));
		rxdp_qp_mask_str(res.extra, m2, sizeof(m2));
		snprintf(msg, msglen, "%s QP %#x %s -> %s: %s%s%s%s%s",
			 rxdp_qp_type_name(qp->qp_type), qpn,
			 rxdp_qp_state_name(qp->state),
			 rxdp_qp_state_name(res.next_state), res.why,
			 m1[0] ? "; missing " : "", m1,
			 m2[0] ? "; not allowed " : "", m2);
		return -EINVAL;
	}
	ret = check_values(l, qp, attr, mask, msg, msglen);
	if (ret)
		return ret;

	/* RC/UC: the address vector becomes a resolved path; if the
	 * neighbour is not known yet, nothing has changed and the request is
	 * run again when it is (-EINPROGRESS) */
	if ((mask & IBV_QP_AV) && qp->qp_type != IBV_QPT_UD) {
		__u32 rqpn = (mask & IBV_QP_DEST_QPN) ? attr->dest_qp_num
						      : qp->attr.dest_qp_num;

		ret = path_resolve(l, &attr->ah, qpn, rqpn, &path, deadline,
				   msg, msglen);
		if (ret)
			return ret;
		new_path = true;
	}

	saved = *qp;
	apply(qp, attr, mask);
	if (new_path) {
		qp->path = path;
		qp->udp_sport = path.udp_sport;
	}
	qp->state = res.next_state;
	if (qp->state == IBV_QPS_RESET && saved.state != IBV_QPS_RESET) {
		/* IBTA 10.3.1: Reset returns the QP to its state at creation */
		memset(&qp->attr, 0, sizeof(qp->attr));
		memset(&qp->path, 0, sizeof(qp->path));
	}
	qp->attr.qp_state = qp->state;
	qp->attr.cur_qp_state = qp->state;
	qp->attr.sq_draining = qp->state == IBV_QPS_SQD;
	ret = ctx_write(l, qp);
	if (ret) {
		*qp = saved;
		snprintf(msg, msglen, "cannot write the QP context: %s",
			 strerror(-ret));
		return ret;
	}

	/* Seed the sequence state the engine then owns */
	{
		struct rxdp_qp_psn *ps = psn_slot(l, qpn);

		if (qp->state == IBV_QPS_RESET) {
			psn_store(&ps->epsn, 0);
			psn_store(&ps->una_psn, 0);
			psn_store(&ps->next_psn, 0);
			psn_store(&ps->flags, 0);
		}
		if (mask & IBV_QP_RQ_PSN)
			psn_store(&ps->epsn, qp->attr.rq_psn);
		if (mask & IBV_QP_SQ_PSN) {
			psn_store(&ps->una_psn, qp->attr.sq_psn);
			psn_store(&ps->next_psn, qp->attr.sq_psn);
		}
	}
	pr_debug("rxdp_%s: QP %#x %s -> %s (mask %#x)\n", l->ifname, qpn,
		 rxdp_qp_state_name(saved.state), rxdp_qp_state_name(qp->state),
		 mask);
	return 0;
}

void qp_paths_update(int ifindex, int family, const __u8 *ip, const __u8 *mac)
{
	struct rxdp_link *l = link_by_index(ifindex);
	int n = 0;
	__u32 i;

	if (!l || !l->dev)
		return;
	for (i = 0; i < RXDP_MAX_QP; i++) {
		struct rxdp_qp *qp = l->dev->qps[i];
		const __u8 *dip;

		if (!qp || qp->qp_type == IBV_QPT_UD ||
		    (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
		     qp->state != IBV_QPS_SQD))
			continue;
		if (qp->path.ipv6 != (family == AF_INET6))
			continue;
		dip = qp->path.ipv6 ? qp->path.dip : qp->path.dip + 12;
		if (memcmp(dip, ip, family == AF_INET6 ? 16 : 4) ||
		    !memcmp(qp->path.dmac, mac, 6))
			continue;
		memcpy(qp->path.dmac, mac, 6);
		/* the peer's packets now come from that MAC */
		if (ctx_write(l, qp))
			pr_warn("rxdp_%s: QP %#x: cannot rewrite its context\n",
				l->ifname, qp->qpn);
		hca_qp_path_changed(qp);
		n++;
	}
	if (n)
		pr_info("rxdp_%s: a neighbour's MAC changed; %d QP path(s) "
			"updated (rxdp_ctl_query_qp shows them)\n",
			l->ifname, n);
}

void qp_info_fill(const struct rxdp_qp *qp, struct rxdp_qp_info *out)
{
	memset(out, 0, sizeof(*out));
	out->qpn = qp->qpn;
	out->qp_type = qp->qp_type;
	out->owner_pid = qp->owner ? (__u32)qp->owner->pid : 0;
	out->attr = qp->attr;
	/* the engine may have taken it to ERR on its own */
	out->attr.qp_state = hca_qp_state(qp);
	out->attr.cur_qp_state = out->attr.qp_state;
	out->path = qp->path;
}

/*
 * A device found (at start, or attached anew): the maps may still hold the
 * QP contexts of a previous rxdpd, whose transport state died with it (the
 * data path is rxdpd's). They are removed, with their PSN slots and every
 * XSK slot; their clients lost their connection with that rxdpd.
 */
void qp_clean_all(struct rxdp_link *l)
{
	struct rxdp_dev *d = l->dev;
	__u32 key, i, n = 0;

	if (getrandom(d->qp_gen, sizeof(d->qp_gen), GRND_NONBLOCK) < 0)
		memset(d->qp_gen, 0, sizeof(d->qp_gen));
	while (!bpf_map_get_next_key(d->maps.qp_ctx, NULL, &key)) {
		if (bpf_map_delete_elem(d->maps.qp_ctx, &key))
			break;
		n++;
	}
	for (i = 0; i < RXDP_MAX_QP; i++)
		if (d->maps.psn[i].qpn)
			memset(&d->maps.psn[i], 0, sizeof(d->maps.psn[i]));
	for (i = 0; i < RXDP_XSK_SLOTS; i++)
		bpf_map_delete_elem(d->maps.xsks, &i);
	if (n)
		pr_info("rxdp_%s: %u QP(s) of a previous rxdpd removed\n",
			l->ifname, n);
}
