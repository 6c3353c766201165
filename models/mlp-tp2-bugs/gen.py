#!/usr/bin/env python3
"""gen.py — write the broken variants of models/mlp-tp2 (and one correct
twin that slices a replicated weight) as bundles next to this file.

Each variant is the correct Megatron MLP with one planted bug; README.md
says what each one must report.  Run from anywhere: python3 gen.py"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = json.load(open(os.path.join(HERE, "..", "mlp-tp2", "bundle.json")))


def node(b, name):
    return next(n for n in b["impl"]["nodes"] if n["name"] == name)


def write(name, b, description):
    b["name"] = "mlp-tp2-" + name
    b["description"] = description
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(b, f, indent=1)
        f.write("\n")


def inp(b, name):
    return next(t for t in b["impl"]["inputs"] if t["name"] == name)


# 1. x sharded along the batch where it must be replicated (each rank
#    multiplies only its half of the batch by its column shard of w1): the
#    cross terms x_0 @ w1_1 and x_1 @ w1_0 are never computed.
b = copy.deepcopy(BASE)
for r in (0, 1):
    inp(b, f"x_{r}")["shape"] = [2, 8]
    for n in ("h", "g", "p", "y"):
        pass
for n in b["impl"]["nodes"]:
    for o in n["outputs"]:
        o["shape"] = [2, 8]
b["input_relation"]["x"] = ["cat(x_0, x_1, dim=0)"]
b["expect_output_relation"] = {"y": ["cat(y_0, y_1, dim=0)"]}
write("sharded-input", b, "BUG ON PURPOSE: x is split along the batch where Megatron's column-parallel "
      "fc1 needs it replicated; fc1 cannot be mapped")

# 2. the all_reduce is missing: each rank returns its partial sum.
b = copy.deepcopy(BASE)
b["impl"]["nodes"] = [n for n in b["impl"]["nodes"] if n["name"] != "allreduce"]
b["impl"]["outputs"] = ["p_0", "p_1"]
# what the author meant: y on every rank
b["expect_output_relation"] = {"y": ["p_0", "p_1"]}
write("missing-allreduce", b, "BUG ON PURPOSE: the all_reduce after the row-parallel fc2 is missing; "
      "y is only the sum of the ranks' outputs, not on each rank as expected")

# 3. the all_reduce replaced by an all_gather along dim 0.
b = copy.deepcopy(BASE)
ar = node(b, "allreduce")
ar["op"] = "comm.all_gather"
ar["args"] = [["p_0", "p_1"]]
ar["kwargs"] = {"dim": 0}
for o in ar["outputs"]:
    o["shape"] = [8, 8]
# what the author meant: the first rows of the gathered result are y
b["expect_output_relation"] = {"y": ["slice(y_0, dim=0, start=0, end=4)",
                                     "slice(y_1, dim=0, start=0, end=4)"]}
write("allgather-for-allreduce", b, "BUG ON PURPOSE: the partial sums are all-gathered instead of "
      "all-reduced; y is not on any rank")

# 4. correct twin: w1 replicated, each rank slices its own columns.
def slicing(offset1):
    b = copy.deepcopy(BASE)
    for r in (0, 1):
        inp(b, f"w1_{r}")["shape"] = [8, 16]
    b["input_relation"]["w1"] = ["w1_0", "w1_1"]
    nodes = []
    for n in b["impl"]["nodes"]:
        if n["name"] in ("fc1_0", "fc1_1"):
            r = int(n["name"][-1])
            start = 0 if r == 0 else offset1
            nodes.append({"name": f"shard_w1_{r}", "op": "aten.slice.Tensor",
                          "args": [f"w1_{r}", 1, start, start + 8],
                          "outputs": [{"name": f"w1s_{r}", "shape": [8, 8], "rank": r}],
                          "src": "mlp_tp.py:20"})
            n = copy.deepcopy(n)
            n["args"] = [f"x_{r}", f"w1s_{r}"]
        nodes.append(n)
    b["impl"]["nodes"] = nodes
    return b


write("slice-offset", slicing(0), "BUG ON PURPOSE: both ranks slice columns 0:8 of the replicated w1 "
      "(rank 1 should take 8:16); fc1 cannot be mapped")

# 5. an extra scaling: the all-reduced sum is divided by the TP size.
b = copy.deepcopy(BASE)
ar = node(b, "allreduce")
for r, o in enumerate(ar["outputs"]):
    o["name"] = f"s_{r}"
for r in (0, 1):
    b["impl"]["nodes"].append({"name": f"scale_{r}", "op": "aten.div.Scalar",
                               "args": [f"s_{r}", 2],
                               "outputs": [{"name": f"y_{r}", "shape": [4, 8], "rank": r}],
                               "src": "mlp_tp.py:25"})
write("extra-scaling", b, "BUG ON PURPOSE: the all-reduced output is divided by the TP size, as if "
      "it were an average; y is not on any rank")

# The correct twin of slice-offset, to show the bug is the offset.
b = slicing(8)
write("slice-correct", b, "correct: w1 replicated, each rank slices its own 8 columns")
