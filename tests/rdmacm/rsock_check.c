// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rsock_check: the rsockets calls rstream does not make, over a real
 * connection between two rxdp hosts (tests/rdmacm/rsock.sh), against
 * build/lib's librdmacm.so.1 (system headers, LD_LIBRARY_PATH=build/lib).
 *
 *   rsock_check server ADDR PORT PEER_ADDR
 *   rsock_check client SERVER_ADDR PORT LOCAL_ADDR
 *
 * The client sends LEN bytes of a known pattern and the server sends them
 * back; each side sends with rwrite, rwritev, rsendto and rsendmsg in turn
 * and receives with rread, rreadv, rrecvfrom and rrecvmsg in turn, each
 * receive preceded by an rselect that must say readable. Every byte is
 * compared with the pattern at its offset in the stream. Also checked:
 * rgetsockname/rgetpeername name the addresses and ports used (and
 * rrecvfrom the peer), rreadv and rrecvmsg fill only their first buffer
 * (as rdma-core's), rsendto to an address is EISCONN, control data is
 * ENOTSUP, rselect times out on a quiet socket, riomap/riounmap/riowrite
 * answer ENOSYS (direct placement is not offered) and EBADF on a number
 * that is no rsocket, the peer's close reads as end of file.
 *
 * Exits 0 when every check holds, 1 with a message naming the one that
 * did not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define LEN 300000
#define SENTINEL 0xee

static uint8_t pattern[LEN];

static void fail(const char *what)
{
	fprintf(stderr, "rsock_check: FAIL: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		errno = 0;
		fail(what);
	}
}

static struct sockaddr_in sin_of(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)atoi(port)) };

	if (addr && inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		check(0, "not an IPv4 address");
	return sin;
}

static int same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == AF_INET && b->sin_family == AF_INET &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr;
}

/* rselect on s alone: 1 when it has data (or its peer is gone) */
static int readable(int s, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };
	fd_set r;
	int n;

	FD_ZERO(&r);
	FD_SET(s, &r);
	n = rselect(s + 1, &r, NULL, NULL, &tv);
	if (n < 0)
		fail("rselect");
	check(n == !!FD_ISSET(s, &r), "rselect: its count and set differ");
	return n;
}

static void send_all(int s, const struct sockaddr_in *peer)
{
	struct msghdr msg = { 0 };
	struct iovec v[3];
	char cbuf[16] = { 0 };
	size_t off = 0, n;
	ssize_t ret = 0;
	fd_set w;

	FD_ZERO(&w);
	FD_SET(s, &w);
	check(rselect(s + 1, NULL, &w, NULL, NULL) == 1 && FD_ISSET(s, &w),
	      "rselect: a fresh connection is not writable");
	errno = 0;
	check(rsendto(s, pattern, 1, 0, (const struct sockaddr *)peer,
		      sizeof(*peer)) < 0 &&
		      errno == EISCONN,
	      "rsendto to an address on a connected rsocket is not EISCONN");
	v[0].iov_base = pattern;
	v[0].iov_len = 1;
	msg.msg_iov = v;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	errno = 0;
	check(rsendmsg(s, &msg, 0) < 0 && errno == ENOTSUP,
	      "rsendmsg with control data is not ENOTSUP");
	msg.msg_control = NULL;
	msg.msg_controllen = 0;

	for (int call = 0; off < LEN; call++) {
		n = LEN - off;
		switch (call % 4) {
		case 0:
			ret = rwrite(s, pattern + off, n < 1000 ? n : 1000);
			break;
		case 1: /* three pieces of one run of the stream */
			v[0].iov_base = pattern + off;
			v[0].iov_len = n < 100 ? n : 100;
			v[1].iov_base = pattern + off + v[0].iov_len;
			v[1].iov_len = n > 100 ? 1 : 0;
			v[2].iov_base =
				pattern + off + v[0].iov_len + v[1].iov_len;
			v[2].iov_len =
				n > 101 ? (n - 101 < 20000 ? n - 101 : 20000)
					: 0;
			ret = rwritev(s, v, 3);
			break;
		case 2:
			ret = rsendto(s, pattern + off, n < 3000 ? n : 3000, 0,
				      NULL, 0);
			break;
		case 3:
			v[0].iov_base = pattern + off;
			v[0].iov_len = n < 700 ? n : 700;
			v[1].iov_base = pattern + off + v[0].iov_len;
			v[1].iov_len =
				n > 700 ? (n - 700 < 9000 ? n - 700 : 9000) : 0;
			msg.msg_iovlen = 2;
			ret = rsendmsg(s, &msg, 0);
			break;
		}
		if (ret <= 0)
			fail("a send");
		off += (size_t)ret;
	}
}

