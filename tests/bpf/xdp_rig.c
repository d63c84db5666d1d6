// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The XDP classifier on a test bench (xdp_rig.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine/pkt.h"
#include "rxdp/opcodes.h"
#include "rxdp/params.h"
#include "rxdp/roce.h"
#include "xdp_rig.h"

#define XDP_DROP_ 1
#define XDP_PASS_ 2
#define XDP_REDIRECT_ 4

const uint8_t xdp_rig_peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
const uint8_t xdp_rig_peer_v4[16] = { [12] = 198, 18, 0, 1 };
const uint8_t xdp_rig_local_v4[16] = { [12] = 198, 19, 0, 1 };
const uint8_t xdp_rig_peer_v6[16] = { [15] = 1 };
const uint8_t xdp_rig_local_v6[16] = { [15] = 2 };

uint32_t xdp_rig_build(uint8_t *buf, const struct xdp_rig_pkt *o)
{
	uint32_t flags = roce_opcode_flags(o->opcode);
	uint32_t off = 0, l3, l4, roce_len, ulen;
	struct roce_bth *bth;
	uint8_t *ext;

	memset(buf, 0, XDP_RIG_PKT_MAX);
	memcpy(buf, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	off = 12;
	if (o->vlan) {
		buf[off] = o->vlan >> 8;
		buf[off + 1] = o->vlan & 0xff;
		buf[off + 2] = 0;
		buf[off + 3] = 5; /* VID 5 */
		off += 4;
	}
	{
		uint16_t et = o->ethertype ? o->ethertype
			      : o->ipv6	   ? ETH_P_IPV6
					   : ETH_P_IP;

		buf[off] = et >> 8;
		buf[off + 1] = et & 0xff;
		off += 2;
	}
	l3 = off;
	/* the RoCE part: BTH, extension headers, payload, pad, ICRC */
	roce_len = sizeof(*bth) + roce_ext_hdr_len(flags) + o->payload +
		   o->pad + ROCE_ICRC_LEN;
	if (!flags) /* unknown opcode: a BTH and an ICRC */
		roce_len = sizeof(*bth) + o->payload + ROCE_ICRC_LEN;
	ulen = sizeof(struct udphdr) + roce_len;
	if (o->ipv6) {
		struct ipv6hdr *ip6 = (void *)(buf + l3);

		ip6->version = 6;
		ip6->payload_len = htons(ulen);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr.s6_addr[15] = 1;
		ip6->daddr.s6_addr[15] = 2;
		if (o->dgid)
			memcpy(ip6->daddr.s6_addr, o->dgid, 16);
		l4 = l3 + sizeof(*ip6);
	} else {
		struct iphdr *ip = (void *)(buf + l3);
		uint32_t ihl = 5 + o->ip_opt_words;

		ip->version = 4;
		ip->ihl = ihl;
		ip->tot_len = htons(ihl * 4 + ulen);
		ip->frag_off = htons(o->frag ? 0x2000 : 0x4000); /* MF / DF */
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = htonl(0xc6120001);
		ip->daddr = htonl(0xc6130001);
		if (o->dgid)
			memcpy(&ip->daddr, o->dgid + 12, 4);
		for (int i = 0; i < o->ip_opt_words; i++)
			buf[l3 + 20 + 4 * i] = 1; /* NOP options */
		l4 = l3 + ihl * 4;
	}
	{
		struct udphdr *udp = (void *)(buf + l4);

		udp->source = htons(0xc000);
		udp->dest = htons(o->dport ? o->dport : ROCE_V2_UDP_PORT);
		udp->len = htons(ulen + o->udp_len_delta);
	}
	bth = (void *)(buf + l4 + sizeof(struct udphdr));
	bth_init(bth, o->opcode, 0, o->pad, o->pkey ? o->pkey : 0xffff, o->qpn,
		 0, o->psn);
	bth->flags |= o->tver & ROCE_BTH_TVER_MASK;
	ext = (uint8_t *)(bth + 1);
	if (flags & ROCE_OPF_DETH)
		deth_init((void *)(ext +
				   roce_ext_hdr_offset(flags, ROCE_OPF_DETH)),
			  o->qkey, 0x77);
	if (flags & ROCE_OPF_RETH)
		reth_init((void *)(ext +
				   roce_ext_hdr_offset(flags, ROCE_OPF_RETH)),
			  0x1000, 0x1234, o->dma_len);
	for (uint32_t i = 0; i < o->payload; i++)
		ext[roce_ext_hdr_len(flags) + i] = (uint8_t)i;
	return l4 + ulen;
}

int xdp_rig_open(struct xdp_rig *r)
{
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus < 1)
		return -EINVAL;
	r->skel = rxdp_xdp_bpf__open_and_load();
	if (!r->skel)
		return -errno;
	xdp_rig_variant(r, false);
	return 0;
}

