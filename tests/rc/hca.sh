#!/usr/bin/env bash
# rxdpd as the HCA of whole hosts (two namespaces joined by a veth pair):
#  - 8 processes per host at once: RC/UC/UD pingpongs with -c (every
#    message checked), some on completion channels, and a perftest pair
#  - loopback: RC, UC and UD pingpongs between two processes of one host,
#    and a QP talking to its own device's GID
#  - an unprivileged user (setpriv --reuid 65534) runs ibv_rc_pingpong; the
#    process holds no AF_XDP socket and no BPF object (its sockets are its
#    unix control connection)
#  - per-user limits: one user creating QPs until refused (EDQUOT) leaves
#    the others able to work
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
# one pair per line: TOOL ARGS (the server in B, the client in A to ADDR_B);
# line-buffered, so a pair that hangs shows how far it got
pairs=(
	"ibv_rc_pingpong -c -n 300 -s 64"
	"ibv_rc_pingpong -c -n 300 -s 4096"
	"ibv_rc_pingpong -c -n 100 -s 65536"
	"ibv_rc_pingpong -c -e -n 300 -s 1024"
	"ibv_uc_pingpong -c -n 300 -s 1024"
	"ibv_ud_pingpong -c -n 300 -s 512"
	"ibv_srq_pingpong -c -n 100 -s 2048 -q 4"
	"ib_write_bw -F -D 3"
)
echo "# ${#pairs[@]} processes per host at once"
port=19000
pids=()
for i in "${!pairs[@]}"; do
	read -r -a cmd <<<"${pairs[i]}"
	if [ "${cmd[0]}" = ib_write_bw ]; then
		sargs=(-d "$devB" -x "$gidB" -p $((port + i)))
		cargs=(-d "$devA" -x "$gidA" -p $((port + i)))
	else
		sargs=(-d "$devB" -g "$gidB" -p $((port + i)))
		cargs=(-d "$devA" -g "$gidA" -p $((port + i)))
	fi
	verbs "$NS_B" stdbuf -oL "${cmd[@]}" "${sargs[@]}" >"$tmp/m$i.srv" 2>&1 &
	pids+=($!)
done
for i in "${!pairs[@]}"; do
	wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':$((port + i)) '" ||
		bad "server $i did not listen"
done
for i in "${!pairs[@]}"; do
	read -r -a cmd <<<"${pairs[i]}"
	if [ "${cmd[0]}" = ib_write_bw ]; then
		cargs=(-d "$devA" -x "$gidA" -p $((port + i)))
	else
		cargs=(-d "$devA" -g "$gidA" -p $((port + i)))
	fi
	verbs "$NS_A" stdbuf -oL "${cmd[@]}" "${cargs[@]}" "$ADDR_B" >"$tmp/m$i.cli" 2>&1 &
	pids+=($!)
done
sleep 1
nrun=$(qps_of "$NS_B")
for p in "${pids[@]}"; do
	wait "$p" || { bad "a process of the 8 pairs failed (exit $?)"; }
done
for i in "${!pairs[@]}"; do
	if grep -qE "iters in|BW average" "$tmp/m$i.cli"; then
		ok "${pairs[i]}"
	else
		bad "${pairs[i]}"
		tail -n 5 "$tmp/m$i.srv" "$tmp/m$i.cli"
	fi
done
echo "    ($nrun QPs on $devB while they ran)"

# --- loopback: both ends on host A ----------------------------------------------
echo "# loopback on one host"
for t in rc uc ud; do
	verbs "$NS_A" "ibv_${t}_pingpong" -d "$devA" -g "$gidA" -c -n 200 -s 1024 \
		-p 19100 >"$tmp/lo-$t.srv" 2>&1 &
	s=$!
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':19100 '"
	if verbs "$NS_A" "ibv_${t}_pingpong" -d "$devA" -g "$gidA" -c -n 200 \
		-s 1024 -p 19100 "$ADDR_A" >"$tmp/lo-$t.cli" 2>&1 && wait $s; then
		ok "ibv_${t}_pingpong -c between two processes of $NS_A"
	else
		bad "ibv_${t}_pingpong loopback"
		tail -n 5 "$tmp/lo-$t.srv" "$tmp/lo-$t.cli"
	fi
