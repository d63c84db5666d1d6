#!/usr/bin/env bash
# rxdp's libraries in a set-user-ID program (they may be installed
# system-wide, README): the environment variables that name code to load
# (RXDP_RDMA_CORE, RXDP_RDMA_CORE_CM) or the socket to hand the program's
# /proc/self/mem to (RXDP_SOCKET) are the caller's, so they are ignored
# there (secure_getenv), as glibc ignores LD_LIBRARY_PATH. A program that
# lists the devices, run first as root without the bit (the variables take
# effect: the named library's constructor runs, the named socket is
# connected to), then set-user-ID root and run by nobody (neither happens).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd cc python3 setpriv

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
chmod 755 "$tmp"
mkdir "$tmp/lib"
cp "$root/build/lib/libibverbs.so.1" "$tmp/lib/"
cat >"$tmp/evil.c" <<EOC
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	close(open("$tmp/loaded", O_CREAT | O_WRONLY, 0666));
}
EOC
cat >"$tmp/prog.c" <<'EOC'
#include <stdio.h>
#include <unistd.h>
#include <infiniband/verbs.h>
int main(void)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);

	printf("euid %d, %d devices\n", (int)geteuid(), n);
	if (l)
		ibv_free_device_list(l);
	return 0;
}
EOC
cc -shared -fPIC -o "$tmp/evil.so" "$tmp/evil.c" || fail "cannot build evil.so"
# an absolute RPATH: the loader honours it in a set-user-ID program
cc -o "$tmp/prog" "$tmp/prog.c" -L"$tmp/lib" -l:libibverbs.so.1 \
	-Wl,-rpath,"$tmp/lib" -Wl,--disable-new-dtags || fail "cannot build prog"
# a socket that notes each connection
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    open(sys.argv[2], "w").close()
    c.close()
' "$tmp/sock" "$tmp/connected" &
on_exit "kill $! 2>/dev/null"
for _ in $(seq 50); do [ -e "$tmp/sock.ready" ] && break; sleep 0.1; done
chmod 777 "$tmp/sock"

run() {
	env RXDP_RDMA_CORE="$tmp/evil.so" RXDP_RDMA_CORE_CM="$tmp/evil.so" \
		RXDP_SOCKET="$tmp/sock" "$@" "$tmp/prog" 2>&1
}

# without the bit: the variables are obeyed (what the test can see)
out=$(run)
echo "as root: $out" | head -n 3
[ -e "$tmp/loaded" ] || fail "RXDP_RDMA_CORE's library was not loaded (the test sees nothing)"
[ -e "$tmp/connected" ] || fail "RXDP_SOCKET was not connected to (the test sees nothing)"
rm -f "$tmp/loaded" "$tmp/connected"

chown root:root "$tmp/prog"
chmod 4755 "$tmp/prog"
out=$(run setpriv --reuid=nobody --regid=nogroup --clear-groups)
echo "set-user-ID, run by nobody: $out" | head -n 3
grep -q "^euid 0," <<<"$out" || skip "the set-user-ID bit did not take (a nosuid mount?)"
[ ! -e "$tmp/loaded" ] || fail "a set-user-ID program loaded the library RXDP_RDMA_CORE named"
[ ! -e "$tmp/connected" ] || fail "a set-user-ID program connected to the socket RXDP_SOCKET named"
echo "PASS: a set-user-ID program ignores RXDP_RDMA_CORE, RXDP_RDMA_CORE_CM and RXDP_SOCKET"
