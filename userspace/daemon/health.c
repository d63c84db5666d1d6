// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What keeps rxdpd from serving, said where an operator looks: no silent
 * broken states. Each problem is one line; the set is worked out again
 * after link events and every second (health_update()), and
 *   - a line that appears is logged once (a warning), and once more when it
 *     clears (info), never in between;
 *   - the lines go with every LIST_DEVICES reply (RXDP_CTL_A_MSG of a
 *     successful reply), which rxdp-ctl prints and the verbs library names
 *     when it finds no device;
 *   - the first goes to systemd's STATUS= (systemctl status), else the
 *     devices served.
 * The lines never carry a changing number, so the same problem is the same
 * line from one second to the next.
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "common/bpffs.h"
#include "common/caps.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "daemon/rxdpd.h"

/* A pin directory whose maps do not open is a problem after this long
 * (before, the loader may be half-way through pinning) */
#define MAPS_GRACE_MS 2000

#define HEALTH_LINES 8
#define HEALTH_LINE 200

struct health {
	char line[HEALTH_LINES][HEALTH_LINE];
	int n;
};

static struct health now_h, caps_h;
static int bpffs_err;
static char text[RXDP_HEALTH_TEXT_MAX];
static char status[HEALTH_LINE + 16];

static void add(struct health *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct health *h, const char *fmt, ...)
{
	va_list ap;

	if (h->n == HEALTH_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(h->line[h->n++], HEALTH_LINE, fmt, ap);
	va_end(ap);
}

static bool has(const struct health *h, const char *line)
{
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->line[i], line))
			return true;
	return false;
}

/*
 * The rights rxdpd uses, and what goes without each. Checked once: a
 * process does not gain capabilities. CAP_BPF is not among them: whether
 * the pinned maps open without it depends on the kernel (6.5 and later, or
 * kernel.unprivileged_bpf_disabled=0), so their failure is what is said
 * (collect()).
 */
static void caps_check(void)
{
	struct rlimit rl;

	if (!rxdp_cap_effective(CAP_NET_RAW))
		add(&caps_h, "lacks CAP_NET_RAW: cannot open AF_XDP sockets, "
			     "so no device carries traffic");
	if (!rxdp_cap_effective(CAP_IPC_LOCK) &&
	    (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur != RLIM_INFINITY))
		add(&caps_h,
		    "lacks CAP_IPC_LOCK and RLIMIT_MEMLOCK is limited: "
		    "AF_XDP memory counts against it, devices may "
		    "fail to start");
	if (!rxdp_cap_effective(CAP_NET_ADMIN))
		add(&caps_h, "lacks CAP_NET_ADMIN: cannot ask the kernel to "
			     "resolve a neighbour, connections wait for its "
			     "ARP or ND traffic");
	if (!rxdp_cap_effective(CAP_MKNOD))
		add(&caps_h, "lacks CAP_MKNOD: no /dev/infiniband node per "
			     "device, programs that look for one (UCX) find "
			     "no device");
	if (rxdpd.fifo_prio && !rxdp_cap_effective(CAP_SYS_NICE))
		add(&caps_h, "lacks CAP_SYS_NICE: the data-path threads cannot "
			     "run SCHED_FIFO (--fifo), latency suffers on a "
			     "busy host");
	if (rxdpd.group_set && !rxdp_cap_effective(CAP_CHOWN))
		add(&caps_h, "lacks CAP_CHOWN: cannot give the /dev/infiniband "
			     "nodes to --group");
}

void health_init(int bpffs_ret)
{
	bpffs_err = bpffs_ret;
	caps_check();
	for (int i = 0; i < caps_h.n; i++)
		pr_warn("%s\n", caps_h.line[i]);
	/* logged: health_update() takes them as known */
	now_h = caps_h;
}

static const char *maps_hint(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return " (rxdpd needs CAP_BPF)";
	case -EPROTO:
		return ": they are not the layout this rxdpd was built for (an "
		       "rxdp-loader of another version? detach and attach "
		       "again)";
	}
	return "";
}

static void collect(struct health *h, long now)
{
	struct rxdp_link *l;
	int ndev = 0, nbroken = 0;

	*h = caps_h;
	for (l = rxdpd.links; l; l = l->next) {
		if (l->dev) {
			ndev++;
			if (l->dev->dp_err[0])
				add(h, "rxdp_%s: no data path (%s): port DOWN",
				    l->ifname, l->dev->dp_err);
			if (l->dev->xdp_missing)
				add(h,
				    "%s: the XDP program is gone (detached "
				    "behind rxdp-loader's back?): port DOWN; "
				    "rxdp-loader detach %s and attach %s",
				    l->ifname, l->ifname, l->ifname);
			continue;
		}
		if (l->maps_err && now - l->maps_err_since >= MAPS_GRACE_MS) {
			nbroken++;
			add(h,
			    "%s: rxdp is attached but its pinned maps cannot "
			    "be opened: %s%s",
			    l->ifname, strerror(-l->maps_err),
			    maps_hint(l->maps_err));
		}
	}
	if (ndev || nbroken)
		return;
	if (bpffs_err)
		add(h,
		    "no device: the bpffs at %s is not usable (%s), where "
		    "rxdp-loader pins what rxdpd serves",
		    RXDP_BPFFS_ROOT, strerror(-bpffs_err));
	else
		add(h, "no device: rxdp is attached to no interface in this "
		       "network namespace (rxdp-loader attach IFNAME)");
}

/* The STATUS= line: the first problem, else the devices served */
static void status_update(void)
{
	char s[sizeof(status)];
	size_t off;
	struct rxdp_link *l;

	if (now_h.n) {
		snprintf(s, sizeof(s), "STATUS=%s", now_h.line[0]);
	} else {
		off = (size_t)snprintf(s, sizeof(s), "STATUS=serving");
		for (l = rxdpd.links; l && off < sizeof(s); l = l->next)
			if (l->dev)
				off += (size_t)snprintf(s + off,
							sizeof(s) - off,
							" rxdp_%s", l->ifname);
	}
	if (strcmp(s, status)) {
		memcpy(status, s, sizeof(status));
		rxdp_sd_notify(status);
	}
}

void health_update(void)
{
	struct health h;
	size_t off = 0;

	collect(&h, now_ms());
	for (int i = 0; i < h.n; i++)
		if (!has(&now_h, h.line[i]))
			pr_warn("%s\n", h.line[i]);
	for (int i = 0; i < now_h.n; i++)
		if (!has(&h, now_h.line[i]))
			pr_info("resolved: %s\n", now_h.line[i]);
	now_h = h;
	text[0] = '\0';
	for (int i = 0; i < h.n && off < sizeof(text); i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s",
					i ? "\n" : "", h.line[i]);
	status_update();
}

const char *health_text(void)
{
	return text;
}
