// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The client side of rxdpd's control socket (API in ctl_client.h, wire
 * format in ctl.h). One request, one reply; calls are not thread-safe on the
 * same struct rxdp_ctl (the verbs library serialises them per context).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/ctl_cm.h"

struct rxdp_ctl {
	int fd;
	__u32 seq;
	char err[512]; /* a reply's RXDP_CTL_A_MSG, or our own */
	/* events that arrived while a call waited for its reply */
	struct rxdp_ctl_event evq[RXDP_CTL_EVENT_QUEUE];
	unsigned int evq_head, evq_len, evq_dropped;
	/* one buffer for the request, one for the reply; 8-byte aligned */
	__u64 req[RXDP_CTL_MSG_MAX / 8];
	__u64 rep[RXDP_CTL_MSG_MAX / 8];
};

struct rxdp_ctl *rxdp_ctl_connect(const char *path)
{
	struct sockaddr_un sun;
	unsigned int sunlen;
	struct rxdp_ctl *c;
	int err;

	if (!path)
		/*
		 * not in a set-user-ID program: a socket of the caller's
		 * would be handed that program's /proc/self/mem
		 */
		path = secure_getenv(RXDP_CTL_ENV);
	err = rxdp_ctl_sockaddr(path, &sun, &sunlen);
	if (err) {
		errno = -err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto err_free;
	if (connect(c->fd, (struct sockaddr *)&sun, sunlen) < 0)
		goto err_close;
	return c;

err_close:
	err = errno;
	close(c->fd);
	errno = err;
err_free:
	err = errno;
	free(c);
	errno = err;
	return NULL;
}

void rxdp_ctl_close(struct rxdp_ctl *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

const char *rxdp_ctl_strerror(struct rxdp_ctl *c)
{
	return c && c->err[0] ? c->err : "";
}

int rxdp_ctl_fd(struct rxdp_ctl *c)
{
	return c ? c->fd : -1;
}

static void event_push(struct rxdp_ctl *c, const struct rxdp_ctl_msg *msg)
{
	const struct nlattr *a = msg->tb[RXDP_CTL_A_EVENT];
	unsigned int tail;

	if (msg->nlh->nlmsg_type != RXDP_CTL_EVENT || !a)
		return;
	if (c->evq_len == RXDP_CTL_EVENT_QUEUE) {
		/* full: the oldest goes */
		c->evq_head = (c->evq_head + 1) % RXDP_CTL_EVENT_QUEUE;
		c->evq_len--;
		c->evq_dropped++;
	}
	tail = (c->evq_head + c->evq_len) % RXDP_CTL_EVENT_QUEUE;
	memcpy(&c->evq[tail], mnl_attr_get_payload(a), sizeof(c->evq[tail]));
	c->evq[tail].dropped = 0;
	c->evq_len++;
}

static struct nlmsghdr *req_start(struct rxdp_ctl *c, __u16 type)
{
	c->err[0] = '\0';
	if (++c->seq == 0)
		c->seq = 1;
	return rxdp_ctl_msg_start(c->req, type, 0, c->seq, 0);
}

/*
 * Send the request in c->req with fds, wait for its reply (skipping
 * notifications), decode it into *msg. Returns the daemon's error or a
 * local -errno; fds received come back in rfds (closed on any error).
 */
static int call_fds(struct rxdp_ctl *c, struct rxdp_ctl_msg *msg,
		    const int *fds, int nfds, int *rfds, int *nrfds,
		    int maxrfds)
{
	const struct nlmsghdr *req = (const struct nlmsghdr *)c->req;
	int tmpfds[RXDP_CTL_MAX_FDS];
	int n_fds = 0, err, i;
	ssize_t n;

	if (nrfds)
		*nrfds = 0;
	err = rxdp_ctl_sendmsg(c->fd, req, fds, nfds);
	if (err) {
		snprintf(c->err, sizeof(c->err), "cannot send to rxdpd: %s",
			 strerror(-err));
		return err;
	}
	for (;;) {
		n = rxdp_ctl_recvmsg(c->fd, c->rep, sizeof(c->rep), tmpfds,
				     &n_fds, RXDP_CTL_MAX_FDS);
		if (n == 0) {
			snprintf(c->err, sizeof(c->err),
				 "rxdpd closed the connection");
			return -ECONNRESET;
		}
		if (n < 0) {
			snprintf(c->err, sizeof(c->err),
				 "cannot receive from rxdpd: %s",
				 strerror((int)-n));
			return (int)n;
		}
		err = rxdp_ctl_decode(c->rep, n, msg, 1);
		if (err) {
			snprintf(c->err, sizeof(c->err),
				 "malformed reply from rxdpd (%s)",
				 err == -EPROTO ? "protocol version mismatch"
						: "bad lengths");
			goto err_fds;
		}
		if (msg->nlh->nlmsg_flags & RXDP_CTL_F_NOTIFY)
			event_push(c, msg);
		if (msg->nlh->nlmsg_flags & RXDP_CTL_F_NOTIFY ||
		    msg->nlh->nlmsg_seq != req->nlmsg_seq) {
			for (i = 0; i < n_fds; i++)
				close(tmpfds[i]);
			continue;
		}
		break;
	}
	if (msg->tb[RXDP_CTL_A_MSG])
		snprintf(c->err, sizeof(c->err), "%s",
			 mnl_attr_get_str(msg->tb[RXDP_CTL_A_MSG]));
	err = msg->hdr->error;
	if (err > 0 || err < -4095)
		err = -EPROTO;
	if (err && !c->err[0])
		snprintf(c->err, sizeof(c->err), "%s", strerror(-err));
	if (err)
		goto err_fds;
	if (n_fds > maxrfds) {
		snprintf(c->err, sizeof(c->err),
			 "rxdpd sent %d file descriptors, expected at most %d",
			 n_fds, maxrfds);
		err = -EPROTO;
		goto err_fds;
	}
	for (i = 0; i < n_fds; i++)
		rfds[i] = tmpfds[i];
	if (nrfds)
		*nrfds = n_fds;
	return 0;

err_fds:
	for (i = 0; i < n_fds; i++)
		close(tmpfds[i]);
	return err;
}

static int call(struct rxdp_ctl *c, struct rxdp_ctl_msg *msg)
{
	return call_fds(c, msg, NULL, 0, NULL, NULL, 0);
}

static int missing(struct rxdp_ctl *c, const char *what)
{
	snprintf(c->err, sizeof(c->err), "rxdpd's reply lacks %s", what);
	return -EPROTO;
}

static void put_u32(struct rxdp_ctl *c, __u16 type, __u32 v)
{
	mnl_attr_put_u32((struct nlmsghdr *)c->req, type, v);
}

int rxdp_ctl_list_devices(struct rxdp_ctl *c, struct rxdp_dev_info *out,
			  int max)
{
	struct rxdp_ctl_msg msg;
	const struct nlattr *a;
	int err, n = 0;

	req_start(c, RXDP_CTL_LIST_DEVICES);
	err = call(c, &msg);
	if (err)
		return err;
	mnl_attr_for_each (a, msg.nlh, sizeof(struct rxdp_ctl_hdr)) {
		if (mnl_attr_get_type(a) != RXDP_CTL_A_DEV_INFO)
			continue;
		if (n < max)
			memcpy(&out[n], mnl_attr_get_payload(a), sizeof(*out));
		n++;
	}
	return n < max ? n : max;
}

int rxdp_ctl_query_device(struct rxdp_ctl *c, __u32 ifindex,
			  struct rxdp_dev_info *out)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_QUERY_DEVICE);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	err = call(c, &msg);
	if (err)
		return err;
	if (!msg.tb[RXDP_CTL_A_DEV_INFO])
		return missing(c, "the device");
	memcpy(out, mnl_attr_get_payload(msg.tb[RXDP_CTL_A_DEV_INFO]),
	       sizeof(*out));
	return 0;
}

