"""Check a pb-prof --json report or --trace file for the lit tests.

usage: check_prof.py json FILE [NKERNELS]   prints one line per kernel:
           "<index> <kernel> nodes=<a,b> flops=<f> bytes=<b> ok" when its
           times are positive and consistent (min <= median, repeat samples)
       check_prof.py trace FILE             prints "events <n> kernels <k>"
           after checking that every event is a complete event (ph X) with
           non-negative ts and positive dur
"""
import json
import sys

kind, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
if kind == "json":
    print("device", d["device"], "target", d["target"], "warmup", d["warmup"],
          "repeat", d["repeat"])
    assert d["total_median_ms"] > 0 and d["total_min_ms"] <= d["total_median_ms"]
    for k in d["kernels"]:
        t = k["times_ms"]
        assert len(t) == d["repeat"], k
        assert all(x > 0 for x in t), k
        assert 0 < k["min_ms"] <= k["median_ms"], k
        assert abs(sum(x["share"] for x in d["kernels"]) - 1) < 1e-6
        flops = "null" if k["flops"] is None else "%g" % k["flops"]
        print(k["index"], k["kernel"], "nodes=" + ",".join(k["nodes"]),
              "flops=" + flops, "bytes=%d" % k["bytes"], "ok")
else:
    ev = [e for e in d["traceEvents"] if e["ph"] != "M"]
    for e in ev:
        assert e["ph"] == "X" and e["ts"] >= 0 and e["dur"] > 0, e
        assert e["pid"] == 1 and e["tid"] == 1 and e["name"], e
    print("events", len(ev), "kernels", len({e["name"] for e in ev}))
