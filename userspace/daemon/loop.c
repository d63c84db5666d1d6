// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control thread's loop: the epoll set every fd of the control plane
 * is in (the control socket, its clients, rtnetlink, the CM's sockets and
 * timer, QP1's notifications), the clock and a 250 ms tick. The loop is
 * the bottom of the daemon: what runs on an event, a tick or after a pass
 * is what the layers above registered (loop.h), so it calls none of them.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/rxdpd.h"

struct rxdpd rxdpd;

static int epfd = -1;
static int timer_fd = -1;
static struct ep_tag timer_tag;
static struct loop_hook *tick_hooks, *pass_hooks;
static volatile sig_atomic_t stop;
/* The events epoll_wait() gave; from batch_next on, not handled yet */
static struct epoll_event batch[32];
static int batch_next, batch_len;

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int ep_watch(struct ep_tag *tag, int fd, __u32 events,
	     void (*fn)(struct ep_tag *tag, __u32 events))
{
	struct epoll_event ev = { .events = events, .data.ptr = tag };

	tag->fn = fn;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	return 0;
}

int ep_add(int fd, struct ep_tag *tag)
{
	return ep_watch(tag, fd, EPOLLIN, tag->fn);
}

int ep_mod(int fd, struct ep_tag *tag, __u32 events)
{
	struct epoll_event ev = { .events = events, .data.ptr = tag };

	if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev))
		return -errno;
	return 0;
}

/*
 * An event of this pass may be for it still: it is dropped, as its owner
 * may free the tag once this returns (a client's release closes its CM
 * channels while their events wait behind its own)
 */
void ep_del(int fd, struct ep_tag *tag)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	for (int i = batch_next; i < batch_len; i++)
		if (batch[i].data.ptr == tag)
			batch[i].data.ptr = NULL;
}

static void hook_append(struct loop_hook **list, struct loop_hook *h)
{
	while (*list)
		list = &(*list)->next;
	h->next = NULL;
	*list = h;
}

void loop_on_tick(struct loop_hook *h)
{
	hook_append(&tick_hooks, h);
}

void loop_after_pass(struct loop_hook *h)
{
	hook_append(&pass_hooks, h);
}

static void hooks_run(struct loop_hook *h)
{
	for (; h; h = h->next)
		h->fn();
}

static void on_tick(struct ep_tag *tag, __u32 events)
{
	__u64 ticks;

	(void)tag;
	(void)events;
	if (read(timer_fd, &ticks, sizeof(ticks)) < 0)
		return;
	hooks_run(tick_hooks);
}

/* Async-signal-safe: main.c's SIGINT and SIGTERM handler */
void loop_stop(int sig)
{
	stop = sig ? sig : -1;
}

int loop_open(void)
{
	struct itimerspec its = { { 0, LOOP_TICK_MS * 1000000L },
				  { 0, LOOP_TICK_MS * 1000000L } };
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (timer_fd < 0 || timerfd_settime(timer_fd, 0, &its, NULL))
		return -errno;
	return ep_watch(&timer_tag, timer_fd, EPOLLIN, on_tick);
}

int loop_run(void)
{
	while (!stop) {
		int n, i;

		n = epoll_wait(epfd, batch, 32, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_warn("epoll_wait: %s\n", strerror(errno));
			break;
		}
		batch_len = n;
		for (i = 0; i < n; i++) {
			struct ep_tag *t = batch[i].data.ptr;

			batch_next = i + 1;
			if (t)
				t->fn(t, batch[i].events);
		}
		batch_len = 0;
		hooks_run(pass_hooks);
	}
	return stop > 0 ? stop : 0;
}
