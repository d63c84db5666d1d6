// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdpd: rxdp's control daemon, one per network namespace.
 *
 *   rxdpd [--socket PATH] [--takeover] [--fdstore] [--group NAME] [--cpus LIST]
 *         [--fifo PRIO] [--poll] [--verbose]
 *
 * Runs in the foreground and logs to stderr. The control socket is the
 * abstract "\0rxdp/rxdpd" unless --socket names another ("@name" for an
 * abstract one); binding it is the lock that keeps a second daemon out.
 * This file is the top of the daemon: options, what is opened at start
 * and closed at exit, and what the loop (loop.c) runs on rtnetlink's
 * messages and on its ticks. Each device's data path runs on threads of
 * its own (uverbs.c).
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/if_xdp.h>

#include <bpf/libbpf.h>

#include "common/bpffs.h"
#include "common/log.h"
#include "common/opts.h"
#include "common/sdnotify.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"

static bool takeover; /* --takeover */
static bool fdstore; /* --fdstore */

static void cpu_add(unsigned long cpu, void *set)
{
	CPU_SET(cpu, (cpu_set_t *)set);
}

/* "0,2-3" -> a CPU set; -1 on anything else */
static int parse_cpus(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	return rxdp_opts_list(s, CPU_SETSIZE, cpu_add, set);
}

