/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The verbs ops table, as libibverbs' get_ops(ctx)->op: one member for
 * every verb this library exports that takes a device, a context or an
 * object, typed as that verb. Two instances: rxdp's (api.c: rxdp_OP(),
 * the functions of its provider) and rdma-core's (rdmacore.c: the same
 * verbs of the host's own libibverbs, for the devices it lists). The
 * instance is the device's: rxdp's for the devices rxdpd serves, rdma-core's
 * for the others, and a context, and what is made from it, reaches it
 * through ->device and ->context. Each exported verb (api.c) is one line
 * through it.
 */
#ifndef RXDP_VERBS_OPS_H
#define RXDP_VERBS_OPS_H

#include <infiniband/verbs.h>
#include <stdint.h>

/*
 * IBVERBS_PRIVATE_34's, which rdma-core declares in <infiniband/driver.h>:
 * rxdp's GIDs are RoCE v2 (ibv_query_gid_type's enum ibv_gid_type_sysfs)
 */
enum rxdp_gid_type_sysfs {
	RXDP_GID_TYPE_SYSFS_IB_ROCE_V1 = 0,
	RXDP_GID_TYPE_SYSFS_ROCE_V2 = 1,
};

int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port_num,
		       unsigned int index, enum rxdp_gid_type_sysfs *type);

/*
 * X(OP, the verb, its version node in rdma-core's library: rdmacore.c
 * takes the verb from there by name and version)
 */
