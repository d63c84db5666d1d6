#!/usr/bin/env bash
# make install, checked (tests/install/build.mk says what).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd make setpriv systemd-analyze man readelf python3 ibv_rc_pingpong

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
version=$(cat "$root/VERSION")
errors=0
bad() {
	echo "FAIL: $*" >&2
	errors=$((errors + 1))
}
minstall() { make -s -C "$root" --no-print-directory install "$@" >"$tmp/make.log" 2>&1 ||
	fail "make install $*: $(cat "$tmp/make.log")"; }

# --- 1. staged, with a distribution's directories ---------------------------
S=$tmp/stage
minstall DESTDIR="$S" PREFIX=/usr libdir=/usr/lib/x86_64-linux-gnu \
	sysconfdir=/etc unitdir=/lib/systemd/system
want="755 etc
755 etc/rxdp
644 etc/rxdp/rxdp.conf
755 lib
755 lib/systemd
755 lib/systemd/system
644 lib/systemd/system/run-rxdp-bpffs.mount
644 lib/systemd/system/rxdp.service
755 usr
755 usr/bin
755 usr/bin/rxdp-ctl
755 usr/lib
755 usr/lib/x86_64-linux-gnu
755 usr/lib/x86_64-linux-gnu/rxdp
644 usr/lib/x86_64-linux-gnu/rxdp/libibverbs.so.1
644 usr/lib/x86_64-linux-gnu/rxdp/librdmacm.so.1
755 usr/lib/x86_64-linux-gnu/rxdp/system
777 usr/lib/x86_64-linux-gnu/rxdp/system/libibverbs.so.1
755 usr/libexec
755 usr/libexec/rxdp
755 usr/libexec/rxdp/rxdp-ifaces
755 usr/sbin
755 usr/sbin/rxdp-loader
755 usr/sbin/rxdpd
755 usr/share
755 usr/share/doc
755 usr/share/doc/rxdp
644 usr/share/doc/rxdp/README.md
755 usr/share/doc/rxdp/docs
$(cd "$root" && for f in docs/*.md; do echo "644 usr/share/doc/rxdp/$f"; done)
755 usr/share/doc/rxdp/userspace
$(for d in daemon engine rdmacm verbs; do
	printf '755 usr/share/doc/rxdp/userspace/%s\n644 usr/share/doc/rxdp/userspace/%s/README.md\n' $d $d
done)
755 usr/share/man
755 usr/share/man/man1
644 usr/share/man/man1/rxdp-ctl.1
755 usr/share/man/man8
644 usr/share/man/man8/rxdp-loader.8
644 usr/share/man/man8/rxdpd.8"
want=$(sort -k2 <<<"$want")
got=$(cd "$S" && find . -mindepth 1 -printf '%m %P\n' | sort -k2)
[ "$got" = "$want" ] || bad "the staged tree: $(diff <(echo "$want") <(echo "$got"))"
grep -l '@[a-z]*@' "$S/etc/rxdp/rxdp.conf" "$S"/lib/systemd/system/* \
	"$S/usr/libexec/rxdp/rxdp-ifaces" "$S"/usr/share/man/man*/* &&
	bad "a placeholder left in a file above"
U=$S/lib/systemd/system/rxdp.service
grep -qx 'ExecStart=/usr/sbin/rxdpd --fdstore $RXDPD_OPTIONS' "$U" &&
	grep -qx 'ExecReload=/usr/sbin/rxdpd --takeover --fdstore $RXDPD_OPTIONS' "$U" &&
	grep -qx 'FileDescriptorStoreMax=65536' "$U" && grep -qx 'SuccessExitStatus=3' "$U" &&
	grep -qx 'ExecStartPre=+/usr/sbin/rxdp-loader clean' "$U" &&
	grep -qx 'ExecStartPre=+/usr/libexec/rxdp/rxdp-ifaces attach' "$U" &&
	grep -qx 'ExecStopPost=+/usr/libexec/rxdp/rxdp-ifaces stopped %n' "$U" &&
	grep -qx 'RequiresMountsFor=/run/rxdp/bpffs' "$U" &&
	grep -qx 'EnvironmentFile=/etc/rxdp/rxdp.conf' "$U" &&
	grep -qx 'Type=notify' "$U" && grep -qx 'Restart=on-failure' "$U" ||
	bad "rxdp.service: $(cat "$U")"
M=$S/lib/systemd/system/run-rxdp-bpffs.mount
grep -qx 'Where=/run/rxdp/bpffs' "$M" && grep -qx 'Type=bpf' "$M" ||
	bad "run-rxdp-bpffs.mount: $(cat "$M")"
grep -q '^loader=/usr/sbin/rxdp-loader$' "$S/usr/libexec/rxdp/rxdp-ifaces" ||
	bad "rxdp-ifaces does not name /usr/sbin/rxdp-loader"
for l in libibverbs librdmacm; do
	readelf -d "$S/usr/lib/x86_64-linux-gnu/rxdp/$l.so.1" | grep -q "SONAME.*\[$l.so.1\]" ||
		bad "$l.so.1: no SONAME $l.so.1"
done
# the system-wide directory holds rxdp's libibverbs alone (README)
[ "$(readlink "$S/usr/lib/x86_64-linux-gnu/rxdp/system/libibverbs.so.1")" = ../libibverbs.so.1 ] ||
	bad "rxdp/system/libibverbs.so.1 is not a link to ../libibverbs.so.1"
# the documents as in the tree, so that their links hold
for f in README.md docs/testing.md userspace/engine/README.md; do
	cmp -s "$root/$f" "$S/usr/share/doc/rxdp/$f" || bad "$f not installed as it is"
done
# the system-wide mode: one command, the ld.so.conf entry naming the
# directory this install put rxdp's libibverbs in
make -s -C "$root" --no-print-directory install-system DESTDIR="$S" PREFIX=/usr \
	libdir=/usr/lib/x86_64-linux-gnu >"$tmp/make.log" 2>&1 || bad "make install-system: $(cat "$tmp/make.log")"
[ "$(cat "$S/etc/ld.so.conf.d/000-rxdp.conf" 2>&1)" = /usr/lib/x86_64-linux-gnu/rxdp/system ] ||
	bad "install-system's ld.so.conf entry: $(cat "$S/etc/ld.so.conf.d/000-rxdp.conf" 2>&1)"
make -s -C "$root" --no-print-directory uninstall-system DESTDIR="$S" >/dev/null 2>&1
[ ! -e "$S/etc/ld.so.conf.d/000-rxdp.conf" ] || bad "uninstall-system left the entry"
rmdir "$S/etc/ld.so.conf.d"
# an edited configuration survives another install; KEEP_CONFIG=0 replaces it
echo 'INTERFACES="eth9"' >>"$S/etc/rxdp/rxdp.conf"
minstall DESTDIR="$S" PREFIX=/usr libdir=/usr/lib/x86_64-linux-gnu sysconfdir=/etc unitdir=/lib/systemd/system
grep -q eth9 "$S/etc/rxdp/rxdp.conf" || bad "make install replaced an edited rxdp.conf"
minstall DESTDIR="$S" PREFIX=/usr libdir=/usr/lib/x86_64-linux-gnu sysconfdir=/etc unitdir=/lib/systemd/system KEEP_CONFIG=0
grep -q eth9 "$S/etc/rxdp/rxdp.conf" && bad "KEEP_CONFIG=0 kept rxdp.conf"
make -s -C "$root" --no-print-directory uninstall DESTDIR="$S" PREFIX=/usr \
	libdir=/usr/lib/x86_64-linux-gnu sysconfdir=/etc unitdir=/lib/systemd/system >/dev/null 2>&1
left=$(cd "$S" && find . -type f -printf '%P\n')
[ "$left" = etc/rxdp/rxdp.conf ] || bad "make uninstall left: $left"
echo "ok: the staged tree (DESTDIR), its modes, paths, configuration kept, uninstall"

# --- 2. installed where it runs ---------------------------------------------
P=$tmp/root
minstall prefix="$P/usr" sysconfdir="$P/etc"
U=$P/usr/lib/systemd/system/rxdp.service
out=$(systemd-analyze verify --man=no "$U" "$P/usr/lib/systemd/system/run-rxdp-bpffs.mount" 2>&1) ||
	bad "systemd-analyze verify: $out"
[ -z "$out" ] || bad "systemd-analyze verify says: $out"
for m in "$P"/usr/share/man/man*/*; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || bad "$(basename "$m"): $w"
done
for t in "$P/usr/sbin/rxdpd" "$P/usr/sbin/rxdp-loader" "$P/usr/bin/rxdp-ctl"; do
	[ "$("$t" --version | head -1)" = "$(basename "$t") (rxdp) $version" ] ||
		bad "$t --version: $("$t" --version)"
done
echo "ok: the unit verifies, the man pages render without warnings, --version"

# --- 3. run from the installed files, as rxdp.service runs them --------------
NETNS_NO_IPV6=1 netns_pair
conf=$P/etc/rxdp/rxdp.conf
# the unit's own lines, so that the test follows the unit
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$U")
# (those this test may give: a container may lack some, CAP_SYS_RESOURCE)
bnd=$(sed -n 's/^CapBnd:\s*//p' /proc/self/status)
caps=$(for c in $caps; do
	n=$(capsh --explain="${c,,}" 2>/dev/null | sed -n 's/^[a-z_]* (\([0-9]*\)).*/\1/p' | head -n 1)
	{ [ -z "$n" ] || (((0x$bnd >> n) & 1)); } && echo "$c"
done)
setcaps=-all$(for c in $caps; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
grep -qx 'NoNewPrivileges=yes' "$U" || bad "the unit lets rxdpd gain privileges"
# (LimitMEMLOCK: as far as this machine lets a test raise it)
grep -qx 'LimitMEMLOCK=infinity' "$U" && memlock=unlimited || memlock=64

# a host: INTERFACES=IF in the configuration, the unit's ExecStartPre
# (with full privileges), ExecStart (under the unit's capabilities, with
# systemd's NOTIFY_SOCKET), as root
grep -qx "ExecStartPre=+$P/usr/libexec/rxdp/rxdp-ifaces attach" "$U" ||
	bad "rxdp.service attaches otherwise: $(grep ExecStartPre "$U")"
host() { # host NS IFNAME NOTIFY-SOCKET LOG
	local ns=$1 ifn=$2
	sed -i "s/^INTERFACES=.*/INTERFACES=\"$ifn\"/" "$conf"
	# EnvironmentFile= then the "+" ExecStartPre, with full privileges
	# shellcheck source=/dev/null
	(set -a && . "$conf" && ip netns exec "$ns" "$P/usr/libexec/rxdp/rxdp-ifaces" attach) ||
		fail "rxdp-ifaces attach $ifn in $ns"
	on_exit "INTERFACES=$ifn ip netns exec $ns $P/usr/libexec/rxdp/rxdp-ifaces detach"
	# shellcheck source=/dev/null,disable=SC2086
	(set -a && . "$conf" && { ulimit -l $memlock 2>/dev/null || true; } &&
		exec ip netns exec "$ns" env NOTIFY_SOCKET="$3" \
			setpriv --no-new-privs --inh-caps=-all --bounding-set="$setcaps" \
			"$P/usr/sbin/rxdpd" $RXDPD_OPTIONS) 2>"$4" &
	eval "pid_$ns=$!"
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
}
# systemd's side of sd_notify: every datagram, a line each
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        f.flush()
' "$tmp/notify.sock" "$tmp/notify.log" &
on_exit "kill $! 2>/dev/null"
wait_until 5 test -S "$tmp/notify.sock" || fail "no notify socket"
host "$NS_A" "$IF_A" "$tmp/notify.sock" "$tmp/rxdpd-A.log"
host "$NS_B" "$IF_B" "@rxdp-test-unused-$RXDP_TEST_ID" "$tmp/rxdpd-B.log"
wait_until 10 grep -q "READY=1" "$tmp/notify.log" ||
	bad "no READY=1 from rxdpd: $(cat "$tmp/notify.log" "$tmp/rxdpd-A.log")"
export RXDP_LIB=$P/usr/lib/rxdp RXDP_BIN=$P/usr/bin
rxdp_wait_port "$NS_A" "rxdp_$IF_A"
rxdp_wait_port "$NS_B" "rxdp_$IF_B"
wait_until 5 grep -q "STATUS=serving rxdp_$IF_A" "$tmp/notify.log" ||
	bad "no STATUS=serving: $(cat "$tmp/notify.log")"
st=$(ip netns exec "$NS_A" "$P/usr/bin/rxdp-ctl")
grep -q PROBLEMS <<<"$st" && bad "rxdpd lacks something under the unit's capabilities: $st"
where=$(verbs "$NS_A" ldd "$(command -v ibv_rc_pingpong)" | awk '$1 == "libibverbs.so.1" {print $3}')
[ "$where" = "$P/usr/lib/rxdp/libibverbs.so.1" ] || bad "ibv_rc_pingpong takes libibverbs.so.1 from $where"
gid=$(rxdp_ipv4_gid "$NS_A" "rxdp_$IF_A")
# the server as a user (nobody): its memory reaches the bounded rxdpd too
chmod 755 "$tmp"
verbs "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
	ibv_rc_pingpong -d "rxdp_$IF_A" -g "$gid" -c -n 100 -s 4096 >"$tmp/srv" 2>&1 &
srv=$!
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
	bad "the pingpong server does not listen"
verbs "$NS_B" ibv_rc_pingpong -d "rxdp_$IF_B" -g "$gid" -c -n 100 -s 4096 "$ADDR_A" >"$tmp/cli" 2>&1 ||
	bad "pingpong client: $(cat "$tmp/cli")"
wait $srv || bad "pingpong server: $(cat "$tmp/srv")"
grep -q "100 iters" "$tmp/cli" && echo "ok: ibv_rc_pingpong -c through the installed files (server: nobody): $(grep iters "$tmp/cli")"
eval "kill \$pid_$NS_A; wait \$pid_$NS_A"
wait_until 5 grep -q "STOPPING=1" "$tmp/notify.log" || bad "no STOPPING=1: $(cat "$tmp/notify.log")"
# shellcheck source=/dev/null
(set -a && . "$conf" && INTERFACES=$IF_A ip netns exec "$NS_A" "$P/usr/libexec/rxdp/rxdp-ifaces" detach) >/dev/null ||
	bad "rxdp-ifaces detach"
[ -e "$(rxdp_pin_dir "$NS_A" "$IF_A")" ] && bad "pins left after rxdp-ifaces detach"
echo "ok: readiness and status over NOTIFY_SOCKET, the unit's capabilities suffice, detach"

[ $errors = 0 ] || fail "$errors check(s) failed"
echo "PASS: make install"
