// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * RoCEv2 packet building and parsing, and the ICRC.
 */
#include <errno.h>
#include <string.h>
#include "engine/crc32.h"

#include "engine/pkt.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6_ 0x86dd
#define ETH_P_8021Q_ 0x8100
#define IPPROTO_UDP_ 17

void pkt_path_init(struct pkt_path *pp, const struct rxdp_path *path)
{
	uint8_t *p = pp->l2;

	memset(pp, 0, sizeof(*pp));
	memcpy(p, path->dmac, 6);
	memcpy(p + 6, path->smac, 6);
	p += 12;
	if (path->vlan) {
		p[0] = ETH_P_8021Q_ >> 8;
		p[1] = ETH_P_8021Q_ & 0xff;
		p[2] = (path->vlan >> 8) & 0x0f;
		p[3] = path->vlan & 0xff;
		p += 4;
	}
	p[0] = (path->ipv6 ? ETH_P_IPV6_ : ETH_P_IPV4) >> 8;
	p[1] = (path->ipv6 ? ETH_P_IPV6_ : ETH_P_IPV4) & 0xff;
	pp->l2_len = p + 2 - pp->l2;
	pp->ipv6 = !!path->ipv6;
	pp->hop_limit = path->hop_limit ? path->hop_limit : 64;
	pp->traffic_class = path->traffic_class;
	pp->flow_label = path->flow_label & 0xfffff;
	memcpy(pp->sip, path->sip, 16);
	memcpy(pp->dip, path->dip, 16);
	pp->sport = path->udp_sport ? path->udp_sport : 0xc000;
}

void pkt_path_ect(struct pkt_path *pp)
{
	pp->traffic_class = (pp->traffic_class & ~PKT_ECN_MASK) | PKT_ECN_ECT0;
}

static uint32_t pkt_l3_len(const struct pkt_path *pp)
{
	return pp->ipv6 ? PKT_IP6_LEN : PKT_IP4_LEN;
}

uint32_t pkt_len(const struct pkt_path *pp, uint8_t opcode, uint32_t paylen)
{
	uint32_t pad = (4 - (paylen & 3)) & 3;

	return pp->l2_len + pkt_l3_len(pp) + PKT_UDP_LEN +
	       sizeof(struct roce_bth) +
	       roce_ext_hdr_len(roce_opcode_flags(opcode)) + paylen + pad +
	       ROCE_ICRC_LEN;
}

