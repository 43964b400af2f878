#!/usr/bin/env bash
# Builds, once, the guest that make vmtest boots: a minimal Debian root
# filesystem with a real kernel, rdma-core and its providers, as an ext4
# image plus the guest's own kernel and initrd for -kernel/-initrd boot.
#
# The image is cached outside the repository, under
# ${XDG_CACHE_HOME:-~/.cache}/xrcbench/vm/<key>, where <key> hashes the
# package list, the suite, the mirror, this script and the guest's init: change any of them
# and the next run builds a new image; otherwise it takes seconds.
#
# Prints the cache folder on stdout. Needs root (mmdebstrap in root mode,
# mkfs.ext4 -d keeping the files' owners). Bounded by VM_BUILD_TIMEOUT.
set -euo pipefail

# What the guest needs: its kernel (with rdma_rxe as a module), the real
# userspace stack (libibverbs and the rxe provider), ibv_devinfo to compare
# against, iproute2's rdma and ip tools, kmod's modprobe. The init is
# test/vm/guest-init.sh, so no systemd; minbase brings bash and coreutils.
PACKAGES=(linux-image-amd64 rdma-core ibverbs-providers ibverbs-utils iproute2 kmod util-linux)
# The softxrc test device (test/vm/softxrc): its module is built against
# the guest kernel's own headers, its libibverbs provider against the
# headers of the guest's rdma-core source (Debian's orig tarball of the
# guest's version, pinned below), both in the image's chroot at build time
# (native speed, not TCG); python3 runs rdma-core's own header generator,
# libibverbs-dev builds the plain C loop the floor is checked against.
SOFTXRC_PACKAGES=(linux-headers-amd64 gcc make libc6-dev libibverbs-dev python3-minimal)
RDMA_CORE_VERSION=56.1
RDMA_CORE_SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8

