#!/usr/bin/env bash
# make bench: rxdp through unmodified perftest, and kernel TCP (sockperf,
# iperf3), on the same veth pair between two namespaces, in one run.
# Raw samples go to build/bench/samples.tsv; bench/report.py turns them into
# build/bench/results.md and results.json. Bounded: a few minutes.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
skip() { # a benchmark that cannot run is a failure, not a skip
	echo "make bench: $*" >&2
	exit 1
}
require_root
require_cmd sockperf iperf3 ib_write_lat

out=$root/build/bench
REPEAT=${RXDP_BENCH_REPEAT:-3}
mkdir -p "$out"
samples=$out/samples.tsv
printf 'name\tsize\tmetric\tunit\tvalue\n' >"$samples"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
sample() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$samples"; }

NETNS_NO_IPV6=1 netns_pair
rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
devA=rxdp_$IF_A devB=rxdp_$IF_B
rxdp_wait_port "$NS_A" "$devA"
rxdp_wait_port "$NS_B" "$devB"
gid=$(rxdp_ipv4_gid "$NS_A" "$devA")

# perftest TOOL ARGS...: server in A, client in B; the client's result line
perftest() {
	verbs "$NS_A" "$@" -d "$devA" -x "$gid" -F >"$tmp/srv" 2>&1 &
	local srv=$!
	for _ in $(seq 50); do
		ip netns exec "$NS_A" ss -ltn | grep -q ":18515 " && break
		sleep 0.1
	done
	verbs "$NS_B" "$@" -d "$devB" -x "$gid" -F "$ADDR_A" >"$tmp/cli" 2>&1
	local rc=$?
	wait $srv || rc=1
	[ $rc = 0 ] || { echo "  $* failed" >&2; tail -n 5 "$tmp/cli" >&2; return 1; }
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {print}' "$tmp/cli"
}

echo "# rxdp latency (perftest, 2 B; 8 B for atomics)"
for r in $(seq "$REPEAT"); do
	for t in ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat; do
		perftest "$t" -n 2000 $([ $t = ib_atomic_lat ] || echo -s 2) |
			while read -r size _ tmin _ typ _ _ p99 _; do
				sample "rxdp $t" "$size" typical us "$typ"
				sample "rxdp $t" "$size" p99 us "$p99"
			done
	done
	echo "  round $r/$REPEAT"
done

echo "# rxdp bandwidth (perftest, 2 B .. 1 MiB)"
for r in $(seq "$REPEAT"); do
	for t in ib_write_bw ib_send_bw ib_read_bw; do
		for s in 2 64 1024 4096 65536 1048576; do
			n=$((s >= 65536 ? 200 : 2000))
			perftest "$t" -s "$s" -n "$n" --report_gbits |
				while read -r size _ _ avg rate; do
					sample "rxdp $t" "$size" bw Gbit/s "$avg"
					sample "rxdp $t" "$size" rate Mpps "$rate"
				done
		done
	done
	echo "  round $r/$REPEAT"
done

echo "# kernel TCP on the same veth: sockperf ping-pong, iperf3 one stream"
ip netns exec "$NS_A" sockperf sr --tcp -i "$ADDR_A" -p 11111 >/dev/null 2>&1 &
on_exit "kill $! 2>/dev/null"
ip netns exec "$NS_A" iperf3 -s -B "$ADDR_A" >/dev/null 2>&1 &
on_exit "kill $! 2>/dev/null"
sleep 1
for r in $(seq "$REPEAT"); do
	for s in 14 64 1024 8192; do # 14: sockperf's smallest message
		ip netns exec "$NS_B" timeout 30 sockperf pp --tcp -i "$ADDR_A" -p 11111 \
			-m "$s" -t 2 --full-rtt 2>/dev/null >"$tmp/sp" || true
		# --full-rtt: round trips; halve for the one-way figure perftest reports
		awk -v s="$s" '/percentile 50.000 =/ {print s, $NF}' "$tmp/sp" |
			while read -r size v; do
				sample "tcp sockperf" "$size" typical us \
					"$(awk -v v="$v" 'BEGIN {print v / 2}')"
			done
		awk -v s="$s" '/percentile 99.000 =/ {print s, $NF}' "$tmp/sp" |
			while read -r size v; do
				sample "tcp sockperf" "$size" p99 us \
					"$(awk -v v="$v" 'BEGIN {print v / 2}')"
			done
	done
	for s in 65536 1048576; do
		ip netns exec "$NS_B" timeout 30 iperf3 -c "$ADDR_A" -t 2 -l "$s" -J \
			>"$tmp/ip" 2>/dev/null || true
		bps=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9)' "$tmp/ip" 2>/dev/null)
		[ -n "$bps" ] && sample "tcp iperf3" "$s" bw Gbit/s "$bps"
	done
	echo "  round $r/$REPEAT"
done

/usr/bin/python3 "$root/bench/report.py" "$samples" "$out"
