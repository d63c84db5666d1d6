#!/usr/bin/env bash
# Unmodified Debian perftest and ibverbs-utils over rxdp, between two network
# namespaces joined by a veth pair: each tool must exit 0 and print its
# figures: a pingpong its "N iters in" line on both sides (N what it was
# asked for) and no "invalid data" line (its -c compares one byte a page:
# a sign, not a data check; wirecheck is that), a perftest client its
# results table with a non-zero figure in every row (but a latency's
# spread).
# Usage: perftest.sh [TOOL...] (default: all of them)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ib_write_bw ibv_rc_pingpong timeout

tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
if [ -n "${RXDP_PERFTEST_MTU:-}" ]; then
	# the port's active MTU (ibv_devinfo: "active_mtu: 4096 (5)")
	verbs "$NS_B" ibv_devinfo -d "$devB" | grep -q "active_mtu:.*$RXDP_PERFTEST_MTU " ||
		fail "$devB: active_mtu is not $RXDP_PERFTEST_MTU"
fi

failed=()
# pair NAME SERVER-ARGS -- CLIENT-ARGS: server in A, client in B (to ADDR_A)
pair() {
	local name=$1 port=$2
	shift 2
	local srv_args=() cli_args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv_args+=("$1"); shift; done
	shift
	cli_args=("$@")
	verbs "$NS_A" "${srv_args[@]}" >"$tmp/$name.srv" 2>&1 &
	local srv=$!
	local ok=1 why=""
	# the server listens on TCP before it creates verbs resources
	wait_until 5 bash -c "ip netns exec $NS_A ss -ltn 2>/dev/null | grep -q ':$port '" ||
		why="the server did not listen"
	verbs "$NS_B" "${cli_args[@]}" >"$tmp/$name.cli" 2>&1 || ok=0
	wait "$srv" || ok=0
	local tool=${cli_args[0]}
	[ "$tool" = taskset ] && tool=${cli_args[3]}
	[ $ok = 1 ] && why=$(figures "$tool" "$tmp/$name" "${cli_args[@]}")
	[ -n "$why" ] && ok=0
	if [ $ok = 1 ]; then
		printf 'ok: %s\n' "$name"
		tail -n 3 "$tmp/$name.cli" | sed 's/^/    /'
	else
		printf 'FAIL: %s%s\n' "$name" "${why:+: $why}"
		for f in "$tmp/$name.srv" "$tmp/$name.cli"; do
			echo "--- $f"
			tail -n 15 "$f"
		done
		failed+=("$name")
	fi
}

# figures TOOL BASE ARGS...: what is wrong with the figures TOOL printed in
# BASE.cli (and BASE.srv), run with ARGS; nothing if they are there
figures() {
	local tool=$1 base=$2 n=1000
	shift 2
	case $tool in
	ibv_*_pingpong)
		# -n N: N iterations (the pingpongs' default is 1000)
		while [ $# -gt 0 ]; do
			[ "$1" = -n ] && n=$2
			shift
		done
		for f in "$base.cli" "$base.srv"; do
			grep -q "^$n iters in [0-9.]* seconds" "$f" ||
				{ echo "no '$n iters in' line in ${f##*.}"; return; }
			! grep -q "invalid data" "$f" ||
				{ echo "${f##*.}: $(grep -m1 "invalid data" "$f")"; return; }
		done
		;;
	ib_*)
		# the results table: #bytes #iterations, then figures, all > 0
		# but a latency's spread (t_stdev: 0 when the samples agree)
		awk '/^ *#bytes/ { t = 1; for (i = 1; i <= NF; i++) if ($i ~ /^t_stdev/) sd = i; next }
			t && /^ *[0-9]+ +[0-9]+ / { rows++; for (i = 3; i <= NF; i++) if (i != sd && $i + 0 <= 0) bad = $0 }
			END { if (!rows) print "no results table"; else if (bad != "") print "a zero figure: " bad }' \
			"$base.cli"
		;;
	esac
}

# perftest times with the CPU's cycle counter (rdtsc), read where the
# process runs: a process that moves between CPUs whose counters differ
# takes a start after its end, and its figures come out 0 (an unsigned
# difference that wrapped; once in CI, ib_send_bw -c UD -a's first row).
# As perftest's users do, each side runs on one CPU: the server on the
# first, the client on the last.
cpu_last=$(($(nproc) - 1))

pt() { # pt TOOL ARGS...: a perftest tool, server/client with the same args
	local tool=$1
	shift
	pair "$tool $*" 18515 taskset -c 0 "$tool" -d "$devA" -x "$gid" -F "$@" -- \
		taskset -c "$cpu_last" "$tool" -d "$devB" -x "$gid" -F "$@" "$ADDR_A"
}

