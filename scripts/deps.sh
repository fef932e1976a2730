#!/bin/sh
# Install the Debian packages pb needs; a fast no-op when all are present.
# Usage: scripts/deps.sh   (as root, or with sudo available)
#        scripts/deps.sh --isl PREFIX   pb's own isl (IMath with the
#        small-integer optimisation, from the isl sources in islpy's
#        source distribution on PyPI, built by scripts/isl/isl.mk) into
#        PREFIX; the Makefile runs it when PREFIX/lib/libisl.a is missing
#        (docs/design.md, "isl")
#        scripts/deps.sh --tile [BUILD]   NVIDIA's Tile IR tools (tileiras,
#        tileirdisasm; PyPI nvidia-cuda-tileiras) into BUILD/venv-tile
#        (default build/), where pb-codegen --backend=tile finds them; not
#        needed by make check (docs/tileir.md)
#        scripts/deps.sh --zoo    also Debian's PyTorch and torchvision,
#        which make zoo exports its models with (docs/testing.md)
set -e
here=$(cd "$(dirname "$0")" && pwd)

# need PKG...: install those of the Debian packages PKG that are missing.
need() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "deps: installing$missing" >&2
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# The isl of pb: isl 0.25 (the release Debian 12's libisl-dev has; islpy
# 2022.2.1 bundles it, its public headers byte for byte Debian's), built
# with IMath and 32-bit small integers as Polly and islpy build it.
# ISL_BUILD names the build recipe: change it when scripts/isl/ changes, so
# that an old PREFIX is built again.
ISLPY=2022.2.1
ISLPY_SHA256=5eae2db80434910e8ffe2476ea9182ba3f8f51c274ac94c76ba2dabf2515061c
ISL_BUILD="isl-0.25 (islpy $ISLPY) imath-32, scripts/isl r1"

# isl PREFIX: build pb's isl into PREFIX unless it is there already; one
# build at a time (a lock beside PREFIX), moved into place when complete.
isl() {
	prefix=$1
	[ -n "$prefix" ] || { echo "usage: $0 --isl PREFIX" >&2; exit 2; }
	done_already() {
		[ -f "$prefix/lib/libisl.a" ] &&
			[ "$(cat "$prefix/BUILD" 2>/dev/null)" = "$ISL_BUILD" ]
	}
	done_already && return 0
	need gcc make python3-pip
	mkdir -p "$(dirname "$prefix")"
	exec 9>"$prefix.lock"
	flock 9
	done_already && return 0
	tmp=$(mktemp -d "$prefix.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT INT TERM
	echo "deps: building isl 0.25 with IMath (islpy $ISLPY's sources from PyPI) into $prefix" >&2
	if ! /usr/bin/python3 -m pip download --no-binary :all: --no-deps \
			-d "$tmp" "islpy==$ISLPY" >"$tmp/pip.log" 2>&1; then
		tail -5 "$tmp/pip.log" >&2
		echo "deps: error: could not download islpy $ISLPY's sources from PyPI; 'make ISL=system' links Debian's libisl instead (GMP integers: pb-fuse, pb-tile and pb-smem run slower; docs/design.md, \"isl\")" >&2
		exit 1
	fi
	sdist="$tmp/islpy-$ISLPY.tar.gz"
	if [ "$(sha256sum "$sdist" | cut -d' ' -f1)" != "$ISLPY_SHA256" ]; then
		echo "deps: error: $sdist: sha256 is not islpy $ISLPY's" >&2
		exit 1
	fi
	tar xzf "$sdist" -C "$tmp" "islpy-$ISLPY/isl"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -f "$here/isl/isl.mk" \
		-j"$(nproc)" SRC="$tmp/islpy-$ISLPY/isl" O="$tmp/build" \
		PREFIX="$tmp/prefix" VERSION="isl-0.25-islpy-$ISLPY" install
	echo "$ISL_BUILD" >"$tmp/prefix/BUILD"
	rm -rf "$prefix"
	mv "$tmp/prefix" "$prefix"
}

case $1 in
--isl)
	isl "$2"
	exit 0
	;;
--tile)
	venv="${2:-build}/venv-tile"
	ls "$venv"/lib/python3*/site-packages/nvidia/cu*/bin/tileiras >/dev/null 2>&1 && exit 0
	echo "deps: installing nvidia-cuda-tileiras into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q nvidia-cuda-tileiras
	exit 0
	;;
esac
PKGS="gcc make pkg-config python3 python3-numpy python3-onnx python3-pip
libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
libisl-dev libjansson-dev libjemalloc-dev protobuf-c-compiler libprotobuf-c-dev
libonnx-dev libonnx-testdata librsvg2-bin"
[ "$1" = "--zoo" ] && PKGS="$PKGS python3-torch python3-torchvision"
need $PKGS
