// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The device nodes some verbs programs look for before they use a device.
 *
 * A kernel RDMA device has /dev/infiniband/uverbsN, which libibverbs opens;
 * rxdp's libibverbs opens nothing there (rxdpd is the HCA). But UCX skips a
 * device whose /dev/infiniband/<ibv_device.dev_name> is not a character
 * device it may read and write (uct_ib_device_is_accessible()), so rxdpd
 * makes one per device it serves and removes it when the device goes:
 *
 *   /dev/infiniband/uverbs-rxdp-<netns inode>-<ifindex>
 *
 * What the node is: the null device (character device 1:3, what /dev/null
 * is), mode 0666 as /dev/null and uverbs nodes are (0660 and the group
 * with --group). Why that is safe: opening it gives nobody anything
 * /dev/null does not already give everyone; it names no kernel object of
 * rxdp's, and rxdp never opens it. Its name cannot be a kernel uverbs
 * node's (they are uverbs<N>), and carries the network namespace's inode
 * and the interface's index, so the rxdpds of several network namespaces,
 * which share /dev, never make or remove each other's nodes. rxdpd removes
 * a node only when it is a null device under its own name, and at start
 * the ones a killed rxdpd of its namespace left.
 *
 * Without the right to make nodes (a container without CAP_MKNOD, a
 * read-only /dev) the devices work as before; programs that look for the
 * node do not see them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/rxdpd.h"

#define DEVNODE_DIR "/dev/infiniband"
#define DEVNODE_PREFIX RXDP_DEV_NAME_PREFIX

/* "uverbs-rxdp-<netns inode>-": this namespace's nodes; "" if unknown */
static const char *devnode_prefix(void)
{
	static char prefix[48];
	struct stat st;

	if (!prefix[0] && !stat("/proc/self/ns/net", &st))
		snprintf(prefix, sizeof(prefix), DEVNODE_PREFIX "%lu-",
			 (unsigned long)st.st_ino);
	return prefix;
}

/* A null device under name in dir: made by an rxdpd, safe to remove */
static bool devnode_ours(int dir, const char *name)
{
	struct stat st;

	return !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

void devnode_create(struct rxdp_link *l)
{
	const char *prefix = devnode_prefix();
	char name[RXDP_NAME_MAX];
	int dir, err = 0;

	if (!prefix[0])
		return;
	snprintf(name, sizeof(name), "%s%d", prefix, l->ifindex);
	if (mkdir(DEVNODE_DIR, 0755) && errno != EEXIST) {
		pr_warn("cannot make %s: %s\n", DEVNODE_DIR, strerror(errno));
		return;
	}
	dir = open(DEVNODE_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	if (mknodat(dir, name, S_IFCHR | 0600, makedev(1, 3)) &&
	    errno != EEXIST)
		err = errno;
	/* an existing one is used only if it is a null device (a stale node) */
	if (!err && !devnode_ours(dir, name))
		err = EEXIST;
	if (!err && (fchmodat(dir, name, rxdpd.group_set ? 0660 : 0666, 0) ||
		     (rxdpd.group_set && fchownat(dir, name, 0, rxdpd.group,
						  AT_SYMLINK_NOFOLLOW))))
		err = errno;
	close(dir);
	if (err) {
		pr_warn("rxdp_%s: no %s/%s (%s): programs that look for it "
			"(UCX) will not use the device\n",
			l->ifname, DEVNODE_DIR, name, strerror(err));
		return;
	}
	snprintf(l->dev->dev_node, sizeof(l->dev->dev_node), "%s", name);
	pr_debug("rxdp_%s: %s/%s\n", l->ifname, DEVNODE_DIR, name);
}

void devnode_remove(struct rxdp_link *l)
{
	int dir;

	if (!l->dev->dev_node[0])
		return;
	dir = open(DEVNODE_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0 && devnode_ours(dir, l->dev->dev_node))
		unlinkat(dir, l->dev->dev_node, 0);
	if (dir >= 0)
		close(dir);
	l->dev->dev_node[0] = '\0';
}

/* At start: the nodes of this network namespace a killed rxdpd left */
void devnode_clean(void)
{
	const char *prefix = devnode_prefix();
	struct dirent *de;
	DIR *d;

	if (!prefix[0] || !(d = opendir(DEVNODE_DIR)))
		return;
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, prefix, strlen(prefix)) &&
		    devnode_ours(dirfd(d), de->d_name))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}