void xdp_rig_close(struct xdp_rig *r)
{
	rxdp_xdp_bpf__destroy(r->skel);
	r->skel = NULL;
}

void xdp_rig_variant(struct xdp_rig *r, bool linear)
{
	r->prog_fd = bpf_program__fd(linear ? r->skel->progs.rxdp_xdp_linear
					    : r->skel->progs.rxdp_xdp);
	r->linear = linear;
}

int xdp_rig_set_qp(struct xdp_rig *r, uint32_t qpn, int type, int state,
		   uint16_t pkey, uint32_t qkey, uint32_t owner_slot)
{
	struct rxdp_qp_ctx c = {
		.qpn = qpn,
		.qp_type = (__u8)type,
		.state = (__u8)state,
		.pkey = pkey,
		.qkey = qkey,
		.owner_slot = owner_slot,
		.path_mtu = 3, /* 1024 */
		.flags = RXDP_QPF_PEER_MAC,
	};

	/* RC/UC: connected to the IPv4 peer, as rxdpd does at RTR */
	if (type != RXDP_QPT_UD) {
		memcpy(c.peer_ip, xdp_rig_peer_v4, 16);
		memcpy(c.local_ip, xdp_rig_local_v4, 16);
		memcpy(c.peer_mac, xdp_rig_peer_mac, 6);
	}
	return xdp_rig_put_ctx(r, &c);
}

int xdp_rig_get_ctx(struct xdp_rig *r, uint32_t qpn, struct rxdp_qp_ctx *c)
{
	return bpf_map__lookup_elem(r->skel->maps.qp_ctx, &qpn, sizeof(qpn), c,
				    sizeof(*c), 0);
}

int xdp_rig_put_ctx(struct xdp_rig *r, const struct rxdp_qp_ctx *c)
{
	return bpf_map__update_elem(r->skel->maps.qp_ctx, &c->qpn,
				    sizeof(c->qpn), c, sizeof(*c), 0);
}

int xdp_rig_set_psn(struct xdp_rig *r, uint32_t qpn, uint32_t epsn,
		    uint32_t una, uint32_t next, uint32_t flags)
{
	uint32_t idx = qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_psn p = {
		.qpn = qpn,
		.epsn = epsn,
		.una_psn = una,
		.next_psn = next,
		.flags = flags,
	};

	return bpf_map__update_elem(r->skel->maps.qp_psn, &idx, sizeof(idx), &p,
				    sizeof(p), 0);
}

int xdp_rig_get_psn(struct xdp_rig *r, uint32_t qpn, struct rxdp_qp_psn *p)
{
	uint32_t idx = qpn & RXDP_QP_INDEX_MASK;

	return bpf_map__lookup_elem(r->skel->maps.qp_psn, &idx, sizeof(idx), p,
				    sizeof(*p), 0);
}

int xdp_rig_stats(struct xdp_rig *r, uint64_t out[RXDP_V_MAX])
{
	uint64_t vals[r->ncpus];

	for (uint32_t v = 0; v < RXDP_V_MAX; v++) {
		int err = bpf_map__lookup_elem(r->skel->maps.stats, &v,
					       sizeof(v), vals, sizeof(vals),
					       0);

		if (err)
			return err;
		out[v] = 0;
		for (int c = 0; c < r->ncpus; c++)
			out[v] += vals[c];
	}
	return 0;
}

