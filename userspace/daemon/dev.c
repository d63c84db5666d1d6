// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Devices: a link is an rxdp verbs device while the loader's pin directory
 * for it exists (rxdp_bpffs_if_dir()). Checked on every link event and once
 * a second, so attach and detach are noticed without coordination; a
 * re-attach (new maps behind the same names) shows as a new inode of the
 * qp_ctx pin and is handled as detach + attach.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <infiniband/verbs.h>

#include "common/pins.h"
#include "common/bpffs.h"
#include "common/log.h"
#include "daemon/rxdpd.h"

static int ethtool_ioctl(const char *ifname, void *cmd)
{
	struct ifreq ifr;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The RX queues the interface has now (ethtool's channels:
 * namespace-correct, unlike /sys after setns), 0 if it does not say
 */
static __u32 link_rx_queues(const struct rxdp_link *l)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	return ethtool_ioctl(l->ifname, &ch) ? 0
					     : ch.rx_count + ch.combined_count;
}

static void link_query_ethtool(struct rxdp_link *l)
{
	struct ethtool_cmd ec = { .cmd = ETHTOOL_GSET };
	__u32 nq = link_rx_queues(l);

	if (nq)
		l->num_rx_queues = nq;
	if (!ethtool_ioctl(l->ifname, &ec)) {
		__u32 speed = ethtool_cmd_speed(&ec);

		l->speed_mbps = speed == (__u32)SPEED_UNKNOWN ? 0 : speed;
	}
	if (!l->num_rx_queues)
		l->num_rx_queues = 1;
}

static void maps_close(struct rxdp_maps *m)
{
	if (m->psn)
		munmap(m->psn, m->psn_len);
	if (m->qp_ctx >= 0)
		close(m->qp_ctx);
	if (m->qp_psn >= 0)
		close(m->qp_psn);
	if (m->qp_stats >= 0)
		close(m->qp_stats);
	if (m->xsks >= 0)
		close(m->xsks);
	if (m->stats >= 0)
		close(m->stats);
	if (m->mcast >= 0)
		close(m->mcast);
	memset(m, 0, sizeof(*m));
	m->qp_ctx = m->qp_psn = m->qp_stats = m->xsks = m->stats = -1;
	m->mcast = -1;
}

static int map_get(const char *dir, const char *name)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	return fd;
}

static int maps_open(const char *dir, struct rxdp_maps *m)
{
	struct bpf_map_info info;
	__u32 ilen = sizeof(info);
	char path[600];
	struct stat st;
	int ret;

	memset(m, 0, sizeof(*m));
	m->qp_ctx = m->qp_psn = m->qp_stats = m->xsks = m->stats = -1;
	m->mcast = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, RXDP_PIN(qp_ctx));
	if (stat(path, &st))
		return -errno;
	m->ino = st.st_ino;
	if ((ret = map_get(dir, RXDP_PIN(qp_ctx))) < 0)
		goto err;
	m->qp_ctx = ret;
	if ((ret = map_get(dir, RXDP_PIN(qp_psn))) < 0)
		goto err;
	m->qp_psn = ret;
	if ((ret = map_get(dir, RXDP_PIN(qp_stats))) < 0)
		goto err;
	m->qp_stats = ret;
	if ((ret = map_get(dir, RXDP_PIN(xsks))) < 0)
		goto err;
	m->xsks = ret;
	if ((ret = map_get(dir, RXDP_PIN(stats))) < 0)
		goto err;
	m->stats = ret;
	if ((ret = map_get(dir, RXDP_PIN(mcast))) < 0)
		goto err;
	m->mcast = ret;

	/* The layouts must be the ones this daemon was built with */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(m->qp_ctx, &info, &ilen) ||
	    info.value_size != sizeof(struct rxdp_qp_ctx)) {
		ret = -EPROTO;
		goto err;
	}
	memset(&info, 0, sizeof(info));
	ilen = sizeof(info);
	if (bpf_obj_get_info_by_fd(m->qp_psn, &info, &ilen) ||
	    info.value_size != sizeof(struct rxdp_qp_psn) ||
	    info.max_entries < RXDP_MAX_QP ||
	    !(info.map_flags & BPF_F_MMAPABLE)) {
		ret = -EPROTO;
		goto err;
	}
	m->psn_len = (size_t)info.max_entries * sizeof(struct rxdp_qp_psn);
	m->psn = mmap(NULL, m->psn_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      m->qp_psn, 0);
	if (m->psn == MAP_FAILED) {
		m->psn = NULL;
		ret = -errno;
		goto err;
	}
	return 0;
