// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * RoCEv2 packets: the ICRC against packets scapy built (golden.h, made by
 * gen_golden.py), and build/parse round trips for every opcode over IPv4,
 * IPv6 and VLAN paths; the ICRC's CRC-32 against isa-l's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <isa-l/crc.h>

#include "engine/crc32.h"
#include "engine/pkt.h"
#include "golden.h"

static void golden_path(struct pkt_path *pp, const struct golden *g)
{
	struct rxdp_path path = {
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.sip = { [10] = 0xff, [11] = 0xff, 10, 11, 0, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 10, 11, 0, 2 },
		.hop_limit = g->ttl,
		.traffic_class = g->tos,
		.udp_sport = g->sport,
	};

	pkt_path_init(pp, &path);
}

/* scapy's packets parse with a good ICRC, and we rebuild them bit-exactly */
static void test_golden(void **state)
{
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		const struct golden *g = &goldens[i];
		uint8_t frame[2048], out[2048];
		struct pkt_info pi;
		struct pkt_desc d = { 0 };
		struct pkt_sg sg;
		struct pkt_path pp;
		int n;

		memcpy(frame, g->bytes, g->len);
		assert_int_equal(pkt_parse(frame, g->len, &pi), 0);
		assert_int_equal(pi.opcode, g->opcode);
		assert_int_equal(bth_psn(pi.bth), g->psn);
		assert_int_equal(bth_qpn(pi.bth), g->dqpn);
		assert_int_equal(bth_ackreq(pi.bth), g->ackreq);
		assert_int_equal(bth_se(pi.bth), g->se);
		assert_int_equal(pi.paylen, g->paylen);

		golden_path(&pp, g);
		d.opcode = pi.opcode;
		d.se = g->se;
		d.ackreq = g->ackreq;
		d.pkey = bth_pkey(pi.bth);
		d.dqpn = g->dqpn;
		d.psn = g->psn;
		d.becn = bth_becn(pi.bth); /* the CNP's */
		if (pi.reth) {
			d.va = reth_va(pi.reth);
			d.rkey = reth_rkey(pi.reth);
			d.dma_len = reth_len(pi.reth);
		}
		if (pi.atomiceth) {
			d.va = atomiceth_va(pi.atomiceth);
			d.rkey = atomiceth_rkey(pi.atomiceth);
			d.swap_add = atomiceth_swap_add(pi.atomiceth);
			d.compare = atomiceth_compare(pi.atomiceth);
		}
		if (pi.aeth) {
			d.syndrome = aeth_syndrome(pi.aeth);
			d.msn = aeth_msn(pi.aeth);
		}
		if (pi.immdt)
			d.imm = immdt_imm(pi.immdt);
		if (pi.feth) { /* the golden Flush: both types, the region */
			assert_int_equal(feth_plt(pi.feth), 3);
			assert_int_equal(feth_sel(pi.feth), 1);
			d.flush_type = feth_plt(pi.feth);
			d.flush_level = feth_sel(pi.feth);
		}
		sg.addr = (uintptr_t)pi.payload;
		sg.len = pi.paylen;
		d.sg = &sg;
		d.nsg = 1;
		d.paylen = pi.paylen;
		n = pkt_build(out, sizeof(out), &pp, &d);
		assert_int_equal(n, g->len);
		assert_memory_equal(out, g->bytes, g->len);

		/* a flipped payload/header bit is an ICRC error */
		frame[g->len - 5] ^= 0x01;
		assert_int_equal(pkt_parse(frame, g->len, &pi), -EILSEQ);
		frame[g->len - 5] ^= 0x01;
		/* the masked fields may change on the way: TTL, ECN, FECN */
		frame[14 + 8] = 3;
		frame[14 + 1] |= 0x03;
		frame[14 + 20 + 8 + 4] |= 0x80;
		assert_int_equal(pkt_parse(frame, g->len, &pi), 0);
		/* but not the destination QP */
		frame[14 + 20 + 8 + 7] ^= 0x10;
		assert_int_equal(pkt_parse(frame, g->len, &pi), -EILSEQ);
	}
}

