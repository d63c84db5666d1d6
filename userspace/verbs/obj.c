// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every file of the provider builds on, calling nothing above it:
 * requests to rxdpd on a context's connection, one at a time, the PD
 * counts its objects hold, an AH's addressing as rxdpd takes it.
 */
#include <errno.h>
#include <string.h>

#include "verbs/provider.h"

void rxdp_ctx_ctl_lock(struct rxdp_context *c)
{
	pthread_mutex_lock(&c->ctl_lock);
}

void rxdp_ctx_ctl_unlock(struct rxdp_context *c)
{
	pthread_mutex_unlock(&c->ctl_lock);
}

void rxdp_pd_get(struct ibv_pd *pd)
{
	__atomic_add_fetch(&to_rxdp_pd(pd)->users, 1, __ATOMIC_RELAXED);
}

void rxdp_pd_put(struct ibv_pd *pd)
{
	__atomic_sub_fetch(&to_rxdp_pd(pd)->users, 1, __ATOMIC_RELEASE);
}

void rxdp_ah_from_attr(const struct ibv_ah_attr *attr, struct rxdp_ah *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->dgid, attr->grh.dgid.raw, sizeof(ah->dgid));
	ah->flow_label = attr->grh.flow_label;
	ah->sgid_index = attr->grh.sgid_index;
	ah->hop_limit = attr->grh.hop_limit;
	ah->traffic_class = attr->grh.traffic_class;
	ah->sl = attr->sl;
}

/*
 * One object request on the context's connection (and an fd to send, or
 * -1). 0 or a positive errno (errno set too), with rxdpd's explanation
 * logged at debug level.
 */
static int ctl_call(struct ibv_context *ctx, uint16_t type,
		    struct rxdp_ctl_obj *o, const struct rxdp_ah *ah, int in_fd,
		    int *fd)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	int ret;

	rxdp_ctx_ctl_lock(c);
	ret = in_fd >= 0 ? rxdp_ctl_obj_fd(c->ctl, type, o, in_fd)
			 : rxdp_ctl_obj(c->ctl, type, o, ah, fd);
	if (ret)
		pr_debug("rxdp: %s: %s\n", rxdp_ctl_type_name(type),
			 rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	errno = -ret;
	return -ret;
}

int obj_call(struct ibv_context *ctx, uint16_t type, struct rxdp_ctl_obj *o,
	     const struct rxdp_ah *ah, int *fd)
{
	return ctl_call(ctx, type, o, ah, -1, fd);
}

int obj_call_fd(struct ibv_context *ctx, uint16_t type, struct rxdp_ctl_obj *o,
		int in_fd)
{
	return ctl_call(ctx, type, o, NULL, in_fd, NULL);
}