int rxdp_ctl_query_gid(struct rxdp_ctl *c, __u32 ifindex, __u32 index,
		       struct rxdp_gid_entry *out)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_QUERY_GID);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	put_u32(c, RXDP_CTL_A_INDEX, index);
	err = call(c, &msg);
	if (err)
		return err;
	if (!msg.tb[RXDP_CTL_A_GID])
		return missing(c, "the GID");
	memcpy(out, mnl_attr_get_payload(msg.tb[RXDP_CTL_A_GID]), sizeof(*out));
	return 0;
}

int rxdp_ctl_query_pkey(struct rxdp_ctl *c, __u32 ifindex, __u32 index,
			__u16 *pkey)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_QUERY_PKEY);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	put_u32(c, RXDP_CTL_A_INDEX, index);
	err = call(c, &msg);
	if (err)
		return err;
	if (!msg.tb[RXDP_CTL_A_PKEY])
		return missing(c, "the P_Key");
	*pkey = (__u16)mnl_attr_get_u32(msg.tb[RXDP_CTL_A_PKEY]);
	return 0;
}

int rxdp_ctl_resolve(struct rxdp_ctl *c, __u32 ifindex,
		     const struct rxdp_ah *ah, struct rxdp_path *out)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_RESOLVE);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	mnl_attr_put((struct nlmsghdr *)c->req, RXDP_CTL_A_AH, sizeof(*ah), ah);
	err = call(c, &msg);
	if (err)
		return err;
	if (!msg.tb[RXDP_CTL_A_PATH])
		return missing(c, "the path");
	memcpy(out, mnl_attr_get_payload(msg.tb[RXDP_CTL_A_PATH]),
	       sizeof(*out));
	return 0;
}

