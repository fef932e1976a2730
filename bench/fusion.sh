#!/bin/sh
# Fusion benchmark (CPU only, no GPU needed): each model under
# ../shared/models and each operator case of bench/gen_cases.py through
# pb-import | pb-fuse three ways -- no fusion, MLIR's affine-loop-fusion
# (pb-fuse --upstream-fusion) and pb's fusion -- with pb-fuse --report
# giving kernels and global bytes, and pb-run checking every result:
# models against their reference outputs, operator cases against the
# unfused result on the same random inputs, the ONNX node tests of the e2e
# suite (tests/e2e/node-tests.txt) against their test_data_set_0. Prints
# one table.
#
#   bench/fusion.sh [--build DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
[ "${1:-}" = --build ] && build=$2
bin=$build/bin
models=${MODELS:-$root/../shared/models}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# field FILE KEY SUB: an integer of the report's "before"/"after" object
field() {
	"$python" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r[sys.argv[2]][sys.argv[3]])" "$@"
}

# mb BYTES: "30.21M", "1.9k" or "80"
mb() {
	awk -v b="$1" 'BEGIN { if (b >= 1e6) printf "%.2fM", b / 1e6;
		else if (b >= 1e3) printf "%.1fk", b / 1e3; else printf "%d", b }'
}

# run NAME MLIR CHECKARGS...: "ok" when pb-run's results match
run() {
	name=$1 mlir=$2
	shift 2
	if "$bin/pb-run" --device=cpu "$mlir" "$@" >"$tmp/run.out" 2>&1; then
		echo ok
	else
		echo WRONG
	fi
}

printf '%-28s %5s | %7s %8s %4s | %8s %8s %8s | %-6s %-6s | %5s\n' \
	case nodes none upstream pb "B none" upstream pb \
	"up ok" "pb ok" "fuse s"
printf '%s\n' "-----------------------------------------------------------------------------------------------------------"

cases=
for m in "$models"/*.onnx; do
	[ -e "$m" ] && [ -e "${m%.onnx}.in.npy" ] && cases="$cases $m"
done
"$python" "$here/gen_cases.py" "$tmp/ops" >/dev/null
for m in "$tmp"/ops/*/model.onnx; do
	[ -e "$m" ] && cases="$cases $m"
done
data=${ONNX_DATA:-/usr/share/libonnx-testdata/data}/node
for t in $(grep -v '^#' "$root/tests/e2e/node-tests.txt"); do
	[ -e "$data/$t/model.onnx" ] && cases="$cases $data/$t/model.onnx"
done

for m in $cases; do
	case $m in
	"$data"/*) name=$(basename "$(dirname "$m")") ref=data ;;
	*/model.onnx) name=$(basename "$(dirname "$m")") ref= ;;
	*) name=$(basename "$m" .onnx) ref=${m%.onnx} ;;
	esac
	nodes=$("$python" -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$m")
	"$bin/pb-import" "$m" -o "$tmp/in.mlir" || { echo "$name: pb-import failed"; continue; }
	"$bin/pb-fuse" --no-fusion --report "$tmp/none.json" "$tmp/in.mlir" -o "$tmp/none.mlir" &&
	"$bin/pb-fuse" --upstream-fusion --report "$tmp/up.json" "$tmp/in.mlir" -o "$tmp/up.mlir" &&
	s=$( { /usr/bin/time -f %e "$bin/pb-fuse" --report "$tmp/pb.json" "$tmp/in.mlir" -o "$tmp/pb.mlir" ; } 2>&1 ) ||
		{ echo "$name: pb-fuse failed"; continue; }
	if [ "$ref" = data ]; then
		set -- --data "$(dirname "$m")/test_data_set_0" --rtol 1e-3
	elif [ -n "$ref" ]; then
		set -- --input "$ref.in.npy" --check "$ref.out.npy" --rtol 1e-3
	else
		"$bin/pb-run" --device=cpu --random=7 --output "$tmp/ref" "$tmp/none.mlir" >/dev/null 2>&1
		set -- --random=7 --rtol 1e-3
		for o in "$tmp"/ref/*.npy; do set -- "$@" --check "$o"; done
	fi
	up_ok=$(run "$name" "$tmp/up.mlir" "$@")
	pb_ok=$(run "$name" "$tmp/pb.mlir" "$@")
	rm -rf "$tmp/ref"
	printf '%-28s %5s | %7s %8s %4s | %8s %8s %8s | %-6s %-6s | %5s\n' \
		"$name" "$nodes" \
		"$(field "$tmp/none.json" after kernels)" \
		"$(field "$tmp/up.json" after kernels)" \
		"$(field "$tmp/pb.json" after kernels)" \
		"$(mb "$(field "$tmp/none.json" after bytes)")" \
		"$(mb "$(field "$tmp/up.json" after bytes)")" \
		"$(mb "$(field "$tmp/pb.json" after bytes)")" \
		"$up_ok" "$pb_ok" "$s"
done
