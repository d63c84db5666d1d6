// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-loader: attach rxdp's XDP program to an interface, pin its maps, show
 * what it counted, and detach it again.
 *
 * The program is attached through libxdp, so it runs in libxdp's dispatcher
 * next to other XDP programs. Its maps are pinned (with BTF) under
 * rxdp_bpffs_if_dir(ifname), where rxdpd and bpftool find them. libxdp keeps
 * its dispatcher pins under rxdp_bpffs_libxdp_dir(): one directory per
 * network namespace, because interface indexes of two namespaces can be equal
 * and libxdp names its pins by index.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "common/pins.h"
#include "common/bpffs.h"
#include "common/caps.h"
#include "common/ctl_client.h"
#include "common/log.h"
#include "common/opts.h"
#include "rxdp/maps.h"
#include "rxdp/params.h"
#include "features.h"
#include "stale.h"
#include "xsks.h"
#include "rxdp_xdp.skel.h"

/* The program's two variants, by function name in bpf/rxdp_xdp.bpf.c */
#define PROG_FRAGS "rxdp_xdp" /* multi-buffer (xdp.frags), Linux 5.18 */
#define PROG_LINEAR "rxdp_xdp_linear" /* one buffer a frame */

static bool is_rxdp_prog(const char *name)
{
	return !strcmp(name, PROG_FRAGS) || !strcmp(name, PROG_LINEAR);
}

enum {
	EXIT_USAGE = 2
};

/* The single line a failed command prints, then a non-zero exit */
#define fail(fmt, ...) pr_err(fmt "\n", ##__VA_ARGS__)

static const struct rxdp_opt loader_opts[] = {
	{ "mode", 'm', "MODE",
	  "attach mode, native or skb (default: native if the\n"
	  "driver has it, else skb)" },
	{ "variant", 'p', "VARIANT",
	  "the program to attach: frags (multi-buffer XDP,\n"
	  "Linux 5.18) or linear (no frame larger than a page);\n"
	  "default: frags where the kernel has it" },
	{ "verbose", 'v', NULL, "say more (twice: libbpf and libxdp too)" },
	{},
};

enum variant {
	VARIANT_AUTO,
	VARIANT_FRAGS,
	VARIANT_LINEAR,
};

struct loader_cfg {
	enum xdp_attach_mode mode;
	const char *attach_only; /* an option only attach takes, if given */
	enum variant variant;
	int verbose;
};

static int loader_set(int key, const char *arg, void *ctx)
{
	struct loader_cfg *cfg = ctx;

	switch (key) {
	case 'm':
		if (!strcmp(arg, "native")) {
			cfg->mode = XDP_MODE_NATIVE;
		} else if (!strcmp(arg, "skb")) {
			cfg->mode = XDP_MODE_SKB;
		} else {
			fail("unknown mode '%s' (native or skb)", arg);
			return -1;
		}
		cfg->attach_only = "--mode";
		return 0;
	case 'p':
		if (!strcmp(arg, "frags")) {
			cfg->variant = VARIANT_FRAGS;
		} else if (!strcmp(arg, "linear")) {
			cfg->variant = VARIANT_LINEAR;
		} else {
			fail("unknown variant '%s' (frags or linear)", arg);
			return -1;
		}
		cfg->attach_only = "--variant";
		return 0;
	case 'v':
		cfg->verbose++;
		return 0;
	}
	return -1;
}

static const struct rxdp_cmdline loader_cmdline = {
	.prog = "rxdp-loader",
	.usage = "[-v] attach IFNAME [--mode native|skb] [--variant "
		 "frags|linear]\n"
		 "[-v] detach IFNAME\n"
		 "[-v] status [IFNAME]\n"
		 "[-v] clean",
	.doc = "Attach rxdp's XDP program to a network interface, so that "
	       "rxdpd serves it\n"
	       "as the verbs device rxdp_IFNAME; detach it; show what it "
	       "counted.\n"
	       "\n"
	       "Commands:\n"
	       "  attach   attach the XDP program (through libxdp, beside "
	       "other XDP\n"
	       "           programs where the kernel allows) and pin its maps "
	       "under\n"
	       "           " RXDP_BPFFS_ROOT "/net<netns inode>/IFNAME/\n"
	       "  detach   detach it and remove the pins\n"
	       "  status   attach mode, pin path, AF_XDP sockets (zero-copy or "
	       "copy),\n"
	       "           verdict counters and QPs of IFNAME, or of every "
	       "interface of\n"
	       "           this network namespace, then the stale pins "
	       "(clean's)\n"
	       "  clean    remove stale pins: those of network namespaces "
	       "that no longer\n"
	       "           exist, and of this namespace's interfaces that are "
	       "gone or\n"
	       "           that rxdp is no longer attached to (rxdp.service "
	       "runs it)\n",
	.opts = loader_opts,
	.footer = "Needs CAP_SYS_ADMIN (and CAP_NET_ADMIN to attach or "
		  "detach). Exit status: 0\n"
		  "done, 1 failed (one line on stderr says why), 2 bad usage. "
		  "See rxdp-loader(8).\n",
	.set = loader_set,
};

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	/* one level quieter than ours, like libbpf's (log_libbpf.c) */
	rxdp_log_vprint(level == LIBXDP_WARN ? RXDP_LOG_INFO : RXDP_LOG_DEBUG,
			fmt, ap);
	return 0;
}

