// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exported verbs that take a device, a context or an object: each is
 * one call through the ops table (ops.h) of its device, rxdp's or
 * rdma-core's, as libibverbs' get_ops(ctx)->op. A context reaches its
 * device through ->device, every other object its context through
 * ->context; what names none (NULL) is rxdp's, which refuses it as
 * libibverbs' providers do.
 */
#include <errno.h>

#include "verbs/ops.h"
#include "verbs/rdmacore.h"
#include "verbs/verbs_priv.h"

/* <infiniband/verbs.h> defines these over the exported symbols */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static const struct verbs_ops rxdp_ops = {
#define VERBS_OPS_RXDP(op, fn, ver) .op = rxdp_##op,
	VERBS_OPS(VERBS_OPS_RXDP)
#undef VERBS_OPS_RXDP
};

/* rdma-core's table for the devices rxdp did not list, once it is loaded */
static const struct verbs_ops *dev_ops(const struct ibv_device *device)
{
	if (device && rxdp_sys_loaded() && !rxdp_dev_ours(device))
		return &rxdp_sys_ops;
	return &rxdp_ops;
}

static const struct verbs_ops *ctx_ops(const struct ibv_context *ctx)
{
	return dev_ops(ctx ? ctx->device : NULL);
}

/* Every verbs object names its context */
#define obj_ops(obj) ctx_ops((obj) ? (obj)->context : NULL)

/* OPS->OP(...), the table's errno made ours: the value of the call */
#define VERBS_CALL(ops, op, ...)                      \
	({                                            \
		const struct verbs_ops *o_ = (ops);   \
		__auto_type r_ = o_->op(__VA_ARGS__); \
		if (o_->take_errno)                   \
			o_->take_errno();             \
		r_;                                   \
	})
#define VERBS_CALL_VOID(ops, op, ...)               \
	do {                                        \
		const struct verbs_ops *o_ = (ops); \
		o_->op(__VA_ARGS__);                \
		if (o_->take_errno)                 \
			o_->take_errno();           \
	} while (0)

const char *ibv_get_device_name(struct ibv_device *device)
{
	return VERBS_CALL(dev_ops(device), get_device_name, device);
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return VERBS_CALL(dev_ops(device), get_device_guid, device);
}

int ibv_get_device_index(struct ibv_device *device)
{
	return VERBS_CALL(dev_ops(device), get_device_index, device);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	return VERBS_CALL(dev_ops(device), open_device, device);
}

int ibv_close_device(struct ibv_context *ctx)
{
	return VERBS_CALL(ctx_ops(ctx), close_device, ctx);
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	return VERBS_CALL(ctx_ops(ctx), query_device, ctx, attr);
}

int ibv_query_port(struct ibv_context *ctx, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return VERBS_CALL(ctx_ops(ctx), query_port, ctx, port_num, port_attr);
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	return VERBS_CALL(ctx_ops(ctx), query_gid, ctx, port_num, index, gid);
}

int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	return VERBS_CALL(ctx_ops(ctx), query_gid_ex, ctx, port_num, gid_index,
			  entry, flags, entry_size);
}

ssize_t _ibv_query_gid_table(struct ibv_context *ctx,
			     struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	return VERBS_CALL(ctx_ops(ctx), query_gid_table, ctx, entries,
			  max_entries, flags, entry_size);
}

int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port_num,
		       unsigned int index, enum rxdp_gid_type_sysfs *type)
{
	return VERBS_CALL(ctx_ops(ctx), query_gid_type, ctx, port_num, index,
			  type);
}

int ibv_query_pkey(struct ibv_context *ctx, uint8_t port_num, int index,
		   __be16 *pkey)
{
	return VERBS_CALL(ctx_ops(ctx), query_pkey, ctx, port_num, index, pkey);
}

