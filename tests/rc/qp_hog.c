// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * qp_hog DEVICE [MAX]: a verbs program (built against the system's
 * <infiniband/verbs.h>, run on build/lib's libibverbs) that creates RC QPs
 * on one PD and CQ until the device refuses one (or MAX are made), prints
 * "qps N errno E" (E 0 if none was refused), then holds them until its
 * standard input closes. For tests/rc/hca.sh: the per-user limits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1,
						.max_recv_wr = 1,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	long max = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	long n = 0;
	int err = 0;
	char c;

	if (argc < 2) {
		fprintf(stderr, "usage: qp_hog DEVICE [MAX]\n");
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "qp_hog: cannot open %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "qp_hog: no PD or CQ: %s\n", strerror(errno));
		return 1;
	}
	ia.send_cq = ia.recv_cq = cq;
	for (; n < max; n++) {
		if (!ibv_create_qp(pd, &ia)) {
			err = errno;
			break;
		}
	}
	printf("qps %ld errno %d\n", n, err);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