/*
 * libbpf's messages, as rxdp_log_libbpf_init() routes them (one level
 * quieter than ours), and while `capture` is set its warnings kept too: a
 * program the verifier refuses is one of them, with the verifier's log, and
 * an operator must see that log without -v.
 */
static struct {
	bool on;
	char *buf;
	size_t len;
} capture;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	va_list aq;

	if (capture.on && level == LIBBPF_WARN) {
		char *msg = NULL, *nbuf;
		int n;

		va_copy(aq, ap);
		n = vasprintf(&msg, fmt, aq);
		va_end(aq);
		if (n > 0) {
			nbuf = realloc(capture.buf, capture.len + n + 1);
			if (nbuf) {
				memcpy(nbuf + capture.len, msg, n + 1);
				capture.buf = nbuf;
				capture.len += n;
			}
		}
		free(msg);
	}
	rxdp_log_vprint(level == LIBBPF_WARN ? RXDP_LOG_INFO : RXDP_LOG_DEBUG,
			fmt, ap);
	return 0;
}

/*
 * The verifier's log of program `name` among the captured warnings (libbpf
 * prints it between these markers when the kernel refuses a program), or
 * NULL. Cut out in place.
 */
static const char *captured_verifier_log(const char *name)
{
	char begin[64], *b = NULL, *e, *p;

	snprintf(begin, sizeof(begin), "prog '%s': -- BEGIN PROG LOAD LOG --\n",
		 name);
	for (p = capture.buf; p && (p = strstr(p, begin)); p += strlen(begin))
		b = p; /* the last load of it */
	if (!b)
		return NULL;
	b += strlen(begin);
	e = strstr(b, "-- END PROG LOAD LOG --");
	if (e)
		*e = '\0';
	return b;
}

static const char *mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}

static const char *qp_type_name(__u8 t)
{
	switch (t) {
	case RXDP_QPT_RC:
		return "RC";
	case RXDP_QPT_UC:
		return "UC";
	case RXDP_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

static const char *qp_state_name(__u8 s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS",
					     "SQD",   "SQE",  "ERR" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/*
 * Point libxdp at this network namespace's directory. Must run before the
 * first libxdp call: libxdp reads LIBXDP_BPFFS once.
 */
static int setup_libxdp_dir(bool create)
{
	char dir[PATH_MAX];
	int ret;

	ret = rxdp_bpffs_libxdp_dir(dir, sizeof(dir));
	if (!ret && create)
		ret = rxdp_bpffs_mkdirs(dir);
	if (ret)
		return ret;
	if (setenv("LIBXDP_BPFFS", dir, 1))
		return -errno;
	return 0;
}

/*
 * Is rxdp's program attached to ifindex? 1 yes (with *mode and, if asked,
 * *mpp and *progp for detaching), 0 no, -errno.
 */
static int rxdp_find(int ifindex, enum xdp_attach_mode *mode,
		     struct xdp_multiprog **mpp, struct xdp_program **progp)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	long err;

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = libxdp_get_error(mp);
	if (err || !mp)
		return err == -ENOENT || !mp ? 0 : (int)err;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && !is_rxdp_prog(xdp_program__name(p)))
			p = NULL;
	} else {
		for (p = xdp_multiprog__next_prog(NULL, mp); p;
		     p = xdp_multiprog__next_prog(p, mp))
			if (is_rxdp_prog(xdp_program__name(p)))
				break;
	}
	if (!p) {
		xdp_multiprog__close(mp);
		return 0;
	}
	if (mode)
		*mode = xdp_multiprog__attach_mode(mp);
	if (mpp && progp) {
		*mpp = mp;
		*progp = p;
	} else {
		xdp_multiprog__close(mp);
	}
	return 1;
}

/* Name of whatever XDP program holds ifindex, for error messages */
static const char *other_prog_name(int ifindex)
{
	static char name[BPF_OBJ_NAME_LEN + 1] = "?";
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p;

	if (libxdp_get_error(mp) || !mp)
		return name;
	p = xdp_multiprog__is_legacy(mp) ? xdp_multiprog__main_prog(mp)
					 : xdp_multiprog__next_prog(NULL, mp);
	if (p)
		snprintf(name, sizeof(name), "%s", xdp_program__name(p));
	xdp_multiprog__close(mp);
	return name;
}

