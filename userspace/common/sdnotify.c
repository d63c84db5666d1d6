// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/sdnotify.h"

#define SD_FDS_MAX 253 /* the kernel's SCM_MAX_FD */

int rxdp_sd_notify_fds(const char *state, const int *fds, int n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct iovec iov = { (void *)state, strlen(state) };
	union {
		char b[CMSG_SPACE(SD_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_name = &sun,
			     .msg_iov = &iov,
			     .msg_iovlen = 1 };
	size_t len;
	int fd, ret = 1;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sun.sun_path) ||
	    n < 0 || n > SD_FDS_MAX)
		return -EINVAL;
	memcpy(sun.sun_path, path, len);
	if (path[0] == '@')
		sun.sun_path[0] = '\0'; /* abstract */
	mh.msg_namelen = offsetof(struct sockaddr_un, sun_path) + len;
	rxdp_msg_put_fds(&mh, u.b, fds, n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int rxdp_sd_notify(const char *state)
{
	return rxdp_sd_notify_fds(state, NULL, 0);
}

/* systemd closes the write end once it has read the message, and every
 * message before it */
int rxdp_sd_barrier(int timeout_ms)
{
	struct pollfd p = { .events = 0 };
	int pp[2], ret;

	if (pipe2(pp, O_CLOEXEC))
		return -errno;
	ret = rxdp_sd_notify_fds("BARRIER=1", &pp[1], 1);
	close(pp[1]);
	if (ret > 0) {
		p.fd = pp[0];
		ret = poll(&p, 1, timeout_ms);
		ret = ret < 0 ? -errno : ret == 0 ? -ETIMEDOUT : 1;
	}
	close(pp[0]);
	return ret;
}

/* "a:b:c" -> { "a", "b", "c", NULL }: n names, or NULL */
static char **split_names(const char *s, int n)
{
	char **v = calloc((size_t)n + 1, sizeof(*v));
	int i = 0;

	while (v && i < n) {
		size_t k = strcspn(s, ":");

		v[i] = strndup(s, k);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return NULL;
		}
		i++;
		s += k + (s[k] == ':');
	}
	return v;
}

int rxdp_sd_listen_fds(char ***names)
{
	const char *pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	const char *fdnames = getenv("LISTEN_FDNAMES");
	char *end;
	long p, n = 0;

	*names = NULL;
	if (pid && nfds) {
		p = strtol(pid, &end, 10);
		if (*end || p != (long)getpid())
			goto out;
		n = strtol(nfds, &end, 10);
		if (*end || n < 0 || n > 1 << 20) {
			n = 0;
			goto out;
		}
		for (long i = 0; i < n; i++)
			fcntl(RXDP_SD_LISTEN_FDS_START + (int)i, F_SETFD,
			      FD_CLOEXEC);
		if (fdnames)
			*names = split_names(fdnames, (int)n);
	}
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return (int)n;
}
