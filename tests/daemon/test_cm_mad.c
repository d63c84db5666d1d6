// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * CM MADs (userspace/daemon/cm_mad.c): fields where IBTA's tables put
 * them, checked against a REQ that Wireshark's dissector decoded (the
 * values below are what tshark printed for it), every message type
 * encoded and decoded back, the RDMA IP CM service ID and header, and
 * hostile input (built with AddressSanitizer).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/cm_mad.h"

/* The CM data (after the MAD header) of a REQ rxdp sent, as captured */
static const char req_hex[] =
	"da117d79000000000000000001061c062c397dfffe102fd00000000000000000"
	"ec0002010000000100000090bf42f797ffff37f0ffffffff0000000000000000"
	"0000ffffc61207a500000000000000000000ffffc61307a50000000300400080"
	"0000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000409018000000000000000000000000c61207a5"
	"000000000000000000000000c61307a500000000000000000000000000000000"
	"0000000000000000";

static void hex_to(const char *h, __u8 *out, size_t max)
{
	for (size_t i = 0; h[2 * i] && i < max; i++) {
		unsigned int v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (__u8)v;
	}
}

static void mad_of(const char *data_hex, __u16 attr, __u8 *mad)
{
	memset(mad, 0, CM_MAD_LEN);
	mad[0] = 1;
	mad[1] = 0x07;
	mad[2] = 2;
	mad[3] = 0x03;
	mad[8] = 0x19; /* TID 0x19a0bb6900000001 */
	mad[9] = 0xa0;
	mad[10] = 0xbb;
	mad[11] = 0x69;
	mad[15] = 0x01;
	mad[16] = (__u8)(attr >> 8);
	mad[17] = (__u8)attr;
	hex_to(data_hex, mad + CM_MAD_HDR_LEN, CM_MAD_LEN - CM_MAD_HDR_LEN);
}

/* What tshark -V printed for that frame */
static void test_req_as_wireshark_reads_it(void **state)
{
	__u8 mad[CM_MAD_LEN];
	struct cm_msg m;
	struct cm_ip_hdr h;
	__u16 ps, port;

	(void)state;
	mad_of(req_hex, CM_ATTR_REQ, mad);
	assert_int_equal(cm_mad_decode(mad, sizeof(mad), &m), 0);
	assert_int_equal(m.attr_id, CM_ATTR_REQ);
	assert_true(m.tid == 0x19a0bb6900000001ULL);
	assert_int_equal(m.req.local_comm_id, 0xda117d79);
	assert_true(m.req.service_id == 0x0000000001061c06ULL);
	assert_true(m.req.local_ca_guid == 0x2c397dfffe102fd0ULL);
	assert_int_equal(m.req.local_qkey, 0);
	assert_int_equal(m.req.local_qpn, 0xec0002);
	assert_int_equal(m.req.responder_resources, 1);
	assert_int_equal(m.req.initiator_depth, 1);
	assert_int_equal(m.req.remote_cm_response_timeout, 0x12);
	assert_int_equal(m.req.transport, 0);
	assert_int_equal(m.req.flow_control, 0);
	assert_int_equal(m.req.starting_psn, 0xbf42f7);
	assert_int_equal(m.req.local_cm_response_timeout, 0x12);
	assert_int_equal(m.req.retry_count, 7);
	assert_int_equal(m.req.pkey, 0xffff);
	assert_int_equal(m.req.path_mtu, 3);
	assert_int_equal(m.req.rnr_retry_count, 7);
	assert_int_equal(m.req.max_cm_retries, 15);
	assert_int_equal(m.req.srq, 0);
	assert_int_equal(m.req.primary.local_lid, 65535);
	assert_int_equal(m.req.primary.remote_lid, 65535);
	assert_int_equal(m.req.primary.local_gid[15], 0xa5);
	assert_int_equal(m.req.primary.local_gid[12], 198);
	assert_int_equal(m.req.primary.remote_gid[13], 0x13);
	assert_int_equal(m.req.primary.hop_limit, 0x40);
	assert_int_equal(m.req.primary.local_ack_timeout, 0x10);
	assert_int_equal(m.req.primary.packet_rate, 3);
	/* the Annex A11 header Wireshark showed as "IP CM Private Data" */
	assert_int_equal(cm_ip_hdr_decode(m.req.private_data, &h), 0);
	assert_int_equal(h.ip_version, 4);
	assert_int_equal(h.src_port, 0x9018);
	assert_int_equal(h.src_ip[12], 198);
	assert_int_equal(h.src_ip[13], 18);
	assert_int_equal(h.dst_ip[13], 19);
	assert_int_equal(cm_ip_service_parse(m.req.service_id, &ps, &port), 0);
	assert_int_equal(ps, 0x0106); /* RDMA_PS_TCP */
	assert_int_equal(port, 7174); /* rping's */
}

