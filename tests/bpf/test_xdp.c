// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP classifier run on crafted packets with BPF_PROG_TEST_RUN: each case
 * asserts the verdict, that the packet is unchanged, and the exact counter
 * deltas. An accepted packet for a QP whose owner has no AF_XDP socket ends
 * as drop_no_xsk: that counter is how these tests see "accepted".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <xdp/xsk.h>

#include "rxdp/maps.h"
#include "rxdp/opcodes.h"
#include "rxdp/params.h"
#include "rxdp/psn.h"
#include "rxdp/roce.h"
#include "engine/pkt.h"
#include "xdp_rig.h"

#define XDP_DROP_ 1
#define XDP_PASS_ 2
#define XDP_REDIRECT_ 4

/* the program and its maps (xdp_rig.h); the variant under test */
static struct xdp_rig rig;
#define skel (rig.skel)
#define prog_fd (rig.prog_fd)
static bool linear;

/* --- packets ------------------------------------------------------------- */

#define PKT_MAX XDP_RIG_PKT_MAX

/* --- maps ------------------------------------------------------------------ */

/* The peer that xdp_rig_build() makes frames come from, and our address */
#define peer_mac xdp_rig_peer_mac
#define peer_v4 xdp_rig_peer_v4
#define local_v4 xdp_rig_local_v4
#define peer_v6 xdp_rig_peer_v6
#define local_v6 xdp_rig_local_v6

static void set_qp(uint32_t qpn, int type, int state, uint16_t pkey,
		   uint32_t qkey, uint32_t owner_slot)
{
	assert_int_equal(xdp_rig_set_qp(&rig, qpn, type, state, pkey, qkey,
					owner_slot),
			 0);
}

static struct rxdp_qp_ctx get_ctx(uint32_t qpn)
{
	struct rxdp_qp_ctx c;

	assert_int_equal(xdp_rig_get_ctx(&rig, qpn, &c), 0);
	return c;
}

static void put_ctx(const struct rxdp_qp_ctx *c)
{
	assert_int_equal(xdp_rig_put_ctx(&rig, c), 0);
}

/* The QP's peer: xdp_rig_build()'s IPv6 (ipv6) or IPv4 source */
static void set_peer(uint32_t qpn, int ipv6)
{
	struct rxdp_qp_ctx c = get_ctx(qpn);

	memcpy(c.peer_ip, ipv6 ? peer_v6 : peer_v4, 16);
	memcpy(c.local_ip, ipv6 ? local_v6 : local_v4, 16);
	c.flags &= ~RXDP_QPF_PEER_IPV6;
	if (ipv6)
		c.flags |= RXDP_QPF_PEER_IPV6;
	put_ctx(&c);
}

static void set_psn(uint32_t qpn, uint32_t epsn, uint32_t una, uint32_t next,
		    uint32_t flags)
{
	assert_int_equal(xdp_rig_set_psn(&rig, qpn, epsn, una, next, flags), 0);
}

static struct rxdp_qp_psn get_psn(uint32_t qpn)
{
	struct rxdp_qp_psn p;

	assert_int_equal(xdp_rig_get_psn(&rig, qpn, &p), 0);
	return p;
}

static void read_stats(uint64_t out[RXDP_V_MAX])
{
	assert_int_equal(xdp_rig_stats(&rig, out), 0);
}

static struct rxdp_qp_stats qp_stats(uint32_t qpn)
{
	struct rxdp_qp_stats sum;

	assert_int_equal(xdp_rig_qp_stats(&rig, qpn, &sum), 0);
	return sum;
}

/*
 * Run the program on len bytes of buf; assert what every run keeps (the
 * packet comes out unchanged, one counter moves, by one, the action and
 * the engine's parser agree: xdp_rig_run), and that the counter is
 * `verdict`. Returns the program's return code.
 */
static int run_expect(const uint8_t *buf, uint32_t len, uint32_t verdict)
{
	char why[160];
	uint32_t v;
	int action;

	if (xdp_rig_run(&rig, buf, len, &v, &action, why, sizeof(why)))
		fail_msg("len %u: %s", len, why);
	if (v != verdict)
		fail_msg("len %u: %s, want %s", len, rxdp_verdict_names[v],
			 rxdp_verdict_names[verdict]);
	return action;
}

static void expect(const struct xdp_rig_pkt *o, uint32_t verdict, int action)
{
	uint8_t buf[PKT_MAX];
	uint32_t len = xdp_rig_build(buf, o);

	assert_int_equal(run_expect(buf, len, verdict), action);
}

/* Accepted: everything passed; the owner has no socket in these tests */
static void accepted(const struct xdp_rig_pkt *o)
{
	expect(o, RXDP_V_DROP_NO_XSK, XDP_DROP_);
}

#define QP_RC XDP_RIG_QP_RC
#define QP_UC XDP_RIG_QP_UC
#define QP_UD XDP_RIG_QP_UD
#define QKEY XDP_RIG_QKEY

static int setup(void **state)
{
	set_qp(QP_RC, RXDP_QPT_RC, RXDP_QPS_RTS, 0xffff, 0, 0);
	set_qp(QP_UC, RXDP_QPT_UC, RXDP_QPS_RTS, 0xffff, 0, 0);
	set_qp(QP_UD, RXDP_QPT_UD, RXDP_QPS_RTS, 0xffff, QKEY, 0);
	set_psn(QP_RC, 100, 100, 200, 0);
	set_psn(QP_UC, 0, 0, 0, 0);
	set_psn(QP_UD, 0, 0, 0, 0);
	return 0;
}

/* --- tests ---------------------------------------------------------------- */