static int qp_info_reply(struct rxdp_ctl *c, struct rxdp_ctl_msg *msg,
			 struct rxdp_qp_info *info)
{
	if (!info)
		return 0;
	if (!msg->tb[RXDP_CTL_A_QP_INFO])
		return missing(c, "the QP");
	memcpy(info, mnl_attr_get_payload(msg->tb[RXDP_CTL_A_QP_INFO]),
	       sizeof(*info));
	return 0;
}

int rxdp_ctl_modify_qp(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
		       const struct rxdp_qp_attr *attr, __u32 attr_mask,
		       struct rxdp_qp_info *info)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_MODIFY_QP);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	put_u32(c, RXDP_CTL_A_QPN, qpn);
	put_u32(c, RXDP_CTL_A_ATTR_MASK, attr_mask);
	mnl_attr_put((struct nlmsghdr *)c->req, RXDP_CTL_A_QP_ATTR,
		     sizeof(*attr), attr);
	err = call(c, &msg);
	if (err)
		return err;
	return qp_info_reply(c, &msg, info);
}

int rxdp_ctl_query_qp(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
		      struct rxdp_qp_info *info)
{
	struct rxdp_ctl_msg msg;
	int err;

	req_start(c, RXDP_CTL_QUERY_QP);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	put_u32(c, RXDP_CTL_A_QPN, qpn);
	err = call(c, &msg);
	if (err)
		return err;
	return qp_info_reply(c, &msg, info);
}

int rxdp_ctl_ctx_open(struct rxdp_ctl *c, __u32 ifindex, int mem_fd,
		      struct rxdp_ctx_fds *out)
{
	int fds[RXDP_CTL_MAX_FDS], nfds = 0, err, i;
	struct rxdp_ctl_msg msg;

	req_start(c, RXDP_CTL_CTX_OPEN);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	err = call_fds(c, &msg, &mem_fd, 1, fds, &nfds, RXDP_CTL_MAX_FDS);
	if (err)
		return err;
	if (nfds != 3) {
		snprintf(c->err, sizeof(c->err),
			 "rxdpd sent %d descriptors for a context, not 3",
			 nfds);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return -EPROTO;
	}
	out->doorbell = fds[0];
	out->dev_page = fds[1];
	out->async = fds[2];
	return 0;
}

/*
 * A request of one struct attribute (and the AH, if any) whose reply is
 * the same attribute and perhaps an fd: *p becomes the reply's.
 */
static int struct_call(struct rxdp_ctl *c, __u16 type, __u16 attr, void *p,
		       size_t len, const struct rxdp_ah *ah, int in_fd, int *fd,
		       const char *what)
{
	int fds[RXDP_CTL_MAX_FDS], nfds = 0, err, i;
	struct rxdp_ctl_msg msg;

	if (fd)
		*fd = -1;
	req_start(c, type);
	mnl_attr_put((struct nlmsghdr *)c->req, attr, len, p);
	if (ah)
		mnl_attr_put((struct nlmsghdr *)c->req, RXDP_CTL_A_AH,
			     sizeof(*ah), ah);
	err = call_fds(c, &msg, &in_fd, in_fd >= 0 ? 1 : 0, fds, &nfds, 1);
	if (err)
		return err;
	if (!msg.tb[attr]) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return missing(c, what);
	}
	memcpy(p, mnl_attr_get_payload(msg.tb[attr]), len);
	if (nfds && fd)
		*fd = fds[0];
	else if (nfds)
		close(fds[0]);
	return 0;
}

int rxdp_ctl_obj(struct rxdp_ctl *c, __u16 type, struct rxdp_ctl_obj *o,
		 const struct rxdp_ah *ah, int *fd)
{
	return struct_call(c, type, RXDP_CTL_A_OBJ, o, sizeof(*o), ah, -1, fd,
			   "the object");
}

int rxdp_ctl_obj_fd(struct rxdp_ctl *c, __u16 type, struct rxdp_ctl_obj *o,
		    int in_fd)
{
	return struct_call(c, type, RXDP_CTL_A_OBJ, o, sizeof(*o), NULL, in_fd,
			   NULL, "the object");
}

int rxdp_ctl_list_qps_stats(struct rxdp_ctl *c, __u32 ifindex,
			    struct rxdp_qp_info *out,
			    struct rxdp_ctl_qp_stats *stats, int max)
{
	__u32 start_ifindex = 0, start_qpn = 0;
	int n = 0, err;

