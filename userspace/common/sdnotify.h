/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * systemd's readiness and status protocol (sd_notify(3)), without
 * libsystemd: one datagram of "KEY=value" lines to the unix socket
 * $NOTIFY_SOCKET names ("@name" for an abstract one). Nothing happens when
 * the variable is unset (not started by systemd with Type=notify).
 */
#ifndef RXDP_SDNOTIFY_H
#define RXDP_SDNOTIFY_H

/* Send state ("READY=1", "STATUS=...\nREADY=1"). 1 sent, 0 no socket,
 * -errno */
int rxdp_sd_notify(const char *state);

#endif /* RXDP_SDNOTIFY_H */