# The suite: trixie (kernel 6.12) if the mirror serves it, else bookworm
# (6.1), said on stderr. The mirror is the one apt uses on this machine.
mirror=${VM_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		grep -oE 'https?://[^ ]+' | grep -v -- '-security' | head -n1 || true)
	mirror=${mirror:-http://deb.debian.org/debian}
fi
mirror=${mirror%/}
suite=${VM_SUITE:-}
if [ -z "$suite" ]; then
	if timeout 30 curl -fsS -o /dev/null "$mirror/dists/trixie/InRelease" 2>/dev/null; then
		suite=trixie
	else
		suite=bookworm
		echo "vm image: $mirror does not serve trixie; falling back to bookworm (kernel 6.1)" >&2
	fi
fi

here=$(cd "$(dirname "$0")" && pwd)
key=$( { printf '%s\n' "${PACKAGES[@]}" "${SOFTXRC_PACKAGES[@]}" "$suite" "$mirror"; cat "$here/image.sh" "$here/guest-boot.sh" "$here"/softxrc/Kbuild "$here"/softxrc/Makefile "$here"/softxrc/*.c "$here"/softxrc/*.sh "$here"/softxrc/provider/*; } | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/xrcbench/vm/$key
if [ -f "$cache/ok" ]; then
	echo "$cache"
	exit 0
fi

for tool in mmdebstrap mkfs.ext4; do
	command -v "$tool" >/dev/null || { echo "vm image: $tool not installed (apt-get install mmdebstrap e2fsprogs)" >&2; exit 2; }
done
command -v flock >/dev/null || { echo "vm image: flock not installed (apt-get install util-linux)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "vm image: building the guest image needs root (mmdebstrap, file owners in the image)" >&2; exit 2; }

parent=$(dirname "$cache")
mkdir -p "$parent"
# Built beside its final place and renamed into it once whole: an
# interrupted build leaves no half-made image that a later run would use.
# A build killed outright (SIGKILL, a CI job's timeout) cannot remove its
# <key>.tmp.* folder, so each build removes those whose builder is gone:
# a builder holds the lock on its folder's .builder.lock for its life, and
# so do the mmdebstrap and mkfs it starts, which outlive a killed script.
# parent/.builds.lock makes finding the stale folders and making a new one
# one step, so no build takes another's new folder, not yet locked, for
# stale.
exec 8>"$parent/.builds.lock"
flock 8
for stale in "$parent"/*.tmp.*; do
	[ -d "$stale" ] || continue
	if [ -e "$stale/.builder.lock" ]; then
		flock -n "$stale/.builder.lock" true || continue # its builder runs
	elif [ -z "$(find "$stale" -maxdepth 0 -mmin +1440)" ]; then
		continue # from before this lock, and less than a day old: it may run
	fi
	echo "vm image: removing $stale, left by a build that was killed" >&2
	rm -rf "$stale"
done
work=$(mktemp -d "$cache.tmp.XXXXXX")
exec 9>"$work/.builder.lock"
flock 9
exec 8>&-
trap 'rm -rf "$work"' EXIT
root=$work/root

echo "vm image: building $suite guest from $mirror into $cache (once; a few minutes)" >&2
# softxrc needs the guest's rdma-core source: the orig tarball of its
# version from the mirror's pool (its .dsc may be missing there; the
# tarball is all the build uses), checked against the pinned hash. Where
# it cannot be had, the image is built without softxrc and says why in
# /softxrc-skip, and make vmtest skips the softxrc part saying so.
softxrc_skip=
tarball=rdma-core_$RDMA_CORE_VERSION.orig.tar.gz
if [ "$suite" != trixie ]; then
	softxrc_skip="the guest is $suite; softxrc's provider is pinned to trixie's rdma-core $RDMA_CORE_VERSION"
elif ! timeout 120 curl -fsS -o "$work/$tarball" "$mirror/pool/main/r/rdma-core/$tarball" 2>"$work/curl.err"; then
	softxrc_skip="rdma-core $RDMA_CORE_VERSION source ($mirror/pool/main/r/rdma-core/$tarball) cannot be had: $(head -c 200 "$work/curl.err")"
elif ! echo "$RDMA_CORE_SHA256  $work/$tarball" | sha256sum -c --quiet >/dev/null 2>&1; then
	echo "vm image: $tarball does not have the pinned sha256 $RDMA_CORE_SHA256" >&2
	exit 1
fi
include=("${PACKAGES[@]}")
if [ -z "$softxrc_skip" ]; then
	include+=("${SOFTXRC_PACKAGES[@]}")
	mkdir -p "$work/softxrc-src"
	cp -r "$here/softxrc/." "$work/softxrc-src/"
	tar -xzf "$work/$tarball" -C "$work/softxrc-src"
	# Built in the chroot (image-hook.sh): the module against the headers
	# of the kernel the image boots, then the provider and the C loop.
	hook="bash '$here/softxrc/image-hook.sh' \"\$1\" '$work/softxrc-src' $RDMA_CORE_VERSION"
else
	echo "vm image: without softxrc: $softxrc_skip" >&2
	printf '%s\n' "$softxrc_skip" > "$work/softxrc-skip"
	hook="cp '$work/softxrc-skip' \"\$1/softxrc-skip\""
fi
# Documentation, manuals and translations are left out: the image only
# has to boot and run the checks, and smaller builds and copies faster.
timeout "${VM_BUILD_TIMEOUT:-1200}" mmdebstrap --mode=root --variant=minbase \
	--include="$(IFS=,; echo "${include[*]}")" \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--customize-hook="$hook" \
	--customize-hook='chroot "$1" dpkg-query -W -f="\${Package} \${Version}\n" > "$1/xrcbench-packages.txt"' \
	"$suite" "$root" "$mirror" >"$work/mmdebstrap.log" 2>&1 || {
	echo "vm image: mmdebstrap failed; its last lines:" >&2
	tail -n 20 "$work/mmdebstrap.log" >&2
	exit 1
}

mkdir -p "$work/out"
kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img"
echo "$kver" > "$work/out/kernel-version"
echo "$suite" > "$work/out/suite"
cp "$root/xrcbench-packages.txt" "$work/out/packages.txt"
# The payload (binary and checks) comes on a second disk at each run; the
# guest's init mounts it here and runs its checks.
mkdir -p "$root/payload"
install -m 755 "$here/guest-boot.sh" "$root/sbin/xrcbench-init"
size=$(( $(du -sm "$root" | cut -f1) + 256 ))
mkfs.ext4 -q -L xrcroot -d "$root" "$work/out/rootfs.img" "${size}M" >&2
# Written out before the first boot, so that the host's writeback of the
# fresh image does not share the CPUs with the guest's first measurements.
sync -f "$work/out/rootfs.img"
touch "$work/out/ok"
rm -rf "$cache"
mv "$work/out" "$cache"
echo "vm image: ready in $cache ($suite, kernel $kver, ${size} MiB)" >&2
echo "$cache"