/* "512M" -> bytes; -1 on anything else */
static int parse_bytes(const char *s, __u64 *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;

	if (end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (shift && end[1])
		return -1;
	if (!v || v > (~0ULL >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

/*
 * What one user may make rxdpd hold by default: an eighth of the host's
 * memory, 1 GiB at most, so that no user alone drives the daemon every
 * client needs into the OOM killer
 */
static __u64 default_user_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	__u64 m = pages > 0 && psz > 0 ? (__u64)pages * (__u64)psz / 8 : 0;

	return m && m < (1ULL << 30) ? m : 1ULL << 30;
}

/*
 * Every connection, context and CM channel holds an fd here: as many as
 * the hard limit allows (the soft one is often 1024)
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			pr_debug("cannot raise RLIMIT_NOFILE: %s\n",
				 strerror(errno));
	}
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct rxdp_opt rxdpd_opts[] = {
	{ "socket", 's', "PATH",
	  "control socket (default: the abstract @" RXDP_CTL_ABSTRACT_NAME
	  ";\n\"@name\" for another abstract name)" },
	{ "group", 'g', "NAME",
	  "only root and this group's members may use the\n"
	  "devices (default: everyone, as /dev/infiniband is\n"
	  "0666)" },
	{ "cpus", 'c', "LIST",
	  "run the data-path threads on these CPUs (e.g. 0,2-3)" },
	{ "fifo", 'f', "PRIO",
	  "SCHED_FIFO priority of the data-path threads, 1..99;\n"
	  "0: a short EEVDF slice (default " STR(RXDPD_FIFO_DEFAULT) ")" },
	{ "engines", 'e', "N",
	  "data-path engines per device, at most one per RX\n"
	  "queue (default auto: one per queue, at most one\n"
	  "per CPU --cpus allows), or --engines-per-queue's" },
	{ "engines-per-queue", 'Q', "N",
	  "N engines on each RX queue, their sockets sharing\n"
	  "it, within --engines, or auto (default: 2 where the\n"
	  "device has one queue and CPUs to spare, without\n"
	  "--poll; 1 elsewhere)" },
	{ "xsk", 'x', "MODE",
	  "the AF_XDP sockets' mode: copy, zero-copy, or auto\n"
	  "(default: zero-copy where the driver has it)" },
	{ "takeover", 256 + 'T', NULL,
	  "take over from the rxdpd running on the control\n"
	  "socket: its devices and clients go on without a\n"
	  "break (or it says why not, and goes on itself)" },
	{ "fdstore", 256 + 'F', NULL,
	  "stopped by systemd (SIGTERM), hand everything to the\n"
	  "unit's file descriptor store and exit 3: the next\n"
	  "rxdpd it starts takes over (a restart keeps every\n"
	  "connection; a stop ends them)" },
	{ "poll", 'p', NULL,
	  "the data-path threads never sleep: each spins on its\n"
	  "CPU (give them CPUs of their own with --cpus)" },
	{ "tx-thread", 't', "MODE",
	  "each engine's copy-mode AF_XDP sends (sendto()) in a\n"
	  "thread of their own: on, off, or auto (default: on\n"
	  "where the data path may use 4 CPUs per engine)" },
	{ "user-mem", 'm', "BYTES",
	  "the most of rxdpd's memory each user but root may\n"
	  "hold in queues (K, M, G suffixes; default an eighth\n"
	  "of the host's memory, 1G at most)" },
	{ "no-ecn", 'n', "IFNAMES",
	  "these interfaces' RoCE packets (a comma-separated\n"
	  "list) go with the traffic class as the AH gives it,\n"
	  "not ECT(0) (default: ECT(0) everywhere)" },
	{ "go-back-n", 'b', "IFNAMES",
	  "these interfaces' QPs recover from loss by going back\n"
	  "only, as with any other RoCE peer (default: they\n"
	  "resend just what was lost to an rxdp peer)" },
	{ "cc", 'k', "PARAMS",
	  "DCQCN's parameters, NAME=VALUE,... by mlx5's\n"
	  "cc_params names, in its units (rp_time_reset=300:\n"
	  "us between rate increases); the rest keep\n"
	  "ConnectX's defaults; the delay algorithm's are\n"
	  "delay_* (rxdpd(8))" },
	{ "cc-algo", 'a', "ALGOS",
	  "what moves a QP's rate: dcqcn (CNPs, the default),\n"
	  "delay (RTT) or off; ALGO for every interface,\n"
	  "IFNAME=ALGO for one, comma-separated" },
	{ "tc", 'T', "CLASS",
	  "a service class of the AH service levels SLS:\n"
	  "SLS=strict (served first) or SLS=WEIGHT (1-100,\n"
	  "sharing the rest), SLS as 5 or 0-3,6; IFNAME:CLASS\n"
	  "for one interface; once per class, at most 4 (the\n"
	  "SLs none names: a class of weight 1)" },
	{ "verbose", 'v', NULL, "debug logging" },
	{},
};

/*
 * --cc-algo ALGO or IFNAME=ALGO, comma-separated: into rxdpd.cc_algo, one
 * readable line on a mistake
 */
static int parse_cc_algo(const char *arg)
{
	char buf[512], *save = NULL, *item;

	if (strlen(arg) >= sizeof(buf)) {
		pr_err("--cc-algo: too long\n");
		return -1;
	}
	strcpy(buf, arg);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *name = eq ? eq + 1 : item;
		enum eng_cc_algo a;

		if (eng_cc_algo_parse(name, &a)) {
			pr_err("--cc-algo: no algorithm %s (dcqcn, delay, "
			       "off)\n",
			       name);
			return -1;
		}
		if (!eq) {
			rxdpd.cc_algo_rest = a;
			continue;
		}
		if (eq == item) {
			pr_err("--cc-algo: %s: IFNAME=ALGO expected\n", item);
			return -1;
		}
		*eq = 0;
		if (strlen(item) >= IF_NAMESIZE) {
			pr_err("--cc-algo: %s is not an interface's name\n",
			       item);
			return -1;
		}
		if (rxdpd.ncc_algo == RXDPD_CC_ALGO_MAX) {
			pr_err("--cc-algo: more than %d interfaces\n",
			       RXDPD_CC_ALGO_MAX);
			return -1;
		}
		strcpy(rxdpd.cc_algo[rxdpd.ncc_algo].ifname, item);
		rxdpd.cc_algo[rxdpd.ncc_algo++].algo = a;
	}
	return 0;
}

/*
 * --tc [IFNAME:]SLS=strict|WEIGHT, once per class: into rxdpd.tc (an
 * interface's) or rxdpd.tc_rest, one readable line on a mistake
 */
static int parse_tc(const char *arg)
{
	const char *colon = strchr(arg, ':'), *spec = colon ? colon + 1 : arg;
	struct eng_tcs *t = &rxdpd.tc_rest;
	int err;

	if (colon) {
		size_t n = (size_t)(colon - arg);
		int i;

		if (!n || n >= IF_NAMESIZE) {
			pr_err("--tc %s: IFNAME:CLASS expected\n", arg);
			return -1;
		}
		for (i = 0; i < rxdpd.ntc; i++)
			if (!strncmp(rxdpd.tc[i].ifname, arg, n) &&
			    !rxdpd.tc[i].ifname[n])
				break;
		if (i == RXDPD_TC_IFS_MAX) {
			pr_err("--tc: more than %d interfaces\n",
			       RXDPD_TC_IFS_MAX);
			return -1;
		}
		if (i == rxdpd.ntc) {
			memcpy(rxdpd.tc[i].ifname, arg, n);
			eng_tcs_default(&rxdpd.tc[i].tcs);
			rxdpd.ntc++;
		}
		t = &rxdpd.tc[i].tcs;
	}
	err = eng_tcs_add(t, spec);
	if (err == -EEXIST)
		pr_err("--tc %s: an SL of it is in another class\n", arg);
	else if (err == -ENOSPC)
		pr_err("--tc %s: more than %d classes\n", arg, ENG_TC_MAX);
	else if (err)
		pr_err("--tc %s: SLS=strict or SLS=WEIGHT expected (SLS as "
		       "5 or 0-3,6 of 0-15, WEIGHT 1-%d)\n",
		       arg, ENG_TC_WEIGHT_MAX);
	return err ? -1 : 0;
}

/* The SLs no --tc named get a class of their own: 0, or an exit status */
static int finish_tc(void)
{
	for (int i = -1; i < rxdpd.ntc; i++) {
		struct eng_tcs *t = i < 0 ? &rxdpd.tc_rest : &rxdpd.tc[i].tcs;

		if (eng_tcs_finish(t)) {
			pr_err("--tc%s%s: %d classes and SLs in none: no room "
			       "for their class\n",
			       i < 0 ? "" : " ",
			       i < 0 ? "" : rxdpd.tc[i].ifname, ENG_TC_MAX);
			return 2;
		}
	}
	return 0;
}

/* --cc NAME=VALUE,...: into rxdpd.cc, one readable line on a mistake */
static int parse_cc(const char *arg)
{
	char buf[512], *save = NULL, *item;

	if (strlen(arg) >= sizeof(buf)) {
		pr_err("--cc: too long\n");
		return -1;
	}
	strcpy(buf, arg);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		unsigned long v;

		if (!eq || eq == item) {
			pr_err("--cc %s: NAME=VALUE expected\n", item);
			return -1;
		}
		*eq = 0;
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || *end || end == eq + 1 || eq[1] == '-' ||
		    v > UINT32_MAX) {
			pr_err("--cc %s: %s is not a number 0..%u\n", item,
			       eq + 1, UINT32_MAX);
			return -1;
		}
		if (eng_cc_param_set(&rxdpd.cc, item, (uint32_t)v)) {
			char names[1024] = "";
			const char *n;

			for (unsigned int k = 0; (n = eng_cc_param_name(k));
			     k++)
				snprintf(names + strlen(names),
					 sizeof(names) - strlen(names), "%s%s",
					 k ? ", " : "", n);
			pr_err("--cc: no parameter %s (mlx5's cc_params, "
			       "delay_*: %s)\n",
			       item, names);
			return -1;
		}
	}
	return 0;
}

