#!/usr/bin/env bash
# make bench: on one veth pair between two network namespaces, in one run:
#   1. the raw AF_XDP limit (rxdp-xskraw: ping-pong, MTU-sized stream),
#   2. kernel TCP (sockperf ping-pong, iperf3 one stream),
#   3. rxdp through unmodified perftest (latency, bandwidth, message rate,
#      CPU seconds per GiB, rxdpd's included), rxdpd's CPU use when idle, and
#      the memory of a process holding many QPs,
#   4. a perf profile of the rxdp bandwidth run.
# The veth has jumbo frames (MTU 9000) so rxdp runs at a 4096-byte path MTU;
# RXDP_BENCH_MTU=1500 measures the standard MTU instead.
# Raw samples go to build/bench/samples.tsv; bench/report.py turns them into
# build/bench/results.{md,json} and PNG plots. RXDP_BENCH_REPEAT (default 3)
# runs of each figure; the report quotes medians and the spread.
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
MTU=${RXDP_BENCH_MTU:-9000}
bin=$root/build/bin
mkdir -p "$out"
samples=$out/samples.tsv
printf 'name\tsize\tmetric\tunit\tvalue\n' >"$samples"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
sample() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$samples"; }
half() { awk -v v="$1" 'BEGIN {print v / 2}'; }
# kv KEY FILE: the value of KEY=value in rxdp-xskraw's result line
kv() { grep -o "\<$1=[0-9.e+-]*" "$2" | tail -n 1 | cut -d= -f2; }
round() { echo "  $1 round $2/$REPEAT"; }

NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
echo "# veth pair $IF_A ($NS_A) -- $IF_B ($NS_B), MTU $MTU, $(nproc) CPUs"
# the path MTU rxdp will use, and the size of its largest packet
pmtu=1024
for m in 4096 2048 1024; do
	[ $((m + 80)) -le "$MTU" ] && { pmtu=$m; break; }
done
# Ethernet + IPv4 + UDP + BTH + RETH + payload + ICRC: an RDMA Write ONLY
# or FIRST packet, the largest rxdp sends
rxdp_frame=$((14 + 20 + 8 + 12 + 16 + pmtu + 4))
sample "config" 0 mtu B "$MTU"
sample "config" 0 path_mtu B "$pmtu"
sample "config" 0 rxdp_frame B "$rxdp_frame"

# --- 1. the raw AF_XDP limit, before rxdp takes the XDP hook -------------
echo "# raw AF_XDP (rxdp-xskraw: no transport logic at all)"
raw() { # raw NS IF ARGS...
	local ns=$1 ifc=$2
	shift 2
	ip netns exec "$ns" timeout 60 "$bin/rxdp-xskraw" --iface "$ifc" "$@"
}
raw_pair() { # raw_pair SERVER-ARGS -- CLIENT-ARGS: server in A, client in B
	local sargs=() cargs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	raw "$NS_A" "$IF_A" "${sargs[@]}" >"$tmp/raw.srv" 2>&1 &
	local srv=$!
	sleep 0.5 # the server's socket and program are up
	raw "$NS_B" "$IF_B" "${cargs[@]}" >"$tmp/raw.cli" 2>&1
	local rc=$?
	wait "$srv" || rc=1
	[ $rc = 0 ] || { echo "  rxdp-xskraw failed:" >&2; cat "$tmp/raw.srv" "$tmp/raw.cli" >&2; }
	return $rc
}
peer="--src-ip $ADDR_B --dst-ip $ADDR_A --dst-mac $MAC_A"
for r in $(seq "$REPEAT"); do
	if raw_pair --pingpong-server -- --pingpong-client --count 20000 --size 2 $peer; then
		sample "raw afxdp pingpong" 2 typical us "$(kv half_rtt_median_us "$tmp/raw.cli")"
		sample "raw afxdp pingpong" 2 p99 us "$(half "$(kv rtt_p99_us "$tmp/raw.cli")")"
	fi
	# frames the size of rxdp's largest, and of a 64-byte message
	for f in "$rxdp_frame" 64; do
		if raw_pair --stream-sink --seconds 3 -- \
			--stream-source --seconds 2 --size $((f - 42)) $peer; then
			sample "raw afxdp stream" "$f" bw Gbit/s "$(kv gbits "$tmp/raw.srv")"
			sample "raw afxdp stream" "$f" rate Mpps \
				"$(awk -v p="$(kv pps "$tmp/raw.srv")" 'BEGIN {print p / 1e6}')"
		fi
	done
	round raw "$r"