static bool dir_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* rmdir this network namespace's directories if nothing is left in them */
static void prune_empty_dirs(void)
{
	char ns[PATH_MAX], xdp[PATH_MAX + 8];

	if (!rxdp_bpffs_netns_dir(ns, sizeof(ns)))
		rmdir(ns); /* fails while other interfaces have pins: fine */
	if (!rxdp_bpffs_libxdp_dir(ns, sizeof(ns))) {
		snprintf(xdp, sizeof(xdp), "%s/xdp", ns);
		rmdir(xdp); /* libxdp's lock directory */
		rmdir(ns);
	}
}

/* Remove every pin in dir, then dir; then the namespace's empty dirs. */
static int remove_pins(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) >= (int)sizeof(path))
				continue;
			if (unlink(path) && !ret)
				ret = -errno;
		}
		closedir(d);
		if (rmdir(dir) && !ret)
			ret = -errno;
	} else if (errno != ENOENT) {
		ret = -errno;
	}
	prune_empty_dirs();
	return ret;
}

static int pin_maps(struct bpf_object *obj, const char *dir)
{
	char path[PATH_MAX];
	struct bpf_map *map;
	int ret;

	ret = rxdp_bpffs_mkdirs(dir);
	if (ret)
		return ret;
	bpf_object__for_each_map(map, obj)
	{
		if (bpf_map__is_internal(map))
			continue; /* .rodata and friends: nothing to share */
		if (snprintf(path, sizeof(path), "%s/%s", dir,
			     bpf_map__name(map)) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		ret = bpf_map__pin(map, path);
		if (ret)
			return ret;
		pr_debug("pinned %s\n", path);
	}
	return 0;
}

/* Take rxdp's program off ifindex, leaving any other one. 0/-errno */
static int detach_rxdp(int ifindex)
{
	struct xdp_multiprog *mp = NULL;
	struct xdp_program *prog = NULL;
	enum xdp_attach_mode mode;
	int ret;

	ret = rxdp_find(ifindex, &mode, &mp, &prog);
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	if (xdp_multiprog__is_legacy(mp))
		ret = xdp_multiprog__detach(mp);
	else
		ret = xdp_program__detach(prog, ifindex, mode, 0);
	xdp_multiprog__close(mp);
	return ret;
}

/*
 * The program to attach: the variant asked for, or the best this kernel
 * runs. 0, or 1 after saying why none can run here.
 */
static int choose_variant(const char *ifname, enum variant want,
			  const char **name, const char **why)
{
	struct rxdp_kernel_features kf;
	struct utsname u;
	int ret;

	ret = rxdp_kernel_probe(&kf);
	if (ret) {
		fail("%s: cannot probe the kernel's BPF features: %s", ifname,
		     strerror(-ret));
		return 1;
	}
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	if (!kf.atomics) {
		fail("%s: this kernel (Linux %s) lacks the BPF atomic "
		     "operations rxdp's XDP program needs "
		     "(compare-and-exchange, "
		     "fetch-and-or: Linux 5.12); rxdp runs on Linux %s or "
		     "later",
		     ifname, u.release, RXDP_KERNEL_MIN);
		return 1;
	}
	*why = "";
	switch (want) {
	case VARIANT_FRAGS:
		if (!kf.frags) {
			fail("%s: this kernel (Linux %s) lacks multi-buffer "
			     "XDP "
			     "(bpf_xdp_get_buff_len: Linux 5.18): --variant "
			     "frags cannot load here, linear can",
			     ifname, u.release);
			return 1;
		}
		*name = PROG_FRAGS;
		break;
	case VARIANT_LINEAR:
		*name = PROG_LINEAR;
		break;
	default:
		*name = kf.frags ? PROG_FRAGS : PROG_LINEAR;
		if (!kf.frags)
			*why = ": this kernel lacks multi-buffer XDP (Linux "
			       "5.18), frames of a page at most";
	}
	return 0;
}

/*
 * The object holding the program and its maps: the one built into this
 * binary, or (for development and tests) the one $RXDP_XDP_OBJECT names.
 */
static struct bpf_object *open_object(struct rxdp_xdp_bpf **skel)
{
	const char *file = getenv("RXDP_XDP_OBJECT");
	struct bpf_object *obj = NULL;

	*skel = NULL;
	if (file && *file) {
		obj = bpf_object__open_file(file, NULL);
		if (libbpf_get_error(obj)) {
			fail("cannot open the XDP object %s "
			     "($RXDP_XDP_OBJECT): "
			     "%s",
			     file, strerror(errno));
			return NULL;
		}
		return obj;
	}
	*skel = rxdp_xdp_bpf__open();
	if (!*skel) {
		fail("cannot open the embedded XDP program: %s",
		     strerror(errno));
		return NULL;
	}
	return (*skel)->obj;
}

/* Why attaching failed, in one line; the verifier's log after it if the
 * kernel refused the program */
static void attach_failed(const char *ifname, int ifindex,
			  enum xdp_attach_mode mode, const char *prog_name,
			  int ret)
{
	const char *vlog = captured_verifier_log(prog_name);

	if (vlog) {
		fail("%s: the kernel's verifier refused the XDP program %s "
		     "(%s); its log:",
		     ifname, prog_name, strerror(-ret));
		pr_err("%s", vlog);
	} else if (ret == -EOPNOTSUPP && mode == XDP_MODE_NATIVE) {
		fail("%s: the driver does not support native XDP (try --mode "
		     "skb)",
		     ifname);
	} else if (ret == -EOPNOTSUPP || ret == -EINVAL) {
		fail("%s: XDP %s mode is not available here: %s", ifname,
		     mode == XDP_MODE_UNSPEC ? "attach" : mode_name(mode),
		     strerror(-ret));
	} else if (ret == -EEXIST || ret == -EBUSY) {
		fail("%s: XDP program '%s' is attached and cannot run beside "
		     "rxdp here (%s)",
		     ifname, other_prog_name(ifindex), strerror(-ret));
	} else {
		fail("%s: cannot attach the XDP program: %s", ifname,
		     strerror(-ret));
	}
}

/*
 * rxdp already attached to ifindex: what was asked for (no other mode or
 * variant named) is done, a note and 0, so that scripts need not parse
 * status first; another mode or variant is one line and 1. -1: not
 * attached, go on.
 */
static int attach_again(const char *ifname, int ifindex,
			enum xdp_attach_mode mode, enum variant variant,
			const char *dir)
{
	struct xdp_multiprog *mp = NULL;
	struct xdp_program *prog = NULL;
	enum xdp_attach_mode cur;
	const char *want;
	char name[64];
	int ret;

	ret = rxdp_find(ifindex, &cur, &mp, &prog);
	if (ret < 0) {
		/* not knowing is not "not attached": the pins may be a live
		 * attachment's, which rxdpd serves */
		fail("%s: cannot tell whether rxdp is attached: %s", ifname,
		     strerror(-ret));
		return 1;
	}
	if (!ret)
		return -1;
	snprintf(name, sizeof(name), "%s", xdp_program__name(prog));
	xdp_multiprog__close(mp);
	want = variant == VARIANT_FRAGS	   ? PROG_FRAGS
	       : variant == VARIANT_LINEAR ? PROG_LINEAR
					   : name;
	if ((mode != XDP_MODE_UNSPEC && mode != cur) || strcmp(want, name)) {
		fail("%s: rxdp is already attached (%s mode, %s): detach it "
		     "first to attach it otherwise",
		     ifname, mode_name(cur), name);
		return 1;
	}
	if (!dir_exists(dir)) {
		fail("%s: rxdp is attached but its pins in %s are gone "
		     "(rxdpd cannot serve it): rxdp-loader detach %s, then "
		     "attach",
		     ifname, dir, ifname);
		return 1;
	}
	printf("%s: already attached (%s mode, %s), maps pinned in %s: "
	       "nothing to do\n",
	       ifname, mode_name(cur), name, dir);
	return 0;
}

static int cmd_attach(const char *ifname, int ifindex,
		      enum xdp_attach_mode mode, enum variant variant)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts);
	struct xdp_program *prog = NULL;
	char dir[PATH_MAX], xdpdir[PATH_MAX];
	struct rxdp_xdp_bpf *skel = NULL;
	const char *prog_name, *why;
	struct bpf_program *other;
	struct bpf_object *obj = NULL;
	enum xdp_attach_mode cur;
	bool fresh = false;
	int ret;

	ret = rxdp_bpffs_ensure();
	if (ret) {
		fail("cannot mount a bpffs at %s: %s", RXDP_BPFFS_ROOT,
		     strerror(-ret));
		return 1;
	}
	ret = rxdp_bpffs_if_dir(ifname, dir, sizeof(dir));
	if (!ret)
		ret = rxdp_bpffs_libxdp_dir(xdpdir, sizeof(xdpdir));
	if (!ret) {
		fresh = !dir_exists(xdpdir);
		ret = setup_libxdp_dir(true);
	}
	if (ret) {
		fail("cannot prepare the pin directory for %s: %s", ifname,
		     strerror(-ret));
		return 1;
	}
	ret = attach_again(ifname, ifindex, mode, variant, dir);
	if (ret >= 0)
		return ret;
	if (choose_variant(ifname, variant, &prog_name, &why)) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (dir_exists(dir)) {
		/* pins of an attachment that is gone (e.g. a dead netns whose
		 * inode came back): they would shadow the new maps */
		pr_info("removing stale pins in %s\n", dir);
		remove_pins(dir);
	}

	obj = open_object(&skel);
	if (!obj) {
		ret = -ENOENT;
		goto out;
	}
	/* the other variant stays out of the kernel (it may not load there) */
	other = bpf_object__find_program_by_name(
		obj, strcmp(prog_name, PROG_FRAGS) ? PROG_FRAGS : PROG_LINEAR);
	if (other)
		bpf_program__set_autoload(other, false);
	opts.obj = obj;
	opts.prog_name = prog_name;
	prog = xdp_program__create(&opts);
	ret = (int)libxdp_get_error(prog);
	if (ret) {
		fail("cannot prepare the XDP program %s: %s", prog_name,
		     strerror(-ret));
		prog = NULL;
		goto out;
	}
	capture.on = true;
	ret = xdp_program__attach(prog, ifindex, mode, 0);
	capture.on = false;
	if (ret) {
		attach_failed(ifname, ifindex, mode, prog_name, ret);
		goto out;
	}
	ret = pin_maps(obj, dir);
	if (ret) {
		fail("%s: cannot pin the maps in %s: %s", ifname, dir,
		     strerror(-ret));
		/* change nothing: take the program off again */
		detach_rxdp(ifindex);
		remove_pins(dir);
		goto out;
	}
	if (rxdp_find(ifindex, &cur, NULL, NULL) <= 0)
		cur = mode;
	printf("%s: attached (%s mode, %s%s), maps pinned in %s\n", ifname,
	       mode_name(cur), prog_name, why, dir);
