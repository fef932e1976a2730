#!/bin/sh
# Install the Debian packages pb needs; a fast no-op when all are present.
# Usage: scripts/deps.sh   (as root, or with sudo available)
#        scripts/deps.sh --tile [BUILD]   NVIDIA's Tile IR tools (tileiras,
#        tileirdisasm; PyPI nvidia-cuda-tileiras) into BUILD/venv-tile
#        (default build/), where pb-codegen --backend=tile finds them; not
#        needed by make check (docs/tileir.md)
#        scripts/deps.sh --zoo    also Debian's PyTorch and torchvision,
#        which make zoo exports its models with (docs/testing.md)
set -e
if [ "$1" = "--tile" ]; then
	venv="${2:-build}/venv-tile"
	ls "$venv"/lib/python3*/site-packages/nvidia/cu*/bin/tileiras >/dev/null 2>&1 && exit 0
	echo "deps: installing nvidia-cuda-tileiras into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q nvidia-cuda-tileiras
	exit 0
fi
PKGS="gcc make pkg-config python3 python3-numpy python3-onnx
libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
libisl-dev libjansson-dev protobuf-c-compiler libprotobuf-c-dev
libonnx-dev libonnx-testdata librsvg2-bin"
[ "$1" = "--zoo" ] && PKGS="$PKGS python3-torch python3-torchvision"
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