/* Encoding gives back the captured bytes exactly */
static void test_req_encodes_to_the_capture(void **state)
{
	__u8 mad[CM_MAD_LEN], out[CM_MAD_LEN];
	struct cm_msg m;

	(void)state;
	mad_of(req_hex, CM_ATTR_REQ, mad);
	assert_int_equal(cm_mad_decode(mad, sizeof(mad), &m), 0);
	cm_mad_encode(&m, out);
	assert_memory_equal(mad, out, CM_MAD_LEN);
}

/* Each field alone, at the byte IBTA's tables give (offsets after the
 * 24-byte MAD header) */
static void test_field_offsets(void **state)
{
	__u8 b[CM_MAD_LEN];
	struct cm_msg m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_REP;
	m.rep.starting_psn = 0xabcdef;
	m.rep.vendor_id = 0x123456;
	m.rep.rnr_retry_count = 5;
	m.rep.srq = 1;
	m.rep.flow_control = 1;
	cm_mad_encode(&m, b);
	/* Table 110: starting PSN bytes 20-22, vendor ID 15/19/23,
	 * end-to-end flow control byte 26 bit 7, RNR retry count byte 27
	 * bits 0-2 (from the MSB), SRQ bit 3 */
	assert_int_equal(b[24 + 20], 0xab);
	assert_int_equal(b[24 + 22], 0xef);
	assert_int_equal(b[24 + 15], 0x12);
	assert_int_equal(b[24 + 19], 0x34);
	assert_int_equal(b[24 + 23], 0x56);
	assert_int_equal(b[24 + 26], 0x01);
	assert_int_equal(b[24 + 27], 0xb0);

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_REJ;
	m.rej.reason = 28;
	m.rej.msg_rejected = CM_MSG_REP;
	m.rej.private_data[0] = 0x5a;
	cm_mad_encode(&m, b);
	/* Table 108: message rejected byte 8 bits 0-1, reason bytes 10-11,
	 * private data from byte 84 */
	assert_int_equal(b[24 + 8], 0x40);
	assert_int_equal(b[24 + 11], 28);
	assert_int_equal(b[24 + 84], 0x5a);

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_SIDR_REP;
	m.sidr_rep.qpn = 0x010203;
	m.sidr_rep.qkey = 0x01234567;
	m.sidr_rep.vendor_id = 0xa1b2c3;
	cm_mad_encode(&m, b);
	/* Table 120: QPN bytes 8-10, vendor ID 6-7 and 11, Q_Key 20-23 */
	assert_int_equal(b[24 + 8], 0x01);
	assert_int_equal(b[24 + 10], 0x03);
	assert_int_equal(b[24 + 6], 0xa1);
	assert_int_equal(b[24 + 7], 0xb2);
	assert_int_equal(b[24 + 11], 0xc3);
	assert_int_equal(b[24 + 20], 0x01);
	assert_int_equal(b[24 + 23], 0x67);

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_DREQ;
	m.dreq.remote_qpn = 0xfedcba;
	cm_mad_encode(&m, b);
	assert_int_equal(b[24 + 8], 0xfe); /* Table 112: bytes 8-10 */
	assert_int_equal(b[24 + 10], 0xba);
	/* the common header */
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 0x07);
	assert_int_equal(b[2], 2);
	assert_int_equal(b[3], 0x03);
	assert_int_equal(b[17], CM_ATTR_DREQ);
}

/* Every message with every field set survives a round trip */
static void test_roundtrip(void **state)
{
	static const __u16 attrs[] = { CM_ATTR_REQ,	CM_ATTR_MRA,
				       CM_ATTR_REJ,	CM_ATTR_REP,
				       CM_ATTR_RTU,	CM_ATTR_DREQ,
				       CM_ATTR_DREP,	CM_ATTR_SIDR_REQ,
				       CM_ATTR_SIDR_REP };
	__u8 b[CM_MAD_LEN], b2[CM_MAD_LEN];

	(void)state;
	srand(7);
	for (int round = 0; round < 200; round++) {
		for (size_t k = 0; k < sizeof(attrs) / sizeof(attrs[0]); k++) {
			struct cm_msg m, d;

			/* any bytes: decoding then encoding is the identity on
			 * every field the message has */
			for (int i = 0; i < CM_MAD_LEN; i++)
				b[i] = (__u8)rand();
			b[0] = 1;
			b[1] = 0x07;
			b[2] = 2;
			b[3] = 0x03;
			b[16] = 0;
			b[17] = (__u8)attrs[k];
			assert_int_equal(cm_mad_decode(b, sizeof(b), &m), 0);
			cm_mad_encode(&m, b2);
			assert_int_equal(cm_mad_decode(b2, sizeof(b2), &d), 0);
			assert_memory_equal(&m, &d, sizeof(m));
		}
	}
}

