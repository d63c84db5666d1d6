#!/usr/bin/env bash
# rxdpd as the HCA of whole hosts (two namespaces joined by a veth pair):
#  - 8 processes per host at once: RC, UC and UD streams of every
#    operation each has, every byte checked at the receiver (wirecheck,
#    tests/lib/wirecheck.c), one on an SRQ, beside the stock tools
#    (ibv_rc_pingpong, ibv_srq_pingpong: that they run) and a perftest pair
#  - loopback: RC, UC and UD streams between two processes of one host,
#    every byte checked, none of it on the wire
#  - an unprivileged user (setpriv --reuid 65534) runs a checked stream; the
#    process holds no AF_XDP socket and no BPF object (its sockets are its
#    unix control connection)
#  - per-user limits: one user creating QPs until refused (EDQUOT) at the
#    4096 the README gives leaves the others able to work
#  - kill -9 of a client mid-transfer leaves nothing behind; kill -9 of
#    rxdpd mid-transfer gives its clients an error, not a hang, and a new
#    rxdpd serves new ones; with --group, only root and the group's members
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong ib_write_bw setpriv timeout
hog=$root/build/tests/rc/qp_hog
[ -x "$hog" ] || fail "$hog not built"

tmp=$(mktemp -d)
chmod 755 "$tmp"
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
errors=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*" >&2; errors=$((errors + 1)); }
qps_of() { ip netns exec "$1" "$RXDP_BIN/rxdp-ctl" qps | sed -n 's/^QPS (\([0-9]*\))/\1/p'; }

# --- 8 processes per host -----------------------------------------------------
# one pair per line: the server in B, the client in A to ADDR_B; wirecheck's
# are checked streams, the rest stock tools (line-buffered, so a pair that
# hangs shows how far it got)
pairs=(
	"wirecheck -t rc -o all -s 0-70000 -n 300"
	"wirecheck -t rc -o send,write -s 1-4096 -n 500 --sge 3"
	"wirecheck -t rc -o send,send_imm -s 1-2048 -n 200 -q 4 --srq"
	"wirecheck -t uc -o all -s 1-8192 -n 300"
	"wirecheck -t ud -o all -s 0-1024 -n 300"
	"ibv_rc_pingpong -n 300 -s 4096"
	"ibv_srq_pingpong -n 100 -s 2048 -q 4"
	"ib_write_bw -F -D 3"
)
echo "# ${#pairs[@]} processes per host at once"
WK_DIR=$tmp
port=19000
pids=()
tool_args() { # SIDE(A|B) TOOL PORT: the device options TOOL takes
	local dev=dev$1 g=gid$1 opt=-g
	[ "$2" = ib_write_bw ] && opt=-x
	echo "-d ${!dev} $opt ${!g} -p $3"
}
for i in "${!pairs[@]}"; do
	read -r -a cmd <<<"${pairs[i]}"
	if [ "${cmd[0]}" = wirecheck ]; then
		wirecheck_bg "m$i" $((port + i)) "${cmd[@]:1}"
		continue
	fi
	# shellcheck disable=SC2046
	verbs "$NS_B" stdbuf -oL "${cmd[@]}" $(tool_args B "${cmd[0]}" $((port + i))) \
		>"$tmp/m$i.srv" 2>&1 &
	pids+=($!)
done
for i in "${!pairs[@]}"; do
	read -r -a cmd <<<"${pairs[i]}"
	[ "${cmd[0]}" = wirecheck ] && continue
	wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':$((port + i)) '" ||
		bad "server $i did not listen"
	# shellcheck disable=SC2046
	verbs "$NS_A" stdbuf -oL "${cmd[@]}" $(tool_args A "${cmd[0]}" $((port + i))) \
		"$ADDR_B" >"$tmp/m$i.cli" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { bad "a stock tool of the 8 pairs failed (exit $?)"; }
