#!/usr/bin/env bash
# The Debian package, built as a distribution would: dpkg-buildpackage -us
# -uc in a clean copy of the tree (what git tracks, plus what it would add,
# as it is now), lintian with no error and no warning, and the files the
# package holds.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"

require_cmd dpkg-buildpackage dh lintian git
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"
version=$(cat "$root/VERSION")
src=$tmp/rxdp-$version
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp -a --parents -t "$src") ||
	fail "cannot copy the tree"
[ ! -e "$src/build" ] || fail "the copy holds build/"

dv=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "$dv" = "$version" ] || fail "debian/changelog says $dv, VERSION $version"

(cd "$src" && dpkg-buildpackage -us -uc -j2) >"$tmp/build.log" 2>&1 || {
	tail -n 40 "$tmp/build.log"
	fail "dpkg-buildpackage failed"
}
deb=$tmp/rxdp_${version}_amd64.deb
[ -f "$deb" ] && [ -f "$tmp/rxdp_$version.dsc" ] || fail "no .deb or .dsc: $(ls "$tmp")"
echo "ok: dpkg-buildpackage -us -uc: $(cd "$tmp" && ls ./*.deb ./*.dsc | tr '\n' ' ')"

# lintian: anything worse than info fails (as root it warns about that)
lint=$(lintian "$tmp/rxdp_${version}_amd64.changes" 2>&1 |
	grep -v '^running with root privileges is not recommended!$')
if grep -qE '^[EW]: ' <<<"$lint"; then
	echo "$lint"
	fail "lintian has errors or warnings"
fi
echo "ok: lintian: no error, no warning${lint:+ ($(wc -l <<<"$lint") other lines)}"

files=$(dpkg-deb -c "$deb" | awk '{print $NF}' | grep -v '/$' | sed 's|^\./||' | sort)
for f in usr/sbin/rxdpd usr/sbin/rxdp-loader usr/bin/rxdp-ctl \
	usr/lib/x86_64-linux-gnu/rxdp/libibverbs.so.1 \
	usr/lib/x86_64-linux-gnu/rxdp/librdmacm.so.1 \
	usr/libexec/rxdp/rxdp-ifaces lib/systemd/system/rxdp.service \
	lib/systemd/system/run-rxdp-bpffs.mount \
	etc/rxdp/rxdp.conf usr/share/man/man8/rxdpd.8.gz \
	usr/share/man/man8/rxdp-loader.8.gz usr/share/man/man1/rxdp-ctl.1.gz \
	usr/share/doc/rxdp/README.md usr/share/doc/rxdp/docs/troubleshooting.md \
	usr/share/doc/rxdp/docs/operating.md; do
	grep -qx "$f" <<<"$files" || fail "the package lacks $f: $files"
done
dpkg-deb -c "$deb" | grep -q ' \./usr/lib/x86_64-linux-gnu/rxdp/system/libibverbs\.so\.1 -> \.\./libibverbs\.so\.1$' ||
	fail "the package lacks rxdp/system/libibverbs.so.1 -> ../libibverbs.so.1"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/rxdp/rxdp.conf ||
	fail "rxdp.conf is not a conffile"
dpkg-deb -f "$deb" Depends | grep -q 'libxdp1' || fail "Depends: $(dpkg-deb -f "$deb" Depends)"
echo "ok: the package holds the programs, the libraries, the unit, the configuration (a conffile), the man pages, the documents"

# rxdp-system: the system-wide mode, the ld.so.conf entry and ldconfig
sys=$tmp/rxdp-system_${version}_amd64.deb
[ -f "$sys" ] || fail "no rxdp-system package: $(ls "$tmp")"
mkdir "$tmp/sys" && dpkg-deb -x "$sys" "$tmp/sys" || fail "cannot unpack $sys"
[ "$(cat "$tmp/sys/etc/ld.so.conf.d/000-rxdp.conf" 2>&1)" = /usr/lib/x86_64-linux-gnu/rxdp/system ] ||
	fail "rxdp-system's ld.so.conf entry: $(cat "$tmp/sys/etc/ld.so.conf.d/000-rxdp.conf" 2>&1)"
dpkg-deb -I "$sys" triggers | grep -qx 'activate-noawait ldconfig' ||
	fail "rxdp-system does not run ldconfig: $(dpkg-deb -I "$sys" triggers 2>&1)"
dpkg-deb -f "$sys" Depends | grep -q "rxdp (= $version)" || fail "rxdp-system Depends: $(dpkg-deb -f "$sys" Depends)"
echo "ok: rxdp-system holds the ld.so.conf entry for the package's directory, and runs ldconfig"
echo "PASS: the Debian package"
