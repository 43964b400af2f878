#!/usr/bin/env bash
# make dist: a tarball, a .deb and an .rpm of the binary make build made
# (BIN), with its man pages and completions, and SHA256SUMS, in DISTDIR.
# nfpm is a tool dependency in go.mod (go tool nfpm), pinned there with
# its checksums in go.sum: after one `go mod download` nothing is fetched,
# and nothing is installed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BIN=${BIN:-bin/xrcbench}
DISTDIR=${DISTDIR:-build/dist}

# The version: the release tag without its v (0.1.0, 0.1.0-3-gabcdef012345
# past it, -dirty with changes), else 0.0.0-git<commit date>.g<revision>,
# e.g. 0.0.0-git20261204T153012.g141bf17dee13 (the .deb and .rpm say
# 0.0.0~git...): a semantic version either way, as nfpm and both package
# formats want. The commit's date (UTC) leads so that snapshots sort by
# date, as dpkg and rpm compare them, where a hash alone sorted at random.
# The T keeps the time inside an alphanumeric identifier and the g the
# hash: semver refuses a numeric identifier with a leading zero (09:30,
# or a hash of digits), and nfpm then passes the version on unsplit.
tag=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || true)
if [ -n "$tag" ]; then
	version=${tag#v}
else
	when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%dT%H%M%S)
	version=0.0.0-git$when.g$(git rev-parse --short=12 HEAD)
	[ -z "$(git status --porcelain 2>/dev/null)" ] || version=$version.dirty
fi
arch=$($GO env GOARCH)
# Who the packages name as maintainer: DIST_MAINTAINER, else the author
# of the commit they are built from.
maintainer=${DIST_MAINTAINER:-$(git log -1 --format='%an <%ae>')}
case $maintainer in *$'\n'* | *$'\r'*)
	echo "dist: DIST_MAINTAINER (or the commit's author) is more than one line: give one, such as 'A B <a@b>'" >&2
	exit 2
	;;
esac
# Spliced into a double-quoted YAML string by sed: escaped for YAML (\ and
# "), then for sed's replacement (\, & and the | it is delimited by).
# Unescaped, "A&B <a@b>" became "A@MAINTAINER@B <a@b>" without a word.
yaml_maintainer=$(printf '%s' "$maintainer" | sed -e 's/[\\"]/\\&/g')
sed_maintainer=$(printf '%s' "$yaml_maintainer" | sed -e 's/[\\&|]/\\&/g')

# libibverbs1 is recommended: the binary dlopens it when the rdma or legacy
# provider is used and runs everything else without it. Were the binary
# ever to link it again (the dynamic loader would then refuse to start it
# without the library), it would be required, so the relation follows the
# binary's DT_NEEDED rather than this comment.
dep=() rec=()
if readelf -d "$BIN" | grep -q 'NEEDED.*libibverbs'; then
	dep=(libibverbs1 libibverbs)
else
	rec=(libibverbs1 libibverbs)
fi