static void recv_all(int s, const struct sockaddr_in *peer)
{
	static uint8_t buf[LEN];
	uint8_t tail[16];
	struct sockaddr_in from;
	socklen_t fromlen;
	struct msghdr msg = { 0 };
	struct iovec v[2];
	size_t off = 0, n, first = 0;
	ssize_t ret = 0;
	char what[96];

	for (int call = 0; off < LEN; call++) {
		check(readable(s, 10000) == 1,
		      "rselect: no data within 10 s while the peer sends");
		n = LEN - off;
		memset(tail, SENTINEL, sizeof(tail));
		switch (call % 4) {
		case 0:
			first = n < 777 ? n : 777;
			ret = rread(s, buf + off, first);
			break;
		case 1:
			v[0].iov_base = buf + off;
			v[0].iov_len = first = n < 1500 ? n : 1500;
			v[1].iov_base = tail;
			v[1].iov_len = sizeof(tail);
			ret = rreadv(s, v, 2);
			break;
		case 2:
			memset(&from, 0, sizeof(from));
			fromlen = sizeof(from);
			first = n < 4096 ? n : 4096;
			ret = rrecvfrom(s, buf + off, first, 0,
					(struct sockaddr *)&from, &fromlen);
			if (ret > 0)
				check(fromlen == sizeof(from) &&
					      same_addr(&from, peer) &&
					      from.sin_port == peer->sin_port,
				      "rrecvfrom: not the peer's address");
			break;
		case 3:
			v[0].iov_base = buf + off;
			v[0].iov_len = first = n < 2000 ? n : 2000;
			v[1].iov_base = tail;
			v[1].iov_len = sizeof(tail);
			msg.msg_iov = v;
			msg.msg_iovlen = 2;
			ret = rrecvmsg(s, &msg, 0);
			break;
		}
		if (ret <= 0)
			fail("a receive");
		check((size_t)ret <= first,
		      "a receive returned more than asked");
		for (size_t i = 0; i < sizeof(tail); i++)
			check(tail[i] == SENTINEL,
			      "rreadv/rrecvmsg wrote past their first buffer");
		for (size_t i = off; i < off + (size_t)ret; i++)
			if (buf[i] != pattern[i]) {
				snprintf(what, sizeof(what),
					 "byte %zu is %#x, sent %#x", i, buf[i],
					 pattern[i]);
				check(0, what);
			}
		off += (size_t)ret;
	}
}

/* Direct placement is not offered: ENOSYS on an rsocket, EBADF elsewhere */
static void no_iomap(int s)
{
	static char buf[4096];

	errno = 0;
	check(riomap(s, buf, sizeof(buf), PROT_WRITE, 0, -1) == -1 &&
		      errno == ENOSYS,
	      "riomap is not ENOSYS");
	errno = 0;
	check(riounmap(s, buf, sizeof(buf)) == -1 && errno == ENOSYS,
	      "riounmap is not ENOSYS");
	errno = 0;
	check(riowrite(s, buf, 16, 0, 0) == 0 && errno == ENOSYS,
	      "riowrite is not ENOSYS");
	errno = 0;
	check(riomap(-1, buf, sizeof(buf), PROT_WRITE, 0, -1) == -1 &&
		      errno == EBADF,
	      "riomap on no rsocket is not EBADF");
	errno = 0;
	check(riounmap(-1, buf, sizeof(buf)) == -1 && errno == EBADF,
	      "riounmap on no rsocket is not EBADF");
	errno = 0;
	check(riowrite(-1, buf, 16, 0, 0) == 0 && errno == EBADF,
	      "riowrite on no rsocket is not EBADF");
}