/*
 * With RXDP_PKT_PCAP=<file>, every packet of the round trips is also
 * written there, for tshark to check (tests/engine/tshark_icrc.sh).
 */
static FILE *pcap;

static void pcap_write(const uint8_t *buf, uint32_t len)
{
	uint32_t rec[4] = { 0, 0, len, len };

	if (!pcap)
		return;
	fwrite(rec, sizeof(rec), 1, pcap);
	fwrite(buf, len, 1, pcap);
}

static void roundtrip(const struct rxdp_path *path)
{
	struct pkt_path pp;
	uint8_t pay[1031];

	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 13 + 5);
	pkt_path_init(&pp, path);
	for (int op = 0; op < 256; op++) {
		uint32_t fl = roce_opcode_flags(op);
		uint32_t lens[] = { 0, 1, 3, 4, 1024, 1031 };

		if (!fl)
			continue;
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			uint8_t buf[2048];
			struct pkt_sg sg[2] = { { (uintptr_t)pay, 500 },
						{ (uintptr_t)pay + 500, 531 } };
			struct pkt_desc d = {
				.opcode = op,
				.se = li & 1,
				.ackreq = !(li & 1),
				.pkey = 0x8001,
				.dqpn = 0x123456,
				.psn = 0xfffffe + li,
				.va = 0x1122334455667788ULL,
				.rkey = 0xa1b2c3d4,
				.dma_len = 0x10000,
				.flush_type = ROCE_FLUSH_GLOBAL |
					      ROCE_FLUSH_PERSISTENT,
				.flush_level = ROCE_FLUSH_MR,
				.swap_add = 0x0102030405060708ULL,
				.compare = 0xf0e0d0c0b0a09080ULL,
				.syndrome = 0x60 | 3,
				.msn = 0xabcdef,
				.orig = 0xdeadbeefcafef00dULL,
				.imm = htonl(0x01020304),
				.ieth_rkey = 0x55aa55aa,
				.qkey = 0x11111111,
				.sqp = 0x22,
				.sg = sg,
				.nsg = 2,
				.paylen = (fl & ROCE_OPF_PAYLOAD) ? lens[li]
								  : 0,
			};
			struct pkt_info pi;
			int n;

			n = pkt_build(buf, sizeof(buf), &pp, &d);
			assert_true(n > 0);
			assert_int_equal(n, pkt_len(&pp, op, d.paylen));
			pcap_write(buf, n);
			assert_int_equal(n % 4,
					 pp.l2_len % 4); /* padded to 4 */
			assert_int_equal(pkt_parse(buf, n, &pi), 0);
			assert_int_equal(pi.opcode, op);
			assert_int_equal(pi.ipv6, path->ipv6);
			assert_int_equal(pi.vlan, path->vlan);
			assert_int_equal(pi.sport, pp.sport);
			assert_int_equal(bth_psn(pi.bth), d.psn & 0xffffff);
			assert_int_equal(bth_qpn(pi.bth), d.dqpn);
			assert_int_equal(bth_pkey(pi.bth), 0x8001);
			assert_int_equal(bth_se(pi.bth), d.se);
			assert_int_equal(bth_ackreq(pi.bth), d.ackreq);
			assert_int_equal(bth_pad(pi.bth),
					 (4 - d.paylen % 4) % 4);
			assert_int_equal(pi.paylen, d.paylen);
			assert_memory_equal(pi.payload, pay, d.paylen);
			assert_int_equal(!!pi.reth, !!(fl & ROCE_OPF_RETH));
			assert_int_equal(!!pi.aeth, !!(fl & ROCE_OPF_AETH));
			assert_int_equal(!!pi.immdt, !!(fl & ROCE_OPF_IMMDT));
			assert_int_equal(!!pi.deth, !!(fl & ROCE_OPF_DETH));
			assert_int_equal(!!pi.feth, !!(fl & ROCE_OPF_FETH));
			if (pi.feth) {
				/* A19: FETH first, then the RETH */
				assert_ptr_equal((uint8_t *)pi.feth + 4,
						 (uint8_t *)pi.reth);
				assert_int_equal(feth_plt(pi.feth),
						 d.flush_type);
				assert_int_equal(feth_sel(pi.feth),
						 d.flush_level);
			}
			if (pi.reth) {
				assert_true(reth_va(pi.reth) == d.va);
				assert_int_equal(reth_rkey(pi.reth), d.rkey);
				assert_int_equal(reth_len(pi.reth), d.dma_len);
			}
			if (pi.atomiceth) {
				assert_true(atomiceth_va(pi.atomiceth) == d.va);
				assert_true(atomiceth_swap_add(pi.atomiceth) ==
					    d.swap_add);
				assert_true(atomiceth_compare(pi.atomiceth) ==
					    d.compare);
			}
			if (pi.aeth) {
				assert_int_equal(aeth_syndrome(pi.aeth), 0x63);
				assert_int_equal(aeth_msn(pi.aeth), d.msn);
			}
			if (pi.atomicacketh)
				assert_true(atomicacketh_orig(
						    pi.atomicacketh) == d.orig);
			if (pi.immdt)
				assert_int_equal(immdt_imm(pi.immdt), d.imm);
			if (pi.ieth)
				assert_int_equal(ieth_rkey(pi.ieth),
						 d.ieth_rkey);
			if (pi.deth) {
				assert_int_equal(deth_qkey(pi.deth), d.qkey);
				assert_int_equal(deth_sqp(pi.deth), d.sqp);
			}
			/* truncated by one byte: never a crash, an error */
			assert_true(pkt_parse(buf, n - 1, &pi) < 0);
		}
	}
}

