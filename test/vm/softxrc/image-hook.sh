#!/bin/bash
# mmdebstrap's customize hook for the softxrc test device (image.sh): builds
# the module against the headers of the kernel the image boots, installs it
# where modprobe finds it, then builds and installs the libibverbs provider
# against the rdma-core source of the image's own libibverbs, and the plain
# C loop of reg/unreg the floor figure is checked against. Each build runs
# in the chroot, at native speed. Fails loudly: a build that breaks is a
# failed image, never a silent skip.
#   image-hook.sh ROOT SOURCES RDMA_CORE_VERSION
set -euo pipefail
root=$1 sources=$2 version=$3
src=/usr/src/softxrc
mkdir -p "$root$src"
cp -r "$sources/." "$root$src/"
kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
[ -d "$root/lib/modules/$kver/build" ] || { echo "softxrc: no headers for kernel $kver in the image (linux-headers-amd64 of another version?)" >&2; exit 1; }
have=$(chroot "$root" dpkg-query -W -f='${Version}' libibverbs1)
case $have in
"$version"-*) ;;
*) echo "softxrc: the image's libibverbs1 is $have, the provider's source is rdma-core $version" >&2; exit 1 ;;
esac
chroot "$root" make -s -C "$src" KVER="$kver" >&2
install -D -m 644 "$root$src/softxrc.ko" "$root/lib/modules/$kver/updates/softxrc.ko"
chroot "$root" depmod -a "$kver"
chroot "$root" sh "$src/provider/build.sh" "$src/rdma-core-$version" "$src/provider" >&2
chroot "$root" gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o /usr/local/bin/softxrc-loop "$src/loop.c" -libverbs
# The source tree is only headers for the build: not needed in the image.
rm -rf "${root:?}$src/rdma-core-$version"
echo "softxrc: module for $kver, provider and softxrc-loop installed" >&2
