#!/usr/bin/env bash
# make bench: rxdp against each peer at its best, in one run:
#   1. per MTU (9000 and 1500), on a veth pair between two namespaces:
#      the raw AF_XDP limit (rxdp-xskraw: ping-pong, MTU-sized stream),
#      kernel TCP (sockperf ping-pong with blocking sockets and with
#      spinning ones, --nonblocked, on both ends; iperf3 one stream), and
#      rxdp through unmodified perftest (latency with its tail, bandwidth,
#      message rate; CPU seconds per GiB, rxdpd's included);
#   2. goodput under loss (0, 0.1%, 1%) through a forwarding hop that drops
#      frames at random (rxdp-lossyhop: an XDP redirect between two veths),
#      MTU 1500: rxdp ib_write_bw 64 KiB (selective retransmission, and
#      rxdpd --go-back-n in the same round) and TCP iperf3;
#   3. at the first MTU: rxdpd's CPU use with no traffic, the memory of a
#      process holding many QPs, a perf profile of the 64 KiB write run;
#   4. pairs at once: 1, 2, 4 and 8 ib_write_bw pairs (64 KiB, one QP
#      each) over a veth with 4 queues, MTU 9000, rxdpd --engines auto
#      (an engine per queue up to the CPUs), summed, each pair checked to
#      have finished, beside iperf3 -P on the same veth;
#   5. on a machine with 8 CPUs or more: latency and bandwidth again with
#      rxdpd --poll, each data-path thread on a CPU of its own and perftest
#      on the others;
#   6. incast: many hosts into one switch port (a bridge in a namespace, a
#      TBF at 1 Gbit/s with a shallow or a deep buffer on the port toward
#      the receiver, ECN marking off or on), rxdp ib_send_bw -e beside TCP
#      iperf3 (cubic; with ECN where the port marks), MTU 1500 (see
#      bench_incast for its knobs);
#   7. sharing: one user's 64 B ping-pong alone and beside another user's
#      CPU hog or RDMA Write stream (across the wire or looped back on the
#      same device, 4 KiB and 64 KiB), and the stream's bandwidth alone and
#      beside it (issue 45's figures);
#   8. takeover: rxdpd --takeover under a checked stream of small Sends
#      (the longest stall: the blackout an application sees), 64 KiB
#      Writes' goodput with a takeover and without, and what a restart
#      costs instead (SIGTERM to a new connection's first completion).
# bench/cpuwatch.py watches the whole run: whether other processes used
# the CPUs meanwhile (a shared machine makes every figure noisy).
# Raw samples go to build/bench/samples.tsv (RXDP_BENCH_OUT: another folder);
# bench/report.py turns them into results.{md,json} and PNG plots there. RXDP_BENCH_REPEAT (default
# 3) runs of each figure; the report quotes medians and the spread.
# RXDP_BENCH_MTUS (default "9000 1500") and RXDP_BENCH_SECTIONS (default
# "raw tcp rxdp loss extras pairs nofifo poll incast share takeover") choose what runs; RXDP_BENCH_MIB (default
# 1024) how much each bandwidth run moves; RXDP_BENCH_ENGINES (default auto)
# rxdpd's --engines in the pairs section.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"
skip() { # a benchmark that cannot run is a failure, not a skip
	echo "make bench: $*" >&2
	exit 1
}
require_root
require_cmd sockperf iperf3 ib_write_lat ethtool

out=${RXDP_BENCH_OUT:-$root/build/bench} # tests/bench/incast.sh: a folder of its own
REPEAT=${RXDP_BENCH_REPEAT:-3}
MTUS=${RXDP_BENCH_MTUS:-9000 1500}
SECTIONS=" ${RXDP_BENCH_SECTIONS:-raw tcp rxdp loss extras pairs nofifo poll incast share takeover} "
LOSSES="0 0.1 1"
MIB=${RXDP_BENCH_MIB:-1024} # moved by each bandwidth run
ENGINES=${RXDP_BENCH_ENGINES:-auto} # rxdpd --engines of the pairs section
bin=$root/build/bin
mkdir -p "$out"
samples=$out/samples.tsv
printf 'name\tmtu\tsize\tmetric\tunit\tvalue\n' >"$samples"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
MTU=0 # of the section running
sample() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$MTU" "$2" "$3" "$4" "$5" >>"$samples"; }
half() { awk -v v="$1" 'BEGIN {print v / 2}'; }
# kv KEY FILE: the value of KEY=value in a tool's result line
kv() { grep -o "\<$1=[0-9.e+-]*" "$2" | tail -n 1 | cut -d= -f2; }
# per_gib CPU-SECONDS BYTES
per_gib() { awk -v c="$1" -v b="$2" 'BEGIN {if (b > 0) print c / (b / 1073741824)}'; }
round() { echo "  $1 round $2/$REPEAT"; }
has() { [[ "$SECTIONS" == *" $1 "* ]]; }
# section CMD...: CMD in a subshell whose namespaces, daemons and
# background tools are all gone when it returns
section() {
	(
		_rxdp_cleanups=()
		trap _rxdp_run_cleanups EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		"$@"
	)
}
TIMEFORMAT='%U %S'

"$root/bench/cpuwatch.py" $$ "$out/cpuwatch.json" &
watch=$!
on_exit "kill $watch 2>/dev/null"
MTU=0 sample config 0 cpus n "$(nproc)"
MTU=0 sample config 0 repeat n "$REPEAT"

# the path MTU rxdp uses on an interface MTU, and its largest frame: an
# RDMA Write ONLY or FIRST (Ethernet + IPv4 + UDP + BTH + RETH + payload +
# ICRC)
path_mtu() {
	local m
	for m in 4096 2048 1024; do
		[ $((m + 80)) -le "$1" ] && { echo $m; return; }
	done
	echo 1024
}
frame_of() { echo $((14 + 20 + 8 + 12 + 16 + $1 + 4)); }

# --- 1. the raw AF_XDP limit, before rxdp takes the XDP hook -------------
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
	{ time raw "$NS_A" "$IF_A" "${sargs[@]}" >"$tmp/raw.srv" 2>&1; } 2>"$tmp/raw.srv.time" &
	local srv=$!
	wait_until 5 grep -q "rxdp-xskraw: ready" "$tmp/raw.srv" # its socket takes frames
	{ time raw "$NS_B" "$IF_B" "${cargs[@]}" >"$tmp/raw.cli" 2>&1; } 2>"$tmp/raw.cli.time"
	local rc=$?
	wait "$srv" || rc=1
	[ $rc = 0 ] || { echo "  rxdp-xskraw failed:" >&2; cat "$tmp/raw.srv" "$tmp/raw.cli" >&2; }
	cat "$tmp/raw.srv.time" "$tmp/raw.cli.time" | awk '{c += $1 + $2} END {print c}' >"$tmp/cpu"
	return $rc
}
raw_stream_samples() { # NAME FRAME: the last raw_pair stream's figures
	sample "$1" "$2" bw Gbit/s "$(kv gbits "$tmp/raw.srv")"
	sample "$1" "$2" rate Mpps \
		"$(awk -v p="$(kv pps "$tmp/raw.srv")" 'BEGIN {print p / 1e6}')"
	sample "$1" "$2" cpu s/GiB \
		"$(per_gib "$(cat "$tmp/cpu")" "$(kv bytes "$tmp/raw.srv")")"
}
bench_raw() {
	local peer=(--src-ip "$ADDR_B" --dst-ip "$ADDR_A" --dst-mac "$MAC_A") r f
	echo "# raw AF_XDP (rxdp-xskraw: no transport logic at all), MTU $MTU"
	for r in $(seq "$REPEAT"); do
		if raw_pair --pingpong-server -- --pingpong-client --count 20000 --size 2 "${peer[@]}"; then
			sample "raw afxdp pingpong" 2 typical us "$(kv half_rtt_median_us "$tmp/raw.cli")"
			sample "raw afxdp pingpong" 2 p99 us "$(half "$(kv rtt_p99_us "$tmp/raw.cli")")"
			sample "raw afxdp pingpong" 2 p999 us "$(half "$(kv rtt_p999_us "$tmp/raw.cli")")"
		fi
		# frames the size of rxdp's largest, and of a 64-byte message
		for f in "$(frame_of "$(path_mtu "$MTU")")" 64; do
			if raw_pair --stream-sink --seconds 3 -- \
				--stream-source --seconds 2 --size $((f - 42)) "${peer[@]}"; then
				raw_stream_samples "raw afxdp stream" "$f"
			fi
		done
		# the same stream to a sink that copies each payload out, as a
		# receiver delivering the data must (rxdp copies into the MR):
		# not a verdict's peer, the limit for a receiver that reads
		f=$(frame_of "$(path_mtu "$MTU")")
		if raw_pair --stream-sink --copy --seconds 3 -- \
			--stream-source --seconds 2 --size $((f - 42)) "${peer[@]}"; then
			raw_stream_samples "raw afxdp stream copied" "$f"
		fi
		# and with the least a transport does to its data at both ends:
		# the source copies each payload in and computes a CRC-32 over
		# the frame (the ICRC's work), the sink checks it and copies the
		# payload out; not a verdict's peer either
		if raw_pair --stream-sink --copy --crc --seconds 3 -- \
			--stream-source --copy --crc --seconds 2 \
			--size $((f - 42)) "${peer[@]}"; then
			raw_stream_samples "raw afxdp stream crc" "$f"
			grep -q " bad_crc=0$" "$tmp/raw.srv" ||
				echo "  the raw stream's CRCs: $(cat "$tmp/raw.srv")" >&2
		fi
		round raw "$r"
	done
}

