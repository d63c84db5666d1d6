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
 * What it hands over: the control socket, the clients with their verbs
 * contexts, objects and CM ids, and every device's data path (UMEM,
 * AF_XDP sockets, engines, the device pages clients map, the device's
 * counters); what it refuses, takeover_refusal() says. The same state
 * goes through systemd's file descriptor store at a stop (--fdstore),
 * for the next rxdpd the unit starts (the end of this file).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include <libmnl/libmnl.h>

#include "common/log.h"
#include "common/fdpass.h"
#include "common/sdnotify.h"
#include "daemon/loop.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"

#define TKO_MAGIC 0x4b545852U /* "RXTK" */
#define TKO_CHUNK 60000 /* state bytes a message */
#define TKO_CHUNK_FDS 250 /* descriptors a message (SCM_MAX_FD is 253) */
#define TKO_SEND_TIMEOUT_S 5
#define TKO_SERVING_TIMEOUT_S 30 /* for the successor to say it serves */
#define TKO_REPARENT_MS 100 /* for its parent to be gone, at once */
#define TKO_REPARENT_TICKS (20000 / LOOP_TICK_MS) /* then from the loop */
#define TKO_NAME_BARRIER_MS 2000 /* for systemd to read a MAINPID= */

/* A message of the handover, after the accepting reply */
struct tko_chunk {
	uint32_t magic;
	uint32_t last; /* the state's last message */
};

/* --- the running rxdpd's side -------------------------------------------- */

void takeover_urgent(bool on)
{
	struct sched_param sp = { .sched_priority = on ? rxdpd.fifo_prio : 0 };

	if (rxdpd.fifo_prio)
		sched_setscheduler(
			0, on ? SCHED_FIFO | SCHED_RESET_ON_FORK : SCHED_OTHER,
			&sp);
}

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

/*
 * Halt every engine and write the state (every client's but the taker's):
 * from here on there is no way back, the engines stop for good; exits if
 * the state cannot be written
 */
static void tko_collect(struct tko_out *o, const struct rxdp_client *taker)
{
	struct tko_listen li;

	takeover_urgent(true);
	uverbs_tko_halt();
	li.fd = tko_fd(o, server_listen_fd());
	tko_add(o, TKO_LISTEN, &li, sizeof(li));
	server_tko_save(o, taker);
	cm_tko_save(o);
	uverbs_tko_save(o);
	if (!uverbs_tko_save_ctxs(o))
		o->failed = true;
	if (o->failed) {
		pr_err("cannot write the state for the successor: exiting; "
		       "every client loses its connection\n");
		_exit(1);
	}
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

		rxdp_msg_put_fds(&mh, u.b, o->fds + sent, nf);
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
	char ack;
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
	pr_info("handing over to pid %d\n", (int)c->pid);
	tko_collect(&o, c);
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
	/* its sockets now the successor's alone (Linux before 6.4 binds
	 * their queues again) */
	uverbs_tko_let_go();
	/* It says when it serves and its parent (systemd's ExecReload) is
	 * gone: made systemd's main process only then, it is systemd's child
	 * (reparented), whose stop systemd waits for; else systemd kills it
	 * 10 ms after its SIGTERM, before it can hand over (--fdstore). A
	 * successor that says nothing (an older one, or one that failed) is
	 * not waited for longer than it may take. */
	tv.tv_sec = TKO_SERVING_TIMEOUT_S;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recv(c->fd, &ack, 1, 0) != 1)
		pr_warn("the successor did not say it serves\n");
	pr_info("handed over to pid %d (%zu bytes, %d descriptors): "
		"exiting\n",
		(int)c->pid, o.len, o.nfds);
	/* under systemd the successor is the service's main process now */
	snprintf(msg, msglen, "MAINPID=%d", (int)c->pid);
	rxdp_sd_notify(msg);
	_exit(0);
}

/* --- the successor's side --------------------------------------------- */

/* The predecessor, until told this one serves; this one's parent then */
static int tko_peer = -1;
static pid_t tko_parent;

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
	/* the engines halt once it is answered: the dark time begins */
	takeover_urgent(true);
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
	/* kept to say when this one serves (takeover_serving()) */
	tko_peer = fd;
	tko_parent = getppid();
	in->buf = st;
	pr_info("took over: %zu bytes of state, %d descriptors\n", in->len,
		in->nfds);
	return 0;
}

/*
 * An rxdpd from before the successor's ack (fa29202) exits without
 * waiting for it, having named this one the unit's main process while it
 * was not systemd's child yet: systemd takes it for an alien then (it
 * kills it 10 ms after its SIGTERM at the next stop, before it stores
 * anything), and MAINPID= naming the main process again changes nothing.
 * So this one names a child of its own for a moment, then itself, now
 * that it is systemd's child (reparented): a main process systemd waits
 * for, as after a takeover from an rxdpd of this version. The child lives
 * until systemd has read both (BARRIER=1): one gone before systemd read
 * its name is refused ("does not exist or is a zombie"), and the second
 * name is the main process's again.
 */
