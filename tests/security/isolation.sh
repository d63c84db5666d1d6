#!/usr/bin/env bash
# One user cannot stall, starve or exhaust the HCA every user shares
# (rxdpd): each attack below is made by unprivileged users (hog, as uid
# 65534 or 60001-60004) on host A while a victim (uid 65533) runs checked
# streams between the two hosts, one after another (wirecheck: RC, every
# operation, every byte checked at the receiver). During every attack the
# victim keeps going: each attack holds on until the victim has finished
# runs of its own while it holds (a stalled victim never does: the wait
# for it fails), and every run is whole.
#  - storm: the attacker's own transfers go through the batched path (a
#    shared memfd mapping) while it keeps its mmap lock busy with
#    mprotect: only its memory thread in rxdpd waits; and again with its
#    memory in on-demand paging MRs (private memory, faulted in)
#  - jump: 8 QPs of the largest size whose producer indexes leap by 2^31-1
#    are each a fatal error at once (IBV_EVENT_QP_FATAL), and the attacker
#    exits leaving them: teardown costs the others nothing
#  - qps: QPs until refused: the user's memory budget (--user-mem 512M
#    here) refuses with ENOMEM, and rxdpd stays below it
#  - contexts: four users open connections until refused: a user who holds
#    none still gets one, and root
#  - fuse: an MR over a FUSE file whose server withholds its answers until
#    the victim has run 10 times: the attacker's RDMA Read waits, the victim
#    never waits as long as the hold lasts (its longest stall, wirecheck's
#    max_gap_ms, is shorter)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd setpriv prlimit
hog=$root/build/tests/security/hog
[ -x "$hog" ] || fail "$hog not built"

tmp=$(mktemp -d)
chmod 755 "$tmp"
on_exit "rm -rf '$tmp'"
NETNS_NO_IPV6=1 netns_pair
RXDPD_ARGS="--user-mem 512M" rxdp_hosts "$tmp"
errors=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*" >&2; errors=$((errors + 1)); }
as() { echo setpriv --reuid="$1" --regid="$1" --clear-groups; }

# The victim: checked streams, until $tmp/stop appears; each run adds a
# line "MAX_GAP_MS" to $tmp/victim.runs (its longest stall)
WK_DIR=$tmp WK_TWRAP=$(as 65533) WK_CWRAP=$(as 65533) WK_TIMEOUT=60
victim() {
	local i=0
	while [ ! -e "$tmp/stop" ]; do
		i=$((i + 1))
		wirecheck_run victim 19600 -t rc -o all -s 1-4096 -n 500 >/dev/null 2>"$tmp/victim.err" ||
			{ echo "run $i:"; cat "$tmp/victim.err"; } >>"$tmp/victim.fail"
		wirecheck_summary victim max_gap_ms >>"$tmp/victim.runs"
	done
}
runs() { wc -l <"$tmp/victim.runs"; }
# victim_runs N: wait (60 s at most) until the victim finished N more runs
victim_runs() {
	local want=$(($(runs) + $1))
	wait_until 60 bash -c "[ \$(wc -l <$tmp/victim.runs) -ge $want ] || [ -e $tmp/victim.fail ]" &&
		[ ! -e "$tmp/victim.fail" ]
}

# during NAME CMD...: CMD (the attack) while the victim runs
during() {
	local name=$1 r0
	shift
	rm -f "$tmp/stop" "$tmp/victim.fail"
	: >"$tmp/victim.runs"
	victim &
	local v=$!
	on_exit "kill $v 2>/dev/null"
	victim_runs 1 || bad "$name: the victim did not start"
	r0=$(runs)
	"$@"
	# storm's attacker ran for its seconds: the victim ran meanwhile
	[ "$(runs)" -gt "$r0" ] || bad "$name: no run of the victim finished during the attack"
	touch "$tmp/stop"
	wait $v
	if [ -e "$tmp/victim.fail" ]; then
		bad "$name: the victim's stream failed: $(cat "$tmp/victim.fail")"
	else
		ok "$name: the victim's $(runs) checked runs all whole, $(($(runs) - r0)) during the attack"
	fi
}

attack_storm() { # [odp]
	if verbs "$NS_A" $(as 65534) "$hog" "$devA" "$gidA" storm 8 "$@" >"$tmp/storm" 2>&1; then
		ok "storm${1:+ $1}: $(grep storm: "$tmp/storm") ($(grep mprotect "$tmp/storm"))"
	else
		bad "storm${1:+ $1}: the attacker could not run: $(tail -n 2 "$tmp/storm")"
	fi
}
during storm attack_storm
during "ODP storm" attack_storm odp

