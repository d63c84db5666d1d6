// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A fake rxdpd for the verbs library's tests: a thread serving the control
 * protocol (common/ctl.h) on the abstract socket @rxdp-test-verbs-<pid>,
 * with three devices: rxdp_veth7 (ACTIVE), rxdp_veth9 (port state from
 * fake_port_state_b) and rxdp_veth11 (listed, then ENODEV on every query).
 * fake_rxdpd_start() also points $RXDP_SOCKET at it.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>

#include "fake_rxdpd.h"

static const __u8 mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
const __u8 fake_dmac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

static char sock_name[64];
static pthread_once_t name_once = PTHREAD_ONCE_INIT;

static void name_init(void)
{
	snprintf(sock_name, sizeof(sock_name), "@rxdp-test-verbs-%d", getpid());
}

int fake_port_state_b = IBV_PORT_DOWN;
static int listen_fd = -1;
static int stop_pipe[2] = { -1, -1 };
static pthread_t daemon_thread;
static int daemon_running;

static void fill_info(struct rxdp_dev_info *d, __u32 ifindex)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->ifname, sizeof(d->ifname), "veth%u", ifindex);
	snprintf(d->name, sizeof(d->name), "rxdp_%s", d->ifname);
	d->ifindex = ifindex;
	memcpy(d->mac, mac_a, 6);
	d->mac[5] = (__u8)ifindex;
	d->node_guid = htobe64(0x0200000000000000ULL | ifindex);
	d->port_state = ifindex == IFINDEX_B ? (__u32)fake_port_state_b
					     : IBV_PORT_ACTIVE;
	d->active_mtu = IBV_MTU_1024;
	d->max_mtu = IBV_MTU_4096;
	d->if_mtu = 1500;
	d->gid_tbl_len = RXDP_GID_TBL_LEN;
	d->num_rx_queues = 1;
	d->speed_mbps = 10000;
	d->max_qp = 16384;
}

void fake_gid_of(__u32 index, __u8 gid[16])
{
	memset(gid, 0, 16);
	if (index == 0) { /* link-local, EUI-64 of mac_a */
		gid[0] = 0xfe;
		gid[1] = 0x80;
		gid[8] = 0x00;
		gid[11] = 0xff;
		gid[12] = 0xfe;
		gid[15] = 0x07;
	} else if (index == 1) { /* IPv4-mapped 10.0.0.1 */
		gid[10] = 0xff;
		gid[11] = 0xff;
		gid[12] = 10;
		gid[15] = 1;
	}
}

/*
 * Contexts and the objects the event tests need (PDs, channels): the write
 * ends of the pipes are kept here, for the tests to write what rxdpd
 * would (fake_rxdpd_async_wfd, fake_rxdpd_channel_wfd).
 */
static int async_wfd = -1;
static int chan_wfd[64];
static __u32 next_handle = 1;

int fake_rxdpd_async_wfd(void)
{
	return async_wfd;
}

int fake_rxdpd_channel_wfd(__u32 handle)
{
	return handle && handle < 64 ? chan_wfd[handle] : -1;
}

/* An object request: 0 or -errno; *o and out fds as rxdpd would send */
static int serve_obj(__u32 type, struct rxdp_ctl_obj *o, int *fds, int *nfds)
{
	int p[2];

	switch (type) {
	case RXDP_CTL_PD_ALLOC:
		o->handle = next_handle++;
		return 0;
	case RXDP_CTL_PD_FREE:
		return 0;
	case RXDP_CTL_CHANNEL_CREATE:
		if (next_handle >= 64 || pipe2(p, O_CLOEXEC))
			return -ENOMEM;
		fcntl(p[1], F_SETFL, O_NONBLOCK);
		o->handle = next_handle++;
		chan_wfd[o->handle] = p[1];
		fds[(*nfds)++] = p[0];
		return 0;
	case RXDP_CTL_CHANNEL_DESTROY:
		if (fake_rxdpd_channel_wfd(o->handle) < 0)
			return -EINVAL;
		close(chan_wfd[o->handle]);
		chan_wfd[o->handle] = -1;
		return 0;
	}
	return -EOPNOTSUPP; /* no data path here */
}