static void takeover_main_again(void)
{
	char msg[32];
	pid_t c = fork();

	if (c == 0) {
		pause();
		_exit(0);
	}
	pr_info("--takeover: the predecessor did not wait to hear this one "
		"serves: naming this one systemd's main process again\n");
	if (c > 0) {
		snprintf(msg, sizeof(msg), "MAINPID=%d", (int)c);
		rxdp_sd_notify(msg);
		rxdp_sd_barrier(TKO_NAME_BARRIER_MS);
	}
	snprintf(msg, sizeof(msg), "MAINPID=%d", (int)getpid());
	rxdp_sd_notify(msg);
	rxdp_sd_barrier(TKO_NAME_BARRIER_MS);
	if (c > 0) {
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
	}
}

/* The predecessor told this one serves (or, gone, systemd) */
static void takeover_tell(void)
{
	if (send(tko_peer, "1", 1, MSG_NOSIGNAL) != 1 &&
	    getenv("NOTIFY_SOCKET"))
		takeover_main_again();
	close(tko_peer);
	tko_peer = -1;
}

/* Each tick until its parent is gone (TKO_REPARENT_TICKS at most) */
static void takeover_tell_tick(void)
{
	static int ticks;

	if (tko_peer >= 0 &&
	    (getppid() != tko_parent || ++ticks >= TKO_REPARENT_TICKS))
		takeover_tell();
}

void takeover_serving(void)
{
	static struct loop_hook tick = { takeover_tell_tick };
	const struct timespec ms = { .tv_nsec = 1000000 };

	if (tko_peer < 0)
		return;
	/* its parent told, and gone (this one reparented): mostly at once;
	 * on a busy machine later, from the loop, which serves meanwhile */
	for (int i = 0; i < TKO_REPARENT_MS && getppid() == tko_parent; i++)
		nanosleep(&ms, NULL);
	if (getppid() != tko_parent)
		takeover_tell();
	else
		loop_on_tick(&tick);
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
	takeover_urgent(false); /* the engines released: the dark time ends */
}

/* --- through systemd's file descriptor store (rxdpd --fdstore) ----------- */

/*
 * A stop under systemd (SIGTERM) hands over as a takeover does, to the
 * next rxdpd the unit starts: the state goes into a memfd (struct
 * tko_store, the records, then where each descriptor is), every
 * descriptor into the unit's store (FDSTORE=1) named by its place, the
 * memfd last. A restart keeps the store and passes it to the next
 * rxdpd's start; a stop for good empties it, and every client then sees
 * its connection end. systemd keeps one of each open file: a place whose
 * file another place already holds is stored as that place.
 */
#define TKO_STORE_MAGIC 0x53545852U /* "RXTS" */
#define TKO_STORE_STATE "rxdp.state"
#define TKO_STORE_FD "rxdp.%d"
#define TKO_STORE_BARRIER_MS 5000

struct tko_store {
	uint32_t magic, version;
	int32_t nfds, pad;
	uint64_t len; /* the records' bytes; then int32_t same[nfds] */
};

/* A descriptor's file, to find the places that hold the same one */
struct tko_file {
	dev_t dev;
	ino_t ino;
	int32_t i;
};

static int tko_file_cmp_ino(const struct tko_file *x, const struct tko_file *y)
{
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino == y->ino ? 0 : x->ino < y->ino ? -1 : 1;
}

