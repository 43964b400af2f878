#!/usr/bin/env bash
# make dist: a tarball, a .deb and an .rpm of the binary make build made
# (BIN), with its man pages and completions, and SHA256SUMS, in DISTDIR.
# nfpm, pinned, runs through go run: nothing is installed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BIN=${BIN:-bin/xrcbench}
DISTDIR=${DISTDIR:-build/dist}
NFPM=${NFPM:-github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2}

# The version: the release tag without its v (0.1.0, 0.1.0-3-gabcdef012345
# past it, -dirty with changes), else 0.0.0-git.<revision>: a semantic
# version either way, as nfpm and both package formats want.
tag=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || true)
if [ -n "$tag" ]; then
	version=${tag#v}
else
	version=0.0.0-git.$(git rev-parse --short=12 HEAD)
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

rm -rf "$DISTDIR"
mkdir -p "$DISTDIR"
root=$(cd "$DISTDIR" && pwd)/root
make --no-print-directory install DESTDIR="$root" PREFIX=/usr >/dev/null
gzip -9n "$root"/usr/share/man/man1/*.1
# The zsh completion goes where each family's zsh reads it: Debian's
# vendor-completions, Fedora's and RHEL's site-functions (nfpm.yaml).
zsh=$(cd "$DISTDIR" && pwd)/zsh
mkdir -p "$zsh"
mv "$root"/usr/share/zsh/vendor-completions/_xrcbench "$zsh/"
rmdir "$root"/usr/share/zsh/vendor-completions "$root"/usr/share/zsh

list() { [ -n "$1" ] && echo "[$1]" || echo "[]"; }
sed -e "s/@DEB_DEPENDS@/$(list "${dep[0]:-}")/; s/@DEB_RECOMMENDS@/$(list "${rec[0]:-}")/" \
	-e "s/@RPM_DEPENDS@/$(list "${dep[1]:-}")/; s/@RPM_RECOMMENDS@/$(list "${rec[1]:-}")/" -e "s|@ROOT@|$root|" \
	-e "s|@ZSH@|$zsh|" -e "s|@MAINTAINER@|$sed_maintainer|" \
	packaging/nfpm.yaml > "$DISTDIR/nfpm.yaml"
export DIST_VERSION=$version DIST_ARCH=$arch
for packager in deb rpm; do
	GOFLAGS= $GO run "$NFPM" package --config "$DISTDIR/nfpm.yaml" --packager "$packager" --target "$DISTDIR/" >/dev/null
done
rm -r "$DISTDIR/nfpm.yaml" "$zsh"

# The tarball: the binary at its top, man pages and completions beside it.
name=xrcbench-$version-linux-$arch
stage=$DISTDIR/$name
mkdir -p "$stage/man" "$stage/completions"
cp "$BIN" "$stage/xrcbench"
cp build/man/*.1 "$stage/man/"
cp build/completions/* "$stage/completions/"
cp README.md LICENSE "$stage/"
tar -C "$DISTDIR" --owner=0 --group=0 --numeric-owner --sort=name -czf "$DISTDIR/$name.tar.gz" "$name"
rm -rf "$stage" "$root"

(cd "$DISTDIR" && sha256sum -- *.tar.gz *.deb *.rpm > SHA256SUMS)
echo "dist: $(cd "$DISTDIR" && ls | tr '\n' ' ')in $DISTDIR (version $version, libibverbs1 ${dep:+required}${rec:+recommended})"
