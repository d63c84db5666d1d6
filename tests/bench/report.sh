#!/usr/bin/env bash
# bench/report.py and bench/cpuwatch.py, on made-up samples (no root, no
# network): each verdict compares rxdp with the peer's best configuration,
# so a faster TCP configuration takes a win away (here: sockperf with
# spinning sockets beats rxdp's send latency though blocking sockets do
# not); a busy machine is called busy; and cpuwatch.py tells the
# benchmark's own CPU time from the rest.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
py=/usr/bin/python3

printf '%s\t%s\t%s\t%s\t%s\t%s\n' name mtu size metric unit value >"$tmp/s.tsv"
tr '|' '\t' >>"$tmp/s.tsv" <<'EOF'
config|9000|0|path_mtu|B|4096
config|9000|0|rxdp_frame|B|4170
raw afxdp pingpong|9000|2|typical|us|3.4
raw afxdp pingpong|9000|2|p999|us|9
raw afxdp stream|9000|4170|rate|Mpps|0.25
raw afxdp stream|9000|64|rate|Mpps|0.43
raw afxdp stream copied|9000|4170|rate|Mpps|0.2
raw afxdp stream copied|9000|4170|bw|Gbit/s|6.7
raw afxdp stream crc|9000|4170|rate|Mpps|0.16
raw afxdp stream crc|9000|4170|bw|Gbit/s|5.3
tcp sockperf blocking|9000|14|typical|us|33
tcp sockperf blocking|1500|14|typical|us|35
tcp sockperf spinning|9000|14|typical|us|2.9
tcp sockperf spinning|9000|14|p999|us|20
tcp iperf3|9000|65536|bw|Gbit/s|9.6
tcp iperf3|9000|65536|cpu|s/GiB|1.2
tcp iperf3|1500|1048576|bw|Gbit/s|4
rxdp ib_send_lat|9000|2|typical|us|3.0
rxdp ib_send_lat|9000|2|p999|us|30
rxdp ib_write_lat|9000|2|typical|us|16.5
rxdp ib_write_bw|9000|65536|bw|Gbit/s|8.0
rxdp ib_write_bw|9000|65536|cpu|s/GiB|6.1
rxdp msgrate ib_write_bw|9000|64|rate|Mpps|0.4
loss rxdp ib_write_bw 64K|1500|0|bw|Gbit/s|2.0
loss rxdp ib_write_bw 64K|1500|1000|bw|Gbit/s|1.8
loss rxdp ib_write_bw 64K|1500|10000|bw|Gbit/s|0.9
loss rxdp go-back-N ib_write_bw 64K|1500|0|bw|Gbit/s|2.0
loss rxdp go-back-N ib_write_bw 64K|1500|1000|bw|Gbit/s|1.5
loss rxdp go-back-N ib_write_bw 64K|1500|10000|bw|Gbit/s|1.0
loss tcp iperf3 64K|1500|0|bw|Gbit/s|3
loss tcp iperf3 64K|1500|10000|bw|Gbit/s|0.5
incast config|1500|0|rate|Mbit/s|1000
incast config|1500|0|tclass|n|0
incast config|1500|0|secs|s|4
incast config|1500|0|pmax|n|0.1
incast rxdp 16x4 b65536 on|1500|1|flow|Gbit/s|0.05
incast rxdp 16x4 b65536 on|1500|2|flow|Gbit/s|0.04
incast rxdp 16x4 b65536 on|1500|0|sum|Gbit/s|0.6
incast rxdp 16x4 b65536 on|1500|0|share|%|60
incast rxdp 16x4 b65536 on|1500|0|jain|n|0.98
incast rxdp 16x4 b65536 on|1500|0|drops|pkts|18
incast rxdp 16x4 b65536 on|1500|0|drop_rate|%|0.5
incast rxdp 16x4 b65536 on|1500|0|kmin|B|20000
incast rxdp 16x4 b65536 on|1500|0|kmax|B|49152
incast rxdp 16x4 b65536 on|1500|0|marked|pkts|0
incast rxdp 16x4 b65536 on|1500|0|ect|pkts|0
incast rxdp 16x4 b65536 on|1500|0|not_ect|pkts|94
incast rxdp 16x4 b65536 on|1500|0|out_of_buffer|pkts|86348
incast rxdp 16x4 b65536 on|1500|0|cnps|pkts|12
incast rxdp 16x4 b65536 on|1500|0|rx_congested|pkts|345
incast rxdp 16x4 b65536 on|1500|0|resent|pkts|102112
incast rxdp 16x4 b65536 on|1500|0|ping_p50|ms|0.33
incast rxdp 16x4 b65536 on|1500|0|ping_p99|ms|23
incast rxdp 16x4 b65536 on|1500|0|ping_sent|n|400
incast rxdp 16x4 b65536 on|1500|0|finished|n|15
incast rxdp 16x4 b65536 on|1500|0|flows|n|16
incast tcp 16x4 b65536 on|1500|0|sum|Gbit/s|0.9
incast tcp 16x4 b65536 on|1500|0|finished|n|16
incast tcp 16x4 b65536 on|1500|0|flows|n|16
share pingpong alone|1500|64|lat|us|80
share pingpong hog|1500|64|lat|us|120
share pingpong loop-4096|1500|64|lat|us|1500
share stream loop alone|1500|4096|bw|Gbit/s|0.5
share stream loop beside|1500|4096|bw|Gbit/s|0.45
share pingpong loop-4096 sl5|1500|64|lat|us|132
share stream loop beside sl5|1500|4096|bw|Gbit/s|0.4
share q2 pingpong hog|1500|64|lat|us|150
share q2 pingpong wire-65536|1500|64|lat|us|180
share q2 pingpong wire-65536|1500|64|lat|us|1270
share q2 pingpong wire-65536|1500|64|lat|us|173
share q2 stream wire alone|1500|65536|bw|Gbit/s|5
share q2 stream wire beside|1500|65536|bw|Gbit/s|4.5
share q1x2 pingpong hog|1500|64|lat|us|140
share q1x2 pingpong wire-65536|1500|64|lat|us|154
EOF
cat >"$tmp/cpuwatch.json" <<'EOF'
{"seconds": 600, "cpus": 2, "loadavg_start": 3.2, "loadavg_end": 2.9,
 "bench_cpu_s": 700, "others_cpu_s": 300, "others_cpus_mean": 0.5,
 "others_cpus_p90": 1.1, "others_cpus_max": 2.0, "others_top": ["qemu 250 s"]}
