#!/usr/bin/env bash
# make bench's incast section (bench/run.sh, RXDP_BENCH_SECTIONS=incast),
# smoke-tested at its smallest: two senders into one marking switch port
# with a 64 KiB buffer, a second's worth of data, rxdp with --tclass 2
# (ECT(0)) and TCP with ECN. Each run's figures are there (both flows
# finished, a sum no more than the port carries, Jain's index, the port's
# drops, the ping-pong); the
# marker saw rxdp's and TCP's packets as ECT (the knob and tcp_ecn reached
# the wire); results.md has the section's row; and nothing of the rig
# (namespaces, rxdpd, the marker) is left behind.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
require_root
require_cmd tc iperf3 sockperf ib_send_bw ib_write_lat ethtool
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
id=$RXDP_TEST_ID # the rig's names carry it (this test makes none itself)
# (two patterns: pgrep warns of one longer than a process name's 15 bytes)
ours() { pgrep -x rxdpd; pgrep -x rxdp-ecnmark; }
before=" $(ours | tr '\n' ' ') "

RXDP_TEST_ID=$id RXDP_BENCH_OUT=$tmp RXDP_BENCH_SECTIONS=incast \
	RXDP_BENCH_REPEAT=1 RXDP_BENCH_INCAST=2x1 RXDP_BENCH_INCAST_BUFFERS=65536 \
	RXDP_BENCH_INCAST_MARKING=on RXDP_BENCH_INCAST_SECS=1 \
	RXDP_BENCH_INCAST_TCLASS=2 timeout 300 "$root/bench/run.sh" >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "bench/run.sh failed"; }
grep '^  incast ' "$tmp/out"

# value T METRIC [SIZE]: the sample of the run of T (rxdp, tcp)
value() {
	awk -F'\t' -v n="incast $1 2x1 b65536 on" -v m="$2" -v s="${3:-0}" \
		'$1 == n && $4 == m && $3 == s {print $6}' "$tmp/samples.tsv"
}
for t in rxdp tcp; do
	[ "$(value $t finished)" = 2 ] || { cat "$tmp/out"; fail "$t: not every flow finished"; }
	for m in sum share jain drops drop_rate ping_p50 ping_p99 ping_sent resent marked; do
		[ -n "$(value $t $m)" ] || fail "$t: no $m"
	done
	for f in 1 2; do
		awk -v v="$(value $t flow $f)" 'BEGIN {exit !(v > 0)}' ||
			fail "$t: flow $f moved nothing"
	done
	[ "$(value $t ect)" -gt 0 ] || fail "$t: the marker saw no ECT packet"
	# payload through a port cannot beat its rate (the span reaches back
	# over what the port carried before it, at the port's rate; 1% for its
	# TBF's 16 KB burst and the span's rounding)
	awk -v v="$(value $t share)" 'BEGIN {exit !(v <= 101)}' ||
		fail "$t: $(value $t share)% of the port's rate"
done
[ -n "$(value rxdp out_of_buffer)" ] || fail "rxdp: no out_of_buffer"
for m in cnps rx_congested; do
	[ -n "$(value rxdp $m)" ] || fail "rxdp: no $m"
done
grep -qE '^\| 2x1 \| 64 KiB \| on \(20000 to 49152 B\) \| [0-9.]+ \([0-9.]+%\) \| [01]\.[0-9]{3} \|.*\| 2 of 2 \|.*\| 2 of 2 \|$' \
	"$tmp/results.md" || { cat "$tmp/results.md"; fail "no incast row in results.md"; }

ip netns list | grep -E "^rx(s[0-9]+h$((id & 65535))|r$((id & 65535)))\b" &&
	fail "the rig's namespaces are left behind"
# one of ours left running would hold its namespace after the name went:
# a new rxdpd or marker in a namespace without a name (other tests' run in
# named ones)
for p in $(ours); do
	[[ "$before" == *" $p "* ]] && continue
	[ -z "$(ip netns identify "$p" 2>/dev/null)" ] &&
		fail "$(cat "/proc/$p/comm") $p is left behind"
done
echo "PASS: the incast section runs, each figure there, nothing left behind"
