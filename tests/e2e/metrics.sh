#!/usr/bin/env bash
# rxdp-ctl metrics: the Prometheus text format (0.0.4), parsed twice, by
# prometheus_client's parser and by the format's rules checked here (a HELP
# and a TYPE before each family's samples, names and labels as the format
# and Prometheus' conventions want them: counters end in _total, units in
# the name, no series twice), and its numbers the ones rxdp-ctl --json
# shows: per device (XDP verdicts, the transport's counters, the port) while
# idle, per QP while an ibv_rc_pingpong runs; the families rxdp-ctl(1)
# names are the ones printed; and the views that stand in for rdma-core's
# tools: the QP's process and peer, the CM id's process, the port's line.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong rping
PY=/usr/bin/python3
$PY -c 'import prometheus_client.parser' 2>/dev/null || skip "needs python3-prometheus-client"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
CTL=$RXDP_BIN/rxdp-ctl

NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
rxdp_hosts "$tmp"

# check FILE JSON idle|live: the format, then the numbers against rxdp-ctl
# --json (live: traffic moves them, the series must be there)
check() {
	$PY - "$1" "$2" "$3" <<'PYEOF'
import json, re, sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
snap = json.load(open(sys.argv[2]))
bad = []

# the format's own rules, line by line
name_re = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*$')
sample_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
helped, typed, seen, series = set(), {}, [], set()
for ln in text.splitlines():
    if ln.startswith('# HELP '):
        n = ln.split()[2]
        if n in helped:
            bad.append('HELP twice: ' + n)
        helped.add(n)
    elif ln.startswith('# TYPE '):
        _, _, n, t = ln.split(' ', 3)
        if n in typed:
            bad.append('TYPE twice: ' + n)
        if n not in helped:
            bad.append('TYPE before HELP: ' + n)
        typed[n] = t
        if t not in ('counter', 'gauge'):
            bad.append('type %s of %s' % (t, n))
        if not name_re.match(n) or not n.startswith('rxdp_'):
            bad.append('name ' + n)
        if (t == 'counter') != n.endswith('_total'):
            bad.append('%s %s: counters, and only they, end in _total' % (t, n))
    elif ln.startswith('#') or not ln:
        bad.append('line: %r' % ln)
    else:
        m = sample_re.match(ln)
        if not m:
            bad.append('sample: %r' % ln)
            continue
        n, labels, v = m.group(1), m.group(3) or '', m.group(4)
        if n not in typed:
            bad.append('sample before its TYPE: ' + ln)
        pos, keys = 0, []
        while pos < len(labels):
            lm = label_re.match(labels, pos)
            if not lm:
                bad.append('labels: %r' % labels)
                break
            keys.append(lm.group(1))
            pos = lm.end()
        if len(set(keys)) != len(keys):
            bad.append('label twice: ' + ln)
        float(v)
        if (n, labels) in series:
            bad.append('series twice: ' + ln)
        series.add((n, labels))

# an independent parser
fams = {f.name: f for f in text_string_to_metric_families(text)}
live = sys.argv[3] == 'live'
def val(name, **lab):
    base = name[:-6] if name.endswith('_total') else name
    for s in fams[base].samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in lab.items()):
            return s.value
    bad.append('no sample %s %s' % (name, lab))
    return None

if val('rxdp_up') != 1:
    bad.append('rxdp_up')
if val('rxdp_devices') != len(snap['devices']):
    bad.append('rxdp_devices')
if val('rxdp_problems') != len(snap['problems']):
    bad.append('rxdp_problems')
for d in snap['devices']:
    dev = d['name']
    if val('rxdp_port_active', device=dev, ifname=d['ifname']) != (d['port_state'] == 'ACTIVE'):
        bad.append('port_active of ' + dev)
    if val('rxdp_port_active_mtu_bytes', device=dev) != d['active_mtu']:
        bad.append('active_mtu of ' + dev)
    for k, v in d['xdp_verdicts'].items():
        if val('rxdp_xdp_packets_total', device=dev, verdict=k) != v and not live:
            bad.append('verdict %s of %s: %s' % (k, dev, v))
    for k, v in d['counters'].items():
        if val('rxdp_%s_total' % k, device=dev) != v and not live:
            bad.append('counter %s of %s: %s' % (k, dev, v))
    if not d['classes']:
        bad.append('no service class of ' + dev)
    for k, c in enumerate(d['classes']):
        lab = {'device': dev, 'class': str(k), 'sls': c['sls']}
        for f, j in (('sent_packets', 'tx_packets'), ('sent_bytes', 'tx_bytes'),
                     ('received_packets', 'rx_packets'),
                     ('received_bytes', 'rx_bytes')):
            if val('rxdp_class_%s_total' % f, **lab) != c[j] and not live:
                bad.append('class %d %s of %s: %s' % (k, f, dev, c[j]))
