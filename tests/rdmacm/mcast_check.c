// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mcast_check DEV [GID]: ibv_attach_mcast / ibv_detach_mcast on an rxdp
 * device against the real rxdpd, built against the system's
 * <infiniband/verbs.h> and run on build/lib's libibverbs.so.1:
 * - the device says it has multicast (max_mcast_grp, max_mcast_qp_attach,
 *   max_total_mcast_qp_attach nonzero and consistent);
 * - errnos as the kernel's ib_attach_mcast() and Soft-RoCE give them:
 *   EINVAL for an RC QP, a GID that is not multicast (unicast IPv4-mapped,
 *   link-local IPv6), a detach of a group the QP is not in; attaching
 *   twice is no error; detach after attach works once;
 * - one QP cannot attach to groups without bound: ENOMEM before 1000;
 * With GID: attach a UD QP to it, print "attached", wait for a line on
 * stdin, then destroy the QP without a detach (the test checks the
 * interface's membership meanwhile and after).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...)                                       \
	do {                                                   \
		if (!(cond)) {                                 \
			fprintf(stderr, "FAIL: " __VA_ARGS__); \
			fprintf(stderr, "\n");                 \
			failures++;                            \
		}                                              \
	} while (0)

static union ibv_gid gid_of(const char *s)
{
	union ibv_gid g = { 0 };
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		g.raw[10] = g.raw[11] = 0xff;
		memcpy(g.raw + 12, &a4, 4);
	} else if (inet_pton(AF_INET6, s, g.raw) != 1) {
		fprintf(stderr, "not an address: %s\n", s);
		exit(2);
	}
	return g;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp) {
		perror("ibv_create_qp");
		exit(1);
	}
	return qp;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *ud, *rc;
	union ibv_gid g4 = gid_of("239.1.2.3"), g6 = gid_of("ff0e::42");
	union ibv_gid uc4 = gid_of("10.0.0.1"), ll6 = gid_of("fe80::1");
	int n, i, ret;

	if (argc < 2) {
		fprintf(stderr, "usage: mcast_check DEV [GID]\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		perror("pd/cq");
		return 1;
	}
	ud = make_qp(pd, cq, IBV_QPT_UD);

	if (argc > 2) {
		union ibv_gid g = gid_of(argv[2]);
		char line[16];

		ret = ibv_attach_mcast(ud, &g, 0);
		if (ret) {
			fprintf(stderr, "attach %s: %s\n", argv[2],
				strerror(ret));
			return 1;
		}
		printf("attached\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			/* stdin closed: go on */
		}
		ibv_destroy_qp(ud); /* no detach: the QP's groups go with it */
		printf("destroyed\n");
		return 0;
	}

	CHECK(!ibv_query_device(ctx, &da), "ibv_query_device");
	CHECK(da.max_mcast_grp > 0, "max_mcast_grp %d", da.max_mcast_grp);
	CHECK(da.max_mcast_qp_attach > 0, "max_mcast_qp_attach %d",
	      da.max_mcast_qp_attach);
	CHECK(da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	      "max_total_mcast_qp_attach %d", da.max_total_mcast_qp_attach);
	printf("max_mcast_grp %d max_mcast_qp_attach %d "
	       "max_total_mcast_qp_attach %d\n",
	       da.max_mcast_grp, da.max_mcast_qp_attach,
	       da.max_total_mcast_qp_attach);

	rc = make_qp(pd, cq, IBV_QPT_RC);
	ret = ibv_attach_mcast(rc, &g4, 0);
	CHECK(ret == EINVAL, "attach an RC QP: %d, want EINVAL", ret);
	ret = ibv_attach_mcast(ud, &uc4, 0);
	CHECK(ret == EINVAL, "attach a unicast GID: %d, want EINVAL", ret);
	ret = ibv_attach_mcast(ud, &ll6, 0);
	CHECK(ret == EINVAL, "attach a link-local GID: %d, want EINVAL", ret);
	ret = ibv_detach_mcast(ud, &g4, 0);
	CHECK(ret == EINVAL, "detach before attach: %d, want EINVAL", ret);
	ret = ibv_detach_mcast(rc, &g4, 0);
	CHECK(ret == EINVAL, "detach an RC QP: %d, want EINVAL", ret);

	ret = ibv_attach_mcast(ud, &g4, 0);
	CHECK(ret == 0, "attach 239.1.2.3: %d", ret);
	ret = ibv_attach_mcast(ud, &g4, 0xc001); /* the LID means nothing */
	CHECK(ret == 0, "attach 239.1.2.3 again: %d", ret);
	ret = ibv_attach_mcast(ud, &g6, 0);
	CHECK(ret == 0, "attach ff0e::42: %d", ret);
	ret = ibv_detach_mcast(ud, &g4, 0);
	CHECK(ret == 0, "detach 239.1.2.3: %d", ret);
	ret = ibv_detach_mcast(ud, &g4, 0);
	CHECK(ret == EINVAL, "detach 239.1.2.3 again: %d, want EINVAL", ret);
	ret = ibv_detach_mcast(ud, &g6, 0);
	CHECK(ret == 0, "detach ff0e::42: %d", ret);

	/* one QP, ever more groups: refused (ENOMEM) well before 1000 */
	for (i = 0; i < 1000; i++) {
		union ibv_gid g = g6;

		g.raw[14] = (uint8_t)(i >> 8);
		g.raw[15] = (uint8_t)i;
		ret = ibv_attach_mcast(ud, &g, 0);
		if (ret)
			break;
	}
	CHECK(ret == ENOMEM, "attach %d groups: %d, want ENOMEM", i + 1, ret);
	CHECK(i > 0 && i < 1000, "one QP attached to %d groups", i);
	printf("one QP: %d groups, then %s\n", i, strerror(ret));

	CHECK(!ibv_destroy_qp(rc), "destroy RC");
	CHECK(!ibv_destroy_qp(ud), "destroy UD (attached)");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	if (failures)
		return 1;
	printf("PASS\n");
	return 0;
}
