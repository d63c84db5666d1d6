#!/usr/bin/env bash
# rxdpd --tx-thread (each engine's copy-mode sendto() calls in a thread of
# their own): two engines a side on 2-queue veths, checked streams
# (wirecheck: RC, UC and UD, every operation, every byte checked at the
# receiver), ib_write_bw, ib_read_bw and 64-byte writes with 256 in flight
# all finish, and every engine that sent large flushes has its
# rxdp-tx thread (a responder's read responses, a requester's writes),
# SCHED_OTHER (the engines run SCHED_FIFO), restricted to --cpus. Then the
# default, --tx-thread auto: TX threads where the data path may use 4 CPUs
# per engine, none with fewer or with --tx-thread off.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ib_read_bw timeout chrt

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_QUEUES=2 NETNS_NO_IPV6=1 netns_pair
cpus=""
[ "$(nproc)" -ge 2 ] && cpus="--cpus 0,1"
RXDPD_ARGS="--tx-thread on --engines 2 $cpus" rxdp_hosts "$tmp"
for h in A B; do
	grep -q "data path up: 2 queue(s), 2 engine(s), copy mode.*, TX threads" "$tmp/rxdpd-$h.log" ||
		fail "host $h: no TX threads announced: $(grep 'data path' "$tmp/rxdpd-$h.log")"
done

# tx_threads NS: each rxdp-tx thread of the rxdpd in NS as CPUS:POLICY,
# the CPUs it may use and its scheduling policy (chrt's name for it)
tx_threads() {
	local t
	for t in $(rxdpd_threads "$1" rxdp-tx); do
		echo "$(sed -n 's/^Cpus_allowed_list:\s*//p' "$t/status"):$(chrt -p "${t##*/}" |
			sed -n 's/.*current scheduling policy: //p' | head -n 1)"
	done
}
listening() { ip netns exec "$NS_A" ss -ltn | grep -q ":$1 "; }
# perf NAME PORT TOOL ARGS...: perftest's TOOL, server in A, client in B
perf() {
	local name=$1 port=$2 tool=$3 srv
	shift 3
	verbs "$NS_A" "$tool" -d "$devA" -x "$gidA" -F "$@" -p "$port" >"$tmp/srv" 2>&1 &
	srv=$!
	wait_until 10 listening "$port" || fail "$name: the server does not listen"
	verbs "$NS_B" "$tool" -d "$devB" -x "$gidB" -F "$@" -p "$port" "$ADDR_A" >"$tmp/cli" 2>&1 ||
		{ tail -n 8 "$tmp/cli" "$tmp/srv"; fail "$name (client)"; }
	wait "$srv" || { tail -n 8 "$tmp/srv"; fail "$name (server)"; }
	echo "ok: $name: $(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {print $4, "MB/s,", $5, "Mpps"}' "$tmp/cli")"
}

[ -z "$(tx_threads "$NS_A")$(tx_threads "$NS_B")" ] ||
	fail "TX threads before any traffic"
WK_DIR=$tmp
wirecheck_from_b
streams=(
	"-t rc -o all -s 0-65536 -n 500 -q 2"
	"-t uc -o all -s 0-20000 -n 500"
	"-t ud -o all -s 0-1024 -n 500"
)
wirecheck_together 18965 "${streams[@]}"
perf "ib_write_bw 64 KiB" 18962 ib_write_bw -s 65536 -n 3000
perf "ib_read_bw 64 KiB" 18963 ib_read_bw -s 65536 -n 2000
perf "ib_write_bw 64 B, 256 in flight" 18964 ib_write_bw -s 64 -t 256 -n 100000
ta=$(tx_threads "$NS_A" | sort | tr '\n' ' ')
tb=$(tx_threads "$NS_B" | sort | tr '\n' ' ')
echo "rxdp-tx threads (CPUs:policy): A '$ta', B '$tb'"
[ -n "$ta" ] && [ -n "$tb" ] || fail "a side sent large flushes without a TX thread"
for t in $ta $tb; do
	# it spins: never SCHED_FIFO, as the engine that starts it may be
	[ "${t#*:}" = SCHED_OTHER ] || fail "a TX thread runs ${t#*:}, not SCHED_OTHER"
	[ -z "$cpus" ] || [ "${t%%:*}" = 0-1 ] || fail "a TX thread outside --cpus 0,1: $t"
done

# --tx-thread auto, on A's 2 queues (so 2 engines unless --cpus names
# fewer CPUs). --cpus may name CPUs this machine lacks: they count, as for
# --engines auto, so each side of the rule is checked on any machine.
p=$(rxdpd_pid "$NS_A")
kill "$p"
wait_until 10 sh -c "! kill -0 $p 2>/dev/null" || fail "rxdpd $p does not exit"
n=0
for c in "--cpus 0-7:yes" "--cpus 0-6:no" "--cpus 0:no" "--cpus 0-7 --tx-thread off:no" "--cpus 0-3 --engines 1:yes"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	ip netns exec "$NS_A" "$RXDP_BIN/rxdpd" ${c%:*} >"$tmp/auto$n.log" 2>&1 &
	p=$!
	on_exit "kill $p 2>/dev/null"
	rxdp_wait_port "$NS_A" "$devA"
	up=$(grep 'data path up' "$tmp/auto$n.log")
	[ -n "$up" ] || fail "rxdpd ${c%:*}: no data path: $(tail -n 3 "$tmp/auto$n.log")"
	got=no
	[[ "$up" == *"TX threads"* ]] && got=yes
	[ "$got" = "${c#*:}" ] || fail "rxdpd ${c%:*}: TX threads: $got, expected ${c#*:}: $up"
	echo "ok: rxdpd ${c%:*}: $up"
	kill "$p"
	wait_until 10 sh -c "! kill -0 $p 2>/dev/null" || fail "rxdpd $p does not exit"
done
echo PASS