done

# --- 2. kernel TCP on the same veth ----------------------------------------
echo "# kernel TCP: sockperf ping-pong, iperf3 one stream"
ip netns exec "$NS_A" sockperf sr --tcp -i "$ADDR_A" -p 11111 >/dev/null 2>&1 &
on_exit "kill $! 2>/dev/null"
ip netns exec "$NS_A" iperf3 -s -B "$ADDR_A" >/dev/null 2>&1 &
on_exit "kill $! 2>/dev/null"
sleep 1
for r in $(seq "$REPEAT"); do
	for s in 14 64 1024 4096 65536; do # 14: sockperf's smallest message
		ip netns exec "$NS_B" timeout 30 sockperf pp --tcp -i "$ADDR_A" -p 11111 \
			-m "$s" -t 2 --full-rtt 2>/dev/null >"$tmp/sp" || true
		# --full-rtt: round trips; halved, the one-way figure perftest reports
		v=$(awk '/percentile 50.000 =/ {print $NF}' "$tmp/sp")
		[ -n "$v" ] && sample "tcp sockperf" "$s" typical us "$(half "$v")"
		v=$(awk '/percentile 99.000 =/ {print $NF}' "$tmp/sp")
		[ -n "$v" ] && sample "tcp sockperf" "$s" p99 us "$(half "$v")"
	done
	for s in 64 1024 4096 65536 1048576; do
		ip netns exec "$NS_B" timeout 30 iperf3 -c "$ADDR_A" -t 2 -l "$s" -J \
			>"$tmp/ip" 2>/dev/null || true
		/usr/bin/python3 - "$tmp/ip" "$s" >>"$samples" <<'EOF' || true
import json, sys
j = json.load(open(sys.argv[1]))["end"]
s, bps = sys.argv[2], j["sum_received"]["bits_per_second"]
secs, byts = j["sum_received"]["seconds"], j["sum_received"]["bytes"]
cpu = j["cpu_utilization_percent"]  # each end's user+system, % of one CPU
print("tcp iperf3\t%s\tbw\tGbit/s\t%g" % (s, bps / 1e9))
cpus = (cpu["host_total"] + cpu["remote_total"]) / 100 * secs
print("tcp iperf3\t%s\tcpu\ts/GiB\t%g" % (s, cpus / (byts / 2**30)))
EOF
	done
	round tcp "$r"
done

# --- 3. rxdp through unmodified perftest ------------------------------------
echo "# rxdp through unmodified perftest (path MTU $pmtu)"
rxdp_hosts "$tmp"

# CPU seconds (user + system) the rxdpd processes (the data path of both
# hosts) have used so far
daemon_cpu() {
	local p t=0 hz
	hz=$(getconf CLK_TCK)
	for p in $(pgrep -x rxdpd); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	awk -v t="$t" -v hz="$hz" 'BEGIN {print t / hz}'
}

# perftest TOOL ARGS...: server in A, client in B; the client's result
# lines on stdout; the CPU seconds (user + system) both used, and both
# rxdpd's (which run the transport), in $tmp/cpu
perftest() {
	local d0
	TIMEFORMAT='%U %S'
	d0=$(daemon_cpu)
	{ time verbs "$NS_A" "$@" -d "$devA" -x "$gid" -F >"$tmp/srv" 2>&1; } \
		2>"$tmp/srv.time" &
	local srv=$!
	for _ in $(seq 50); do
		ip netns exec "$NS_A" ss -ltn | grep -q ":18515 " && break
		sleep 0.1
	done
	{ time verbs "$NS_B" "$@" -d "$devB" -x "$gid" -F "$ADDR_A" >"$tmp/cli" 2>&1; } \
		2>"$tmp/cli.time"
	local rc=$?
	wait $srv || rc=1
	grep -q "^[0-9.]* [0-9.]*$" "$tmp/cli.time" || rc=1
	[ $rc = 0 ] || { echo "  $* failed" >&2; tail -n 5 "$tmp/cli" >&2; return 1; }
	{ cat "$tmp/srv.time" "$tmp/cli.time"; echo "$(daemon_cpu) -$d0"; } |
		awk '{c += $1 + $2} END {print c}' >"$tmp/cpu"
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {print}' "$tmp/cli"
}