out:
	if (ret && fresh)
		prune_empty_dirs(); /* what this run made and did not use */
	xdp_program__close(prog);
	if (skel)
		rxdp_xdp_bpf__destroy(skel);
	else if (obj)
		bpf_object__close(obj);
	free(capture.buf);
	capture.buf = NULL;
	capture.len = 0;
	return ret ? 1 : 0;
}

static int open_pin(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return bpf_obj_get(path);
}

static int cmd_detach(const char *ifname, int ifindex)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int ret, found, qp_ctx;

	ret = rxdp_bpffs_enter();
	if (ret && ret != -ENOENT) {
		fail("cannot reach the bpffs at %s: %s", RXDP_BPFFS_ROOT,
		     strerror(-ret));
		return 1;
	}
	ret = rxdp_bpffs_if_dir(ifname, dir, sizeof(dir));
	if (!ret)
		ret = setup_libxdp_dir(false);
	if (ret) {
		fail("%s: %s", ifname, strerror(-ret));
		return 1;
	}
	found = rxdp_find(ifindex, NULL, NULL, NULL);
	if (found < 0) {
		fail("%s: cannot query XDP programs: %s", ifname,
		     strerror(-found));
		return 1;
	}
	if (!found) {
		if (dir_exists(dir)) {
			remove_pins(dir);
			pr_warn("%s: rxdp was not attached; removed stale "
				"pins in %s\n",
				ifname, dir);
			return 0;
		}
		fail("%s: rxdp is not attached", ifname);
		return 1;
	}
	/* rxdpd serves the device while its qp_ctx pin is there: removed
	 * first, rxdpd sees a detach, not a program gone under it */
	qp_ctx = open_pin(dir, RXDP_PIN(qp_ctx));
	snprintf(path, sizeof(path), "%s/%s", dir, RXDP_PIN(qp_ctx));
	if (qp_ctx >= 0)
		unlink(path);
	ret = detach_rxdp(ifindex);
	if (ret) {
		if (qp_ctx >= 0 && bpf_obj_pin(qp_ctx, path))
			pr_warn("%s: cannot pin %s again: %s\n", ifname, path,
				strerror(errno));
		if (qp_ctx >= 0)
			close(qp_ctx);
		fail("%s: cannot detach: %s", ifname, strerror(-ret));
		return 1;
	}
	if (qp_ctx >= 0)
		close(qp_ctx);
	ret = remove_pins(dir);
	if (ret) {
		fail("%s: detached, but cannot remove the pins in %s: %s",
		     ifname, dir, strerror(-ret));
		return 1;
	}
	printf("%s: detached, pins removed\n", ifname);
	return 0;
}

