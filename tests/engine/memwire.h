/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An in-memory wire between two engine ports, with deterministic (seeded)
 * loss, duplication and reordering, for testing the transport without
 * AF_XDP.
 */
#ifndef RXDP_TEST_MEMWIRE_H
#define RXDP_TEST_MEMWIRE_H

#include <stdint.h>

#include "engine/engine.h"

struct memwire;

struct memwire_faults {
	unsigned int loss; /* per 10000 frames */
	unsigned int dup;
	unsigned int reorder;
	uint64_t seed;
};

struct memwire *memwire_create(void);
void memwire_destroy(struct memwire *w);
/* Faults apply from now on, to both directions */
void memwire_set_faults(struct memwire *w, const struct memwire_faults *f);
/* Drop everything in both directions (a peer that disappeared) */
void memwire_cut(struct memwire *w, int cut);
/* The port of side 0 or 1, for rxdp_engine_config.port */
void *memwire_port(struct memwire *w, int side);
extern const struct rxdp_port_ops memwire_ops;

/*
 * A filter run on every frame as it arrives at side `to` (as an XDP program
 * would): return 0 to drop it. NULL: none.
 */
void memwire_set_filter(struct memwire *w, int to,
			int (*fn)(void *arg, uint8_t *frame, uint32_t len),
			void *arg);

/*
 * fn(arg) runs whenever side takes frames from the wire (its engine's
 * pass, after that pass drained what the owners posted): what it posts
 * then is what an owner posts while the engine works. NULL: none.
 */
void memwire_set_rx_hook(struct memwire *w, int side, void (*fn)(void *arg),
			 void *arg);

/*
 * The frames the wire holds towards side `to` before it drops, as a
 * receive ring (rx_fill says how full it was at each burst); 0: the most
 */
void memwire_set_qlen(struct memwire *w, int to, uint32_t n);

/*
 * Frames towards side `to` arrive ns after they were sent, by clock (the
 * engines' clock; a test's own, for engines without progress threads:
 * while a frame is on its way the wire's eventfd stays readable). A frame
 * sent with a longer latency holds back those behind it, as a queue does.
 */
void memwire_set_latency(struct memwire *w, int to, uint64_t ns,
			 uint64_t (*clock)(void *arg), void *arg);

/* Put a frame on the wire towards side `to`, as if its peer sent it */
void memwire_inject(struct memwire *w, int to, const void *frame, uint32_t len);

struct memwire_stats {
	uint64_t frames, lost, duplicated, reordered;
	/* per sending side: flushes that carried frames, the most in one */
	uint64_t flushes[2], batch_max[2];
};
void memwire_get_stats(struct memwire *w, struct memwire_stats *s);

#endif
