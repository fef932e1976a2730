"""fit.test: make "measured" times from known constants, fit, print."""
import json
import os
import shutil
import subprocess
import sys

bench, tmp = sys.argv[1], sys.argv[2]
tile = shutil.which("pb-tile")
build = os.path.dirname(os.path.dirname(tile))
subprocess.run([sys.executable, os.path.join(bench, "gen_cases.py"),
                os.path.join(tmp, "ops")], check=True, stdout=subprocess.DEVNULL)
truth = json.load(open(os.path.join(bench, "..", "targets", "sm_90.json")))
truth["launch_s"] = 1e-5
truth["model"] = {"mem_cycles": 8}
tf = os.path.join(tmp, "truth.json")
json.dump(truth, open(tf, "w"))
print("truth: launch_s 1e-05, mem_cycles 8")
cases = []
for name in ("add_relu_4096x4096", "matmul_1024"):
    onnx = os.path.join(tmp, "ops", name, "model.onnx")
    imp = subprocess.run(["pb-import", onnx], check=True, stdout=subprocess.PIPE).stdout
    fused = subprocess.run(["pb-fuse", "--fusion="], input=imp, check=True,
                           stdout=subprocess.PIPE).stdout
    rep = os.path.join(tmp, name + ".json")
    sizes = subprocess.run(["pb-tile", "--target-file", tf, "--report", rep, "--dump-sizes",
                            "-o", "/dev/null"], input=fused, check=True,
                           stderr=subprocess.PIPE).stderr.decode().strip()
    ks = json.load(open(rep))["kernels"]
    cases.append({"case": name, "from": "ops", "nests": len(ks), "sizes": sizes,
                  "total_ms": sum(k["predicted_s"] for k in ks) * 1e3,
                  "measured": [{"origin": k["kernel"], "nest": k["nest"],
                                "ms": k["predicted_s"] * 1e3} for k in ks]})
mf = os.path.join(tmp, "measured.json")
json.dump({"format": "pb-measured 1", "device": "pb-tile itself", "target": "sm_90",
           "arch": "sm_90", "commit": "-", "source": "fit.test",
           "stages": {"pb-fuse": ["--fusion="]}, "cases": cases}, open(mf, "w"))
out = os.path.join(tmp, "fitted.json")
p = subprocess.run([sys.executable, os.path.join(bench, "fit.py"), mf, "--build", build,
                    "--params", "launch_s,model.mem_cycles,model.tree_step_cycles",
                    "--prior", "0", "--out", out], check=True, stdout=subprocess.PIPE, text=True)
for line in p.stdout.splitlines():
    if line.startswith("fit: ") and "sweep" not in line:
        print(line)
d = json.load(open(out))
print("fitted: launch_s within 3%%: %s, mem_cycles within 3%%: %s" % (
    abs(d["launch_s"] / 1e-5 - 1) < 0.03, abs(d["model"]["mem_cycles"] / 8 - 1) < 0.03))
print("source:", d["model"]["source"][:40])