pp() { # pp TOOL ARGS...: an ibv_*_pingpong
	local tool=$1
	shift
	pair "$tool $*" 18515 "$tool" -d "$devA" -g "$gid" "$@" -- \
		"$tool" -d "$devB" -g "$gid" "$@" "$ADDR_A"
}

want=" ${*:-all} "
sel() { [ "$want" = " all " ] || [[ "$want" == *" $1 "* ]]; }

sel rc_pingpong && {
	pp ibv_rc_pingpong -c -n 200 -s 1
	pp ibv_rc_pingpong -c -n 200 -s 1023
	pp ibv_rc_pingpong -c -n 200 -s 1025
	pp ibv_rc_pingpong -c -n 50 -s 1048576
}
sel rc_pingpong_mtu && {
	# around the path MTU the port reports (-m: the pingpong's default is 1024)
	m=${RXDP_PERFTEST_MTU:-1024}
	for s in $((m - 1)) $m $((m + 1)) $((3 * m + 5)); do
		pp ibv_rc_pingpong -c -n 100 -m "$m" -s "$s"
	done
}
sel write_bw && pt ib_write_bw -n 500 -s 65536 --report_gbits
sel read_bw && pt ib_read_bw -n 500 -s 65536 --report_gbits
sel send_bw && pt ib_send_bw -n 500 -s 65536 --report_gbits
sel atomic_bw && pt ib_atomic_bw -n 500
sel write_lat && pt ib_write_lat -n 500 -s 2
sel read_lat && pt ib_read_lat -n 500 -s 2
sel send_lat && pt ib_send_lat -n 500 -s 2
sel atomic_lat && pt ib_atomic_lat -n 500
sel write_bw_all && pt ib_write_bw -a -n 20 --report_gbits
sel uc_pingpong && pp ibv_uc_pingpong -c -n 200 -s 1024
sel ud_pingpong && pp ibv_ud_pingpong -c -n 200 -s 512
sel srq_pingpong && pp ibv_srq_pingpong -c -n 200 -s 1024
sel send_bw_uc && pt ib_send_bw -c UC -n 500 -s 4096 --report_gbits
sel write_bw_uc && pt ib_write_bw -c UC -n 500 -s 4096 --report_gbits
sel send_bw_ud && pt ib_send_bw -c UD -n 500 -s 1024 --report_gbits
sel send_lat_ud && pt ib_send_lat -c UD -n 500 -s 2
sel write_bw_bidir && pt ib_write_bw -b -n 500 -s 65536 --report_gbits
sel send_bw_qps && pt ib_send_bw -q 4 -n 500 -s 4096 --report_gbits
sel send_bw_events && pt ib_send_bw -e -n 500 -s 4096 --report_gbits
sel send_lat_events && pt ib_send_lat -e -n 500 -s 2
sel read_bw_all && pt ib_read_bw -a -n 20 --report_gbits
sel send_bw_all && pt ib_send_bw -a -n 20 --report_gbits
sel write_lat_all && pt ib_write_lat -a -n 20
sel send_lat_uc && pt ib_send_lat -c UC -n 500 -s 2
sel write_lat_uc && pt ib_write_lat -c UC -n 500 -s 2
sel send_bw_ud_all && pt ib_send_bw -c UD -a -n 20 --report_gbits
sel atomic_bw_qps && pt ib_atomic_bw -q 2 -n 500
sel read_bw_bidir && pt ib_read_bw -b -n 200 -s 65536 --report_gbits
sel read_lat_all && pt ib_read_lat -a -n 20
sel send_lat_all && pt ib_send_lat -a -n 20
sel send_bw_bidir && pt ib_send_bw -b -n 200 -s 65536 --report_gbits
sel atomic_lat_cas && pt ib_atomic_lat -A CMP_AND_SWAP -n 500
sel send_bw_events_qps && pt ib_send_bw -e -q 2 -n 500 -s 16384 --report_gbits
# on-demand paging: ODP MRs, implicit ODP with a prefetch, perftest's --odp
# (which refuses atomics: "ODP does not support ATOMICS for now")
sel odp && {
	pp ibv_rc_pingpong -c -n 200 -s 4096 -o
	pp ibv_rc_pingpong -c -n 200 -s 64 -o
	pp ibv_rc_pingpong -c -n 100 -s 65536 -O -P
	pt ib_write_bw --odp -n 500 -s 65536 --report_gbits
	pt ib_read_bw --odp -n 500 -s 65536 --report_gbits
}

if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}"
	exit 1
fi
echo "PASS: perftest and pingpong over rxdp"
