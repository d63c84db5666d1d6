// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Data-path provisioning: AF_XDP sockets on the client's UMEM, made by the
 * daemon (which holds CAP_NET_RAW and the XSK map) and handed to the client.
 *
 * The client's UMEM is a memfd; the daemon maps the same pages MAP_SHARED and
 * registers its own mapping (XDP_UMEM_REG pins the pages, so both mappings
 * see one memory). Queue 0's socket owns the UMEM; the sockets of the other
 * queues join it with XDP_SHARED_UMEM, each with its own fill and completion
 * rings (a different queue needs its own, see notes/netns-and-bpffs.md). The
 * client mmaps all rings from the socket fds (XDP_MMAP_OFFSETS).
 *
 * One UMEM per (device, queue) is all AF_XDP allows without sharing a UMEM
 * across processes, so one client per (interface, queue) at a time.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <linux/if_xdp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/log.h"
#include "daemon/rxdpd.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define UMEM_MAX (1ULL << 34) /* 16 GiB: a sanity bound, not a policy */
#define XSK_BUSY_RETRIES 50 /* x 10 ms */

static int xsk_setup(int ifindex, __u32 queue, int shared_fd, void *umem,
		     const struct rxdp_datapath_req *req, __u16 mode, int *out)
{
	struct sockaddr_xdp sxdp;
	int fd, ring = req->ring_size;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (shared_fd < 0) {
		struct xdp_umem_reg mr = {
			.addr = (__u64)(unsigned long)umem,
			.len = req->umem_size,
			.chunk_size = req->frame_size,
			.headroom = 0,
		};

		if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)))
			goto err;
	}
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring,
		       sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)))
		goto err;

	memset(&sxdp, 0, sizeof(sxdp));
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = ifindex;
	sxdp.sxdp_queue_id = queue;
	if (shared_fd >= 0) {
		/* mode flags are inherited from the UMEM's first socket */
		sxdp.sxdp_flags = XDP_SHARED_UMEM;
		sxdp.sxdp_shared_umem_fd = shared_fd;
	} else {
		sxdp.sxdp_flags = mode | XDP_USE_NEED_WAKEUP;
	}
	if (bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		goto err;
	*out = fd;
	return 0;
err : {
	int e = -errno;

	close(fd);
	return e;
}
}

void dp_release(struct rxdp_client *c, struct rxdp_dp *dp)
{
	struct rxdp_link *l = link_by_index(dp->ifindex);
	struct rxdp_dp **pp;
	__u32 q;

	for (q = 0; q < dp->num_queues; q++) {
		if (l && l->dev) {
			__u32 k = c->owner_slot * RXDP_MAX_QUEUES + q;

			bpf_map_delete_elem(l->dev->maps.xsks, &k);
			if (l->dev->queue_owner[q] == c)
				l->dev->queue_owner[q] = NULL;
		}
		if (dp->xsk_fds[q] >= 0)
			close(dp->xsk_fds[q]);
	}
	if (dp->umem)
		munmap(dp->umem, dp->umem_size);
	for (pp = &c->dps; *pp; pp = &(*pp)->next) {
		if (*pp == dp) {
			*pp = dp->next;
			break;
		}
	}
	pr_info("data path of pid %d on ifindex %d released\n", (int)c->pid,
		dp->ifindex);
	free(dp);
}

