// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Devices and contexts: the device list comes from rxdpd (one verbs device
 * per interface it serves, named rxdp_<ifname>), and every query is answered
 * from what the daemon says about the interface now.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rxdp/params.h"
#include "verbs/provider.h"
#include "verbs/rdmacore.h"

/* The tools and the library were built against this header's layouts */
_Static_assert(offsetof(struct rxdp_device, ibdev) == 0,
	       "ibv_device must start rxdp_device");
_Static_assert(offsetof(struct verbs_context, context) +
			       sizeof(struct ibv_context) ==
		       sizeof(struct verbs_context),
	       "ibv_context must end verbs_context");

#define RXDP_MAX_DEVICES 64

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rxdp_device *dev_cache; /* every device ever listed */

static struct rxdp_device *dev_cache_find(const struct rxdp_dev_info *info)
{
	struct rxdp_device *d;

	for (d = dev_cache; d; d = d->next)
		if (!strcmp(d->info.name, info->name))
			return d;
	return NULL;
}

static void dev_fill(struct rxdp_device *d, const struct rxdp_dev_info *info)
{
	struct ibv_device *ib = &d->ibdev;

	d->info = *info;
	d->info.name[sizeof(d->info.name) - 1] = '\0';
	d->info.dev_node[sizeof(d->info.dev_node) - 1] = '\0';
	ib->node_type = IBV_NODE_CA;
	ib->transport_type = IBV_TRANSPORT_IB;
	snprintf(ib->name, sizeof(ib->name), "%s", d->info.name);
	/*
	 * Not a kernel uverbs device: the null device node rxdpd made for the
	 * programs that look in /dev/infiniband (daemon/devnode.c), or a name
	 * that exists nowhere when it could not make one
	 */
	if (d->info.dev_node[0])
		snprintf(ib->dev_name, sizeof(ib->dev_name), "%.*s",
			 (int)sizeof(ib->dev_name) - 1, d->info.dev_node);
	else
		snprintf(ib->dev_name, sizeof(ib->dev_name),
			 RXDP_DEV_NAME_PREFIX "none-%u", d->info.ifindex);
	snprintf(ib->dev_path, sizeof(ib->dev_path),
		 "/sys/class/infiniband_verbs/%s", ib->dev_name);
	snprintf(ib->ibdev_path, sizeof(ib->ibdev_path), "%s%s",
		 RXDP_VERBS_IBDEV_DIR, d->info.name);
}

/*
 * Why ibv_get_device_list() found nothing, once a process, in one line
 * (rdma-core prints its own reasons the same way): no rxdpd, or what keeps
 * it from serving (its first problem, health.c).
 */