static void print_verdicts(const char *dir, int ncpu)
{
	__u64 *vals = calloc(ncpu, sizeof(*vals));
	int fd = open_pin(dir, RXDP_PIN(stats));

	printf("verdicts:\n");
	if (fd < 0 || !vals) {
		printf("  (cannot read %s/%s)\n", dir, RXDP_PIN(stats));
		goto out;
	}
	for (__u32 v = 0; v < RXDP_V_MAX; v++) {
		__u64 sum = 0;

		if (bpf_map_lookup_elem(fd, &v, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
		printf("  %-22s %llu\n", rxdp_verdict_names[v],
		       (unsigned long long)sum);
	}
out:
	free(vals);
	if (fd >= 0)
		close(fd);
}

/* The multicast groups with members (their datagrams pass the program) */
static void print_mcast(const char *dir)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	int fd = open_pin(dir, RXDP_PIN(mcast));
	struct rxdp_mcast_key key, next, *prev = NULL;
	__u32 n = 0;

	if (fd < 0) {
		printf("multicast groups: (cannot read %s/%s)\n", dir,
		       RXDP_PIN(mcast));
		return;
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		char s[INET6_ADDRSTRLEN];
		int v4 = !memcmp(next.gid, v4mapped, sizeof(v4mapped));

		key = next;
		prev = &key;
		if (!n++)
			printf("multicast groups:");
		inet_ntop(v4 ? AF_INET : AF_INET6,
			  v4 ? next.gid + 12 : next.gid, s, sizeof(s));
		printf(" %s", s);
	}
	printf(n ? "\n" : "multicast groups: none\n");
	close(fd);
}

static void print_qps(const char *dir, int ncpu)
{
	struct rxdp_qp_stats *st = calloc(ncpu, sizeof(*st));
	int ctx_fd = open_pin(dir, RXDP_PIN(qp_ctx));
	int psn_fd = open_pin(dir, RXDP_PIN(qp_psn));
	int st_fd = open_pin(dir, RXDP_PIN(qp_stats));
	__u32 key, next, n = 0;
	__u32 *prev = NULL;

	if (ctx_fd < 0 || !st) {
		printf("qps: (cannot read %s/%s)\n", dir, RXDP_PIN(qp_ctx));
		goto out;
	}
	/* count first, so the header line comes before the QPs */
	while (!bpf_map_get_next_key(ctx_fd, prev, &next)) {
		n++;
		key = next;
		prev = &key;
	}
	printf("qps: %u\n", n);
	prev = NULL;
	while (!bpf_map_get_next_key(ctx_fd, prev, &next)) {
		struct rxdp_qp_ctx c;
		struct rxdp_qp_psn p;
		__u32 idx = next & RXDP_QP_INDEX_MASK;
		__u64 pk = 0, by = 0, dr = 0;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(ctx_fd, &key, &c))
			continue; /* deleted while we walked */
		printf("  qpn 0x%06x type %s state %s pkey 0x%04x dest_qpn "
		       "0x%06x qkey 0x%08x owner_slot %u owner_pid %u flags "
		       "0x%x path_mtu %u access 0x%x\n",
		       key, qp_type_name(c.qp_type), qp_state_name(c.state),
		       c.pkey, c.dest_qpn, c.qkey, c.owner_slot, c.owner_pid,
		       c.flags, c.path_mtu, c.access_flags);
		if (psn_fd >= 0 && !bpf_map_lookup_elem(psn_fd, &idx, &p))
			printf("    psn: slot_qpn 0x%06x epsn 0x%06x una_psn "
			       "0x%06x next_psn 0x%06x flags 0x%x rx_cpu %d\n",
			       p.qpn, p.epsn, p.una_psn, p.next_psn, p.flags,
			       (int)p.rx_cpu - 1);
		if (st_fd >= 0 && !bpf_map_lookup_elem(st_fd, &idx, st)) {
			for (int i = 0; i < ncpu; i++) {
				pk += st[i].rx_packets;
				by += st[i].rx_bytes;
				dr += st[i].rx_drops;
			}
			printf("    stats: rx_packets %llu rx_bytes %llu "
			       "rx_drops %llu\n",
			       (unsigned long long)pk, (unsigned long long)by,
			       (unsigned long long)dr);
		}
	}
out:
	free(st);
	if (ctx_fd >= 0)
		close(ctx_fd);
	if (psn_fd >= 0)
		close(psn_fd);
	if (st_fd >= 0)
		close(st_fd);
}