done
# the loopback never reached the wire: B's XDP program, which would count
# any RoCEv2 frame reaching it (redirected or dropped), counted none of it
roce_seen() {
	ip netns exec "$NS_B" "$RXDP_BIN/rxdp-ctl" stats |
		awk '$1 ~ /^(redirect|drop_)/ {s += $2} END {print s + 0}'
}
before=$(roce_seen)
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 50 -p 19101 >/dev/null 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':19101 '"
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 50 -p 19101 "$ADDR_A" >/dev/null 2>&1
wait $s
after=$(roce_seen)
[ "$before" = "$after" ] && ok "loopback frames stay off the wire" ||
	bad "loopback frames reached the peer ($before -> $after)"

# --- an unprivileged user ------------------------------------------------------------
echo "# an unprivileged user (uid 65534)"
nobody() { verbs "$1" setpriv --reuid=65534 --regid=65534 --clear-groups "${@:2}"; }
nobody "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -c -n 2000 -s 64 -p 19200 \
	>"$tmp/nb.srv" 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19200 '"
# The server opens its device, PD, CQ and QP before it listens, and waits for
# its client: inspected now, it is alive whatever the machine's speed.
pp=$(pgrep -u 65534 -f "ibv_rc_pingpong .*-p 19200$" | head -n 1)
if [ -n "$pp" ]; then
	# its sockets are its control connection (unix) and the pingpong's
	# own TCP listener: none is an AF_XDP socket, none a BPF object
	bpf=$(ls -l "/proc/$pp/fd" | grep -c 'anon_inode:bpf')
	socks=$(ls -l "/proc/$pp/fd" | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p')
	other=0
	for ino in $socks; do
		cat "/proc/$pp/net/unix" "/proc/$pp/net/tcp" "/proc/$pp/net/tcp6" |
			grep -qw "$ino" || other=$((other + 1))
	done
	[ "$bpf" = 0 ] && [ "$other" = 0 ] && [ -n "$socks" ] &&
		ok "the unprivileged process holds no AF_XDP socket and no BPF object" ||
		bad "the unprivileged process holds $bpf BPF objects, $other other sockets"
else
	bad "the unprivileged pingpong server is not running"
fi
nobody "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 2000 -s 64 -p 19200 \
	"$ADDR_B" >"$tmp/nb.cli" 2>&1 &
c=$!
wait $c && wait $s && grep -q "iters in" "$tmp/nb.cli" &&
	ok "ibv_rc_pingpong -c as uid 65534" || { bad "pingpong as uid 65534"; tail -n 5 "$tmp/nb.srv" "$tmp/nb.cli"; }

# --- per-user limits --------------------------------------------------------------------
echo "# one user takes all the QPs it may"
mkfifo "$tmp/hold"
exec 7<>"$tmp/hold"
nobody "$NS_A" "$hog" "$devA" <"$tmp/hold" >"$tmp/hog.out" 2>&1 &
h=$!
wait_until 60 grep -q "^qps" "$tmp/hog.out"
read -r _ n _ e < <(grep "^qps" "$tmp/hog.out")
[ "$e" = 122 ] && [ "${n:-0}" -gt 1000 ] &&
	ok "uid 65534 refused with EDQUOT after $n QPs" || bad "hog: $(cat "$tmp/hog.out")"
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -c -n 100 -p 19300 >"$tmp/l.srv" 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19300 '"
verbs "$NS_A" setpriv --reuid=65533 --regid=65533 --clear-groups \
	ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 100 -p 19300 "$ADDR_B" >"$tmp/l.cli" 2>&1 &&
	wait $s && ok "another user works meanwhile" || bad "another user could not work"
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
sleep 2
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
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -c -n 100 -p 19600 >"$tmp/r.srv" 2>&1 &
s=$!
wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':19600 '"
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -c -n 100 -p 19600 "$ADDR_B" >"$tmp/r.cli" 2>&1 &&
	wait $s && ok "a new rxdpd serves new clients" || { bad "after a restart"; tail -n 5 "$tmp/r.cli" "$tmp/rxdpd-A2.log"; }

[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
