// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One device context's data path: UMEM, the daemon's AF_XDP sockets, the
 * qp_psn map and an engine on them. See engine.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "common/log.h"
#include "engine/engine.h"
#include "rxdp/params.h"

#define DP_FRAME 4096
#define DP_DEFAULT_FRAMES 8192
#define DP_RING 2048

static void dp_close_fds(struct rxdp_datapath *d)
{
	for (int i = 0; i < RXDP_CTL_MAX_XSKS; i++)
		if (d->xsk_fds[i] >= 0)
			close(d->xsk_fds[i]);
	if (d->psn_map_fd >= 0)
		close(d->psn_map_fd);
}

void rxdp_engine_dp_close(struct rxdp_engine_dp *dp)
{
	if (!dp)
		return;
	/* the engine (and its thread) first: it drives the port */
	rxdp_engine_destroy(dp->engine);
	rxdp_xsk_port_destroy(dp->port);
	if (dp->psn)
		munmap(dp->psn, dp->psn_len);
	dp_close_fds(&dp->dp);
	rxdp_umem_destroy(&dp->umem);
	free(dp);
}

struct rxdp_engine_dp *rxdp_engine_dp_open(struct rxdp_ctl *ctl,
					   uint32_t ifindex, uint32_t nframes,
					   const struct rxdp_engine_config *cfg)
{
	struct rxdp_datapath_req req = { 0 };
	struct rxdp_engine_config ecfg = { 0 };
	struct rxdp_engine_dp *dp;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return NULL;
	dp->umem.fd = -1;
	dp->dp.psn_map_fd = -1;
	for (int i = 0; i < RXDP_CTL_MAX_XSKS; i++)
		dp->dp.xsk_fds[i] = -1;
	if (!nframes)
		nframes = DP_DEFAULT_FRAMES;
	err = rxdp_umem_create(&dp->umem, nframes, DP_FRAME);
	if (err)
		goto fail;
	req.ifindex = ifindex;
	req.frame_size = DP_FRAME;
	req.umem_size = dp->umem.size;
	req.ring_size = DP_RING;
	err = rxdp_ctl_attach_datapath(ctl, &req, dp->umem.fd, &dp->dp);
	if (err) {
		pr_warn("engine: rxdpd refused the data path: %s\n",
			rxdp_ctl_strerror(ctl));
		goto fail;
	}
	dp->psn_len =
		((size_t)RXDP_MAX_QP * sizeof(struct rxdp_qp_psn) + page - 1) &
		~(size_t)(page - 1);
	dp->psn = mmap(NULL, dp->psn_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       dp->dp.psn_map_fd, 0);
	if (dp->psn == MAP_FAILED) {
		err = -errno;
		dp->psn = NULL;
		pr_warn("engine: cannot map qp_psn: %s\n", strerror(-err));
		goto fail;
	}
	dp->port = rxdp_xsk_port_create(&dp->umem, dp->dp.xsk_fds,
					dp->dp.num_queues, DP_RING,
					dp->dp.bind_flags);
	if (!dp->port) {
		err = -errno;
		goto fail;
	}
	if (cfg)
		ecfg = *cfg;
	ecfg.ops = &rxdp_xsk_port_ops;
	ecfg.port = dp->port;
	ecfg.psn_table = dp->psn;
	ecfg.progress_thread = 1;
	dp->engine = rxdp_engine_create(&ecfg);
	if (!dp->engine) {
		err = -errno;
		goto fail;
	}
	return dp;
fail:
	rxdp_engine_dp_close(dp);
	errno = err < 0 ? -err : EINVAL;
	return NULL;
}
