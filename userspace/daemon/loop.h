/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rxdpd's control thread: one epoll loop (loop.c), its clock and its
 * timer. The loop calls nothing of the daemon by name: every fd it watches
 * comes with the function its events go to, and the timer and each pass
 * call the hooks the layers above registered.
 */
#ifndef RXDP_DAEMON_LOOP_H
#define RXDP_DAEMON_LOOP_H

#include <linux/types.h>

/* An fd in the loop's epoll set: its events go to fn */
struct ep_tag {
	void (*fn)(struct ep_tag *tag, __u32 events);
	void *ptr; /* the owner's */
};

/* A function the loop calls on every tick, or after every pass */
struct loop_hook {
	void (*fn)(void);
	struct loop_hook *next;
};

/* The loop's epoll set and its timer (LOOP_TICK_MS); 0 or -errno */
int loop_open(void);
/* Until loop_stop(); returns its signal */
int loop_run(void);
void loop_stop(int sig);
/* Called in the order registered */
void loop_on_tick(struct loop_hook *h);
void loop_after_pass(struct loop_hook *h);
#define LOOP_TICK_MS 250

/* Watch fd for events (EPOLLIN, EPOLLOUT, or 0: none yet) */
int ep_watch(struct ep_tag *tag, int fd, __u32 events,
	     void (*fn)(struct ep_tag *tag, __u32 events));
int ep_add(int fd, struct ep_tag *tag); /* EPOLLIN, tag->fn set */
int ep_mod(int fd, struct ep_tag *tag, __u32 events);
/* Stop watching fd; tag gets no more calls, not even this pass's */
void ep_del(int fd, struct ep_tag *tag);

/* The loop's clock: CLOCK_MONOTONIC in ms */
long now_ms(void);

#endif /* RXDP_DAEMON_LOOP_H */