# --- 2. kernel TCP on the same veth ----------------------------------------
# iperf3 -c ARGS: one stream; Gbit/s and CPU s/GiB (both ends) as samples
# named NAME, size SIZE
iperf() {
	local name=$1 size=$2
	shift 2
	ip netns exec "$NS_B" timeout 30 iperf3 -c "$ADDR_A" -J "$@" \
		>"$tmp/ip" 2>/dev/null || true
	/usr/bin/python3 - "$tmp/ip" "$name" "$MTU" "$size" >>"$samples" <<'EOF' || true
import json, sys
j = json.load(open(sys.argv[1]))["end"]
name, mtu, s = sys.argv[2:5]
bps = j["sum_received"]["bits_per_second"]
secs, byts = j["sum_received"]["seconds"], j["sum_received"]["bytes"]
cpu = j["cpu_utilization_percent"]  # each end's user+system, % of one CPU
print("%s\t%s\t%s\tbw\tGbit/s\t%g" % (name, mtu, s, bps / 1e9))
cpus = (cpu["host_total"] + cpu["remote_total"]) / 100 * secs
print("%s\t%s\t%s\tcpu\ts/GiB\t%g" % (name, mtu, s, cpus / (byts / 2**30)))
EOF
}
bench_tcp() {
	local r s mode v pct opt port srv
	echo "# kernel TCP: sockperf ping-pong (blocking and spinning sockets), iperf3, MTU $MTU"
	ip netns exec "$NS_A" iperf3 -s -B "$ADDR_A" >/dev/null 2>&1 &
	on_exit "kill $! 2>/dev/null"
	for r in $(seq "$REPEAT"); do
		for mode in blocking spinning; do
			# spinning: --nonblocked sockets on both ends, each polling
			# its socket (the server only while it runs: it takes a CPU)
			opt='' port=11111
			[ $mode = spinning ] && opt=--nonblocked port=11112
			# shellcheck disable=SC2086
			ip netns exec "$NS_A" sockperf sr --tcp $opt -i "$ADDR_A" \
				-p $port >/dev/null 2>&1 &
			srv=$!
			sleep 0.5
			for s in 14 4096 65000; do # sockperf's smallest and largest
				# shellcheck disable=SC2086
				ip netns exec "$NS_B" timeout 30 sockperf pp --tcp $opt \
					-i "$ADDR_A" -p $port -m "$s" -t 1 --full-rtt \
					2>/dev/null >"$tmp/sp" || true
				# --full-rtt: round trips; halved, the one-way figure
				# perftest reports
				for pct in "50.000 typical" "99.000 p99" "99.900 p999"; do
					# shellcheck disable=SC2086
					set -- $pct
					v=$(awk -v p="$1" '$0 ~ "percentile " p " =" {print $NF}' "$tmp/sp")
					[ -n "$v" ] && sample "tcp sockperf $mode" "$s" "$2" us "$(half "$v")"
				done
			done
			kill $srv
			wait $srv 2>/dev/null
		done
		for s in 4096 65536 1048576; do
			iperf "tcp iperf3" "$s" -t 2 -l "$s"
		done
		round tcp "$r"
	done
}

# --- 3. rxdp through unmodified perftest ------------------------------------
# CPU seconds (user + system) the rxdpd processes of both hosts (the data
# path) have used so far; only ours: other users of the machine may run
# rxdpd in namespaces of their own
daemon_cpu() {
	local p t=0 hz ns mine
	hz=$(getconf CLK_TCK)
	mine=" $(netns_inode "$NS_A") $(netns_inode "$NS_B") "
	for p in $(pgrep -x rxdpd); do
		ns=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) || continue
		[[ "$mine" == *" $ns "* ]] || continue
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	awk -v t="$t" -v hz="$hz" 'BEGIN {print t / hz}'
}

# The system calls both rxdpds made to move payload to or from a client's
# memory (memory the client did not share with rxdpd: the batched path)
payload_syscalls() {
	echo $(($(rxdp_counter "$NS_A" payload_syscalls) + \
		$(rxdp_counter "$NS_B" payload_syscalls)))
}

# perftest TOOL ARGS...: server in A, client in B; the client's result
# lines on stdout; the CPU seconds (user + system) both used, and both
# rxdpd's (which run the transport), in $tmp/cpu; the payload system calls
# in $tmp/sys
perftest() {
	local d0 s0
	d0=$(daemon_cpu)
	s0=$(payload_syscalls)
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
	echo $(($(payload_syscalls) - s0)) >"$tmp/sys"
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {print}' "$tmp/cli"
}

# a bandwidth line: Gbit/s, Mpps and CPU s/GiB of perftest's result in
# $tmp/res (BYTES: what moved)
bw_sample() {
	local name=$1 bytes=$2 size avg rate
	read -r size _ _ avg rate <"$tmp/res"
	sample "$name" "$size" bw Gbit/s "$avg"
	sample "$name" "$size" rate Mpps "$rate"
	sample "$name" "$size" cpu s/GiB "$(per_gib "$(cat "$tmp/cpu")" "$bytes")"
	sample "$name" "$size" syscalls per_msg \
		"$(awk -v c="$(cat "$tmp/sys")" -v n=$((bytes / size)) \
			'BEGIN {if (n > 0) print c / n}')"
}

# lat_samples NAME [mean]: perftest's latency lines on stdin as samples
# NAME (median, p99, p99.9; and the mean where asked)
lat_samples() {
	local size typ avg p99 p999
	while read -r size _ _ _ typ avg _ p99 p999 _; do
		sample "$1" "$size" typical us "$typ"
		[ "${2:-}" = mean ] && sample "$1" "$size" mean us "$avg"
		sample "$1" "$size" p99 us "$p99"
		sample "$1" "$size" p999 us "$p999"
	done
}

# the data path host A's rxdpd made (queues, engines, mode, TX threads),
# after rxdp_hosts: which of rxdpd's automatic choices a run measured
say_datapath() {
	echo "# rxdpd: $(grep -o 'data path up: .*' "$tmp/rxdpd-A.log" | tail -n 1)"
}

