// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The verbs library's shell, black box: compiled against the system's
 * <infiniband/verbs.h>, linked to build/lib/libibverbs.so.1, and talking to
 * a fake rxdpd (a thread of this test serving the control protocol on an
 * abstract socket named after the pid). No root, no real daemon.
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>

#include "common/ctl.h"
#include "fake_rxdpd.h"

/* rdma-core private symbols (IBVERBS_PRIVATE_34) the shell exports */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
int ibv_cmd_create_qp(void);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

static int setup_daemon(void **state)
{
	fake_rxdpd_start();
	return 0;
}

static int teardown_daemon(void **state)
{
	fake_rxdpd_stop();
	return 0;
}

/* --- helpers ------------------------------------------------------------- */

static struct ibv_device *find_dev(struct ibv_device **list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static struct ibv_context *open_a(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_device *d;

	assert_non_null(list);
	d = find_dev(list, "rxdp_veth7");
	assert_non_null(d);
	ctx = ibv_open_device(d);
	assert_non_null(ctx);
	ibv_free_device_list(list);
	return ctx;
}

static int fd_valid(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

static int fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* --- tests without a daemon --------------------------------------------- */

static void test_our_library_loaded(void **state)
{
	Dl_info info;

	assert_true(dladdr((void *)ibv_get_device_list, &info));
	assert_non_null(strstr(info.dli_fname, "build/lib/libibverbs.so.1"));
	/* a private symbol that only a full IBVERBS_PRIVATE_34 set has */
	assert_int_equal(ibv_cmd_create_qp(), EOPNOTSUPP);
}

static void test_no_daemon_empty_list(void **state)
{
	struct ibv_device **list;
	char name[80];
	int n = -1;

	snprintf(name, sizeof(name), "@rxdp-test-verbs-nobody-%d", getpid());
	setenv(RXDP_CTL_ENV, name, 1);
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 0);
	assert_null(list[0]);
	ibv_free_device_list(list);
	/* NULL num_devices is allowed */
	list = ibv_get_device_list(NULL);
	assert_non_null(list);
	assert_null(list[0]);
	ibv_free_device_list(list);
}

static void test_strings(void **state)
{
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE");
	assert_string_equal(ibv_port_state_str(IBV_PORT_DOWN), "PORT_DOWN");
	assert_string_equal(ibv_port_state_str((enum ibv_port_state)99),
			    "invalid state");
	assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	assert_string_equal(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
			    "transport retry counter exceeded");
	assert_string_equal(ibv_wc_status_str((enum ibv_wc_status)1000),
			    "unknown");
	assert_string_equal(ibv_node_type_str(IBV_NODE_CA),
			    "InfiniBand channel adapter");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE),
			    "port active");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type) - 5),
			    "unknown");
}

static void test_rates_and_fork(void **state)
{
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	assert_int_equal(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_25_GBPS), -1);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_25_GBPS), 25781);
	assert_int_equal(mbps_to_ibv_rate(103125), IBV_RATE_100_GBPS);
	assert_int_equal(mbps_to_ibv_rate(12345), IBV_RATE_MAX);
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}

static void test_unsupported_calls(void **state)
{
	errno = 0;
	assert_null(ibv_import_device(3));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(ibv_reg_dmabuf_mr(NULL, 0, 4096, 0, 3, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_query_ece(NULL, NULL), EOPNOTSUPP);
	assert_int_equal(ibv_set_ece(NULL, NULL), EOPNOTSUPP);
}

static void test_sysfs_passthrough(void **state)
{
	char buf[64];

	assert_string_equal(ibv_get_sysfs_path(), "/sys");
	assert_int_equal(ibv_read_sysfs_file("/proc/sys/kernel", "ostype", buf,
					     sizeof(buf)),
			 5);
	assert_string_equal(buf, "Linux");
	assert_int_equal(
		ibv_read_sysfs_file("/nonexistent", "x", buf, sizeof(buf)), -1);
}

/* --- tests with the fake daemon ---------------------------------------- */

static void test_device_list(void **state)
{
	struct ibv_device **list;
	struct ibv_device *a, *b;
	int n = -1;

	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 3);
	assert_null(list[3]);
	a = find_dev(list, "rxdp_veth7");
	b = find_dev(list, "rxdp_veth9");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->transport_type, IBV_TRANSPORT_IB);
	assert_int_equal(a->node_type, IBV_NODE_CA);
	assert_string_equal(a->ibdev_path, "/sys/class/infiniband/rxdp_veth7");
	assert_true(ibv_get_device_guid(a) ==
		    htobe64(0x0200000000000000ULL | IFINDEX_A));
	assert_int_equal(ibv_get_device_index(a), IFINDEX_A);
	assert_int_equal(ibv_get_device_index(b), IFINDEX_B);
	ibv_free_device_list(list);

	/* The same device object comes back on the next listing */
	list = ibv_get_device_list(NULL);
	assert_ptr_equal(find_dev(list, "rxdp_veth7"), a);
	ibv_free_device_list(list);
}

