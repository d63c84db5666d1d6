// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The bpffs that holds rxdp's pins, and the paths inside it.
 *
 * Mounts are private on the machines rxdp runs on, and `ip netns exec NS cmd`
 * runs cmd in a fresh copy of the caller's mount namespace: a bpffs that cmd
 * mounts there vanishes with cmd, pins and all. So when RXDP_BPFFS_ROOT is not
 * a bpffs in our own mount namespace and we were started in a mount namespace
 * of our own by `ip netns exec`, we move this process into the mount
 * namespace of the nearest ancestor outside it, and look, mount and pin there. setns(CLONE_NEWNS)
 * leaves the network namespace alone, so interfaces are still ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/bpffs.h"
#include "common/log.h"
#include "rxdp/params.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int is_bpffs(const char *path)
{
	struct statfs st;

	if (statfs(path, &st))
		return 0;
	return (unsigned long)st.f_type == (unsigned long)BPF_FS_MAGIC;
}

/* Inode of /proc/<pid>/ns/<ns> (pid 0: self), or 0 if it cannot be read. */
static ino_t ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &st))
		return 0;
	return st.st_ino;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * The nearest ancestor whose mount namespace differs from ours, if it is in
 * another network namespace too: that pair of changes is what
 * `ip netns exec` makes (with any wrappers in between, e.g. `sh -c`). A
 * mount namespace entered on purpose without a network namespace change
 * (`unshare -m`) is left alone: its owner wants mounts of its own. 0 if
 * there is no such ancestor or we may not look. pid 1 is never a candidate:
 * it belongs to whatever runs the machine, not to the user's session.
 */
static pid_t mount_ns_ancestor(void)
{
	ino_t self = ns_inode(0, "mnt"), self_net = ns_inode(0, "net");
	pid_t pid = getppid();

	if (!self || !self_net)
		return 0;
	while (pid > 1) {
		ino_t ino = ns_inode(pid, "mnt");

		if (!ino)
			return 0;
		if (ino != self)
			return ns_inode(pid, "net") != self_net ? pid : 0;
		pid = parent_of(pid);
	}
	return 0;
}

static int join_mount_ns(pid_t pid)
{
	char path[64];
	int fd, cwd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* setns resets the working directory; keep ours for relative paths */
	cwd = open(".", O_PATH | O_CLOEXEC);
	if (setns(fd, CLONE_NEWNS))
		ret = -errno;
	else if (cwd >= 0 && fchdir(cwd))
		pr_debug("bpffs: could not return to the working directory\n");
	if (cwd >= 0)
		close(cwd);
	close(fd);
	if (!ret)
		pr_debug("bpffs: joined the mount namespace of pid %d\n",
			 (int)pid);
	return ret;
}

int rxdp_bpffs_mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int rxdp_bpffs_enter(void)
{
	static int entered;
	pid_t pid;
	int ret;

	if (is_bpffs(RXDP_BPFFS_ROOT))
		return 0;
	if (entered)
		return -ENOENT;
	entered = 1;
	pid = mount_ns_ancestor();
	if (!pid)
		return -ENOENT; /* this mount namespace is where it belongs */
	ret = join_mount_ns(pid);
	if (ret) {
		pr_warn("cannot join the mount namespace of pid %d to reach "
			"%s: %s\n",
			(int)pid, RXDP_BPFFS_ROOT, strerror(-ret));
		return ret;
	}
	return is_bpffs(RXDP_BPFFS_ROOT) ? 0 : -ENOENT;
}

int rxdp_bpffs_ensure(void)
{
	int ret = rxdp_bpffs_enter();

	if (ret != -ENOENT)
		return ret;
	ret = rxdp_bpffs_mkdirs(RXDP_BPFFS_ROOT);
	if (ret)
		return ret;
	if (mount("bpf", RXDP_BPFFS_ROOT, "bpf", 0, "mode=0700"))
		return -errno;
	if (!is_bpffs(RXDP_BPFFS_ROOT))
		return -ENOTSUP;
	pr_debug("bpffs: mounted %s\n", RXDP_BPFFS_ROOT);
	return 0;
}

static int fmt(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));

static int fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int rxdp_bpffs_netns_dir(char *buf, size_t len)
{
	ino_t ino = ns_inode(0, "net");

	if (!ino)
		return -errno ? -errno : -ENOENT;
	return fmt(buf, len, "%s/net%llu", RXDP_BPFFS_ROOT,
		   (unsigned long long)ino);
}

int rxdp_bpffs_libxdp_dir(char *buf, size_t len)
{
	ino_t ino = ns_inode(0, "net");

	if (!ino)
		return -errno ? -errno : -ENOENT;
	return fmt(buf, len, "%s/libxdp/net%llu", RXDP_BPFFS_ROOT,
		   (unsigned long long)ino);
}

/* dev_valid_name() rules: what the kernel refuses, we refuse too */
static int ifname_ok(const char *ifname)
{
	size_t n = ifname ? strlen(ifname) : 0;

	if (n == 0 || n >= 16 || !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return 0;
	return strpbrk(ifname, "/: \t\n") == NULL;
}

int rxdp_bpffs_if_dir(const char *ifname, char *buf, size_t len)
{
	char ns[PATH_MAX];
	int ret;

	if (!ifname_ok(ifname))
		return -EINVAL;
	ret = rxdp_bpffs_netns_dir(ns, sizeof(ns));
	if (ret)
		return ret;
	return fmt(buf, len, "%s/%s", ns, ifname);
}

int rxdp_bpffs_map_path(const char *ifname, const char *map, char *buf,
			size_t len)
{
	char dir[PATH_MAX];
	int ret;

	if (!map || !*map || strchr(map, '/'))
		return -EINVAL;
	ret = rxdp_bpffs_if_dir(ifname, dir, sizeof(dir));
	if (ret)
		return ret;
	return fmt(buf, len, "%s/%s", dir, map);
}
