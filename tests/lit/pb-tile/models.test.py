"""Summarise a pb-tile --report for FileCheck: one line per nest."""
import json, sys

r = json.load(open(sys.argv[1]))
print("arch", r["arch"])
fields = ("kernel", "index", "nest", "mapping", "band", "grid", "threads",
          "registers", "shared_bytes", "occupancy", "waves", "global_bytes",
          "flops", "intensity", "predicted_s")
ok = True
for k in r["kernels"]:
    ok &= all(f in k for f in fields)
    sizes = "sizes ok"
    if k["mapping"] == "tile":
        t, b = k["tile"], k["block"]
        linear = len(t) == 1 and len(k["band"]) > 1  # a linearised band
        if (len(t) != len(k["band"]) and not linear) or \
                any(x % y for x, y in zip(t, b)):
            sizes = "sizes bad"
    ok &= k["predicted_s"] > 0 and 0 < k["occupancy"] <= 1
    print(k["kernel"], k["mapping"], "band=%s" % k["band"], sizes)
print("all fields present" if ok else "missing or bad fields")