/*
 * The sockets as rxdpd bound them, where the kernel does not list them
 * (no CONFIG_XDP_SOCKETS_DIAG): rxdpd reads each one's mode from the
 * kernel too (XDP_OPTIONS). why: the reason the kernel's list is missing.
 */
static void print_xsks_rxdpd(int ifindex, const char *why)
{
	struct rxdp_ctl *c = rxdp_ctl_connect(NULL);
	/* no longer: between two rxdpds of a restart (rxdpd --fdstore) the
	 * control socket takes connections that nobody answers yet, and the
	 * unit's start asks this before it starts the next one */
	struct timeval tv = { .tv_sec = 2 };
	struct rxdp_dev_info d;
	int err = -ENOENT;

	if (c) {
		setsockopt(rxdp_ctl_fd(c), SOL_SOCKET, SO_RCVTIMEO, &tv,
			   sizeof(tv));
		err = rxdp_ctl_query_device(c, (__u32)ifindex, &d);
	}
	if (err) {
		printf("xsks: unknown (%s; rxdpd %s)\n", why,
		       err == -EAGAIN ? "does not answer"
				      : "does not serve it");
		rxdp_ctl_close(c);
		return;
	}
	rxdp_ctl_close(c);
	printf("xsks: %u (as rxdpd bound them; %s)\n", d.nxsks, why);
	for (__u32 q = 0; q < d.nxsks && q < RXDP_CTL_MAX_XSKS; q++)
		printf("  queue %u %s (%s)\n", q,
		       d.xsk_modes[q] & XDP_ZEROCOPY ? "zero-copy" : "copy",
		       d.xsk_modes[q] & XDP_USE_SG ? "multi-buffer"
						   : "one frame a packet");
}

/*
 * The AF_XDP sockets bound on the interface and the mode of each, from the
 * kernel (rxdpd binds them at the device's first verbs context)
 */