static void test_roundtrip_ipv4(void **state)
{
	struct rxdp_path p = {
		.smac = { 2, 1, 2, 3, 4, 5 },
		.dmac = { 2, 6, 7, 8, 9, 10 },
		.sip = { [10] = 0xff, [11] = 0xff, 192, 168, 1, 1 },
		.dip = { [10] = 0xff, [11] = 0xff, 192, 168, 1, 2 },
		.hop_limit = 64,
		.traffic_class = 0x8a,
		.udp_sport = 49999
	};

	roundtrip(&p);
}

static void test_roundtrip_ipv6_vlan(void **state)
{
	struct rxdp_path p = { .smac = { 2, 1, 2, 3, 4, 5 },
			       .dmac = { 2, 6, 7, 8, 9, 10 },
			       .vlan = 100,
			       .ipv6 = 1,
			       .sip = { 0xfd, 0, [15] = 1 },
			       .dip = { 0xfd, 0, [15] = 2 },
			       .hop_limit = 5,
			       .traffic_class = 0x20,
			       .flow_label = 0x12345,
			       .udp_sport = 50000 };

	roundtrip(&p);
}

/*
 * ECT(0) with the traffic class's DSCP, over IPv4 and IPv6: the TOS byte or
 * the traffic class carries it, the parse reads it back (and CE as the
 * switch marks it), the ICRC is the same bytes as without it (the annex
 * masks the field), the IPv4 header checksum is right.
 */