static void say_why_none(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void say_why_none(const char *fmt, ...)
{
	static int said;
	char line[600];
	va_list ap;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	line[strcspn(line, "\n")] = '\0';
	pr_warn("%s\n", line);
}

static struct rxdp_ctl *ctl_connect_quiet(void)
{
	struct rxdp_ctl *ctl = rxdp_ctl_connect(NULL);
	const char *sock = secure_getenv(RXDP_CTL_ENV);

	if (!ctl)
		say_why_none("no RDMA devices: no rxdpd in this network "
			     "namespace (%s%s: %s); start it (systemctl start "
			     "rxdp, or rxdpd)",
			     sock ? "" : "@",
			     sock ? sock : RXDP_CTL_ABSTRACT_NAME,
			     strerror(errno));
	return ctl;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **raw, **list, **sys = NULL;
	struct rxdp_dev_info *infos = NULL;
	int n = 0, i, k = 0, nsys = 0;
	struct rxdp_device *d;
	struct rxdp_ctl *ctl;

	rxdp_verbs_log_init();
	ctl = ctl_connect_quiet();
	if (ctl) {
		infos = calloc(RXDP_MAX_DEVICES, sizeof(*infos));
		if (!infos) {
			rxdp_ctl_close(ctl);
			errno = ENOMEM;
			return NULL;
		}
		n = rxdp_ctl_list_devices(ctl, infos, RXDP_MAX_DEVICES);
		if (n < 0) {
			pr_debug("listing devices: %s (%s)\n", strerror(-n),
				 rxdp_ctl_strerror(ctl));
			n = 0;
		} else if (n == 0) {
			say_why_none("no RDMA devices: rxdpd serves none: %s",
				     rxdp_ctl_strerror(ctl)[0]
					     ? rxdp_ctl_strerror(ctl)
					     : "(it says nothing)");
		}
		if (n > RXDP_MAX_DEVICES)
			n = RXDP_MAX_DEVICES;
		rxdp_ctl_close(ctl);
	}

	/*
	 * rdma-core's devices first, so that a program that takes the first
	 * device takes the one it took before rxdp was installed. Slot 0,
	 * before what the program sees, keeps rdma-core's list for
	 * ibv_free_device_list().
	 */
	rxdp_sys_load();
	if (rxdp_sys_loaded()) {
		int saved = errno;

		sys = RXDP_SYS(ibv_get_device_list, &nsys);
		if (!sys) /* ENOSYS: the kernel's RDMA devices are gone */
			nsys = 0;
		errno = saved;
	}
	raw = calloc(1 + nsys + n + 1, sizeof(*raw));
	if (!raw) {
		if (sys)
			RXDP_SYS_VOID(ibv_free_device_list, sys);
		free(infos);
		errno = ENOMEM;
		return NULL;
	}
	raw[0] = (struct ibv_device *)sys;
	list = raw + 1;
	for (i = 0; i < nsys; i++)
		list[k++] = sys[i];

	pthread_mutex_lock(&dev_lock);
	for (d = dev_cache; d; d = d->next)
		d->listed = 0;
	for (i = 0; i < n; i++) {
		d = dev_cache_find(&infos[i]);
		if (!d) {
			d = calloc(1, sizeof(*d));
			if (!d)
				continue;
			d->next = dev_cache;
			/* rxdp_dev_ours() reads the list without the lock */
			__atomic_store_n(&dev_cache, d, __ATOMIC_RELEASE);
		}
		dev_fill(d, &infos[i]);
		d->listed = 1;
		list[k++] = &d->ibdev;
	}
	pthread_mutex_unlock(&dev_lock);

	free(infos);
	if (num_devices)
		*num_devices = k;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **raw = list - 1;

	if (raw[0])
		RXDP_SYS_VOID(ibv_free_device_list,
			      (struct ibv_device **)raw[0]);
	free(raw);
}

/* Devices are never freed, so one once listed stays in the list */
bool rxdp_dev_ours(const struct ibv_device *device)
{
	const struct rxdp_device *d;

	for (d = __atomic_load_n(&dev_cache, __ATOMIC_ACQUIRE); d; d = d->next)
		if (&d->ibdev == device)
			return true;
	return false;
}

const char *rxdp_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 rxdp_get_device_guid(struct ibv_device *device)
{
	return (__be64)to_rxdp_dev(device)->info.node_guid;
}

int rxdp_get_device_index(struct ibv_device *device)
{
	return (int)to_rxdp_dev(device)->info.ifindex;
}

/* Fresh facts about the context's interface; falls back to none: -errno */
int rxdp_device_refresh(struct rxdp_context *c, struct rxdp_dev_info *out)
{
	int ret;

	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_query_device(c->ctl, c->dev->info.ifindex, out);
	if (ret < 0)
		pr_debug("query device %s: %s (%s)\n", c->dev->info.name,
			 strerror(-ret), rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	return ret;
}

static int rxdp_query_port_ex(struct ibv_context *ctx, uint8_t port_num,
			      struct ibv_port_attr *port_attr,
			      size_t port_attr_len);
static int rxdp_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size);

struct ibv_context *rxdp_open_device(struct ibv_device *device)
{
	struct rxdp_device *dev = to_rxdp_dev(device);
	struct rxdp_ctx_fds fds;
	struct rxdp_context *c;
	struct ibv_context *ctx;
	int err, mem_fd;

	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = dev;
	c->doorbell = -1;
	ctx = &c->vctx.context;
	ctx->cmd_fd = -1;
	ctx->async_fd = -1;
	pthread_mutex_init(&c->ctl_lock, NULL);
	pthread_rwlock_init(&c->mr_lock, NULL);
	pthread_mutex_init(&c->qps_lock, NULL);

	c->ctl = rxdp_ctl_connect(NULL);
	if (!c->ctl) {
		err = errno ? errno : ENODEV;
		pr_debug("open %s: no rxdpd (%s)\n", dev->info.name,
			 strerror(err));
		goto err_free;
	}
	/*
	 * The context is rxdpd's: the doorbell, the device page (read-only)
	 * and the async event pipe it writes. cmd_fd stands where
	 * /dev/infiniband/uverbsN would: programs only poll or close it.
	 */
	/* rxdpd moves payload through this, and reaches nothing else of us */
	mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem_fd < 0) {
		err = errno;
		pr_warn("rxdp: cannot open /proc/self/mem: %s\n",
			strerror(err));
		goto err_ctl;
	}
	err = -rxdp_ctl_ctx_open(c->ctl, dev->info.ifindex, mem_fd, &fds);
	close(mem_fd);
	if (err) {
		pr_warn("rxdp: cannot open %s: %s\n", dev->info.name,
			rxdp_ctl_strerror(c->ctl));
		goto err_ctl;
	}
	c->doorbell = fds.doorbell;
	ctx->async_fd = fds.async;
	c->page = mmap(NULL, sizeof(*c->page), PROT_READ, MAP_SHARED,
		       fds.dev_page, 0);
	close(fds.dev_page);
	if (c->page == MAP_FAILED) {
		err = errno;
		c->page = NULL;
		goto err_fds;
	}
	ctx->cmd_fd = eventfd(0, EFD_CLOEXEC);
	if (ctx->cmd_fd < 0) {
		err = errno;
		goto err_fds;
	}
	ctx->device = device;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = rxdp_query_port_ex;
	c->vctx.query_device_ex = rxdp_query_device_ex;
	c->vctx.create_cq_ex = rxdp_create_cq_ex;
	c->vctx.create_qp_ex = rxdp_create_qp_ex;
	c->vctx.create_srq_ex = rxdp_create_srq_ex;
	c->vctx.query_rt_values = rxdp_query_rt_values;
	c->vctx.advise_mr = rxdp_advise_mr;
	rxdp_dp_set_ops(&ctx->ops);
	return ctx;

err_fds:
	if (c->page)
		munmap(c->page, sizeof(*c->page));
	close(c->doorbell);
	close(ctx->async_fd);
err_ctl:
	rxdp_ctl_close(c->ctl);
err_free:
	pthread_mutex_destroy(&c->ctl_lock);
	free(c);
	errno = err;
	return NULL;
}