static int rxdpd_set(int key, const char *arg, void *ctx)
{
	const char **path = ctx;
	struct group *g;
	char *end;

	switch (key) {
	case 's':
		*path = arg;
		return 0;
	case 256 + 'T':
		takeover = true;
		return 0;
	case 256 + 'F':
		fdstore = true;
		return 0;
	case 'g':
		g = getgrnam(arg);
		if (!g) {
			pr_err("no group %s\n", arg);
			return -1;
		}
		rxdpd.group = g->gr_gid;
		rxdpd.group_set = true;
		return 0;
	case 'c':
		if (parse_cpus(arg, &rxdpd.cpus)) {
			pr_err("--cpus %s: not a CPU list like 0,2-3\n", arg);
			return -1;
		}
		rxdpd.ncpus_set = true;
		return 0;
	case 'f':
		rxdpd.fifo_prio = (int)strtol(arg, &end, 10);
		if (*end || end == arg || rxdpd.fifo_prio < 0 ||
		    rxdpd.fifo_prio > 99) {
			pr_err("--fifo %s: a priority 0..99\n", arg);
			return -1;
		}
		return 0;
	case 'p':
		rxdpd.poll = true;
		return 0;
	case 't':
		if (!strcmp(arg, "on"))
			rxdpd.tx_thread = RXDPD_TXT_ON;
		else if (!strcmp(arg, "off"))
			rxdpd.tx_thread = RXDPD_TXT_OFF;
		else if (!strcmp(arg, "auto"))
			rxdpd.tx_thread = RXDPD_TXT_AUTO;
		else {
			pr_err("--tx-thread %s: on, off or auto\n", arg);
			return -1;
		}
		return 0;
	case 'x':
		if (!strcmp(arg, "copy"))
			rxdpd.xsk_mode = XDP_COPY;
		else if (!strcmp(arg, "zero-copy"))
			rxdpd.xsk_mode = XDP_ZEROCOPY;
		else if (!strcmp(arg, "auto"))
			rxdpd.xsk_mode = 0;
		else {
			pr_err("--xsk %s: copy, zero-copy or auto\n", arg);
			return -1;
		}
		return 0;
	case 'e':
		if (!strcmp(arg, "auto")) {
			rxdpd.engines = 0;
			return 0;
		}
		rxdpd.engines = (int)strtol(arg, &end, 10);
		if (*end || end == arg || rxdpd.engines < 1 ||
		    rxdpd.engines > RXDP_MAX_QUEUES) {
			pr_err("--engines %s: a number 1..%d, or auto\n", arg,
			       RXDP_MAX_QUEUES);
			return -1;
		}
		return 0;
	case 'Q':
		if (!strcmp(arg, "auto")) {
			rxdpd.engines_per_queue = 0;
			return 0;
		}
		rxdpd.engines_per_queue = (int)strtol(arg, &end, 10);
		if (*end || end == arg || rxdpd.engines_per_queue < 1 ||
		    rxdpd.engines_per_queue > RXDP_MAX_QUEUES) {
			pr_err("--engines-per-queue %s: a number 1..%d, or "
			       "auto\n",
			       arg, RXDP_MAX_QUEUES);
			return -1;
		}
		return 0;
	case 'm':
		if (parse_bytes(arg, &rxdpd.user_mem)) {
			pr_err("--user-mem %s: a size like 512M or 2G\n", arg);
			return -1;
		}
		return 0;
	case 'n':
		rxdpd.no_ecn = arg;
		return 0;
	case 'b':
		rxdpd.go_back_n = arg;
		return 0;
	case 'k':
		return parse_cc(arg);
	case 'a':
		return parse_cc_algo(arg);
	case 'T':
		return parse_tc(arg);
	case 'v':
		rxdp_log_set_level(RXDP_LOG_DEBUG);
		return 0;
	}
	return -1;
}