uint32_t pkt_max_payload(const struct pkt_path *pp, uint32_t frame_len)
{
	/* the largest header stack any opcode with payload carries */
	uint32_t hdrs = pp->l2_len + pkt_l3_len(pp) + PKT_UDP_LEN +
			sizeof(struct roce_bth) + sizeof(struct roce_reth) +
			sizeof(struct roce_immdt) + ROCE_ICRC_LEN;

	return frame_len > hdrs ? (frame_len - hdrs) & ~3U : 0;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (p[0] << 8) | p[1];
	if (len)
		sum += p[0] << 8;
	return sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint16_t get16(const uint8_t *p)
{
	return (p[0] << 8) | p[1];
}

/*
 * RoCEv2 A17.3.3: the ICRC covers a pseudo packet made of 8 bytes of 1s (in
 * place of the LRH) and the IP header, UDP header, BTH and everything after
 * them up to the ICRC, with the fields routers may change masked to 1s:
 * IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and
 * hop limit; the UDP checksum; the BTH byte holding FECN, BECN and Resv6.
 * The CRC is Ethernet's (reflected, as zlib crc32()), and its value goes on
 * the wire least significant byte first (checked against scapy and
 * Wireshark in tests/engine). icrc_mask() writes the pseudo packet through
 * the BTH (icrc_head_len() bytes of the packet from the IP header on,
 * after the 8 bytes of 1s), from which the rest goes on.
 */
static uint32_t icrc_head_len(int ipv6)
{
	return (ipv6 ? PKT_IP6_LEN : PKT_IP4_LEN) + PKT_UDP_LEN +
	       sizeof(struct roce_bth);
}

/*
 * The pseudo packet's first 8 + icrc_head_len() bytes, masked, into hdr;
 * how many
 */
static uint32_t icrc_mask(uint8_t *hdr, const uint8_t *l3, int ipv6)
{
	uint32_t l3len = ipv6 ? PKT_IP6_LEN : PKT_IP4_LEN;
	uint32_t hlen = icrc_head_len(ipv6);
	uint8_t *ip = hdr + 8, *udp, *bth;

	memset(hdr, 0xff, 8);
	memcpy(ip, l3, hlen);
	if (ipv6) {
		ip[0] |= 0x0f; /* traffic class high nibble, */
		ip[1] = ip[2] = ip[3] = 0xff; /* its low nibble, flow label */
		ip[7] = 0xff; /* hop limit */
	} else {
		ip[1] = 0xff; /* TOS: DSCP and ECN */
		ip[8] = 0xff; /* TTL */
		ip[10] = ip[11] = 0xff; /* header checksum */
	}
	udp = ip + l3len;
	udp[6] = udp[7] = 0xff;
	bth = udp + PKT_UDP_LEN;
	bth[4] = 0xff; /* FECN, BECN, Resv6 */
	return 8 + hlen;
}

#define ICRC_HDR_MAX (8 + PKT_IP6_LEN + PKT_UDP_LEN + sizeof(struct roce_bth))

/*
 * A small packet's rest (a 64-byte write's RETH and payload, an ACK's
 * AETH) is copied behind the masked headers for one CRC call: below 256
 * bytes isa-l's calls cost about 20 ns each before their first byte (2-core
 * VM: a 64-byte write's ICRC 42 ns instead of 51, an ACK's 35 instead of
 * 50); with more than 128 bytes after the headers two calls cost no more
 */
#define ICRC_ONE_CALL 128

uint32_t pkt_icrc(const uint8_t *l3, uint32_t len, int ipv6)
{
	uint32_t hlen = icrc_head_len(ipv6), n, rest;
	uint8_t buf[ICRC_HDR_MAX + ICRC_ONE_CALL];

	if (len < hlen)
		return 0;
	n = icrc_mask(buf, l3, ipv6);
	rest = len - hlen;
	if (rest > ICRC_ONE_CALL)
		return rxdp_crc32(rxdp_crc32(0, buf, n), l3 + hlen, rest);
	memcpy(buf + n, l3 + hlen, rest);
	return rxdp_crc32(0, buf, n + rest);
}

static void put_ext(uint8_t *p, uint32_t flags, const struct pkt_desc *d)
{
	if (flags & ROCE_OPF_DETH) {
		deth_init((struct roce_deth *)p, d->qkey, d->sqp);
		p += sizeof(struct roce_deth);
	}
	if (flags & ROCE_OPF_FETH) {
		feth_init((struct roce_feth *)p, d->flush_type, d->flush_level);
		p += sizeof(struct roce_feth);
	}
	if (flags & ROCE_OPF_RETH) {
		reth_init((struct roce_reth *)p, d->va, d->rkey, d->dma_len);
		p += sizeof(struct roce_reth);
	}
	if (flags & ROCE_OPF_ATOMICETH) {
		atomiceth_init((struct roce_atomiceth *)p, d->va, d->rkey,
			       d->swap_add, d->compare);
		p += sizeof(struct roce_atomiceth);
	}
	if (flags & ROCE_OPF_AETH) {
		aeth_init((struct roce_aeth *)p, d->syndrome, d->msn);
		p += sizeof(struct roce_aeth);
	}
	if (flags & ROCE_OPF_ATOMICACKETH) {
		atomicacketh_init((struct roce_atomicacketh *)p, d->orig);
		p += sizeof(struct roce_atomicacketh);
	}
	if (flags & ROCE_OPF_IMMDT) {
		memcpy(p, &d->imm, 4);
		p += sizeof(struct roce_immdt);
	}
	if (flags & ROCE_OPF_IETH) {
		((struct roce_ieth *)p)->rkey = htonl(d->ieth_rkey);
		p += sizeof(struct roce_ieth);
	}
	if (flags & ROCE_OPF_CNP)
		memset(p, 0, sizeof(struct roce_cnp));
}

int pkt_build(void *buf, uint32_t cap, const struct pkt_path *pp,
	      const struct pkt_desc *d)
{
	uint32_t flags = roce_opcode_flags(d->opcode);
	uint32_t pad = (4 - (d->paylen & 3)) & 3;
	uint32_t len, l3len = pkt_l3_len(pp), l4len, icrc;
	uint8_t *p = buf, *l3, *udp, *pay;
	uint32_t copied = 0;
	bool fuse;
	int err = 0;

	if (!flags)
		return -EINVAL;
	len = pkt_len(pp, d->opcode, d->paylen);
	if (len > cap)
		return -ENOSPC;
	memcpy(p, pp->l2, pp->l2_len);
	l3 = p + pp->l2_len;
	udp = l3 + l3len;
	l4len = len - pp->l2_len - l3len;
	if (pp->ipv6) {
		uint32_t vtf = (6U << 28) |
			       ((uint32_t)pp->traffic_class << 20) |
			       pp->flow_label;

		l3[0] = vtf >> 24;
		l3[1] = vtf >> 16;
		l3[2] = vtf >> 8;
		l3[3] = vtf;
		put16(l3 + 4, l4len);
		l3[6] = IPPROTO_UDP_;
		l3[7] = pp->hop_limit;
		memcpy(l3 + 8, pp->sip, 16);
		memcpy(l3 + 24, pp->dip, 16);
	} else {
		l3[0] = 0x45;
		l3[1] = pp->traffic_class;
		put16(l3 + 2, l3len + l4len);
		put16(l3 + 4, 0); /* id: DF set, never fragmented */
		put16(l3 + 6, 0x4000);
		l3[8] = pp->hop_limit;
		l3[9] = IPPROTO_UDP_;
		put16(l3 + 10, 0);
		memcpy(l3 + 12, pp->sip + 12, 4);
		memcpy(l3 + 16, pp->dip + 12, 4);
		put16(l3 + 10, csum_fold(csum_add(0, l3, PKT_IP4_LEN)));
	}
	put16(udp, pp->sport);
	put16(udp + 2, ROCE_V2_UDP_PORT);
	put16(udp + 4, l4len);
	put16(udp + 6, 0);
	bth_init((struct roce_bth *)(udp + PKT_UDP_LEN), d->opcode, d->se, pad,
		 d->pkey, d->dqpn, d->ackreq, d->psn);
	if (d->becn)
		((struct roce_bth *)(udp + PKT_UDP_LEN))->qpn |=
			htonl(ROCE_BTH_BECN);
	if (d->held)
		((struct roce_bth *)(udp + PKT_UDP_LEN))->apsn |=
			htonl(ROCE_BTH_RXDP_HELD);
	put_ext(udp + PKT_UDP_LEN + sizeof(struct roce_bth), flags, d);
	pay = udp + PKT_UDP_LEN + sizeof(struct roce_bth) +
	      roce_ext_hdr_len(flags);
	/*
	 * A payload the CRC folds (crc32.h): the headers are final, so the
	 * ICRC covers them now and the payload as it is copied in, one pass
	 * over it instead of two. A smaller one: copied, then one CRC.
	 */
	fuse = d->paylen >= RXDP_CRC32_FOLD_MIN;
	if (fuse)
		icrc = pkt_icrc(l3, pay - l3, pp->ipv6);
	for (int i = 0; i < d->nsg && copied < d->paylen; i++) {
		uint32_t n = d->sg[i].len;
		const void *src = (const void *)(uintptr_t)d->sg[i].addr;

		if (n > d->paylen - copied)
			n = d->paylen - copied;
		if (d->mem)
			err = d->mem->read(d->mem->arg, pay + copied,
					   d->sg[i].addr, n, d->sg[i].span,
					   fuse ? &icrc : NULL);
		else if (fuse)
			icrc = rxdp_crc32_copy(icrc, pay + copied, src, n);
		else
			memcpy(pay + copied, src, n);
		if (err)
			return err;
		copied += n;
	}
	if (copied < d->paylen)
		return -EINVAL;
	memset(pay + copied, 0, pad);
	if (!fuse)
		icrc = pkt_icrc(l3, l3len + l4len - ROCE_ICRC_LEN, pp->ipv6);
	else if (pad)
		icrc = rxdp_crc32(icrc, pay + copied, pad);
	p = udp + l4len - ROCE_ICRC_LEN;
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
	if (pp->ipv6) {
		/*
		 * IPv6 forbids a zero UDP checksum in general (RFC 8200 8.1);
		 * a real one is always accepted, so compute it: last, as it
		 * covers the ICRC (which masks it out).
		 */
		uint32_t sum = csum_add(0, l3 + 8, 32);
		uint16_t c;

		sum += l4len + IPPROTO_UDP_;
		sum = csum_add(sum, udp, l4len);
		c = csum_fold(sum);
		put16(udp + 6, c ? c : 0xffff);
	}
	return len;
}

void pkt_info_rebase(struct pkt_info *pi, const uint8_t *from, uint8_t *to)
{
#define PKT_REBASE(f) \
	(pi->f = pi->f ? (void *)(to + ((const uint8_t *)pi->f - from)) : NULL)
	PKT_REBASE(l3);
	PKT_REBASE(bth);
	PKT_REBASE(feth);
	PKT_REBASE(reth);
	PKT_REBASE(aeth);
	PKT_REBASE(atomiceth);
	PKT_REBASE(atomicacketh);
	PKT_REBASE(immdt);
	PKT_REBASE(ieth);
	PKT_REBASE(deth);
	PKT_REBASE(payload);
#undef PKT_REBASE
}

int pkt_parse(void *frame, uint32_t len, struct pkt_info *pi)
{
	uint8_t *p = frame, *end = p + len, *l3, *udp, *ext, *icrcp;
	uint32_t ethtype, l3len, l4len, hdrs, pad, icrc;

	memset(pi, 0, sizeof(*pi));
	if (len < PKT_ETH_LEN)
		return -EPROTONOSUPPORT;
	memcpy(pi->smac, p + 6, 6);
	pi->loop = pkt_looped(p, len);
	ethtype = get16(p + 12);
	p += PKT_ETH_LEN;
	if (ethtype == ETH_P_8021Q_) {
		if (end - p < PKT_VLAN_LEN)
			return -EPROTONOSUPPORT;
		pi->vlan = get16(p) & 0xfff;
		ethtype = get16(p + 2);
		p += PKT_VLAN_LEN;
	}
	l3 = p;
	if (ethtype == ETH_P_IPV4) {
		uint32_t tot;

		if (end - l3 < PKT_IP4_LEN || l3[0] != 0x45 ||
		    l3[9] != IPPROTO_UDP_)
			return -EPROTONOSUPPORT;
		/*
		 * A fragment: RoCEv2 never fragments (A17.4.5.2). Only the
		 * first shows the port: as the XDP program has it, one for
		 * port 4791 is a bad packet, the others are not RoCE.
		 */
		if (get16(l3 + 6) & 0x1fff)
			return -EPROTONOSUPPORT;
		if (get16(l3 + 6) & 0x2000)
			return end - l3 >= PKT_IP4_LEN + PKT_UDP_LEN &&
					       get16(l3 + PKT_IP4_LEN + 2) ==
						       ROCE_V2_UDP_PORT
				       ? -EBADMSG
				       : -EPROTONOSUPPORT;
		tot = get16(l3 + 2);
		if (tot > end - l3 || tot < PKT_IP4_LEN + PKT_UDP_LEN)
			return -EBADMSG;
		end = l3 + tot; /* Ethernet padding is not ours */
		l3len = PKT_IP4_LEN;
		pi->ecn = l3[1] & PKT_ECN_MASK;
		pi->sip[10] = pi->sip[11] = 0xff;
		memcpy(pi->sip + 12, l3 + 12, 4);
		pi->dip[10] = pi->dip[11] = 0xff;
		memcpy(pi->dip + 12, l3 + 16, 4);
	} else if (ethtype == ETH_P_IPV6_) {
		uint32_t plen;

		if (end - l3 < PKT_IP6_LEN || (l3[0] >> 4) != 6 ||
		    l3[6] != IPPROTO_UDP_)
			return -EPROTONOSUPPORT;
		plen = get16(l3 + 4);
		if (plen > end - l3 - PKT_IP6_LEN)
			return -EBADMSG;
		end = l3 + PKT_IP6_LEN + plen;
		l3len = PKT_IP6_LEN;
		pi->ipv6 = 1;
		pi->ecn = (l3[1] >> 4) & PKT_ECN_MASK;
		memcpy(pi->sip, l3 + 8, 16);
		memcpy(pi->dip, l3 + 24, 16);
	} else {
		return -EPROTONOSUPPORT;
	}
	udp = l3 + l3len;
	/*
	 * The port as the XDP program reads it (bpf/parse.h): from the frame,
	 * whatever the IP length says; an IP datagram too short for the UDP
	 * header it has is then a bad packet
	 */
	if ((uint8_t *)frame + len - udp < PKT_UDP_LEN ||
	    get16(udp + 2) != ROCE_V2_UDP_PORT)
		return -EPROTONOSUPPORT;
	if (end - udp < PKT_UDP_LEN)
		return -EBADMSG;
	l4len = get16(udp + 4);
	if (l4len != end - udp)
		return -EBADMSG;
	pi->sport = get16(udp);
	if (l4len < PKT_UDP_LEN + sizeof(struct roce_bth) + ROCE_ICRC_LEN)
		return -EBADMSG;
	pi->bth = (struct roce_bth *)(udp + PKT_UDP_LEN);
	pi->opcode = bth_opcode(pi->bth);
	pi->flags = roce_opcode_flags(pi->opcode);
	if (!pi->flags || bth_tver(pi->bth) != 0)
		return -EBADMSG;
	hdrs = PKT_UDP_LEN + sizeof(struct roce_bth) +
	       roce_ext_hdr_len(pi->flags);
	pad = bth_pad(pi->bth);
	if (l4len < hdrs + pad + ROCE_ICRC_LEN)
		return -EBADMSG;
	/* no payload (nor pad) where the opcode carries none (9.2.2, 9.3) */
	if (!(pi->flags & ROCE_OPF_PAYLOAD) && l4len != hdrs + ROCE_ICRC_LEN)
		return -EBADMSG;
	icrcp = end - ROCE_ICRC_LEN;
	icrc = icrcp[0] | (icrcp[1] << 8) | (icrcp[2] << 16) |
	       ((uint32_t)icrcp[3] << 24);
	if (pkt_icrc(l3, icrcp - l3, pi->ipv6) != icrc)
		return -EILSEQ;
	ext = udp + PKT_UDP_LEN + sizeof(struct roce_bth);
#define EXT(flag, field, type)                                  \
	do {                                                    \
		int off = roce_ext_hdr_offset(pi->flags, flag); \
		if (off >= 0)                                   \
			pi->field = (type *)(ext + off);        \
	} while (0)
	EXT(ROCE_OPF_DETH, deth, struct roce_deth);
	EXT(ROCE_OPF_FETH, feth, struct roce_feth);
	EXT(ROCE_OPF_RETH, reth, struct roce_reth);
	EXT(ROCE_OPF_ATOMICETH, atomiceth, struct roce_atomiceth);
	EXT(ROCE_OPF_AETH, aeth, struct roce_aeth);
	EXT(ROCE_OPF_ATOMICACKETH, atomicacketh, struct roce_atomicacketh);
	EXT(ROCE_OPF_IMMDT, immdt, struct roce_immdt);
	EXT(ROCE_OPF_IETH, ieth, struct roce_ieth);
#undef EXT
	pi->l3 = l3;
	pi->payload = udp + hdrs;
	pi->paylen = l4len - hdrs - pad - ROCE_ICRC_LEN;
	return 0;
}
