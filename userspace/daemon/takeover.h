/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A running rxdpd handed to a successor (takeover.c): the state is a list
 * of records, each naming descriptors by their place in the handover's
 * descriptor list. The parts of rxdpd that own state write their records
 * (tko_add, tko_fd) and read them back in the successor (tko_next,
 * tko_take_fd): tko.c, below every other part.
 */
#ifndef RXDP_DAEMON_TAKEOVER_H
#define RXDP_DAEMON_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The state's format: a successor reads exactly the version it was built
 * with (a new record or field is a new version) */
#define TKO_VERSION 1U

enum tko_type {
	TKO_LISTEN = 1, /* struct tko_listen */
	TKO_CLIENT, /* struct tko_client */
	TKO_DEV, /* struct tko_dev (uverbs.c), then its ports' state: */
	TKO_PORTS, /* rxdp_xsk_ports_save()'s bytes */
	TKO_CTX, /* struct tko_ctx (uverbs.c): a client's verbs context */
	TKO_OBJ, /* struct tko_obj (uverbs.c): one of its objects, then
		    for a QP or an SRQ the engine's state of it: */
	TKO_BLOB, /* rxdp_engine_qp_save()'s / _srq_save()'s bytes */
	TKO_CM, /* struct tko_cm (cm.c): its handle counters */
	TKO_CHAN, /* struct tko_chan (cm.c): a client's CM event channel */
	TKO_CMID, /* struct tko_cmid (cm.c): a CM id, as it is */
};

struct tko_listen {
	int32_t fd;
};

struct tko_client {
	uint64_t tag; /* what its context's record names it by */
	int32_t fd, pid;
	uint32_t uid, allowed;
	int32_t nsubs, subs[16];
};

/* The state being written (old rxdpd) */
struct tko_out {
	uint8_t *buf;
	size_t len, cap;
	int *fds;
	int nfds, cap_fds;
	bool failed;
};
void tko_add(struct tko_out *o, uint16_t type, const void *p, size_t len);
/* fd's place in the handover (it is sent, not closed here); -1: failed */
int32_t tko_fd(struct tko_out *o, int fd);

/* The state read (successor) */
struct tko_in {
	const uint8_t *buf;
	size_t len, off;
	int *fds;
	int nfds;
};
/* The next record of type (0: any) after the cursor; its payload or NULL */
const void *tko_next(struct tko_in *in, uint16_t *type, size_t *len);
/* The fd at place i, now the caller's (each taken once); -1 if none */
int tko_take_fd(struct tko_in *in, int32_t i);

/* The successor's state, while rxdpd starts from it (NULL otherwise) */
extern struct tko_in *tko_state;

#endif /* RXDP_DAEMON_TAKEOVER_H */
