// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-ecnmark's tc program (bench/ecnmark.bpf.c) on crafted frames with
 * BPF_PROG_TEST_RUN: no mark below kmin, every ECT packet marked from kmax,
 * the probability between them as the rule gives it, nothing but the ECN
 * bits changed (the IPv4 checksum still right), packets that are not ECT
 * never marked and counted, the virtual queue's growth, limit and drain.
 * The queue is set through its map and the rate is 0 (it never drains)
 * except where the drain is the subject, so no case depends on time.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ecnmark.h"
#include "ecnmark.skel.h"

#define FRAME_LEN 200

static struct ecnmark_bpf *load(uint64_t kmin, uint64_t kmax, double pmax,
				uint64_t limit, uint64_t rate_bps)
{
	struct ecnmark_bpf *skel = ecnmark_bpf__open();

	assert_non_null(skel);
	skel->rodata->kmin = kmin;
	skel->rodata->kmax = kmax;
	skel->rodata->pmax = (uint32_t)(pmax * 4294967295.0);
	skel->rodata->limit = limit;
	skel->rodata->rate_bps = rate_bps;
	assert_int_equal(ecnmark_bpf__load(skel), 0);
	return skel;
}

static void vq_set(struct ecnmark_bpf *skel, uint64_t bytes, uint64_t t_ns)
{
	struct ecnmark_vq q = { .bytes = bytes, .t_ns = t_ns };
	uint32_t zero = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.vq), &zero,
					     &q, 0),
			 0);
}

static struct ecnmark_vq vq_get(struct ecnmark_bpf *skel)
{
	struct ecnmark_vq q;
	uint32_t zero = 0;

	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.vq), &zero, &q), 0);
	return q;
}

static uint64_t stat(struct ecnmark_bpf *skel, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu], sum = 0;

	assert_int_equal(
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &key, v), 0);
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

static uint16_t csum16(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* An Ethernet/IPv4/UDP frame to port 4791 with the given TOS byte */
static size_t frame_v4(uint8_t *f, uint8_t tos)
{
	struct ethhdr *eth = (void *)f;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	memset(f, 0xab, FRAME_LEN);
	memset(eth->h_dest, 0x02, ETH_ALEN);
	memset(eth->h_source, 0x04, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tos;
	ip->tot_len = htons(FRAME_LEN - sizeof(*eth));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(0xc0a80001);
	ip->daddr = htonl(0xc0a80002);
	ip->check = htons(csum16(ip, sizeof(*ip)));
	udp->source = htons(49152);
	udp->dest = htons(4791);
	udp->len = htons(FRAME_LEN - sizeof(*eth) - sizeof(*ip));
	udp->check = 0;
	return FRAME_LEN;
}

/* The same over IPv6, the traffic class given, flow label 0xabcde */
static size_t frame_v6(uint8_t *f, uint8_t tclass)
{
	struct ethhdr *eth = (void *)f;
	struct ipv6hdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	memset(f, 0xcd, FRAME_LEN);
	memset(eth->h_dest, 0x02, ETH_ALEN);
	memset(eth->h_source, 0x04, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IPV6);
	memset(ip, 0, sizeof(*ip));
	*(uint32_t *)ip = htonl(6u << 28 | (uint32_t)tclass << 20 | 0xabcde);
	ip->payload_len = htons(FRAME_LEN - sizeof(*eth) - sizeof(*ip));
	ip->nexthdr = IPPROTO_UDP;
	ip->hop_limit = 64;
	ip->saddr.s6_addr[15] = 1;
	ip->daddr.s6_addr[15] = 2;
	udp->source = htons(49152);
	udp->dest = htons(4791);
	udp->len = ip->payload_len;
	return FRAME_LEN;
}

/* Run the program on in (len bytes) into out; its verdict must be OK */
static void run(struct ecnmark_bpf *skel, const uint8_t *in, size_t len,
		uint8_t *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = FRAME_LEN, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(
				 bpf_program__fd(skel->progs.ecnmark), &o),
			 0);
	assert_int_equal(o.retval, 0); /* TC_ACT_OK: dropping is the TBF's */
	assert_int_equal(o.data_size_out, len);
}

/* out differs from in only in the ECN bits and, over IPv4, the checksum,
 * which is right */
static void only_ecn_changed(const uint8_t *in, const uint8_t *out, bool v4)
{
	uint8_t a[FRAME_LEN], b[FRAME_LEN];
	const size_t tc_byte = ETH_HLEN + 1;

	memcpy(a, in, FRAME_LEN);
	memcpy(b, out, FRAME_LEN);
	if (v4) {
		assert_int_equal(csum16(out + ETH_HLEN, sizeof(struct iphdr)),
				 0);
		memset(a + ETH_HLEN + offsetof(struct iphdr, check), 0, 2);
		memset(b + ETH_HLEN + offsetof(struct iphdr, check), 0, 2);
		a[tc_byte] &= ~3;
		b[tc_byte] &= ~3;
	} else {
		a[tc_byte] &= ~0x30;
		b[tc_byte] &= ~0x30;
	}
	assert_memory_equal(a, b, FRAME_LEN);
}

static unsigned ecn_v4(const uint8_t *f)
{
	return f[ETH_HLEN + 1] & 3;
}

static unsigned ecn_v6(const uint8_t *f)
{
	return (f[ETH_HLEN + 1] >> 4) & 3;
}

static void test_thresholds(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 0);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len = frame_v4(in, 0x02); /* ECT(0) */

	/* below kmin, and at kmin (where the probability is 0): never */
	for (uint64_t q = 0; q <= 10000; q += 2500) {
		vq_set(skel, q, 0);
		run(skel, in, len, out);
		assert_memory_equal(in, out, len);
	}
	assert_int_equal(stat(skel, ECNMARK_MARKED), 0);
	assert_int_equal(stat(skel, ECNMARK_ECT), 5);
	/* from kmax: every time */
	for (uint64_t q = 20000; q <= 1000000; q += 245000) {
		vq_set(skel, q, 0);
		run(skel, in, len, out);
		assert_int_equal(ecn_v4(out), 3);
		only_ecn_changed(in, out, true);
	}
	assert_int_equal(stat(skel, ECNMARK_MARKED), 5);
	assert_int_equal(stat(skel, ECNMARK_NOT_ECT), 0);
	assert_int_equal(stat(skel, ECNMARK_ERRORS), 0);
	ecnmark_bpf__destroy(skel);
}