static const struct rxdp_cmdline rxdpd_cmdline = {
	.prog = "rxdpd",
	.usage = "[--socket PATH] [--takeover] [--fdstore] [--group NAME]\n"
		 " [--cpus LIST] [--fifo PRIO] [--engines N]\n"
		 " [--engines-per-queue N] [--xsk MODE]\n"
		 " [--poll] [--tx-thread MODE] [--user-mem BYTES] [--no-ecn "
		 "IFNAMES]\n"
		 " [--go-back-n IFNAMES] [--cc PARAMS] [--cc-algo ALGOS]\n"
		 " [--tc CLASS]... [--verbose]",
	.doc = "rxdp's daemon, one per network namespace: it serves every "
	       "interface that has\n"
	       "rxdp attached (rxdp-loader attach IFNAME) as the verbs device "
	       "rxdp_IFNAME, and\n"
	       "runs the transport for every verbs program of the host. It "
	       "stays in the\n"
	       "foreground and logs to stderr.\n",
	.opts = rxdpd_opts,
	.footer = "See rxdpd(8).\n",
	.set = rxdpd_set,
};

static void on_signal(int sig)
{
	loop_stop(sig);
}

/* rtnetlink spoke: the links are current; parked requests may go on */
static void on_netlink(struct ep_tag *tag, __u32 events)
{
	rtnl_event();
	health_update();
	clients_retry();
	cm_retry();
}

/* Every tick parked neighbour resolutions may time out; every second the
 * pin directories are looked at */
static void on_tick(void)
{
	static unsigned long ticks_seen;

	if (++ticks_seen % (1000 / LOOP_TICK_MS) == 0) {
		dev_check_all();
		health_update();
	}
	clients_retry();
	cm_retry();
	clients_idle(now_ms());
}

static void on_serve(const char *path)
{
	pr_info("ready on %s%s\n", path ? "" : "@",
		path ? path : RXDP_CTL_ABSTRACT_NAME);
	rxdp_sd_notify("READY=1");
}

/* What main() may decide before anything is opened; 0 or an exit status */
static int rxdpd_configure(int argc, char **argv, const char **path)
{
	struct sigaction sa;
	struct utsname u;
	int first;

	rxdp_log_set_prefix("rxdpd");
	rxdp_log_set_level(RXDP_LOG_INFO);
	rxdpd.fifo_prio = RXDPD_FIFO_DEFAULT;
	rxdpd.engines_per_queue = 0; /* auto */
	rxdpd.user_mem = default_user_mem();
	eng_cc_params_default(&rxdpd.cc);
	eng_tcs_default(&rxdpd.tc_rest);
	first = rxdp_opts_parse(&rxdpd_cmdline, argc, argv, path);
	if (first < 0 || finish_tc())
		return 2;
	if (first != argc) {
		pr_err("unexpected argument '%s' (see --help)\n", argv[first]);
		return 2;
	}
	rxdp_log_libbpf_init();
	raise_nofile();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rxdpd.ncpus = libbpf_num_possible_cpus();
	if (rxdpd.ncpus <= 0) {
		pr_err("cannot count possible CPUs\n");
		return 1;
	}
	rxdpd.mtu_cap = uname(&u) ? RXDP_MTU_CAP_NOSG : rxdp_mtu_cap(u.release);
	return 0;
}