done
for i in "${!pairs[@]}"; do
	read -r -a cmd <<<"${pairs[i]}"
	if [ "${cmd[0]}" = wirecheck ]; then
		wirecheck_wait "m$i" && ok "${pairs[i]}" || bad "${pairs[i]}"
	elif grep -qE "iters in|BW average" "$tmp/m$i.cli"; then
		ok "${pairs[i]} (runs; not a data check)"
	else
		bad "${pairs[i]}"
		tail -n 5 "$tmp/m$i.srv" "$tmp/m$i.cli"
	fi
done

# --- loopback: both ends on host A ----------------------------------------------
echo "# loopback on one host"
# the loopback never reaches the wire: B's XDP program, which would count
# any RoCEv2 frame reaching it (redirected or dropped), counts none of it
roce_seen() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" stats |
		awk '$1 ~ /^(redirect|drop_)/ {s += $2} END {print s + 0}'
}
before=$(roce_seen)
lo=(
	"-t rc -o all -s 0-70000 -n 300 --sge 2"
	"-t uc -o all -s 0-8192 -n 300"
	"-t ud -o all -s 0-1024 -n 300"
)
for i in "${!lo[@]}"; do
	# shellcheck disable=SC2086
	WK_TNS=$NS_A WK_TDEV=$devA WK_TGID=$gidA WK_ADDR=$ADDR_A \
		wirecheck_run "lo$i" 19100 ${lo[i]} && ok "loopback ${lo[i]}" ||
		bad "loopback ${lo[i]}"
done
after=$(roce_seen)
[ "$before" = "$after" ] && ok "loopback frames stay off the wire" ||
	bad "loopback frames reached the peer ($before -> $after)"