bench_rxdp() {
	local r t s n
	echo "# rxdp through unmodified perftest, MTU $MTU (path MTU $(path_mtu "$MTU"))"
	rxdp_hosts "$tmp"
	say_datapath
	for r in $(seq "$REPEAT"); do
		for t in ib_write_lat ib_send_lat ib_read_lat; do
			for s in 2 4096 65536; do
				n=$((s >= 65536 ? 500 : 2000))
				perftest "$t" -s "$s" -n "$n" | lat_samples "rxdp $t"
			done
		done
		perftest ib_atomic_lat -n 2000 | lat_samples "rxdp ib_atomic_lat"
		round latency "$r"
	done
	for r in $(seq "$REPEAT"); do
		for t in ib_write_bw ib_send_bw ib_read_bw; do
			for s in 4096 65536 1048576; do
				# about MIB a run: enough that a run's start
				# (processes, handshake, QPs) is not in its CPU
				# per GiB
				n=$((MIB * 1048576 / s))
				perftest "$t" -s "$s" -n "$n" --report_gbits >"$tmp/res" &&
					bw_sample "rxdp $t" $((s * n))
			done
		done
		# the batched path: memory the library does not share with rxdpd
		s=65536 n=$((MIB * 1048576 / 65536))
		RXDP_SHARE_MEM=0 perftest ib_write_bw -s $s -n $n --report_gbits \
			>"$tmp/res" && bw_sample "rxdp batched ib_write_bw" $((s * n))
		# message rate: 64-byte writes, several QPs' worth of work in flight
		perftest ib_write_bw -s 64 -n 200000 -t 256 >"$tmp/res" &&
			read -r size _ _ _ rate <"$tmp/res" &&
			sample "rxdp msgrate ib_write_bw" 64 rate Mpps "$rate"
		round bandwidth "$r"
	done
	has extras && [ "$MTU" = "${MTUS%% *}" ] && bench_extras
}

bench_extras() {
	local d0
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
	# where the time goes: a profile of the 64 KiB write bandwidth run
	if command -v perf >/dev/null; then
		echo "# perf profile of ib_write_bw 64 KiB (both ends, whole system)"
		# a run of several seconds; the profile skips its set-up
		(sleep 2 && perf record -a -g -o "$tmp/perf.data" -- sleep 2 >/dev/null 2>&1) &
		local prec=$!
		perftest ib_write_bw -s 65536 -n 100000 --report_gbits >/dev/null || true
		wait $prec
		perf report -i "$tmp/perf.data" --stdio --no-children -g none \
			--sort comm,dso,sym --percent-limit 0.5 2>/dev/null |
			grep -v '^$' | head -n 70 >"$out/profile.txt"
		echo "  top of the profile in $out/profile.txt"
	fi
}

bench_mtu() {
	NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	echo "# veth pair $IF_A ($NS_A) -- $IF_B ($NS_B), MTU $MTU, $(nproc) CPUs"
	sample config 0 path_mtu B "$(path_mtu "$MTU")"
	sample config 0 rxdp_frame B "$(frame_of "$(path_mtu "$MTU")")"
	has raw && bench_raw
	has tcp && bench_tcp
	has rxdp && bench_rxdp
	true
}

# --- 4. goodput under loss, through a hop that drops at random --------------
#   host A [IF_A] ---- [PA] rxdp-lossyhop in R [PB] ---- [IF_B] host B
bench_loss() {
	local loss r mode hop=
	echo "# goodput under loss through a forwarding hop, MTU $MTU"
	NETNS_MTU=$MTU netns_hop
	# the hosts' XDP programs (rxdp's) let the veths take redirected frames
	rxdp_hosts "$tmp"
	ip netns exec "$NS_A" iperf3 -s -B "$ADDR_A" >/dev/null 2>&1 &
	on_exit "kill $! 2>/dev/null"
	on_exit '[ -n "${hop:-}" ] && kill $hop'
	for r in $(seq "$REPEAT"); do
		# rxdp as it is (selective retransmission between its hosts),
		# then going back as with any other peer, in every round
		for mode in selective go-back-N; do
			if [ "$mode" = go-back-N ]; then
				RXDPD_ARGS="--go-back-n $IF_A" rxdp_restart "$NS_A" "$devA" "$tmp/rxdpd-A.log"
				RXDPD_ARGS="--go-back-n $IF_B" rxdp_restart "$NS_B" "$devB" "$tmp/rxdpd-B.log"
			elif [ "$r" -gt 1 ]; then
				rxdp_restart "$NS_A" "$devA" "$tmp/rxdpd-A.log"
				rxdp_restart "$NS_B" "$devB" "$tmp/rxdpd-B.log"
			fi
			for loss in $LOSSES; do
				loss_run "$mode" "$loss"
			done
		done
		round loss "$r"
	done
}

# loss_run MODE LOSS: one rate of loss on the hop, rxdp's 64 KiB writes
# (and with MODE selective, TCP's) through it
loss_run() {
	local name="loss rxdp ib_write_bw 64K" ppm avg
	[ "$1" = selective ] || name="loss rxdp go-back-N ib_write_bw 64K"
	# samples of size: the loss in parts per million
	ppm=$(awk -v l="$2" 'BEGIN {print l * 10000}')
	ip netns exec "$NS_R" "$bin/rxdp-lossyhop" --loss "$2" "$PA" "$PB" \
		>"$tmp/hop" 2>&1 &
	hop=$!
	wait_until 5 grep -q ready "$tmp/hop" || { cat "$tmp/hop"; fail "rxdp-lossyhop"; }
	# 64 KiB writes for 4 s; what moved: the average times 4 s
	if perftest ib_write_bw -s 65536 -D 4 --report_gbits >"$tmp/res"; then
		read -r _ _ _ avg _ <"$tmp/res"
		sample "$name" "$ppm" bw Gbit/s "$avg"
		sample "$name" "$ppm" cpu s/GiB \
			"$(per_gib "$(cat "$tmp/cpu")" \
				"$(awk -v g="$avg" 'BEGIN {print g * 1e9 / 8 * 4}')")"
	fi
	[ "$1" = selective ] && iperf "loss tcp iperf3 64K" "$ppm" -t 4 -l 65536
	kill $hop
	wait $hop
	hop=
	echo "  $1, loss $2%: $(tail -n 1 "$tmp/hop")"
}

# --- 5. pairs at once, over a veth with 4 queues -------------------------
bench_pairs() {
	local r k i pids rcs fin
	MTU=9000
	echo "# pairs at once over a veth with 4 queues, MTU $MTU: ib_write_bw -D 3 (rxdpd --engines $ENGINES) and iperf3 -P"
	NETNS_QUEUES=4 NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	ip netns exec "$NS_A" iperf3 -s -B "$ADDR_A" >/dev/null 2>&1 &
	on_exit "kill $! 2>/dev/null"
	RXDPD_ARGS="--engines $ENGINES" rxdp_hosts "$tmp"
	say_datapath
	for r in $(seq "$REPEAT"); do
		for k in 1 2 4 8; do
			iperf "pairs tcp iperf3" "$k" -t 3 -l 65536 -P "$k"
			pids=()
			for i in $(seq "$k"); do
				verbs "$NS_A" ib_write_bw -d "$devA" -x "$gid" -F -s 65536 -D 3 \
					-p $((18600 + i)) --report_gbits >"$tmp/ps$i" 2>&1 &
				pids+=($!)
			done
			for i in $(seq "$k"); do
				wait_until 10 sh -c "ip netns exec $NS_A ss -ltn | grep -q ':$((18600 + i)) '"
			done
			for i in $(seq "$k"); do
				verbs "$NS_B" ib_write_bw -d "$devB" -x "$gid" -F -s 65536 -D 3 \
					-p $((18600 + i)) --report_gbits "$ADDR_A" >"$tmp/pc$i" 2>&1 &
				pids+=($!)
			done
			rcs=()
			for i in "${!pids[@]}"; do wait "${pids[$i]}"; rcs+=($?); done
			# a pair finished: both ends exited 0, the client reported
			fin=0
			for i in $(seq "$k"); do
				if [ "${rcs[$((i - 1))]}" = 0 ] && [ "${rcs[$((k + i - 1))]}" = 0 ] &&
					grep -q '^ *65536 ' "$tmp/pc$i"; then
					fin=$((fin + 1))
				else
					echo "  $k pairs: pair $i failed: $(tail -n 1 "$tmp/pc$i")" >&2
				fi
			done
			sample "pairs rxdp ib_write_bw" "$k" finished pairs "$fin"
			awk '/^ *65536 /{s += $4} END {print s + 0}' "$tmp"/pc* >"$tmp/sum"
			sample "pairs rxdp ib_write_bw" "$k" bw Gbit/s "$(cat "$tmp/sum")"
			rm -f "$tmp"/ps* "$tmp"/pc*
		done
		round pairs "$r"
	done
}