for q in snap['qps']:
    lab = dict(device=q['device'], qpn='%#x' % q['qpn'], type=q['type'])
    if val('rxdp_qp_info', state=q['state'], pid=str(q['pid']), **lab) != 1:
        bad.append('qp_info %s' % lab)
    if q['counters'] is None:
        continue
    for k in q['counters']:
        val('rxdp_qp_%s_total' % k, **lab)
    for k in ('rx_packets', 'rx_bytes', 'rx_drops'):
        val('rxdp_qp_xdp_%s_total' % k, **lab)
    if val('rxdp_qp_dcqcn_rate_bits_per_second', **lab) != q['rate_kbps'] * 1000 and not live:
        bad.append('dcqcn rate %s' % lab)
    val('rxdp_qp_dcqcn_alpha', **lab)
    if abs(val('rxdp_qp_rtt_seconds', **lab) - q['srtt_us'] / 1e6) > 1e-9 and not live:
        bad.append('rtt %s' % lab)
if bad:
    print('\n'.join(bad[:20]))
    sys.exit(1)
print('%d families, %d series, %d QPs' % (len(typed), len(series), len(snap['qps'])))
PYEOF
}

# names FILE JSON: the families printed are those rxdp-ctl(1)'s METRICS
# section names, both ways (COUNTER there: each hw_counters name)
names() {
	$PY - "$root/dist/man/rxdp-ctl.1" "$1" "$2" <<'PYEOF'
import json, re, sys
man = open(sys.argv[1]).read()
text = open(sys.argv[2]).read()
snap = json.load(open(sys.argv[3]))
sec = man.split('\n.SH METRICS\n', 1)[1].split('\n.SH ', 1)[0]
documented = []
for ln in sec.splitlines():
    m = re.match(r'^\.(B|BI) (rxdp_\S*)(?: (COUNTER) (\S+))?$', ln)
    if m and (m.group(1) == 'B') == (m.group(3) is None):
        documented.append(m.group(2) + ('%s' + m.group(4) if m.group(3) else ''))
counters = sorted(snap['devices'][0]['counters'])
printed = set(re.findall(r'^# TYPE (\S+) ', text, re.M))
expanded = set()
bad = []
for d in documented:
    got = {d % c for c in counters} if '%s' in d else {d}
    missing = got - printed
    if missing:
        bad.append('documented, not printed: ' + ' '.join(sorted(missing)))
    expanded |= got
for n in sorted(printed - expanded):
    bad.append('printed, not in rxdp-ctl(1): ' + n)
if bad or len(documented) < 10:
    print('\n'.join(bad) or 'too few names in rxdp-ctl(1)')
    sys.exit(1)
print('%d names in rxdp-ctl(1), %d families printed' % (len(documented), len(printed)))
PYEOF
}

# traffic first, then the device's numbers while nothing moves
gid=$gidA
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gid" -c -n 200 -s 2048 >/dev/null 2>&1 &
srv=$!
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
	fail "the pingpong server does not listen"
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gid" -c -n 200 -s 2048 "$ADDR_A" >/dev/null 2>&1 ||
	fail "pingpong"
wait $srv || fail "pingpong server"
ip netns exec "$NS_A" "$CTL" metrics >"$tmp/m" || fail "rxdp-ctl metrics"
ip netns exec "$NS_A" "$CTL" --json all >"$tmp/j" || fail "rxdp-ctl --json"
out=$(check "$tmp/m" "$tmp/j" idle) || fail "metrics after the pingpong: $out"
names_out=$(names "$tmp/m" "$tmp/j") || fail "rxdp-ctl(1)'s metric names: $names_out"
echo "ok: $names_out"
grep -q '^rxdp_sent_pkts_total{device="'"$devA"'",ifname="'"$IF_A"'"} [1-9]' "$tmp/m" ||
	fail "no packets counted: $(grep sent_pkts "$tmp/m")"
grep -q '^rxdp_xdp_packets_total{.*verdict="redirect"} [1-9]' "$tmp/m" ||
	fail "no redirect verdicts: $(grep redirect "$tmp/m")"
echo "ok: after a pingpong: $out"

# QPs while a pingpong runs (its numbers move: the series must be there)
verbs "$NS_A" ibv_rc_pingpong -d "$devA" -g "$gid" -n 1000000 -s 64 >/dev/null 2>&1 &
srv=$!
wait_until 10 bash -c "ip netns exec $NS_A ss -ltn | grep -q ':18515 '" ||
	fail "the pingpong server does not listen"