/* The names of s: its own address LOCAL (and port, unless 0), its peer's
 * PEER (and port, unless 0); the peer's name returned */
static struct sockaddr_in names(int s, const struct sockaddr_in *local,
				const struct sockaddr_in *peer)
{
	struct sockaddr_in me, him;
	socklen_t len = sizeof(me);

	if (rgetsockname(s, (struct sockaddr *)&me, &len))
		fail("rgetsockname");
	check(len == sizeof(me) && same_addr(&me, local) && me.sin_port &&
		      (!local->sin_port || me.sin_port == local->sin_port),
	      "rgetsockname: not the address and port used");
	len = sizeof(him);
	if (rgetpeername(s, (struct sockaddr *)&him, &len))
		fail("rgetpeername");
	check(len == sizeof(him) && same_addr(&him, peer) && him.sin_port &&
		      (!peer->sin_port || him.sin_port == peer->sin_port),
	      "rgetpeername: not the peer's address and port");
	errno = 0;
	check(rgetsockname(-1, (struct sockaddr *)&me, &len) == -1 &&
		      errno == EBADF,
	      "rgetsockname on no rsocket is not EBADF");
	return him;
}

/* While the peer waits for us: rselect times out, nothing to read */
static void quiet(int s)
{
	check(readable(s, 200) == 0,
	      "rselect: readable with nothing sent (no timeout)");
}

static int server(const char *addr, const char *port, const char *peer_addr)
{
	struct sockaddr_in any = sin_of(NULL, port), peer;
	struct sockaddr_in local = sin_of(addr, port);
	struct sockaddr_in want_peer = sin_of(peer_addr, "0");
	int l, s, one = 1;
	char c;

	any.sin_addr.s_addr = htonl(INADDR_ANY);
	l = rsocket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 ||
	    rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		fail("rsocket");
	if (rbind(l, (struct sockaddr *)&any, sizeof(any)) || rlisten(l, 1))
		fail("rbind/rlisten");
	printf("listening\n");
	s = raccept(l, NULL, NULL);
	if (s < 0)
		fail("raccept");
	/* listening on any address: the accepted one is on the address the
	 * client reached, at the listening port */
	peer = names(s, &local, &want_peer);
	recv_all(s, &peer);
	quiet(s);
	send_all(s, &peer);
	no_iomap(s);
	check(readable(s, 10000) == 1, "rselect: the peer's close not seen");
	check(rread(s, &c, 1) == 0, "the peer's close does not read as EOF");
	rclose(s);
	rclose(l);
	printf("server: ok\n");
	return 0;
}

static int client(const char *addr, const char *port, const char *local_addr)
{
	struct sockaddr_in dst = sin_of(addr, port);
	struct sockaddr_in local = sin_of(local_addr, "0");
	int s = rsocket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || rconnect(s, (struct sockaddr *)&dst, sizeof(dst)))
		fail("rsocket/rconnect");
	names(s, &local, &dst);
	send_all(s, &dst);
	recv_all(s, &dst);
	quiet(s);
	rclose(s);
	printf("client: ok, %d bytes each way\n", LEN);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < LEN; i++)
		pattern[i] = (uint8_t)(i * 131 + (i >> 9));
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: rsock_check server ADDR PORT PEER_ADDR | "
			"client SERVER_ADDR PORT LOCAL_ADDR\n");
	return 2;
}
