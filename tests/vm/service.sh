#!/usr/bin/env bash
# rxdp as a host runs it: the Debian package built from the tree, installed
# with dpkg in two Debian 12 guests whose PID 1 is systemd (tests/vm/variant.sh
# systemd), rxdp.service configured and started, and programs run on the
# installed library only (nothing of the tree's build/ but the package):
#  - started with no interface configured: active, its status says why it
#    serves nothing
#  - INTERFACES="eth0": active once rxdpd is ready (Type=notify), status
#    "serving rxdp_eth0", rxdpd's lines in the journal with their
#    priorities, rxdpd without CAP_SYS_ADMIN and with CAP_NET_RAW
#  - checked RC and UD streams (wirecheck) and ibv_rc_pingpong between the
#    guests
#  - systemctl reload under a checked stream: a new rxdpd takes over (the
#    service's main process now), the stream passes, no restart counted
#  - systemctl restart under a checked stream: rxdpd hands over through
#    the unit's file descriptor store (rxdpd --fdstore), the interfaces
#    stay attached, the next rxdpd takes over, the stream passes
#  - an upgrade under a checked stream (dpkg -i of the package repacked a
#    version higher): its postinst reloads the unit, the new rxdpd takes
#    over, the stream passes
#  - an upgrade from an earlier release (RXDP_VM_UPGRADE_FROM, a commit:
#    0970c26 by default, the last that landed before the unit's descriptor
#    store; empty: none): its package (versioned ~prev) put back in guest A
#    and started, then this tree's installed over it under a checked
#    stream, and then a restart under one (its rxdpd names its successor
#    before that one is systemd's child)
#  - rxdpd killed: systemd starts it again (Restart=on-failure), it serves
#  - stopped: the XDP program and its pins are gone, the store empty
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/vm/lib.sh"

require_root
require_cmd qemu-system-x86_64 timeout dpkg-buildpackage dh git

# the package, from a copy of the tree as it is (tests/install/deb.sh checks
# it further), where the guests see it
version=$(cat "$root/VERSION")
pkgdir=$root/build/vm-pkg-$RXDP_TEST_ID
src=$(mktemp -d)/rxdp-$version
on_exit "rm -rf '$(dirname "$src")' '$pkgdir'"
mkdir -p "$src" "$pkgdir"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp -a --parents -t "$src") ||
	fail "cannot copy the tree"
(cd "$src" && dpkg-buildpackage -b -us -uc -j2) >"$pkgdir/build.log" 2>&1 || {
	tail -n 30 "$pkgdir/build.log"
	fail "dpkg-buildpackage"
}
cp "$(dirname "$src")/rxdp_${version}_amd64.deb" "$pkgdir/" || fail "no .deb"
deb=/rxdp/build/vm-pkg-$RXDP_TEST_ID/rxdp_${version}_amd64.deb
echo "ok: built $(basename "$deb")"
# repack DEB VERSION: DEB as rxdp VERSION, in $pkgdir
repack() {
	local x
	x=$(mktemp -d)
	dpkg-deb -R "$1" "$x/p" &&
		sed -i "s/^Version: .*/Version: $2/" "$x/p/DEBIAN/control" &&
		dpkg-deb -b "$x/p" "$pkgdir/rxdp_$2_amd64.deb" >/dev/null ||
		fail "cannot repack $1 as $2"
	rm -rf "$x"
}
# an upgrade's package: the same, a version higher
repack "$pkgdir/rxdp_${version}_amd64.deb" "${version}+next"
next=/rxdp/build/vm-pkg-$RXDP_TEST_ID/rxdp_${version}+next_amd64.deb
# an earlier release's package (RXDP_VM_UPGRADE_FROM), a version lower
prev=
RXDP_VM_UPGRADE_FROM=${RXDP_VM_UPGRADE_FROM-0970c26}
if [ -n "$RXDP_VM_UPGRADE_FROM" ] &&
	! git -C "$root" cat-file -e "$RXDP_VM_UPGRADE_FROM^{commit}" 2>/dev/null; then
	echo "not run: an upgrade from $RXDP_VM_UPGRADE_FROM (not in this clone's history)"
	RXDP_VM_UPGRADE_FROM=
