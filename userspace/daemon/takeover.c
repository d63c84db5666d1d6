// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdpd handed to a successor (README.md, "Restarts without ending a
 * connection"; issue 43). A new rxdpd started with --takeover connects to
 * the running one's control socket and asks (RXDP_CTL_TAKEOVER, the state
 * version it reads). The running one answers only root and its own user,
 * and only a successor that reads the version it writes; what it cannot
 * hand over yet it names in one line and goes on serving, untouched. Else
 * it halts every engine at the end of a pass, writes its state (records,
 * takeover.h) and sends it with its descriptors (SCM_RIGHTS, in chunks),
 * and exits without tearing anything down: the XDP program, the pinned
 * maps, the AF_XDP sockets, the UMEM and the clients' connections live on
 * in the successor's descriptors. The successor starts from that state
 * (tko_state) as from nothing else: the listening socket adopted, not
 * bound; each device's data path adopted, not made; the clients'
 * connections watched again. A connection made meanwhile waits in the
 * listening socket's queue; packets that come meanwhile wait in the
 * sockets' RX rings, or are lost and recovered by the transport.
 *
 * What it hands over so far: the control socket, clients without a verbs
 * context or CM ids, and every device's data path (UMEM, AF_XDP sockets,
 * engines, the device pages clients map, the device's counters). A client
 * with a context or CM ids makes it refuse (not built yet).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"

#define TKO_MAGIC 0x4b545852U /* "RXTK" */
#define TKO_CHUNK 60000 /* state bytes a message */
#define TKO_CHUNK_FDS 250 /* descriptors a message (SCM_MAX_FD is 253) */
#define TKO_SEND_TIMEOUT_S 5

/* A message of the handover, after the accepting reply */
struct tko_chunk {
	uint32_t magic;
	uint32_t last; /* the state's last message */
};

/* --- the running rxdpd's side -------------------------------------------- */

/* What keeps this rxdpd from handing over, in msg; 0 if nothing */
static int takeover_refusal(const struct rxdp_client *taker, char *msg,
			    size_t msglen)
{
	int pend = 0, err;

	for (const struct rxdp_client *c = rxdpd.clients; c; c = c->next)
		if (c != taker && !c->dead)
			pend += !!c->pend;
	err = cm_tko_refusal(msg, msglen);
	if (err)
		return err;
	if (pend) {
		snprintf(msg, msglen,
			 "%d request(s) wait for a neighbour: try again", pend);
		return -EAGAIN;
	}
	err = uverbs_tko_ctx_refusal(msg, msglen);
	return err ? err : uverbs_tko_refusal(msg, msglen);
}

