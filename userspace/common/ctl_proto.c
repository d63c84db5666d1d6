// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Encoding and decoding of rxdpd control messages (see ctl.h), shared by the
 * daemon and the client library. The decoder is the daemon's first line of
 * defence against hostile clients: every length is checked before use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "common/ctl.h"
#include "common/ctl_cm.h"
#include "common/fdpass.h"

/* Policy: the exact size of each attribute (0: a NUL-terminated string) */
static const struct {
	size_t len;
	int list; /* may repeat in a list reply */
	int string;
	int var; /* variable: a multiple of len up to RXDP_CTL_MAX_COUNTERS */
} attr_policy[RXDP_CTL_A_MAX] = {
	[RXDP_CTL_A_MSG] = { .string = 1 },
	[RXDP_CTL_A_IFINDEX] = { sizeof(__u32) },
	[RXDP_CTL_A_INDEX] = { sizeof(__u32) },
	[RXDP_CTL_A_QPN] = { sizeof(__u32) },
	[RXDP_CTL_A_QP_TYPE] = { sizeof(__u32) },
	[RXDP_CTL_A_ATTR_MASK] = { sizeof(__u32) },
	[RXDP_CTL_A_PKEY] = { sizeof(__u32) },
	[RXDP_CTL_A_DEV_INFO] = { sizeof(struct rxdp_dev_info), .list = 1 },
	[RXDP_CTL_A_GID] = { sizeof(struct rxdp_gid_entry) },
	[RXDP_CTL_A_AH] = { sizeof(struct rxdp_ah) },
	[RXDP_CTL_A_PATH] = { sizeof(struct rxdp_path) },
	[RXDP_CTL_A_QP_ATTR] = { sizeof(struct rxdp_qp_attr) },
	[RXDP_CTL_A_QP_INFO] = { sizeof(struct rxdp_qp_info), .list = 1 },
	[RXDP_CTL_A_OBJ] = { sizeof(struct rxdp_ctl_obj) },
	[RXDP_CTL_A_QP_STATS] = { sizeof(struct rxdp_ctl_qp_stats), .list = 1 },
	[RXDP_CTL_A_COUNTERS] = { sizeof(__u64), .var = 1 },
	[RXDP_CTL_A_MORE] = { sizeof(__u32) },
	[RXDP_CTL_A_EVENT] = { sizeof(struct rxdp_ctl_event) },
	[RXDP_CTL_A_CM] = { sizeof(struct rxdp_ctl_cm) },
};

int rxdp_ctl_attr_check(const struct nlattr *attr)
{
	unsigned int type = mnl_attr_get_type(attr);
	size_t len = mnl_attr_get_payload_len(attr);

	if (type == RXDP_CTL_A_UNSPEC || type >= RXDP_CTL_A_MAX)
		return -EBADMSG;
	if (attr_policy[type].string) {
		if (len == 0 || len > 4096 ||
		    ((const char *)mnl_attr_get_payload(attr))[len - 1])
			return -EBADMSG;
		return 0;
	}
	if (attr_policy[type].var) {
		if (len == 0 || len % attr_policy[type].len ||
		    len / attr_policy[type].len > RXDP_CTL_MAX_COUNTERS)
			return -EBADMSG;
		return 0;
	}
	return len == attr_policy[type].len ? 0 : -EBADMSG;
}

struct decode_state {
	struct rxdp_ctl_msg *msg;
	int allow_lists;
	int err;
};

static int decode_attr_cb(const struct nlattr *attr, void *data)
{
	struct decode_state *st = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (rxdp_ctl_attr_check(attr)) {
		st->err = -EBADMSG;
		return MNL_CB_ERROR;
	}
	if (st->msg->tb[type] && !(st->allow_lists && attr_policy[type].list)) {
		st->err = -EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!st->msg->tb[type])
		st->msg->tb[type] = attr;
	return MNL_CB_OK;
}

int rxdp_ctl_decode(const void *buf, size_t len, struct rxdp_ctl_msg *msg,
		    int allow_lists)
{
	const struct nlmsghdr *nlh = buf;
	struct decode_state st = { .msg = msg, .allow_lists = allow_lists };
	size_t hdrlen =
		MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct rxdp_ctl_hdr));
	size_t off;

	memset(msg, 0, sizeof(*msg));
	if (!buf || len < hdrlen || len > RXDP_CTL_MSG_MAX)
		return -EBADMSG;
	if (nlh->nlmsg_len != len)
		return -EBADMSG;
	msg->nlh = nlh;
	msg->hdr = mnl_nlmsg_get_payload(nlh);
	if (msg->hdr->version != RXDP_CTL_VERSION)
		return -EPROTO;

	/*
	 * Walk the attributes by hand rather than with mnl_attr_parse() so
	 * that trailing bytes too short to be an attribute are an error, not
	 * silently ignored.
	 */
	off = hdrlen;
	while (off < len) {
		const struct nlattr *attr =
			(const struct nlattr *)((const char *)buf + off);
		size_t left = len - off;

		if (left < sizeof(struct nlattr) ||
		    attr->nla_len < sizeof(*attr) || attr->nla_len > left)
			return -EBADMSG;
		if (decode_attr_cb(attr, &st) != MNL_CB_OK)
			return st.err ? st.err : -EBADMSG;
		off += MNL_ALIGN(attr->nla_len);
	}
	return 0;
}