fi
if [ -n "$RXDP_VM_UPGRADE_FROM" ]; then
	psrc=$(mktemp -d)
	on_exit "rm -rf '$psrc'"
	pver=$(git -C "$root" show "$RXDP_VM_UPGRADE_FROM:VERSION") &&
		mkdir "$psrc/rxdp-$pver" &&
		git -C "$root" archive "$RXDP_VM_UPGRADE_FROM" | tar -x -C "$psrc/rxdp-$pver" ||
		fail "cannot take $RXDP_VM_UPGRADE_FROM's tree"
	(cd "$psrc/rxdp-$pver" && dpkg-buildpackage -b -us -uc -j2) >"$pkgdir/prev.log" 2>&1 || {
		tail -n 30 "$pkgdir/prev.log"
		fail "dpkg-buildpackage of $RXDP_VM_UPGRADE_FROM"
	}
	repack "$psrc/rxdp_${pver}_amd64.deb" "${version}~prev"
	prev=/rxdp/build/vm-pkg-$RXDP_TEST_ID/rxdp_${version}~prev_amd64.deb
	echo "ok: built $RXDP_VM_UPGRADE_FROM's package as $(basename "$prev")"
fi

VM_IMAGE=systemd
vm_guests
errors=0
bad() {
	echo "FAIL: $*" >&2
	errors=$((errors + 1))
}
# on NAME CMD: CMD in guest NAME, its output prefixed; its exit code ours
on() {
	local out rc
	out=$(vm_run "$1" 120 "$2")
	rc=$?
	[ -n "$out" ] && sed "s/^/  $1: /" <<<"$out"
	return $rc
}

for g in A B; do
	on $g "dpkg -i $deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }
		systemctl is-enabled rxdp; systemctl is-active rxdp; true" ||
		fail "guest $g: dpkg -i"
done
echo "ok: dpkg -i in both guests (not enabled, not started before it is configured)"

# nothing configured: rxdpd runs and says why it serves nothing
st=$(vm_run A 60 'systemctl start rxdp && systemctl show -p ActiveState,StatusText rxdp')
grep -qx 'ActiveState=active' <<<"$st" &&
	grep -q '^StatusText=no device: rxdp is attached to no interface' <<<"$st" ||
	bad "started with no interface: $st"
echo "ok: no interface configured: $(grep StatusText <<<"$st")"

