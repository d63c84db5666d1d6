// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * QPs as the daemon knows them: numbers and owners, the paths it resolves
 * for them, and its requests to the engine. The engine's QP is the QP
 * (state, attributes, PSNs, the state machine's check, its images in the
 * maps the XDP program reads: engine/qp.c, engine/qpmap.c); the daemon's
 * record (struct qp_handle) holds only what identifies it: its number,
 * type, owner, the user it is charged to (with the context's other
 * objects, uverbs.c) and its engine QP, which this file modifies and
 * queries. Paths follow a neighbour's new MAC (rtnl.c's DEV_EV_NEIGH).
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
#include "engine/qp_sm.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"
#include "rxdp/psn.h"

#define QPN_MAX 0xffffffU /* 24 bits, IBTA 9.2 */
#define QPN_GEN_MASK (QPN_MAX >> RXDP_QP_INDEX_BITS)
#define RESOLVE_TIMEOUT_MS 3000

/*
 * Least information: a QP's PSNs, peer and owner are shown to the user who
 * made it and to root, and to no one else: to the others it does not exist
 * (as another user's processes with /proc's hidepid).
 */
bool qp_visible(const struct rxdp_client *c, const struct qp_handle *qp)
{
	return c->uid == 0 || qp->uid == c->uid;
}

struct qp_handle *qp_lookup(struct rxdp_link *l, __u32 qpn)
{
	struct qp_handle *qp;

	if (!l || !l->dev || qpn > QPN_MAX)
		return NULL;
	qp = l->dev->qps[qpn & RXDP_QP_INDEX_MASK];
	return qp && qp->qpn == qpn ? qp : NULL;
}

