#!/usr/bin/env bash
# make soak: hours of mixed traffic between two rxdp hosts through a bad
# wire, every byte checked, ending with a report of what moved and that
# nothing was lost or corrupted where the transport promises it.
#
#   host A [IF_A] ---- [PA] badwire in R [PB] ---- [IF_B] host B
#
# badwire (tests/rc/badwire.c) drops, duplicates and reorders RoCEv2 frames
# (SOAK_FAULTS, default "-l 0.5 -d 0.5 -r 1": percentages). The soak runs
# in rounds of SOAK_ROUND seconds (60) until SOAK_SECONDS (3600) have gone
# by; each round starts the streams below at once, both ways, each a
# wirecheck stream for the round's length with a seed of its own (the
# round's number): RC with every operation, sizes to 1 MiB, gather/scatter,
# an SRQ, several QPs; UC and UD Sends (which may lose, duplicate and come
# late on such a wire: counted, and what arrives checked). Every
# SOAK_RESTART_EVERY-th round (5) one host's rxdpd (A, then B, ...) is
# stopped half-way through and started again: that round's streams through
# it end with errors, as an HCA's fatal state has them, but must neither
# hang nor deliver a wrong byte; the next round runs on the new rxdpd.
#
# The report (build/soak/report.txt, printed): per transport the messages
# and bytes checked, what UC and UD lost, duplicated and got late, the
# rounds and restarts, the wire's faults, both rxdpds' counters. The soak
# fails if a byte was wrong anywhere, if an RC message was lost or a
# stream failed in a round without a restart, or if a stream hung.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
badwire=$root/build/tests/rc/badwire
[ -x "$badwire" ] && [ -x "$WIRECHECK" ] || fail "badwire/wirecheck not built (make test-bins)"
secs=${SOAK_SECONDS:-3600}
round_s=${SOAK_ROUND:-60}
faults=${SOAK_FAULTS:--l 0.5 -d 0.5 -r 1}
restart_every=${SOAK_RESTART_EVERY:-5}
out=${SOAK_OUT:-$root/build/soak}
rm -rf "$out"
mkdir -p "$out/streams"
chmod 755 "$out"

# the hosts, the hop between them, badwire on it
_netns_three
for p in "$NS_A $IF_A" "$NS_B $IF_B" "$NS_R $PA" "$NS_R $PB"; do
	# shellcheck disable=SC2086
	set -- $p
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
	ip -n "$1" link set "$2" up
done
_netns_three_up
# shellcheck disable=SC2086 # the faults are options
ip netns exec "$NS_R" "$badwire" $faults "$PA" "$PB" >"$out/wire.log" 2>&1 &
wire=$!
on_exit "kill $wire 2>/dev/null"
wait_until 10 grep -q "^badwire: $PA <-> $PB" "$out/wire.log" || fail "badwire did not start"
RXDP_VERBS_TIMEOUT=$((round_s + 200))
rxdp_hosts "$out"

# DIRECTION STREAM: A>B: target in B, client in A; B>A the other way
streams=(
	"A>B -t rc -o all -s 0-1048576 --sge 3 --depth 16"
	"B>A -t rc -o all -s 0-65536 -q 4"
	"A>B -t rc -o send,write_imm -s 1-9000 -q 3 --srq"
	"B>A -t rc -o read,write -s 1-300000 --depth 16"
	"A>B -t uc -o send,send_imm -s 4-20000 --lossy --settle 3000"
	"B>A -t ud -o all -s 4-1024 -q 2 --lossy --settle 3000"
)
WK_DIR=$out/streams WK_TIMEOUT=$((round_s + 120))

# restart_host A|B: its rxdpd stopped and started again
restart_host() {
	local ns dev p
	[ "$1" = A ] && ns=$NS_A dev=$devA || ns=$NS_B dev=$devB
	p=$(rxdpd_pid "$ns")
	kill -TERM "$p"
	wait_until 20 sh -c "! kill -0 $p 2>/dev/null" || fail "rxdpd $p does not exit"
	ip netns exec "$ns" "$RXDP_BIN/rxdpd" >>"$out/rxdpd-$1.log" 2>&1 &
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
	rxdp_wait_port "$ns" "$dev"
}