# --- 6. rxdpd without SCHED_FIFO (--fifo 0), as where it lacks CAP_SYS_NICE:
# its data-path threads share their CPUs with the spinning applications
# under the kernel's fair scheduler; the mean shows the stalls -----------
bench_nofifo() {
	local r t
	MTU=9000
	echo "# rxdpd --fifo 0 (no SCHED_FIFO), MTU $MTU"
	NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	RXDPD_ARGS="--fifo 0" rxdp_hosts "$tmp"
	for r in $(seq "$REPEAT"); do
		for t in ib_write_lat ib_send_lat ib_read_lat; do
			perftest "$t" -s 2 -n 5000 |
				lat_samples "rxdp nofifo $t" mean
		done
		round nofifo "$r"
	done
}

# --- 7. rxdpd --poll on CPUs of its own ----------------------------------
bench_poll() {
	local n r t last
	n=$(nproc)
	MTU=9000
	if [ "$n" -lt 8 ]; then
		echo "# rxdpd --poll: skipped, $n CPUs (8 at least: one per data-path thread, the rest for perftest)"
		return 0
	fi
	echo "# rxdpd --poll on CPUs 0 and 1, perftest on CPUs 2-$((n - 1)), MTU $MTU"
	NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	RXDPD_ARGS="--poll --cpus 0" rxdp_host "$NS_A" "$IF_A" "$tmp/rxdpd-A.log"
	RXDPD_ARGS="--poll --cpus 1" rxdp_host "$NS_B" "$IF_B" "$tmp/rxdpd-B.log"
	devA=rxdp_$IF_A devB=rxdp_$IF_B
	rxdp_wait_port "$NS_A" "$devA"
	rxdp_wait_port "$NS_B" "$devB"
	gid=$(rxdp_ipv4_gid "$NS_A" "$devA")
	last=$((n - 1))
	for r in $(seq "$REPEAT"); do
		for t in ib_write_lat ib_send_lat ib_read_lat; do
			perftest taskset -c "2-$last" "$t" -s 2 -n 5000 |
				lat_samples "rxdp poll $t"
		done
		perftest taskset -c "2-$last" ib_write_bw -s 65536 \
			-n $((MIB * 16)) --report_gbits >"$tmp/res" &&
			bw_sample "rxdp poll ib_write_bw" $((65536 * MIB * 16))
		perftest taskset -c "2-$last" ib_write_bw -s 64 -n 200000 -t 256 >"$tmp/res" &&
			read -r size _ _ _ rate <"$tmp/res" &&
			sample "rxdp poll msgrate ib_write_bw" 64 rate Mpps "$rate"
		round poll "$r"
	done
}

# --- 8. incast: many hosts into one switch port ---------------------------
#   hosts 2..K+1 (senders) ----+
#   host K+2 (ping-pong) ------+-- bridge in NS_R --[ecnmark, TBF]-- host 1
# The receiver's port is the bottleneck: a TBF at RATE with a bounded
# buffer (tail drop), and where marking is on rxdp-ecnmark before it (no
# mark below K_min bytes queued, probability rising to P_max at K_max, every
# ECT packet above; packets that are not ECT are never touched). A flow is
# a host: one ib_send_bw -e with Q QPs (64 KiB messages) or one iperf3 -P Q
# (TCP cubic; with ECN, tcp_ecn=1 at both ends, where the port marks; cubic
# is not ECT, so marking would not touch it). Each run moves what the port
# carries in SECS seconds, evenly split over its flows. Knobs:
#   RXDP_BENCH_INCAST          hosts x QPs of the runs ("4x1 16x4"; 16
#                              runs of 4 s take about 5 minutes here)
#   RXDP_BENCH_INCAST_BUFFERS  the port's buffer, bytes ("65536 1048576")
#   RXDP_BENCH_INCAST_MARKING  "off on"
#   RXDP_BENCH_INCAST_WITH     "rxdp tcp"
#   RXDP_BENCH_INCAST_SECS     4
#   RXDP_BENCH_INCAST_RATE     the port's rate, Mbit/s (1000)
#   RXDP_BENCH_INCAST_TCLASS   rxdp's --tclass (0: today's packets, not
#                              ECT, never marked; 2: ECT(0))
#   RXDP_BENCH_INCAST_KMIN, _KMAX, _PMAX  the marking (20000 B; 200000 B,
#                              at most 3/4 of the buffer; 0.1)
INCAST=${RXDP_BENCH_INCAST:-4x1 16x4}
INCAST_BUFFERS=${RXDP_BENCH_INCAST_BUFFERS:-65536 1048576}
INCAST_MARKING=${RXDP_BENCH_INCAST_MARKING:-off on}
INCAST_WITH=${RXDP_BENCH_INCAST_WITH:-rxdp tcp}
INCAST_SECS=${RXDP_BENCH_INCAST_SECS:-4}
INCAST_RATE=${RXDP_BENCH_INCAST_RATE:-1000}
INCAST_TCLASS=${RXDP_BENCH_INCAST_TCLASS:-0}
INCAST_KMIN=${RXDP_BENCH_INCAST_KMIN:-20000}
INCAST_KMAX=${RXDP_BENCH_INCAST_KMAX:-200000}
INCAST_PMAX=${RXDP_BENCH_INCAST_PMAX:-0.1}
INCAST_ECHO=9400 # the ping-pong's UDP port on the receiver (udpecho.bpf.c's)
# a flow still running after this many seconds (a sixth of its fair share
# and the set-up) is ended and counted as not finished
INCAST_LIMIT=$((INCAST_SECS * 6 + 20))

incast_kmax() { # the marking's K_max for a buffer of $1 bytes
	local m=$(($1 * 3 / 4))
	echo $((INCAST_KMAX < m ? INCAST_KMAX : m))
}

# incast_tbf: the receiver's port's qdisc counters, "SENT_BYTES SENT_PKTS
# DROPPED"
incast_tbf() {
	tc -s -n "$NS_R" qdisc show dev "${SW_PORT[1]}" |
		awk '/^qdisc tbf/ {t = 1} t && /Sent/ {print $2, $4, $7 + 0; exit}'
}
incast_busy() { # the port has carried a megabyte: the flows are under way
	local b
	read -r b _ <<<"$(incast_tbf)"
	[ "${b:-0}" -gt 1000000 ]
}

# incast_port_up BUF MARK: a fresh TBF (its counters from zero) and, where
# MARK is on, rxdp-ecnmark in front of it
incast_port_up() {
	local port=${SW_PORT[1]}
	tc -n "$NS_R" qdisc del dev "$port" root 2>/dev/null
	tc -n "$NS_R" qdisc add dev "$port" root tbf rate "${INCAST_RATE}mbit" \
		burst 16kb limit "$1" || fail "cannot add a TBF to the receiver's port"
	[ "$2" = on ] || return 0
	ip netns exec "$NS_R" "$bin/rxdp-ecnmark" --rate "$INCAST_RATE" \
		--kmin "$INCAST_KMIN" --kmax "$(incast_kmax "$1")" \
		--pmax "$INCAST_PMAX" --limit "$1" "$port" >"$tmp/mark" 2>&1 &
	imark=$!
	wait_until 10 grep -qs ready "$tmp/mark" ||
		{ cat "$tmp/mark" >&2; fail "rxdp-ecnmark did not start"; }
}
# incast_port_down: the marker's counters to $tmp/mark, the TBF's to
# $tmp/tbf, and the TBF gone
incast_port_down() {
	: >"$tmp/mark.end"
	if [ -n "$imark" ]; then
		kill "$imark"
		wait "$imark" || echo "  rxdp-ecnmark failed: $(cat "$tmp/mark")" >&2
		imark=
		grep '^ecnmark packets=' "$tmp/mark" >"$tmp/mark.end"
	fi
	incast_tbf >"$tmp/tbf"
	tc -n "$NS_R" qdisc del dev "${SW_PORT[1]}" root
}

