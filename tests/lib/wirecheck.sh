#!/usr/bin/env bash
# The data checker's own test (tests/lib/wirecheck.c), between two rxdp
# hosts: a checker that cannot fail proves nothing.
#  - clean streams of each transport, every operation it has, sizes from 0
#    to past 64 KiB, gather/scatter lists, an SRQ, inline sends, several
#    QPs: both ends pass, and their counts add up to what was sent
#  - the client wrong on purpose at one message (--sabotage): a flipped
#    bit, a message never posted, one posted twice, one a byte short, a
#    Write and a Read one byte off their place: both ends fail, and the
#    count that says why is 1
#  - what UC and UD may do on a lossy link (--lossy): a lost or duplicated
#    message passes, counted (also where the messages are too short to
#    carry their number: a later one of the same length is known by its
#    bytes); RC's loss fails, --lossy or not
# One stream at a time: UC and UD streams side by side on 2 CPUs may lose
# a message to an overrun ring, as they may, and these counts are exact.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/rxdp.sh"

require_root
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
WK_DIR=$tmp
NETNS_NO_IPV6=1 netns_pair
rxdp_hosts "$tmp"
errors=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*" >&2; errors=$((errors + 1)); }

echo "# clean streams pass, and what arrived adds up to what was sent"
clean=(
	"-t rc -o all -s 0-70000 -n 300 --sge 3"
	"-t rc -o send,write_imm -s 1-3000 -n 200 -q 3 --srq"
	"-t rc -o send -s 1-200 -n 300 --inline 64"
	"-t uc -o all -s 0-20000 -n 300 --sge 2"
	"-t ud -o all -s 0-1024 -n 300 --sge 4 -q 2"
)
port=18700
for i in "${!clean[@]}"; do
	# shellcheck disable=SC2086
	if wirecheck_run "clean$i" $((port + i)) ${clean[i]} >/dev/null; then
		sent=$(wirecheck_summary "clean$i" sent)
		got=$(($(wirecheck_summary "clean$i" delivered) + $(wirecheck_summary "clean$i" reads)))
		if [ "$sent" = "$got" ] && [ "$sent" -gt 0 ] &&
			[ "$(wirecheck_summary "clean$i" bytes)" -gt 0 ]; then
			ok "${clean[i]}: $got of $sent messages checked"
		else
			bad "${clean[i]}: $got of $sent messages checked"
		fi
	else
		bad "${clean[i]}"
	fi
done

echo "# wrong on purpose: both ends fail, with the count that says why"
# ARGS => KEY: the stream, and the summary key that must read 1
sabotage=(
	"-t rc -o send -s 100-3000 --sabotage corrupt:10 => corrupt"
	"-t rc -o send -s 100-3000 --sabotage skip:10 => lost"
	"-t rc -o send -s 100-3000 --sabotage repeat:10 => dup"
	"-t rc -o send -s 100-3000 --sabotage short:10 => corrupt"
	"-t rc -o write -s 100-3000 --sabotage corrupt:10 => corrupt"
	"-t rc -o write -s 100-3000 --sabotage skip:10 => lost"
	"-t rc -o write -s 100-3000 --sabotage misplace:10 => corrupt"
	"-t rc -o write_imm -s 100-3000 --sabotage short:10 => corrupt"
	"-t rc -o read -s 100-3000 --sabotage misplace:10 => read_bad"
	"-t rc -o send -s 1-3 --sabotage corrupt:10 => corrupt"
	"-t rc -o send -s 100-3000 --sabotage skip:10 --lossy => lost"
	"-t uc -o send_imm -s 100-3000 --sabotage skip:10 => lost"
	"-t uc -o send -s 100-3000 --sabotage repeat:10 => dup"
	"-t ud -o send -s 100-1000 --sabotage repeat:10 => dup"
	"-t ud -o send_imm -s 100-1000 --sabotage corrupt:10 --lossy => corrupt"
)
port=18720
for i in "${!sabotage[@]}"; do
	key=${sabotage[i]#*=> }
	# shellcheck disable=SC2086
	if wirecheck_run "sab$i" $((port + i)) -n 40 ${sabotage[i]% =>*} 2>/dev/null; then
		bad "${sabotage[i]% =>*}: passed"
	elif [ "$(wirecheck_summary "sab$i" "$key")" = 1 ]; then
		ok "${sabotage[i]% =>*}: fails, $key=1"
	else
		bad "${sabotage[i]% =>*}: fails, but $(grep '^summary:' "$tmp/sab$i.client")"
	fi
done

echo "# what UC and UD may do on a lossy link passes, counted"
may=(
	"-t uc -o send -s 100-3000 --sabotage skip:10 --lossy => lost"
	"-t uc -o write -s 100-3000 --sabotage skip:10 --lossy => lost"
	"-t ud -o send -s 100-1000 --sabotage skip:10 --lossy => lost"
	"-t ud -o send -s 100-1000 --sabotage repeat:10 --lossy => dup"
	"-t uc -o send -s 100-3000 --sabotage repeat:10 --lossy => dup"
	"-t uc -o send -s 2-2 --sabotage skip:10 --lossy => lost"
	"-t ud -o send -s 2-2 --sabotage skip:10 --lossy => lost"
)
port=18750
for i in "${!may[@]}"; do
	key=${may[i]#*=> }
	# shellcheck disable=SC2086
	if wirecheck_run "may$i" $((port + i)) -n 40 --settle 500 ${may[i]% =>*} >/dev/null &&
		[ "$(wirecheck_summary "may$i" "$key")" = 1 ]; then
		ok "${may[i]% =>*}: passes, $key=1"
	else
		bad "${may[i]% =>*}: $(grep '^summary:' "$tmp/may$i.client")"
	fi
done

echo "# a bad command line is one line and exit 2"
"$WIRECHECK" -t xx 2>"$tmp/usage.err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/usage.err")" = 1 ] &&
	ok "wirecheck -t xx: $(cat "$tmp/usage.err")" || bad "wirecheck -t xx: exit $rc"

[ $errors = 0 ] || fail "$errors check(s) failed"
echo PASS