/* rxdpd forgets the context's objects when its connection closes */
int rxdp_close_device(struct ibv_context *ctx)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);

	regmem_ctx_gone(c);
	rxdp_ctl_close(c->ctl);
	close(ctx->async_fd);
	rxdp_events_ctx_closed(ctx);
	close(ctx->cmd_fd);
	close(c->doorbell);
	munmap(c->page, sizeof(*c->page));
	pthread_mutex_destroy(&ctx->mutex);
	pthread_mutex_destroy(&c->ctl_lock);
	pthread_mutex_destroy(&c->qps_lock);
	free(c);
	return 0;
}

static void fill_device_attr(const struct rxdp_dev_info *info,
			     struct ibv_device_attr *a)
{
	unsigned int max_qp = info->max_qp ? info->max_qp : 1024;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", RXDP_VERBS_FW_VER);
	a->node_guid = (__be64)info->node_guid;
	a->sys_image_guid = (__be64)info->node_guid;
	a->max_mr_size = RXDP_VERBS_MAX_MR_SIZE;
	a->page_size_cap = RXDP_VERBS_PAGE_SIZE_CAP;
	a->vendor_id = RXDP_VERBS_VENDOR_ID;
	a->vendor_part_id = RXDP_VERBS_VENDOR_PART_ID;
	a->hw_ver = RXDP_VERBS_HW_VER;
	a->max_qp = (int)max_qp;
	a->max_qp_wr = RXDP_VERBS_MAX_QP_WR;
	/* memory windows: type 1 and type 2B (QP-associated), as rxe */
	a->device_cap_flags =
		IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = RXDP_VERBS_MAX_SGE;
	a->max_sge_rd = RXDP_VERBS_MAX_SGE_RD;
	a->max_cq = RXDP_VERBS_MAX_CQ;
	a->max_cqe = RXDP_VERBS_MAX_CQE;
	a->max_mr = RXDP_VERBS_MAX_MR;
	a->max_pd = RXDP_VERBS_MAX_PD;
	a->max_qp_rd_atom = RXDP_VERBS_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = RXDP_VERBS_MAX_QP_INIT_RD_ATOM;
	a->max_res_rd_atom = (int)(RXDP_VERBS_MAX_QP_RD_ATOM * max_qp);
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = RXDP_VERBS_MAX_SRQ;
	a->max_srq_wr = RXDP_VERBS_MAX_SRQ_WR;
	a->max_srq_sge = RXDP_VERBS_MAX_SRQ_SGE;
	a->max_ah = RXDP_VERBS_MAX_AH;
	/* UD multicast (include/rxdp/params.h: the engine's caps) */
	a->max_mcast_grp = RXDP_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = RXDP_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = RXDP_MAX_TOTAL_MCAST_QP_ATTACH;
	a->max_pkeys = RXDP_VERBS_MAX_PKEYS;
	a->local_ca_ack_delay = RXDP_VERBS_LOCAL_CA_ACK_DELAY;
	a->phys_port_cnt = 1;
}