# The C library the binary links: the .deb depends on libc6 at least as
# new as its symbols' versions need. dpkg-shlibdeps reads them with
# Debian's symbols files (it wants a debian/control to stand in); without
# it (not a Debian host) the newest GLIBC_ version objdump -T lists is
# the same bound. The .rpm needs no such line: rpm reads libc.so.6's
# symbol versions from the binary when it is installed.
libcdep() {
	local tmp bin out
	bin=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
	if command -v dpkg-shlibdeps >/dev/null; then
		tmp=$(mktemp -d)
		mkdir "$tmp/debian"
		printf 'Source: xrcbench\n\nPackage: xrcbench\nArchitecture: any\n' >"$tmp/debian/control"
		out=$(cd "$tmp" && dpkg-shlibdeps -O "$bin" 2>/dev/null) || out=
		rm -rf "$tmp"
		out=${out#shlibs:Depends=}
		[ -z "$out" ] || { echo "$out"; return; }
	fi
	out=$(objdump -T "$bin" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sed 's/GLIBC_//' | sort -uV | tail -n1)
	[ -z "$out" ] || echo "libc6 (>= $out)"
}
libc=$(libcdep)
[ -n "$libc" ] || { echo "dist: found no C library dependency of $BIN (dpkg-shlibdeps, objdump -T)" >&2; exit 1; }
# YAML's flow list of the .deb's Depends, each quoted: a relation such as
# "libc6 (>= 2.34)" is then read as one string whatever it holds.
debdeps=\"$libc\"${dep[0]:+, \"${dep[0]}\"}

rm -rf "$DISTDIR"
mkdir -p "$DISTDIR"
root=$(cd "$DISTDIR" && pwd)/root
make --no-print-directory install DESTDIR="$root" PREFIX=/usr >/dev/null
gzip -9n "$root"/usr/share/man/man1/*.1 "$root"/usr/share/man/man5/*.5
# The zsh completion goes where each family's zsh reads it: Debian's
# vendor-completions, Fedora's and RHEL's site-functions (nfpm.yaml).
zsh=$(cd "$DISTDIR" && pwd)/zsh
mkdir -p "$zsh"
mv "$root"/usr/share/zsh/vendor-completions/_xrcbench "$zsh/"
rmdir "$root"/usr/share/zsh/vendor-completions "$root"/usr/share/zsh
# The packaged binary carries no symbol table nor debug information
# (Debian's policy; 23.5 MB with them, 18.5 MB without): the one make
# build made keeps them for whoever debugs it, the packages and the
# tarball get this stripped copy. Go's stack traces need neither (they read .gopclntab), nor does
# version (its revision is data, set at link time). The linker's .comment
# (which compiler built the C side) goes too: nothing reads it.
strip --strip-all --remove-section=.comment "$root/usr/bin/xrcbench"

# What Debian's policy wants in /usr/share/doc/<package> of a native
# package, the .deb only: the license in the machine-readable copyright
# format (the Apache License's text is in /usr/share/common-licenses on
# every Debian system, which the file names instead of copying it), and a
# changelog, one entry for the commit built, dated by it.
debdoc=$(cd "$DISTDIR" && pwd)/debdoc
mkdir -p "$debdoc"
grep -q 'Apache License' LICENSE && grep -q 'Version 2.0' LICENSE ||
	{ echo "dist: LICENSE is no longer the Apache License 2.0: update packaging/dist.sh's copyright file" >&2; exit 1; }
cat >"$debdoc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: xrcbench
Source: https://github.com/xrcbench/xrcbench

Files: *
Copyright: $(TZ=UTC git log -1 --format=%cd --date=format-local:%Y) The xrcbench authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License");
 you may not use this file except in compliance with the License.
 You may obtain a copy of the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in "/usr/share/common-licenses/Apache-2.0".
EOF
{
	printf 'xrcbench (%s) unstable; urgency=medium\n\n' "${version/-/\~}"
	# its subject folded: lintian wants no changelog line over 80 columns
	printf '  * Built from commit %s:\n' "$(git rev-parse --short=12 HEAD)"
	git log -1 --format=%s | fold -s -w 74 | sed 's/^/    /; s/ *$//'
	printf '\n'
	printf ' -- %s  %s\n' "$maintainer" "$(LC_ALL=C git log -1 --format=%cD)"
} | gzip -9n >"$debdoc/changelog.gz"

list() { [ -n "$1" ] && echo "[$1]" || echo "[]"; }
sed -e "s/@DEB_DEPENDS@/[$debdeps]/; s/@DEB_RECOMMENDS@/$(list "${rec[0]:-}")/" -e "s|@DEBDOC@|$debdoc|" \
	-e "s/@RPM_DEPENDS@/$(list "${dep[1]:-}")/; s/@RPM_RECOMMENDS@/$(list "${rec[1]:-}")/" -e "s|@ROOT@|$root|" \
	-e "s|@ZSH@|$zsh|" -e "s|@MAINTAINER@|$sed_maintainer|" \
	packaging/nfpm.yaml > "$DISTDIR/nfpm.yaml"
export DIST_VERSION=$version DIST_ARCH=$arch
for packager in deb rpm; do
	GOFLAGS= $GO tool nfpm package --config "$DISTDIR/nfpm.yaml" --packager "$packager" --target "$DISTDIR/" >/dev/null
done
rm -r "$DISTDIR/nfpm.yaml" "$zsh" "$debdoc"

# The tarball: the binary at its top, man pages and completions beside it.
name=xrcbench-$version-linux-$arch
stage=$DISTDIR/$name
mkdir -p "$stage/man" "$stage/completions"
cp "$root/usr/bin/xrcbench" "$stage/xrcbench" # stripped, as packaged
cp build/man/*.[15] "$stage/man/"
cp build/completions/* "$stage/completions/"
cp README.md LICENSE "$stage/"
tar -C "$DISTDIR" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DISTDIR/$name.tar.gz" "$name"
rm -rf "$stage" "$root"

(cd "$DISTDIR" && sha256sum -- *.tar.gz *.deb *.rpm > SHA256SUMS)
echo "dist: $(cd "$DISTDIR" && ls | tr '\n' ' ')in $DISTDIR (version $version, libibverbs1 ${dep:+required}${rec:+recommended})"
