// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Finding stale pins (stale.h): the network namespaces alive are those some
 * task is in (/proc/PID/task/TID/ns/net), some file descriptor holds
 * (/proc/PID/fd/N, as `ip netns exec` and rxdpd's clients may) or ip netns
 * keeps bind-mounted (/run/netns); a pin directory net<inode> of any other
 * inode is the namespace's that is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bpffs.h"
#include "rxdp/params.h"
#include "stale.h"

/* The initial pid namespace's inode (the kernel's PROC_PID_INIT_INO) */
#define PIDNS_INIT_INO 0xEFFFFFFCULL

/*
 * Does this process see every task of the host? Only then can a network
 * namespace no task is in be taken for gone: in a container's pid
 * namespace, the host's tasks are out of sight.
 */
static int sees_every_task(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) &&
	       (unsigned long long)st.st_ino == PIDNS_INIT_INO;
}

struct ns_set {
	unsigned long long *ino;
	size_t n, cap;
};

static int ns_set_add(struct ns_set *s, unsigned long long ino)
{
	unsigned long long *p;

	for (size_t i = 0; i < s->n; i++)
		if (s->ino[i] == ino)
			return 0;
	if (s->n == s->cap) {
		p = realloc(s->ino, (s->cap ? 2 * s->cap : 64) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->ino = p;
		s->cap = s->cap ? 2 * s->cap : 64;
	}
	s->ino[s->n++] = ino;
	return 0;
}

static int ns_set_has(const struct ns_set *s, unsigned long long ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ino[i] == ino)
			return 1;
	return 0;
}

/* "N" all digits: 1 */
static int is_number(const char *name)
{
	return name[0] && strspn(name, "0123456789") == strlen(name);
}

/* Add the network namespace each link in dir names ("net:[INODE]") */
static int ns_add_links(struct ns_set *s, const char *dir, const char *leaf)
{
	char path[PATH_MAX], l[64];
	unsigned long long ino;
	struct dirent *de;
	int ret = 0;
	ssize_t n;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0; /* the process ended */
	while (!ret && (de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s%s", dir, de->d_name, leaf);
		n = readlink(path, l, sizeof(l) - 1);
		if (n <= 0)
			continue;
		l[n] = '\0';
		if (sscanf(l, "net:[%llu]", &ino) == 1)
			ret = ns_set_add(s, ino);
	}
	closedir(d);
	return ret;
}

static int ns_live_collect(struct ns_set *s)
{
	char dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		if (!is_number(de->d_name))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/task", de->d_name);
		ret = ns_add_links(s, dir, "/ns/net");
		snprintf(dir, sizeof(dir), "/proc/%s/fd", de->d_name);
		if (!ret)
			ret = ns_add_links(s, dir, "");
	}
	closedir(d);
	if (ret)
		return ret;
	d = opendir("/run/netns");
	while (d && !ret && (de = readdir(d))) {
		snprintf(dir, sizeof(dir), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(dir, &st))
			ret = ns_set_add(s, st.st_ino);
	}
	if (d)
		closedir(d);
	return ret;
}

/* "net<inode>": 1 and *ino */
static int netns_dir_name(const char *name, unsigned long long *ino)
{
	return !strncmp(name, "net", 3) && is_number(name + 3) &&
	       sscanf(name + 3, "%llu", ino) == 1;
}

static int stale_add(struct stale_pin **out, int *n, const char *dir,
		     const char *name, enum stale_why why)
{
	struct stale_pin *p = realloc(*out, (*n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	*out = p;
	snprintf(p[*n].path, sizeof(p[*n].path), "%s/%s", dir, name);
	p[*n].why = why;
	(*n)++;
	return 0;
}

/* This namespace's interface directories that nothing serves */
static int stale_own(const char *dir, int (*attached)(int),
		     struct stale_pin **out, int *n)
{
	struct dirent *de;
	int ret = 0, idx;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		idx = (int)if_nametoindex(de->d_name);
		if (!idx)
			ret = stale_add(out, n, dir, de->d_name, STALE_IF_GONE);
		else if (attached(idx) == 0)
			ret = stale_add(out, n, dir, de->d_name,
					STALE_NOT_ATTACHED);
	}
	closedir(d);
	return ret;
}

/* In dir, the net<inode> directories of namespaces not in live */
static int stale_netns(const char *dir, const struct ns_set *live,
		       unsigned long long self, struct stale_pin **out, int *n)
{
	unsigned long long ino;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d)))
		if (netns_dir_name(de->d_name, &ino) && ino != self &&
		    !ns_set_has(live, ino))
			ret = stale_add(out, n, dir, de->d_name,
					STALE_NETNS_GONE);
	closedir(d);
	return ret;
}

int stale_list(int (*attached)(int ifindex), struct stale_pin **out)
{
	struct ns_set live = { 0 };
	char own[PATH_MAX];
	unsigned long long self = 0;
	int ret, n = 0;

	*out = NULL;
	ret = rxdp_bpffs_netns_dir(own, sizeof(own));
	if (!ret) {
		netns_dir_name(strrchr(own, '/') + 1, &self);
		ret = ns_set_add(&live, self);
	}
	if (!ret && sees_every_task()) {
		ret = ns_live_collect(&live);
		if (!ret)
			ret = stale_netns(RXDP_BPFFS_ROOT, &live, self, out,
					  &n);
		if (!ret)
			ret = stale_netns(RXDP_BPFFS_ROOT "/libxdp", &live,
					  self, out, &n);
	}
	if (!ret)
		ret = stale_own(own, attached, out, &n);
	free(live.ino);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return n;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path) ? -1 : 0;
}

int stale_remove(const char *path)
{
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS))
		return errno ? -errno : -EIO;
	return 0;
}

const char *stale_why_str(enum stale_why why)
{
	switch (why) {
	case STALE_NETNS_GONE:
		return "its network namespace no longer exists";
	case STALE_IF_GONE:
		return "the interface no longer exists";
	case STALE_NOT_ATTACHED:
		return "rxdp is not attached to the interface";
	}
	return "?";
}