int rxdp_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	struct rxdp_dev_info info;
	int ret;

	ret = rxdp_device_refresh(to_rxdp_ctx(ctx), &info);
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	fill_device_attr(&info, attr);
	return 0;
}

static int rxdp_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct rxdp_dev_info info;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	ret = rxdp_device_refresh(to_rxdp_ctx(ctx), &info);
	if (ret < 0)
		return -ret;

	/*
	 * What the extended attributes say rxdp has: completion timestamps
	 * of a 1 GHz clock (nanoseconds, extended.c); on-demand paging,
	 * implicit too, for every operation of each transport (an ODP MR is
	 * reached through the process's page tables, dataplane.c's reg_mr:
	 * nothing about it depends on the operation; no XRC). Everything
	 * else is zero: no TSO, RSS, tag matching, packet pacing, CQ
	 * moderation, device memory, raw packet capabilities or PCI atomics.
	 */
	memset(&ex, 0, sizeof(ex));
	fill_device_attr(&info, &ex.orig_attr);
	ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags;
	ex.odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	ex.odp_caps.per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	ex.odp_caps.per_transport_caps.uc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	ex.odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND |
						     IBV_ODP_SUPPORT_RECV |
						     IBV_ODP_SUPPORT_SRQ_RECV;
	/*
	 * IBTA 1.5's Atomic Write and Flush, both placement types, as
	 * Soft-RoCE announces them (no region of rxdp is persistent memory:
	 * ibv_reg_mr refuses IBV_ACCESS_FLUSH_PERSISTENT, as Soft-RoCE does
	 * for memory that is not pmem)
	 */
	ex.device_cap_flags_ex |= RXDP_DEVICE_ATOMIC_WRITE |
				  RXDP_DEVICE_FLUSH_GLOBAL |
				  RXDP_DEVICE_FLUSH_PERSISTENT;
	ex.completion_timestamp_mask = UINT64_MAX;
	ex.hca_core_clock = 1000000; /* kHz */
	ex.phys_port_cnt_ex = 1;
	if (attr_size > sizeof(ex)) {
		memset(attr, 0, attr_size);
		attr_size = sizeof(ex);
	}
	memcpy(attr, &ex, attr_size);
	return 0;
}

/*
 * Width and speed from the Ethernet link speed, the mapping the kernel's
 * RoCE drivers use (ib_get_eth_speed): the product is the link rate.
 * Encodings of PortInfo:LinkWidthActive and LinkSpeedActive (IBTA 14.2.5.6).
 */
enum {
	RXDP_WIDTH_1X = 1,
	RXDP_WIDTH_4X = 2
};

static void eth_speed_to_ib(__u32 mbps, uint8_t *width, uint8_t *speed)
{
	if (mbps <= 1000) {
		*width = RXDP_WIDTH_1X;
		*speed = 1; /* SDR */
	} else if (mbps <= 10000) {
		*width = RXDP_WIDTH_1X;
		*speed = 8; /* FDR10 */
	} else if (mbps <= 20000) {
		*width = RXDP_WIDTH_4X;
		*speed = 2; /* DDR */
	} else if (mbps <= 25000) {
		*width = RXDP_WIDTH_1X;
		*speed = 32; /* EDR */
	} else if (mbps <= 40000) {
		*width = RXDP_WIDTH_4X;
		*speed = 8; /* FDR10 */
	} else {
		*width = RXDP_WIDTH_4X;
		*speed = 32; /* EDR */
	}
}

static int fill_port_attr(struct ibv_context *ctx, uint8_t port_num,
			  struct ibv_port_attr *a)
{
	struct rxdp_dev_info info;
	int ret;

	if (port_num != 1)
		return EINVAL;
	ret = rxdp_device_refresh(to_rxdp_ctx(ctx), &info);
	if (ret < 0)
		return -ret;

	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)info.port_state;
	a->max_mtu = (enum ibv_mtu)info.max_mtu;
	a->active_mtu = (enum ibv_mtu)info.active_mtu;
	a->gid_tbl_len = (int)info.gid_tbl_len;
	a->port_cap_flags = IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = RXDP_VERBS_MAX_MSG_SZ;
	a->pkey_tbl_len = RXDP_VERBS_MAX_PKEYS;
	a->max_vl_num = 1;
	eth_speed_to_ib(info.speed_mbps, &a->active_width, &a->active_speed);
	/* IBTA 14.2.5.6 PortPhysicalState: 5 LinkUp, 3 Disabled */
	a->phys_state = info.port_state == IBV_PORT_ACTIVE ? 5 : 3;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