static void print_xsks(int ifindex)
{
	struct rxdp_xsk_diag x[RXDP_MAX_QUEUES];
	int n = rxdp_xsks_list(ifindex, x, RXDP_MAX_QUEUES);
	char why[128];

	if (n < 0) {
		snprintf(why, sizeof(why), "%s",
			 n == -ENOENT ? "this kernel does not list AF_XDP "
					"sockets: CONFIG_XDP_SOCKETS_DIAG"
				      : strerror(-n));
		print_xsks_rxdpd(ifindex, why);
		return;
	}
	printf("xsks: %d%s\n", n,
	       n ? ""
		 : " (rxdpd binds them at the device's first verbs context)");
	for (int i = 0; i < n; i++)
		printf("  queue %u %s (socket inode %u, UMEM %u of %u-byte "
		       "frames)\n",
		       x[i].queue, x[i].zerocopy ? "zero-copy" : "copy",
		       x[i].inode, x[i].umem_id, x[i].chunk_size);
}

/* 1 printed, 0 nothing of rxdp's on this interface, -errno */
static int status_one(const char *ifname, int ifindex, int ncpu)
{
	struct xdp_multiprog *mp = NULL;
	struct xdp_program *prog = NULL;
	enum xdp_attach_mode mode;
	char dir[PATH_MAX], how[128], prog_name[64];
	bool pins;
	int found, ret;

	ret = rxdp_bpffs_if_dir(ifname, dir, sizeof(dir));
	if (ret)
		return ret;
	found = rxdp_find(ifindex, &mode, &mp, &prog);
	if (found < 0)
		return found;
	if (found) {
		snprintf(prog_name, sizeof(prog_name), "%s%s",
			 xdp_program__name(prog),
			 strcmp(xdp_program__name(prog), PROG_FRAGS)
				 ? " (one buffer a frame)"
				 : " (multi-buffer)");
		if (xdp_multiprog__is_legacy(mp))
			snprintf(how, sizeof(how),
				 "the only XDP program (no libxdp dispatcher)");
		else
			snprintf(how, sizeof(how),
				 "libxdp dispatcher, %d program(s), rxdp at "
				 "priority %u",
				 xdp_multiprog__program_count(mp),
				 xdp_program__run_prio(prog));
		xdp_multiprog__close(mp);
	}
	pins = dir_exists(dir);
	if (!found && !pins)
		return 0;
	if (found)
		printf("%s: attached, mode %s\nxdp: %s\nprogram: %s\n", ifname,
		       mode_name(mode), how, prog_name);
	else
		printf("%s: not attached (stale pins; `rxdp-loader detach %s` "
		       "removes them)\n",
		       ifname, ifname);
	printf("pins: %s%s\n", dir, pins ? "" : " (missing)");
	if (!pins)
		return 1;
	print_xsks(ifindex);
	print_verdicts(dir, ncpu);
	print_mcast(dir);
	print_qps(dir, ncpu);
	return 1;
}

static int is_attached(int ifindex)
{
	return rxdp_find(ifindex, NULL, NULL, NULL);
}

/*
 * The stale pins (stale.h): listed (status; those of an interface that is
 * here were shown with it), or removed (clean). 0, or 1 after one line.
 */