for r in $(seq "$REPEAT"); do
	for t in ib_write_lat ib_send_lat ib_read_lat; do
		for s in 2 64 1024 4096 65536; do
			n=$((s >= 65536 ? 500 : 2000))
			perftest "$t" -s "$s" -n "$n" |
				while read -r size _ _ _ typ _ _ p99 _; do
					sample "rxdp $t" "$size" typical us "$typ"
					sample "rxdp $t" "$size" p99 us "$p99"
				done
		done
	done
	perftest ib_atomic_lat -n 2000 |
		while read -r size _ _ _ typ _ _ p99 _; do
			sample "rxdp ib_atomic_lat" "$size" typical us "$typ"
			sample "rxdp ib_atomic_lat" "$size" p99 us "$p99"
		done
	round latency "$r"
done

for r in $(seq "$REPEAT"); do
	for t in ib_write_bw ib_send_bw ib_read_bw; do
		for s in 2 64 1024 4096 65536 1048576; do
			# about 0.3 GiB a run for the large sizes: CPU s/GiB
			n=$((s >= 4096 ? 300 * 1048576 / s : 20000))
			perftest "$t" -s "$s" -n "$n" --report_gbits >"$tmp/res" || continue
			read -r size _ _ avg rate <"$tmp/res"
			sample "rxdp $t" "$size" bw Gbit/s "$avg"
			sample "rxdp $t" "$size" rate Mpps "$rate"
			[ "$s" -ge 4096 ] && sample "rxdp $t" "$size" cpu s/GiB \
				"$(awk -v c="$(cat "$tmp/cpu")" -v b=$((s * n)) \
					'BEGIN {print c / (b / 1073741824)}')"
		done
	done
	# message rate: 64-byte writes, several QPs' worth of work in flight
	perftest ib_write_bw -s 64 -n 200000 -t 256 >"$tmp/res" &&
		read -r size _ _ _ rate <"$tmp/res" &&
		sample "rxdp msgrate ib_write_bw" 64 rate Mpps "$rate"
	round bandwidth "$r"
done

# a host with rxdpd and no traffic: the data-path threads block
d0=$(daemon_cpu)
sleep 5
sample "rxdpd idle" 0 cpu % "$(awk -v a="$d0" -v b="$(daemon_cpu)" 'BEGIN {print (b - a) / 5 * 100}')"

# resident memory of one process holding 1, 64 and 1024 RC QPs
if [ -x "$bin/rxdp-qp-rss" ]; then
	verbs "$NS_A" "$bin/rxdp-qp-rss" -d "$devA" 1 64 1024 >"$tmp/rss" 2>&1 ||
		{ echo "  rxdp-qp-rss failed" >&2; cat "$tmp/rss" >&2; }
	grep -o "qps=[0-9]* rss_kb=[0-9]*" "$tmp/rss" | tr '=' ' ' |
		while read -r _ q _ kb; do
			sample "rxdp qp memory" "$q" rss MiB "$(awk -v k="$kb" 'BEGIN {print k / 1024}')"
		done
fi

# --- 4. where the time goes: a profile of the 64 KiB write bandwidth run ----
if command -v perf >/dev/null; then
	echo "# perf profile of ib_write_bw 64 KiB (both ends, whole system)"
	# a run of several seconds; the profile skips its set-up
	(sleep 2 && perf record -a -g -o "$tmp/perf.data" -- sleep 2 >/dev/null 2>&1) &
	prec=$!
	perftest ib_write_bw -s 65536 -n 100000 --report_gbits >/dev/null || true
	wait $prec
	perf report -i "$tmp/perf.data" --stdio --no-children -g none \
		--sort comm,dso,sym --percent-limit 0.5 2>/dev/null |
		grep -v '^$' | head -n 70 >"$out/profile.txt"
	echo "  top of the profile in $out/profile.txt"
fi

/usr/bin/python3 "$root/bench/report.py" "$samples" "$out"
