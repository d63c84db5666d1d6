# shellcheck shell=bash
# rxdp on test hosts: source after tests/lib/netns.sh.
#
#   rxdp_host NS IFNAME LOG   attach rxdp-loader to IFNAME in NS and start an
#                             rxdpd there (stderr to LOG; options from
#                             $RXDPD_ARGS, the loader's attach options from
#                             $RXDP_LOADER_ARGS); undone at exit
#   rxdp_restart NS DEV LOG   NS's rxdpd stopped and started again, with
#                             $RXDPD_ARGS (stderr to LOG), DEV's port
#                             ACTIVE again; the loader stays attached
#   rxdp_hosts DIR            rxdp_host on both ends of netns_pair's veth
#                             (logs in DIR), ports ACTIVE; sets devA devB
#                             and gidA gidB (their IPv4 GID indexes), gid=gidA
#   rxdp_wait_port NS DEV     wait until DEV's port in NS is ACTIVE
#   rxdp_ipv4_gid NS DEV      the index of DEV's first IPv4-mapped GID
#   verbs NS CMD...           CMD in NS on rxdp's libibverbs, bounded by
#                             RXDP_VERBS_TIMEOUT seconds (default 60)
#   rxdp_counter NS NAME      the transport counter NAME of NS's (first)
#                             device, from rxdp-ctl --json
#   rxdp_verdict NS NAME      the XDP verdict counter NAME (redirect,
#                             drop_*) of NS's (first) device
#   vt_across NS PROG ARGS... a vtest program (tests/lib/vtest.h) in NS
#                             with its requester an agent in the other host
#                             of the pair (PROG DEV GID agent PORT there):
#                             its WRs cross the wire, the agent's verdict of
#                             NS's XDP program redirected them
#
# The data checker (tests/lib/wirecheck.c), every byte of every message
# checked at its receiver and every message counted:
#   wirecheck_bg NAME PORT ARGS...
#                             a stream in the background: the target in
#                             NS_B on devB, the client in NS_A sending it
#                             ARGS (wirecheck's stream options: -t, -o, -s,
#                             -n, -q, ...) to ADDR_B:PORT; logs in
#                             $WK_DIR/NAME.{target,client}. WK_TNS WK_TDEV
#                             WK_TGID and WK_CNS WK_CDEV WK_CGID WK_ADDR
#                             name other ends; WK_TWRAP and WK_CWRAP a
#                             command each side runs under (setpriv ...);
#                             WK_TIMEOUT bounds both (120 s)
#   wirecheck_target NAME PORT, wirecheck_client NAME PORT ARGS...
#                             the two halves of wirecheck_bg, to start apart
#   wirecheck_wait NAME       wait for both ends: 0 when both passed (the
#                             client's counts printed), else their wrong
#                             messages and counts, and 1
#   wirecheck_run NAME PORT ARGS...   wirecheck_bg, then wirecheck_wait
#   wirecheck_from_b          the streams that follow go from host B (the
#                             client) to host A (the target), not A to B
#   wirecheck_each PORT STREAM...     each STREAM (one string of wirecheck
#                             options) in turn, named s0, s1..., on ports
#                             PORT, PORT+1...: "ok: wirecheck STREAM" each,
#                             fail at the first that does not pass
#   wirecheck_together PORT STREAM... the same, all at once
#   wirecheck_summary NAME KEY        KEY's value in the client's summary
#                             line (the target's counts: lost, delivered...)

_rxdp_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RXDP_BIN=${RXDP_BIN:-$_rxdp_root/build/bin}
RXDP_LIB=${RXDP_LIB:-$_rxdp_root/build/lib}

rxdp_host() {
	local ns=$1 ifn=$2 log=$3
	[ -x "$RXDP_BIN/rxdpd" ] && [ -x "$RXDP_BIN/rxdp-loader" ] ||
		fail "rxdpd/rxdp-loader not built (make)"
	on_exit "ip netns exec $ns $RXDP_BIN/rxdp-loader detach $ifn"
	# shellcheck disable=SC2086
	ip netns exec "$ns" "$RXDP_BIN/rxdp-loader" attach "$ifn" \
		${RXDP_LOADER_ARGS:-} >/dev/null ||
		fail "rxdp-loader attach $ifn in $ns"
	# called directly (not through a function) so $! is the daemon
	# shellcheck disable=SC2086
	ip netns exec "$ns" "$RXDP_BIN/rxdpd" ${RXDPD_ARGS:-} >"$log" 2>&1 &
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
}