static int rxdp_query_port_ex(struct ibv_context *ctx, uint8_t port_num,
			      struct ibv_port_attr *port_attr,
			      size_t port_attr_len)
{
	struct ibv_port_attr a;
	int ret;

	ret = fill_port_attr(ctx, port_num, &a);
	if (ret)
		return ret;
	if (port_attr_len > sizeof(a)) {
		memset(port_attr, 0, port_attr_len);
		port_attr_len = sizeof(a);
	}
	memcpy(port_attr, &a, port_attr_len);
	return 0;
}

/*
 * The exported symbol, for programs built before verbs_context carried
 * query_port: their struct ends at `flags` (rdma-core's compat layout).
 */
int rxdp_query_port(struct ibv_context *ctx, uint8_t port_num,
		    struct _compat_ibv_port_attr *port_attr)
{
	int ret;

	ret = rxdp_query_port_ex(
		ctx, port_num, (struct ibv_port_attr *)port_attr,
		offsetof(struct ibv_port_attr, port_cap_flags2));
	if (ret)
		errno = ret;
	return ret;
}

static int query_gid_entry(struct ibv_context *ctx, uint32_t port_num,
			   uint32_t index, struct rxdp_gid_entry *e)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	int ret;

	if (port_num != 1)
		return -EINVAL;
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_query_gid(c->ctl, c->dev->info.ifindex, index, e);
	rxdp_ctx_ctl_unlock(c);
	return ret;
}

static int gid_is_zero(const __u8 *gid)
{
	static const __u8 zero[16];

	return !memcmp(gid, zero, sizeof(zero));
}

int rxdp_query_gid(struct ibv_context *ctx, uint8_t port_num, int index,
		   union ibv_gid *gid)
{
	struct rxdp_gid_entry e;
	int ret;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = query_gid_entry(ctx, port_num, (uint32_t)index, &e);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	memcpy(gid->raw, e.gid, sizeof(gid->raw));
	return 0;
}

/* An empty slot is ENODATA, as in rdma-core */
int rxdp_query_gid_ex(struct ibv_context *ctx, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	struct ibv_gid_entry out;
	struct rxdp_gid_entry e;
	int ret;

	if (flags || entry_size < sizeof(out))
		return EINVAL;
	ret = query_gid_entry(ctx, port_num, gid_index, &e);
	if (ret < 0)
		return -ret;
	if (gid_is_zero(e.gid))
		return ENODATA;
	memset(&out, 0, sizeof(out));
	memcpy(out.gid.raw, e.gid, sizeof(out.gid.raw));
	out.gid_index = gid_index;
	out.port_num = port_num;
	out.gid_type = e.gid_type;
	out.ndev_ifindex = c->dev->info.ifindex;
	memcpy(entry, &out, sizeof(out));
	return 0;
}

ssize_t rxdp_query_gid_table(struct ibv_context *ctx,
			     struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	struct ibv_port_attr pa;
	size_t n = 0;
	int i, ret;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	ret = fill_port_attr(ctx, 1, &pa);
	if (ret)
		return -ret;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry *e =
			(void *)((char *)entries + n * entry_size);

		if (n == max_entries)
			return -EINVAL; /* rdma-core: the table did not fit */
		ret = rxdp_query_gid_ex(ctx, 1, (uint32_t)i, e, 0, entry_size);
		if (ret == ENODATA)
			continue;
		if (ret)
			return -ret;
		n++;
	}
	return (ssize_t)n;
}

int rxdp_query_gid_type(struct ibv_context *ctx, uint8_t port_num,
			unsigned int index, enum rxdp_gid_type_sysfs *type)
{
	struct rxdp_gid_entry e;
	int ret;

	ret = query_gid_entry(ctx, port_num, index, &e);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	/* rxdp speaks RoCE v2 only; an empty slot has that type too */
	*type = RXDP_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

int rxdp_query_pkey(struct ibv_context *ctx, uint8_t port_num, int index,
		    __be16 *pkey)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	__u16 val;
	int ret;

	if (port_num != 1 || index < 0) {
		errno = EINVAL;
		return -1;
	}
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_query_pkey(c->ctl, c->dev->info.ifindex, (__u32)index,
				  &val);
	rxdp_ctx_ctl_unlock(c);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	*pkey = htobe16(val);
	return 0;
}