	/* The daemon answers in pages; ask again after the last QP seen */
	for (;;) {
		struct rxdp_ctl_msg msg;
		const struct nlattr *a;
		int ni = n, ns = n, more;

		req_start(c, RXDP_CTL_LIST_QPS);
		put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
		if (start_qpn) {
			put_u32(c, RXDP_CTL_A_QPN, start_qpn);
			put_u32(c, RXDP_CTL_A_INDEX, start_ifindex);
		}
		err = call(c, &msg);
		if (err)
			return err;
		mnl_attr_for_each (a, msg.nlh, sizeof(struct rxdp_ctl_hdr)) {
			unsigned int t = mnl_attr_get_type(a);

			if (t == RXDP_CTL_A_QP_INFO) {
				if (out && ni < max)
					memcpy(&out[ni],
					       mnl_attr_get_payload(a),
					       sizeof(*out));
				ni++;
			} else if (t == RXDP_CTL_A_QP_STATS) {
				struct rxdp_ctl_qp_stats s;

				memcpy(&s, mnl_attr_get_payload(a), sizeof(s));
				if (stats && ns < max)
					stats[ns] = s;
				ns++;
				start_ifindex = s.ifindex;
				start_qpn = s.qpn;
			}
		}
		more = msg.tb[RXDP_CTL_A_MORE] &&
		       mnl_attr_get_u32(msg.tb[RXDP_CTL_A_MORE]);
		if (ni != ns)
			return missing(c, "per-QP statistics");
		if (!more || ni == n || ni >= max)
			return ni < max ? ni : max;
		n = ni;
	}
}

int rxdp_ctl_list_qps(struct rxdp_ctl *c, __u32 ifindex,
		      struct rxdp_qp_info *out, int max)
{
	return rxdp_ctl_list_qps_stats(c, ifindex, out, NULL, max);
}

/* A request answered with COUNTERS (qpn 0: none in the request) */
static int counters_call(struct rxdp_ctl *c, __u16 type, __u32 ifindex,
			 __u32 qpn, __u64 *counters, int max)
{
	struct rxdp_ctl_msg msg;
	const struct nlattr *a;
	int err, n;

	req_start(c, type);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	if (qpn)
		put_u32(c, RXDP_CTL_A_QPN, qpn);
	err = call(c, &msg);
	if (err)
		return err;
	a = msg.tb[RXDP_CTL_A_COUNTERS];
	if (!a)
		return missing(c, "the counters");
	n = mnl_attr_get_payload_len(a) / sizeof(__u64);
	memcpy(counters, mnl_attr_get_payload(a),
	       sizeof(__u64) * (n < max ? n : max));
	return n;
}

int rxdp_ctl_query_stats(struct rxdp_ctl *c, __u32 ifindex, __u64 *counters,
			 int max)
{
	return counters_call(c, RXDP_CTL_QUERY_STATS, ifindex, 0, counters,
			     max);
}

int rxdp_ctl_query_counters(struct rxdp_ctl *c, __u32 ifindex, __u32 qpn,
			    __u64 *counters, int max)
{
	return counters_call(c, RXDP_CTL_QUERY_COUNTERS, ifindex, qpn, counters,
			     max);
}

int rxdp_ctl_subscribe(struct rxdp_ctl *c, __u32 ifindex)
{
	struct rxdp_ctl_msg msg;

	req_start(c, RXDP_CTL_SUBSCRIBE);
	put_u32(c, RXDP_CTL_A_IFINDEX, ifindex);
	return call(c, &msg);
}

int rxdp_ctl_get_event(struct rxdp_ctl *c, struct rxdp_ctl_event *ev)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		struct rxdp_ctl_msg msg;
		int fds[RXDP_CTL_MAX_FDS], nfds = 0, i;
		ssize_t n;

		if (c->evq_len) {
			*ev = c->evq[c->evq_head];
			ev->dropped = c->evq_dropped;
			c->evq_dropped = 0;
			c->evq_head = (c->evq_head + 1) % RXDP_CTL_EVENT_QUEUE;
			c->evq_len--;
			return 1;
		}
		/* a readable SOCK_SEQPACKET socket holds a whole message */
		if (poll(&pfd, 1, 0) <= 0)
			return 0;
		if (pfd.revents & (POLLHUP | POLLERR) &&
		    !(pfd.revents & POLLIN))
			return -ECONNRESET;
		n = rxdp_ctl_recvmsg(c->fd, c->rep, sizeof(c->rep), fds, &nfds,
				     RXDP_CTL_MAX_FDS);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return (int)n;
		if (!rxdp_ctl_decode(c->rep, n, &msg, 1) &&
		    msg.nlh->nlmsg_flags & RXDP_CTL_F_NOTIFY)
			event_push(c, &msg);
		/* anything else (a stray reply) is dropped */
	}
}

int rxdp_ctl_cm(struct rxdp_ctl *c, struct rxdp_ctl_cm *cm, int *fd)
{
	return struct_call(c, RXDP_CTL_CM, RXDP_CTL_A_CM, cm, sizeof(*cm), NULL,
			   -1, fd, "the CM reply");
}