static void test_not_roce(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY, .qpn = QP_RC };

	o.ethertype = ETH_P_ARP;
	expect(&o, RXDP_V_PASS_NOT_ROCE, XDP_PASS_);
	o.ethertype = 0;
	o.dport = 4792;
	expect(&o, RXDP_V_PASS_NOT_ROCE, XDP_PASS_);
	o.dport = 0;
	o.vlan = 0x8100;
	o.dport = 53;
	expect(&o, RXDP_V_PASS_NOT_ROCE, XDP_PASS_);
}

/* Every opcode of the table, on a QP of each service type that takes it */
static void test_every_opcode(void **state)
{
	for (int op = 0; op < 256; op++) {
		uint32_t f = roce_opcode_flags(op);
		struct xdp_rig_pkt o = { .opcode = op,
					 .psn = 100,
					 .qkey = QKEY };

		if (!f)
			continue;
		o.payload = f & ROCE_OPF_PAYLOAD ? 64 : 0;
		if (f & ROCE_OPF_SVC_RC) {
			set_psn(QP_RC, 100, 100, 200, 0);
			o.qpn = QP_RC;
			accepted(&o);
		}
		if (f & ROCE_OPF_SVC_UC) {
			o.qpn = QP_UC;
			accepted(&o);
		}
		if (f & ROCE_OPF_SVC_UD) {
			o.qpn = QP_UD;
			accepted(&o);
		}
	}
}

static void test_bad_opcodes(void **state)
{
	struct xdp_rig_pkt o = { .qpn = QP_RC, .psn = 100 };

	o.opcode = 0x15; /* reserved in the RC range */
	expect(&o, RXDP_V_DROP_BAD_OPCODE, XDP_DROP_);
	o.opcode = 0x40; /* RD: not supported */
	expect(&o, RXDP_V_DROP_BAD_OPCODE, XDP_DROP_);
	o.opcode = ROCE_UC_SEND_ONLY; /* UC opcode to an RC QP */
	o.payload = 8;
	expect(&o, RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP_);
	o.opcode = ROCE_RC_SEND_ONLY; /* RC opcode to a UD QP */
	o.qpn = QP_UD;
	expect(&o, RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP_);
	o.opcode = ROCE_RC_ACK; /* no payload allowed */
	o.qpn = QP_RC;
	o.payload = 4;
	set_psn(QP_RC, 100, 100, 200, 0);
	expect(&o, RXDP_V_DROP_TRUNCATED, XDP_DROP_);
	o.opcode = ROCE_RC_SEND_ONLY;
	o.payload = 0;
	o.tver = 1;
	expect(&o, RXDP_V_DROP_BAD_TVER, XDP_DROP_);
}

static void test_l2_l3_variants(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY,
				 .qpn = QP_RC,
				 .payload = 32 };

	set_psn(QP_RC, 0, 0, 0, 0);
	/* IPv4 options and 802.1ad tags: not RoCEv2 (as pkt_parse has it) */
	o.ip_opt_words = 3;
	expect(&o, RXDP_V_PASS_NOT_ROCE, XDP_PASS_);
	o.ip_opt_words = 0;
	o.vlan = 0x88a8;
	expect(&o, RXDP_V_PASS_NOT_ROCE, XDP_PASS_);
	o.vlan = 0;
	o.psn = 0;
	accepted(&o);
	set_peer(QP_RC, 1);
	o.ipv6 = 1;
	o.psn = 1;
	accepted(&o);
	o.vlan = 0x8100;
	o.psn = 2;
	accepted(&o);
	set_peer(QP_RC, 0);
	o.ipv6 = 0;
	o.psn = 3;
	accepted(&o);
	o.vlan = 0;
	o.frag = 1;
	expect(&o, RXDP_V_DROP_IP_FRAGMENT, XDP_DROP_);
	o.frag = 0;
	o.udp_len_delta = -2;
	expect(&o, RXDP_V_DROP_BAD_UDP, XDP_DROP_);
	o.udp_len_delta = 0;
	o.pad = 3;
	o.payload = 1;
	o.psn = 4;
	accepted(&o);
}

/*
 * One parser: every frame the XDP program calls RoCE, the engine's
 * pkt_parse() parses (up to the ICRC, which only the engine checks: these
 * frames carry none), every frame it passes as not RoCE, pkt_parse() calls
 * not RoCEv2, and every frame it drops as malformed, pkt_parse() rejects.
 */
static void test_same_parser(void **state)
{
	static const struct xdp_rig_pkt frames[] = {
		{ .opcode = ROCE_RC_SEND_ONLY, .payload = 32 },
		{ .opcode = ROCE_RC_SEND_ONLY, .payload = 32, .ipv6 = 1 },
		{ .opcode = ROCE_RC_SEND_ONLY, .payload = 32, .vlan = 0x8100 },
		{ .opcode = ROCE_RC_SEND_ONLY, .payload = 32, .vlan = 0x88a8 },
		{ .opcode = ROCE_RC_SEND_ONLY,
		  .payload = 32,
		  .ip_opt_words = 1 },
		{ .opcode = ROCE_RC_SEND_ONLY, .ethertype = 0x0806 },
		{ .opcode = ROCE_RC_SEND_ONLY, .dport = 4790 },
		{ .opcode = ROCE_RC_SEND_ONLY, .frag = 1 },
		{ .opcode = ROCE_RC_SEND_ONLY, .udp_len_delta = -2 },
		{ .opcode = ROCE_RC_SEND_ONLY, .udp_len_delta = 4 },
		{ .opcode = ROCE_RC_SEND_ONLY, .tver = 1 },
		{ .opcode = 0x1f },
		{ .opcode = ROCE_RC_ACK, .payload = 4 },
		{ .opcode = ROCE_RC_ACK, .pad = 2 },
		{ .opcode = ROCE_RC_ACK },
		{ .opcode = ROCE_RC_WRITE_ONLY, .payload = 8, .pad = 3 },
		{ .opcode = ROCE_UD_SEND_ONLY, .payload = 64, .qkey = QKEY },
	};
	uint8_t buf[PKT_MAX];

	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		struct xdp_rig_pkt o = frames[i];
		uint32_t len, v;
		char why[160];
		int action;

		struct pkt_info pi;
		int err;

		o.qpn = o.opcode == ROCE_UD_SEND_ONLY ? QP_UD : QP_RC;
		len = xdp_rig_build(buf, &o);
		if (xdp_rig_run(&rig, buf, len, &v, &action, why, sizeof(why)))
			fail_msg("frame %zu: %s", i, why);
		/* these, the parser calls not RoCEv2 in so many words */
		err = pkt_parse(buf, len, &pi);
		if (v == RXDP_V_PASS_NOT_ROCE && err != -EPROTONOSUPPORT)
			fail_msg("frame %zu: XDP passes, pkt_parse %d", i, err);
	}
	/*
	 * An IPv6 payload length too short for the UDP header after it (0
	 * here; a fuzzed frame found the parsers apart): both read the port
	 * from the frame, and call it a bad packet
	 */
	{
		struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY,
					 .payload = 32,
					 .ipv6 = 1,
					 .qpn = QP_RC };
		uint32_t len = xdp_rig_build(buf, &o);
		struct pkt_info pi;

		buf[ETH_HLEN + 4] = buf[ETH_HLEN + 5] = 0;
		run_expect(buf, len, RXDP_V_DROP_BAD_UDP);
		assert_int_equal(pkt_parse(buf, len, &pi), -EBADMSG);
	}
}

