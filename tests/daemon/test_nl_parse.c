// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdpd's rtnetlink decoding (userspace/daemon/nl_parse.c) on messages
 * recorded from a real kernel (rtnl_recorded.h), then on every truncation
 * and on corrupted copies of them. Built with ASan/UBSan.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "daemon/nl_parse.h"
#include "rtnl_recorded.h"

struct rec {
	const unsigned char *p;
	size_t len;
};

#define R(x)                 \
	{                    \
		x, sizeof(x) \
	}
static const struct rec links[] = { R(link_0), R(link_1), R(link_2) };
static const struct rec addrs[] = { R(addr_0), R(addr_1), R(addr_2),
				    R(addr_3) };
static const struct rec neighs[] = { R(neigh_0), R(neigh_1), R(neigh_2),
				     R(neigh_3), R(neigh_4) };
#define N(a) (sizeof(a) / sizeof(a[0]))

/* A heap copy of exactly len bytes, aligned, for ASan to guard */
static struct nlmsghdr *copy(const struct rec *r, size_t len)
{
	struct nlmsghdr *h = malloc(len < sizeof(*h) ? sizeof(*h) : len);

	memcpy(h, r->p, len);
	return h;
}

static int find_rxcap0(void)
{
	unsigned int i;
	int ifindex = 0;

	for (i = 0; i < N(links); i++) {
		struct nlmsghdr *h = copy(&links[i], links[i].len);
		struct nl_link_msg m;

		assert_int_equal(nl_parse_link(h, &m), 0);
		assert_true(m.ifindex > 0);
		if (!strcmp(m.ifname, "rxcap0"))
			ifindex = m.ifindex;
		free(h);
	}
	return ifindex;
}

static void test_link(void **state)
{
	unsigned int i;
	int seen = 0;
	static const __u8 mac[6] = { 2, 0, 0, 0, 0, 1 };

	(void)state;
	for (i = 0; i < N(links); i++) {
		struct nlmsghdr *h = copy(&links[i], links[i].len);
		struct nl_link_msg m;

		assert_int_equal(nl_parse_link(h, &m), 0);
		if (!strcmp(m.ifname, "lo")) {
			assert_int_equal(m.type, ARPHRD_LOOPBACK);
		} else if (!strcmp(m.ifname, "rxcap0")) {
			assert_int_equal(m.type, ARPHRD_ETHER);
			assert_true(m.has_mac);
			assert_memory_equal(m.mac, mac, 6);
			assert_int_equal(m.mtu, 1500);
			assert_true(m.flags & IFF_UP);
			/* allocated queues: a veth has one per possible CPU */
			assert_true(m.num_rx_queues >= 1);
			seen++;
		}
		free(h);
	}
	assert_int_equal(seen, 1);
}

static void test_addr(void **state)
{
	int ifindex = find_rxcap0(), v4 = 0, v6 = 0;
	unsigned int i;
	__u8 want4[4], want6[16];

	(void)state;
	inet_pton(AF_INET, "192.0.2.1", want4);
	inet_pton(AF_INET6, "2001:db8::1", want6);
	for (i = 0; i < N(addrs); i++) {
		struct nlmsghdr *h = copy(&addrs[i], addrs[i].len);
		struct nl_addr_msg m;

		assert_int_equal(nl_parse_addr(h, &m), 0);
		if (m.ifindex == ifindex && m.family == AF_INET) {
			assert_memory_equal(m.ip, want4, 4);
			assert_int_equal(m.prefixlen, 24);
			v4++;
		}
		if (m.ifindex == ifindex && m.family == AF_INET6 &&
		    !memcmp(m.ip, want6, 16)) {
			assert_int_equal(m.prefixlen, 64);
			v6++;
		}
		free(h);
	}
	assert_int_equal(v4, 1);
	assert_int_equal(v6, 1);
}

