#!/usr/bin/env bash
# The tools' command lines as an operator meets them: --version and --help on
# every installed tool (one parser for all: userspace/common/opts.c), one
# line for a bad option, and log lines with syslog priorities ("<3>" error
# .. "<7>" debug, sd-daemon(3)) when stderr is the journal (JOURNAL_STREAM
# names stderr's device:inode), and without them when it is not.
# Needs no root, no namespace.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/lib/netns.sh"

BIN=${RXDP_BIN:-$root/build/bin}
version=$(cat "$root/VERSION")
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"

for t in rxdpd rxdp-loader rxdp-ctl; do
	[ -x "$BIN/$t" ] || fail "$BIN/$t not built"
	out=$("$BIN/$t" --version) || fail "$t --version failed"
	head -1 <<<"$out" | grep -qx "$t (rxdp) $version" ||
		fail "$t --version: $out"
	[ "$("$BIN/$t" -V | head -1)" = "$t (rxdp) $version" ] || fail "$t -V"
	out=$("$BIN/$t" --help) || fail "$t --help failed"
	grep -q "^Usage: $t " <<<"$out" || fail "$t --help has no usage: $out"
	grep -q -- '--version' <<<"$out" && grep -q -- '--help' <<<"$out" ||
		fail "$t --help does not list --help and --version"
	[ "$(wc -l <<<"$out")" -ge 8 ] || fail "$t --help is $(wc -l <<<"$out") lines"
	grep -qE "$t\((1|8)\)" <<<"$out" || fail "$t --help names no man page"
	# a bad option: one line, exit 2, nothing on stdout
	out=$("$BIN/$t" --frob 2>"$tmp/err")
	rc=$?
	[ $rc = 2 ] || fail "$t --frob: exit $rc"
	[ -z "$out" ] || fail "$t --frob printed on stdout: $out"
	[ "$(cat "$tmp/err")" = "$t: unknown option '--frob' (see --help)" ] ||
		fail "$t --frob: $(cat "$tmp/err")"
	echo "ok: $t --version, --help, --frob"
done
# the commands each tool's --help describes
h=$("$BIN/rxdp-ctl" --help)
for w in devices gids qps cm stats counters all metrics links; do
	grep -q "^  $w " <<<"$h" || fail "rxdp-ctl --help does not describe $w"
done
h=$("$BIN/rxdp-loader" --help)
for w in attach detach status clean; do
	grep -q "^  $w " <<<"$h" || fail "rxdp-loader --help does not describe $w"
done
out=$("$BIN/rxdp-ctl" frob 2>&1)
[ $? = 2 ] || fail "rxdp-ctl frob: not a usage error"
# the refusal names every WHAT --help describes
for w in devices gids qps cm stats counters all metrics links; do
	grep -q "\b$w\b" <<<"$out" || fail "rxdp-ctl frob does not name $w: $out"
done
# the loader's own usage lines name every option of the command
out=$("$BIN/rxdp-loader" attach 2>&1)
[ $? = 2 ] || fail "rxdp-loader attach: not a usage error: $out"
for o in --mode --variant; do
	grep -q -- "$o" <<<"$out" || fail "rxdp-loader attach's usage omits $o: $out"