static void test_unknown_qp_and_states(void **state)
{
	static const int drop[] = { RXDP_QPS_RESET, RXDP_QPS_INIT,
				    RXDP_QPS_ERR };
	static const int take[] = { RXDP_QPS_RTR, RXDP_QPS_RTS, RXDP_QPS_SQD,
				    RXDP_QPS_SQE };
	struct xdp_rig_pkt o = { .opcode = ROCE_UC_SEND_ONLY, .qpn = 0x00abcd };
	struct rxdp_qp_stats s0, s1;

	expect(&o, RXDP_V_DROP_UNKNOWN_QP, XDP_DROP_);
	o.qpn = QP_UC;
	s0 = qp_stats(QP_UC);
	for (unsigned i = 0; i < 3; i++) {
		set_qp(QP_UC, RXDP_QPT_UC, drop[i], 0xffff, 0, 0);
		expect(&o, RXDP_V_DROP_QP_STATE, XDP_DROP_);
	}
	for (unsigned i = 0; i < 4; i++) {
		set_qp(QP_UC, RXDP_QPT_UC, take[i], 0xffff, 0, 0);
		accepted(&o);
	}
	s1 = qp_stats(QP_UC);
	assert_int_equal(s1.rx_drops - s0.rx_drops, 7);
	set_qp(QP_UC, RXDP_QPT_UC, RXDP_QPS_RTS, 0xffff, 0, 0);
	/* a qp_psn slot that belongs to another QP */
	o.opcode = ROCE_RC_SEND_ONLY;
	o.qpn = QP_RC;
	set_psn(QP_RC, 0, 0, 0, 0);
	{
		uint32_t idx = QP_RC & RXDP_QP_INDEX_MASK;
		struct rxdp_qp_psn p = { .qpn = QP_RC + RXDP_MAX_QP };

		assert_int_equal(bpf_map__update_elem(skel->maps.qp_psn, &idx,
						      sizeof(idx), &p,
						      sizeof(p), 0),
				 0);
	}
	expect(&o, RXDP_V_DROP_UNKNOWN_QP, XDP_DROP_);
	/* an owner slot out of range */
	set_psn(QP_RC, 0, 0, 0, 0);
	set_qp(QP_RC, RXDP_QPT_RC, RXDP_QPS_RTS, 0xffff, 0, RXDP_MAX_OWNERS);
	expect(&o, RXDP_V_DROP_NO_XSK, XDP_DROP_);
	set_qp(QP_RC, RXDP_QPT_RC, RXDP_QPS_RTS, 0xffff, 0, 0);
}

static void test_keys(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_UC_SEND_ONLY, .qpn = QP_UC };

	o.pkey = 0x7fff; /* limited member against a full member: match */
	accepted(&o);
	o.pkey = 0x8001; /* another partition */
	expect(&o, RXDP_V_DROP_BAD_PKEY, XDP_DROP_);
	set_qp(QP_UC, RXDP_QPT_UC, RXDP_QPS_RTS, 0x7fff, 0, 0);
	o.pkey = 0x7fff; /* two limited members never match (IBTA 10.9.3) */
	expect(&o, RXDP_V_DROP_BAD_PKEY, XDP_DROP_);
	set_qp(QP_UC, RXDP_QPT_UC, RXDP_QPS_RTS, 0xffff, 0, 0);

	o.opcode = ROCE_UD_SEND_ONLY;
	o.qpn = QP_UD;
	o.pkey = 0;
	o.qkey = QKEY;
	accepted(&o);
	o.qkey = QKEY + 1;
	expect(&o, RXDP_V_DROP_BAD_QKEY, XDP_DROP_);
}

/* RC requests around the expected PSN, across the 2^24 wrap */
static void test_request_psn(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY, .qpn = QP_RC };

	set_psn(QP_RC, 0xfffffe, 0, 0, 0);
	o.psn = 0xfffffe; /* expected: passes, epsn moves on */
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 0xffffff);
	o.psn = 0xfffffd; /* duplicate */
	accepted(&o);
	o.psn = 0x000001; /* ahead, across the wrap: the first passes */
	accepted(&o);
	assert_true(get_psn(QP_RC).flags & RXDP_PSNF_NAK_SENT);
	o.psn = 0x000002; /* the next one ahead is dropped */
	expect(&o, RXDP_V_DROP_PSN_OOS, XDP_DROP_);
	assert_int_equal(get_psn(QP_RC).epsn, 0xffffff);
	o.psn = 0xffffff; /* the expected one: clears the flag, wraps to 0 */
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 0);
	assert_false(get_psn(QP_RC).flags & RXDP_PSNF_NAK_SENT);
	o.psn = 0x000001; /* ahead again: a new gap gets its one NAK */
	accepted(&o);
	o.psn = 0x000000;
	accepted(&o);
	/* an RDMA Read request takes one PSN per response packet */
	o.opcode = ROCE_RC_READ_REQUEST;
	o.dma_len = 3000; /* 3 packets at path MTU 1024 */
	o.psn = 1;
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 4);
	o.dma_len = 0; /* a zero-length read still takes one */
	o.psn = 4;
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 5);
}