# configured and started in both
for g in A B; do
	peer=$VM_ADDR_B
	[ $g = B ] && peer=$VM_ADDR_A
	on $g "sed -i 's/^INTERFACES=.*/INTERFACES=\"eth0\"/' /etc/rxdp/rxdp.conf &&
		systemctl enable rxdp 2>/dev/null && systemctl restart rxdp &&
		systemctl show -p ActiveState,StatusText,MainPID rxdp
		export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/rxdp
		for _ in \$(seq 50); do ibv_devinfo -d rxdp_eth0 2>/dev/null | grep -q PORT_ACTIVE && break; sleep 0.2; done
		gid=\$(ibv_devinfo -v -d rxdp_eth0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:.*/\1/p' | head -n 1)
		[ -n \"\$gid\" ] || { rxdp-ctl; journalctl -u rxdp --no-pager | tail; exit 1; }
		printf 'export LD_LIBRARY_PATH=%s\nDEV=rxdp_eth0 GID=%s ADDR=%s PEER=%s STACK=rxdp\n' \
			\"\$LD_LIBRARY_PATH\" \"\$gid\" \"\$(ip -4 -br addr show dev eth0 | awk '{sub(\"/.*\", \"\", \$3); print \$3}')\" $peer >/run/vm.env" ||
		fail "guest $g: rxdp.service did not serve eth0"
done
st=$(vm_run A 30 'systemctl show -p ActiveState,StatusText,MainPID rxdp;
	pid=$(systemctl show -p MainPID --value rxdp); grep CapEff /proc/$pid/status;
	journalctl -u rxdp -o json --no-pager | grep -c "\"PRIORITY\":\"6\".*\"MESSAGE\":\"ready on @rxdp/rxdpd\"\|\"MESSAGE\":\"ready on @rxdp/rxdpd\".*\"PRIORITY\":\"6\""')
grep -qx 'StatusText=serving rxdp_eth0' <<<"$st" || bad "status after start: $st"
eff=$(sed -n 's/^CapEff:\s*//p' <<<"$st")
if [ -z "$eff" ] || (((0x$eff >> 21) & 1)) || ! (((0x$eff >> 13) & 1)); then
	bad "rxdpd's capabilities (CapEff $eff): CAP_SYS_ADMIN (21) must be out, CAP_NET_RAW (13) in"
fi
[ "$(tail -n 1 <<<"$st")" -ge 1 ] 2>/dev/null || bad "'ready' is not in the journal at priority 6: $st"
echo "ok: rxdp.service serves rxdp_eth0 (CapEff $eff, 'ready' at priority info in the journal)"

vm_wirecheck -t rc -o all -s 0-20000 -n 50
vm_wirecheck -t ud -o all -s 0-1024 -n 50
vm_pp ibv_rc_pingpong -n 20 -s 4100

# under_stream NAME CMD: CMD in guest A 3 s into a checked RC stream (8 s,
# vm_wirecheck); st: CMD's output and its "rc=", "pids OLD NEW" (the
# unit's main process before and after), the unit's state, and the
# journal's lines of handing over ("journal: ..."); old, new: the pids
under_stream() {
	vm_run A 30 "systemctl show -p MainPID --value rxdp >/run/rxdp-old-pid
		setsid -f sh -c 'sleep 3; $2 >/run/rxdp-$1.log 2>&1; echo rc=\$? >>/run/rxdp-$1.log' \
			</dev/null >/dev/null 2>&1" >/dev/null
	vm_wirecheck -t rc -o all -s 0-20000 -D 8
	st=$(vm_run A 150 "for _ in \$(seq 600); do grep -q rc= /run/rxdp-$1.log 2>/dev/null && break; sleep 0.2; done
		cat /run/rxdp-$1.log
		echo \"pids \$(cat /run/rxdp-old-pid) \$(systemctl show -p MainPID --value rxdp)\"
		systemctl show -p ActiveState,NRestarts,StatusText,NFileDescriptorStore rxdp
		journalctl -u rxdp --no-pager -o cat | grep -E 'took over|taken|handed|handing|refused|cannot|ending|stay attached|starting anew|main process again' |
			sed 's/^/journal: /'")
	grep '^journal: ' <<<"$st"
	local pids
	pids=$(sed -n 's/^pids //p' <<<"$st")
	old=${pids% *} new=${pids#* }
	[ "$old" != "$new" ] && [ "$new" != 0 ] && grep -qx 'rc=0' <<<"$st" &&
		grep -qx 'ActiveState=active' <<<"$st" && grep -qx 'NRestarts=0' <<<"$st" &&
		grep -qx 'StatusText=serving rxdp_eth0' <<<"$st" &&
		grep -qx 'NFileDescriptorStore=0' <<<"$st" && return 0
	vm_run A 60 'journalctl -u rxdp --no-pager -o short-monotonic | tail -n 60'
	return 1
}

# reloaded under a checked stream: a new rxdpd takes over (ExecReload), the
# service's main process is the new one, the stream never notices
under_stream reload "systemctl reload rxdp" &&
	[ "$(grep -c '^journal: .*handed over to pid' <<<"$st")" = 1 ] ||
	bad "systemctl reload under a stream: $st"
echo "ok: systemctl reload: rxdpd $old handed over to $new under a checked stream"

# restarted under a checked stream (after the reload: its successor is the
# main process now): rxdpd --fdstore hands everything to the unit's
# descriptor store, the interfaces stay attached, the next rxdpd takes
# over from the store and empties it; the stream never notices
under_stream restart "systemctl restart rxdp" &&
	grep -q "^journal: .*handed over to systemd's descriptor store ([1-9][0-9]* bytes" <<<"$st" &&
	grep -q '^journal: .*rxdp.service restarts .* the interfaces stay attached' <<<"$st" &&
	[ "$(grep -c "^journal: .*took over from systemd's descriptor store" <<<"$st")" = 2 ] &&
	! grep -q 'starting anew' <<<"$st" || bad "systemctl restart under a stream: $st"
echo "ok: systemctl restart: rxdpd $old handed over to $new through the descriptor store under a checked stream"

# upgraded under a checked stream: the package again, a version higher
# (repacked), installed with dpkg -i; its postinst reloads the unit and the
# new rxdpd takes over
under_stream upgrade "dpkg -i $next" &&
	[ "$(grep -c '^journal: .*handed over to pid' <<<"$st")" = 2 ] ||
	bad "an upgrade under a stream: $st"
st=$(vm_run A 30 "dpkg-query -W -f '\${Version}' rxdp")
[ "$st" = "${version}+next" ] || bad "the upgrade: rxdp $st installed"
echo "ok: an upgrade (dpkg -i of rxdp ${version}+next): rxdpd $old handed over to $new under a checked stream"

# from an earlier release: its package put back and started afresh, then
# this tree's installed over it under a checked stream
if [ -n "$prev" ]; then
	st=$(vm_run A 120 "dpkg -i $prev >/tmp/dpkg-prev.log 2>&1 || { cat /tmp/dpkg-prev.log; exit 1; }
		systemctl daemon-reload && systemctl restart rxdp && sleep 2
		dpkg-query -W -f '\${Version}\n' rxdp; systemctl is-active rxdp")
	grep -qx "${version}~prev" <<<"$st" && grep -qx active <<<"$st" ||
		bad "$RXDP_VM_UPGRADE_FROM's package put back: $st"
	vm_wirecheck -t rc -o all -s 0-20000 -n 50
	if under_stream upgrade-from "dpkg -i $deb" &&
		[ "$(vm_run A 30 "dpkg-query -W -f '\${Version}' rxdp")" = "${version}" ]; then
		echo "ok: an upgrade from $RXDP_VM_UPGRADE_FROM's package: rxdpd $old handed over to $new under a checked stream"
	else
		bad "an upgrade from $RXDP_VM_UPGRADE_FROM under a stream: $st"
	fi
	# the successor is the unit's main process, systemd's own child: a
	# restart goes through the store (systemd kills an "alien" main
	# process 10 ms after its SIGTERM, before it could store anything)
	stored="^journal: .*handed over to systemd's descriptor store ([1-9][0-9]* bytes"
	n0=$(grep -c "$stored" <<<"$st")
	if under_stream restart-after "systemctl restart rxdp" &&
		[ "$(grep -c "$stored" <<<"$st")" = $((n0 + 1)) ]; then
		echo "ok: then systemctl restart: rxdpd $old handed over to $new through the descriptor store"
	else
		vm_run A 60 'journalctl -u rxdp --no-pager -o short-monotonic | tail -n 40'
		bad "a restart after the upgrade from $RXDP_VM_UPGRADE_FROM: $st"
	fi
fi
[ ${#VM_FAILED[@]} = 0 ] || bad "through the installed library: ${VM_FAILED[*]}"

# killed: started again by systemd, and it serves
st=$(vm_run A 60 'old=$(systemctl show -p MainPID --value rxdp); kill -9 $old
	for _ in $(seq 100); do
		new=$(systemctl show -p MainPID --value rxdp)
		[ "$(systemctl is-active rxdp)" = active ] && [ "$new" != 0 ] && [ "$new" != "$old" ] && break
		sleep 0.2
	done
	systemctl show -p ActiveState,NRestarts,StatusText rxdp
	LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/rxdp ibv_devinfo -d rxdp_eth0 | grep -o PORT_ACTIVE')
grep -qx 'ActiveState=active' <<<"$st" && grep -qx 'NRestarts=1' <<<"$st" &&
	grep -qx PORT_ACTIVE <<<"$st" || bad "after kill -9: $st"
echo "ok: rxdpd killed: restarted by systemd, port ACTIVE again"

# stopped: nothing of rxdp left on eth0
st=$(vm_run A 60 'systemctl stop rxdp; systemctl is-active rxdp;
	ip -d link show dev eth0 | grep -c prog/xdp; ls -d /run/rxdp/bpffs/net*/eth0 2>/dev/null | wc -l
	systemctl show -p NFileDescriptorStore --value rxdp')
[ "$st" = "inactive
0
0
0" ] || bad "after stop (is-active, XDP programs, pin directories, stored descriptors): $st"
echo "ok: stopped: the XDP program and its pins gone"

[ $errors = 0 ] || fail "$errors check(s) failed"
echo "PASS: the package's rxdp.service in two guests"