done
out=$("$BIN/rxdp-ctl" --json metrics 2>&1)
[ $? = 2 ] || fail "rxdp-ctl --json metrics: not a usage error: $out"
echo "ok: commands described, an unknown one refused"
# rxdpd --cc, --cc-algo, --cpus, --tc and --engines-per-queue: a mistake
# is one line and exit 2, before anything starts ("OPTION ARG [OPTION ARG...]|what the line says")
while IFS='|' read -r args msg; do
	read -ra argv <<<"$args"
	opt=${argv[0]} arg=${args#* }
	out=$("$BIN/rxdpd" --socket "$tmp/cc.sock" "${argv[@]}" 2>"$tmp/err")
	rc=$?
	[ $rc = 2 ] && [ -z "$out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -qF "rxdpd: $opt" "$tmp/err" && grep -qF -- "$msg" "$tmp/err" ||
		fail "rxdpd $opt $arg: exit $rc, $(cat "$tmp/err")"
	[ ! -e "$tmp/cc.sock" ] || fail "rxdpd $opt $arg started"
done <<'EOF'
--cc frob=1|no parameter frob
--cc rp_time_reset=x|x is not a number
--cc rp_time_reset=-1|-1 is not a number
--cc rp_gd=4294967296|is not a number
--cc rp_gd|NAME=VALUE expected
--cc rp_gd=5,=1|NAME=VALUE expected
--cc-algo timely|no algorithm timely (dcqcn, delay, off)
--cc-algo eth0=fast|no algorithm fast
--cc-algo =delay|=delay: IFNAME=ALGO expected
--cc-algo delay,averyveryverylongname=off|averyveryverylongname is not an interface
--cpus 1,|1,: not a CPU list like 0,2-3
--cpus 3-1|3-1: not a CPU list like 0,2-3
--tc 5=fast|5=fast: SLS=strict or SLS=WEIGHT expected
--tc 16=1|16=1: SLS=strict or SLS=WEIGHT expected
--tc 5=0|5=0: SLS=strict or SLS=WEIGHT expected
--tc 5=101|5=101: SLS=strict or SLS=WEIGHT expected
--tc 3-1=strict|3-1=strict: SLS=strict or SLS=WEIGHT expected
--tc :5=1|:5=1: IFNAME:CLASS expected
--tc averyveryverylongname:5=1|IFNAME:CLASS expected
--tc 1-3=1 --tc 3=strict|3=strict: an SL of it is in another class
--tc 0=1 --tc 1=1 --tc 2=1 --tc 3=1 --tc 4=1|4=1: more than 4 classes
--tc 0=1 --tc 1=1 --tc 2=1 --tc 3=1|4 classes and SLs in none
--tc eth9:0=1 --tc eth9:1=1 --tc eth9:2=1 --tc eth9:3-4=1|--tc eth9: 4 classes and SLs in none
--engines-per-queue 0|--engines-per-queue 0: a number 1..16
--engines-per-queue 2x|--engines-per-queue 2x: a number 1..16
--engines-per-queue autom|--engines-per-queue autom: a number 1..16, or auto
EOF
echo "ok: rxdpd --cc, --cc-algo, --tc and --engines-per-queue refuse an unknown name, a value that is no number, SLs in two classes or none"

# rxdpd not reached: metrics still say so (rxdp_up 0, for a textfile
# collector, whose file must not stay as it was), and the exit is 1
out=$("$BIN/rxdp-ctl" --socket "$tmp/no-rxdpd" metrics 2>"$tmp/err")
rc=$?
[ $rc = 1 ] || fail "rxdp-ctl metrics without rxdpd: exit $rc"
[ "$out" = "# HELP rxdp_up 1 when rxdp-ctl reached rxdpd, 0 when it could not (no other sample then)
# TYPE rxdp_up gauge
rxdp_up 0" ] || fail "rxdp-ctl metrics without rxdpd printed: $out"
grep -q "^rxdp-ctl: cannot reach rxdpd" "$tmp/err" || fail "no reason on stderr: $(cat "$tmp/err")"
out=$("$BIN/rxdp-ctl" --socket "$tmp/no-rxdpd" devices 2>/dev/null)
[ $? = 1 ] && [ -z "$out" ] || fail "rxdp-ctl devices without rxdpd: $out"
echo "ok: without rxdpd: rxdp_up 0 and exit 1"

# --- log priorities ------------------------------------------------------
# journal_run FILE CMD...: CMD with stderr to FILE, and JOURNAL_STREAM
# naming FILE as systemd names the journal's stream
journal_run() {
	local f=$1
	shift
	: >"$f"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$f") "$@" 2>>"$f"
}
journal_run "$tmp/j" "$BIN/rxdpd" --fifo 200
grep -qx '<3>--fifo 200: a priority 0..99' "$tmp/j" ||
	fail "rxdpd's error in the journal: $(cat "$tmp/j")"
# the same variable, but stderr elsewhere (a child whose stderr was
# redirected): no priorities, the program's prefix
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/j") "$BIN/rxdpd" --fifo 200 2>"$tmp/e"
grep -qx 'rxdpd: --fifo 200: a priority 0..99' "$tmp/e" ||
	fail "rxdpd's error outside the journal: $(cat "$tmp/e")"
"$BIN/rxdpd" --fifo 200 2>"$tmp/e"
grep -qx 'rxdpd: --fifo 200: a priority 0..99' "$tmp/e" ||
	fail "rxdpd's error without JOURNAL_STREAM: $(cat "$tmp/e")"
echo "ok: an error is <3> in the journal, prefixed elsewhere"

if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	# rxdpd itself with the journal as stderr: "ready" is <6>; a second
	# one, its socket taken, says so as an error (<3>); no line of
	# either lacks a priority
	ns=rxcli$RXDP_TEST_ID
	netns_add "$ns"
	: >"$tmp/d"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/d") ip netns exec "$ns" \
		"$BIN/rxdpd" --socket "@rxcli$RXDP_TEST_ID" --verbose 2>>"$tmp/d" &
	pid=$!
	on_exit "kill $pid"
	wait_until 10 grep -q '^<6>ready' "$tmp/d" ||
		fail "rxdpd not ready, or not <6>: $(cat "$tmp/d")"
	journal_run "$tmp/j" ip netns exec "$ns" "$BIN/rxdpd" --verbose \
		--socket "@rxcli$RXDP_TEST_ID"
	grep -q '^<3>another rxdpd already runs' "$tmp/j" ||
		fail "second rxdpd in the journal: $(cat "$tmp/j")"
	kill "$pid"
	wait "$pid"
	grep -q '^<6>exiting on signal 15' "$tmp/d" ||
		fail "rxdpd's exit line: $(cat "$tmp/d")"
	grep -v '^<[3-7]>' "$tmp/d" "$tmp/j" && fail "a line without a priority"
	echo "ok: rxdpd's lines all carry a priority in the journal"
fi
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	# install-deps.sh elsewhere than Debian 12: one line, before anything
	printf 'ID=ubuntu\nVERSION_ID="22.04"\n' >"$tmp/os-release"
	out=$(unshare -m sh -c "mount --bind '$tmp/os-release' /etc/os-release &&
		'$root/scripts/install-deps.sh'" 2>&1)
	rc=$?
	[ $rc = 1 ] || fail "install-deps.sh on Ubuntu 22.04: exit $rc: $out"
	[ "$(wc -l <<<"$out")" = 1 ] && grep -q "ubuntu 22.04.*Debian 12" <<<"$out" ||
		fail "install-deps.sh on Ubuntu 22.04 says: $out"
	echo "ok: install-deps.sh elsewhere: $out"
fi
echo "PASS: command lines and log priorities"
