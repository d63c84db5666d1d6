// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control protocol decoder on hostile input: truncation at every length,
 * lying lengths, oversized messages, bad attributes, wrong version, random
 * bytes. Built with ASan/UBSan (tests/daemon/build.mk): an out-of-bounds
 * read is a failure, not luck. Every input is copied into a heap buffer of
 * exactly its length so that ASan sees one byte too far.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>

#include "common/ctl.h"

static __u64 buf[RXDP_CTL_MSG_MAX / 8 + 8];

static int decode_exact(const void *p, size_t len, struct rxdp_ctl_msg *m)
{
	void *copy = malloc(len ? len : 1);
	int ret;

	memcpy(copy, p, len);
	ret = rxdp_ctl_decode(copy, len, m, 0);
	/* everything the decoder indexed must lie inside the copy */
	if (!ret) {
		int i;

		for (i = 0; i < RXDP_CTL_A_MAX; i++) {
			const char *a = (const char *)m->tb[i];

			if (!a)
				continue;
			assert_true(a >= (char *)copy &&
				    a + m->tb[i]->nla_len <=
					    (char *)copy + len);
		}
	}
	free(copy);
	return ret;
}

/* A well-formed MODIFY_QP request */
static struct nlmsghdr *good_request(void)
{
	struct nlmsghdr *nlh;
	struct rxdp_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = 1;
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_MODIFY_QP, 0, 7, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_IFINDEX, 3);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_QPN, 0x4002);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_ATTR_MASK, 0x39);
	mnl_attr_put(nlh, RXDP_CTL_A_QP_ATTR, sizeof(attr), &attr);
	mnl_attr_put_strz(nlh, RXDP_CTL_A_MSG, "hello");
	return nlh;
}

static void test_good(void **state)
{
	struct nlmsghdr *nlh = good_request();
	struct rxdp_ctl_msg m;

	(void)state;
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), 0);
	assert_non_null(m.tb[RXDP_CTL_A_QP_ATTR]);
	assert_int_equal(mnl_attr_get_u32(m.tb[RXDP_CTL_A_QPN]), 0x4002);
	assert_null(m.tb[RXDP_CTL_A_AH]);
}

/* Is len the end of the header or of an attribute (padding optional)? */
static int attr_boundary(const struct nlmsghdr *nlh, __u32 len)
{
	size_t off = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct rxdp_ctl_hdr));

	if (len == off)
		return 1;
	while (off < nlh->nlmsg_len) {
		const struct nlattr *a =
			(const struct nlattr *)((const char *)nlh + off);

		/* the last attribute's padding may be cut short */
		if (len >= off + a->nla_len &&
		    len <= off + MNL_ALIGN(a->nla_len))
			return 1;
		off += MNL_ALIGN(a->nla_len);
	}
	return 0;
}

/* Cut at every length, with the header's length left as it was (never
 * accepted) and with it lowered to match (accepted exactly when the cut
 * falls between attributes: a shorter but whole message). */
static void test_truncated(void **state)
{
	struct nlmsghdr *nlh = good_request();
	__u32 full = nlh->nlmsg_len, len;
	struct rxdp_ctl_msg m;
	int accepted = 0;

	(void)state;
	for (len = 0; len < full; len++) {
		int ret;

		assert_int_not_equal(decode_exact(nlh, len, &m), 0);
		nlh->nlmsg_len = len;
		ret = decode_exact(nlh, len, &m);
		nlh->nlmsg_len = full;
		assert_int_equal(ret == 0, attr_boundary(nlh, len));
		accepted += ret == 0;
	}
	/* the header alone and after each of the first 4 attributes */
	assert_true(accepted >= 5);
}

static void test_lying_lengths(void **state)
{
	struct nlmsghdr *nlh = good_request();
	struct rxdp_ctl_msg m;
	struct nlattr *first;
	size_t hdr = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct rxdp_ctl_hdr));
	__u16 lies[] = { 0, 1, 3, 4, 7, 0xffff, 200, 5000 };
	unsigned int i;

	(void)state;
	/* nlmsg_len bigger and smaller than what arrived */
	nlh->nlmsg_len += 4;
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len - 4, &m), -EBADMSG);
	nlh = good_request();
	nlh->nlmsg_len = 0xffffffff;
	assert_int_equal(decode_exact(nlh, 64, &m), -EBADMSG);

	/* the first attribute lies about its length */
	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		nlh = good_request();
		first = (struct nlattr *)((char *)nlh + hdr);
		first->nla_len = lies[i];
		assert_int_not_equal(decode_exact(nlh, nlh->nlmsg_len, &m), 0);
	}
	/* an attribute of the wrong size for its type */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put_u16(nlh, RXDP_CTL_A_QPN, 5);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_MODIFY_QP, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_QP_ATTR, sizeof(struct rxdp_qp_attr) - 4,
		     buf + 1000);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* trailing bytes shorter than an attribute header */
	nlh = good_request();
	nlh->nlmsg_len += 2;
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
}

