#!/usr/bin/env bash
# One user cannot stall, starve or exhaust the HCA every user shares
# (rxdpd): each attack below is made by unprivileged users (hog, as uid
# 65534 or 60001-60004) on host A while a victim (uid 65533) runs checked
# pingpongs (ibv_rc_pingpong -c) between the two hosts, one after another;
# every victim run must finish with no error, during every attack.
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
#  - fuse (where /dev/fuse and fusepy are): an MR over a FUSE file whose
#    server withholds its answers for 6 s: the attacker's RDMA Read waits,
#    nothing else does
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
require_cmd ibv_rc_pingpong setpriv prlimit
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

# The victim: pingpongs, every byte checked, until $tmp/stop appears
victim() {
	local i=0 port=19600
	rm -f "$tmp/stop" "$tmp/victim.fail"
	while [ ! -e "$tmp/stop" ]; do
		i=$((i + 1))
		RXDP_VERBS_TIMEOUT=60 verbs "$NS_B" $(as 65533) ibv_rc_pingpong -c -n 500 \
			-s 4096 -d "$devB" -g "$gidB" -p $port >"$tmp/vs" 2>&1 &
		local s=$!
		wait_until 10 bash -c "ip netns exec $NS_B ss -ltn | grep -q ':$port '"
		if ! RXDP_VERBS_TIMEOUT=60 verbs "$NS_A" $(as 65533) ibv_rc_pingpong -c -n 500 \
			-s 4096 -d "$devA" -g "$gidA" -p $port "$ADDR_B" >"$tmp/vc" 2>&1 ||
			! wait $s; then
			{ echo "run $i:"; tail -n 3 "$tmp/vc" "$tmp/vs"; } >>"$tmp/victim.fail"
			wait $s 2>/dev/null
		fi
	done
	echo "$i" >"$tmp/victim.runs"
}

# during NAME CMD...: CMD (the attack) while the victim runs
during() {
	local name=$1
	shift
	victim &
	local v=$!
	sleep 1
	"$@"
	touch "$tmp/stop"
	wait $v
	if [ -e "$tmp/victim.fail" ]; then
		bad "$name: the victim's pingpong failed: $(cat "$tmp/victim.fail")"
	else
		ok "$name: the victim's $(cat "$tmp/victim.runs") pingpong runs all finished"
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
	sleep 3 # the victim goes on while rxdpd tears the attacker's QPs down
}
during "jump and teardown" attack_jump

attack_qps() {
	local rss0 rss1 pid
	pid=$(for p in $(ip netns pids "$NS_A"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = rxdpd ] && echo "$p"; done)
	rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	coproc HOG { verbs "$NS_A" $(as 65534) "$hog" "$devA" "$gidA" qps 2>"$tmp/qps.err"; }
	read -r line <&"${HOG[0]}"
	sleep 2
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
	sleep 2 # the victim's runs meanwhile need connections too
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
	local h=$!
	sleep 6 # the server withholds its answers; the victim goes on
	rm -f "$tmp/hold"
	if wait $h; then
		ok "$(cat "$tmp/fuse.out")"
	else
		bad "fuse: the attacker did not run: $(tail -n 2 "$tmp/fuse.out")"
	fi
	umount -l "$tmp/fuse"
}
if [ -c /dev/fuse ] && /usr/bin/python3 -c 'import fusepy' 2>/dev/null; then
	during "FUSE-backed MR" attack_fuse
else
	echo "skip FUSE-backed MR: no /dev/fuse or python3-fusepy"
fi

[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
