#!/usr/bin/env bash
# Open MPI (Debian's openmpi-bin, the UCX PML) across two rxdp hosts: one
# rank in each network namespace, started by mpirun through an rsh agent
# that runs `ip netns exec` (mpi_rsh.sh); mpi_pingpong's ping-pong (every
# byte checked) and allreduces, over rc_verbs and then over ud_verbs, with
# no UCX environment beyond the device and the transport. Checks the
# traffic went through rxdp (both devices counted it) and prints the
# figures. Then a job over rc_verbs across five takeovers of each rxdpd
# (issue 43): its checked rounds go on through them, the job ends right. Both hosts share this machine's cores with both rxdpds: the
# ranks yield when idle, as Open MPI advises for oversubscribed nodes
# (spinning ranks starve the data path: milliseconds per message here).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd mpirun python3
prog=$root/build/tests/rc/mpi_pingpong
[ -x "$prog" ] || fail "$prog not built (make test)"
tmp=$(mktemp -d)
chmod 755 "$tmp"
on_exit "rm -rf '$tmp'"
for v in $(env | sed -n 's/^\(UCX_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

# one device name on both hosts: one UCX_NET_DEVICES for both ranks
NETNS_SAME_IFNAME=1 NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
export RXDP_RSH_HOSTS="$ADDR_A=$NS_A $ADDR_B=$NS_B"

RXDP_VERBS_TIMEOUT=240
# mpi_job TLS ARGS...: mpi_pingpong ARGS over UCX's TLS, mpirun in A: rank 0
# there, rank 1 in B through the agent
mpi_job() {
	local tls=$1
	shift
	verbs "$NS_A" env UCX_NET_DEVICES="$devA:1" UCX_TLS="$tls" \
		mpirun --allow-run-as-root -np 2 --host "$ADDR_A:1,$ADDR_B:1" \
		--mca plm_rsh_agent "$root/tests/rc/mpi_rsh.sh" \
		--mca pml ucx --mca btl self --mca mpi_yield_when_idle 1 \
		-x LD_LIBRARY_PATH -x UCX_NET_DEVICES -x UCX_TLS \
		"$prog" "$@"
}
for tls in rc_v ud_v; do
	s0a=$(rxdp_counter "$NS_A" sent_pkts)
	s0b=$(rxdp_counter "$NS_B" sent_pkts)
	mpi_job "$tls" 50 >"$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	[ $rc = 0 ] || fail "mpirun over $tls: exit $rc"
	grep -q 'allreduce of .*: right' "$tmp/out" || fail "no allreduce over $tls"
	[ "$(rxdp_counter "$NS_A" sent_pkts)" -gt "$s0a" ] &&
		[ "$(rxdp_counter "$NS_B" sent_pkts)" -gt "$s0b" ] ||
		fail "the ranks did not talk through rxdp over $tls"
	echo "ok   Open MPI ping-pong and allreduce over $tls"
done

# a job across takeovers: rounds of checked ping-pongs until $tmp/stop,
# five takeovers a side meanwhile (each made while the job runs)
mpi_job rc_v 50 "$tmp/stop" >"$tmp/soak" 2>&1 &
job=$!
on_exit "kill $job 2>/dev/null"
wait_until 60 grep -q soaking "$tmp/soak" || { cat "$tmp/soak"; fail "the job did not start"; }
for i in 1 2 3 4 5; do
	for ns in "$NS_A" "$NS_B"; do
		kill -0 "$job" 2>/dev/null ||
			{ cat "$tmp/soak"; fail "the job ended before takeover $((RXDP_TKO_N + 1))"; }
		rxdp_takeover "$ns" "$tmp"
		sleep 0.3
	done
done
touch "$tmp/stop"
wait "$job"
rc=$?
cat "$tmp/soak"
[ $rc = 0 ] || fail "the job across the takeovers: exit $rc"
grep -q 'soaked: .* every byte right' "$tmp/soak" && grep -q 'allreduce of .*: right' "$tmp/soak" ||
	fail "the job across the takeovers: not right"
echo "ok   an Open MPI job across $RXDP_TKO_N takeovers: $(grep -o 'soaked: [0-9]* rounds' "$tmp/soak")"
echo PASS
