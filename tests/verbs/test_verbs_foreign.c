// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp's libibverbs.so.1 beside rdma-core's, without a kernel RDMA device:
 * a stand-in rdma-core (fake_rdmacore.c, loaded with RXDP_RDMA_CORE) lists
 * one device, and every verb on it, on its context or on an object made
 * from that context must reach the stand-in's function of the same name,
 * its value and its errno coming back unchanged. No rxdpd is reachable, so
 * the stand-in's device is the only one listed; objects without a context
 * (NULL) stay rxdp's.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fake_rdmacore.h"

/* IBVERBS_PRIVATE_34 (rdma-core's <infiniband/driver.h>): the type is its enum */
int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port_num,
		       unsigned int index, int *type);
/* rdma-core's <infiniband/driver.h> too; rxdp's are no-ops alone */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

static int failed;

static void expect(const char *fn, uint32_t got, int err)
{
	unsigned int m = fake_rdmacore_mark(fn);

	if (got != FAKE_RDMACORE_RET(m) || err != (int)FAKE_RDMACORE_ERRNO(m)) {
		fprintf(stderr,
			"FAIL: %s: got %#x errno %d, rdma-core's gives %#x "
			"errno %u\n",
			fn, got, err, FAKE_RDMACORE_RET(m),
			FAKE_RDMACORE_ERRNO(m));
		failed++;
	}
}

/* CALL must reach rdma-core's FN: its value, then its errno */
#define EXPECT(fn, call)                          \
	do {                                      \
		uint32_t v_;                      \
		errno = 0;                        \
		v_ = (uint32_t)(uintptr_t)(call); \
		expect(#fn, v_, errno);           \
	} while (0)
#define EXPECT_VOID(fn, call)                                           \
	do {                                                            \
		errno = 0;                                              \
		call;                                                   \
		expect(#fn, FAKE_RDMACORE_RET(fake_rdmacore_mark(#fn)), \
		       errno);                                          \
	} while (0)

static void fail(const char *what)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Every verb that takes the device */
static struct ibv_context *device_verbs(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	EXPECT(ibv_get_device_name, ibv_get_device_name(dev));
	EXPECT(ibv_get_device_guid, ibv_get_device_guid(dev));
	EXPECT(ibv_get_device_index, ibv_get_device_index(dev));
	ctx = ibv_open_device(dev);
	if (!ctx || ctx->device != dev)
		fail("ibv_open_device of rdma-core's device");
	return ctx;
}

/* Every verb that takes the context */
static void context_verbs(struct ibv_context *ctx)
{
	struct ibv_async_event ev;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	struct ibv_ah_attr aa;
	int gt;
	struct ibv_wc wc = { 0 };
	struct ibv_grh grh;
	union ibv_gid gid;
	uint8_t mac[6];
	uint16_t vid;
	__be16 pkey;

	EXPECT(ibv_query_device, ibv_query_device(ctx, &da));
	EXPECT(ibv_query_port, (ibv_query_port)(ctx, 1, (void *)&pa));
	EXPECT(ibv_query_gid, ibv_query_gid(ctx, 1, 0, &gid));
	EXPECT(_ibv_query_gid_ex,
	       _ibv_query_gid_ex(ctx, 1, 0, &ge, 0, sizeof(ge)));
	EXPECT(_ibv_query_gid_table,
	       _ibv_query_gid_table(ctx, &ge, 1, 0, sizeof(ge)));
	EXPECT(ibv_query_gid_type, ibv_query_gid_type(ctx, 1, 0, &gt));
	EXPECT(ibv_query_pkey, ibv_query_pkey(ctx, 1, 0, &pkey));
	EXPECT(ibv_get_pkey_index, ibv_get_pkey_index(ctx, 1, 0xffff));
	memset(&aa, 0, sizeof(aa));
	EXPECT(ibv_resolve_eth_l2_from_gid,
	       ibv_resolve_eth_l2_from_gid(ctx, &aa, mac, &vid));
	EXPECT(ibv_get_async_event, ibv_get_async_event(ctx, &ev));
	EXPECT(ibv_create_comp_channel, ibv_create_comp_channel(ctx));
	EXPECT(ibv_alloc_pd, ibv_alloc_pd(ctx));
	EXPECT(ibv_import_pd, ibv_import_pd(ctx, 1));
	EXPECT(ibv_import_dm, ibv_import_dm(ctx, 1));
	EXPECT(ibv_create_cq, ibv_create_cq(ctx, 1, NULL, NULL, 0));
	EXPECT(ibv_init_ah_from_wc,
	       ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &aa));
}