struct nlmsghdr *rxdp_ctl_msg_start(void *buf, __u16 type, __u16 flags,
				    __u32 seq, __s32 error)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rxdp_ctl_hdr *hdr;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	hdr = mnl_nlmsg_put_extra_header(nlh, sizeof(*hdr));
	hdr->version = RXDP_CTL_VERSION;
	hdr->error = error;
	return nlh;
}

int rxdp_ctl_sendmsg(int fd, const struct nlmsghdr *nlh, const int *fds,
		     int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * RXDP_CTL_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)nlh, nlh->nlmsg_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds < 0 || nfds > RXDP_CTL_MAX_FDS)
		return -EINVAL;
	rxdp_msg_put_fds(&mh, u.buf, fds, nfds);
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)nlh->nlmsg_len ? 0 : -EMSGSIZE;
}

ssize_t rxdp_ctl_recvmsg(int fd, void *buf, size_t len, int *fds, int *nfds,
			 int maxfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (RXDP_CTL_MAX_FDS + 8))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int got = 0, bad = 0;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int *p, k, cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		p = (int *)CMSG_DATA(cm);
		for (k = 0; k < cnt; k++) {
			int f;

			memcpy(&f, p + k, sizeof(f));
			if (got < maxfds && fds) {
				fds[got++] = f;
			} else {
				close(f);
				bad = 1;
			}
		}
	}
	if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		while (got > 0)
			close(fds[--got]);
		return -EMSGSIZE;
	}
	*nfds = got;
	return n;
}

int rxdp_ctl_sockaddr(const char *path, struct sockaddr_un *sun,
		      unsigned int *sunlen)
{
	size_t l;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (!path || !*path)
		path = "@" RXDP_CTL_ABSTRACT_NAME;
	l = strlen(path);
	if (l >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	if (path[0] == '@') {
		/* abstract: the name is the bytes after the NUL, no terminator */
		memcpy(sun->sun_path + 1, path + 1, l - 1);
		*sunlen = offsetof(struct sockaddr_un, sun_path) + l;
	} else {
		memcpy(sun->sun_path, path, l);
		*sunlen = offsetof(struct sockaddr_un, sun_path) + l + 1;
	}
	return 0;
}

const char *rxdp_ctl_type_name(unsigned int type)
{
	static const char *const names[] = {
		[RXDP_CTL_LIST_DEVICES] = "list_devices",
		[RXDP_CTL_QUERY_DEVICE] = "query_device",
		[RXDP_CTL_QUERY_GID] = "query_gid",
		[RXDP_CTL_QUERY_PKEY] = "query_pkey",
		[RXDP_CTL_RESOLVE] = "resolve",
		[RXDP_CTL_CREATE_QP] = "create_qp",
		[RXDP_CTL_MODIFY_QP] = "modify_qp",
		[RXDP_CTL_QUERY_QP] = "query_qp",
		[RXDP_CTL_DESTROY_QP] = "destroy_qp",
		[RXDP_CTL_CTX_OPEN] = "ctx_open",
		[RXDP_CTL_LIST_QPS] = "list_qps",
		[RXDP_CTL_QUERY_STATS] = "query_stats",
		[RXDP_CTL_SUBSCRIBE] = "subscribe",
		[RXDP_CTL_EVENT] = "event",
		[RXDP_CTL_PD_ALLOC] = "pd_alloc",
		[RXDP_CTL_PD_FREE] = "pd_free",
		[RXDP_CTL_MR_REG] = "mr_reg",
		[RXDP_CTL_MR_REREG] = "mr_rereg",
		[RXDP_CTL_MR_DEREG] = "mr_dereg",
		[RXDP_CTL_CHANNEL_CREATE] = "channel_create",
		[RXDP_CTL_CHANNEL_DESTROY] = "channel_destroy",
		[RXDP_CTL_CQ_CREATE] = "cq_create",
		[RXDP_CTL_CQ_RESIZE] = "cq_resize",
		[RXDP_CTL_CQ_DESTROY] = "cq_destroy",
		[RXDP_CTL_SRQ_CREATE] = "srq_create",
		[RXDP_CTL_SRQ_MODIFY] = "srq_modify",
		[RXDP_CTL_SRQ_DESTROY] = "srq_destroy",
		[RXDP_CTL_QP_CREATE] = "qp_create",
		[RXDP_CTL_QP_DESTROY] = "qp_destroy",
		[RXDP_CTL_AH_CREATE] = "ah_create",
		[RXDP_CTL_AH_DESTROY] = "ah_destroy",
		[RXDP_CTL_MW_ALLOC] = "mw_alloc",
		[RXDP_CTL_MW_DEALLOC] = "mw_dealloc",
		[RXDP_CTL_QUERY_COUNTERS] = "query_counters",
		[RXDP_CTL_CM] = "cm",
		[RXDP_CTL_MEM_SHARE] = "mem_share",
		[RXDP_CTL_MEM_UNSHARE] = "mem_unshare",
		[RXDP_CTL_MCAST_ATTACH] = "mcast_attach",
		[RXDP_CTL_MCAST_DETACH] = "mcast_detach",
		[RXDP_CTL_TAKEOVER] = "takeover",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}
