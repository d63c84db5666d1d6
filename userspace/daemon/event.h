/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the lower layers of rxdpd announce and the higher ones listen to
 * (event.c): rtnetlink's links and neighbours (rtnl.c), devices that come
 * and go and their port events (dev.c, rtnl.c). The announcer names no
 * listener, so calls go down only: the device layer never calls the CM,
 * the server or the data path.
 */
#ifndef RXDP_DAEMON_EVENT_H
#define RXDP_DAEMON_EVENT_H

#include <linux/types.h>
#include <stdbool.h>

struct rxdp_link;

enum dev_event_type {
	DEV_EV_LINK, /* rtnl.c: link l is new or changed (a device now?) */
	DEV_EV_LINK_GONE, /* rtnl.c: link l goes (its device first) */
	DEV_EV_NEIGH, /* rtnl.c: a neighbour has a new MAC: family, ip, mac */
	DEV_EV_UP, /* dev.c: l became a device (maps open, QPs cleaned) */
	DEV_EV_DOWN, /* dev.c: l's device goes: what runs on its data path */
	DEV_EV_GONE, /* dev.c: then its data path and contexts */
	DEV_EV_QUEUES, /* dev.c: l has count RX queues (every second) */
	DEV_EV_PORT, /* an affiliated event (enum ibv_event_type) for the
		      * device's users: ibv_event on port */
	DEV_EV_MAX
};

struct dev_event {
	enum dev_event_type type;
	struct rxdp_link *l; /* NULL for DEV_EV_NEIGH, DEV_EV_PORT */
	int ifindex;
	__u32 ibv_event, port; /* DEV_EV_PORT */
	__u32 count; /* DEV_EV_QUEUES */
	int family; /* DEV_EV_NEIGH: AF_INET or AF_INET6 */
	const __u8 *ip, *mac;
};

struct dev_listener {
	void (*fn)(const struct dev_event *ev);
	__u32 types; /* a bit per enum dev_event_type */
	struct dev_listener *next;
};

/* Listeners hear events in the order they were added; adding one twice
 * is adding it once */
void dev_listen(struct dev_listener *li);
void dev_announce(const struct dev_event *ev);
/* A port event for the users of ifindex */
void dev_announce_port(int ifindex, __u32 ibv_event, __u32 port);

#endif /* RXDP_DAEMON_EVENT_H */
