// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rdma_getaddrinfo(): getaddrinfo(3) for RDMA endpoints, with rdma-core's
 * rules for what hints mean (RAI_PASSIVE: the source, else the destination;
 * the port space says TCP or UDP, the QP type stream or datagram). IP
 * addresses only: rxdp has no IB SA, no ibacm, no AF_IB.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>

static int to_ai_hints(const struct rdma_addrinfo *r, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	if (r->ai_flags & RAI_PASSIVE)
		ai->ai_flags = AI_PASSIVE;
	if (r->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if ((r->ai_flags & RAI_FAMILY) && r->ai_family != AF_INET &&
	    r->ai_family != AF_INET6)
		return EAI_FAMILY; /* AF_IB: no such addresses here */
	ai->ai_family = r->ai_family == AF_INET || r->ai_family == AF_INET6
				? r->ai_family
				: AF_UNSPEC;
	switch (r->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	}
	switch (r->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		ai->ai_protocol = ai->ai_socktype == SOCK_DGRAM ? IPPROTO_UDP
								: IPPROTO_TCP;
		break;
	}
	if (ai->ai_protocol && !ai->ai_socktype)
		ai->ai_socktype = ai->ai_protocol == IPPROTO_UDP ? SOCK_DGRAM
								 : SOCK_STREAM;
	return 0;
}

static int copy_addr(struct sockaddr **dst, socklen_t *dst_len,
		     const struct sockaddr *src, socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return EAI_MEMORY;
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

static int from_ai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *h,
		   const struct addrinfo *ai)
{
	if (h->ai_qp_type)
		rai->ai_qp_type = h->ai_qp_type;
	else
		rai->ai_qp_type = ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD
								: IBV_QPT_RC;
	if (h->ai_port_space)
		rai->ai_port_space = h->ai_port_space;
	else
		rai->ai_port_space = ai->ai_protocol == IPPROTO_UDP
					     ? RDMA_PS_UDP
					     : RDMA_PS_TCP;
	rai->ai_family = ai->ai_family;
	if (ai->ai_flags & AI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		if (ai->ai_canonname)
			rai->ai_src_canonname = strdup(ai->ai_canonname);
		return copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				 ai->ai_addr, ai->ai_addrlen);
	}
	if (ai->ai_canonname)
		rai->ai_dst_canonname = strdup(ai->ai_canonname);
	return copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr,
			 ai->ai_addrlen);
}

int rdma_getaddrinfo(const char *node, const char *service,
		     const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	static const struct rdma_addrinfo nohints;
	struct rdma_addrinfo *rai;
	int ret = 0;

	if (!res || (!service && !node && !hints)) {
		errno = EINVAL;
		return -1;
	}
	rai = calloc(1, sizeof(*rai));
	if (!rai) {
		errno = ENOMEM;
		return -1;
	}
	if (!hints)
		hints = &nohints;
	if (node || service) {
		struct addrinfo aih, *ai;

		ret = to_ai_hints(hints, &aih);
		if (!ret)
			ret = getaddrinfo(node, service,
					  hints == &nohints ? NULL : &aih, &ai);
		if (!ret) {
			ret = from_ai(rai, hints, ai);
			freeaddrinfo(ai);
		}
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
					hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (!ret && !rai->ai_src_len && hints->ai_src_len)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				hints->ai_src_addr, hints->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *rai = res;

		res = res->ai_next;
		free(rai->ai_connect);
		free(rai->ai_route);
		free(rai->ai_src_canonname);
		free(rai->ai_dst_canonname);
		free(rai->ai_src_addr);
		free(rai->ai_dst_addr);
		free(rai);
	}
}