static int stale_pins(bool remove)
{
	struct stale_pin *p;
	int n, ret, failed = 0, shown = 0;

	n = stale_list(is_attached, &p);
	if (n < 0) {
		fail("cannot look for stale pins: %s", strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (!remove) {
			if (p[i].why == STALE_NOT_ATTACHED)
				continue;
			printf("%sstale pins: %s (%s)\n",
			       shown++ ? ""
				       : "rxdp-loader clean removes these:\n",
			       p[i].path, stale_why_str(p[i].why));
			continue;
		}
		ret = stale_remove(p[i].path);
		if (ret) {
			pr_warn("cannot remove %s: %s\n", p[i].path,
				strerror(-ret));
			failed++;
			continue;
		}
		printf("removed %s (%s)\n", p[i].path, stale_why_str(p[i].why));
	}
	free(p);
	if (remove) {
		prune_empty_dirs();
		if (!n)
			printf("no stale pins\n");
	}
	if (failed) {
		fail("%d of %d stale pin directories not removed", failed, n);
		return 1;
	}
	return 0;
}

static int cmd_clean(void)
{
	int ret;

	ret = rxdp_bpffs_enter();
	if (ret == -ENOENT) {
		printf("no stale pins (no bpffs at %s)\n", RXDP_BPFFS_ROOT);
		return 0;
	}
	if (!ret)
		ret = setup_libxdp_dir(false);
	if (ret) {
		fail("cannot reach the bpffs at %s: %s", RXDP_BPFFS_ROOT,
		     strerror(-ret));
		return 1;
	}
	return stale_pins(true);
}

static int cmd_status(const char *ifname, int ifindex)
{
	struct if_nameindex *ifs, *i;
	int ncpu = libbpf_num_possible_cpus();
	int ret, bpffs, shown = 0;

	if (ncpu <= 0) {
		fail("cannot count the possible CPUs: %s", strerror(-ncpu));
		return 1;
	}
	bpffs = rxdp_bpffs_enter();
	if (bpffs && bpffs != -ENOENT) {
		fail("cannot reach the bpffs at %s: %s", RXDP_BPFFS_ROOT,
		     strerror(-bpffs));
		return 1;
	}
	ret = setup_libxdp_dir(false);
	if (ret) {
		fail("cannot prepare libxdp's directory: %s", strerror(-ret));
		return 1;
	}
	if (ifname) {
		ret = status_one(ifname, ifindex, ncpu);
		if (ret < 0) {
			fail("%s: %s", ifname, strerror(-ret));
			return 1;
		}
		if (ret == 0) {
			fail("%s: rxdp is not attached", ifname);
			return 1;
		}
		return 0;
	}
	ifs = if_nameindex();
	if (!ifs) {
		fail("cannot list interfaces: %s", strerror(errno));
		return 1;
	}
	for (i = ifs; i->if_index; i++) {
		ret = status_one(i->if_name, i->if_index, ncpu);
		if (ret < 0)
			pr_warn("%s: %s\n", i->if_name, strerror(-ret));
		if (ret > 0) {
			shown++;
			printf("\n");
		}
	}
	if_freenameindex(ifs);
	if (!shown)
		printf("rxdp is not attached to any interface in this network "
		       "namespace\n");
	return bpffs ? 0 : stale_pins(false);
}

int main(int argc, char **argv)
{
	static const int need_caps[] = { CAP_SYS_ADMIN, CAP_NET_ADMIN };
	struct loader_cfg cfg = { .mode = XDP_MODE_UNSPEC };
	const char *cmd, *ifname = NULL;
	int first, ifindex = 0, nargs, missing;
	char caps[64];

	rxdp_log_set_prefix("rxdp-loader");
	first = rxdp_opts_parse(&loader_cmdline, argc, argv, &cfg);
	if (first < 0)
		return EXIT_USAGE;
	nargs = argc - first;
	if (nargs < 1) {
		fail("no command given (attach, detach, status or clean; see "
		     "--help)");
		return EXIT_USAGE;
	}
	cmd = argv[first];
	if (nargs > 1)
		ifname = argv[first + 1];

	if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach")) {
		if (nargs != 2) {
			fail("usage: rxdp-loader %s IFNAME%s", cmd,
			     cmd[0] == 'a' ? " [--mode native|skb] [--variant "
					     "frags|linear]"
					   : "");
			return EXIT_USAGE;
		}
	} else if (!strcmp(cmd, "status")) {
		if (nargs > 2) {
			fail("usage: rxdp-loader status [IFNAME]");
			return EXIT_USAGE;
		}
	} else if (!strcmp(cmd, "clean")) {
		if (nargs != 1) {
			fail("usage: rxdp-loader clean");
			return EXIT_USAGE;
		}
	} else {
		fail("unknown command '%s' (attach, detach, status or clean)",
		     cmd);
		return EXIT_USAGE;
	}
	if (cfg.attach_only && strcmp(cmd, "attach")) {
		fail("%s only goes with attach", cfg.attach_only);
		return EXIT_USAGE;
	}

	rxdp_log_set_level(cfg.verbose >= 2 ? RXDP_LOG_DEBUG
			   : cfg.verbose    ? RXDP_LOG_INFO
					    : RXDP_LOG_WARN);
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);

	/* Every command asks the kernel which program holds an interface,
	 * and only CAP_SYS_ADMIN may turn a program id into a program;
	 * attaching and detaching need CAP_NET_ADMIN too. uid 0 alone (a
	 * container's root) is not enough. */
	missing = rxdp_caps_missing(need_caps, strcmp(cmd, "status") ? 2 : 1,
				    caps, sizeof(caps));
	if (missing) {
		fail("%s needs root's %s (this process lacks %s)", cmd,
		     strcmp(cmd, "status") ? "CAP_SYS_ADMIN and CAP_NET_ADMIN"
					   : "CAP_SYS_ADMIN",
		     caps);
		return 1;
	}
	if (!strcmp(cmd, "clean"))
		return cmd_clean();
	if (ifname) {
		if (strlen(ifname) >= IF_NAMESIZE) {
			fail("%s: interface name too long (at most %d "
			     "characters)",
			     ifname, IF_NAMESIZE - 1);
			return 1;
		}
		ifindex = if_nametoindex(ifname);
		if (!ifindex) {
			fail("%s: no such interface in this network namespace",
			     ifname);
			return 1;
		}
	}

	if (!strcmp(cmd, "attach"))
		return cmd_attach(ifname, ifindex, cfg.mode, cfg.variant);
	if (!strcmp(cmd, "detach"))
		return cmd_detach(ifname, ifindex);
	return cmd_status(ifname, ifindex);
}