int rxdp_get_pkey_index(struct ibv_context *ctx, uint8_t port_num, __be16 pkey)
{
	__be16 p;
	int i;

	for (i = 0;; i++) {
		if (rxdp_query_pkey(ctx, port_num, i, &p))
			return -1;
		if (p == pkey)
			return i;
	}
}

int rxdp_resolve_eth_l2_from_gid(struct ibv_context *ctx,
				 struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				 uint16_t *vid)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	struct rxdp_path path;
	struct rxdp_ah ah;
	int ret;

	if (!attr->is_global) {
		errno = EINVAL;
		return EINVAL;
	}
	rxdp_ah_from_attr(attr, &ah);
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_resolve(c->ctl, c->dev->info.ifindex, &ah, &path);
	rxdp_ctx_ctl_unlock(c);
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	memcpy(eth_mac, path.dmac, 6);
	if (vid)
		*vid = path.vlan ? path.vlan : 0xffff; /* rdma-core: none */
	return 0;
}

/* --- sysfs ---------------------------------------------------------------- */

const char *ibv_get_sysfs_path(void)
{
	const char *env = secure_getenv("SYSFS_PATH");

	return env && *env ? env : "/sys";
}

static struct rxdp_device *dev_by_ibdev_path(const char *dir)
{
	struct rxdp_device *d;

	for (d = dev_cache; d; d = d->next)
		if (!strcmp(d->ibdev.ibdev_path, dir))
			return d;
	return NULL;
}

/*
 * There is no kernel RDMA device behind an rxdp device, so the few sysfs
 * attributes programs read from ibdev_path are synthesised here.
 */
int rxdp_sysfs_synth(const char *dir, const char *file, char *buf, size_t size)
{
	struct rxdp_device *d;
	char val[128];
	const char *f = file;
	unsigned int idx;
	__u64 g;
	int len;

	pthread_mutex_lock(&dev_lock);
	d = dev_by_ibdev_path(dir);
	if (!d) {
		pthread_mutex_unlock(&dev_lock);
		return -2;
	}
	g = be64toh(d->info.node_guid);
	if (!strcmp(f, "board_id"))
		snprintf(val, sizeof(val), "RXDP_%s", d->info.ifname);
	else if (!strcmp(f, "fw_ver"))
		snprintf(val, sizeof(val), "%s", RXDP_VERBS_FW_VER);
	else if (!strcmp(f, "hca_type"))
		snprintf(val, sizeof(val), "rxdp");
	else if (!strcmp(f, "node_type"))
		snprintf(val, sizeof(val), "1: CA");
	else if (!strcmp(f, "node_desc"))
		snprintf(val, sizeof(val), "rxdp %s", d->info.ifname);
	else if (!strcmp(f, "node_guid") || !strcmp(f, "sys_image_guid"))
		snprintf(val, sizeof(val), "%04x:%04x:%04x:%04x",
			 (unsigned int)(g >> 48) & 0xffff,
			 (unsigned int)(g >> 32) & 0xffff,
			 (unsigned int)(g >> 16) & 0xffff,
			 (unsigned int)g & 0xffff);
	else if (sscanf(f, "ports/1/gid_attrs/types/%u", &idx) == 1 &&
		 idx < d->info.gid_tbl_len)
		snprintf(val, sizeof(val), "RoCE v2");
	else if (sscanf(f, "ports/1/gid_attrs/ndevs/%u", &idx) == 1 &&
		 idx < d->info.gid_tbl_len)
		snprintf(val, sizeof(val), "%s", d->info.ifname);
	else if (!strcmp(f, "ports/1/link_layer"))
		snprintf(val, sizeof(val), "Ethernet");
	else {
		pthread_mutex_unlock(&dev_lock);
		errno = ENOENT;
		return -1;
	}
	pthread_mutex_unlock(&dev_lock);

	len = (int)strlen(val);
	if (size == 0)
		return len;
	if ((size_t)len >= size)
		len = (int)size - 1;
	memcpy(buf, val, (size_t)len);
	buf[len] = '\0';
	return len;
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size)
{
	char *path;
	ssize_t len;
	int fd, ret;

	ret = rxdp_sysfs_synth(dir, file, buf, size);
	if (ret != -2)
		return ret;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		buf[size - 1] = '\0';
	return (int)len;
}
