// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Device events, from the layers that see them (rtnetlink, the device
 * checks) to those that act on them (devices, QP paths, the CM, the data
 * path, the server's subscribers): event.h.
 */
#include <stddef.h>

#include "daemon/event.h"

static struct dev_listener *listeners;

void dev_listen(struct dev_listener *li)
{
	struct dev_listener **pp = &listeners;

	for (; *pp; pp = &(*pp)->next)
		if (*pp == li)
			return;
	li->next = NULL;
	*pp = li;
}

void dev_announce(const struct dev_event *ev)
{
	for (struct dev_listener *li = listeners; li; li = li->next)
		if (li->types & (1U << ev->type))
			li->fn(ev);
}

void dev_announce_port(int ifindex, __u32 ibv_event, __u32 port)
{
	struct dev_event ev = { .type = DEV_EV_PORT,
				.ifindex = ifindex,
				.ibv_event = ibv_event,
				.port = port };

	dev_announce(&ev);
}