/*
 * Where the engine holds what comes past a gap (RXDP_PSNF_HOLD), every
 * request up to a window ahead passes, across the wrap, and epsn moves
 * only on the expected PSN; a window ahead or more, the one-NAK rule again
 */
static void test_request_psn_hold(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY, .qpn = QP_RC };

	set_psn(QP_RC, 0xffff00, 0, 0, RXDP_PSNF_HOLD);
	for (uint32_t d = 1; d < RXDP_HOLD_WINDOW; d += 17) {
		o.psn = (0xffff00 + d) & ROCE_PSN_MASK;
		accepted(&o);
	}
	o.psn = (0xffff00 + RXDP_HOLD_WINDOW - 1) & ROCE_PSN_MASK;
	accepted(&o);
	accepted(&o); /* again: no NAK_SENT rule for these */
	assert_int_equal(get_psn(QP_RC).epsn, 0xffff00);
	assert_false(get_psn(QP_RC).flags & RXDP_PSNF_NAK_SENT);
	o.psn = (0xffff00 + RXDP_HOLD_WINDOW) & ROCE_PSN_MASK;
	accepted(&o); /* a window ahead: the first passes, for its NAK */
	assert_true(get_psn(QP_RC).flags & RXDP_PSNF_NAK_SENT);
	o.psn = (0xffff00 + RXDP_HOLD_WINDOW + 1) & ROCE_PSN_MASK;
	expect(&o, RXDP_V_DROP_PSN_OOS, XDP_DROP_);
	o.psn = 0xffff00;
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 0xffff01);
	set_psn(QP_RC, 10, 0, 0, 0);
}

/*
 * The program notes, in an RC QP's PSN slot, 1 + the CPU it passed one of
 * the QP's packets on (its engine keeps off that CPU while a stream comes
 * in), written on the CPU's change only; a packet it drops leaves it
 */
static void test_rx_cpu(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_SEND_ONLY, .qpn = QP_RC };
	cpu_set_t all, one;
	int cpus[2], n = 0;

	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &all))
			cpus[n++] = c;
	set_psn(QP_RC, 10, 0, 0, RXDP_PSNF_NAK_SENT);
	o.psn = 20; /* ahead of a gap already NAKed: dropped */
	expect(&o, RXDP_V_DROP_PSN_OOS, XDP_DROP_);
	assert_int_equal(get_psn(QP_RC).rx_cpu, 0);
	for (int i = 0; i < 2 * n; i++) {
		CPU_ZERO(&one);
		CPU_SET(cpus[i % n], &one);
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		o.psn = 10 + i;
		accepted(&o);
		assert_int_equal(get_psn(QP_RC).rx_cpu, cpus[i % n] + 1);
		assert_int_equal(get_psn(QP_RC).epsn, 11 + i);
	}
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
}