attack_jump() {
	if verbs "$NS_A" $(as 65534) "$hog" "$devA" "$gidA" jump 8 >"$tmp/jump" 2>&1; then
		ok "jump: $(cat "$tmp/jump")"
	else
		bad "jump: $(cat "$tmp/jump")"
	fi
	# the victim goes on while rxdpd tears the attacker's QPs down
	victim_runs 2 || bad "jump: the victim stalled during the teardown"
}
during "jump and teardown" attack_jump

attack_qps() {
	local rss0 rss1 pid
	pid=$(for p in $(ip netns pids "$NS_A"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = rxdpd ] && echo "$p"; done)
	rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	coproc HOG { verbs "$NS_A" $(as 65534) "$hog" "$devA" "$gidA" qps 2>"$tmp/qps.err"; }
	read -r line <&"${HOG[0]}"
	victim_runs 2 || bad "qps: the victim stalled while the attacker held its QPs"
	rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	exec {HOG[1]}>&-
	wait "$HOG_PID"
	case $line in
	"qps "*" errno 12") ok "qps: $line (ENOMEM: the budget); rxdpd's RSS $rss0 -> $rss1 KiB" ;;
	*) bad "qps: $line" ;;
	esac
	[ $((rss1 - rss0)) -lt $((512 * 1024)) ] ||
		bad "qps: rxdpd grew by $(((rss1 - rss0) / 1024)) MiB, over the 512 MiB budget"
}
during "memory budget" attack_qps

attack_contexts() {
	local pids=() fds=()
	for uid in 60001 60002 60003 60004; do
		coproc C { verbs "$NS_A" prlimit --nofile=4096 $(as $uid) \
			"$hog" "$devA" "$gidA" contexts 2>"$tmp/ctx.$uid.err"; }
		read -r line <&"${C[0]}"
		echo "  user $uid: $line"
		pids+=("$C_PID")
		exec {fd}>&"${C[1]}"
		fds+=("$fd")
		exec {C[1]}>&- {C[0]}<&-
	done
	# one that holds none, and root
	if verbs "$NS_A" $(as 65532) ibv_devinfo -d "$devA" >/dev/null 2>&1 &&
		verbs "$NS_A" ibv_devinfo -d "$devA" >/dev/null 2>&1; then
		ok "contexts: with four users' connections held, a fifth user and root still get one"
	else
		bad "contexts: a user who holds none (or root) got no connection"
	fi
	# the victim's runs meanwhile need connections too
	victim_runs 2 || bad "contexts: the victim stalled while the slots were held"
	for fd in "${fds[@]}"; do exec {fd}>&-; done
	wait "${pids[@]}" 2>/dev/null
}
during "connection slots" attack_contexts

attack_fuse() {
	mkdir -p "$tmp/fuse"
	touch "$tmp/hold"
	/usr/bin/python3 "$root/tests/security/holdfs.py" "$tmp/fuse" "$tmp/hold" \
		>"$tmp/holdfs.log" 2>&1 &
	local fs=$!
	on_exit "umount -l '$tmp/fuse' 2>/dev/null; kill $fs 2>/dev/null"
	if ! wait_until 10 test -e "$tmp/fuse/data"; then
		bad "fuse: the FUSE file system did not come up: $(tail -n 2 "$tmp/holdfs.log")"
		return
	fi
	verbs "$NS_A" $(as 65534) "$hog" "$devA" "$gidA" fuse "$tmp/fuse/data" \
		>"$tmp/fuse.out" 2>&1 &
	local h=$! r0 t0 held gap
	# the server withholds its answers (the attacker's Read waits on one
	# now); the victim goes on, and never waits as long as the hold
	wait_until 30 grep -q "^held" "$tmp/holdfs.log" ||
		bad "fuse: the attacker's memory was never waited for"
	r0=$(runs)
	t0=$(date +%s%N)
	victim_runs 10 || bad "fuse: the victim stalled while the FUSE server held"
	held=$((($(date +%s%N) - t0) / 1000000))
	gap=$(tail -n +$((r0 + 1)) "$tmp/victim.runs" | sort -n | tail -n 1)
	[ "${gap:-$held}" -lt "$held" ] ||
		bad "fuse: the victim stalled ${gap:-?} ms of the hold's $held ms"
	echo "    fuse: the hold lasted $held ms, the victim's longest stall in it $gap ms"
	rm -f "$tmp/hold"
	if wait $h; then
		ok "$(cat "$tmp/fuse.out")"
	else
		bad "fuse: the attacker did not run: $(tail -n 2 "$tmp/fuse.out")"
	fi
	umount -l "$tmp/fuse"
}
# make check installs python3-fusepy, and the kernel here has FUSE: a
# machine without them fails this check rather than skip it
if [ -c /dev/fuse ] && /usr/bin/python3 -c 'import fusepy' 2>/dev/null; then
	during "FUSE-backed MR" attack_fuse
else
	bad "FUSE-backed MR: no /dev/fuse or python3-fusepy"
fi

[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