/* Send the state in chunks, each with its share of the descriptors */
static int tko_send(int fd, const struct tko_out *o)
{
	size_t off = 0;
	int sent = 0;

	do {
		size_t n = o->len - off < TKO_CHUNK ? o->len - off : TKO_CHUNK;
		int nf = o->nfds - sent < TKO_CHUNK_FDS ? o->nfds - sent
							: TKO_CHUNK_FDS;
		struct tko_chunk h = { .magic = TKO_MAGIC,
				       .last = off + n == o->len &&
					       sent + nf == o->nfds };
		struct iovec iov[2] = { { &h, sizeof(h) },
					{ o->buf + off, n } };
		union {
			char b[CMSG_SPACE(TKO_CHUNK_FDS * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		if (nf) {
			struct cmsghdr *cm;

			mh.msg_control = u.b;
			mh.msg_controllen = CMSG_SPACE(nf * sizeof(int));
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(nf * sizeof(int));
			memcpy(CMSG_DATA(cm), o->fds + sent, nf * sizeof(int));
		}
		if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
			return -errno;
		off += n;
		sent += nf;
	} while (off < o->len || sent < o->nfds);
	return 0;
}

int takeover_give(struct rxdp_client *c, uint32_t version, uint32_t seq,
		  char *msg, size_t msglen)
{
	static __u64 rep[RXDP_CTL_MSG_MAX / 8];
	struct timeval tv = { .tv_sec = TKO_SEND_TIMEOUT_S };
	struct tko_out o = { 0 };
	struct tko_listen li;
	int err;

	if (c->uid != 0 && c->uid != geteuid()) {
		snprintf(msg, msglen,
			 "only root or rxdpd's own user may take it over");
		return -EPERM;
	}
	if (version != TKO_VERSION) {
		snprintf(msg, msglen,
			 "this rxdpd writes its state in version %u, the "
			 "successor reads version %u",
			 TKO_VERSION, version);
		return -EPROTO;
	}
	err = takeover_refusal(c, msg, msglen);
	if (err)
		return err;
	/* from here on there is no way back: the engines stop for good */
	pr_info("handing over to pid %d\n", (int)c->pid);
	uverbs_tko_halt();
	li.fd = tko_fd(&o, server_listen_fd());
	tko_add(&o, TKO_LISTEN, &li, sizeof(li));
	server_tko_save(&o, c);
	cm_tko_save(&o);
	uverbs_tko_save(&o);
	if (!uverbs_tko_save_ctxs(&o))
		o.failed = true;
	if (o.failed) {
		pr_err("cannot write the state for the successor: exiting; "
		       "every client loses its connection\n");
		_exit(1);
	}
	/* the successor reads it all or fails: it may block a while */
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	err = rxdp_ctl_sendmsg(c->fd,
			       rxdp_ctl_msg_start(rep, RXDP_CTL_TAKEOVER,
						  RXDP_CTL_F_REPLY, seq, 0),
			       NULL, 0);
	if (!err)
		err = tko_send(c->fd, &o);
	if (err) {
		pr_err("cannot send the state to the successor: %s; exiting, "
		       "every client loses its connection\n",
		       strerror(-err));
		_exit(1);
	}
	pr_info("handed over to pid %d (%zu bytes, %d descriptors): "
		"exiting\n",
		(int)c->pid, o.len, o.nfds);
	/* under systemd the successor is the service's main process now */
	snprintf(msg, msglen, "MAINPID=%d", (int)c->pid);
	rxdp_sd_notify(msg);
	_exit(0);
}

/* --- the successor's side --------------------------------------------- */

/* One message of the state: its bytes appended to st, its fds to in */
static int tko_recv(int fd, struct tko_in *in, uint8_t **st, size_t *cap,
		    bool *last)
{
	static uint8_t b[sizeof(struct tko_chunk) + TKO_CHUNK];
	union {
		char b[CMSG_SPACE(TKO_CHUNK_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { b, sizeof(b) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct tko_chunk h;
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int *f;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		f = realloc(in->fds, (size_t)(in->nfds + k) * sizeof(int));
		if (!f)
			return -ENOMEM;
		in->fds = f;
		memcpy(in->fds + in->nfds, CMSG_DATA(cm), k * sizeof(int));
		in->nfds += k;
	}
	if ((size_t)n < sizeof(h) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EBADMSG;
	memcpy(&h, b, sizeof(h));
	if (h.magic != TKO_MAGIC)
		return -EBADMSG;
	n -= sizeof(h);
	if (in->len + (size_t)n > *cap) {
		size_t c = *cap ? *cap : 65536;
		uint8_t *p;

		while (c < in->len + (size_t)n)
			c *= 2;
		p = realloc(*st, c);
		if (!p)
			return -ENOMEM;
		*st = p;
		*cap = c;
	}
	memcpy(*st + in->len, b + sizeof(h), (size_t)n);
	in->len += (size_t)n;
	*last = h.last;
	return 0;
}

int takeover_take(const char *path, struct tko_in *in)
{
	static __u64 buf[RXDP_CTL_MSG_MAX / 8];
	struct rxdp_ctl_msg m;
	struct sockaddr_un sun;
	struct nlmsghdr *nlh;
	struct ucred cred;
	socklen_t credlen = sizeof(cred);
	unsigned int sunlen;
	uint8_t *st = NULL;
	size_t cap = 0;
	bool last = false;
	int fd, err, nfds = 0;
	ssize_t n;

	memset(in, 0, sizeof(*in));
	err = rxdp_ctl_sockaddr(path, &sun, &sunlen);
	fd = err ? -1 : socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sunlen)) {
		pr_err("--takeover: no rxdpd answers on %s%s: %s\n",
		       path ? "" : "@", path ? path : RXDP_CTL_ABSTRACT_NAME,
		       strerror(err ? -err : errno));
		return 1;
	}
	/* the state is believed: only from root or this user's rxdpd */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		pr_err("--takeover: what listens on the control socket is not "
		       "root's or this user's rxdpd: not taking its state\n");
		close(fd);
		return 1;
	}
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_TAKEOVER, 0, 1, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_INDEX, TKO_VERSION);
	err = rxdp_ctl_sendmsg(fd, nlh, NULL, 0);
	n = err ? err : rxdp_ctl_recvmsg(fd, buf, sizeof(buf), NULL, &nfds, 0);
	if (n <= 0 || rxdp_ctl_decode(buf, (size_t)n, &m, 0)) {
		pr_err("--takeover: the running rxdpd does not answer "
		       "(%s)\n",
		       n < 0 ? strerror((int)-n) : "a bad reply");
		close(fd);
		return 1;
	}
	if (m.hdr->error) {
		const struct nlattr *a = m.tb[RXDP_CTL_A_MSG];

		pr_err("--takeover refused: %s\n",
		       a ? mnl_attr_get_str(a) : strerror(-m.hdr->error));
		close(fd);
		return 2;
	}
	while (!last) {
		err = tko_recv(fd, in, &st, &cap, &last);
		if (err) {
			pr_err("--takeover: the state came short (%s): the "
			       "running rxdpd's clients lost their "
			       "connections\n",
			       strerror(-err));
			close(fd);
			return 1;
		}
	}
	close(fd);
	in->buf = st;
	pr_info("took over: %zu bytes of state, %d descriptors\n", in->len,
		in->nfds);
	return 0;
}

void takeover_restore(void)
{
	cm_tko_restore(server_tko_client);
	uverbs_tko_restore(server_tko_client, client_release);
}

void takeover_done(struct tko_in *in)
{
	int left = 0;

	for (int i = 0; i < in->nfds; i++) {
		if (in->fds[i] < 0)
			continue;
		close(in->fds[i]);
		left++;
	}
	if (left)
		pr_warn("took over: %d descriptor(s) of the state were for "
			"nothing this rxdpd has (closed)\n",
			left);
	free((void *)in->buf);
	free(in->fds);
	memset(in, 0, sizeof(*in));
}
