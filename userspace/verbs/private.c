// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * IBVERBS_PRIVATE_34: the provider interface of rdma-core 44. Debian's
 * ib_* tools link libmlx5.so.1 and libefa.so.1 directly, and those import
 * these symbols with BIND_NOW, so they must exist for the tools to start.
 *
 * rxdp discovers its devices itself and never hands a provider a device:
 * a provider's constructor registers with verbs_register_driver_34(), which
 * we accept and ignore, and nothing reaches the ibv_cmd_* entry points. They
 * answer EOPNOTSUPP (the ibv_cmd_* convention is a positive errno).
 *
 * Providers call these with their real argument lists; on x86-64 the caller
 * owns its arguments, so stubs that ignore them are safe to declare without.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>

#include "verbs/verbs_priv.h"

/* Read by libmlx5; rdma-core lets tests flip it. Nothing here reads it. */
bool verbs_allow_disassociate_destroy;

struct verbs_device_ops;

void verbs_register_driver_34(const struct verbs_device_ops *ops);
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	pr_debug("a verbs provider registered; rxdp serves its own "
		 "devices and ignores it\n");
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void verbs_uninit_context(struct verbs_context *context);
void verbs_uninit_context(struct verbs_context *context)
{
}

struct verbs_context_ops;

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops)
{
}

void __verbs_log(struct verbs_context *ctx, uint32_t level, char *format, ...);
void __verbs_log(struct verbs_context *ctx, uint32_t level, char *format, ...)
{
	va_list ap;

	if (rxdp_log_get_level() < RXDP_LOG_DEBUG)
		return;
	va_start(ap, format);
	rxdp_log_vprint(RXDP_LOG_DEBUG, format, ap);
	va_end(ap);
}

struct ibv_command_buffer;

unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link)
{
	return num_attrs;
}

int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	return EOPNOTSUPP;
}

int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
			      const char *fnfmt, ...);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
			      const char *fnfmt, ...)
{
	errno = EOPNOTSUPP;
	return -1;
}

#define RXDP_CMD_STUB(name)        \
	int name(void);            \
	int name(void)             \
	{                          \
		return EOPNOTSUPP; \
	}

RXDP_CMD_STUB(ibv_cmd_advise_mr)
RXDP_CMD_STUB(ibv_cmd_alloc_dm)
RXDP_CMD_STUB(ibv_cmd_alloc_mw)
RXDP_CMD_STUB(ibv_cmd_alloc_pd)
RXDP_CMD_STUB(ibv_cmd_attach_mcast)
RXDP_CMD_STUB(ibv_cmd_close_xrcd)
RXDP_CMD_STUB(ibv_cmd_create_ah)
RXDP_CMD_STUB(ibv_cmd_create_counters)
RXDP_CMD_STUB(ibv_cmd_create_cq)
RXDP_CMD_STUB(ibv_cmd_create_cq_ex)
RXDP_CMD_STUB(ibv_cmd_create_flow)
RXDP_CMD_STUB(ibv_cmd_create_flow_action_esp)
RXDP_CMD_STUB(ibv_cmd_create_qp)
RXDP_CMD_STUB(ibv_cmd_create_qp_ex)
RXDP_CMD_STUB(ibv_cmd_create_qp_ex2)
RXDP_CMD_STUB(ibv_cmd_create_rwq_ind_table)
RXDP_CMD_STUB(ibv_cmd_create_srq)
RXDP_CMD_STUB(ibv_cmd_create_srq_ex)
RXDP_CMD_STUB(ibv_cmd_create_wq)
RXDP_CMD_STUB(ibv_cmd_dealloc_mw)
RXDP_CMD_STUB(ibv_cmd_dealloc_pd)
RXDP_CMD_STUB(ibv_cmd_dereg_mr)
RXDP_CMD_STUB(ibv_cmd_destroy_ah)
RXDP_CMD_STUB(ibv_cmd_destroy_counters)
RXDP_CMD_STUB(ibv_cmd_destroy_cq)
RXDP_CMD_STUB(ibv_cmd_destroy_flow)
RXDP_CMD_STUB(ibv_cmd_destroy_flow_action)
RXDP_CMD_STUB(ibv_cmd_destroy_qp)
RXDP_CMD_STUB(ibv_cmd_destroy_rwq_ind_table)
RXDP_CMD_STUB(ibv_cmd_destroy_srq)
RXDP_CMD_STUB(ibv_cmd_destroy_wq)
RXDP_CMD_STUB(ibv_cmd_detach_mcast)
RXDP_CMD_STUB(ibv_cmd_free_dm)
RXDP_CMD_STUB(ibv_cmd_get_context)
RXDP_CMD_STUB(ibv_cmd_modify_cq)
RXDP_CMD_STUB(ibv_cmd_modify_flow_action_esp)
RXDP_CMD_STUB(ibv_cmd_modify_qp)
RXDP_CMD_STUB(ibv_cmd_modify_qp_ex)
RXDP_CMD_STUB(ibv_cmd_modify_srq)
RXDP_CMD_STUB(ibv_cmd_modify_wq)
RXDP_CMD_STUB(ibv_cmd_open_qp)
RXDP_CMD_STUB(ibv_cmd_open_xrcd)
RXDP_CMD_STUB(ibv_cmd_poll_cq)
RXDP_CMD_STUB(ibv_cmd_post_recv)
RXDP_CMD_STUB(ibv_cmd_post_send)
RXDP_CMD_STUB(ibv_cmd_post_srq_recv)
RXDP_CMD_STUB(ibv_cmd_query_context)
RXDP_CMD_STUB(ibv_cmd_query_device_any)
RXDP_CMD_STUB(ibv_cmd_query_mr)
RXDP_CMD_STUB(ibv_cmd_query_port)
RXDP_CMD_STUB(ibv_cmd_query_qp)
RXDP_CMD_STUB(ibv_cmd_query_srq)
RXDP_CMD_STUB(ibv_cmd_read_counters)
RXDP_CMD_STUB(ibv_cmd_reg_dm_mr)
RXDP_CMD_STUB(ibv_cmd_reg_dmabuf_mr)
RXDP_CMD_STUB(ibv_cmd_reg_mr)
RXDP_CMD_STUB(ibv_cmd_req_notify_cq)
RXDP_CMD_STUB(ibv_cmd_rereg_mr)
RXDP_CMD_STUB(ibv_cmd_resize_cq)