/* The loop, the control socket, the CM, rtnetlink; 0 or -1 (logged) */
static int rxdpd_open(const char *path)
{
	static struct ep_tag nl_tag;
	static struct loop_hook tick = { on_tick }, reap = { clients_reap };
	int ret, bpffs_ret;

	ret = loop_open();
	if (ret) {
		pr_err("epoll, timer: %s\n", strerror(-ret));
		return -1;
	}
	/* The socket first: it is the lock against a second daemon */
	ret = server_open(path);
	if (ret == -EADDRINUSE) {
		pr_err("another rxdpd already runs in this network namespace "
		       "(socket %s%s in use)\n",
		       path ? "" : "@", path ? path : RXDP_CTL_ABSTRACT_NAME);
		return -1;
	}
	if (ret) {
		pr_err("cannot open the control socket: %s\n", strerror(-ret));
		return -1;
	}
	/* Reach the bpffs the loader pins in (it may join our parent's
	 * mount namespace; /sys is not used after this) */
	bpffs_ret = rxdp_bpffs_ensure();

	ret = cm_init();
	if (ret) {
		pr_err("connection manager: %s\n", strerror(-ret));
		return -1;
	}
	/* what follows the devices' events, before rtnetlink's first */
	dev_init();
	qp_init();
	uverbs_init();
	devnode_clean();
	ret = rtnl_open();
	if (ret) {
		pr_err("rtnetlink: %s\n", strerror(-ret));
		return -1;
	}
	if (rtnl_resync())
		return -1;
	ep_watch(&nl_tag, rtnl_fd(), EPOLLIN, on_netlink);
	health_init(bpffs_ret);
	health_update();
	loop_on_tick(&tick);
	loop_after_pass(&reap);
	return 0;
}

/* The data path ends with the daemon: every client's objects go */
static void rxdpd_close(void)
{
	rxdp_sd_notify("STOPPING=1");
	server_close();
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next)
		client_release(c);
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		if (l->dev)
			dev_release(l);
	cm_fini();
}

/*
 * --takeover returns once the successor serves (exit 0) or says why not
 * (its status): the successor is a child that goes on, as systemd's
 * ExecReload wants it (the predecessor tells systemd it is the main
 * process now). The fd the child says so on, or -1 in the parent's
 * place: the parent never returns.
 */
static int takeover_fork(void)
{
	int p[2];
	pid_t pid;
	char st = 1;

	if (pipe2(p, O_CLOEXEC) || (pid = fork()) < 0) {
		pr_err("--takeover: cannot start the successor: %s\n",
		       strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		return p[1];
	}
	close(p[1]);
	while (read(p[0], &st, 1) < 0 && errno == EINTR)
		;
	/* the child's status, or (it died first) a failure */
	exit(st);
}

static void takeover_said(int *fd, int status)
{
	char st = (char)status;

	if (*fd < 0)
		return;
	if (write(*fd, &st, 1) < 0) {
		/* the parent is gone: nobody to tell */
	}
	close(*fd);
	*fd = -1;
}

int main(int argc, char **argv)
{
	static struct tko_in state;
	const char *path = NULL;
	int ret, sig, said = -1;

	ret = rxdpd_configure(argc, argv, &path);
	if (ret)
		return ret;
	/* --takeover: everything from the running rxdpd, which then exits;
	 * or from the one systemd stopped, in its descriptor store */
	if (takeover) {
		said = takeover_fork();
		ret = takeover_take(path, &state);
		if (ret) {
			takeover_said(&said, ret);
			return ret;
		}
		tko_state = &state;
	} else if (!takeover_from_store(&state)) {
		tko_state = &state;
	}
	ret = rxdpd_open(path);
	server_on_takeover(takeover_give);
	if (tko_state) {
		if (!ret)
			takeover_restore();
		tko_state = NULL;
		takeover_done(&state);
	}
	if (ret) {
		takeover_said(&said, 1);
		return 1;
	}
	on_serve(path);
	takeover_said(&said, 0);
	takeover_serving();
	sig = loop_run();
	/* no return when it hands over */
	if (fdstore && sig == SIGTERM)
		takeover_store();
	rxdpd_close();
	pr_info("exiting on signal %d\n", sig);
	return 0;
}