EOF
"$py" "$root/bench/report.py" "$tmp/s.tsv" "$tmp" >"$tmp/out" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "report.py failed"; }
md=$tmp/results.md
{ [ -s "$md" ] && [ -s "$tmp/results.json" ]; } || fail "no results.md/json"
# verdict LABEL-REGEX: the verdict column of the row whose comparison matches
verdict() { grep -E "^\| $1 \|" "$md" | awk -F'|' '{print $8}' | sed 's/^ *//; s/ *$//'; }
expect() { # expect LABEL-REGEX VERDICT-REGEX
	local v
	v=$(verdict "$1")
	[[ "$v" =~ $2 ]] || { cat "$md"; fail "'$1': verdict '$v', want /$2/"; }
}
# 3.0 us beats blocking TCP (33 us) by far, but not spinning TCP (2.9 us)
expect "ib_send_lat 2 B, MTU 9000 / TCP at its best \(14 B\)" "^missed"
grep -q "TCP sockperf spinning, MTU 9000" "$md" || fail "the best TCP configuration is not named"
grep -qE "^\| ib_send_lat 2 B, MTU 9000 / TCP at its best \(14 B\) \| 3 \| 2\.9 \|" "$md" ||
	fail "send latency not compared with spinning TCP's median (2.9 us)"
expect "ib_send_lat 2 B, MTU 9000 / raw AF_XDP ping-pong \(half RTT\)" "^met$"
expect "ib_send_lat 2 B p99.9, MTU 9000 / TCP's best p99.9" "^missed"
# 8 Gbit/s beats TCP at MTU 1500 (4) but not at 9000 (9.6)
expect "ib_write_bw 64 KiB, MTU 9000 / TCP at its best" "^missed"
expect "goodput at 0.1% loss / clean, rxdp .*" "^met$"
expect "goodput at 1% loss / clean, rxdp .*" "^missed"
expect "goodput at 1% loss, rxdp / TCP .*" "^met$"
# selective retransmission against rxdp's own going back: 1.8 / 1.5 at
# 0.1%, 0.9 / 1.0 at 1%; and the table's column for it
expect "goodput at 0.1% loss, rxdp / rxdp going back .*" "^met$"
expect "goodput at 1% loss, rxdp / rxdp going back .*" "^missed"
grep -qE "^\| 0\.1% \| 1\.8 \| 90% \| n/a \| 1\.5 \| 75% \| n/a \| n/a \| n/a \|$" "$md" ||
	{ grep -A6 "^## Goodput under loss" "$md"; fail "no go-back-N column in the loss table"; }
grep -q "^Where rxdp loses: .*ib_send_lat 2 B, MTU 9000 / TCP at its best" "$md" ||
	fail "the losses are not listed"
grep -q "The machine was NOT idle" "$md" || fail "a busy machine called idle"
# the stream to a copying sink: a row of its own (0.2 Mpps of 4096-byte
# payloads: 6.55 Gbit/s), no verdict
grep -qE "^\| the same, its sink copying each payload out \(as RDMA payload: 6\.55 Gbit/s\) \| 9000 \| 6\.7 \|" "$md" ||
	{ cat "$md"; fail "no row for the copying sink"; }
grep -E "^\|.*\|.*copying.*\| *(met|missed)" "$md" && fail "the copying sink made a verdict"
# and with a CRC at each end (0.16 Mpps: 5.24 Gbit/s of payload, which
# rxdp's 8.0 is 1.53 of), no verdict either
grep -qE "^\| the same, each end also computing a CRC-32 .*\(as RDMA payload: 5\.24 Gbit/s; rxdp ib_write_bw 64 KiB: 1\.53 of it\) \| 9000 \| 5\.3 \|" "$md" ||
	{ cat "$md"; fail "no row for the stream with CRCs"; }
