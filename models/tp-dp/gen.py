#!/usr/bin/env python3
"""gen.py — Megatron MLP under tensor x data parallelism, written as bundles.

The sequential model: y = gelu(x @ w1) @ w2.  The impl runs on DP x TP
ranks, rank r = d * TP + t: the batch is split along dim 0 across the DP
groups (replicated inside a TP group), w1 along its columns and w2 along
its rows across the TP ranks (replicated across DP groups); each TP group
all-reduces its partial products.  So the input relation gives every input
twice or more (x = cat(x_0, x_TP, ...) = cat(x_1, x_TP+1, ...); w1 =
cat(w1_0, ..., w1_TP-1, dim=1) = cat(w1_TP, ...)), and a rank's product
needs the row split of x (data) and the column split of w1 (tensor) at
once: x_1 equals x_0 only through the input relation.

Variants: correct; "dp-group" (bug: the partial products are all-reduced
over the DP group, ranks t, TP + t, ..., instead of the TP group).

Run: python3 models/tp-dp/gen.py  (writes tp-dp-*.json beside it; no torch)."""
import json
import os

B, D, H = 4, 8, 16


def t(name, shape, rank=None):
    d = {"name": name, "shape": list(shape), "dtype": "f32"}
    if rank is not None:
        d["rank"] = rank
    return d


def node(name, op, args, outs, kwargs=None):
    return {"name": name, "op": op, "args": args, "kwargs": kwargs or {}, "outputs": outs}


def bundle(dp, tp, variant):
    n = dp * tp
    b, h = B // dp, H // tp
    spec = {
        "inputs": [t("x", (B, D)), t("w1", (D, H)), t("w2", (H, D))],
        "nodes": [
            node("mm", "aten.mm.default", ["x", "w1"], [t("mm", (B, H))]),
            node("gelu", "aten.gelu.default", ["mm"], [t("gelu", (B, H))]),
            node("mm_1", "aten.mm.default", ["gelu", "w2"], [t("y", (B, D))]),
        ],
        "outputs": ["y"],
    }
    inputs, nodes = [], []
    for r in range(n):
        inputs += [t(f"x_{r}", (b, D), r), t(f"w1_{r}", (D, h), r), t(f"w2_{r}", (h, D), r)]
        nodes += [
            node(f"mm_{r}", "aten.mm.default", [f"x_{r}", f"w1_{r}"], [t(f"mm_{r}", (b, h), r)]),
            node(f"gelu_{r}", "aten.gelu.default", [f"mm_{r}"], [t(f"gelu_{r}", (b, h), r)]),
            node(f"mm2_{r}", "aten.mm.default", [f"gelu_{r}", f"w2_{r}"],
                 [t(f"mm2_{r}", (b, D), r)]),
        ]
    if variant == "dp-group":
        groups = [[d * tp + k for d in range(dp)] for k in range(tp)]
    else:
        groups = [[d * tp + k for k in range(tp)] for d in range(dp)]
    for gi, g in enumerate(groups):
        nodes.append(node(f"all_reduce_{gi}", "comm.all_reduce.default", [[f"mm2_{r}" for r in g]],
                          [t(f"y_{r}", (b, D), r) for r in g], {"ranks": g}))
    rel = {
        "x": [f"cat({', '.join(f'x_{d * tp + k}' for d in range(dp))}, dim=0)" for k in range(tp)],
        "w1": [f"cat({', '.join(f'w1_{d * tp + k}' for k in range(tp))}, dim=1)" for d in range(dp)],
        "w2": [f"cat({', '.join(f'w2_{d * tp + k}' for k in range(tp))}, dim=0)" for d in range(dp)],
    }
    name = f"tp-dp-{variant + '-' if variant else ''}dp{dp}-tp{tp}"
    return {
        "format": "shardcheck-bundle/1",
        "name": name,
        "description": (f"BUG ON PURPOSE ({variant}): the partial products are all-reduced over "
                        f"the DP group. " if variant else "") + f"Megatron MLP, DP {dp} x TP {tp}.",
        "symbols": {}, "assume": [],
        "spec": spec,
        "impl": {"inputs": inputs, "nodes": nodes, "outputs": [f"y_{r}" for r in range(n)]},
        "input_relation": rel,
        "expect_output_relation": {
            "y": [f"cat({', '.join(f'y_{d * tp + k}' for d in range(dp))}, dim=0)" for k in range(tp)]},
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for dp, tp, variant in [(2, 2, None), (2, 4, None), (4, 2, None), (2, 2, "dp-group")]:
        bnd = bundle(dp, tp, variant)
        with open(os.path.join(here, bnd["name"] + ".json"), "w") as f:
            json.dump(bnd, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