static void test_ecn(void **state)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct rxdp_path path = {
			.smac = { 2, 1, 2, 3, 4, 5 },
			.dmac = { 2, 6, 7, 8, 9, 10 },
			.ipv6 = v6,
			.sip = { [10] = 0xff, [11] = 0xff, 192, 168, 1, 1 },
			.dip = { [10] = 0xff, [11] = 0xff, 192, 168, 1, 2 },
			.traffic_class = 26 << 2 | 1, /* DSCP 26, ECT(1) */
		};
		uint8_t pay[64] = { 1, 2, 3 };
		struct pkt_sg sg = { (uintptr_t)pay, sizeof(pay), sizeof(pay) };
		struct pkt_desc d = { .opcode = ROCE_RC_SEND_ONLY,
				      .pkey = 0xffff,
				      .dqpn = 0x11,
				      .psn = 7,
				      .sg = &sg,
				      .nsg = 1,
				      .paylen = sizeof(pay) };
		uint8_t plain[256], ect[256], *l3 = ect + PKT_ETH_LEN;
		struct pkt_path pp;
		struct pkt_info pi;
		uint8_t tc;
		int n;

		pkt_path_init(&pp, &path);
		n = pkt_build(plain, sizeof(plain), &pp, &d);
		assert_true(n > 0);
		assert_int_equal(pkt_parse(plain, n, &pi), 0);
		assert_int_equal(pi.ecn, 1); /* off: as the AH gives it */
		pkt_path_ect(&pp);
		assert_int_equal(pkt_build(ect, sizeof(ect), &pp, &d), n);
		tc = v6 ? (uint8_t)((l3[0] & 0x0f) << 4 | l3[1] >> 4) : l3[1];
		assert_int_equal(tc, 26 << 2 | PKT_ECN_ECT0);
		assert_int_equal(pkt_parse(ect, n, &pi), 0);
		assert_int_equal(pi.ecn, PKT_ECN_ECT0);
		assert_memory_equal(ect + n - 4, plain + n - 4, 4);
		if (!v6) {
			uint32_t sum = 0;

			for (int i = 0; i < PKT_IP4_LEN; i += 2)
				sum += l3[i] << 8 | l3[i + 1];
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			assert_int_equal(sum, 0xffff);
		}
		/* a switch marks CE: still a good ICRC, and seen */
		if (v6)
			l3[1] |= PKT_ECN_CE << 4;
		else
			l3[1] |= PKT_ECN_CE;
		assert_int_equal(pkt_parse(ect, n, &pi), 0);
		assert_int_equal(pi.ecn, PKT_ECN_CE);
	}
}

/* Headers that are not RoCEv2, or lie about lengths, are refused */
static void test_malformed(void **state)
{
	struct rxdp_path p = { .sip = { [10] = 0xff, [11] = 0xff, 1, 1, 1, 1 },
			       .dip = {
				       [10] = 0xff, [11] = 0xff, 1, 1, 1, 2 } };
	struct pkt_desc d = { .opcode = ROCE_RC_ACK, .psn = 1 };
	struct pkt_path pp;
	struct pkt_info pi;
	uint8_t buf[256], c[256];
	int n;

	pkt_path_init(&pp, &p);
	n = pkt_build(buf, sizeof(buf), &pp, &d);
	assert_true(n > 0);
	memcpy(c, buf, n);
	c[14 + 20 + 3] = 0x35; /* UDP port 53 */
	assert_int_equal(pkt_parse(c, n, &pi), -EPROTONOSUPPORT);
	memcpy(c, buf, n);
	c[14 + 20 + 5] += 4; /* UDP length past the end */
	assert_int_equal(pkt_parse(c, n, &pi), -EBADMSG);
	memcpy(c, buf, n);
	c[14 + 20 + 8] = 0x15; /* reserved opcode */
	assert_int_equal(pkt_parse(c, n, &pi), -EBADMSG);
	memcpy(c, buf, n);
	c[14 + 6] |= 0x20; /* more fragments */
	assert_int_equal(pkt_parse(c, n, &pi), -EBADMSG);
	assert_int_equal(pkt_parse(buf, 10, &pi), -EPROTONOSUPPORT);
	/* too small a buffer to build into */
	assert_int_equal(pkt_build(buf, 20, &pp, &d), -ENOSPC);
}

/*
 * One length, alignment and starting value: rxdp_crc32() gives isa-l's
 * value, and rxdp_crc32_copy() too, with the bytes copied and none beside
 * them touched
 */