static void test_bad_attrs(void **state)
{
	struct nlmsghdr *nlh;
	struct rxdp_ctl_msg m;
	struct nlattr *a;

	(void)state;
	/* unknown attribute type, type 0, type past the end */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_MAX, 5);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put_u32(nlh, 0, 5);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put_u32(nlh, 0x7fff, 5);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* repeated attribute */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_QPN, 5);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_QPN, 6);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* string without its NUL */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_MSG, 4, "abcd");
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* empty string attribute (no room for the NUL) */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_MSG, 0, NULL);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* counters: not a multiple of 8, too many */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_STATS, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_COUNTERS, 12, buf + 1000);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_STATS, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_COUNTERS, 8 * (RXDP_CTL_MAX_COUNTERS + 1),
		     buf + 1000);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* nested flag bits in the type are not a way around the policy */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	a = mnl_attr_nest_start(nlh, RXDP_CTL_A_QPN);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_QPN, 1);
	mnl_attr_nest_end(nlh, a);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	/* lists: repeated list attributes only when allowed */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_LIST_QPS, 0, 1, 0);
	mnl_attr_put(nlh, RXDP_CTL_A_QP_INFO, sizeof(struct rxdp_qp_info),
		     buf + 1000);
	mnl_attr_put(nlh, RXDP_CTL_A_QP_INFO, sizeof(struct rxdp_qp_info),
		     buf + 1000);
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EBADMSG);
	assert_int_equal(rxdp_ctl_decode(buf, nlh->nlmsg_len, &m, 1), 0);
}

static void test_version_and_size(void **state)
{
	struct nlmsghdr *nlh = good_request();
	struct rxdp_ctl_hdr *h = mnl_nlmsg_get_payload(nlh);
	struct rxdp_ctl_msg m;

	(void)state;
	h->version = RXDP_CTL_VERSION + 1;
	assert_int_equal(decode_exact(nlh, nlh->nlmsg_len, &m), -EPROTO);
	/* oversized: longer than the protocol allows, however consistent */
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_QUERY_QP, 0, 1, 0);
	nlh->nlmsg_len = RXDP_CTL_MSG_MAX + 8;
	assert_int_equal(rxdp_ctl_decode(buf, RXDP_CTL_MSG_MAX + 8, &m, 0),
			 -EBADMSG);
	assert_int_equal(rxdp_ctl_decode(NULL, 100, &m, 0), -EBADMSG);
}

/* Random bytes, and random corruption of a good message */
static void test_random(void **state)
{
	unsigned int seed = 12345, i, j;
	struct rxdp_ctl_msg m;
	int ok = 0;

	(void)state;
	for (i = 0; i < 200000; i++) {
		size_t len = rand_r(&seed) % 400;
		__u8 *p = (__u8 *)buf;

		if (i & 1) {
			struct nlmsghdr *nlh = good_request();
			unsigned int flips = 1 + rand_r(&seed) % 4;

			len = nlh->nlmsg_len;
			for (j = 0; j < flips; j++)
				p[rand_r(&seed) % len] = rand_r(&seed);
		} else {
			for (j = 0; j < len; j++)
				p[j] = rand_r(&seed);
			if (len >= 16 && (rand_r(&seed) & 1)) {
				/* consistent header: get past the first check */
				((struct nlmsghdr *)p)->nlmsg_len = len;
				((struct rxdp_ctl_hdr *)(p + 16))->version =
					RXDP_CTL_VERSION;
			}
		}
		if (decode_exact(buf, len, &m) == 0)
			ok++;
	}
	/* some corrupted messages stay valid (a flipped value byte) */
	assert_true(ok > 0);
}

/* The transport: a message with too many fds or too long is refused */
static void test_recvmsg_limits(void **state)
{
	int sv[2], fds[RXDP_CTL_MAX_FDS], nfds, i;
	struct nlmsghdr *nlh = good_request();
	int three[3];
	__u64 small[8];
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	for (i = 0; i < 3; i++)
		three[i] = dup(0);
	assert_int_equal(rxdp_ctl_sendmsg(sv[0], nlh, three, 3), 0);
	n = rxdp_ctl_recvmsg(sv[1], buf, sizeof(buf), fds, &nfds, 1);
	assert_int_equal(n, -EMSGSIZE);
	assert_int_equal(nfds, 0);
	assert_int_equal(rxdp_ctl_sendmsg(sv[0], nlh, NULL, 0), 0);
	n = rxdp_ctl_recvmsg(sv[1], small, sizeof(small), fds, &nfds, 1);
	assert_int_equal(n, -EMSGSIZE);
	assert_int_equal(rxdp_ctl_sendmsg(sv[0], nlh, three, 1), 0);
	n = rxdp_ctl_recvmsg(sv[1], buf, sizeof(buf), fds, &nfds, 1);
	assert_int_equal(n, nlh->nlmsg_len);
	assert_int_equal(nfds, 1);
	close(fds[0]);
	for (i = 0; i < 3; i++)
		close(three[i]);
	close(sv[0]);
	close(sv[1]);
}

static void test_sockaddr(void **state)
{
	struct sockaddr_un sun;
	unsigned int len;
	char longp[200];

	(void)state;
	assert_int_equal(rxdp_ctl_sockaddr(NULL, &sun, &len), 0);
	assert_int_equal(sun.sun_path[0], 0);
	assert_memory_equal(sun.sun_path + 1, RXDP_CTL_ABSTRACT_NAME,
			    strlen(RXDP_CTL_ABSTRACT_NAME));
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 1 +
				      strlen(RXDP_CTL_ABSTRACT_NAME));
	assert_int_equal(rxdp_ctl_sockaddr("/tmp/x.sock", &sun, &len), 0);
	assert_string_equal(sun.sun_path, "/tmp/x.sock");
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	assert_int_equal(rxdp_ctl_sockaddr(longp, &sun, &len), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_lying_lengths),
		cmocka_unit_test(test_bad_attrs),
		cmocka_unit_test(test_version_and_size),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_recvmsg_limits),
		cmocka_unit_test(test_sockaddr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
