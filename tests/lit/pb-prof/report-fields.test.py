"""Print the shared fields of pb-tile's, pb-prof --static's and pb-smem's
reports (report-fields.test)."""
import json
import sys

FIELDS = ("threads", "registers", "shared_bytes", "blocks_per_sm", "occupancy",
          "waves", "predicted_s", "bound")


def have(k):
    return " ".join(f for f in FIELDS if f in k)


if sys.argv[1] == "--smem":
    for k in json.load(open(sys.argv[2]))["kernels"]:
        print(k["kernel"], "smem:", have(k))
    sys.exit(0)
tile = {k["kernel"]: k for k in json.load(open(sys.argv[1]))["kernels"]}
prof = {k["origin"]: k for k in json.load(open(sys.argv[2]))["kernels"]}
t, p = tile["k3_exp"], prof["k3_exp"]
print("k3_exp tile:", have(t))
print("k3_exp prof:", have(p))
print("same prediction: %s, same bound: %s, same threads: %s" % (
    abs(t["predicted_s"] - p["predicted_s"]) <= 1e-6 * t["predicted_s"],
    t["bound"] == p["bound"], t["threads"] == p["threads"]))
print("prof registers are ptxas's:", p["registers"] == p["ptxas"]["registers"])
