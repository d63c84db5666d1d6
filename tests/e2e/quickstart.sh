#!/usr/bin/env bash
# A newcomer's path: the README's quick start, run as written. Its commands
# are taken from README.md (the first sh block under "## Quick start"), not
# copied here, so that the README cannot drift from what works; only the
# namespaces' names and the daemons' log files are made this test's own
# (A and B become rxqa<pid> and rxqb<pid>), and the build line is left out
# (`make test` built the tree). Checks what the README says comes out: the
# GIDs, and a pingpong of 100 iterations.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_root
require_cmd ip ibv_rc_pingpong
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
NA=rxqa$RXDP_TEST_ID
NB=rxqb$RXDP_TEST_ID
# the daemons the block starts in the background, then the namespaces
on_exit "ip netns del $NB"
on_exit "ip netns del $NA"
on_exit "ip netns pids $NB | xargs -r kill"
on_exit "ip netns pids $NA | xargs -r kill"
# no pins left behind in the machine's bpffs
on_exit "ip netns exec $NB $root/build/bin/rxdp-loader detach veth0"
on_exit "ip netns exec $NA $root/build/bin/rxdp-loader detach veth0"

awk '/^## Quick start/ { q = 1; next }
	q && /^```sh$/ { b = 1; next }
	b && /^```$/ { exit }
	b { print }' "$root/README.md" >"$tmp/block"
[ "$(grep -c . "$tmp/block")" -ge 10 ] || fail "no quick start in README.md: $(cat "$tmp/block")"
grep -q '^make' "$tmp/block" || fail "the quick start does not build: $(cat "$tmp/block")"
# A and B as namespaces only (never inside a word), logs into our tmp
sed -E -e '/^make( |$)/d' \
	-e "s/(netns (add|exec|del)|-n|netns) A( |$)/\\1 $NA\\3/g" \
	-e "s/(netns (add|exec|del)|-n|netns) B( |$)/\\1 $NB\\3/g" \
	-e "s|/tmp/rxdpd-([AB]).log|$tmp/rxdpd-\\1.log|g" \
	"$tmp/block" >"$tmp/run.sh"
grep -qwE 'A|B' <(sed -E 's/rxdp_veth0|rxdpd-[AB]//g' "$tmp/run.sh" | grep -oE '(netns|-n) [AB]\b') &&
	fail "a namespace name left unreplaced: $(cat "$tmp/run.sh")"
echo "# the README's quick start, as run here:"
sed 's/^/    /' "$tmp/run.sh"

(cd "$root" && timeout 120 bash -e "$tmp/run.sh") >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] || fail "the quick start failed (exit $rc): $(cat "$tmp/out"; cat "$tmp"/rxdpd-*.log)"
grep -qE '^DEV +PORT +INDEX +GID +IPv4 +VER +DEV$' "$tmp/out" &&
	grep -qE '^rxdp_veth0 +1 +1 +0000:0000:0000:0000:0000:ffff:c000:0201 +192\.0\.2\.1 +v2 +veth0$' "$tmp/out" ||
	fail "rxdp-ctl gids in the quick start: $(cat "$tmp/out")"
grep -q '^100 iters in ' "$tmp/out" || fail "no pingpong: $(cat "$tmp/out")"
echo "ok: $(grep -c . "$tmp/run.sh") commands; $(grep '^100 iters' "$tmp/out" | head -1)"
echo "PASS: the README's quick start"