#define VERBS_OPS(X)                                                           \
	/* the device */                                                       \
	X(get_device_name, ibv_get_device_name, "IBVERBS_1.1")                 \
	X(get_device_guid, ibv_get_device_guid, "IBVERBS_1.1")                 \
	X(get_device_index, ibv_get_device_index, "IBVERBS_1.9")               \
	X(open_device, ibv_open_device, "IBVERBS_1.1")                         \
	/* the context */                                                      \
	X(close_device, ibv_close_device, "IBVERBS_1.1")                       \
	X(query_device, ibv_query_device, "IBVERBS_1.1")                       \
	X(query_port, ibv_query_port, "IBVERBS_1.1")                           \
	X(query_gid, ibv_query_gid, "IBVERBS_1.1")                             \
	X(query_gid_ex, _ibv_query_gid_ex, "IBVERBS_1.11")                     \
	X(query_gid_table, _ibv_query_gid_table, "IBVERBS_1.11")               \
	X(query_gid_type, ibv_query_gid_type, "IBVERBS_PRIVATE_34")            \
	X(query_pkey, ibv_query_pkey, "IBVERBS_1.1")                           \
	X(get_pkey_index, ibv_get_pkey_index, "IBVERBS_1.5")                   \
	X(resolve_eth_l2_from_gid, ibv_resolve_eth_l2_from_gid, "IBVERBS_1.1") \
	X(get_async_event, ibv_get_async_event, "IBVERBS_1.1")                 \
	X(create_comp_channel, ibv_create_comp_channel, "IBVERBS_1.0")         \
	X(alloc_pd, ibv_alloc_pd, "IBVERBS_1.1")                               \
	X(import_pd, ibv_import_pd, "IBVERBS_1.10")                            \
	X(import_dm, ibv_import_dm, "IBVERBS_1.13")                            \
	X(create_cq, ibv_create_cq, "IBVERBS_1.1")                             \
	X(init_ah_from_wc, ibv_init_ah_from_wc, "IBVERBS_1.1")                 \
	/* an object: its context's */                                         \
	X(ack_async_event, ibv_ack_async_event, "IBVERBS_1.1")                 \
	X(destroy_comp_channel, ibv_destroy_comp_channel, "IBVERBS_1.0")       \
	X(get_cq_event, ibv_get_cq_event, "IBVERBS_1.1")                       \
	X(ack_cq_events, ibv_ack_cq_events, "IBVERBS_1.1")                     \
	X(dealloc_pd, ibv_dealloc_pd, "IBVERBS_1.1")                           \
	X(unimport_pd, ibv_unimport_pd, "IBVERBS_1.10")                        \
	X(reg_mr, ibv_reg_mr, "IBVERBS_1.1")                                   \
	X(reg_mr_iova, ibv_reg_mr_iova, "IBVERBS_1.7")                         \
	X(reg_mr_iova2, ibv_reg_mr_iova2, "IBVERBS_1.8")                       \
	X(reg_dmabuf_mr, ibv_reg_dmabuf_mr, "IBVERBS_1.12")                    \
	X(rereg_mr, ibv_rereg_mr, "IBVERBS_1.1")                               \
	X(dereg_mr, ibv_dereg_mr, "IBVERBS_1.1")                               \
	X(import_mr, ibv_import_mr, "IBVERBS_1.10")                            \
	X(unimport_mr, ibv_unimport_mr, "IBVERBS_1.10")                        \
	X(unimport_dm, ibv_unimport_dm, "IBVERBS_1.13")                        \
	X(resize_cq, ibv_resize_cq, "IBVERBS_1.1")                             \
	X(destroy_cq, ibv_destroy_cq, "IBVERBS_1.1")                           \
	X(create_srq, ibv_create_srq, "IBVERBS_1.1")                           \
	X(modify_srq, ibv_modify_srq, "IBVERBS_1.1")                           \
	X(query_srq, ibv_query_srq, "IBVERBS_1.1")                             \
	X(destroy_srq, ibv_destroy_srq, "IBVERBS_1.1")                         \
	X(create_qp, ibv_create_qp, "IBVERBS_1.1")                             \
	X(modify_qp, ibv_modify_qp, "IBVERBS_1.1")                             \
	X(query_qp, ibv_query_qp, "IBVERBS_1.1")                               \
	X(destroy_qp, ibv_destroy_qp, "IBVERBS_1.1")                           \
	X(qp_to_qp_ex, ibv_qp_to_qp_ex, "IBVERBS_1.6")                         \
	X(query_ece, ibv_query_ece, "IBVERBS_1.10")                            \
	X(set_ece, ibv_set_ece, "IBVERBS_1.10")                                \
	X(query_qp_data_in_order, ibv_query_qp_data_in_order, "IBVERBS_1.14")  \
	X(attach_mcast, ibv_attach_mcast, "IBVERBS_1.1")                       \
	X(detach_mcast, ibv_detach_mcast, "IBVERBS_1.1")                       \
	X(create_ah, ibv_create_ah, "IBVERBS_1.1")                             \
	X(create_ah_from_wc, ibv_create_ah_from_wc, "IBVERBS_1.1")             \
	X(destroy_ah, ibv_destroy_ah, "IBVERBS_1.1")

/*
 * The members have the verbs' types but not their names: <infiniband/verbs.h>
 * defines function-like macros over some (ibv_reg_mr, ibv_query_port)
 */
struct verbs_ops {
#define VERBS_OPS_MEMBER(op, fn, ver) __typeof__(&fn) op;
	VERBS_OPS(VERBS_OPS_MEMBER)
#undef VERBS_OPS_MEMBER
	/*
	 * After each call, where the instance's errno is not ours (rdma-core's
	 * library has its own libc): ours made its. NULL: the same errno.
	 */
	void (*take_errno)(void);
};

/* rxdp's instance's verbs: rxdp_alloc_pd() is rxdp's ibv_alloc_pd() */
#define VERBS_OPS_RXDP_DECL(op, fn, ver) extern __typeof__(fn) rxdp_##op;
VERBS_OPS(VERBS_OPS_RXDP_DECL)
#undef VERBS_OPS_RXDP_DECL

/* rdma-core's instance (rdmacore.c), complete once rxdp_sys_loaded() */
extern struct verbs_ops rxdp_sys_ops;

#endif /* RXDP_VERBS_OPS_H */