t0=$(date +%s)
r=0 restarts=0
: >"$out/rounds.txt"
echo "soak: $secs s in rounds of $round_s s, wire $faults, a restart every $restart_every rounds"
while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
	r=$((r + 1))
	restart=""
	[ $((r % restart_every)) = 0 ] && restart=$([ $((r / restart_every % 2)) = 1 ] && echo A || echo B)
	for i in "${!streams[@]}"; do
		read -r dir args <<<"${streams[i]}"
		name=r$r.s$i
		# shellcheck disable=SC2086
		if [ "$dir" = "A>B" ]; then
			wirecheck_bg "$name" $((18800 + i)) -D "$round_s" --seed "$r" $args
		else
			WK_TNS=$NS_A WK_TDEV=$devA WK_TGID=$gidA WK_CNS=$NS_B WK_CDEV=$devB \
				WK_CGID=$gidB WK_ADDR=$ADDR_A \
				wirecheck_bg "$name" $((18800 + i)) -D "$round_s" --seed "$r" $args
		fi
	done
	if [ -n "$restart" ]; then
		sleep $((round_s / 2)) # half-way through the round, whatever it did
		restart_host "$restart"
		restarts=$((restarts + 1))
	fi
	for i in "${!streams[@]}"; do
		name=r$r.s$i
		wirecheck_wait "$name" >/dev/null 2>&1
		rc=$?
		for f in client target; do
			s=$(grep '^summary:' "$out/streams/$name.$f" | tail -n 1)
			echo "round=$r stream=$i restart=${restart:-none} side=$f exit=$rc type=$(sed 's/.*-t \([a-z]*\).*/\1/' <<<"${streams[i]}") hung=$(grep -c 'out of time' "$out/streams/$name.$f") $s" \
				>>"$out/rounds.txt"
		done
	done
	echo "soak: round $r done ($(($(date +%s) - t0)) s${restart:+, rxdpd $restart restarted})"
done
kill -TERM "$wire"
wait "$wire" 2>/dev/null
for h in A B; do
	ns=$NS_A
	[ $h = B ] && ns=$NS_B
	ip netns exec "$ns" "$RXDP_BIN/rxdp-ctl" counters | grep -v ' 0$' >"$out/counters-$h.txt"
done
/usr/bin/python3 - "$out" "$r" "$restarts" "$(tail -n 1 "$out/wire.log")" "$(($(date +%s) - t0))" <<'EOF'
import collections, re, sys
out, rounds, restarts, wire, elapsed = sys.argv[1:6]
T = collections.defaultdict(lambda: collections.Counter())
bad = []
for line in open(out + "/rounds.txt"):
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    if kv.get("side") != "target" and "type" in kv:
        c = T[kv["type"]]
        c["streams"] += 1
        for k in ("sent", "delivered", "bytes", "lost", "dup", "late", "corrupt",
                  "bad_wc", "reads", "read_bytes", "read_bad"):
            c[k] += int(kv.get(k, 0))
        c["restart_rounds"] += kv["restart"] != "none"
        c["failed_in_restart_rounds"] += kv["restart"] != "none" and kv["exit"] != "0"
        c["failed"] += kv["restart"] == "none" and kv["exit"] != "0"
    where = "round %s stream %s (%s, %s)" % (kv.get("round"), kv.get("stream"),
                                            kv.get("type"), kv.get("side"))
    if int(kv.get("corrupt", 0)) or int(kv.get("read_bad", 0)):
        bad.append(where + ": a wrong byte")
    if int(kv.get("hung", 0)):
        bad.append(where + ": hung (ran out of time)")
    if kv.get("restart") == "none" and kv.get("exit", "0") != "0":
        bad.append(where + ": failed without a restart: " + line.strip()[-200:])
    if kv.get("type") == "rc" and kv.get("restart") == "none" and int(kv.get("lost", 0)):
        bad.append(where + ": an RC message lost")
with open(out + "/report.txt", "w") as f:
    f.write("soak: %s s, %s rounds, %s restarts of an rxdpd; wire: %s\n" %
            (elapsed, rounds, restarts, wire))
    for t in sorted(T):
        c = T[t]
        f.write("%s: %d streams, %d messages sent, %d delivered, %d bytes checked, "
                "%d reads checked (%d bytes); lost %d, duplicated %d, late %d, "
                "wrong %d; %d streams ended by a restart\n" %
                (t, c["streams"], c["sent"], c["delivered"], c["bytes"], c["reads"],
                 c["read_bytes"], c["lost"], c["dup"], c["late"],
                 c["corrupt"] + c["read_bad"], c["failed_in_restart_rounds"]))
    for h in "AB":
        f.write("rxdpd %s: %s\n" % (h, " ".join(
            "%s=%s" % tuple(l.split()) for l in open(out + "/counters-%s.txt" % h)
            if len(l.split()) == 2)))
    f.write("verdict: %s\n" % ("PASS" if not bad else "FAIL"))
    for b in bad[:50]:
        f.write("  " + b + "\n")
print(open(out + "/report.txt").read(), end="")
sys.exit(1 if bad else 0)
EOF