/* Every verb that takes an object made from the context */
static void object_verbs(struct ibv_context *ctx)
{
	struct ibv_comp_channel ch = { .context = ctx };
	struct ibv_pd pd = { .context = ctx };
	struct ibv_mr mr = { .context = ctx, .pd = &pd };
	struct ibv_cq cq = { .context = ctx };
	struct ibv_srq srq = { .context = ctx, .pd = &pd };
	struct ibv_qp qp = { .context = ctx, .pd = &pd };
	struct ibv_ah ah = { .context = ctx, .pd = &pd };
	struct ibv_dm dm = { .context = ctx };
	struct ibv_async_event ev = { .element.qp = &qp,
				      .event_type = IBV_EVENT_QP_FATAL };
	struct ibv_qp_init_attr qia = { 0 };
	struct ibv_srq_init_attr sia = { 0 };
	struct ibv_srq_attr sa = { 0 };
	struct ibv_qp_attr qa = { 0 };
	struct ibv_ah_attr aa = { 0 };
	struct ibv_ece ece = { 0 };
	struct ibv_wc wc = { 0 };
	struct ibv_cq *got_cq;
	struct ibv_grh grh;
	union ibv_gid gid;
	void *cq_ctx;
	char buf[64];

	EXPECT(ibv_get_cq_event, ibv_get_cq_event(&ch, &got_cq, &cq_ctx));
	EXPECT_VOID(ibv_ack_cq_events, ibv_ack_cq_events(&cq, 1));
	EXPECT_VOID(ibv_ack_async_event, ibv_ack_async_event(&ev));
	EXPECT(ibv_destroy_comp_channel, ibv_destroy_comp_channel(&ch));
	EXPECT(ibv_reg_mr, (ibv_reg_mr)(&pd, buf, sizeof(buf), 0));
	EXPECT(ibv_reg_mr_iova,
	       ibv_reg_mr_iova(&pd, buf, sizeof(buf), 4096, 0));
	EXPECT(ibv_reg_mr_iova2,
	       ibv_reg_mr_iova2(&pd, buf, sizeof(buf), 4096, 0));
	EXPECT(ibv_reg_dmabuf_mr,
	       ibv_reg_dmabuf_mr(&pd, 0, sizeof(buf), 0, 3, 0));
	EXPECT(ibv_rereg_mr,
	       ibv_rereg_mr(&mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0));
	EXPECT(ibv_import_mr, ibv_import_mr(&pd, 1));
	EXPECT_VOID(ibv_unimport_mr, ibv_unimport_mr(&mr));
	EXPECT(ibv_dereg_mr, ibv_dereg_mr(&mr));
	EXPECT_VOID(ibv_unimport_dm, ibv_unimport_dm(&dm));
	EXPECT(ibv_resize_cq, ibv_resize_cq(&cq, 2));
	EXPECT(ibv_destroy_cq, ibv_destroy_cq(&cq));
	EXPECT(ibv_create_srq, ibv_create_srq(&pd, &sia));
	EXPECT(ibv_modify_srq, ibv_modify_srq(&srq, &sa, 0));
	EXPECT(ibv_query_srq, ibv_query_srq(&srq, &sa));
	EXPECT(ibv_destroy_srq, ibv_destroy_srq(&srq));
	EXPECT(ibv_create_qp, ibv_create_qp(&pd, &qia));
	EXPECT(ibv_modify_qp, ibv_modify_qp(&qp, &qa, IBV_QP_STATE));
	EXPECT(ibv_query_qp, ibv_query_qp(&qp, &qa, IBV_QP_STATE, &qia));
	EXPECT(ibv_qp_to_qp_ex, ibv_qp_to_qp_ex(&qp));
	EXPECT(ibv_query_ece, ibv_query_ece(&qp, &ece));
	EXPECT(ibv_set_ece, ibv_set_ece(&qp, &ece));
	EXPECT(ibv_query_qp_data_in_order,
	       ibv_query_qp_data_in_order(&qp, IBV_WR_SEND, 0));
	memset(&gid, 0, sizeof(gid));
	EXPECT(ibv_attach_mcast, ibv_attach_mcast(&qp, &gid, 0));
	EXPECT(ibv_detach_mcast, ibv_detach_mcast(&qp, &gid, 0));
	EXPECT(ibv_destroy_qp, ibv_destroy_qp(&qp));
	EXPECT(ibv_create_ah, ibv_create_ah(&pd, &aa));
	EXPECT(ibv_create_ah_from_wc, ibv_create_ah_from_wc(&pd, &wc, &grh, 1));
	EXPECT(ibv_destroy_ah, ibv_destroy_ah(&ah));
	EXPECT_VOID(ibv_unimport_pd, ibv_unimport_pd(&pd));
	EXPECT(ibv_dealloc_pd, ibv_dealloc_pd(&pd));
}

/* The fake's path: fake-rdmacore/libibverbs.so.1 beside this program */
static void use_fake(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	char *slash;

	if (n <= 0)
		fail("readlink /proc/self/exe");
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash + 1, "fake-rdmacore/libibverbs.so.1");
	if (access(path, R_OK))
		fail(path);
	setenv("RXDP_RDMA_CORE", path, 1);
	/* no rxdpd: its devices must not hide what this tests */
	setenv("RXDP_SOCKET", "@rxdp-test-foreign-none", 1);
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = -1;

	use_fake();
	list = ibv_get_device_list(&n);
	if (!list || n != 1)
		fail("the device list is not rdma-core's one device");
	ctx = device_verbs(list[0]);
	/* rdma-core's devices' memory needs its fork ranges */
	EXPECT(ibv_dontfork_range, ibv_dontfork_range(&n, sizeof(n)));
	EXPECT(ibv_dofork_range, ibv_dofork_range(&n, sizeof(n)));
	context_verbs(ctx);
	object_verbs(ctx);
	/* what names no context stays rxdp's, which refuses it */
	if (ibv_dealloc_pd(NULL) != EINVAL || ibv_destroy_cq(NULL) != EINVAL) {
		fprintf(stderr, "FAIL: a NULL object did not stay rxdp's\n");
		failed++;
	}
	EXPECT(ibv_close_device, ibv_close_device(ctx));
	ibv_free_device_list(list);
	if (failed) {
		fprintf(stderr, "test_verbs_foreign: %d failed\n", failed);
		return 1;
	}
	printf("test_verbs_foreign: every verb on rdma-core's device, context "
	       "and objects reached rdma-core's, value and errno\n");
	return 0;
}
