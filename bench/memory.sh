#!/bin/sh
# Device memory of the zoo's models with and without memory planning
# (CPU only): each model compiled to PTX (pb-import | pb-fuse |
# pb-codegen, whose missing stages run with their defaults) and its launch
# plan read back. Prints a Markdown table: launches, intermediate (scratch)
# buffers, their sum (the old footprint: one allocation each), the arena
# that packs them by liveness, the most bytes live at one launch (the
# bound no packing goes below), weights and inputs/outputs, and the peak
# (arena + weights + inputs/outputs) against the old peak.
#
#   bench/memory.sh [--build DIR] [NAME ...]
#   (default: resnet18 resnet50 densenet121 convnext_tiny inception_v3
#   swin_t; models from tests/zoo/export.py, cached under $PB_ZOO,
#   default ~/.cache/pb-zoo)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${PB_BUILD:-$root/build}
zoo=${PB_ZOO:-$HOME/.cache/pb-zoo}
python=${PYTHON:-/usr/bin/python3}
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	-*) echo "usage: $0 [--build DIR] [NAME ...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- resnet18 resnet50 densenet121 convnext_tiny \
	inception_v3 swin_t
bin=$build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! "$python" "$root/tests/zoo/export.py" "$zoo" "$@" 2>"$tmp/export.err"; then
	cat "$tmp/export.err" >&2
	exit 1
fi

printf '| model | launches | buffers | intermediates MiB | arena MiB | live max MiB | weights MiB | in+out MiB | peak MiB | old peak MiB | peak saved |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
rc=0
for m in "$@"; do
	if ! { "$bin/pb-import" "$zoo/$m.onnx" | "$bin/pb-fuse" |
		"$bin/pb-codegen" --plan "$tmp/$m.json" -o "$tmp/$m.ptx"; } \
		2>"$tmp/$m.err"; then
		printf '| %s | failed: %s |\n' "$m" "$(head -c 200 "$tmp/$m.err" | tr '\n|' ' /')"
		rc=1
		continue
	fi
	"$python" - "$m" "$tmp/$m.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[2]))
m = p["memory"]
mib = lambda b: "%.1f" % (b / 2**20)
fixed = m["inputs"] + m["outputs"] + m["params"]
old = fixed + m["intermediates"]
nscratch = sum(1 for b in p["buffers"] if b["kind"] == "scratch")
print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %.1fx |" % (
    sys.argv[1], len(p["launches"]), nscratch, mib(m["intermediates"]),
    mib(m["arena"]), mib(m["live_max"]), mib(m["params"]),
    mib(m["inputs"] + m["outputs"]), mib(m["peak"]), mib(old),
    old / m["peak"]))
PY
done
exit $rc