/* CTX_OPEN: a doorbell, a device page and an async pipe, as rxdpd's */
static int serve_ctx(int *fds, int *nfds)
{
	int p[2], page = memfd_create("fake-rxdp-device", MFD_CLOEXEC);

	if (page < 0 || ftruncate(page, 4096) || pipe2(p, O_CLOEXEC)) {
		if (page >= 0)
			close(page);
		return -ENOMEM;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	if (async_wfd >= 0)
		close(async_wfd);
	async_wfd = p[1];
	fds[0] = eventfd(0, EFD_CLOEXEC);
	fds[1] = page;
	fds[2] = p[0];
	*nfds = 3;
	return 0;
}

static void serve_one(int fd, const struct rxdp_ctl_msg *req)
{
	__u64 buf[RXDP_CTL_MSG_MAX / 8];
	__u32 type = req->nlh->nlmsg_type, ifindex = 0, index = 0;
	struct rxdp_dev_info info;
	struct nlmsghdr *nlh;
	int err = 0, fds[4], nfds = 0;

	if (req->tb[RXDP_CTL_A_IFINDEX])
		ifindex = mnl_attr_get_u32(req->tb[RXDP_CTL_A_IFINDEX]);
	if (req->tb[RXDP_CTL_A_INDEX])
		index = mnl_attr_get_u32(req->tb[RXDP_CTL_A_INDEX]);
	nlh = rxdp_ctl_msg_start(buf, (__u16)type, RXDP_CTL_F_REPLY,
				 req->nlh->nlmsg_seq, 0);
	if (type >= RXDP_CTL_PD_ALLOC && req->tb[RXDP_CTL_A_OBJ]) {
		struct rxdp_ctl_obj o;

		memcpy(&o, mnl_attr_get_payload(req->tb[RXDP_CTL_A_OBJ]),
		       sizeof(o));
		err = serve_obj(type, &o, fds, &nfds);
		if (!err)
			mnl_attr_put(nlh, RXDP_CTL_A_OBJ, sizeof(o), &o);
		goto reply;
	}
	if (type != RXDP_CTL_LIST_DEVICES && ifindex != IFINDEX_A &&
	    ifindex != IFINDEX_B) {
		err = -ENODEV;
		goto reply;
	}
	switch (type) {
	case RXDP_CTL_LIST_DEVICES:
		fill_info(&info, IFINDEX_A);
		mnl_attr_put(nlh, RXDP_CTL_A_DEV_INFO, sizeof(info), &info);
		fill_info(&info, IFINDEX_B);
		mnl_attr_put(nlh, RXDP_CTL_A_DEV_INFO, sizeof(info), &info);
		fill_info(&info, IFINDEX_GONE);
		mnl_attr_put(nlh, RXDP_CTL_A_DEV_INFO, sizeof(info), &info);
		break;
	case RXDP_CTL_QUERY_DEVICE:
		fill_info(&info, ifindex);
		mnl_attr_put(nlh, RXDP_CTL_A_DEV_INFO, sizeof(info), &info);
		break;
	case RXDP_CTL_QUERY_GID: {
		struct rxdp_gid_entry e = { .index = index,
					    .gid_type = RXDP_GID_TYPE_ROCE_V2 };

		if (index >= RXDP_GID_TBL_LEN) {
			err = -EINVAL;
			break;
		}
		fake_gid_of(index, e.gid);
		mnl_attr_put(nlh, RXDP_CTL_A_GID, sizeof(e), &e);
		break;
	}
	case RXDP_CTL_QUERY_PKEY:
		if (index >= RXDP_PKEY_TBL_LEN) {
			err = -EINVAL;
			break;
		}
		mnl_attr_put_u32(nlh, RXDP_CTL_A_PKEY, RXDP_DEFAULT_PKEY);
		break;
	case RXDP_CTL_RESOLVE: {
		struct rxdp_path p;

		memset(&p, 0, sizeof(p));
		memcpy(p.dmac, fake_dmac, 6);
		mnl_attr_put(nlh, RXDP_CTL_A_PATH, sizeof(p), &p);
		break;
	}
	case RXDP_CTL_CTX_OPEN:
		err = serve_ctx(fds, &nfds);
		break;
	default:
		err = -EOPNOTSUPP;
	}
reply:
	if (err) {
		nlh = rxdp_ctl_msg_start(buf, (__u16)type, RXDP_CTL_F_REPLY,
					 req->nlh->nlmsg_seq, err);
		mnl_attr_put_strz(nlh, RXDP_CTL_A_MSG, "fake rxdpd says no");
	}
	rxdp_ctl_sendmsg(fd, nlh, fds, err ? 0 : nfds);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static void *daemon_main(void *arg)
{
	struct pollfd pfd[34];
	int nfd = 2, i;

	pfd[0].fd = stop_pipe[0];
	pfd[0].events = POLLIN;
	pfd[1].fd = listen_fd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, nfd, -1) < 0)
			continue;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents & POLLIN && nfd < 34) {
			int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				pfd[nfd].fd = c;
				pfd[nfd].events = POLLIN;
				pfd[nfd].revents = 0;
				nfd++;
			}
		}
		for (i = 2; i < nfd; i++) {
			__u64 buf[RXDP_CTL_MSG_MAX / 8];
			struct rxdp_ctl_msg msg;
			int fds[RXDP_CTL_MAX_FDS], nfds = 0;
			ssize_t n;

			if (!pfd[i].revents)
				continue;
			n = rxdp_ctl_recvmsg(pfd[i].fd, buf, sizeof(buf), fds,
					     &nfds, RXDP_CTL_MAX_FDS);
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i] = pfd[--nfd];
				i--;
				continue;
			}
			if (!rxdp_ctl_decode(buf, (size_t)n, &msg, 0))
				serve_one(pfd[i].fd, &msg);
			while (nfds > 0) /* CTX_OPEN's /proc/self/mem */
				close(fds[--nfds]);
		}
	}
	for (i = 2; i < nfd; i++)
		close(pfd[i].fd);
	return NULL;
}

void fake_rxdpd_start(void)
{
	struct sockaddr_un sun;
	unsigned int len;

	pthread_once(&name_once, name_init);
	if (rxdp_ctl_sockaddr(sock_name, &sun, &len))
		abort();
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		abort();
	if (bind(listen_fd, (struct sockaddr *)&sun, len) ||
	    listen(listen_fd, 16) || pipe(stop_pipe))
		abort();
	if (pthread_create(&daemon_thread, NULL, daemon_main, NULL))
		abort();
	daemon_running = 1;
	setenv(RXDP_CTL_ENV, sock_name, 1);
}

void fake_rxdpd_stop(void)
{
	if (!daemon_running)
		return;
	if (write(stop_pipe[1], "x", 1) != 1)
		abort();
	pthread_join(daemon_thread, NULL);
	close(listen_fd);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	daemon_running = 0;
}