static void test_neigh(void **state)
{
	int ifindex = find_rxcap0(), v4 = 0, v6 = 0;
	unsigned int i;
	__u8 ip4[4], ip6[16];
	static const __u8 mac2[6] = { 2, 0, 0, 0, 0, 2 };
	static const __u8 mac3[6] = { 2, 0, 0, 0, 0, 3 };

	(void)state;
	inet_pton(AF_INET, "192.0.2.2", ip4);
	inet_pton(AF_INET6, "2001:db8::2", ip6);
	for (i = 0; i < N(neighs); i++) {
		struct nlmsghdr *h = copy(&neighs[i], neighs[i].len);
		struct nl_neigh_msg m;

		if (nl_parse_neigh(h, &m)) {
			free(h); /* e.g. an entry without NDA_DST */
			continue;
		}
		if (m.ifindex == ifindex && m.family == AF_INET &&
		    !memcmp(m.ip, ip4, 4)) {
			assert_true(m.has_mac);
			assert_memory_equal(m.mac, mac2, 6);
			assert_int_equal(m.state, NUD_PERMANENT);
			v4++;
		}
		if (m.ifindex == ifindex && m.family == AF_INET6 &&
		    !memcmp(m.ip, ip6, 16)) {
			assert_true(m.has_mac);
			assert_memory_equal(m.mac, mac3, 6);
			assert_true(m.state & (NUD_REACHABLE | NUD_STALE |
					       NUD_DELAY | NUD_PROBE));
			v6++;
		}
		free(h);
	}
	assert_int_equal(v4, 1);
	assert_int_equal(v6, 1);
}

/* A message of one kind is refused by the parsers of the others */
static void test_wrong_kind(void **state)
{
	struct nlmsghdr *h = copy(&addrs[1], addrs[1].len);
	struct nl_link_msg l;
	struct nl_neigh_msg n;

	(void)state;
	assert_int_equal(nl_parse_link(h, &l), -EINVAL);
	assert_int_equal(nl_parse_neigh(h, &n), -EINVAL);
	free(h);
}

typedef int (*parse_fn)(const struct nlmsghdr *, void *);

static void truncate_all(const struct rec *r, unsigned int n, parse_fn fn,
			 int *refused)
{
	unsigned int i;
	size_t len;
	union {
		struct nl_link_msg l;
		struct nl_addr_msg a;
		struct nl_neigh_msg n;
	} out;

	for (i = 0; i < n; i++) {
		for (len = sizeof(struct nlmsghdr); len < r[i].len; len++) {
			struct nlmsghdr *h = copy(&r[i], len);

			h->nlmsg_len = len;
			if (fn(h, &out))
				(*refused)++;
			free(h);
		}
	}
}

/* Every prefix of every message: parsed or refused, never out of bounds */
static void test_truncation(void **state)
{
	int refused = 0;

	(void)state;
	truncate_all(links, N(links), (parse_fn)nl_parse_link, &refused);
	truncate_all(addrs, N(addrs), (parse_fn)nl_parse_addr, &refused);
	truncate_all(neighs, N(neighs), (parse_fn)nl_parse_neigh, &refused);
	/* a cut before the address attributes must be refused */
	assert_true(refused > 100);
}

/* Random corruption of the recorded messages */
static void test_corruption(void **state)
{
	unsigned int seed = 4242, i, k;
	const struct rec *all[] = { &links[2], &addrs[1], &neighs[1] };

	(void)state;
	for (i = 0; i < 30000; i++) {
		const struct rec *r = all[i % 3];
		struct nlmsghdr *h = copy(r, r->len);
		union {
			struct nl_link_msg l;
			struct nl_addr_msg a;
			struct nl_neigh_msg n;
		} out;

		for (k = 0; k < 3; k++)
			((__u8 *)h)[16 + rand_r(&seed) % (r->len - 16)] =
				rand_r(&seed);
		if (rand_r(&seed) & 1)
			h->nlmsg_len = rand_r(&seed) % (r->len + 1);
		if (h->nlmsg_len > r->len)
			h->nlmsg_len = r->len;
		switch (i % 3) {
		case 0:
			nl_parse_link(h, &out.l);
			break;
		case 1:
			nl_parse_addr(h, &out.a);
			break;
		default:
			nl_parse_neigh(h, &out.n);
		}
		free(h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_neigh),
		cmocka_unit_test(test_wrong_kind),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_corruption),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