int qp_stats_read(struct rxdp_link *l, __u32 qpn, struct rxdp_ctl_qp_stats *s)
{
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_stats *v;
	struct qp_handle *qp;
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
	qp = qp_lookup(l, qpn);
	if (qp && qp->eqp) { /* the rate (kbit/s), alpha and RTT */
		struct rxdp_engine_qp_cc cc = { 0 };

		rxdp_engine_qp_cc(qp->eqp, &cc);
		s->cc_rate_kbps = cc.rate_kbps;
		s->cc_alpha = cc.alpha;
		s->srtt_us = (__u32)((cc.srtt_ns + 999) / 1000);
		s->tc = rxdp_engine_qp_class(qp->eqp);
		s->engine = (__u32)rxdp_engine_qp_engine(qp->eqp);
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
	struct qp_handle *qp;
	int ret;

	if (qp_type != IBV_QPT_RC && qp_type != IBV_QPT_UC &&
	    qp_type != IBV_QPT_UD) {
		snprintf(msg, msglen,
			 "QP type %u is not supported (RC, UC and UD are)",
			 qp_type);
		return -EOPNOTSUPP;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->uid = c->uid;
	ret = qpn_alloc(d, &qp->qpn);
	if (ret) {
		snprintf(msg, msglen, "rxdp_%s has no free QP (%u in use)",
			 l->ifname, d->nqps);
		free(qp);
		return ret;
	}
	qp->qp_type = qp_type;
	qp->ifindex = l->ifindex;
	qp->owner = c;
	d->qps[qp->qpn & RXDP_QP_INDEX_MASK] = qp;
	d->nqps++;
	*qpn = qp->qpn;
	pr_info("rxdp_%s: QP %#x (%s) created for pid %d\n", l->ifname, qp->qpn,
		rxdp_qp_type_name(qp_type), (int)c->pid);
	return 0;
}

/* A predecessor's QP at its number, for c (a takeover); 0 or -errno */
int qp_adopt(struct rxdp_link *l, struct rxdp_client *c, __u32 qp_type,
	     __u32 qpn)
{
	struct rxdp_dev *d = l->dev;
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;
	struct qp_handle *qp;

	if (d->qps[idx] || qpn < RXDP_QPN_MIN)
		return -EEXIST;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->qpn = qpn;
	qp->uid = c->uid;
	qp->qp_type = qp_type;
	qp->ifindex = l->ifindex;
	qp->owner = c;
	d->qps[idx] = qp;
	d->qp_gen[idx] = (__u16)(qpn >> RXDP_QP_INDEX_BITS);
	d->nqps++;
	return 0;
}

/* After its engine QP (which takes its images out of the maps) */
int qp_destroy(struct rxdp_link *l, struct qp_handle *qp)
{
	struct rxdp_dev *d = l->dev;
	__u32 idx = qp->qpn & RXDP_QP_INDEX_MASK;
	int ret = 0;

	d->qps[idx] = NULL;
	d->qp_gen[idx]++;
	d->nqps--;
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

/*
 * The IP TTL / hop limit of unicast packets: the route's, as on every RoCE
 * device of Linux (ib_core resolves it with the destination MAC and puts it
 * in place of the application's: ibv_rc_pingpong and perftest ask for 1,
 * and Soft-RoCE sends 64). A peer rxdp reaches is on the link, so that is
 * the network namespace's default.
 */
static __u8 unicast_hop_limit(const struct rxdp_link *l, int family)
{
	char path[96];
	int v = 0;
	FILE *f;

	if (family == AF_INET)
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv4/ip_default_ttl");
	else
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv6/conf/%s/hop_limit", l->ifname);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v >= 1 && v <= 255 ? (__u8)v : 64;
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
	/* multicast keeps the application's (0 would not leave the host) */
	out->hop_limit = ah->hop_limit ? ah->hop_limit : 64;
	out->traffic_class = ah->traffic_class;
	out->sl = ah->sl;
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
	out->hop_limit = unicast_hop_limit(l, family);
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

/*
 * ibv_modify_qp, as its owner asks it: the address vector of an RC/UC QP
 * resolved into a path first (if the neighbour is not known yet, nothing
 * has changed and the request is run again when it is: -EINPROGRESS), then
 * the engine checks the transition whole and applies it.
 */
int qp_modify(struct rxdp_link *l, struct rxdp_client *c, __u32 qpn,
	      const struct rxdp_qp_attr *attr, __u32 mask, long *deadline,
	      char *msg, size_t msglen)
{
	struct rxdp_path path, *pp = NULL;
	struct qp_handle *qp;
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
	if (!qp->eqp) {
		snprintf(msg, msglen, "QP %#x has no data path", qpn);
		return -ENODEV;
	}
	if ((mask & IBV_QP_AV) && qp->qp_type != IBV_QPT_UD) {
		struct rxdp_qp_attr now;
		__u32 rqpn;

		rxdp_engine_qp_query(qp->eqp, &now, NULL);
		rqpn = (mask & IBV_QP_DEST_QPN) ? attr->dest_qp_num
						: now.dest_qp_num;
		ret = path_resolve(l, &attr->ah, qpn, rqpn, &path, deadline,
				   msg, msglen);
		if (ret)
			return ret;
		pp = &path;
	}
	ret = rxdp_engine_qp_modify(qp->eqp, attr, mask, pp,
				    rxdp_ib_mtu(l->mtu, dev_mtu_cap(l)), msg,
				    msglen);
	if (!ret)
		pr_debug("rxdp_%s: QP %#x modified (mask %#x)\n", l->ifname,
			 qpn, mask);
	return ret;
}

/* A neighbour's MAC changed: the paths of the QPs that lead to it follow */
static void qp_paths_update(int ifindex, int family, const __u8 *ip,
			    const __u8 *mac)
{
	struct rxdp_link *l = link_by_index(ifindex);
	int n = 0;
	__u32 i;

	if (!l || !l->dev)
		return;
	for (i = 0; i < RXDP_MAX_QP; i++) {
		struct qp_handle *qp = l->dev->qps[i];
		struct rxdp_qp_attr a;
		struct rxdp_path path;
		const __u8 *dip;

		if (!qp || !qp->eqp || qp->qp_type == IBV_QPT_UD)
			continue;
		rxdp_engine_qp_query(qp->eqp, &a, &path);
		if (a.qp_state != IBV_QPS_RTR && a.qp_state != IBV_QPS_RTS &&
		    a.qp_state != IBV_QPS_SQD)
			continue;
		if (path.ipv6 != (family == AF_INET6))
			continue;
		dip = path.ipv6 ? path.dip : path.dip + 12;
		if (memcmp(dip, ip, family == AF_INET6 ? 16 : 4) ||
		    !memcmp(path.dmac, mac, 6))
			continue;
		/* the peer's packets now come from that MAC */
		memcpy(path.dmac, mac, 6);
		rxdp_engine_qp_modify(qp->eqp, &a, 0, &path, 0, NULL, 0);
		n++;
	}
	if (n)
		pr_info("rxdp_%s: a neighbour's MAC changed; %d QP path(s) "
			"updated (rxdp_ctl_query_qp shows them)\n",
			l->ifname, n);
}

void qp_info_fill(const struct qp_handle *qp, struct rxdp_qp_info *out)
{
	memset(out, 0, sizeof(*out));
	out->qpn = qp->qpn;
	out->qp_type = qp->qp_type;
	out->owner_pid = qp->owner ? (__u32)qp->owner->pid : 0;
	if (qp->eqp)
		rxdp_engine_qp_query(qp->eqp, &out->attr, &out->path);
}

static void qp_on_neigh(const struct dev_event *ev)
{
	qp_paths_update(ev->ifindex, ev->family, ev->ip, ev->mac);
}

void qp_init(void)
{
	static struct dev_listener li = { .fn = qp_on_neigh,
					  .types = 1U << DEV_EV_NEIGH };

	dev_listen(&li);
}

/*
 * A device found (at start, or attached anew): the maps may still hold the
 * QP contexts of a previous rxdpd, whose transport state died with it (the
 * data path is rxdpd's). They are removed, with their PSN slots and every
 * XSK slot (but not where rxdpd takes over from its predecessor:
 * takeover.c); their clients lost their connection with that rxdpd.
 */
void qp_clean_all(struct rxdp_link *l)
{
	struct rxdp_dev *d = l->dev;
	__u32 i, n;

	if (getrandom(d->qp_gen, sizeof(d->qp_gen), GRND_NONBLOCK) < 0)
		memset(d->qp_gen, 0, sizeof(d->qp_gen));
	/*
	 * A successor's QPs and sockets are its predecessor's, made again
	 * as they were: their contexts stay, so that what comes meanwhile
	 * waits in the sockets (a socket that goes leaves the map by itself)
	 */
	if (tko_state)
		return;
	n = rxdp_engine_maps_clean(&d->emaps, d->maps.psn);
	for (i = 0; i < RXDP_XSK_SLOTS; i++)
		bpf_map_delete_elem(d->maps.xsks, &i);
	if (n)
		pr_info("rxdp_%s: %u QP(s) of a previous rxdpd removed\n",
			l->ifname, n);
}

/*
 * A QP of the device itself (QP1, the GSI: IBTA 3.5.8, 13.4.6), at its
 * fixed number: its number is held here (qpn_alloc() never hands out its
 * index while it lives); the engine QP rxdpd makes for it (gsi.c) is in the
 * maps like any other, so the XDP program steers its packets to rxdpd. It
 * has no owner and no per-user charge.
 */
int qp_create_special(struct rxdp_link *l, __u32 qpn)
{
	struct rxdp_dev *d = l->dev;
	struct qp_handle *qp;

	if (d->qps[qpn & RXDP_QP_INDEX_MASK])
		return -EEXIST;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->qpn = qpn;
	qp->qp_type = IBV_QPT_UD;
	qp->ifindex = l->ifindex;
	d->qps[qpn & RXDP_QP_INDEX_MASK] = qp;
	d->nqps++;
	return 0;
}

/* Its counterpart */
void qp_destroy_special(struct rxdp_link *l, __u32 qpn)
{
	struct qp_handle *qp = qp_lookup(l, qpn);

	if (!qp || qp->owner)
		return;
	qp_destroy(l, qp);
}
