#!/usr/bin/env bash
# make disttest: the packages make dist built, used as a lab machine uses
# them. The .deb is installed with dpkg -i into a clean Debian root (an
# mmdebstrap chroot of this machine's suite: minbase, man-db,
# bash-completion, and the packages the .deb depends on), where
# xrcbench version, list, man xrcbench-run and bash completion must work;
# the .rpm's file list and metadata are read with rpm -qpl/-qpi; the
# tarball's list and SHA256SUMS are checked; lintian must find no error
# nor warning in the .deb, and its version must sort by commit date. The root is built once and
# cached as a tarball under ${XDG_CACHE_HOME:-~/.cache}/xrcbench/dist/.
# Needs root, mmdebstrap and rpm; without them it prints
# "disttest: SKIP: <why>" and exits 0.
set -euo pipefail
dist=$(cd "${1:-build/dist}" && pwd)
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "disttest: ok: $*"; }
fail() { failed=$((failed + 1)); echo "disttest: FAIL: $*" >&2; }
check() { # check WHAT COMMAND...: passes when COMMAND exits 0
	local what=$1; shift
	if out=$("$@" 2>&1); then pass "$what"; else fail "$what: $(printf '%s' "$out" | tail -n 5)"; fi
}
skip() { echo "disttest: SKIP: $*"; exit 0; }