/* The share of n runs at queue q that come out marked */
static double share_marked(struct ecnmark_bpf *skel, uint64_t q, int n)
{
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len = frame_v4(in, 0x02);
	int marked = 0;

	for (int i = 0; i < n; i++) {
		vq_set(skel, q, 0);
		run(skel, in, len, out);
		marked += ecn_v4(out) == 3;
	}
	return (double)marked / n;
}

static void test_probability(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 0);
	double s;

	/* half way with pmax 1: a half (a binomial of 2000 draws: the bounds
	 * are more than six standard deviations out) */
	s = share_marked(skel, 15000, 2000);
	assert_true(s > 0.43 && s < 0.57);
	ecnmark_bpf__destroy(skel);
	/* just below kmax with pmax 0.2: a fifth */
	skel = load(10000, 20000, 0.2, 0, 0);
	s = share_marked(skel, 19999, 2000);
	assert_true(s > 0.15 && s < 0.25);
	/* a tenth of the way: a fiftieth */
	s = share_marked(skel, 11000, 2000);
	assert_true(s > 0.005 && s < 0.04);
	/* at kmax, whatever pmax: every one */
	assert_true(share_marked(skel, 20000, 200) == 1.0);
	ecnmark_bpf__destroy(skel);
}

static void test_not_ect(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 0);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len;

	/* not ECT (with a DSCP): never changed, counted */
	len = frame_v4(in, 0x68);
	vq_set(skel, 50000, 0);
	run(skel, in, len, out);
	assert_memory_equal(in, out, len);
	assert_int_equal(stat(skel, ECNMARK_NOT_ECT), 1);
	assert_int_equal(stat(skel, ECNMARK_ECT), 0);
	/* ECT(1) is marked too, the DSCP kept */
	len = frame_v4(in, 0x69);
	vq_set(skel, 50000, 0);
	run(skel, in, len, out);
	assert_int_equal(out[ETH_HLEN + 1], 0x6b);
	only_ecn_changed(in, out, true);
	/* CE stays CE */
	len = frame_v4(in, 0x6b);
	vq_set(skel, 50000, 0);
	run(skel, in, len, out);
	assert_memory_equal(in, out, len);
	assert_int_equal(stat(skel, ECNMARK_MARKED), 2);
	assert_int_equal(stat(skel, ECNMARK_ECT), 2);
	ecnmark_bpf__destroy(skel);
}