static int tko_file_cmp(const void *a, const void *b)
{
	const struct tko_file *x = a, *y = b;
	int c = tko_file_cmp_ino(x, y);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* same[i]: the first place holding place i's open file (i: its own) */
static int tko_same_files(const struct tko_out *o, int32_t *same)
{
	struct tko_file *f = calloc((size_t)o->nfds + 1, sizeof(*f));
	pid_t me = getpid();

	if (!f)
		return -ENOMEM;
	for (int32_t i = 0; i < o->nfds; i++) {
		struct stat st;

		if (fstat(o->fds[i], &st)) {
			free(f);
			return -errno;
		}
		f[i] = (struct tko_file){ st.st_dev, st.st_ino, i };
		same[i] = i;
	}
	/* by file, then place: only places of one inode can share a file */
	qsort(f, (size_t)o->nfds, sizeof(*f), tko_file_cmp);
	for (int32_t a = 1; a < o->nfds; a++)
		for (int32_t b = a - 1;
		     b >= 0 && !tko_file_cmp_ino(&f[a], &f[b]); b--)
			if (same[f[b].i] == f[b].i &&
			    !syscall(SYS_kcmp, me, me, KCMP_FILE,
				     o->fds[f[a].i], o->fds[f[b].i])) {
				same[f[a].i] = f[b].i;
				break;
			}
	free(f);
	return 0;
}

/* Take names[0..n) (those that are set) out of systemd's store */
static void tko_store_forget(char *const *names, int n)
{
	char st[64];

	for (int i = 0; i < n; i++) {
		if (!names[i])
			continue;
		snprintf(st, sizeof(st), "FDSTOREREMOVE=1\nFDNAME=%s",
			 names[i]);
		rxdp_sd_notify(st);
	}
}

/* Store place i's descriptor under its name; 0 or -errno */
static int tko_store_fd(int fd, const char *name)
{
	char st[64];
	int ret;

	snprintf(st, sizeof(st), "FDSTORE=1\nFDPOLL=0\nFDNAME=%s", name);
	ret = rxdp_sd_notify_fds(st, &fd, 1);
	return ret > 0 ? 0 : ret < 0 ? ret : -ENOTCONN;
}

/* The state and its same-file table in a memfd; the fd or -errno */
static int tko_store_memfd(const struct tko_out *o, const int32_t *same)
{
	struct tko_store h = { .magic = TKO_STORE_MAGIC,
			       .version = TKO_VERSION,
			       .nfds = o->nfds,
			       .len = o->len };
	struct iovec iov[3] = { { &h, sizeof(h) },
				{ o->buf, o->len },
				{ (void *)same, o->nfds * sizeof(*same) } };
	size_t want = sizeof(h) + o->len + o->nfds * sizeof(*same);
	int fd = memfd_create("rxdp-state", MFD_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pwritev(fd, iov, 3, 0);
	if (n != (ssize_t)want) {
		close(fd);
		return n < 0 ? -errno : -EIO;
	}
	return fd;
}

int takeover_store(void)
{
	struct tko_out o = { 0 };
	char msg[256], **names;
	int32_t *same;
	int fd, err = 0, nstored = 0;

	if (!getenv("NOTIFY_SOCKET")) {
		pr_warn("--fdstore: not started by systemd ($NOTIFY_SOCKET "
			"unset): every client loses its connection\n");
		return -1;
	}
	if (takeover_refusal(NULL, msg, sizeof(msg))) {
		pr_warn("not handing over to the next rxdpd (systemd's "
			"descriptor store): %s; every client loses its "
			"connection\n",
			msg);
		return -1;
	}
	pr_info("handing over to the next rxdpd through systemd's file "
		"descriptor store\n");
	tko_collect(&o, NULL);
	same = calloc((size_t)o.nfds + 1, sizeof(*same));
	names = calloc((size_t)o.nfds + 2, sizeof(*names));
	err = !same || !names ? -ENOMEM : tko_same_files(&o, same);
	for (int32_t i = 0; !err && i < o.nfds; i++) {
		if (same[i] != i)
			continue;
		if (asprintf(&names[i], TKO_STORE_FD, (int)i) < 0) {
			names[i] = NULL;
			err = -ENOMEM;
			break;
		}
		err = tko_store_fd(o.fds[i], names[i]);
		nstored++;
	}
	/* the state last: a next rxdpd that finds it finds the rest */
	fd = err ? err : tko_store_memfd(&o, same);
	if (fd >= 0) {
		names[o.nfds] = strdup(TKO_STORE_STATE);
		err = names[o.nfds] ? tko_store_fd(fd, names[o.nfds]) : -ENOMEM;
		close(fd);
	} else {
		err = fd;
	}
	/* every message read: the store holds it all before we are gone */
	if (!err && rxdp_sd_barrier(TKO_STORE_BARRIER_MS) < 0)
		pr_warn("systemd did not confirm the store within %d ms\n",
			TKO_STORE_BARRIER_MS);
	if (err) {
		pr_err("cannot hand the state to systemd's descriptor store: "
		       "%s; exiting, every client loses its connection\n",
		       strerror(-err));
		if (names) { /* nothing half-stored for the next one */
			tko_store_forget(names, o.nfds + 1);
			rxdp_sd_barrier(TKO_STORE_BARRIER_MS);
		}
		_exit(1);
	}
	pr_info("handed over to systemd's descriptor store (%zu bytes, %d "
		"descriptors, %d more places holding one of their files): "
		"exiting\n",
		o.len, nstored, o.nfds - nstored);
	_exit(RXDPD_EXIT_STORED);
}

/* The state from the store's memfd and the descriptors it names (names:
 * the passed ones', fd 3 on); 0, or -1 after a line */
static int tko_store_read(int sfd, char *const *names, int n, struct tko_in *in)
{
	struct tko_store h;
	struct stat st;
	int32_t *same = NULL, *at = NULL;
	uint8_t *buf = NULL;

	if (fstat(sfd, &st) || pread(sfd, &h, sizeof(h), 0) != sizeof(h) ||
	    h.magic != TKO_STORE_MAGIC) {
		pr_err("systemd's descriptor store holds no state rxdpd "
		       "wrote: starting anew\n");
		return -1;
	}
	if (h.version != TKO_VERSION) {
		pr_err("the previous rxdpd wrote its state in version %u, "
		       "this one reads version %u: starting anew, its clients "
		       "lose their connections\n",
		       h.version, TKO_VERSION);
		return -1;
	}
	if (h.nfds < 0 || h.nfds > n ||
	    h.len + sizeof(h) + (uint64_t)h.nfds * sizeof(*same) !=
		    (uint64_t)st.st_size)
		goto bad;
	buf = malloc(h.len + 1);
	same = malloc((size_t)h.nfds * sizeof(*same) + 1);
	at = malloc((size_t)h.nfds * sizeof(*at) + 1);
	in->fds = malloc((size_t)h.nfds * sizeof(int) + 1);
	if (!buf || !same || !at || !in->fds ||
	    pread(sfd, buf, h.len, sizeof(h)) != (ssize_t)h.len ||
	    pread(sfd, same, h.nfds * sizeof(*same), sizeof(h) + h.len) !=
		    (ssize_t)(h.nfds * sizeof(*same)))
		goto bad;
	/* each place's descriptor by its name */
	for (int32_t i = 0; i < h.nfds; i++)
		at[i] = -1;
	for (int j = 0; j < n; j++) {
		char *end;
		long i;

		if (!names[j] || strncmp(names[j], "rxdp.", 5))
			continue;
		i = strtol(names[j] + 5, &end, 10);
		if (!*end && end != names[j] + 5 && i >= 0 && i < h.nfds &&
		    at[i] < 0)
			at[i] = RXDP_SD_LISTEN_FDS_START + j;
	}
	for (int32_t i = 0; i < h.nfds; i++) {
		int32_t s = same[i];

		if (s == i)
			in->fds[i] = at[i];
		else /* a place before it holds the same file */
			in->fds[i] = s >= 0 && s < i ? fcntl(in->fds[s],
							     F_DUPFD_CLOEXEC, 0)
						     : -1;
		if (in->fds[i] < 0)
			break;
		in->nfds++;
	}
	if (in->nfds != h.nfds) {
		pr_err("the state names %d descriptors, systemd's store "
		       "passed %d of them: starting anew, the previous "
		       "rxdpd's clients lose their connections\n",
		       h.nfds, in->nfds);
		goto fail;
	}
	free(same);
	free(at);
	in->buf = buf;
	in->len = h.len;
	return 0;
bad:
	pr_err("the state in systemd's descriptor store is cut short: "
	       "starting anew, the previous rxdpd's clients lose their "
	       "connections\n");
fail:
	/* the passed descriptors are closed by the caller; dups here */
	for (int32_t i = 0; i < in->nfds; i++)
		if (same[i] != i)
			close(in->fds[i]);
	free(buf);
	free(same);
	free(at);
	free(in->fds);
	memset(in, 0, sizeof(*in));
	return -1;
}

int takeover_from_store(struct tko_in *in)
{
	char **names;
	int n = rxdp_sd_listen_fds(&names), state = -1, ret = 1;
	bool *taken;

	memset(in, 0, sizeof(*in));
	if (n <= 0)
		return 1;
	for (int j = 0; names && j < n; j++)
		if (!strcmp(names[j], TKO_STORE_STATE))
			state = j;
	if (state >= 0)
		ret = tko_store_read(RXDP_SD_LISTEN_FDS_START + state, names, n,
				     in);
	/* the store is emptied: what was passed is this rxdpd's alone now
	 * (once systemd has read it: what is closed below is closed, the
	 * control socket's name free for a start anew) */
	if (names) {
		tko_store_forget(names, n);
		rxdp_sd_barrier(TKO_STORE_BARRIER_MS);
	}
	/* what the state did not take goes */
	taken = calloc((size_t)n, sizeof(*taken));
	for (int i = 0; taken && i < in->nfds; i++) {
		int j = in->fds[i] - RXDP_SD_LISTEN_FDS_START;

		if (j >= 0 && j < n)
			taken[j] = true;
	}
	for (int j = 0; taken && j < n; j++)
		if (!taken[j])
			close(RXDP_SD_LISTEN_FDS_START + j);
	for (int j = 0; names && j < n; j++)
		free(names[j]);
	free(names);
	free(taken);
	if (!ret) {
		pr_info("took over from systemd's descriptor store: %zu bytes "
			"of state, %d descriptors\n",
			in->len, in->nfds);
		takeover_urgent(true); /* dark since the stop */
	}
	return ret;
}
