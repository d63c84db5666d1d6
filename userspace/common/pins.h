/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The pin names of the XDP program's maps (RXDP_BPFFS_ROOT/<netns>/<ifname>/
 * <name>), taken from the program's skeleton: RXDP_PIN(qp_ctx) is "qp_ctx"
 * only while the skeleton has a map of that name, so a map renamed in bpf/
 * fails to compile here instead of failing to be found at run time.
 */
#ifndef RXDP_COMMON_PINS_H
#define RXDP_COMMON_PINS_H

#include "rxdp_xdp.skel.h"

#define RXDP_PIN(map) ((void)sizeof(((struct rxdp_xdp_bpf *)0)->maps.map), #map)

#endif /* RXDP_COMMON_PINS_H */