# incast_counter "NAME..." NS...: rxdp's transport counters NAME... (one
# read of each namespace), each summed over the namespaces' devices, in
# that order on one line
incast_counter() {
	local c=$1 ns
	shift
	for ns in "$@"; do
		ip netns exec "$ns" "$bin/rxdp-ctl" --json counters
	done 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s, d, i = sys.stdin.read(), json.JSONDecoder(), 0
names = sys.argv[1].split()
n = [0] * len(names)
while True:
    while i < len(s) and s[i].isspace():
        i += 1
    if i >= len(s):
        break
    j, i = d.raw_decode(s, i)
    c = j["devices"][0]["counters"]
    n = [a + c[k] for a, k in zip(n, names)]
print(*n)' "$c"
}

# incast_ping: a UDP ping-pong every 10 ms from the last host through the
# receiver's port (so through the queue) to its echo in the receiver's
# kernel, started ahead and idle (a loaded machine can take seconds to
# start python) from SIGUSR1 until SIGTERM, then how many it sent, how many
# came back, and their round trips' median and p99 to $tmp/ping; pid in
# $iping. A round trip ends when the kernel took the answer in
# (SO_TIMESTAMPNS), not when python got the CPU to read it.
incast_ping() {
	ip netns exec "${SW_NS[$ihost_ping]}" /usr/bin/python3 - "${SW_ADDR[1]}" \
		"$INCAST_ECHO" >"$tmp/ping" 2>&1 <<'EOF' &
import select, signal, socket, struct, sys, time
TS = getattr(socket, "SO_TIMESTAMPNS", 35)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, TS, 1)
s.connect((sys.argv[1], int(sys.argv[2])))
go, stop, gap = [], [], 0.01
signal.signal(signal.SIGUSR1, lambda *_: go.append(1))
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print("ready", flush=True)
while not go and not stop:
    time.sleep(0.01)
sent, rtts, seq, nxt = {}, [], 0, time.monotonic()
while not stop:
    now = time.monotonic()
    if now >= nxt:
        sent[seq] = time.time()  # the kernel's timestamps are wall time
        try:
            s.send(struct.pack("!Q", seq) + bytes(56))
        except OSError:
            pass
        seq += 1
        nxt = max(nxt + gap, now)  # behind on a loaded machine: no burst
        continue
    if select.select([s], [], [], nxt - now)[0]:
        try:
            d, anc, _, _ = s.recvmsg(2048, 64)
            t0 = sent.pop(struct.unpack("!Q", d[:8])[0], None)
        except (OSError, struct.error):
            continue
        t1 = [struct.unpack("qq", c[2][:16]) for c in anc
              if c[0] == socket.SOL_SOCKET and c[1] == TS]
        t1 = t1[0][0] + t1[0][1] / 1e9 if t1 else time.time()
        if t0 is not None:
            rtts.append(t1 - t0)