err:
	maps_close(m);
	return ret;
}

static void dev_announce_l(enum dev_event_type type, struct rxdp_link *l)
{
	struct dev_event ev = { .type = type, .l = l, .ifindex = l->ifindex };

	dev_announce(&ev);
}

void dev_release(struct rxdp_link *l)
{
	struct rxdp_dev *d = l->dev;
	__u32 i;

	if (!d)
		return;
	/* the device is going away under its users */
	dev_announce_port(l->ifindex, IBV_EVENT_DEVICE_FATAL, 0);
	/* QP1 is rxdpd's own: it goes first, with the CM's state; then
	 * the data path and every context on it */
	dev_announce_l(DEV_EV_DOWN, l);
	dev_announce_l(DEV_EV_GONE, l);
	for (i = 0; i < RXDP_MAX_QP; i++)
		if (d->qps[i])
			qp_destroy(l, d->qps[i]);
	devnode_remove(l);
	maps_close(&d->maps);
	free(d);
	l->dev = NULL;
	pr_info("device rxdp_%s gone (rxdp detached from %s)\n", l->ifname,
		l->ifname);
}

bool dev_port_active(const struct rxdp_link *l)
{
	return (l->flags & IFF_UP) && (l->flags & IFF_RUNNING) && l->dev &&
	       !l->dev->xdp_missing && !l->dev->dp_err[0];
}

void dev_datapath_err(struct rxdp_link *l, const char *why)
{
	if (!l->dev)
		return;
	snprintf(l->dev->dp_err, sizeof(l->dev->dp_err), "%s", why ? why : "");
	dev_port_update(l);
}

void dev_port_update(struct rxdp_link *l)
{
	bool active = dev_port_active(l);

	if (!l->dev || active == l->dev->port_active)
		return;
	l->dev->port_active = active;
	if (!active)
		l->dev->link_downed++;
	pr_info("rxdp_%s: port %s\n", l->ifname, active ? "ACTIVE" : "DOWN");
	dev_announce_port(l->ifindex,
			  active ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
			  1);
}

/*
 * Is an XDP program still attached to the device's link? Whoever takes it
 * off (ip link set dev X xdp off) leaves the pins, and nothing arrives
 * any more: the port must say so. Asked over rtnetlink (no privilege), on
 * link events and every second, as drivers do not always announce it.
 * Which program it is would take CAP_SYS_ADMIN to tell: any program counts.
 */
static void dev_xdp_check(struct rxdp_link *l)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(l->ifindex, 0, &q))
		return; /* no answer is no news */
	l->dev->xdp_missing = q.attach_mode == XDP_ATTACHED_NONE;
}