# rxdp_takeover NS [DIR]: a successor rxdpd takes NS's over (rxdpd
# --takeover; its log DIR/succN.log, DIR $WK_DIR by default): the one
# before it gone, the successor serving on the data path it took over,
# every object taken over; fails the test otherwise. RXDP_TKO_N counts them.
RXDP_TKO_N=0
rxdp_takeover() {
	local ns=$1 dir=${2:-$WK_DIR} old new log t0 ms n
	old=$(rxdpd_pid "$ns")
	RXDP_TKO_N=$((RXDP_TKO_N + 1))
	n=$RXDP_TKO_N
	log=$dir/succ$n.log
	t0=$(date +%s%N)
	# it returns once its successor (a child that goes on) serves
	timeout 20 ip netns exec "$ns" "$RXDP_BIN/rxdpd" --takeover >"$log" 2>&1 ||
		{ cat "$log"; fail "takeover $n in $ns: exit $?"; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	grep -q '^rxdpd: ready on' "$log" ||
		{ cat "$log"; fail "takeover $n in $ns: the successor does not serve"; }
	# (the one before exits once told the successor serves)
	wait_until 10 sh -c "! kill -0 $old 2>/dev/null" ||
		fail "takeover $n: rxdpd $old did not exit"
	new=$(rxdpd_pid "$ns")
	on_exit "kill $new 2>/dev/null"
	[ -n "$new" ] && [ "$new" != "$old" ] || fail "takeover $n: no successor"
	grep -q 'data path taken over' "$log" ||
		{ cat "$log"; fail "takeover $n: the data path was made anew"; }
	grep -q 'not taken over' "$log" &&
		{ cat "$log"; fail "takeover $n: an object was not taken over"; }
	echo "ok: takeover $n in $ns: rxdpd $old -> $new in $ms ms"
}

verbs() {
	local ns=$1
	shift
	ip netns exec "$ns" env LD_LIBRARY_PATH="$RXDP_LIB" \
		timeout "${RXDP_VERBS_TIMEOUT:-60}" "$@"
}

rxdp_wait_port() {
	for _ in $(seq 100); do
		verbs "$1" ibv_devinfo -d "$2" 2>/dev/null | grep -q PORT_ACTIVE &&
			return 0
		sleep 0.1
	done
	fail "$2 in $1: port not ACTIVE"
}

rxdp_ipv4_gid() {
	verbs "$1" ibv_devinfo -v -d "$2" |
		sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:.*/\1/p' | head -n 1
}

# rxdpd_pid NS: the pid of the rxdpd running in namespace NS
rxdpd_pid() {
	local p
	for p in $(pgrep -x rxdpd); do
		[ "$(ip netns identify "$p" 2>/dev/null)" = "$1" ] && { echo "$p"; return; }
	done
}

# rxdpd_threads NS NAME: /proc/PID/task/TID of each thread named NAME
# (rxdp-datapath, rxdp-tx, ...) of the rxdpd running in namespace NS
rxdpd_threads() {
	local p t
	for p in $(pgrep -x rxdpd); do
		[ "$(ip netns identify "$p" 2>/dev/null)" = "$1" ] || continue
		for t in /proc/"$p"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] && echo "$t"
		done
	done
}

# Debian's python3, not whatever a PATH puts first: a pyenv shim takes
# 0.5 s a start, long enough to skew a test that reads counters while a
# daemon is stopped (tests/rc/stall.sh)
rxdp_counter() {
	ip netns exec "$1" "$RXDP_BIN/rxdp-ctl" --json counters |
		/usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['counters']['$2'])"
}

rxdp_verdict() {
	ip netns exec "$1" "$RXDP_BIN/rxdp-ctl" --json stats |
		/usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['devices'][0]['xdp_verdicts']['$2'])"
}

_vt_port=19900
vt_across() {
	local ns=$1 prog=$2 other=$NS_B odev=$devB ogid=$gidB addr=$ADDR_B a rc r0
	shift 2
	if [ "$ns" = "$NS_B" ]; then
		other=$NS_A odev=$devA ogid=$gidA addr=$ADDR_A
	fi
	_vt_port=$((_vt_port + 1))
	r0=$(rxdp_verdict "$ns" redirect)
	verbs "$other" "$prog" "$odev" "$ogid" agent "$_vt_port" >/dev/null &
	a=$!
	verbs "$ns" env VT_PEER="$addr:$_vt_port" "$prog" "$@"
	rc=$?
	wait "$a" || { echo "${prog##*/} agent: exit $?" >&2; rc=1; }
	# the WRs came over the wire: the XDP program took their packets
	if [ $rc = 0 ] && [ "$(rxdp_verdict "$ns" redirect)" -le "$r0" ]; then
		echo "${prog##*/} $*: no packet of the agent's reached $ns's XDP program" >&2
		rc=1
	fi
	return $rc
}

