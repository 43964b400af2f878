#!/bin/sh
# Builds libsoftxrc, the softxrc test device's libibverbs provider, against
# the headers of an rdma-core source tree of the same version as the
# libibverbs it will load into (its private ABI: the verbs_context_ops
# layout and verbs_register_driver_<PABI>), and installs it with its
# .driver file. Runs inside the guest image's chroot at image-build time.
#   build.sh RDMA_CORE_SRC PROVIDER_SRC_DIR
# Only the headers of the tree are used: its generated ones (config.h and
# kernel-abi/ib_user_verbs.h, which rdma-core's cmake makes) are made here
# the same way, by rdma-core's own make_abi_structs.py.
set -eu
src=$1
here=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inc=$work/include
mkdir -p "$inc/infiniband" "$inc/kernel-abi"
cp "$src"/libibverbs/*.h "$inc/infiniband/"
cp "$src/kernel-headers/rdma/ib_user_ioctl_verbs.h" "$inc/infiniband/"
cp -r "$src/kernel-headers/rdma" "$inc/rdma"
cp -r "$src/kernel-headers/linux" "$inc/linux"
python3 "$src/buildlib/make_abi_structs.py" "$src/kernel-headers/rdma/ib_user_verbs.h" "$inc/kernel-abi/ib_user_verbs.h"
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")$/\1/p' "$src/CMakeLists.txt")
[ -n "$pabi" ] || { echo "build.sh: no IBVERBS_PABI_VERSION in $src/CMakeLists.txt" >&2; exit 1; }
libdir=$(dirname "$(readlink -f /usr/lib/*/libibverbs.so.1)")
[ -d "$libdir/libibverbs" ] || { echo "build.sh: no provider directory $libdir/libibverbs" >&2; exit 1; }
# The installed libibverbs must export this tree's private ABI (its
# symbol version names it), or it would refuse to load the provider.
grep -q "IBVERBS_PRIVATE_$pabi" "$libdir/libibverbs.so.1" ||
	{ echo "build.sh: $libdir/libibverbs.so.1 has no IBVERBS_PRIVATE_$pabi: rdma-core source and library differ" >&2; exit 1; }
# config.h as rdma-core's cmake makes it for Linux on a 64-bit machine,
# with both the write and ioctl command paths.
sed -e "s/@IBVERBS_PABI_VERSION@/$pabi/" \
	-e "s/@IBVERBS_PROVIDER_SUFFIX@/-rdmav$pabi.so/" \
	-e 's/@IOCTL_MODE_NUM@/3/' \
	-e 's/@SIZEOF_LONG_CODE@/#define SIZEOF_LONG 8/' \
	-e 's/^#cmakedefine \(HAVE_FUNC_ATTRIBUTE_ALWAYS_INLINE\|HAVE_FUNC_ATTRIBUTE_SYMVER\|HAVE_WORKING_IF_H\|HAVE_FULL_SYMBOL_VERSIONS\) 1$/#define \1 1/' \
	-e 's/^#cmakedefine .*$//' \
	-e 's/@[A-Za-z_]*@//g' \
	"$src/buildlib/config.h.in" > "$inc/config.h"
lib=libsoftxrc-rdmav$pabi.so
gcc -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Werror -Wno-unused-parameter \
	-I"$inc" -I"$src" -Wl,--version-script="$src/buildlib/provider.map" -Wl,-z,defs \
	-o "$work/$lib" "$here/softxrc.c" "$libdir/libibverbs.so.1"
install -m 644 "$work/$lib" "$libdir/libibverbs/$lib"
echo "driver softxrc" > /etc/libibverbs.d/softxrc.driver
echo "build.sh: installed $libdir/libibverbs/$lib (private ABI $pabi)"
