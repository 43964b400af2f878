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
key=$( { printf '%s\n' "${PACKAGES[@]}" "$suite" "$mirror"; cat "$here/image.sh" "$here/guest-boot.sh"; } | sha256sum | cut -c1-16)
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
# Documentation, manuals and translations are left out: the image only
# has to boot and run the checks, and smaller builds and copies faster.
timeout "${VM_BUILD_TIMEOUT:-1200}" mmdebstrap --mode=root --variant=minbase \
	--include="$(IFS=,; echo "${PACKAGES[*]}")" \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
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
touch "$work/out/ok"
rm -rf "$cache"
mv "$work/out" "$cache"
echo "vm image: ready in $cache ($suite, kernel $kver, ${size} MiB)" >&2
echo "$cache"
