#!/bin/sh
# Install the Debian packages pb needs; a fast no-op when all are present.
# Usage: scripts/deps.sh   (as root, or with sudo available)
set -e
PKGS="gcc make pkg-config python3 python3-numpy python3-onnx
libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
libisl-dev libjansson-dev protobuf-c-compiler libprotobuf-c-dev
libonnx-dev libonnx-testdata librsvg2-bin"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
