#!/usr/bin/env bash
# End-to-end test of rxdp-loader: two network namespaces joined by a veth
# pair whose ends have the same name; rxdp attached on both ends from inside
# `ip netns exec`; pins checked from a second `ip netns exec` and from
# outside; RoCEv2 packets sent from B; verdict counters read back through
# `rxdp-loader status` and bpftool; every CLI error case; detach.
#
# Runs in a private mount namespace of its own (unshare -m) with
# /run/rxdp/bpffs unmounted there, so the loader's own bpffs mount (into the
# mount namespace of its nearest ancestor outside `ip netns exec`) is what is
# tested, and nothing of it leaks to the machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd ip bpftool unshare setpriv stat
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"

if [ "${RXDP_E2E_PRIVATE_MNT:-}" != 1 ]; then
	trap - EXIT
	exec unshare --mount --propagation private \
		env RXDP_E2E_PRIVATE_MNT=1 "$0" "$@"
fi

LOADER=${RXDP_LOADER:-$root/build/bin/rxdp-loader}
SEND="/usr/bin/python3 $root/tests/lib/roce_send.py"
[ -x "$LOADER" ] || fail "$LOADER not built (make build/bin/rxdp-loader)"

step() { printf '# %s\n' "$*"; }
# a failure that lets the remaining independent checks run first
deferred=
later_fail() {
	echo "FAIL (reported at the end): $*" >&2
	deferred="$deferred
$*"
}

# Only in our private copy of the mount table: start without a bpffs
for _ in 1 2 3 4; do
	[ "$(stat -f -c %T $RXDP_BPFFS_ROOT 2>/dev/null)" = bpf_fs ] || break
	umount -l $RXDP_BPFFS_ROOT || fail "cannot unmount $RXDP_BPFFS_ROOT here"
done
[ "$(stat -f -c %T $RXDP_BPFFS_ROOT 2>/dev/null)" != bpf_fs ] ||
	fail "$RXDP_BPFFS_ROOT still a bpffs"

NETNS_SAME_IFNAME=1 NETNS_NO_IPV6=1 NETNS_STATIC_NEIGH=1 netns_pair
IF=$IF_A # the same name in both namespaces
BR=rxbr$RXDP_TEST_ID
ip -n "$NS_A" link add "$BR" type bridge || fail "cannot create a bridge"
ip -n "$NS_A" link set "$BR" up
on_exit "ip netns exec $NS_A $LOADER detach $IF"
on_exit "ip netns exec $NS_B $LOADER detach $IF"
on_exit "ip netns exec $NS_A $LOADER detach $BR"

# --- attach -----------------------------------------------------------------
step "attach on both ends (native mode)"
out=$(nsa "$LOADER" attach "$IF" --mode native) || fail "attach in $NS_A: $out"
echo "$out"
out=$(nsb "$LOADER" attach "$IF" --mode native) || fail "attach in $NS_B: $out"
echo "$out"

[ "$(stat -f -c %T $RXDP_BPFFS_ROOT)" = bpf_fs ] ||
	fail "the loader's bpffs is not visible where it was started from"
DIR_A=$(rxdp_pin_dir "$NS_A" "$IF")
DIR_B=$(rxdp_pin_dir "$NS_B" "$IF")
[ "$DIR_A" != "$DIR_B" ] || fail "both namespaces pin to $DIR_A"
for m in qp_ctx qp_psn qp_stats stats xsks; do
	[ -e "$DIR_A/$m" ] || fail "$DIR_A/$m missing (seen from outside)"
	[ -e "$DIR_B/$m" ] || fail "$DIR_B/$m missing (seen from outside)"
	nsa test -e "$DIR_A/$m" || fail "$DIR_A/$m not seen from ip netns exec"
