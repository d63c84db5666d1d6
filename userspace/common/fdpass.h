/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Descriptors sent with a message (SCM_RIGHTS): the control protocol's
 * (ctl_proto.c), a takeover's state (daemon/takeover.c) and systemd's
 * descriptor store (sdnotify.c) attach them alike.
 */
#ifndef RXDP_FDPASS_H
#define RXDP_FDPASS_H

#include <string.h>
#include <sys/socket.h>

/* n descriptors (none: nothing) into mh's control data, in ctrl: at least
 * CMSG_SPACE(n * sizeof(int)) bytes, aligned for a struct cmsghdr */
static inline void rxdp_msg_put_fds(struct msghdr *mh, void *ctrl,
				    const int *fds, int n)
{
	struct cmsghdr *cm;

	if (n <= 0)
		return;
	mh->msg_control = ctrl;
	mh->msg_controllen = CMSG_SPACE(n * sizeof(int));
	memset(ctrl, 0, mh->msg_controllen);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
}

#endif /* RXDP_FDPASS_H */