/* Run the program on a frame; its return code (the counters unchecked) */
static int run_raw(const uint8_t *buf, uint32_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
		    .data_size_in = len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
	return opts.retval;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Where xdp_rig_build() puts things (no VLAN tag) */
#define OFF_SMAC 6
#define OFF_L3 ETH_HLEN
#define OFF_V4_SADDR (OFF_L3 + 12)
#define OFF_V4_DADDR (OFF_L3 + 16)
#define OFF_V6_SADDR (OFF_L3 + 8)
#define OFF_V6_DADDR (OFF_L3 + 24)

/*
 * RC and UC take packets only from the QP's peer (qp_ctx, written at RTR):
 * a forged source address, destination address, source MAC or IP version
 * is drop_bad_source, counted on the QP, and leaves its PSN state as it was
 * (a forged RDMA Write with the right QPN and PSN included). UD is not
 * checked (its Q_Key is).
 */
static void test_source(void **state)
{
	static const uint32_t forge_v4[] = { OFF_V4_SADDR + 3, OFF_V4_DADDR + 3,
					     OFF_SMAC + 5 };
	static const uint32_t forge_v6[] = { OFF_V6_SADDR, OFF_V6_SADDR + 15,
					     OFF_V6_DADDR + 7, OFF_SMAC };
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_WRITE_ONLY,
				 .qpn = QP_RC,
				 .psn = 100,
				 .payload = 16,
				 .dma_len = 16 };
	uint64_t before[RXDP_V_MAX], after[RXDP_V_MAX];
	struct rxdp_qp_stats s0, s1;
	struct rxdp_qp_ctx c;
	uint8_t buf[PKT_MAX];
	uint32_t len, n = 0;

	(void)state;
	set_qp(QP_RC, RXDP_QPT_RC, RXDP_QPS_RTS, 0xffff, 0, 0);
	set_psn(QP_RC, 100, 100, 200, 0);
	s0 = qp_stats(QP_RC);
	len = xdp_rig_build(buf, &o);
	for (unsigned i = 0; i < 3; i++) {
		buf[forge_v4[i]] ^= 0x42;
		assert_int_equal(run_expect(buf, len, RXDP_V_DROP_BAD_SOURCE),
				 XDP_DROP_);
		buf[forge_v4[i]] ^= 0x42;
	}
	o.ipv6 = 1; /* the peer is an IPv4 address */
	expect(&o, RXDP_V_DROP_BAD_SOURCE, XDP_DROP_);
	o.ipv6 = 0;
	/* a response from elsewhere: the requester's window is not its */
	o.opcode = ROCE_RC_ACK;
	o.payload = 0;
	o.psn = 150;
	len = xdp_rig_build(buf, &o);
	buf[OFF_V4_SADDR] ^= 1;
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_BAD_SOURCE),
			 XDP_DROP_);
	s1 = qp_stats(QP_RC);
	assert_int_equal(s1.rx_drops - s0.rx_drops, 5);
	assert_int_equal(get_psn(QP_RC).epsn, 100);
	assert_int_equal(get_psn(QP_RC).flags, 0);

	/*
	 * A sweep of the PSN space, from another host: every 4095th PSN, and
	 * the ones around the expected PSN, from another address; the same
	 * from the peer's address with another MAC. Nothing moves.
	 */
	o.opcode = ROCE_RC_WRITE_ONLY;
	o.payload = 16;
	read_stats(before);
	for (uint32_t step = 0; step < ROCE_PSN_MOD; step += 0x1000 - 1) {
		for (int k = -1; k <= 1; k++, n++) {
			o.psn = psn_add(100, step + k);
			len = xdp_rig_build(buf, &o);
			buf[OFF_V4_SADDR + 3] = 66;
			assert_int_equal(run_raw(buf, len), XDP_DROP_);
		}
		o.psn = step;
		len = xdp_rig_build(buf, &o);
		memcpy(buf + OFF_SMAC, "\x02\x66\x66\x66\x66\x66", 6);
		assert_int_equal(run_raw(buf, len), XDP_DROP_);
		n++;
	}
	read_stats(after);
	assert_int_equal(after[RXDP_V_DROP_BAD_SOURCE] -
				 before[RXDP_V_DROP_BAD_SOURCE],
			 n);
	assert_int_equal(get_psn(QP_RC).epsn, 100);
	assert_int_equal(get_psn(QP_RC).flags, 0);
	/* and the peer's own is still the expected one */
	o.psn = 100;
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, 101);

	/* IPv6: every byte of both addresses counts */
	set_peer(QP_RC, 1);
	o.ipv6 = 1;
	o.psn = 101;
	len = xdp_rig_build(buf, &o);
	for (unsigned i = 0; i < 4; i++) {
		buf[forge_v6[i]] ^= 0x80;
		assert_int_equal(run_expect(buf, len, RXDP_V_DROP_BAD_SOURCE),
				 XDP_DROP_);
		buf[forge_v6[i]] ^= 0x80;
	}
	accepted(&o);
	set_peer(QP_RC, 0);
	o.ipv6 = 0;

	/* UC the same; without a MAC to check, only the addresses count */
	o.opcode = ROCE_UC_SEND_ONLY;
	o.qpn = QP_UC;
	len = xdp_rig_build(buf, &o);
	buf[OFF_SMAC + 2] ^= 0x10;
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_BAD_SOURCE),
			 XDP_DROP_);
	c = get_ctx(QP_UC);
	c.flags &= ~RXDP_QPF_PEER_MAC;
	put_ctx(&c);
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_NO_XSK), XDP_DROP_);
	buf[OFF_V4_DADDR] ^= 0x10;
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_BAD_SOURCE),
			 XDP_DROP_);
	/* a connected QP with no peer recorded takes nothing */
	memset(c.peer_ip, 0, sizeof(c.peer_ip) + sizeof(c.local_ip));
	put_ctx(&c);
	expect(&o, RXDP_V_DROP_BAD_SOURCE, XDP_DROP_);
	set_qp(QP_UC, RXDP_QPT_UC, RXDP_QPS_RTS, 0xffff, 0, 0);

	/* UD: anyone with the Q_Key */
	o = (struct xdp_rig_pkt){ .opcode = ROCE_UD_SEND_ONLY,
				  .qpn = QP_UD,
				  .qkey = QKEY,
				  .payload = 8 };
	len = xdp_rig_build(buf, &o);
	buf[OFF_V4_SADDR + 3] = 66;
	buf[OFF_SMAC + 5] = 66;
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_NO_XSK), XDP_DROP_);
}

/*
 * A burst of requests that are not the expected one (duplicates, and PSNs
 * ahead of it anywhere in the PSN space, RDMA Read requests of any length
 * among them) never moves the expected PSN; only the expected PSN does
 * (IBTA 9.7.4.1.1). Duplicates pass (the engine answers them), the first
 * request ahead passes (the engine NAKs it once, 9.7.5.1.3), the rest of
 * them are dropped.
 */
static void test_psn_burst(void **state)
{
	const uint32_t epsn = 0x800123;
	struct xdp_rig_pkt o = { .qpn = QP_RC, .payload = 0 };
	uint64_t before[RXDP_V_MAX], after[RXDP_V_MAX], seed = 42;
	uint32_t dup = 0, ahead = 0;
	uint8_t buf[PKT_MAX];

	(void)state;
	set_qp(QP_RC, RXDP_QPT_RC, RXDP_QPS_RTS, 0xffff, 0, 0);
	set_psn(QP_RC, epsn, 0, 0, 0);
	read_stats(before);
	for (int i = 0; i < 3000; i++) {
		uint64_t r = rnd(&seed);
		uint32_t len;

		o.psn = (uint32_t)(r >> 8) & (ROCE_PSN_MOD - 1);
		if (o.psn == epsn)
			o.psn = psn_add(epsn, 1);
		o.opcode = r & 1 ? ROCE_RC_READ_REQUEST : ROCE_RC_SEND_ONLY;
		o.dma_len = (uint32_t)(r >> 32);
		len = xdp_rig_build(buf, &o);
		if (psn_before(o.psn, epsn))
			dup++;
		else
			ahead++;
		assert_int_equal(run_raw(buf, len), XDP_DROP_);
		assert_int_equal(get_psn(QP_RC).epsn, epsn);
	}
	read_stats(after);
	assert_true(dup > 1000 && ahead > 1000);
	assert_int_equal(after[RXDP_V_DROP_NO_XSK] - before[RXDP_V_DROP_NO_XSK],
			 dup + 1);
	assert_int_equal(after[RXDP_V_DROP_PSN_OOS] -
				 before[RXDP_V_DROP_PSN_OOS],
			 ahead - 1);
	/* the expected one moves it, and clears the NAK flag */
	o.opcode = ROCE_RC_SEND_ONLY;
	o.psn = epsn;
	accepted(&o);
	assert_int_equal(get_psn(QP_RC).epsn, psn_add(epsn, 1));
	assert_int_equal(get_psn(QP_RC).flags, 0);
}