done
id_a=$(bpftool -j map show pinned "$DIR_A/stats" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
id_b=$(bpftool -j map show pinned "$DIR_B/stats" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
[ -n "$id_a" ] && [ -n "$id_b" ] && [ "$id_a" != "$id_b" ] ||
	fail "same-named interfaces share maps (ids '$id_a' '$id_b')"

st=$(nsa "$LOADER" status "$IF") || fail "status: $st"
grep -qx "$IF: attached, mode native" <<<"$st" || fail "status mode: $st"
grep -qx "pins: $DIR_A" <<<"$st" || fail "status pin path: $st"
# no rxdpd here: no AF_XDP socket on the interface, in the kernel's list,
# or unknown where the kernel keeps none (and no rxdpd can tell)
grep -qx -e "xsks: 0 (rxdpd binds them at the device's first verbs context)" \
	-e "xsks: unknown (this kernel does not list AF_XDP sockets: CONFIG_XDP_SOCKETS_DIAG; rxdpd does not serve it)" \
	<<<"$st" || fail "status sockets: $st"
# where it asks rxdpd: a control socket that takes the connection and never
# answers (between the two rxdpds of a restart, rxdpd --fdstore) is given up
# on after 2 s, not waited for (the unit's start asks this first)
if grep -q '^xsks: unknown' <<<"$st"; then
	tmp=$(mktemp -d)
	on_exit "rm -rf '$tmp'"
	# (exec'd all the way: $! is python itself)
	ip netns exec "$NS_A" /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("\0rxdp/rxdpd"); s.listen(4); print("listening", flush=True)
time.sleep(30)' >"$tmp/mute" 2>&1 &
	mute=$!
	on_exit "kill $mute 2>/dev/null"
	wait_until 10 grep -q listening "$tmp/mute" || fail "the mute listener"
	t0=$(date +%s%N)
	st_mute=$(nsa timeout 20 "$LOADER" status "$IF") || fail "status, rxdpd mute: $st_mute"
	ms=$((($(date +%s%N) - t0) / 1000000))
	grep -q '^xsks: unknown (.*; rxdpd does not answer)$' <<<"$st_mute" &&
		[ "$ms" -lt 10000 ] || fail "status with a mute rxdpd ($ms ms): $st_mute"
	kill "$mute"
	wait "$mute" 2>/dev/null
	echo "ok: status gives up on a control socket that does not answer ($ms ms)"
fi
st_all=$(nsb "$LOADER" status) || fail "status (all): $st_all"
grep -qx "pins: $DIR_B" <<<"$st_all" || fail "status (all) in B: $st_all"
grep -q "$BR" <<<"$(nsa "$LOADER" status)" && fail "status lists $BR"

# --- a QP context, written the way any tool can --------------------------------
le32() { printf '%02x %02x %02x %02x' $(($1 & 255)) $((($1 >> 8) & 255)) \
	$((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }
QPN=$((0x102))
UNKNOWN_QPN=$((0x999))
# struct rxdp_qp_ctx: qpn, qp_type RC(2), state RESET(0), pkey 0xffff,
# dest_qpn, qkey, owner_slot, owner_pid, flags, path_mtu 3 + pad, access, pad,
# then the peer's and our address and the peer's MAC (none before RTR)
ctx="$(le32 $QPN) 02 00 ff ff $(le32 0x203) $(le32 0) $(le32 0) $(le32 0) \
$(le32 0) 03 00 00 00 $(le32 0) $(le32 0) $(printf '00 %.0s' $(seq 40))"
# shellcheck disable=SC2086
bpftool map update pinned "$DIR_A/qp_ctx" key hex $(le32 $QPN) value hex $ctx ||
	fail "cannot insert a QP context"
dump=$(bpftool map dump pinned "$DIR_A/qp_ctx")
grep -q '"qp_type": 2' <<<"$dump" && grep -q '"pkey": 65535' <<<"$dump" &&
	grep -q '"dest_qpn": 515' <<<"$dump" ||
	fail "bpftool does not dump qp_ctx field by field: $dump"
st=$(nsa "$LOADER" status "$IF")
grep -q "^qps: 1$" <<<"$st" &&
	grep -q "qpn 0x000102 type RC state RESET pkey 0xffff dest_qpn 0x000203" <<<"$st" ||
	fail "status does not show the QP: $st"

# --- traffic from B, verdicts in A ----------------------------------------------
verdicts() { # NAME VALUE lines from status
	nsa "$LOADER" status "$IF" | awk '/^verdicts:/{v=1; next} /^[^ ]/{v=0} v{print $1, $2}'
}
declare -A before after
while read -r k v; do before[$k]=$v; done < <(verdicts)
[ ${#before[@]} -ge 15 ] || fail "status shows ${#before[@]} verdict counters"

txb() { ip -n "$NS_B" -s -j link show "$IF_B" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'; }
tx0=$(txb)
step "send: 3 unknown QP, 2 QP in RESET, 4 bad TVer, 5 non-RoCE UDP"
nsb $SEND "$ADDR_A" --qpn $UNKNOWN_QPN --count 3 --payload-len 8 || fail "send"
nsb $SEND "$ADDR_A" --qpn $QPN --count 2 --payload-len 8 || fail "send"
nsb $SEND "$ADDR_A" --qpn $QPN --tver 1 --count 4 --payload-len 8 || fail "send"
nsb $SEND "$ADDR_A" --port 4792 --raw 00112233445566778899 --count 5 || fail "send"

# nothing but these 14 went from B to A (no ARP, no IPv6), so the
# counters below can be checked exactly
tx1=$(txb)
[ $((tx1 - tx0)) = 14 ] || later_fail "B sent $((tx1 - tx0)) packets, not 14"
declare -A want=(
	[drop_unknown_qp]=3 [drop_qp_state]=2 [drop_bad_tver]=4 [pass_not_roce]=5
)
counted() {
	local k
	after=()
	while read -r k v; do after[$k]=$v; done < <(verdicts)
	for k in "${!want[@]}"; do
		[ $((${after[$k]:-0} - ${before[$k]:-0})) -ge "${want[$k]}" ] || return 1
	done
}
wait_until 10 counted || true # then check exactly, whatever came
bad=0
for k in "${!before[@]}"; do
	d=$((${after[$k]:-0} - ${before[$k]}))
	if [ "$d" != "${want[$k]:-0}" ]; then
		echo "verdict $k moved by $d, expected ${want[$k]:-0}" >&2
		bad=1
	fi
done
[ $bad = 0 ] || later_fail "verdict counters (status $IF in $NS_A): $(nsa "$LOADER" status "$IF")"

# the same numbers straight from the pinned map, summed over CPUs
sum_stat() { # sum_stat INDEX
	bpftool -j map lookup pinned "$DIR_A/stats" key hex $(le32 "$1") |
		/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(int(x["value"]) for x in d["formatted"]["values"]))'
}
[ "$(sum_stat 6)" = "${after[drop_unknown_qp]}" ] ||
	later_fail "bpftool stats[6] $(sum_stat 6) != status drop_unknown_qp ${after[drop_unknown_qp]}"
[ "$(sum_stat 0)" = "${after[pass_not_roce]}" ] ||
	later_fail "bpftool stats[0] != status pass_not_roce"
# B saw none of it as RoCE
nsb "$LOADER" status "$IF" | grep -qE '^  drop_(unknown_qp|qp_state|bad_tver) +[1-9]' &&
	later_fail "B counted A's drops"

# --- bad use: one line, non-zero exit, nothing changed ---------------------
snapshot() {
	find "$RXDP_BPFFS_ROOT" | sort
	ip -n "$NS_A" -d link show | grep -E 'prog/xdp|xdp'
	ip -n "$NS_B" -d link show | grep -E 'prog/xdp|xdp'
	nsa "$LOADER" status "$IF" | grep -v '^  [a-z_]* *[0-9]*$'
}
expect_error() { # DESCRIPTION CMD...: must fail with exactly one line on stderr
	local what=$1 rc
	shift
	local snap0 snap1 err out
	snap0=$(snapshot)
	out=$("$@" 2>/tmp/rxdp-e2e-err.$$)
	rc=$?
	err=$(cat /tmp/rxdp-e2e-err.$$)
	rm -f /tmp/rxdp-e2e-err.$$
	[ $rc -ne 0 ] || fail "$what: exit 0"
	[ -z "$out" ] || fail "$what: printed on stdout: $out"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] ||
		fail "$what: stderr is not one line: $err"
	snap1=$(snapshot)
	[ "$snap0" = "$snap1" ] || fail "$what changed something: $(diff <(echo "$snap0") <(echo "$snap1"))"
	printf 'ok: %-28s -> %s\n' "$what" "$err"
}
# attach_again DESCRIPTION CMD...: rxdp already there as asked: exit 0,
# a note on stdout, nothing changed (scripts need not parse status first)
attach_again() {
	local what=$1 snap0 out rc
	shift
	snap0=$(snapshot)
	out=$("$@" 2>&1)
	rc=$?
	[ $rc = 0 ] || fail "$what: exit $rc: $out"
	grep -q ": already attached (.*, maps pinned in .*: nothing to do$" <<<"$out" || fail "$what says: $out"
	[ "$snap0" = "$(snapshot)" ] || fail "$what changed something"
	printf 'ok: %-28s -> %s\n' "$what" "$out"
}
step "errors"
attach_again "attach again" nsa "$LOADER" attach "$IF"
attach_again "attach again (native)" nsa "$LOADER" attach "$IF" --mode native
attach_again "attach again (frags)" nsa "$LOADER" attach "$IF" --variant frags
expect_error "already attached (skb)" nsb "$LOADER" attach "$IF" --mode skb
expect_error "already attached (linear)" nsb "$LOADER" attach "$IF" --variant linear
expect_error "not attached (detach)" nsa "$LOADER" detach "$BR"
expect_error "not attached (status)" nsa "$LOADER" status "$BR"
expect_error "native XDP refused" nsa "$LOADER" attach "$BR" --mode native
expect_error "unknown interface" nsa "$LOADER" attach "nosuch$RXDP_TEST_ID"
expect_error "unknown interface (detach)" nsa "$LOADER" detach "nosuch$RXDP_TEST_ID"
expect_error "interface name too long" nsa "$LOADER" status "abcdefghijklmnopq"
expect_error "no command" nsa "$LOADER"
expect_error "unknown command" nsa "$LOADER" frob "$IF"
expect_error "attach without IFNAME" nsa "$LOADER" attach
expect_error "extra argument" nsa "$LOADER" detach "$IF" "$IF"
expect_error "bad mode" nsa "$LOADER" attach "$BR" --mode turbo
expect_error "mode without value" nsa "$LOADER" attach "$BR" --mode
expect_error "unknown option" nsa "$LOADER" attach "$BR" --frob
expect_error "--mode with detach" nsa "$LOADER" detach "$IF" --mode skb
expect_error "--variant with status" nsa "$LOADER" status "$IF" --variant linear
expect_error "bad variant" nsa "$LOADER" attach "$BR" --variant turbo
expect_error "not root (attach)" nsa setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$LOADER" attach "$BR"
expect_error "not root (detach)" nsa setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$LOADER" detach "$IF"
# uid 0 without capabilities (a container's root): the loader cannot see
# which program is attached, and must neither take the live attachment for a
# stale one (removing its pins, which took rxdpd's device away) nor say
# anything but that it lacks a right
nocaps() { nsa setpriv --inh-caps=-all --bounding-set=-all "$@"; }
expect_error "no capabilities (attach)" nocaps "$LOADER" attach "$IF"
expect_error "no capabilities (detach)" nocaps "$LOADER" detach "$IF"
expect_error "no capabilities (status)" nocaps "$LOADER" status "$IF"
err=$(nocaps "$LOADER" attach "$IF" 2>&1)
grep -q 'CAP_SYS_ADMIN' <<<"$err" || fail "no capabilities: the error names no capability: $err"

step "a program the verifier refuses: its log is shown, without -v"
REFUSED=$root/build/tests/e2e/refused.bpf.o
[ -e "$REFUSED" ] || fail "$REFUSED not built (make test)"
snap0=$(snapshot)
out=$(RXDP_XDP_OBJECT=$REFUSED nsa "$LOADER" attach "$BR" --mode skb 2>&1)
rc=$?
[ $rc = 1 ] || fail "refused program: exit $rc: $out"
head -1 <<<"$out" | grep -q "^rxdp-loader: $BR: the kernel's verifier refused the XDP program rxdp_xdp (.*); its log:$" ||
	fail "refused program, first line: $out"
grep -q "invalid access to packet" <<<"$out" ||
	fail "refused program: no verifier log: $out"
[ "$snap0" = "$(snapshot)" ] || fail "a refused program changed something"
echo "ok: the verifier's log of a refused program: $(wc -l <<<"$out") lines"

step "the variant without multi-buffer (kernels before 5.18)"
out=$(nsa "$LOADER" attach "$BR" --mode skb --variant linear) ||
	fail "attach --variant linear: $out"
grep -q "^$BR: attached (skb mode, rxdp_xdp_linear)" <<<"$out" ||
	fail "attach --variant linear says: $out"
nsa "$LOADER" status "$BR" | grep -qx "program: rxdp_xdp_linear (one buffer a frame)" ||
	fail "status of the linear variant: $(nsa "$LOADER" status "$BR")"
attach_again "attach again (linear)" nsa "$LOADER" attach "$BR" --mode skb
expect_error "already attached (frags)" nsa "$LOADER" attach "$BR" --variant frags
nsa "$LOADER" detach "$BR" >/dev/null || fail "detach the linear variant"
nsa "$LOADER" status "$IF" | grep -qx "program: rxdp_xdp (multi-buffer)" ||
	fail "status of the default variant: $(nsa "$LOADER" status "$IF")"

step "skb mode where native is refused"
out=$(nsa "$LOADER" attach "$BR" --mode skb) || fail "skb attach on $BR: $out"
nsa "$LOADER" status "$BR" | grep -qx "$BR: attached, mode skb" ||
	fail "status of $BR: $(nsa "$LOADER" status "$BR")"
# the program removed behind the loader's back: status says so, detach and
# attach clean the stale pins up
ip -n "$NS_A" link set dev "$BR" xdpgeneric off || fail "xdpgeneric off"
nsa "$LOADER" status "$BR" | grep -q "^$BR: not attached (stale pins" ||
	fail "status with stale pins: $(nsa "$LOADER" status "$BR")"
out=$(nsa "$LOADER" attach "$BR" --mode skb) || fail "attach over stale pins: $out"
ip -n "$NS_A" link set dev "$BR" xdpgeneric off || fail "xdpgeneric off"
nsa "$LOADER" detach "$BR" >/dev/null 2>&1 || fail "detach with stale pins"
[ ! -e "$(rxdp_pin_dir "$NS_A" "$BR")" ] || fail "stale pins of $BR left"
expect_error "not attached (after stale)" nsa "$LOADER" detach "$BR"

step "another XDP program on the interface"
obj=/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o
if command -v xdp-loader >/dev/null && [ -e $obj ] &&
	nsa xdp-loader load -m skb "$BR" $obj >/dev/null 2>&1; then
	on_exit "ip netns exec $NS_A xdp-loader unload $BR --all"
	if out=$(nsa "$LOADER" attach "$BR" --mode skb 2>&1); then
		# libxdp's dispatcher works here: both must run side by side
		nsa xdp-loader status "$BR" | grep -q xdpfilt_alw_all ||
			fail "attaching rxdp removed the other program"
		nsa "$LOADER" detach "$BR" >/dev/null || fail "detach $BR"
		nsa xdp-loader status "$BR" | grep -q xdpfilt_alw_all ||
			fail "detaching rxdp removed the other program"
		echo "ok: rxdp ran beside another XDP program (libxdp dispatcher)"
	else
		# no dispatcher (this kernel refuses freplace): a clean refusal
		expect_error "another XDP program" nsa "$LOADER" attach "$BR" --mode skb
	fi
	nsa xdp-loader unload "$BR" --all >/dev/null 2>&1
else
	echo "# (xdp-loader or its xdpfilt object missing: case not run)"
fi

# --- stale pins: a namespace deleted while attached, an interface deleted ------
step "stale pins: status lists them, clean removes them"
NS_C=rxc$RXDP_TEST_ID
netns_add "$NS_C"
ip -n "$NS_C" link add rxs0 type veth peer name rxs1 || fail "veth in $NS_C"
ip -n "$NS_C" link set rxs0 up
ip netns exec "$NS_C" "$LOADER" attach rxs0 --mode skb >/dev/null || fail "attach in $NS_C"
DIR_C=$RXDP_BPFFS_ROOT/net$(netns_inode "$NS_C")
[ -e "$DIR_C/rxs0/qp_ctx" ] || fail "no pins in $DIR_C"
ip netns del "$NS_C" || fail "ip netns del $NS_C"
ip -n "$NS_A" link add rxg$RXDP_TEST_ID type veth peer name rxh$RXDP_TEST_ID ||
	fail "a veth in A"
nsa "$LOADER" attach rxg$RXDP_TEST_ID --mode skb >/dev/null || fail "attach rxg$RXDP_TEST_ID"
ip -n "$NS_A" link del rxg$RXDP_TEST_ID
st=$(nsa "$LOADER" status)
grep -qxF "stale pins: $DIR_C (its network namespace no longer exists)" <<<"$st" ||
	fail "status does not list $DIR_C: $st"
grep -qxF "stale pins: $(rxdp_pin_dir "$NS_A" rxg$RXDP_TEST_ID) (the interface no longer exists)" <<<"$st" ||
	fail "status does not list the gone interface's pins: $st"
# and an interface still there whose program was taken off
nsa "$LOADER" attach "$BR" --mode skb >/dev/null || fail "attach $BR"
ip -n "$NS_A" link set dev "$BR" xdpgeneric off || fail "xdpgeneric off"
snap0=$(find "$DIR_A" "$DIR_B" | sort)
out=$(nsa "$LOADER" clean) || fail "clean: $out"
grep -qxF "removed $(rxdp_pin_dir "$NS_A" "$BR") (rxdp is not attached to the interface)" <<<"$out" ||
	fail "clean left $BR's pins: $out"
echo "$out"
grep -qxF "removed $DIR_C (its network namespace no longer exists)" <<<"$out" ||
	fail "clean says: $out"
[ ! -e "$DIR_C" ] || fail "$DIR_C left after clean"
[ ! -e "$(rxdp_pin_dir "$NS_A" rxg$RXDP_TEST_ID)" ] || fail "the gone interface's pins left after clean"
[ "$snap0" = "$(find "$DIR_A" "$DIR_B" | sort)" ] || fail "clean touched live pins"
nsa "$LOADER" status | grep -q "^stale pins" && fail "status after clean: $(nsa "$LOADER" status)"
[ "$(nsa "$LOADER" clean)" = "no stale pins" ] || fail "clean twice: $(nsa "$LOADER" clean)"
echo "ok: stale pins listed by status, removed by clean, live ones kept"

# --- detach -------------------------------------------------------------------
step "detach"
out=$(nsa "$LOADER" detach "$IF") || fail "detach in A: $out"
[ ! -e "$DIR_A" ] || fail "$DIR_A still there after detach"
[ -e "$DIR_B/qp_ctx" ] || fail "detaching A removed B's pins"
nsb "$LOADER" status "$IF" | grep -qx "$IF: attached, mode native" ||
	fail "detaching A detached B"
ip -n "$NS_A" -d link show "$IF" | grep -q 'prog/xdp' && fail "A still has an XDP program"
out=$(nsb "$LOADER" detach "$IF") || fail "detach in B: $out"
[ ! -e "$DIR_B" ] || fail "$DIR_B still there after detach"
ip -n "$NS_B" -d link show "$IF" | grep -q 'prog/xdp' && fail "B still has an XDP program"
left=$(find "$RXDP_BPFFS_ROOT" -mindepth 1 -name "net$(netns_inode "$NS_A")" -o \
	-mindepth 1 -name "net$(netns_inode "$NS_B")")
[ -z "$left" ] || fail "left behind: $left"
nsa "$LOADER" status | grep -q "not attached to any interface" ||
	fail "status after detach: $(nsa "$LOADER" status)"
[ -z "$deferred" ] || fail "$deferred"
echo "PASS: rxdp-loader end to end"
