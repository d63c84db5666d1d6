// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The records of a takeover's state (takeover.h): written by the parts of
 * rxdpd that own state, read back by the successor's. Nothing here calls
 * any other part of the daemon.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/takeover.h"

struct tko_rec {
	uint16_t type, pad;
	uint32_t len;
};

struct tko_in *tko_state;

void tko_add(struct tko_out *o, uint16_t type, const void *p, size_t len)
{
	size_t need = o->len + sizeof(struct tko_rec) + ((len + 7) & ~7UL);
	struct tko_rec h = { .type = type, .len = (uint32_t)len };

	if (need > o->cap) {
		size_t cap = o->cap ? o->cap : 65536;
		uint8_t *b;

		while (cap < need)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (!b) {
			o->failed = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, &h, sizeof(h));
	memcpy(o->buf + o->len + sizeof(h), p, len);
	memset(o->buf + o->len + sizeof(h) + len, 0,
	       need - o->len - sizeof(h) - len);
	o->len = need;
}

int32_t tko_fd(struct tko_out *o, int fd)
{
	if (fd < 0) {
		o->failed = true;
		return -1;
	}
	if (o->nfds == o->cap_fds) {
		int cap = o->cap_fds ? 2 * o->cap_fds : 256;
		int *f = realloc(o->fds, (size_t)cap * sizeof(*f));

		if (!f) {
			o->failed = true;
			return -1;
		}
		o->fds = f;
		o->cap_fds = cap;
	}
	o->fds[o->nfds] = fd;
	return o->nfds++;
}

const void *tko_next(struct tko_in *in, uint16_t *type, size_t *len)
{
	uint16_t want = *type;

	while (in->off + sizeof(struct tko_rec) <= in->len) {
		struct tko_rec h;
		const uint8_t *p;

		memcpy(&h, in->buf + in->off, sizeof(h));
		p = in->buf + in->off + sizeof(h);
		if (h.len > in->len - in->off - sizeof(h))
			return NULL; /* cut short: nothing after it */
		in->off += sizeof(h) + ((h.len + 7) & ~7UL);
		if (in->off > in->len)
			in->off = in->len;
		if (want && h.type != want)
			continue;
		*type = h.type;
		*len = h.len;
		return p;
	}
	return NULL;
}

int tko_take_fd(struct tko_in *in, int32_t i)
{
	int fd;

	if (i < 0 || i >= in->nfds)
		return -1;
	fd = in->fds[i];
	in->fds[i] = -1;
	return fd;
}