int dp_attach(struct rxdp_client *c, const struct rxdp_datapath_req *req,
	      int umem_fd, struct rxdp_dp **out, __u32 *bind_flags, char *msg,
	      size_t msglen)
{
	struct rxdp_link *l = link_by_index(req->ifindex);
	struct rxdp_dp *dp;
	struct stat st;
	__u32 q, nq;
	int ret, slot;
	__u16 mode = XDP_ZEROCOPY, sg = XDP_USE_SG;

	if (!l || !l->dev) {
		snprintf(msg, msglen,
			 "no rxdp device with ifindex %u (attach rxdp with "
			 "rxdp-loader first)",
			 req->ifindex);
		return -ENODEV;
	}
	if ((req->frame_size != 2048 && req->frame_size != 4096) ||
	    !req->umem_size || req->umem_size % req->frame_size ||
	    req->umem_size > UMEM_MAX || req->flags) {
		snprintf(msg, msglen,
			 "bad UMEM geometry: frame_size must be 2048 or 4096, "
			 "umem_size a non-zero multiple of it, flags 0");
		return -EINVAL;
	}
	if (req->ring_size < 16 || req->ring_size > 65536 ||
	    (req->ring_size & (req->ring_size - 1))) {
		snprintf(msg, msglen,
			 "ring_size %u must be a power of two in 16..65536",
			 req->ring_size);
		return -EINVAL;
	}
	if (umem_fd < 0 || fstat(umem_fd, &st) || !S_ISREG(st.st_mode) ||
	    (__u64)st.st_size < req->umem_size) {
		snprintf(msg, msglen,
			 "the UMEM must come as a memfd (SCM_RIGHTS) of at "
			 "least umem_size bytes");
		return -EINVAL;
	}
	for (dp = c->dps; dp; dp = dp->next) {
		if (dp->ifindex == (int)req->ifindex) {
			snprintf(
				msg, msglen,
				"this connection already has a data path on %s",
				l->ifname);
			return -EBUSY;
		}
	}
	nq = l->num_rx_queues ? l->num_rx_queues : 1;
	if (nq > RXDP_MAX_QUEUES) {
		pr_warn("%s has %u RX queues; rxdp uses the first %d\n",
			l->ifname, nq, RXDP_MAX_QUEUES);
		nq = RXDP_MAX_QUEUES;
	}
	for (q = 0; q < nq; q++) {
		struct rxdp_client *o = l->dev->queue_owner[q];

		if (o && o != c) {
			snprintf(msg, msglen,
				 "queue %u of %s is in use by the data path of "
				 "pid %d: one process per (interface, queue); "
				 "sharing a UMEM across processes is not "
				 "supported",
				 q, l->ifname, (int)o->pid);
			return -EBUSY;
		}
	}
	slot = client_owner_slot(c);
	if (slot < 0) {
		snprintf(msg, msglen, "no owner slot left (%d in use)",
			 RXDP_MAX_OWNERS);
		return slot;
	}

	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	dp->ifindex = l->ifindex;
	for (q = 0; q < RXDP_MAX_QUEUES; q++)
		dp->xsk_fds[q] = -1;
	dp->umem_size = req->umem_size;
	dp->umem = mmap(NULL, req->umem_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, umem_fd, 0);
	if (dp->umem == MAP_FAILED) {
		ret = -errno;
		dp->umem = NULL;
		snprintf(msg, msglen, "cannot map the UMEM memfd: %s",
			 strerror(-ret));
		goto err;
	}
	dp->next = c->dps;
	c->dps = dp;

	for (q = 0; q < nq; q++) {
		int shared = q ? dp->xsk_fds[0] : -1;

		ret = xsk_setup(l->ifindex, q, shared, dp->umem, req, mode | sg,
				&dp->xsk_fds[q]);
		/*
		 * No client owns the queue (checked above), so EBUSY is the
		 * kernel still releasing the socket of one that just left
		 * (the pool goes in a deferred work item): wait a little.
		 */
		for (int i = 0; ret == -EBUSY && i < XSK_BUSY_RETRIES; i++) {
			usleep(10000);
			ret = xsk_setup(l->ifindex, q, shared, dp->umem, req,
					mode | sg, &dp->xsk_fds[q]);
		}
		if (ret && q == 0 && mode == XDP_ZEROCOPY) {
			/* no zero-copy on this driver (veth): copy mode */
			mode = XDP_COPY;
			ret = xsk_setup(l->ifindex, q, shared, dp->umem, req,
					mode | sg, &dp->xsk_fds[q]);
		}
		if (ret && q == 0 && sg) {
			/* no multi-buffer (before 6.6): 2048-byte path MTU */
			sg = 0;
			ret = xsk_setup(l->ifindex, q, shared, dp->umem, req,
					mode, &dp->xsk_fds[q]);
		}
		if (ret == -EINVAL && q > 0) {
			/*
			 * The count we had was an upper bound (a veth made
			 * without numrxqueues reports one queue per possible
			 * CPU but has one): the queues end here.
			 */
			pr_debug("%s: no RX queue %u, %u in all\n", l->ifname,
				 q, q);
			nq = q;
			break;
		}
		if (ret) {
			snprintf(msg, msglen,
				 "cannot create the AF_XDP socket for queue %u "
				 "of %s: %s%s",
				 q, l->ifname, strerror(-ret),
				 ret == -EBUSY ? " (another AF_XDP program "
						 "uses this queue)"
					       : "");
			goto err_release;
		}
		dp->num_queues = q + 1;
		{
			__u32 k = slot * RXDP_MAX_QUEUES + q;

			if (bpf_map_update_elem(l->dev->maps.xsks, &k,
						&dp->xsk_fds[q], BPF_ANY)) {
				ret = -errno;
				snprintf(msg, msglen,
					 "cannot insert the socket into the "
					 "XSK map: %s",
					 strerror(-ret));
				goto err_release;
			}
		}
		l->dev->queue_owner[q] = c;
	}
	*bind_flags = mode | sg;
	*out = dp;
	pr_info("pid %d: data path on %s, %u queue(s), %s mode%s, owner slot "
		"%d\n",
		(int)c->pid, l->ifname, nq,
		mode == XDP_ZEROCOPY ? "zero-copy" : "copy",
		sg ? ", multi-buffer" : "", slot);
	return 0;

err_release:
	dp_release(c, dp);
	return ret;
err:
	free(dp);
	return ret;
}