# --- an unprivileged user ------------------------------------------------------------
echo "# an unprivileged user (uid 65534)"
nobody() { verbs "$1" setpriv --reuid=65534 --regid=65534 --clear-groups "${@:2}"; }
WK_TWRAP="setpriv --reuid=65534 --regid=65534 --clear-groups" wirecheck_target nb 19200
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19200 '"
# The target opens its device before it listens, and waits for its client:
# inspected now, it is alive whatever the machine's speed.
pp=$(pgrep -u 65534 -f "wirecheck -d $devB" | head -n 1)
if [ -n "$pp" ]; then
	# its sockets are its control connection (unix) and wirecheck's own
	# TCP socket: none is an AF_XDP socket, none a BPF object
	bpf=$(ls -l "/proc/$pp/fd" | grep -c 'anon_inode:bpf')
	socks=$(ls -l "/proc/$pp/fd" | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p')
	other=0 unix=0
	for ino in $socks; do
		if grep -qw "$ino" "/proc/$pp/net/unix"; then
			unix=$((unix + 1))
		else
			cat "/proc/$pp/net/tcp" "/proc/$pp/net/tcp6" | grep -qw "$ino" ||
				other=$((other + 1))
		fi
	done
	[ "$bpf" = 0 ] && [ "$other" = 0 ] && [ "$unix" -gt 0 ] &&
		ok "the unprivileged process holds no AF_XDP socket and no BPF object" ||
		bad "the unprivileged process holds $bpf BPF objects, $other other sockets, $unix unix"
else
	bad "the unprivileged wirecheck target is not running"
fi
WK_CWRAP="setpriv --reuid=65534 --regid=65534 --clear-groups" \
	wirecheck_client nb 19200 -t rc -o all -s 1-20000 -n 1000
wirecheck_wait nb && ok "a checked stream as uid 65534 both sides" ||
	bad "a checked stream as uid 65534"

# --- per-user limits --------------------------------------------------------------------
echo "# one user takes all the QPs it may"
mkfifo "$tmp/hold"
exec 7<>"$tmp/hold"
nobody "$NS_A" "$hog" "$devA" <"$tmp/hold" >"$tmp/hog.out" 2>&1 &
h=$!
wait_until 60 grep -q "^qps" "$tmp/hog.out"
read -r _ n _ e < <(grep "^qps" "$tmp/hog.out")
# the README: "a user (but root) holds at most 4096 QPs"
[ "$e" = 122 ] && [ "${n:-0}" = 4096 ] &&
	ok "uid 65534 refused with EDQUOT after $n QPs" || bad "hog: $(cat "$tmp/hog.out")"
WK_CWRAP="setpriv --reuid=65533 --regid=65533 --clear-groups" \
	wirecheck_run other 19300 -t rc -o all -s 1-8192 -n 200 &&
	ok "another user works meanwhile" || bad "another user could not work"
exec 7>&-
wait $h

# --- kill -9 --------------------------------------------------------------------------
echo "# kill -9 of a client, then of rxdpd, mid-transfer"
verbs "$NS_B" ib_write_bw -d "$devB" -x "$gidB" -F -D 20 -p 19400 >"$tmp/k.srv" 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19400 '"
verbs "$NS_A" ib_write_bw -d "$devA" -x "$gidA" -F -D 20 -p 19400 "$ADDR_B" >"$tmp/k.cli" 2>&1 &
c=$!
# the client makes its QP after perftest's start-up (its clock calibration
# alone takes a while on a loaded machine)
wait_until 30 bash -c "[ \"\$(ip netns exec $NS_A $RXDP_BIN/rxdp-ctl qps | sed -n 's/^QPS (\([0-9]*\))/\1/p')\" -gt 0 ]" ||
	bad "no QP of the client to leave behind"
pkill -9 -f "ib_write_bw -d $devA"
wait $c
wait $s
rc=$?
[ $rc != 124 ] && ok "the peer of a killed client ends (exit $rc), no hang" ||
	bad "the peer of a killed client hung"
wait_until 5 bash -c "[ \$(ip netns exec $NS_A $RXDP_BIN/rxdp-ctl qps | grep -c '^  rxdp_') = 0 ]" &&
	ok "the killed client's QPs are gone" || bad "QPs left behind by a killed client"

verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -n 1000000 -p 19500 >"$tmp/d.srv" 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19500 '"
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -n 1000000 -p 19500 "$ADDR_B" >"$tmp/d.cli" 2>&1 &
c=$!
# connected (its QP in RTS): from here on it exchanges messages until it is
# stopped
wait_until 10 bash -c "ip netns exec $NS_A $RXDP_BIN/rxdp-ctl qps | grep -qw RTS" ||
	bad "the client did not connect: $(ip netns exec "$NS_A" "$RXDP_BIN/rxdp-ctl" qps)"
dpid=$(pgrep -f "^$RXDP_BIN/rxdpd" | while read -r p; do
	[ "$(readlink /proc/$p/ns/net)" = "$(ip netns exec "$NS_A" readlink /proc/self/ns/net)" ] && echo "$p"
done)
kill -9 $dpid
wait $c
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] && ok "a client of a killed rxdpd gets an error (exit $rc)" ||
	bad "a client of a killed rxdpd: exit $rc"
kill $s 2>/dev/null
wait $s
# its files are released once it is reaped: the client hears of its death
# (its connection released) before the control socket is free
wait "$dpid" 2>/dev/null
# the new one serves root and the group "root" only (--group)
ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" --group root >>"$tmp/rxdpd-A2.log" 2>&1 &
on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
rxdp_wait_port "$NS_A" "$devA"
if nobody "$NS_A" ibv_devinfo -d "$devA" -v >"$tmp/g.out" 2>&1 ||
	! grep -q "not in the group" "$tmp/g.out"; then
	bad "--group root let uid 65534 open $devA"
	cat "$tmp/g.out"
else
	ok "--group: uid 65534 may not open the device"
fi
verbs "$NS_A" setpriv --reuid=65534 --regid=0 --clear-groups ibv_devinfo -d "$devA" \
	>/dev/null 2>&1 && ok "--group: a member of the group may" ||
	bad "--group root refused gid 0"
wirecheck_run new 19600 -t rc -o all -s 1-8192 -n 200 &&
	ok "a new rxdpd serves new clients" || { bad "after a restart"; tail -n 5 "$tmp/rxdpd-A2.log"; }

[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
