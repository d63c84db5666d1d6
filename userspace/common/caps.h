/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The capabilities a process holds, read with capget(2) (no libcap), so
 * that a tool missing one says which before anything fails half-way: uid 0
 * is not enough (a container's root, or a systemd unit's
 * CapabilityBoundingSet, may hold none).
 */
#ifndef RXDP_CAPS_H
#define RXDP_CAPS_H

#include <stdbool.h>
#include <stddef.h>

/* Is capability cap (CAP_*) in this process's effective set? */
bool rxdp_cap_effective(int cap);

/*
 * Write the names of the capabilities in caps[0..n) that this process's
 * effective set lacks into buf ("CAP_SYS_ADMIN, CAP_NET_ADMIN"). Returns how
 * many are missing (buf is "" when none are).
 */
int rxdp_caps_missing(const int *caps, size_t n, char *buf, size_t len);

/* "CAP_NET_ADMIN" for CAP_NET_ADMIN; "CAP_<n>" for one it does not name */
const char *rxdp_cap_name(int cap);

#endif /* RXDP_CAPS_H */