rtts.sort()
pct = lambda p: "%.3f" % (rtts[max(0, -(-len(rtts) * p // 100) - 1)] * 1e3) if rtts else ""
print("ping sent=%d answered=%d p50_ms=%s p99_ms=%s" % (seq, len(rtts), pct(50), pct(99)))
EOF
	iping=$!
	wait_until 30 grep -qs ready "$tmp/ping" || echo "  the ping-pong did not start" >&2
}

# incast_cq_mod Q: the ib_send_bw -Q (a completion every that many sends)
# for Q QPs a process, around two faults of perftest 4.5 (Debian 12's):
# - its client counts each send completion as -Q sends, the last of a QP
#   too (signaled whatever its number), so with several QPs whose progress
#   differs and -n not a multiple of -Q it counted all done while one QP
#   still had sends to post, stopped polling and spun until the run's limit
#   (8 s runs of 16x4 with the default 100: 5-13 flows of 16 "failed" that
#   way, each server 10 receives short on one QP). incast_run makes -n a
#   multiple of this.
# - with -e its client polls 16 completions after each event and then waits
#   for the next (upstream's 14955fe, "Fix BW tests stuck pending
#   completion event"): with more than 16 in the CQ when the last came, it
#   waits for ever (-Q 1: 2x1 runs of 1 s hung in 1 of 3). Each QP has at
#   most its tx depth (128) sends outstanding, so at most 128 Q / -Q
#   completions wait: 16 with -Q 8 Q (the tx depth at most).
incast_cq_mod() {
	local m=$((8 * $1))
	echo $((m < 128 ? m : 128))
}

# incast_flows_rxdp K Q N: host i (2..K+1) sends N 64 KiB messages on each
# of Q QPs to host 1; per host "GBITS" or "fail" to $tmp/flows, and the
# perftest output of a flow that failed to incast-failures.log (under the
# run's $name)
incast_flows_rxdp() {
	local k=$1 q=$2 n=$3 i rt spids=() cpids=() rs=() to=$INCAST_LIMIT
	local args=(ib_send_bw -e -F -s 65536 -n "$n" -q "$q"
		-Q "$(incast_cq_mod "$q")" --tclass="$INCAST_TCLASS" --report_gbits)
	for i in $(seq 2 $((k + 1))); do
		RXDP_VERBS_TIMEOUT=$to verbs "${SW_NS[1]}" "${args[@]}" -p $((18700 + i)) \
			-d "${idev[1]}" -x "${igid[1]}" >"$tmp/is$i" 2>&1 &
		spids[i]=$!
	done
	wait_until 20 incast_listening "$k"
	for i in $(seq 2 $((k + 1))); do
		RXDP_VERBS_TIMEOUT=$to verbs "${SW_NS[i]}" "${args[@]}" -p $((18700 + i)) \
			-d "${idev[i]}" -x "${igid[i]}" "${SW_ADDR[1]}" >"$tmp/ic$i" 2>&1 &
		cpids[i]=$!
	done
	ipids=("${spids[@]}" "${cpids[@]}")
	incast_measure "${cpids[@]}"
	for i in $(seq 2 $((k + 1))); do
		wait "${cpids[i]}"
		rs[i]=$?
	done
	# a server whose client failed waits for it: 5 s, then it is ended
	wait_until 5 incast_gone "${spids[@]}" || kill "${spids[@]}" 2>/dev/null
	for i in $(seq 2 $((k + 1))); do
		wait "${spids[i]}"
		rt=$?
		if [ "${rs[i]}" = 0 ] && [ $rt = 0 ] && grep -q '^ *65536 ' "$tmp/ic$i"; then
			awk '/^ *65536 / {print $4}' "$tmp/ic$i"
		else
			echo "  rxdp flow from host $i: client exit ${rs[i]}, server exit $rt" \
				"(their output in $out/incast-failures.log)" >&2
			{
				echo "== $name, host $i: client exit ${rs[i]}, server exit $rt"
				cat "$tmp/ic$i" "$tmp/is$i"
			} >>"$out/incast-failures.log"
			echo fail
		fi
	done >"$tmp/flows"
	rm -f "$tmp"/is* "$tmp"/ic*
}
incast_listening() { # the receiver's K perftest servers listen
	[ "$(ip netns exec "${SW_NS[1]}" ss -ltnH | grep -c ':187[0-9][0-9] ')" -ge "$1" ]
}
incast_gone() { # none of the processes is alive
	local p
	for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}

# incast_flows_tcp K Q BYTES: host i (2..K+1) sends BYTES over Q TCP
# streams to host 1; per host "GBITS RETRANSMITS" or "fail" to $tmp/flows
incast_flows_tcp() {
	local k=$1 q=$2 b=$3 i cpids=() to=$INCAST_LIMIT
	for i in $(seq 2 $((k + 1))); do
		ip netns exec "${SW_NS[i]}" timeout "$to" iperf3 -c "${SW_ADDR[1]}" \
			-p $((5200 + i)) -P "$q" -n "$b" -l 65536 -C cubic -J \
			>"$tmp/it$i" 2>&1 &
		cpids[i]=$!
	done
	ipids=("${cpids[@]}")
	incast_measure "${cpids[@]}"
	for i in $(seq 2 $((k + 1))); do
		# a flow that failed leaves no result
		wait "${cpids[i]}" ||
			{ echo "  TCP flow from host $i: exit $?" >&2; rm -f "$tmp/it$i"; }
	done
	/usr/bin/python3 -c '
import json, sys
for p in sys.argv[1:]:
    try:
        e = json.load(open(p))["end"]
        print(e["sum_received"]["bits_per_second"] / 1e9, e["sum_sent"]["retransmits"])
    except (OSError, ValueError, KeyError):
        print("fail")' $(seq -f "$tmp/it%g" 2 $((k + 1))) >"$tmp/flows"
	rm -f "$tmp"/it*
}

# incast_measure PID...: while the flows (PIDs) run, the ping-pong: from
# when the port is busy until it carries their last bytes; that span
# (seconds) to $tmp/span, reaching back over what the port had carried when
# it was seen busy (a poll late), at the port's rate: the time it took at
# the least. The span ends at the last poll in which the port carried more
# than 1% of its rate (the ping-pong's packets are less), not when the last
# process exits: perftest calibrates its clock for 0.2 s of a spinning CPU
# when it reports, after its data, in each of its 2 x K processes (with 16
# hosts, 7 CPU-seconds on this 2-core VM after the port's last byte)
incast_measure() {
	local t0 b0 t b tl bl te late=
	wait_until "$INCAST_LIMIT" incast_started "$@"
	t0=${EPOCHREALTIME/./} # microseconds
	read -r b0 _ <<<"$(incast_tbf)"
	kill -USR1 "$iping"
	tl=$t0 bl=${b0:-0} te=$t0
	while ! incast_gone "$@"; do
		sleep 0.1
		t=${EPOCHREALTIME/./}
		read -r b _ <<<"$(incast_tbf)"
		b=${b:-0}
		# more than 1% of the port's rate since the last poll (rate/8
		# bytes a microsecond): busy
		[ $(((b - bl) * 800)) -gt $(((t - tl) * INCAST_RATE)) ] && te=$t
		tl=$t bl=$b
		# flows about to be ended by their limit: their QPs as they
		# stand (una against next: an ACK missing, or every packet
		# acknowledged and the completion not seen)
		if [[ $name == "incast rxdp "* ]] && [ -z "$late" ] &&
			[ $((t - t0)) -gt $(((INCAST_LIMIT - 8) * 1000000)) ]; then
			late=1
			incast_qps >>"$out/incast-failures.log"
		fi
	done
	awk -v a="$t0" -v b="$te" -v c="${b0:-0}" -v r="$INCAST_RATE" \
		'BEGIN {print (b - a) / 1e6 + c * 8 / (r * 1e6)}' >"$tmp/span"
	kill -TERM "$iping"
	wait "$iping"
	iping=
}
incast_started() { incast_busy || incast_gone "$@"; }
incast_qps() { # every host's QPs (rxdp-ctl qps), for a run that is late
	local ns
	echo "== $name: flows still running $((INCAST_LIMIT - 8)) s in, their QPs"
	for ns in "${SW_NS[@]:1:k+1}"; do
		echo "-- $ns"
		ip netns exec "$ns" "$bin/rxdp-ctl" qps 2>&1
	done
}

# incast_run T K Q BUF MARK: one run of T (rxdp or tcp), K hosts of Q QPs
# (streams) each into host 1's port, its buffer BUF bytes, marking MARK
# (off, on); its samples are named "incast T KxQ bBUF MARK"
incast_run() {
	local t=$1 k=$2 q=$3 buf=$4 mark=$5 name n m b i ecn=2 r0 o0 c0 x0 o1 c1 x1 rx
	local v fin=0
	local sum share jain sent drops
	local senders=("${SW_NS[@]:2:$k}")
	name="incast $t ${k}x$q b$buf $mark"
	# what the port carries in SECS, evenly over the flows' QPs (5 at
	# least), up to a multiple of perftest's -Q (incast_cq_mod)
	n=$((INCAST_RATE * 125000 * INCAST_SECS / k / q / 65536))
	[ $n -ge 5 ] || n=5
	m=$(incast_cq_mod "$q")
	n=$(((n + m - 1) / m * m))
	b=$((n * q * 65536))
	[ "$mark" = on ] && ecn=1
	incast_port_up "$buf" "$mark"
	incast_ping
	if [ "$t" = rxdp ]; then
		# the receiver's overruns, its CNPs, the packets it counted as
		# CE itself
		rx="out_of_buffer np_cnp_sent np_rx_congested_packets"
		r0=$(incast_counter retransmitted_pkts "${senders[@]}")
		read -r o0 c0 x0 <<<"$(incast_counter "$rx" "${SW_NS[1]}")"
		incast_flows_rxdp "$k" "$q" "$n"
		sample "$name" 0 resent pkts \
			$(($(incast_counter retransmitted_pkts "${senders[@]}") - r0))
		read -r o1 c1 x1 <<<"$(incast_counter "$rx" "${SW_NS[1]}")"
		sample "$name" 0 out_of_buffer pkts $((o1 - o0))
		sample "$name" 0 cnps pkts $((c1 - c0))
		sample "$name" 0 rx_congested pkts $((x1 - x0))
	else
		for i in $(seq 1 $((k + 1))); do
			ip netns exec "${SW_NS[i]}" sysctl -qw net.ipv4.tcp_ecn=$ecn
		done
		incast_flows_tcp "$k" "$q" "$b"
		sample "$name" 0 resent pkts \
			"$(awk '$1 != "fail" {s += $2} END {print s + 0}' "$tmp/flows")"
	fi
	incast_port_down
	i=0
	while read -r v _; do
		i=$((i + 1))
		[ "$v" = fail ] && continue
		fin=$((fin + 1))
		sample "$name" "$i" flow Gbit/s "$v"
	done <"$tmp/flows"
	sample "$name" 0 flows n "$k"
	sample "$name" 0 finished n "$fin"
	# together: what the flows that finished moved over the span from the
	# port's first megabyte to its last busy poll (the flows' own
	# averages would add up to more than the port where some end early),
	# and its share of the port; Jain's index over the flows that
	# finished: (sum x)^2 / (n sum x^2), 1 when all are equal
	awk -v r="$INCAST_RATE" -v b="$b" -v t="$(cat "$tmp/span")" \
		'$1 != "fail" {s += $1; q += $1 * $1; n++}
		END {if (n && t > 0) print n * b * 8 / t / 1e9,
			100 * n * b * 8 / t / 1e6 / r, s * s / (n * q)}' \
		"$tmp/flows" >"$tmp/sum"
	read -r sum share jain <"$tmp/sum"
	sample "$name" 0 sum Gbit/s "${sum:-}"
	sample "$name" 0 share % "${share:-}"
	sample "$name" 0 jain n "${jain:-}"
	read -r _ sent drops <"$tmp/tbf"
	sample "$name" 0 drops pkts "$drops"
	sample "$name" 0 drop_rate % \
		"$(awk -v d="$drops" -v s="$sent" 'BEGIN {if (s + d) print 100 * d / (s + d)}')"
	sample "$name" 0 ping_p50 ms "$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' "$tmp/ping")"
	sample "$name" 0 ping_p99 ms "$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' "$tmp/ping")"
	sample "$name" 0 ping_sent n "$(sed -n 's/.*sent=\([0-9]*\).*/\1/p' "$tmp/ping")"
	sample "$name" 0 ping_lost % "$(sed -n 's/.*sent=\([0-9]*\) answered=\([0-9]*\).*/\1 \2/p' \
		"$tmp/ping" | awk '$1 {print 100 * ($1 - $2) / $1}')"
	if [ "$mark" = on ]; then
		sample "$name" 0 kmin B "$INCAST_KMIN"
		sample "$name" 0 kmax B "$(incast_kmax "$buf")"
		for v in marked ect not_ect; do
			sample "$name" 0 "$v" pkts "$(kv "$v" "$tmp/mark.end")"
		done
	fi
	printf '  %s: %.3f Gbit/s (%.0f%%), Jain %.3f, %s of %s flows, %s dropped, ping %s\n' \
		"$name" "${sum:-0}" "${share:-0}" "${jain:-0}" "$fin" "$k" "$drops" \
		"$(grep '^ping ' "$tmp/ping" | cut -d' ' -f2-)"
}

# --- 9. sharing: one user's ping-pong beside another's load ---------------
# The victim (uid 12345): ibv_rc_pingpong -s 64 from host B to host A,
# SHARE_N iterations (its us per iteration). Beside it, another user's
# (65534) load on host A: a CPU hog, or ib_write_bw -t 8 (4 KiB or 64 KiB)
# from B to A (wire) or from A to A (loopback: the same device, one
# engine's work both ways), which runs SHARE_SECS and whose bandwidth is
# measured alone first, then with the victim started a second into it;
# then again with the victim at SL 5, which rxdpd (--tc 5=strict) makes a
# latency class, the stream staying at SL 0. Once for each configuration
# of RXDP_BENCH_SHARE_QUEUES (default "1 1x2 2"): veths of 1 queue, one
# engine a side (--engines-per-queue 1); of 1 queue with two engines on
# it (1x2: what rxdpd runs there by default, --engines-per-queue auto;
# the two users on different ones);
# and of 2, what rxdpd runs on a 2-CPU host whose NIC has 2 queues
# (--engines auto: two engines, the two users on different ones; the
# looped-back stream's own two contexts too). Samples "share ..." for 1
# queue, "share qC ..." for configuration C.
SHARE_QUEUES=${RXDP_BENCH_SHARE_QUEUES:-1 1x2 2}
SHARE_N=${RXDP_BENCH_SHARE_N:-2000}
SHARE_SECS=${RXDP_BENCH_SHARE_SECS:-6}
share_as() { echo setpriv --reuid="$1" --regid="$1" --clear-groups; }
# share_pp [SL]: one victim run (at service level SL, default 0), its us
# per iteration to stdout
share_pp() {
	local sl=${1:-0}
	# shellcheck disable=SC2046 # share_as: words
	verbs "$NS_A" $(share_as 12345) ibv_rc_pingpong -d "$devA" -g "$gid" \
		-s 64 -n "$SHARE_N" -l "$sl" -p 18520 >"$tmp/pps" 2>&1 &
	local s=$!
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18520 '"
	# shellcheck disable=SC2046
	verbs "$NS_B" $(share_as 12345) ibv_rc_pingpong -d "$devB" -g "$gid" \
		-s 64 -n "$SHARE_N" -l "$sl" -p 18520 "$ADDR_A" >"$tmp/ppc" 2>&1
	wait $s
	awk '/usec\/iter/ {print $(NF - 1)}' "$tmp/ppc" | head -n 1
}
# share_stream PATH SIZE: the other user's stream in the background (its
# client's pid in $sspid), PATH wire (B to A) or loop (A to A)
share_stream() {
	local cns=$NS_B cdev=$devB
	[ "$1" = loop ] && cns=$NS_A cdev=$devA
	# shellcheck disable=SC2046
	verbs "$NS_A" $(share_as 65534) ib_write_bw -d "$devA" -x "$gid" -s "$2" \
		-t 8 -D "$SHARE_SECS" -p 18521 --report_gbits >"$tmp/sss" 2>&1 &
	sspids=($!)
	wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18521 '"
	# shellcheck disable=SC2046
	verbs "$cns" $(share_as 65534) ib_write_bw -d "$cdev" -x "$gid" -s "$2" \
		-t 8 -D "$SHARE_SECS" -p 18521 --report_gbits "$ADDR_A" >"$tmp/ssc" 2>&1 &
	sspids+=($!)
}
share_stream_end() { # wait for the stream: its Gbit/s to $tmp/ssbw
	local rc=0
	wait "${sspids[0]}" || rc=$?
	wait "${sspids[1]}" || rc=$((rc ? rc : $?))
	sspids=()
	awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ {print $4}' "$tmp/ssc" | tail -n 1 >"$tmp/ssbw"
	# a stream that failed or moved nothing says why, not just 0
	if [ $rc != 0 ] || ! awk '$1 > 0 {ok = 1} END {exit !ok}' "$tmp/ssbw"; then
		echo "  the stream (exit $rc) reported '$(cat "$tmp/ssbw")': its server, then its client:" >&2
		tail -n 5 "$tmp/sss" "$tmp/ssc" >&2
	fi
}
bench_share() { # bench_share QUEUES[xENGINES_PER_QUEUE]
	local r load path size v v5 c=$1 q=${1%x*} epq=1 sh=share
	MTU=1500
	[[ $c == *x* ]] && epq=${c#*x}
	[ "$c" = 1 ] || sh="share q$c"
	echo "# sharing: a 64 B ping-pong (uid 12345) beside another user's load, MTU $MTU, $q queue(s), $epq engine(s) a queue at most"
	NETNS_QUEUES=$q NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	chmod 755 "$tmp"
	RXDPD_ARGS="${RXDPD_ARGS:-} --tc 5=strict --engines-per-queue $epq" \
		rxdp_hosts "$tmp"
	sspids=()
	on_exit 'kill ${sspids[*]} 2>/dev/null'
	for r in $(seq "$REPEAT"); do
		for load in alone hog wire-4096 wire-65536 loop-4096 loop-65536; do
			case $load in
			alone) v=$(share_pp) ;;
			hog)
				# shellcheck disable=SC2046
				ip netns exec "$NS_A" $(share_as 65534) sh -c 'exec yes' >/dev/null &
				sspids=($!)
				v=$(share_pp)
				kill "${sspids[@]}"
				wait "${sspids[@]}" 2>/dev/null
				sspids=()
				;;
			*)
				path=${load%-*} size=${load#*-}
				share_stream "$path" "$size"
				share_stream_end
				sample "$sh stream $path alone" "$size" bw Gbit/s "$(cat "$tmp/ssbw")"
				share_stream "$path" "$size"
				sleep 1
				v=$(share_pp)
				share_stream_end
				sample "$sh stream $path beside" "$size" bw Gbit/s "$(cat "$tmp/ssbw")"
				share_stream "$path" "$size"
				sleep 1
				v5=$(share_pp 5)
				share_stream_end
				sample "$sh stream $path beside sl5" "$size" bw Gbit/s "$(cat "$tmp/ssbw")"
				sample "$sh pingpong $load sl5" 64 lat us "$v5"
				echo "  beside $load, the ping-pong in a latency class: $v5 us per iteration"
				;;
			esac
			sample "$sh pingpong $load" 64 lat us "$v"
			echo "  beside $load: $v us per iteration"
		done
		round share "$r"
	done
}

bench_incast() {
	local c k q maxk=0 i r buf mark t
	MTU=1500
	# the marker, the ping-pong and the flows of the run under way, ended
	# with the section where it is cut short
	# shellcheck disable=SC2034 # ipids: read by the on_exit below
	imark='' iping='' ipids=()
	on_exit '[ -n "$imark" ] && kill $imark'
	on_exit '[ -n "$iping" ] && kill $iping'
	on_exit 'kill ${ipids[*]}'
	for c in $INCAST; do
		k=${c%x*}
		[ "$k" -gt "$maxk" ] && maxk=$k
	done
	echo "# incast: ${INCAST// /, } hosts x QPs into one switch port, $INCAST_RATE Mbit/s," \
		"buffer ${INCAST_BUFFERS// / or } B, marking ${INCAST_MARKING// / and }" \
		"(K_min $INCAST_KMIN B, K_max $INCAST_KMAX B or 3/4 of the buffer, P_max $INCAST_PMAX)," \
		"rxdp --tclass $INCAST_TCLASS, each run what the port carries in $INCAST_SECS s, MTU $MTU"
	sample "incast config" 0 rate Mbit/s "$INCAST_RATE"
	sample "incast config" 0 tclass n "$INCAST_TCLASS"
	sample "incast config" 0 secs s "$INCAST_SECS"
	sample "incast config" 0 pmax n "$INCAST_PMAX"
	rm -f "$out/incast-failures.log"
	netns_switch $((maxk + 2))
	ihost_ping=$((maxk + 2))
	idev=() igid=()
	if [[ " $INCAST_WITH " == *" rxdp "* ]]; then
		for i in $(seq 1 $((maxk + 1))); do
			rxdp_host "${SW_NS[i]}" "${SW_IF[i]}" "$tmp/rxdpd-$i.log"
		done
		for i in $(seq 1 $((maxk + 1))); do
			idev[i]=rxdp_${SW_IF[i]}
			rxdp_wait_port "${SW_NS[i]}" "${idev[i]}"
			igid[i]=$(rxdp_ipv4_gid "${SW_NS[i]}" "${idev[i]}")
			[ -n "${igid[i]}" ] || fail "no IPv4 GID on host $i"
		done
	fi
	for i in $(seq 2 $((maxk + 1))); do
		ip netns exec "${SW_NS[1]}" iperf3 -s -B "${SW_ADDR[1]}" -p $((5200 + i)) \
			>/dev/null 2>&1 &
		on_exit "kill $! 2>/dev/null"
	done
	# the ping-pong's echo, in the receiver's kernel (a process there
	# would wait for a CPU among 17 rxdpds): bench/udpecho.bpf.c, gone
	# with the namespace
	tc -n "${SW_NS[1]}" qdisc add dev "${SW_IF[1]}" clsact 2>/dev/null
	tc -n "${SW_NS[1]}" filter add dev "${SW_IF[1]}" ingress bpf direct-action \
		obj "$root/build/gen/udpecho.bpf.o" sec tc ||
		fail "cannot attach the ping-pong's echo (build/gen/udpecho.bpf.o)"
	for r in $(seq "$REPEAT"); do
		for c in $INCAST; do
			k=${c%x*} q=${c#*x}
			for buf in $INCAST_BUFFERS; do
				for mark in $INCAST_MARKING; do
					for t in $INCAST_WITH; do
						incast_run "$t" "$k" "$q" "$buf" "$mark"
					done
				done
			done
		done
		round incast "$r"
	done
}

# --- 8. rxdpd taken over ----------------------------------------------
# tko_one NS: a successor to NS's rxdpd (not in a subshell: its cleanup
# must outlive the call); its time from start to serving (ms) in tko_ms
tko_one() {
	local log t0
	log=$(mktemp -p "$tmp")
	t0=$(date +%s%N)
	timeout 20 ip netns exec "$1" "$bin/rxdpd" --takeover >"$log" 2>&1 ||
		{ cat "$log" >&2; skip "takeover in $1"; }
	tko_ms=$((($(date +%s%N) - t0) / 1000000))
	on_exit "kill $(rxdpd_pid "$1") 2>/dev/null"
}

bench_takeover() {
	local r ns b0 b1 t0 p srv tko_ms mgr ctl
	MTU=1500
	echo "# rxdpd taken over under a stream, and restarted, MTU $MTU"
	NETNS_MTU=$MTU NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
	rxdp_hosts "$tmp"
	WK_DIR=$tmp WK_TIMEOUT=30
	for r in $(seq "$REPEAT"); do
		# the blackout: one takeover (requester's side, then the
		# responder's) under small Sends, the stream's longest stall
		for ns in "$NS_A" "$NS_B"; do
			wirecheck_bg tko 18850 -t rc -o send -s 64 -D 3
			sleep 1
			tko_one "$ns"
			wirecheck_wait tko >/dev/null || skip "the stream across a takeover"
			sample "takeover $([ "$ns" = "$NS_A" ] && echo requester || echo responder)" \
				0 blackout ms "$(wirecheck_summary tko max_gap_ms)"
			sample "takeover successor" 0 start ms "$tko_ms"
		done
		# 64 KiB Writes for 3 s, without a takeover and with one
		wirecheck_run bw0 18851 -t rc -o write -s 65536 -D 3 >/dev/null ||
			skip "the stream"
		b0=$(wirecheck_summary bw0 bytes)
		wirecheck_bg bw1 18852 -t rc -o write -s 65536 -D 3
		sleep 1.5
		tko_one "$NS_A"
		wirecheck_wait bw1 >/dev/null || skip "the stream across a takeover"
		b1=$(wirecheck_summary bw1 bytes)
		sample "takeover stream" 65536 goodput Gbit/s "$(awk -v b="$b0" 'BEGIN {print b * 8 / 3e9}')"
		sample "takeover stream with one" 65536 goodput Gbit/s "$(awk -v b="$b1" 'BEGIN {print b * 8 / 3e9}')"
		# a restart instead: SIGTERM to a new connection's first
		# completion (its peer, on the other host, waiting already)
		verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gidB" -p 18853 -n 1 >/dev/null 2>&1 &
		srv=$!
		wait_until 10 sh -c "ip netns exec $NS_B ss -ltn | grep -q ':18853 '" ||
			skip "ibv_rc_pingpong does not listen"
		p=$(rxdpd_pid "$NS_A")
		t0=$(date +%s%N)
		kill -TERM "$p"
		wait_until 10 sh -c "! kill -0 $p 2>/dev/null" || skip "rxdpd $p does not exit"
		ip netns exec "$NS_A" "$bin/rxdpd" >>"$tmp/rxdpd-A.log" 2>&1 &
		on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
		rxdp_wait_port "$NS_A" "$devA"
		verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gidA" -p 18853 -n 1 "$ADDR_B" >/dev/null 2>&1 ||
			skip "ibv_rc_pingpong after the restart"
		wait "$srv"
		sample "restart" 0 first_completion ms $((($(date +%s%N) - t0) / 1000000))
		# a restart through the descriptor store (rxdpd --fdstore under
		# a manager speaking systemd's protocol, tests/lib/fdstore.py,
		# as rxdp.service's restart): the stream's longest stall
		p=$(rxdpd_pid "$NS_A")
		kill -TERM "$p"
		wait_until 10 sh -c "! kill -0 $p 2>/dev/null" || skip "rxdpd $p does not exit"
		mkfifo "$tmp/mgr$r.ctl"
		ip netns exec "$NS_A" /usr/bin/python3 "$root/tests/lib/fdstore.py" "$tmp/mgr$r" \
			-- "$bin/rxdpd" --fdstore <"$tmp/mgr$r.ctl" >>"$tmp/rxdpd-A.log" 2>&1 &
		mgr=$!
		exec {ctl}>"$tmp/mgr$r.ctl"
		rxdp_wait_port "$NS_A" "$devA"
		wirecheck_bg st 18854 -t rc -o send -s 64 -D 3
		sleep 1
		echo restart >&"$ctl"
		wirecheck_wait st >/dev/null || skip "the stream across a restart through the store"
		grep -q '^passed ' "$tmp/mgr$r" || skip "a restart: nothing passed through the store"
		sample "restart fdstore" 0 blackout ms "$(wirecheck_summary st max_gap_ms)"
		echo quit >&"$ctl"
		exec {ctl}>&-
		wait "$mgr"
		ip netns exec "$NS_A" "$bin/rxdpd" >>"$tmp/rxdpd-A.log" 2>&1 &
		on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
		rxdp_wait_port "$NS_A" "$devA"
		round takeover "$r"
	done
}

if has raw || has tcp || has rxdp; then
	for m in $MTUS; do
		MTU=$m
		section bench_mtu
	done
fi
if has loss; then
	MTU=1500
	section bench_loss
fi
has pairs && section bench_pairs
has nofifo && section bench_nofifo
has poll && section bench_poll
has incast && section bench_incast
if has share; then
	for q in $SHARE_QUEUES; do section bench_share "$q"; done
fi
has takeover && section bench_takeover
kill $watch
wait $watch
/usr/bin/python3 "$root/bench/report.py" "$samples" "$out"