void dev_check(struct rxdp_link *l)
{
	char dir[512], path[600];
	struct dev_event ev = { .type = DEV_EV_QUEUES,
				.l = l,
				.ifindex = l->ifindex };
	struct stat st;
	__u32 nq;
	int ret;

	if (!l->ifname[0])
		return;
	if (rxdp_bpffs_if_dir(l->ifname, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, RXDP_PIN(qp_ctx));
	if (stat(path, &st)) {
		l->maps_err = 0;
		if (l->dev)
			dev_release(l);
		return;
	}
	if (l->dev && l->dev->maps.ino == st.st_ino) {
		dev_xdp_check(l);
		dev_port_update(l);
		/* ethtool -L says nothing over rtnetlink: asked here */
		nq = link_rx_queues(l);
		if (nq)
			l->num_rx_queues = nq;
		ev.count = nq;
		dev_announce(&ev);
		return;
	}
	if (l->dev)
		dev_release(l); /* re-attached: new maps */
	l->dev = calloc(1, sizeof(*l->dev));
	if (!l->dev)
		return;
	ret = maps_open(dir, &l->dev->maps);
	if (ret) {
		/* the loader may be half-way through pinning: try next tick;
		 * health.c says so if it lasts */
		pr_debug("%s: pin directory not usable yet: %s\n", l->ifname,
			 strerror(-ret));
		if (l->maps_err != ret)
			l->maps_err_since = now_ms();
		l->maps_err = ret;
		free(l->dev);
		l->dev = NULL;
		return;
	}
	l->maps_err = 0;
	l->dev->qp_next = RXDP_QPN_MIN;
	l->dev->mtu_cap = rxdpd.mtu_cap;
	l->dev->emaps = (struct rxdp_engine_maps){
		.qp_ctx = l->dev->maps.qp_ctx,
		.qp_stats = l->dev->maps.qp_stats,
		.mcast = l->dev->maps.mcast,
		.ncpus = rxdpd.ncpus,
	};
	dev_xdp_check(l);
	l->dev->port_active = dev_port_active(l);
	link_query_ethtool(l);
	devnode_create(l);
	pr_info("device rxdp_%s (ifindex %d, %u RX queues, MTU %u, port %s)\n",
		l->ifname, l->ifindex, l->num_rx_queues, l->mtu,
		l->dev->port_active ? "ACTIVE" : "DOWN");
	qp_clean_all(l);
	/* QP1 answers from now on, as a device's GSI does */
	dev_announce_l(DEV_EV_UP, l);
}

static void dev_on_link(const struct dev_event *ev)
{
	if (ev->type == DEV_EV_LINK)
		dev_check(ev->l);
	else if (ev->l->dev)
		dev_release(ev->l);
}

void dev_init(void)
{
	static struct dev_listener li = {
		.fn = dev_on_link,
		.types = 1U << DEV_EV_LINK | 1U << DEV_EV_LINK_GONE,
	};

	dev_listen(&li);
}

void dev_check_all(void)
{
	struct rxdp_link *l;

	for (l = rxdpd.links; l; l = l->next)
		dev_check(l);
}

enum eng_cc_algo dev_cc_algo(const char *ifname)
{
	for (int i = 0; i < rxdpd.ncc_algo; i++)
		if (!strcmp(rxdpd.cc_algo[i].ifname, ifname))
			return rxdpd.cc_algo[i].algo;
	return rxdpd.cc_algo_rest;
}

_Static_assert(ENG_TC_MAX <= RXDP_CTL_MAX_TCS,
	       "every class fits the device's information");

const struct eng_tcs *dev_tcs(const char *ifname)
{
	for (int i = 0; i < rxdpd.ntc; i++)
		if (!strcmp(rxdpd.tc[i].ifname, ifname))
			return &rxdpd.tc[i].tcs;
	return &rxdpd.tc_rest;
}

void dev_info_fill(const struct rxdp_link *l, struct rxdp_dev_info *out)
{
	const struct eng_tcs *tcs = dev_tcs(l->ifname);
	__u8 guid[8];

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "rxdp_%s", l->ifname);
	memcpy(out->ifname, l->ifname, sizeof(out->ifname));
	out->ifindex = l->ifindex;
	memcpy(out->mac, l->mac, 6);
	/* EUI-64 from the MAC, as Soft-RoCE derives its node GUID; bytes in
	 * network order, which is how ibv_query_device reports it */
	guid[0] = l->mac[0] ^ 2;
	guid[1] = l->mac[1];
	guid[2] = l->mac[2];
	guid[3] = 0xff;
	guid[4] = 0xfe;
	guid[5] = l->mac[3];
	guid[6] = l->mac[4];
	guid[7] = l->mac[5];
	memcpy(&out->node_guid, guid, 8);
	out->port_state = dev_port_active(l) ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	out->active_mtu = rxdp_ib_mtu(l->mtu, dev_mtu_cap(l));
	out->max_mtu = rxdp_ib_mtu(l->mtu, dev_mtu_cap(l));
	out->if_mtu = l->mtu;
	out->gid_tbl_len = RXDP_GID_TBL_LEN;
	out->num_rx_queues = l->num_rx_queues < RXDP_MAX_QUEUES
				     ? l->num_rx_queues
				     : RXDP_MAX_QUEUES;
	out->speed_mbps = l->speed_mbps;
	out->max_qp = RXDP_MAX_QP - RXDP_QPN_MIN;
	memcpy(out->dev_node, l->dev->dev_node, sizeof(out->dev_node));
	out->nxsks = l->dev->nxsks;
	memcpy(out->xsk_modes, l->dev->xsk_modes, sizeof(out->xsk_modes));
	snprintf(out->cc_algo, sizeof(out->cc_algo), "%s",
		 eng_cc_algo_name(dev_cc_algo(l->ifname)));
	out->ntcs = tcs->n;
	for (unsigned int k = 0; k < tcs->n; k++) {
		eng_tcs_sls(tcs, k, out->tcs[k].sls, sizeof(out->tcs[k].sls));
		out->tcs[k].strict = tcs->tc[k].strict;
		out->tcs[k].weight = tcs->tc[k].weight;
	}
}