int xdp_rig_qp_stats(struct xdp_rig *r, uint32_t qpn, struct rxdp_qp_stats *sum)
{
	uint32_t idx = qpn & RXDP_QP_INDEX_MASK;
	struct rxdp_qp_stats vals[r->ncpus];
	int err = bpf_map__lookup_elem(r->skel->maps.qp_stats, &idx,
				       sizeof(idx), vals, sizeof(vals), 0);

	if (err)
		return err;
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < r->ncpus; c++) {
		sum->rx_packets += vals[c].rx_packets;
		sum->rx_bytes += vals[c].rx_bytes;
		sum->rx_drops += vals[c].rx_drops;
	}
	return 0;
}

/* What pkt_parse() must say of a frame with this verdict */
static int parser_wants(uint32_t v)
{
	switch (v) {
	case RXDP_V_PASS_NOT_ROCE:
		return -EPROTONOSUPPORT;
	case RXDP_V_DROP_TRUNCATED:
	case RXDP_V_DROP_BAD_TVER:
	case RXDP_V_DROP_BAD_OPCODE:
	case RXDP_V_DROP_BAD_UDP:
	case RXDP_V_DROP_IP_FRAGMENT:
		return -EBADMSG;
	default: /* parsed: what follows is about QPs */
		return 0;
	}
}

int xdp_rig_run(struct xdp_rig *r, const uint8_t *buf, uint32_t len,
		uint32_t *verdict, int *action, char *why, size_t wsz)
{
	uint64_t before[RXDP_V_MAX], after[RXDP_V_MAX];
	uint8_t out[XDP_RIG_PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	struct pkt_info pi;
	uint32_t moved = 0;
	int err;

	why[0] = '\0';
	if (xdp_rig_stats(r, before) ||
	    bpf_prog_test_run_opts(r->prog_fd, &opts) ||
	    xdp_rig_stats(r, after)) {
		snprintf(why, wsz, "BPF_PROG_TEST_RUN: %s", strerror(errno));
		return -EPROTO;
	}
	if (opts.data_size_out != len || memcmp(out, buf, len)) {
		snprintf(why, wsz, "the frame came out changed");
		return -EPROTO;
	}
	for (uint32_t v = 0; v < RXDP_V_MAX; v++) {
		if (after[v] == before[v])
			continue;
		if (after[v] - before[v] != 1 || moved++) {
			snprintf(why, wsz, "%s moved by %llu, and others",
				 rxdp_verdict_names[v],
				 (unsigned long long)(after[v] - before[v]));
			return -EPROTO;
		}
		*verdict = v;
	}
	if (!moved) {
		snprintf(why, wsz, "no verdict counted");
		return -EPROTO;
	}
	*action = (int)opts.retval;
	if (*action != (*verdict == RXDP_V_PASS_NOT_ROCE ? XDP_PASS_
			: *verdict == RXDP_V_REDIRECT	 ? XDP_REDIRECT_
							 : XDP_DROP_)) {
		snprintf(why, wsz, "%s with action %d",
			 rxdp_verdict_names[*verdict], *action);
		return -EPROTO;
	}
	/* (pkt_parse reads only: its buffer is the frame in place) */
	if (r->linear && len > XDP_RIG_LINEAR_MAX &&
	    *verdict == RXDP_V_DROP_TRUNCATED)
		return 0; /* it saw less than the frame */
	err = pkt_parse((uint8_t *)(uintptr_t)buf, len, &pi);
	if (err == -EILSEQ)
		err = 0; /* a bad ICRC: only the engine checks it */
	if (*verdict == RXDP_V_PASS_NOT_ROCE && err)
		err = -EPROTONOSUPPORT; /* refused either way: fine */
	if (err != parser_wants(*verdict)) {
		snprintf(why, wsz, "XDP %s, pkt_parse %d",
			 rxdp_verdict_names[*verdict], err);
		return -EPROTO;
	}
	return 0;
}