static void crc32_one(const uint8_t *src, size_t len, size_t doff,
		      uint32_t init)
{
	static uint8_t dst[10000 + 128];
	uint32_t want = crc32_gzip_refl(init, src, len);

	assert_true(doff + len + 1 < sizeof(dst));
	memset(dst, 0xa5, doff + len + 1);
	assert_int_equal(rxdp_crc32(init, src, len), want);
	assert_int_equal(rxdp_crc32_copy(init, dst + doff, src, len), want);
	assert_memory_equal(dst + doff, src, len);
	assert_int_equal(dst[doff + len], 0xa5);
	if (doff)
		assert_int_equal(dst[doff - 1], 0xa5);
}

/*
 * rxdp_crc32() and rxdp_crc32_copy() fold in AVX2 registers where the CPU
 * can: every length up to 1200 (the fold starts at 256 and takes 128 at a
 * time), at five alignments, from three starting values; and random
 * lengths up to a jumbo frame's, from random values.
 */
static void test_crc32(void **state)
{
	static const uint32_t inits[3] = { 0, ~0U, 0x9e3779b9 };
	static uint8_t buf[10000 + 64];
	uint32_t seed = 1;
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t len = 0; len <= 1200; len++)
		for (size_t off = 0; off < 32; off += 7)
			for (int k = 0; k < 3; k++) {
				crc32_one(buf + off, len, (off * 3) % 32,
					  inits[k]);
				checked++;
			}
	for (int i = 0; i < 20000; i++) {
		seed = seed * 1103515245 + 12345;
		crc32_one(buf + seed % 64, (seed >> 8) % 10000,
			  (seed >> 4) % 64, seed);
		checked++;
	}
	printf("rxdp_crc32: %d buffers as isa-l's, %s\n", checked,
	       rxdp_crc32_folds() ? "AVX2 fold" : "isa-l alone (no fold)");
}

/*
 * pkt_icrc() against the pseudo packet of RoCEv2 A17.3.3 written out here
 * (8 bytes of 1s, then the IP, UDP and BTH headers with the fields routers
 * change masked, then the rest) and isa-l's CRC of it, for every length of
 * the rest up to 300 bytes over IPv4 and IPv6: short rests are copied
 * behind the masked headers for one CRC call, longer ones go in a second.
 */
static void test_icrc_lengths(void **state)
{
	static uint8_t l3[40 + 8 + 12 + 300], pseudo[8 + sizeof(l3)];
	uint32_t seed = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(l3); i++) {
		seed = seed * 1103515245 + 12345;
		l3[i] = (uint8_t)(seed >> 16);
	}
	for (int ipv6 = 0; ipv6 < 2; ipv6++) {
		uint32_t iplen = ipv6 ? 40 : 20, hlen = iplen + 8 + 12;

		for (uint32_t rest = 0; rest <= 300; rest++) {
			uint8_t *ip = pseudo + 8;

			memset(pseudo, 0xff, 8);
			memcpy(ip, l3, hlen + rest);
			if (ipv6) {
				ip[0] |= 0x0f;
				ip[1] = ip[2] = ip[3] = ip[7] = 0xff;
			} else {
				ip[1] = ip[8] = ip[10] = ip[11] = 0xff;
			}
			ip[iplen + 6] = ip[iplen + 7] = 0xff;
			ip[iplen + 8 + 4] = 0xff;
			assert_int_equal(pkt_icrc(l3, hlen + rest, ipv6),
					 crc32_gzip_refl(0, pseudo,
							 8 + hlen + rest));
		}
	}
}

int main(void)
{
	const char *pcap_path = getenv("RXDP_PKT_PCAP");
	int ret;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_roundtrip_ipv4),
		cmocka_unit_test(test_roundtrip_ipv6_vlan),
		cmocka_unit_test(test_ecn),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_icrc_lengths),
	};

	if (pcap_path) {
		/* libpcap file header: magic, v2.4, snaplen, Ethernet */
		uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

		pcap = fopen(pcap_path, "w");
		if (!pcap)
			return 1;
		fwrite(hdr, sizeof(hdr), 1, pcap);
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (pcap)
		fclose(pcap);
	return ret;
}