grep -E "^\|.*CRC-32.*\| *(met|missed)" "$md" && fail "the stream with CRCs made a verdict"
# the incast section: a row per configuration, rxdp and TCP side by side;
# rxdp's packets that were not ECT (tclass 0) said beside its CE, the
# receiver's CNPs beside the packets it counted as CE itself; a figure
# TCP lacks is n/a, not a number
grep -qE "^\| 16x4 \| 64 KiB \| on \(20000 to 49152 B\) \| 0\.6 \(60%\) \| 0\.980 \| 18 \(0\.5%\) \| 0 of 0; 94 not ECT \| 86348 \| 12 \(345\) \| 102112 \| 0\.33 / 23 \(400\) \| 15 of 16 \| 0\.9 \| n/a \|.*\| 16 of 16 \|$" "$md" ||
	{ grep -A4 "^## Incast" "$md"; grep "^| 16x4" "$md"; fail "no incast row"; }
grep -qE "^\| 16x4 \| 64 KiB \| on .* \| 0\.05, 0\.04 \| *\|$" "$md" || fail "no row of each flow's goodput"
grep -q -- "--tclass 0: rxdpd sends ECT(0) with its DSCP" "$md" || fail "rxdp's traffic class not said"
# the sharing section: the victim beside each load, as a multiple of its
# figure beside the hog, and the share of its bandwidth the stream kept
grep -qE "^\| a 4 KiB write stream looped back \| 1500 \| 12\.50 \| 0\.5 / 0\.45 \| 0\.90 \| 132 \| 1\.10 \| 0\.4 \| 0\.80 \|$" "$md" ||
	{ grep -A12 "^## Sharing" "$md"; fail "no sharing row"; }
grep -qE "^\| a CPU hog \| 120 \| 1\.00 \| +\| +\| +\| +\| +\| +\|$" "$md" || fail "no row beside the hog"
# and its table for 2 queues (samples "share q2 ..."), after the 1-queue
# one; a figure of several rounds is their median, their range beside it
grep -q "^## Sharing: one user's ping-pong beside another's load, 2 queue(s)$" "$md" &&
	grep -A12 "^## Sharing: .*, 2 queue(s)$" "$md" |
	grep -qE "^\| a 64 KiB write stream across the wire \| 180 \(173-1270\) \| 1\.20 \| 5 / 4\.5 \| 0\.90 \|" ||
	{ grep -A12 "^## Sharing" "$md"; fail "no sharing table for 2 queues"; }
# and for two engines on 1 queue (samples "share q1x2 ..."), between them
grep "^## Sharing" "$md" | tr '\n' '/' |
	grep -q "1 queue(s)/.*1 queue(s), 2 engines on it/.*2 queue(s)/" &&
	grep -A12 "^## Sharing: .*, 2 engines on it$" "$md" |
	grep -qE "^\| a 64 KiB write stream across the wire \| 154 \| 1\.10 \|" ||
	{ grep -A12 "^## Sharing" "$md"; fail "no sharing table for 2 engines on 1 queue"; }
# the same with a quiet machine
sed -i 's/"others_cpus_mean": 0.5/"others_cpus_mean": 0.01/; s/"others_cpus_p90": 1.1/"others_cpus_p90": 0.05/' \
	"$tmp/cpuwatch.json"
"$py" "$root/bench/report.py" "$tmp/s.tsv" "$tmp" >/dev/null 2>&1
grep -q "The machine was idle" "$md" || fail "a quiet machine not called idle"
if "$py" -c "import matplotlib" 2>/dev/null; then
	for p in bandwidth latency loss; do
		[ -s "$tmp/$p.png" ] || fail "no $p.png"
	done
fi

# cpuwatch.py: a child that spins (until it has used 2.5 s of CPU, or for
# 60 s on a crowded machine) is the benchmark's time, all but the last
# second (no sample after it exits)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
(
	me=$BASHPID hz=$(getconf CLK_TCK) end=$((SECONDS + 60))
	while [ "$(cpu_of $me)" -lt $((hz * 5 / 2)) ] && [ $SECONDS -lt $end ]; do
		for ((i = 0; i < 20000; i++)); do :; done
	done
	awk -v t="$(cpu_of $me)" -v hz="$hz" 'BEGIN {print t / hz}' >"$tmp/spun"
) &
spinner=$!
"$py" "$root/bench/cpuwatch.py" $spinner "$tmp/w.json" ||
	fail "cpuwatch.py failed"
"$py" - "$tmp/w.json" "$(cat "$tmp/spun")" <<'EOF' || fail "cpuwatch.py: $(cat "$tmp/w.json")"
import json, sys
w, spun = json.load(open(sys.argv[1])), float(sys.argv[2])
for k in ("seconds", "cpus", "bench_cpu_s", "others_cpus_mean", "others_top"):
    assert k in w, k
assert spun - 1.1 <= w["bench_cpu_s"] <= spun + 0.1, (w["bench_cpu_s"], spun)
EOF
echo "PASS: report.py compares with each peer's best; cpuwatch.py counts the benchmark's CPU"