static void test_bad_input(void **state)
{
	__u8 b[CM_MAD_LEN] = { 1, 0x07, 2, 0x03 };
	struct cm_msg m;

	(void)state;
	b[17] = CM_ATTR_REQ;
	assert_int_equal(cm_mad_decode(b, CM_MAD_LEN - 1, &m), -EBADMSG);
	b[1] = 0x04; /* SA */
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EBADMSG);
	b[1] = 0x07;
	b[0] = 2;
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EBADMSG);
	b[0] = 1;
	b[2] = 1;
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EPROTONOSUPPORT);
	b[2] = 2;
	b[3] = CM_METHOD_GET;
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EOPNOTSUPP);
	b[3] = CM_METHOD_SEND;
	b[17] = CM_ATTR_LAP; /* not taken */
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EOPNOTSUPP);
	b[16] = 0xff;
	assert_int_equal(cm_mad_decode(b, sizeof(b), &m), -EOPNOTSUPP);
	/* random garbage never reads past the buffer (ASan) */
	for (int i = 0; i < 10000; i++) {
		__u8 *g = malloc(CM_MAD_LEN);

		for (int j = 0; j < CM_MAD_LEN; j++)
			g[j] = (__u8)rand();
		if (i & 1) {
			g[0] = 1;
			g[1] = 0x07;
			g[2] = 2;
			g[3] = 0x03;
			g[16] = 0;
			g[17] = (__u8)(0x10 + i % 12);
		}
		cm_mad_decode(g, CM_MAD_LEN, &m);
		free(g);
	}
}

static void test_ip_cm(void **state)
{
	struct cm_ip_hdr h = { .ip_version = 6, .src_port = 4791 }, d;
	__u8 pd[CM_IP_HDR_LEN];
	__u16 ps, port;

	(void)state;
	assert_true(cm_ip_service_id(0x0106, 7174) == 0x0000000001061c06ULL);
	assert_true(cm_ip_service_id(0x0111, 1) == 0x0000000001110001ULL);
	assert_true(cm_ip_service_id(0x013f, 2) == 0x00000000013f0002ULL);
	assert_int_equal(cm_ip_service_parse(0x0000000001110001ULL, &ps, &port),
			 0);
	assert_int_equal(ps, 0x0111);
	assert_int_equal(port, 1);
	/* not an IP CM service ID */
	assert_int_equal(cm_ip_service_parse(0x1000000001061c06ULL, &ps, &port),
			 -EINVAL);
	for (int i = 0; i < 16; i++) {
		h.src_ip[i] = (__u8)i;
		h.dst_ip[i] = (__u8)(0xf0 | i);
	}
	cm_ip_hdr_encode(&h, pd);
	assert_int_equal(pd[0], 0);
	assert_int_equal(pd[1], 0x60);
	assert_int_equal(pd[2], 4791 >> 8);
	assert_int_equal(pd[3], 4791 & 0xff);
	assert_int_equal(cm_ip_hdr_decode(pd, &d), 0);
	assert_memory_equal(&h, &d, sizeof(h));
	pd[1] = 0x50; /* IP version 5 */
	assert_int_equal(cm_ip_hdr_decode(pd, &d), -EBADMSG);
	pd[1] = 0x40;
	pd[0] = 0x10; /* version 1.0 */
	assert_int_equal(cm_ip_hdr_decode(pd, &d), -EBADMSG);
}

static void test_times(void **state)
{
	(void)state;
	assert_int_equal(cm_time_ms(0), 1);
	assert_int_equal(cm_time_ms(14), 67);
	assert_int_equal(cm_time_ms(18), 1073);
	assert_int_equal(cm_time_ms(20), 4294);
	assert_int_equal(cm_time_ms(24), 68719);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_as_wireshark_reads_it),
		cmocka_unit_test(test_req_encodes_to_the_capture),
		cmocka_unit_test(test_field_offsets),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_ip_cm),
		cmocka_unit_test(test_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