rxdp_restart() {
	local ns=$1 dev=$2 log=$3 p
	p=$(rxdpd_pid "$ns")
	if [ -n "$p" ]; then
		kill -TERM "$p"
		wait_until 10 sh -c "! kill -0 $p 2>/dev/null" ||
			fail "rxdpd $p in $ns does not exit"
	fi
	# shellcheck disable=SC2086
	ip netns exec "$ns" "$RXDP_BIN/rxdpd" ${RXDPD_ARGS:-} >"$log" 2>&1 &
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
	rxdp_wait_port "$ns" "$dev"
}

rxdp_hosts() {
	rxdp_host "$NS_A" "$IF_A" "$1/rxdpd-A.log"
	rxdp_host "$NS_B" "$IF_B" "$1/rxdpd-B.log"
	devA=rxdp_$IF_A
	devB=rxdp_$IF_B
	rxdp_wait_port "$NS_A" "$devA"
	rxdp_wait_port "$NS_B" "$devB"
	gidA=$(rxdp_ipv4_gid "$NS_A" "$devA")
	gidB=$(rxdp_ipv4_gid "$NS_B" "$devB")
	[ -n "$gidA" ] && [ -n "$gidB" ] || fail "no IPv4 GID on $devA or $devB"
	gid=$gidA
}

WIRECHECK=${WIRECHECK:-$_rxdp_root/build/tests/lib/wirecheck}
declare -gA _wk_target _wk_client

# the programs end themselves (-T) before verbs' timeout kills them, so that
# a stream that stalls says how far it got
wirecheck_target() {
	local name=$1 port=$2 t=${WK_TIMEOUT:-120}
	[ -x "$WIRECHECK" ] || fail "$WIRECHECK not built (make test)"
	[ -n "${WK_DIR:-}" ] || fail "wirecheck: no WK_DIR"
	# shellcheck disable=SC2086
	RXDP_VERBS_TIMEOUT=$((t + 10)) verbs "${WK_TNS:-$NS_B}" ${WK_TWRAP:-} \
		"$WIRECHECK" -d "${WK_TDEV:-$devB}" -g "${WK_TGID:-$gidB}" -p "$port" \
		-T "$t" >"$WK_DIR/$name.target" 2>&1 &
	_wk_target[$name]=$!
}

wirecheck_client() {
	local name=$1 port=$2 t=${WK_TIMEOUT:-120}
	shift 2
	# shellcheck disable=SC2086
	RXDP_VERBS_TIMEOUT=$((t + 10)) verbs "${WK_CNS:-$NS_A}" ${WK_CWRAP:-} \
		"$WIRECHECK" -d "${WK_CDEV:-$devA}" -g "${WK_CGID:-$gidA}" -p "$port" \
		-T "$t" "$@" "${WK_ADDR:-$ADDR_B}" >"$WK_DIR/$name.client" 2>&1 &
	_wk_client[$name]=$!
}

wirecheck_bg() {
	wirecheck_target "$1" "$2"
	wirecheck_client "$@"
}

wirecheck_wait() {
	local name=$1 rt rc
	wait "${_wk_client[$name]}"
	rc=$?
	wait "${_wk_target[$name]}"
	rt=$?
	if [ $rc = 0 ] && [ $rt = 0 ]; then
		sed -n 's/^wirecheck client: /    /p' "$WK_DIR/$name.client"
		return 0
	fi
	echo "wirecheck $name: client exit $rc, target exit $rt" >&2
	grep -hv '^summary:' "$WK_DIR/$name.target" "$WK_DIR/$name.client" |
		head -n 30 >&2
	return 1
}

wirecheck_run() {
	wirecheck_bg "$@"
	wirecheck_wait "$1"
}

wirecheck_from_b() {
	WK_TNS=$NS_A WK_TDEV=$devA WK_TGID=$gidA WK_ADDR=$ADDR_A
	WK_CNS=$NS_B WK_CDEV=$devB WK_CGID=$gidB
}

wirecheck_each() {
	local port=$1 i=0 st
	shift
	for st in "$@"; do
		# shellcheck disable=SC2086
		wirecheck_run "s$i" $((port + i)) $st || fail "wirecheck $st"
		echo "ok: wirecheck $st"
		i=$((i + 1))
	done
}

wirecheck_together() {
	local port=$1 i=0 st
	shift
	for st in "$@"; do
		# shellcheck disable=SC2086
		wirecheck_bg "s$i" $((port + i)) $st
		i=$((i + 1))
	done
	i=0
	for st in "$@"; do
		wirecheck_wait "s$i" || fail "wirecheck $st"
		echo "ok: wirecheck $st"
		i=$((i + 1))
	done
}

wirecheck_summary() {
	sed -n "s/^summary: .*\\b$2=\\([^ ]*\\).*/\\1/p" "$WK_DIR/$1.client"
}
