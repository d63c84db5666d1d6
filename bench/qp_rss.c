// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-qp-rss: the resident memory of a process holding N RC queue pairs,
 * connected (RTS) to themselves, on an rxdp device; built against the
 * system's <infiniband/verbs.h>, run on rxdp's libibverbs.so.1.
 *
 *   rxdp-qp-rss -d DEVICE [-x GID_INDEX] N...   (e.g. 1 64 1024)
 *
 * GID_INDEX defaults to the port's first IPv4-mapped GID (::ffff:a.b.c.d,
 * not 169.254/16), else 1.
 *
 * Prints the baseline (device, PD, CQ, one 64 KiB MR), then for each N, in
 * increasing order, "qps=N rss_kb=R per_qp_kb=P" with P the growth over
 * the baseline divided by N.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static void die(const char *what, int err)
{
	fprintf(stderr, "rxdp-qp-rss: %s: %s\n", what, strerror(err));
	exit(1);
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* the first IPv4-mapped GID of port 1 that is not link-local, else 1 */
static int default_gid_index(struct ibv_context *ctx)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_port_attr pa;
	union ibv_gid gid;

	if (ibv_query_port(ctx, 1, &pa))
		return 1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid))
			continue;
		if (!memcmp(gid.raw, v4mapped, sizeof(v4mapped)) &&
		    !(gid.raw[12] == 169 && gid.raw[13] == 254) &&
		    (gid.raw[12] | gid.raw[13] | gid.raw[14] | gid.raw[15]))
			return i;
	}
	return 1;
}

static void to_rts(struct ibv_qp *qp, int gid_index)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .pkey_index = 0,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };
	int err;

	err = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (err)
		die("ibv_modify_qp to INIT", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num; /* loopback: itself */
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_query_gid(qp->context, 1, gid_index, &a.ah_attr.grh.dgid))
		die("ibv_query_gid", errno ? errno : EINVAL);
	err = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (err)
		die("ibv_modify_qp to RTR", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				    IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("ibv_modify_qp to RTS", err);
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp **qps;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int gid_index = -1, c, n = 0, max = 0;
	long base;
	void *buf;

	while ((c = getopt(argc, argv, "d:x:")) != -1) {
		if (c == 'd')
			dev_name = optarg;
		else if (c == 'x')
			gid_index = atoi(optarg);
		else
			goto usage;
	}
	if (!dev_name || optind >= argc)
		goto usage;
	for (int i = optind; i < argc; i++) {
		int v = atoi(argv[i]);

		if (v <= max) {
			fprintf(stderr, "rxdp-qp-rss: QP counts must be "
					"positive and increasing\n");
			return 1;
		}
		max = v;
	}
	list = ibv_get_device_list(NULL);
	if (!list)
		die("ibv_get_device_list", errno);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "rxdp-qp-rss: no device %s\n", dev_name);
		return 1;
	}
	if (gid_index < 0)
		gid_index = default_gid_index(ctx);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);
	buf = calloc(1, 65536);
	qps = calloc(max, sizeof(*qps));
	if (!buf || !qps)
		die("calloc", errno);
	mr = ibv_reg_mr(pd, buf, 65536,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	base = rss_kb();
	printf("baseline rss_kb=%ld\n", base);
	fflush(stdout);
	for (int i = optind; i < argc; i++) {
		int want = atoi(argv[i]);
		long r;

		for (; n < want; n++) {
			struct ibv_qp_init_attr ia = {
				.send_cq = cq,
				.recv_cq = cq,
				.cap = { .max_send_wr = 128,
					 .max_recv_wr = 128,
					 .max_send_sge = 1,
					 .max_recv_sge = 1,
					 .max_inline_data = 0 },
				.qp_type = IBV_QPT_RC,
			};

			qps[n] = ibv_create_qp(pd, &ia);
			if (!qps[n])
				die("ibv_create_qp", errno);
			to_rts(qps[n], gid_index);
		}
		r = rss_kb();
		printf("qps=%d rss_kb=%ld per_qp_kb=%.1f\n", n, r,
		       (double)(r - base) / n);
		fflush(stdout);
	}
	for (int i = 0; i < n; i++)
		if ((c = ibv_destroy_qp(qps[i])))
			die("ibv_destroy_qp", c);
	if ((c = ibv_dereg_mr(mr)))
		die("ibv_dereg_mr", c);
	if ((c = ibv_destroy_cq(cq)))
		die("ibv_destroy_cq", c);
	if ((c = ibv_dealloc_pd(pd)))
		die("ibv_dealloc_pd", c);
	if (ibv_close_device(ctx))
		die("ibv_close_device", errno);
	ibv_free_device_list(list);
	free(qps);
	free(buf);
	return 0;
usage:
	fprintf(stderr, "usage: rxdp-qp-rss -d DEVICE [-x GID_INDEX] N...\n");
	return 1;
}