/*
 * Random frames (valid ones of every opcode with random bytes changed,
 * cut or grown, and plain noise), to QPs in random states and PSNs: the
 * program never answers anything but a named verdict. Each frame moves
 * exactly one counter by one; XDP_PASS is pass_not_roce, XDP_REDIRECT is
 * redirect, everything else is XDP_DROP under a drop_* name; no frame is
 * changed.
 */
static void test_random_frames(void **state)
{
	static const uint32_t qpns[] = { QP_RC, QP_UC, QP_UD, 0x0abcde,
					 RXDP_MCAST_QPN };
	uint64_t seed = 0xfeedbeef, seen[RXDP_V_MAX] = { 0 };
	uint8_t buf[PKT_MAX];
	int n = 20000, kinds = 0;

	(void)state;
	for (int i = 0; i < n; i++) {
		uint64_t r = rnd(&seed);
		struct xdp_rig_pkt o = { 0 };
		uint32_t len, v;
		char why[160];
		int action;

		if (r % 64 == 0) { /* another state, another PSN */
			set_qp(QP_RC, RXDP_QPT_RC, r >> 8 & 7, 0xffff, 0, 0);
			set_qp(QP_UC, RXDP_QPT_UC, r >> 11 & 7, 0xffff, 0, 0);
			set_psn(QP_RC, r >> 14 & 0x7, r >> 17 & 7, r >> 20 & 15,
				r >> 24 & 1);
		}
		/* noise, behind an IP ethertype now and then */
		if (r % 10 == 0) {
			len = ETH_HLEN + rnd(&seed) % 600;
			for (uint32_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd(&seed);
			if (r >> 8 & 1) {
				buf[12] = 0x08;
				buf[13] = 0;
				buf[14] = 0x45;
				buf[23] = 17;
				buf[36] = 0x12;
				buf[37] = 0xb7;
			}
		} else {
			do
				o.opcode = rnd(&seed) &
					   (r >> 8 & 1 ? 0xff : 0x1f);
			while (r >> 9 & 1 && !roce_opcode_flags(o.opcode));
			o.qpn = qpns[rnd(&seed) % 5];
			o.ipv6 = r >> 10 & 1;
			o.vlan = r >> 11 & 1 ? 0x8100 : 0;
			o.psn = rnd(&seed) % 16;
			o.qkey = r >> 12 & 1 ? QKEY : (uint32_t)rnd(&seed);
			o.payload = rnd(&seed) % 5 == 0 ? rnd(&seed) % 5000
							: rnd(&seed) % 64;
			o.pad = r >> 13 & 3;
			o.dma_len = (uint32_t)rnd(&seed);
			o.pkey = r >> 15 & 1 ? (uint16_t)rnd(&seed) : 0;
			o.udp_len_delta = r % 7 == 0 ? (int)(rnd(&seed) % 9) - 4
						     : 0;
			len = xdp_rig_build(buf, &o);
			for (int k = rnd(&seed) % 4; k > 0; k--) /* flips */
				buf[rnd(&seed) % len] ^= 1 << (rnd(&seed) % 8);
			if (r % 5 == 0) /* cut, or grown with junk */
				len = ETH_HLEN + rnd(&seed) % (len + 64);
		}
		if (len > PKT_MAX)
			len = PKT_MAX;
		if (xdp_rig_run(&rig, buf, len, &v, &action, why,
				sizeof(why))) {
			for (uint32_t k = 0; k < len && k < 80; k++)
				fprintf(stderr, "%02x%s", buf[k],
					k % 16 == 15 ? "\n" : " ");
			fail_msg("frame %d: %s", i, why);
		}
		seen[v]++;
	}
	for (uint32_t v = 0; v < RXDP_V_MAX; v++)
		kinds += seen[v] > 0;
	print_message("%d random frames: %d verdicts seen\n", n, kinds);
	/* every verdict these QPs can reach without a socket, bar redirect */
	assert_true(kinds >= RXDP_V_MAX - 2);
	setup(NULL);
}

/* RC responses must fall inside [una_psn, next_psn) */
static void test_response_window(void **state)
{
	struct xdp_rig_pkt o = { .opcode = ROCE_RC_ACK, .qpn = QP_RC };

	set_psn(QP_RC, 0, 0xfffffe, 0x000002, 0);
	o.psn = 0xfffffe;
	accepted(&o);
	o.psn = 0x000001;
	accepted(&o);
	o.psn = 0x000002;
	expect(&o, RXDP_V_DROP_PSN_STALE_RESP, XDP_DROP_);
	o.psn = 0xfffffd;
	expect(&o, RXDP_V_DROP_PSN_STALE_RESP, XDP_DROP_);
	o.opcode = ROCE_RC_READ_RESPONSE_MIDDLE;
	o.payload = 1024;
	o.psn = 0xffffff;
	accepted(&o);
	set_psn(QP_RC, 0, 5, 5, 0); /* nothing outstanding */
	o.psn = 5;
	expect(&o, RXDP_V_DROP_PSN_STALE_RESP, XDP_DROP_);
}

/*
 * A valid packet cut at every length: never an out-of-bounds read, always
 * exactly one counter. Cut inside Ethernet/IP/UDP it is not recognisable
 * as RoCE and goes to the kernel; cut after the UDP header it is a counted
 * truncation (the IP length says more than the frame holds). Cuts start
 * at 14 bytes: BPF_PROG_TEST_RUN refuses a frame shorter than Ethernet's
 * header.
 */
static void test_truncated(void **state)
{
	static const struct xdp_rig_pkt variants[] = {
		{ .opcode = ROCE_RC_WRITE_FIRST, .qpn = QP_RC, .payload = 40 },
		{ .opcode = ROCE_RC_ATOMIC_ACK, .qpn = QP_RC, .ipv6 = 1 },
		{ .opcode = ROCE_UD_SEND_ONLY_IMM,
		  .qpn = QP_UD,
		  .qkey = QKEY,
		  .vlan = 0x8100,
		  .payload = 8 },
	};
	uint8_t buf[PKT_MAX];

	for (unsigned v = 0; v < 3; v++) {
		const struct xdp_rig_pkt *o = &variants[v];
		uint32_t len = xdp_rig_build(buf, o);
		uint32_t l4 = 14 + (o->vlan ? 4 : 0) + (o->ipv6 ? 40 : 20);

		set_psn(QP_RC, 0, 0, 1, 0);
		set_peer(QP_RC, o->ipv6);
		for (uint32_t cut = ETH_HLEN; cut < len; cut++)
			run_expect(buf, cut,
				   cut < l4 + sizeof(struct udphdr)
					   ? RXDP_V_PASS_NOT_ROCE
					   : RXDP_V_DROP_TRUNCATED);
		accepted(o); /* and whole, it is fine */
	}
	set_peer(QP_RC, 0);
}

/*
 * A frame larger than a page (a 4096-byte path MTU on a jumbo interface):
 * BPF_PROG_TEST_RUN hands an xdp.frags program the part past the first
 * page as fragments. The program reads its headers from the first, checks
 * the lengths against the whole frame, and counts the whole frame's bytes.
 */
static void test_multi_buffer(void **state)
{
	const struct xdp_rig_pkt o = { .opcode = ROCE_RC_WRITE_ONLY,
				       .qpn = QP_RC,
				       .psn = 7,
				       .payload = 4096,
				       .dma_len = 4096 };
	uint8_t buf[PKT_MAX];
	uint32_t len = xdp_rig_build(buf, &o);
	struct rxdp_qp_stats before, after;

	(void)state;
	assert_true(len > 4096);
	if (linear) {
		/* the variant for kernels without multi-buffer XDP sees the
		 * first buffer alone (no such kernel attaches it where a
		 * frame can be larger): the IP length says more, a drop */
		assert_int_equal(run_expect(buf, len, RXDP_V_DROP_TRUNCATED),
				 XDP_DROP_);
		return;
	}
	set_psn(QP_RC, 7, 0, 0, 0);
	before = qp_stats(QP_RC);
	assert_int_equal(run_expect(buf, len, RXDP_V_DROP_NO_XSK), XDP_DROP_);
	after = qp_stats(QP_RC);
	assert_int_equal(after.rx_drops - before.rx_drops, 1);
	/* the IP length says more than the frame holds: cut in the fragment */
	set_psn(QP_RC, 7, 0, 0, 0);
	run_expect(buf, len - 100, RXDP_V_DROP_TRUNCATED);
	run_expect(buf, 4000, RXDP_V_DROP_TRUNCATED);
}

/*
 * A real accept: an AF_XDP socket bound to a veth in a network namespace of
 * our own sits in the owner's XSK slot, so the program returns XDP_REDIRECT
 * and counts the packet as redirected, also on the QP.
 */
static void test_redirect_to_xsk(void **state)
{
	struct xsk_socket_config xcfg = {
		.rx_size = 64,
		.tx_size = 64,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_umem *umem = NULL;
	struct xsk_socket *xsk = NULL;
	struct xdp_rig_pkt o = { .opcode = ROCE_UC_SEND_ONLY,
				 .qpn = QP_UC,
				 .payload = 16 };
	struct rxdp_qp_stats s0, s1;
	struct xdp_md md = { 0 };
	uint64_t before[RXDP_V_MAX], after[RXDP_V_MAX];
	uint8_t buf[PKT_MAX], out[PKT_MAX];
	uint32_t len = xdp_rig_build(buf, &o), key = 0;
	size_t area_len = 64 * 4096;
	void *area;
	int ifindex, fd, err;

	if (unshare(CLONE_NEWNET) ||
	    system("ip link add rxdpt0 type veth peer name rxdpt1 && "
		   "ip link set rxdpt0 up && ip link set rxdpt1 up")) {
		skip();
		return;
	}
	ifindex = if_nametoindex("rxdpt0");
	assert_true(ifindex > 0);
	area = mmap(NULL, area_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	assert_int_equal(
		xsk_umem__create(&umem, area, area_len, &fq, &cq, NULL), 0);
	err = xsk_socket__create(&xsk, "rxdpt0", 0, umem, &rx, &tx, &xcfg);
	if (err) {
		fprintf(stderr, "SKIP redirect: AF_XDP bind refused: %s\n",
			strerror(-err));
		xsk_umem__delete(umem);
		skip();
		return;
	}
	fd = xsk_socket__fd(xsk);
	key = 0 * RXDP_MAX_QUEUES + 0; /* owner slot 0, RX queue 0 */
	assert_int_equal(bpf_map__update_elem(skel->maps.xsks, &key,
					      sizeof(key), &fd, sizeof(fd), 0),
			 0);

	md.ingress_ifindex = ifindex;
	md.rx_queue_index = 0;
	md.data_end = len; /* the frame, in test_run's terms */
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf,
			    .data_size_in = len, .data_out = out,
			    .data_size_out = sizeof(out), .ctx_in = &md,
			    .ctx_size_in = sizeof(md), .repeat = 1);

		s0 = qp_stats(QP_UC);
		read_stats(before);
		assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
		read_stats(after);
		s1 = qp_stats(QP_UC);
		assert_int_equal(opts.retval, XDP_REDIRECT_);
	}
	assert_int_equal(after[RXDP_V_REDIRECT] - before[RXDP_V_REDIRECT], 1);
	assert_int_equal(after[RXDP_V_DROP_NO_XSK] - before[RXDP_V_DROP_NO_XSK],
			 0);
	assert_int_equal(s1.rx_packets - s0.rx_packets, 1);
	assert_int_equal(s1.rx_bytes - s0.rx_bytes, len);

	/* out of the slot again: the other tests see an owner without one */
	assert_int_equal(
		bpf_map__delete_elem(skel->maps.xsks, &key, sizeof(key), 0), 0);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(area, area_len);
}

/*
 * Multicast (IBTA 10.5.2.4): a UD datagram to QPN 0xFFFFFF goes to the
 * engine only for a group with members on this device (the mcast map the
 * engine keeps); one for any other group is dropped and counted, and no
 * other transport may use the multicast QPN.
 */
static void test_multicast(void **state)
{
	static const uint8_t grp_v4[16] = { [10] = 0xff, 0xff, 239, 1, 2, 3 };
	static const uint8_t other_v4[16] = { [10] = 0xff, 0xff, 239, 1, 2, 4 };
	static const uint8_t grp_v6[16] = { 0xff, 0x0e, [15] = 0x42 };
	struct rxdp_mcast_grp g = { .members = 1 };
	struct rxdp_mcast_key k;
	struct xdp_rig_pkt o = { .opcode = ROCE_UD_SEND_ONLY,
				 .qpn = RXDP_MCAST_QPN,
				 .payload = 32,
				 .qkey = QKEY };

	(void)state;
	/* no members anywhere: every multicast datagram is dropped */
	o.dgid = grp_v4;
	expect(&o, RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP_);
	o.ipv6 = 1;
	o.dgid = grp_v6;
	expect(&o, RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP_);

	/* members for 239.1.2.3 and ff0e::42: those pass (to the socket of
	 * rxdpd, which has none here), a neighbouring group does not */
	memcpy(k.gid, grp_v4, 16);
	assert_int_equal(bpf_map__update_elem(skel->maps.mcast, &k, sizeof(k),
					      &g, sizeof(g), 0),
			 0);
	memcpy(k.gid, grp_v6, 16);
	assert_int_equal(bpf_map__update_elem(skel->maps.mcast, &k, sizeof(k),
					      &g, sizeof(g), 0),
			 0);
	accepted(&o);
	o.ipv6 = 0;
	o.dgid = grp_v4;
	accepted(&o);
	o.vlan = 0x8100;
	accepted(&o);
	o.vlan = 0;
	o.opcode = ROCE_UD_SEND_ONLY_IMM;
	accepted(&o);
	o.pkey = 0x7123; /* a P_Key no QP here has */
	expect(&o, RXDP_V_DROP_BAD_PKEY, XDP_DROP_);
	o.pkey = 0;
	o.dgid = other_v4;
	o.opcode = ROCE_UD_SEND_ONLY;
	expect(&o, RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP_);
	/* the group's address as IPv6 is another group */
	o.ipv6 = 1;
	o.dgid = grp_v4;
	expect(&o, RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP_);

	/* only UD datagrams are multicast: an RC or UC packet to QPN 0xFFFFFF
	 * is refused even for a group with members */
	o.ipv6 = 0;
	o.opcode = ROCE_RC_SEND_ONLY;
	expect(&o, RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP_);
	o.opcode = ROCE_UC_SEND_ONLY;
	expect(&o, RXDP_V_DROP_OPCODE_QP_TYPE, XDP_DROP_);

	/* the last member gone: dropped again */
	o.opcode = ROCE_UD_SEND_ONLY;
	memcpy(k.gid, grp_v4, 16);
	assert_int_equal(
		bpf_map__delete_elem(skel->maps.mcast, &k, sizeof(k), 0), 0);
	expect(&o, RXDP_V_DROP_MCAST_NO_GROUP, XDP_DROP_);
	memcpy(k.gid, grp_v6, 16);
	assert_int_equal(
		bpf_map__delete_elem(skel->maps.mcast, &k, sizeof(k), 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_roce),
		cmocka_unit_test(test_every_opcode),
		cmocka_unit_test(test_bad_opcodes),
		cmocka_unit_test(test_l2_l3_variants),
		cmocka_unit_test(test_same_parser),
		cmocka_unit_test(test_unknown_qp_and_states),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_request_psn),
		cmocka_unit_test(test_request_psn_hold),
		cmocka_unit_test(test_rx_cpu),
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_psn_burst),
		cmocka_unit_test(test_random_frames),
		cmocka_unit_test(test_response_window),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_multi_buffer),
		cmocka_unit_test(test_redirect_to_xsk),
		cmocka_unit_test(test_multicast),
	};
	int ret;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
	if (xdp_rig_open(&rig)) {
		fprintf(stderr, "SKIP: cannot load the XDP program: %s\n",
			strerror(errno));
		return 77;
	}
	/* both variants, on the same frames: one classifier */
	ret = cmocka_run_group_tests_name("rxdp XDP classifier (rxdp_xdp)",
					  tests, setup, NULL);
	linear = true;
	xdp_rig_variant(&rig, true);
	ret |= cmocka_run_group_tests_name(
		"rxdp XDP classifier (rxdp_xdp_linear)", tests, setup, NULL);
	xdp_rig_close(&rig);
	return ret ? 1 : 0;
}