static void test_open_context_layout(void **state)
{
	struct ibv_context *ctx = open_a();
	struct verbs_context *vctx = verbs_get_ctx(ctx);

	assert_ptr_equal(ctx->abi_compat, __VERBS_ABI_IS_EXTENDED);
	assert_non_null(vctx);
	assert_int_equal(vctx->sz, sizeof(*vctx));
	assert_non_null(verbs_get_ctx_op(ctx, query_port));
	assert_non_null(verbs_get_ctx_op(ctx, query_device_ex));
	assert_non_null(ctx->ops.post_send);
	assert_non_null(ctx->ops.post_recv);
	assert_non_null(ctx->ops.poll_cq);
	assert_non_null(ctx->ops.req_notify_cq);
	assert_non_null(ctx->ops.post_srq_recv);
	assert_string_equal(ibv_get_device_name(ctx->device), "rxdp_veth7");
	assert_true(fd_valid(ctx->cmd_fd));
	assert_true(fd_valid(ctx->async_fd));
	assert_false(fd_readable(ctx->async_fd));
	assert_int_equal(ctx->num_comp_vectors, 1);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_query_device(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_device_attr_ex ex;
	struct ibv_device_attr a;

	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(ibv_query_device(ctx, &a), 0);
	/* not Mellanox, not EFA: perftest takes the classic post path */
	assert_true(a.vendor_id != 0x02c9 && a.vendor_id != 0x119f &&
		    a.vendor_id != 0x1d0f);
	assert_true(a.node_guid == htobe64(0x0200000000000000ULL | IFINDEX_A));
	assert_true(a.max_qp_rd_atom >= 1);
	assert_true(a.max_qp_init_rd_atom >= 1);
	assert_int_equal(a.atomic_cap, IBV_ATOMIC_HCA);
	assert_int_equal(a.max_pkeys, 1);
	assert_int_equal(a.phys_port_cnt, 1);
	assert_int_equal(a.max_qp, 16384);
	assert_true(a.max_qp_wr >= 1024 && a.max_sge >= 1 && a.max_cqe >= 1024);
	assert_true(a.max_mr_size > 0 && a.max_cq > 0 && a.max_mr > 0);
	assert_true(strlen(a.fw_ver) > 0);

	/* The static inline goes through verbs_context.query_device_ex */
	memset(&ex, 0xa5, sizeof(ex));
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &ex), 0);
	assert_int_equal(ex.orig_attr.vendor_id, a.vendor_id);
	assert_int_equal(ex.comp_mask, 0);
	assert_int_equal(ex.phys_port_cnt_ex, 1);
	/* on-demand paging, implicit too; every operation, no XRC */
	assert_int_equal(ex.odp_caps.general_caps,
			 IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	assert_int_equal(ex.odp_caps.per_transport_caps.rc_odp_caps, 0x3f);
	assert_int_equal(ex.odp_caps.per_transport_caps.uc_odp_caps,
			 IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
				 IBV_ODP_SUPPORT_WRITE |
				 IBV_ODP_SUPPORT_SRQ_RECV);
	assert_int_equal(ex.odp_caps.per_transport_caps.ud_odp_caps,
			 IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
				 IBV_ODP_SUPPORT_SRQ_RECV);
	assert_int_equal(ex.xrc_odp_caps, 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_query_port(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_port_attr pa;

	memset(&pa, 0xa5, sizeof(pa));
	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(pa.active_mtu, IBV_MTU_1024);
	assert_int_equal(pa.max_mtu, IBV_MTU_4096);
	assert_int_equal(pa.gid_tbl_len, RXDP_GID_TBL_LEN);
	assert_int_equal(pa.pkey_tbl_len, 1);
	assert_int_equal(pa.phys_state, 5);
	/* 10 Gb/s Ethernet is reported as 1X FDR10 */
	assert_int_equal(pa.active_width, 1);
	assert_int_equal(pa.active_speed, 8);
	assert_int_equal(pa.port_cap_flags2, 0);
	/* one port only */
	assert_int_equal(ibv_query_port(ctx, 2, &pa), EINVAL);
	assert_int_equal(ibv_query_port(ctx, 0, &pa), EINVAL);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_port_down(void **state)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_port_attr pa;

	ctx = ibv_open_device(find_dev(list, "rxdp_veth9"));
	assert_non_null(ctx);
	fake_port_state_b = IBV_PORT_DOWN;
	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	assert_int_equal(pa.phys_state, 3);
	/* state is asked afresh on every query */
	fake_port_state_b = IBV_PORT_ACTIVE;
	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	fake_port_state_b = IBV_PORT_DOWN;
	assert_int_equal(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
}

/* A device rxdpd no longer serves cannot be opened: its context is rxdpd's */
static void test_device_gone(void **state)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	errno = 0;
	ctx = ibv_open_device(find_dev(list, "rxdp_veth11"));
	assert_null(ctx);
	assert_int_equal(errno, ENODEV);
	ibv_free_device_list(list);
}

static void test_gids(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_gid_entry e, table[RXDP_GID_TBL_LEN];
	union ibv_gid gid;
	__u8 want[16];
	int type = -1;

	assert_int_equal(ibv_query_gid(ctx, 1, 0, &gid), 0);
	fake_gid_of(0, want);
	assert_memory_equal(gid.raw, want, 16);
	/* an empty slot inside the table: zeros, success */
	memset(&gid, 0xff, sizeof(gid));
	assert_int_equal(ibv_query_gid(ctx, 1, 5, &gid), 0);
	memset(want, 0, 16);
	assert_memory_equal(gid.raw, want, 16);
	/* past the end, or on another port */
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 1, RXDP_GID_TBL_LEN, &gid), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_query_gid(ctx, 2, 0, &gid), -1);

	assert_int_equal(ibv_query_gid_ex(ctx, 1, 1, &e, 0), 0);
	fake_gid_of(1, want);
	assert_memory_equal(e.gid.raw, want, 16);
	assert_int_equal(e.gid_index, 1);
	assert_int_equal(e.port_num, 1);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(e.ndev_ifindex, IFINDEX_A);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 5, &e, 0), ENODATA);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL);

	assert_int_equal(ibv_query_gid_table(ctx, table, RXDP_GID_TBL_LEN, 0),
			 2);
	assert_int_equal(table[0].gid_index, 0);
	assert_int_equal(table[1].gid_index, 1);

	/* ibv_devinfo's private call: RoCE v2 is sysfs type 1 */
	assert_int_equal(ibv_query_gid_type(ctx, 1, 0, &type), 0);
	assert_int_equal(type, 1);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_pkeys(void **state)
{
	struct ibv_context *ctx = open_a();
	__be16 pkey = 0;

	assert_int_equal(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	assert_true(pkey == htobe16(0xffff));
	assert_int_equal(ibv_query_pkey(ctx, 1, 1, &pkey), -1);
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htobe16(0x1234)), -1);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_pd_and_channel(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd1, *pd2;
	struct ibv_cq cq;

	pd1 = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	assert_non_null(pd1);
	assert_non_null(pd2);
	assert_ptr_equal(pd1->context, ctx);
	assert_true(pd1->handle != pd2->handle);
	assert_int_equal(ibv_dealloc_pd(pd1), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);

	ch = ibv_create_comp_channel(ctx);
	assert_non_null(ch);
	assert_ptr_equal(ch->context, ctx);
	assert_true(fd_valid(ch->fd));
	assert_false(fd_readable(ch->fd));
	/* a CQ on the channel holds it: destroying it now is refused */
	memset(&cq, 0, sizeof(cq));
	verbs_init_cq(&cq, ctx, ch, &cq);
	assert_int_equal(ch->refcnt, 1);
	assert_int_equal(ibv_destroy_comp_channel(ch), EBUSY);
	ch->refcnt--;
	/* acks are counted on the CQ */
	ibv_ack_cq_events(&cq, 3);
	assert_int_equal(cq.comp_events_completed, 3);
	/* non-blocking channel with nothing queued: EAGAIN, not a hang */
	{
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		assert_int_equal(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
		errno = 0;
		assert_int_equal(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
		assert_int_equal(errno, EAGAIN);
	}
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_async_fd_nonblocking(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_async_event ev;

	assert_int_equal(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	assert_int_equal(ibv_get_async_event(ctx, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_resolve_and_sysfs(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_ah_attr ah;
	uint8_t mac[6];
	uint16_t vid = 0;
	char buf[64];

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	fake_gid_of(1, ah.grh.dgid.raw);
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &ah, mac, &vid), 0);
	assert_memory_equal(mac, fake_dmac, 6);
	assert_int_equal(vid, 0xffff);
	ah.is_global = 0;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &ah, mac, &vid),
			 EINVAL);

	/* ibv_devinfo reads board_id from ibdev_path */
	assert_true(ibv_read_sysfs_file(ctx->device->ibdev_path, "board_id",
					buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "RXDP_veth7");
	assert_true(ibv_read_sysfs_file(ctx->device->ibdev_path,
					"ports/1/gid_attrs/types/0", buf,
					sizeof(buf)) > 0);
	assert_string_equal(buf, "RoCE v2");
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path,
					     "no_such_attr", buf, sizeof(buf)),
			 -1);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/*
 * The fake daemon has no data path (it refuses MR, CQ and QP requests):
 * every data-path create must fail cleanly with an errno, and bad
 * arguments must be refused before the daemon is even asked.
 */
static void test_dataplane_without_datapath(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[4096];
	struct ibv_qp_init_attr qia;
	struct ibv_port_attr pa;

	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	assert_true(errno != 0);
	errno = 0;
	assert_null(ibv_reg_mr_iova2(pd, buf, sizeof(buf), 0, 0x100003));
	assert_true(errno != 0);
	errno = 0;
	assert_null(ibv_create_cq(ctx, 16, NULL, NULL, 0));
	assert_true(errno != 0);

	/* argument checks come first, with EINVAL */
	errno = 0;
	assert_null(ibv_create_cq(ctx, 0, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_create_cq(ctx, 16, NULL, NULL, 1));
	assert_int_equal(errno, EINVAL);
	memset(&qia, 0, sizeof(qia));
	qia.qp_type = IBV_QPT_RC;
	errno = 0;
	assert_null(ibv_create_qp(pd, &qia)); /* no CQs */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_alloc_mw(pd, IBV_MW_TYPE_1));
	assert_int_equal(errno, EOPNOTSUPP);
	/* verbs_context ops rxdp leaves empty: the inlines say EOPNOTSUPP */
	{
		struct ibv_cq_init_attr_ex cqa = { .cqe = 16 };

		errno = 0;
		assert_null(ibv_create_cq_ex(ctx, &cqa));
		assert_int_equal(errno, EOPNOTSUPP);
	}

	/* the context is still fine for the control path */
	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/*
 * Run an unmodified Debian tool on our library (LD_LIBRARY_PATH = the
 * directory this test loaded libibverbs.so.1 from) against the fake daemon;
 * its output (stdout and stderr) into out. Returns the wait status.
 */
static int run_tool(const char *cmdline, char *out, size_t outlen)
{
	char libdir[512], cmd[1024];
	size_t n = 0;
	Dl_info info;
	FILE *f;
	char *slash;

	assert_true(dladdr((void *)ibv_get_device_list, &info));
	snprintf(libdir, sizeof(libdir), "%s", info.dli_fname);
	slash = strrchr(libdir, '/');
	assert_non_null(slash);
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' timeout 20 %s 2>&1",
		 libdir, cmdline);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (n + 1 < outlen) {
		size_t r = fread(out + n, 1, outlen - 1 - n, f);

		if (!r)
			break;
		n += r;
	}
	out[n] = '\0';
	return pclose(f);
}

static void test_ibv_devices_tool(void **state)
{
	static char out[8192];
	int st = run_tool("ibv_devices", out, sizeof(out));

	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(strstr(out, "rxdp_veth7"));
	assert_non_null(strstr(out, "rxdp_veth9"));
	/* the node GUID, as ibv_devices formats it (host order hex) */
	assert_non_null(strstr(out, "0200000000000007"));
}

static void test_ibv_devinfo_tool(void **state)
{
	static char out[65536];
	int st = run_tool("ibv_devinfo -v -d rxdp_veth7", out, sizeof(out));

	if (getenv("RXDP_TEST_SHOW"))
		fprintf(stderr, "%s\n", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(strstr(out, "hca_id:\trxdp_veth7"));
	assert_non_null(strstr(out, "transport:\t\t\tInfiniBand (0)"));
	assert_non_null(strstr(out, "PORT_ACTIVE (4)"));
	assert_non_null(strstr(out, "link_layer:\t\tEthernet"));
	assert_non_null(strstr(out, "active_mtu:\t\t1024 (3)"));
	assert_non_null(strstr(out, "board_id:\t\t\tRXDP_veth7"));
	assert_non_null(strstr(out, "GID[  0]:\t\tfe80::ff:fe00:7, RoCE v2"));
	assert_non_null(strstr(out, "GID[  1]:\t\t::ffff:10.0.0.1, RoCE v2"));
	/* empty slots are not printed */
	assert_null(strstr(out, "GID[  2]"));
}

/*
 * perftest on a device without a data path: server and client (TCP on
 * loopback) get through device, port and GID queries to their first
 * data-path call and must stop there with their own error and a non-zero
 * exit, not a signal or a hang. (The real rxdpd turns this into a run:
 * tests/rc/perftest.sh.)
 */
static void test_perftest_fails_cleanly(void **state)
{
	static char out[65536];
	char cmd[512];
	int port = 20000 + getpid() % 20000, st;

	snprintf(cmd, sizeof(cmd),
		 "sh -c 'ib_write_bw -d rxdp_veth7 -n 5 -p %d & s=$!; "
		 "sleep 1; ib_write_bw -d rxdp_veth7 -n 5 -p %d 127.0.0.1; "
		 "c=$?; wait $s; echo server=$? client=$c'",
		 port, port);
	st = run_tool(cmd, out, sizeof(out));
	if (getenv("RXDP_TEST_SHOW"))
		fprintf(stderr, "%s\n", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* 1: perftest's own failure exit; 124 would be a hang, 128+ a signal */
	assert_non_null(strstr(out, "server=1 client=1"));
	assert_non_null(strstr(out, "Couldn't"));
}

static void test_daemon_vanishes(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_port_attr pa;
	struct ibv_device **list;
	int n = -1;

	fake_rxdpd_stop();
	/* the open context gets an error, not a crash or a hang */
	assert_true(ibv_query_port(ctx, 1, &pa) != 0);
	assert_int_equal(ibv_close_device(ctx), 0);
	/* and a new listing is empty */
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 0);
	ibv_free_device_list(list);
}

int main(void)
{
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(test_our_library_loaded),
		cmocka_unit_test(test_no_daemon_empty_list),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_rates_and_fork),
		cmocka_unit_test(test_unsupported_calls),
		cmocka_unit_test(test_sysfs_passthrough),
	};
	const struct CMUnitTest with_daemon[] = {
		cmocka_unit_test(test_device_list),
		cmocka_unit_test(test_open_context_layout),
		cmocka_unit_test(test_query_device),
		cmocka_unit_test(test_query_port),
		cmocka_unit_test(test_port_down),
		cmocka_unit_test(test_device_gone),
		cmocka_unit_test(test_gids),
		cmocka_unit_test(test_pkeys),
		cmocka_unit_test(test_pd_and_channel),
		cmocka_unit_test(test_async_fd_nonblocking),
		cmocka_unit_test(test_resolve_and_sysfs),
		cmocka_unit_test(test_dataplane_without_datapath),
		cmocka_unit_test(test_ibv_devices_tool),
		cmocka_unit_test(test_ibv_devinfo_tool),
		cmocka_unit_test(test_perftest_fails_cleanly),
		cmocka_unit_test(test_daemon_vanishes),
	};
	int fails;

	fails = cmocka_run_group_tests_name("verbs shell, no daemon",
					    standalone, NULL, NULL);
	fails += cmocka_run_group_tests_name("verbs shell, fake rxdpd",
					     with_daemon, setup_daemon,
					     teardown_daemon);
	return fails ? 1 : 0;
}