verbs "$NS_B" ibv_rc_pingpong -d "$devB" -g "$gid" -n 1000000 -s 64 "$ADDR_A" >/dev/null 2>&1 &
cli=$!
on_exit "kill $srv $cli 2>/dev/null"
wait_until 10 sh -c "ip netns exec $NS_A $CTL --json qps | grep -q '\"state\":\"RTS\"'" ||
	fail "no QP in RTS"
ip netns exec "$NS_A" "$CTL" metrics >"$tmp/m" || fail "rxdp-ctl metrics"
ip netns exec "$NS_A" "$CTL" --json all >"$tmp/j" || fail "rxdp-ctl --json"
# the views rdma-core's tools would give: the QP's process and peer (rdma
# resource show qp), the port (rdma link)
ip netns exec "$NS_A" "$CTL" qps >"$tmp/q" || fail "rxdp-ctl qps"
grep -qE "^  $devA +0x[0-9a-f]+ +RC +RTS +[0-9]+ ibv_rc_pingpong +$ADDR_B " "$tmp/q" ||
	fail "rxdp-ctl qps: no process name or peer: $(cat "$tmp/q")"
$PY -c '
import json, sys
q = [q for q in json.load(open(sys.argv[1]))["qps"] if q["state"] == "RTS"]
assert q and q[0]["comm"] == "ibv_rc_pingpong" and q[0]["peer"] == sys.argv[2], q
' "$tmp/j" "$ADDR_B" || fail "rxdp-ctl --json: the QP's comm and peer"
out=$(ip netns exec "$NS_A" "$CTL" links) || fail "rxdp-ctl links: $out"
[ "$out" = "link $devA/1 state ACTIVE physical_state LINK_UP netdev $IF_A active_mtu 4096" ] ||
	[ "$out" = "link $devA/1 state ACTIVE physical_state LINK_UP netdev $IF_A active_mtu 1024" ] ||
	fail "rxdp-ctl links: $out"
kill $srv $cli 2>/dev/null
out=$(check "$tmp/m" "$tmp/j" live) || fail "metrics with QPs: $out"
grep -q '^rxdp_qp_info{.*type="RC",state="RTS"' "$tmp/m" || fail "no RC QP in RTS: $(grep qp_info "$tmp/m")"
grep -q '^rxdp_qp_sent_pkts_total{.*type="RC"} [1-9]' "$tmp/m" ||
	fail "the QP's counters: $(grep qp_sent_pkts "$tmp/m")"
echo "ok: with QPs: $out"

# the CM's ids as rdma resource show cm_id gives the kernel's: the owner's
# process name and the addresses
verbs "$NS_A" rping -s -a "$ADDR_A" -p 7174 -C 1 >/dev/null 2>&1 &
rp=$!
on_exit "kill $rp 2>/dev/null"
wait_until 10 sh -c "ip netns exec $NS_A $CTL cm | grep -qE '^  [0-9]+ +[0-9]+ rping +[A-Z]+ +listen +[^ ]+ +$ADDR_A:7174 '" ||
	fail "rxdp-ctl cm: no rping listening: $(ip netns exec "$NS_A" "$CTL" cm)"
ip netns exec "$NS_A" "$CTL" --json cm | $PY -c '
import json, sys
ids = json.load(sys.stdin)["cm_ids"]
assert any(i["comm"] == "rping" and i["local"] == sys.argv[1] + ":7174" for i in ids), ids
' "$ADDR_A" || fail "rxdp-ctl --json cm: the id's comm"
kill $rp 2>/dev/null
echo "ok: rxdp-ctl cm names the process (rping) and its address"

# a problem, as a label
ip -n "$NS_A" link set dev "$IF_A" xdp off
wait_until 5 sh -c "ip netns exec $NS_A $CTL metrics | grep -q '^rxdp_problems 1$'" ||
	fail "rxdp_problems after xdp off: $(ip netns exec "$NS_A" "$CTL" metrics | grep problem)"
ip netns exec "$NS_A" "$CTL" metrics >"$tmp/m"
grep -q '^rxdp_problem_info{problem=".*the XDP program is gone.*"} 1$' "$tmp/m" &&
	grep -q '^rxdp_port_active{device="'"$devA"'",ifname="'"$IF_A"'"} 0$' "$tmp/m" ||
	fail "the problem and the port: $(grep -E 'problem|port_active' "$tmp/m")"
echo "ok: a problem: rxdp_problems 1, rxdp_problem_info, rxdp_port_active 0"
echo "PASS: rxdp-ctl metrics"