deb=$(ls "$dist"/*.deb 2>/dev/null | head -n1)
rpmf=$(ls "$dist"/*.rpm 2>/dev/null | head -n1)
tgz=$(ls "$dist"/*.tar.gz 2>/dev/null | head -n1)
[ -n "$deb" ] && [ -n "$rpmf" ] && [ -n "$tgz" ] || { echo "disttest: $dist lacks the .deb, .rpm or tarball: run make dist" >&2; exit 1; }

# The tarball and the checksums need nothing but coreutils and tar.
check "SHA256SUMS matches" sh -c "cd '$dist' && sha256sum -c --quiet SHA256SUMS"
list=$(tar -tzf "$tgz")
for f in xrcbench README.md LICENSE man/xrcbench.1 man/xrcbench-run.1 man/xrcbench-result.5 completions/xrcbench completions/_xrcbench completions/xrcbench.fish; do
	if grep -qE "^[^/]+/$f\$" <<<"$list"; then pass "tarball has $f"; else fail "tarball lacks $f"; fi
done

# The .deb's metadata and file list, read without installing it.
if command -v dpkg-deb >/dev/null; then
	if [ -n "${DIST_MAINTAINER:-}" ]; then
		got=$(dpkg-deb -f "$deb" Maintainer)
		[ "$got" = "$DIST_MAINTAINER" ] && pass "deb Maintainer is DIST_MAINTAINER as given" || fail "deb Maintainer '$got', want '$DIST_MAINTAINER'"
	fi
	dpkg-deb -c "$deb" | grep -q ' \./usr/share/zsh/vendor-completions/_xrcbench$' && pass "deb has the zsh completion in vendor-completions" ||
		fail "deb lacks ./usr/share/zsh/vendor-completions/_xrcbench"
fi

# The tarball's binary is the .deb's, byte for byte: both stripped (make
# dist strips one copy for both), not one stripped and one not.
tsum=$(tar -xzOf "$tgz" "$(grep -E '^[^/]+/xrcbench$' <<<"$list")" | sha256sum | cut -d' ' -f1)
dsum=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/xrcbench | sha256sum | cut -d' ' -f1)
[ "$tsum" = "$dsum" ] && pass "the tarball's binary is the .deb's" || fail "the tarball's binary ($tsum) is not the .deb's ($dsum)"

# The .deb as Debian's archive judges it: every error (E:) and warning
# (W:) lintian reports is a failure of its own; informational tags (I:,
# N:) are not. Without lintian this part skips, saying so (.ci/run
# installs it, so CI never skips it).
if command -v lintian >/dev/null; then
	lout=$(lintian --tag-display-limit 0 "$deb" 2>&1) || true
	tags=$(grep -E '^[EW]: ' <<<"$lout" || true)
	if [ -z "$tags" ]; then
		pass "lintian: no error, no warning ($(lintian --version))"
	else
		while IFS= read -r t; do fail "lintian: $t"; done <<<"$tags"
	fi
else
	echo "disttest: SKIP: lintian not installed (apt-get install lintian): the .deb is not linted"
fi

# A snapshot's version sorts by its commit's date (dpkg's order), so a
# later build never reads as a downgrade: 0.0.0~git<date>T<time>.g<hash>.
dver=$(dpkg-deb -f "$deb" Version)
if [[ $dver =~ ^0\.0\.0~git([0-9]{8})T([0-9]{6})\.g[0-9a-f]{12}(\.dirty)?$ ]]; then
	# the same hash a second earlier sorts before, a day later after,
	# whatever the hashes: the date decides
	d=${BASH_REMATCH[1]} t=${BASH_REMATCH[2]}
	earlier=0.0.0~git$(date -u -d "${d:0:4}-${d:4:2}-${d:6:2} ${t:0:2}:${t:2:2}:${t:4:2} 1 second ago" +%Y%m%dT%H%M%S).gffffffffffff
	later=0.0.0~git$(date -u -d "${d:0:4}-${d:4:2}-${d:6:2} ${t:0:2}:${t:2:2}:${t:4:2} 1 day" +%Y%m%dT%H%M%S).g000000000000
	dpkg --compare-versions "$earlier" lt "$dver" && dpkg --compare-versions "$later" gt "$dver" &&
		pass "version $dver sorts by date ($earlier < it < $later)" || fail "version $dver does not sort between $earlier and $later"
elif [[ $dver =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] && ! [[ $dver =~ ~git ]]; then
	pass "version $dver (a release tag)"
else
	fail "version $dver: neither a release nor 0.0.0~git<date>T<time>.g<hash>"
fi

# The .rpm, read without installing it.
if command -v rpm >/dev/null; then
	info=$(rpm -qpi "$rpmf" 2>/dev/null)
	files=$(rpm -qpl "$rpmf" 2>/dev/null)
	grep -q '^Name *: xrcbench$' <<<"$info" && pass "rpm -qpi: Name xrcbench" || fail "rpm -qpi: $info"
	grep -q '^License *: Apache-2.0$' <<<"$info" && pass "rpm -qpi: License" || fail "rpm -qpi: no License Apache-2.0"
	for f in /usr/bin/xrcbench /usr/share/man/man1/xrcbench-run.1.gz /usr/share/bash-completion/completions/xrcbench /usr/share/doc/xrcbench/LICENSE \
		/usr/share/zsh/site-functions/_xrcbench; do
		grep -qx "$f" <<<"$files" && pass "rpm -qpl: $f" || fail "rpm -qpl lacks $f"
	done
	# Fedora's and RHEL's zsh reads site-functions, not Debian's folder.
	! grep -q vendor-completions <<<"$files" && pass "rpm -qpl: no vendor-completions" || fail "rpm -qpl: $(grep vendor-completions <<<"$files")"
	if [ -n "${DIST_MAINTAINER:-}" ]; then
		got=$(rpm -qp --qf '%{PACKAGER}' "$rpmf" 2>/dev/null)
		[ "$got" = "$DIST_MAINTAINER" ] && pass "rpm packager is DIST_MAINTAINER as given" || fail "rpm packager '$got', want '$DIST_MAINTAINER'"
	fi
	reqs=$(rpm -qp --requires "$rpmf" 2>/dev/null)
	recs=$(rpm -qp --recommends "$rpmf" 2>/dev/null)
	grep -q '^libibverbs' <<<"$recs" && ! grep -q '^libibverbs' <<<"$reqs" &&
		pass "rpm recommends libibverbs, does not require it" || fail "rpm: requires [$reqs], recommends [$recs]: want libibverbs recommended only"
else
	echo "disttest: SKIP: rpm not installed (apt-get install rpm): the .rpm is not read"
fi

[ "$(id -u)" = 0 ] || skip "installing the .deb into a Debian root needs root (chroot)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap not installed (apt-get install mmdebstrap)"
unshare --mount true 2>/dev/null || skip "unshare --mount is not permitted here"

# The clean root: this machine's suite (the binary was linked against its
# C library), its mirror, and what the .deb depends on.
. /etc/os-release
suite=${DIST_SUITE:-${VERSION_CODENAME:-bookworm}}
mirror=${DIST_MIRROR:-$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	grep -oE 'https?://[^ ]+' | grep -v -- '-security' | head -n1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}
# (package names only: mmdebstrap takes no version relation, and the
# suite's own libc6 is the one the binary was linked against)
depends=$(dpkg-deb -f "$deb" Depends | sed 's/ *([^)]*)//g' | tr -d ' ')
include=man-db,bash-completion${depends:+,$depends}
key=$(printf '%s\n' "$suite" "$mirror" "$include" | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/xrcbench/dist
mkdir -p "$cache"
if [ ! -f "$cache/$key.tar" ]; then
	echo "disttest: building a clean $suite root with $include (once; a minute or two)" >&2
	timeout "${DIST_BUILD_TIMEOUT:-900}" mmdebstrap --mode=root --variant=minbase --include="$include" \
		"$suite" "$cache/$key.tmp.tar" "$mirror" >"$cache/$key.log" 2>&1 || {
		rm -f "$cache/$key.tmp.tar"
		echo "disttest: mmdebstrap failed; its last lines:" >&2
		tail -n 20 "$cache/$key.log" >&2
		exit 1
	}
	mv "$cache/$key.tmp.tar" "$cache/$key.tar" # whole, or not at all
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/xrcbench-distroot.XXXXXX")
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xf "$cache/$key.tar"
cp "$deb" "$root/tmp/xrcbench.deb"
# Each command runs in a mount namespace of its own with /dev and /proc in
# the root (bash's <(...) needs /dev/fd): the mounts end with it, so an
# interrupted test leaves none behind, nor anything rm -rf would descend.
in_root() {
	unshare --mount --propagation private sh -c 'mount --rbind /dev "$0/dev" && mount -t proc proc "$0/proc" &&
		exec chroot "$0" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"' "$root" "$@"
}

# The binary links no libibverbs (it is dlopened when used), so the .deb
# recommends libibverbs1 and the clean root, without it, runs xrcbench.
deprel=$(dpkg-deb -f "$deb" Depends Recommends)
grep -qE '^Depends:.*libc6 \(>= [0-9]' <<<"$deprel" && pass "deb depends on libc6 (>= version)" || fail "deb relations: no Depends on libc6: $deprel"
grep -q '^Recommends:.*libibverbs1' <<<"$deprel" && ! grep -q '^Depends:.*libibverbs' <<<"$deprel" &&
	pass "deb recommends libibverbs1, does not depend on it" || fail "deb relations: $deprel"
check "dpkg -i $(basename "$deb") into a clean $suite root" in_root dpkg -i /tmp/xrcbench.deb
out=$(in_root xrcbench version 2>&1) && grep -q '^xrcbench ' <<<"$out" && pass "xrcbench version: $(head -n1 <<<"$out")" || fail "xrcbench version: $out"
out=$(in_root xrcbench list 2>&1) && grep -q 'sim' <<<"$out" && pass "xrcbench list" || fail "xrcbench list: $out"
if ! in_root sh -c 'ldconfig -p | grep -q libibverbs.so.1'; then
	# what a lab host without rdma-core reads: one line, the package to install
	rc=0
	out=$(in_root xrcbench run --provider rdma -D 0.1 --out /tmp/rdma 2>&1) || rc=$?
	[ "$rc" = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q 'libibverbs.so.1.*libibverbs1' <<<"$out" &&
		pass "run --provider rdma without libibverbs: $out" || fail "run --provider rdma without libibverbs: exit $rc: $out"
fi
out=$(in_root xrcbench run -D 0.3 --warmup 0s --out /tmp/run 2>&1) && [ -f "$root/tmp/run/result.json" ] &&
	pass "xrcbench run on sim: $(grep -m1 '^status' <<<"$out")" || fail "xrcbench run: $(tail -n 3 <<<"$out")"
out=$(in_root env MANWIDTH=200 man -P cat xrcbench-run 2>&1) && grep -q 'xrcbench-run - Run one benchmark configuration' <<<"$out" &&
	pass "man xrcbench-run" || fail "man xrcbench-run: $(head -n 5 <<<"$out")"
out=$(in_root env MANWIDTH=200 man -P cat 5 xrcbench-result 2>&1) && grep -q 'xrcbench-result - the format of a run folder' <<<"$out" &&
	pass "man 5 xrcbench-result" || fail "man 5 xrcbench-result: $(head -n 5 <<<"$out")"
out=$(in_root dpkg -L xrcbench)
for f in /usr/bin/xrcbench /usr/share/man/man1/xrcbench.1.gz /usr/share/man/man5/xrcbench-result.5.gz /usr/share/bash-completion/completions/xrcbench /usr/share/zsh/vendor-completions/_xrcbench \
	/usr/share/doc/xrcbench/copyright /usr/share/doc/xrcbench/changelog.gz; do
	grep -qx "$f" <<<"$out" && pass "dpkg -L: $f" || fail "dpkg -L lacks $f"
done
# no page for PowerShell's completion, which no package installs
! grep -qi powershell <<<"$out" && pass "dpkg -L: no PowerShell page" || fail "dpkg -L: $(grep -i powershell <<<"$out")"

# Bash completion as an interactive shell gets it: bash-completion loads
# /usr/share/bash-completion/completions/xrcbench on first use, and the
# function it registers is called as readline calls it.
complete_in_root() { # LINE: prints the candidates
	in_root bash --norc --noprofile -c '
		. /usr/share/bash-completion/bash_completion
		_completion_loader xrcbench
		fn=$(complete -p xrcbench | sed -n "s/.*-F \([^ ]*\) xrcbench\$/\1/p")
		[ -n "$fn" ] || exit 3
		COMP_LINE=$1 COMP_POINT=${#1} COMP_TYPE=63
		read -ra COMP_WORDS <<<"$COMP_LINE"
		[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
		"$fn" xrcbench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sed "s/  *(.*//; s/ *$//" | sort | tr "\n" " "' bash "$1"
}
for c in "xrcbench ru|run " "xrcbench run --workload st|steady storm " "xrcbench run --provider si|sim "; do
	line=${c%%|*} want=${c#*|}
	got=$(complete_in_root "$line" 2>/dev/null || true)
	[ "$got" = "$want" ] && pass "bash completes '$line' to $want" || fail "bash completes '$line' to '$got', want '$want'"
done

echo "disttest: $passed passed, $failed failed"
[ "$failed" = 0 ]
