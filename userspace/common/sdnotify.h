/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * systemd's readiness and status protocol (sd_notify(3)), without
 * libsystemd: one datagram of "KEY=value" lines to the unix socket
 * $NOTIFY_SOCKET names ("@name" for an abstract one). Nothing happens when
 * the variable is unset (not started by systemd with Type=notify). And the
 * descriptors systemd passes a service (sd_listen_fds(3)): its file
 * descriptor store's, from 3 on, named in $LISTEN_FDNAMES.
 */
#ifndef RXDP_SDNOTIFY_H
#define RXDP_SDNOTIFY_H

/* Send state ("READY=1", "STATUS=...\nREADY=1"). 1 sent, 0 no socket,
 * -errno */
int rxdp_sd_notify(const char *state);
/* The same with n descriptors ("FDSTORE=1\nFDNAME=x"; at most 253) */
int rxdp_sd_notify_fds(const char *state, const int *fds, int n);
/* Wait (at most timeout_ms) until systemd has read every message sent
 * before ("BARRIER=1"): 1 done, 0 no socket, -errno (-ETIMEDOUT) */
int rxdp_sd_barrier(int timeout_ms);
/* The descriptors passed to this process: their count (0: none or not
 * ours), *names (NULL-terminated, malloc'ed, or NULL: unnamed) the name of
 * fd 3 + i each. The variables are unset: a child sees none. */
int rxdp_sd_listen_fds(char ***names);
#define RXDP_SD_LISTEN_FDS_START 3

#endif /* RXDP_SDNOTIFY_H */