int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port_num, __be16 pkey)
{
	return VERBS_CALL(ctx_ops(ctx), get_pkey_index, ctx, port_num, pkey);
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	return VERBS_CALL(ctx_ops(ctx), resolve_eth_l2_from_gid, ctx, attr,
			  eth_mac, vid);
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	return VERBS_CALL(ctx_ops(ctx), get_async_event, ctx, event);
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	return VERBS_CALL(ctx_ops(ctx), create_comp_channel, ctx);
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	return VERBS_CALL(ctx_ops(ctx), alloc_pd, ctx);
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	return VERBS_CALL(ctx_ops(context), import_pd, context, pd_handle);
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	return VERBS_CALL(ctx_ops(context), import_dm, context, dm_handle);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	return VERBS_CALL(ctx_ops(context), create_cq, context, cqe, cq_context,
			  channel, comp_vector);
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	return VERBS_CALL(ctx_ops(context), init_ah_from_wc, context, port_num,
			  wc, grh, ah_attr);
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	VERBS_CALL_VOID(ctx_ops(rxdp_event_ctx(event)), ack_async_event, event);
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return VERBS_CALL(obj_ops(channel), destroy_comp_channel, channel);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	return VERBS_CALL(obj_ops(channel), get_cq_event, channel, cq,
			  cq_context);
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	VERBS_CALL_VOID(obj_ops(cq), ack_cq_events, cq, nevents);
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return VERBS_CALL(obj_ops(pd), dealloc_pd, pd);
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	VERBS_CALL_VOID(obj_ops(pd), unimport_pd, pd);
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access)
{
	return VERBS_CALL(obj_ops(pd), reg_mr, pd, addr, length, access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access)
{
	return VERBS_CALL(obj_ops(pd), reg_mr_iova, pd, addr, length, iova,
			  access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	return VERBS_CALL(obj_ops(pd), reg_mr_iova2, pd, addr, length, iova,
			  access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access)
{
	return VERBS_CALL(obj_ops(pd), reg_dmabuf_mr, pd, offset, length, iova,
			  fd, access);
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	return VERBS_CALL(obj_ops(mr), rereg_mr, mr, flags, pd, addr, length,
			  access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	return VERBS_CALL(obj_ops(mr), dereg_mr, mr);
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	return VERBS_CALL(obj_ops(pd), import_mr, pd, mr_handle);
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	VERBS_CALL_VOID(obj_ops(mr), unimport_mr, mr);
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	VERBS_CALL_VOID(obj_ops(dm), unimport_dm, dm);
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return VERBS_CALL(obj_ops(cq), resize_cq, cq, cqe);
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	return VERBS_CALL(obj_ops(cq), destroy_cq, cq);
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *srq_init_attr)
{
	return VERBS_CALL(obj_ops(pd), create_srq, pd, srq_init_attr);
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		   int srq_attr_mask)
{
	return VERBS_CALL(obj_ops(srq), modify_srq, srq, srq_attr,
			  srq_attr_mask);
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return VERBS_CALL(obj_ops(srq), query_srq, srq, srq_attr);
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	return VERBS_CALL(obj_ops(srq), destroy_srq, srq);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *init_attr)
{
	return VERBS_CALL(obj_ops(pd), create_qp, pd, init_attr);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return VERBS_CALL(obj_ops(qp), modify_qp, qp, attr, attr_mask);
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	return VERBS_CALL(obj_ops(qp), query_qp, qp, attr, attr_mask,
			  init_attr);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	return VERBS_CALL(obj_ops(qp), destroy_qp, qp);
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return VERBS_CALL(obj_ops(qp), qp_to_qp_ex, qp);
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return VERBS_CALL(obj_ops(qp), query_ece, qp, ece);
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return VERBS_CALL(obj_ops(qp), set_ece, qp, ece);
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint32_t flags)
{
	return VERBS_CALL(obj_ops(qp), query_qp_data_in_order, qp, op, flags);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return VERBS_CALL(obj_ops(qp), attach_mcast, qp, gid, lid);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return VERBS_CALL(obj_ops(qp), detach_mcast, qp, gid, lid);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return VERBS_CALL(obj_ops(pd), create_ah, pd, attr);
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	return VERBS_CALL(obj_ops(pd), create_ah_from_wc, pd, wc, grh,
			  port_num);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	return VERBS_CALL(obj_ops(ah), destroy_ah, ah);
}