static void test_ipv6(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 0);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len;

	len = frame_v6(in, 0x6a); /* DSCP 26, ECT(0) */
	vq_set(skel, 5000, 0);
	run(skel, in, len, out);
	assert_memory_equal(in, out, len);
	vq_set(skel, 20000, 0);
	run(skel, in, len, out);
	assert_int_equal(ecn_v6(out), 3);
	only_ecn_changed(in, out, false);
	len = frame_v6(in, 0x68); /* not ECT */
	run(skel, in, len, out);
	assert_memory_equal(in, out, len);
	assert_int_equal(stat(skel, ECNMARK_MARKED), 1);
	assert_int_equal(stat(skel, ECNMARK_NOT_ECT), 1);
	assert_int_equal(stat(skel, ECNMARK_ECT), 2);
	ecnmark_bpf__destroy(skel);
}

/* Not IP (an ARP frame): counted as seen, and joins the queue, no more */
static void test_not_ip(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 0);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];

	frame_v4(in, 0x02);
	((struct ethhdr *)in)->h_proto = htons(ETH_P_ARP);
	vq_set(skel, 50000, 0);
	run(skel, in, 60, out);
	assert_memory_equal(in, out, 60);
	assert_int_equal(stat(skel, ECNMARK_PKTS), 1);
	assert_int_equal(stat(skel, ECNMARK_BYTES), 60);
	assert_int_equal(stat(skel, ECNMARK_ECT) + stat(skel, ECNMARK_MARKED) +
				 stat(skel, ECNMARK_NOT_ECT),
			 0);
	assert_int_equal(vq_get(skel).bytes, 50060);
	ecnmark_bpf__destroy(skel);
}

/* With no drain, each packet adds its length; past limit, nothing more */
static void test_queue_and_limit(void **state)
{
	struct ecnmark_bpf *skel =
		load(1 << 20, 2 << 20, 1.0, 5 * FRAME_LEN, 0);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len = frame_v4(in, 0x02);
	struct ecnmark_vq q;

	vq_set(skel, 0, 0);
	for (int i = 0; i < 8; i++)
		run(skel, in, len, out);
	q = vq_get(skel);
	assert_int_equal(q.bytes, 5 * FRAME_LEN);
	assert_int_equal(q.max_bytes, 5 * FRAME_LEN);
	assert_int_equal(q.dropped, 3);
	assert_int_equal(stat(skel, ECNMARK_PKTS), 8);
	ecnmark_bpf__destroy(skel);
}

/* The drain at the port's rate: 8 Gbit/s is a byte a nanosecond. A last
 * packet long ago (t_ns 0: more than the second the drain counts at most)
 * left nothing queued; one "after now" (a clock that went back) drains
 * nothing. */
static void test_drain(void **state)
{
	struct ecnmark_bpf *skel = load(10000, 20000, 1.0, 0, 8000000000ULL);
	uint8_t in[FRAME_LEN], out[FRAME_LEN];
	size_t len = frame_v4(in, 0x02);

	vq_set(skel, 1000000000, 0);
	run(skel, in, len, out);
	assert_int_equal(vq_get(skel).bytes, len);
	assert_int_equal(ecn_v4(out), 2); /* the queue ahead of it was empty */
	vq_set(skel, 1000000, UINT64_MAX);
	run(skel, in, len, out);
	assert_int_equal(vq_get(skel).bytes, 1000000 + len);
	assert_int_equal(ecn_v4(out), 3);
	ecnmark_bpf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_probability),
		cmocka_unit_test(test_not_ect),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_not_ip),
		cmocka_unit_test(test_queue_and_limit),
		cmocka_unit_test(test_drain),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
