#!/usr/bin/env python3
"""gen.py — writes the hand-written bundles of models/class-elementwise.

A custom elementwise kernel (clsdemo.softsign, declared in clsdemo.lemma
with `is elementwise` and no lemma of its own) applied to a tensor split
3 and 6 ways, followed by library operators of the same classes (a
broadcast bias add, reductions along another dim), the parts gathered at
the end.  The -bug bundle gathers the 3 parts in the wrong order.

usage: gen.py  (writes the JSON files next to it)"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def t(name, shape, rank=None):
    d = {"name": name, "shape": shape, "dtype": "f32"}
    if rank is not None:
        d["rank"] = rank
    return d


def node(name, op, args, out, shape, rank=None):
    return {"name": name, "op": op, "args": args, "kwargs": {},
            "outputs": [t(out, shape, rank)]}


def rows3(bug=False):
    """x [12, 6] split by rows 3 ways: y = sum(softsign(x) + b, [1])."""
    n, rows, cols = 3, 12, 6
    part = rows // n
    spec = {
        "inputs": [t("x", [rows, cols]), t("b", [cols])],
        "nodes": [
            node("ss", "clsdemo.softsign.default", ["x"], "ss", [rows, cols]),
            node("add", "aten.add.Tensor", ["ss", "b"], "add", [rows, cols]),
            node("sum", "aten.sum.dim_IntList", ["add", [1]], "y", [rows]),
        ],
        "outputs": ["y"],
    }
    inputs, nodes, parts = [], [], []
    for r in range(n):
        inputs += [t(f"x_{r}", [part, cols], r), t(f"b_{r}", [cols], r)]
        nodes += [
            node(f"ss_{r}", "clsdemo.softsign.default", [f"x_{r}"], f"ss_{r}", [part, cols], r),
            node(f"add_{r}", "aten.add.Tensor", [f"ss_{r}", f"b_{r}"], f"add_{r}", [part, cols], r),
            node(f"sum_{r}", "aten.sum.dim_IntList", [f"add_{r}", [1]], f"s_{r}", [part], r),
        ]
        parts.append(f"s_{r}")
    if bug:
        parts = [parts[1], parts[0], parts[2]]
    nodes.append({"name": "gather", "op": "comm.all_gather.default", "args": [parts, 0],
                  "kwargs": {}, "outputs": [t(f"y_{r}", [rows], r) for r in range(n)]})
    return {
        "format": "shardcheck-bundle/1",
        "name": "class-elementwise-rows3" + ("-bug" if bug else ""),
        "description": "A custom elementwise kernel (clsdemo.softsign, no lemma of its own) "
                       "over a 3-way row split, a replicated bias added, summed along the "
                       "columns, gathered" + (" in the wrong rank order (a bug)" if bug else "")
                       + "; check with --lemmas models/class-elementwise.  Hand-written (gen.py).",
        "symbols": {}, "assume": [],
        "spec": spec,
        "impl": {"inputs": inputs, "nodes": nodes, "outputs": [f"y_{r}" for r in range(n)]},
        "input_relation": {
            "x": ["cat(" + ", ".join(f"x_{r}" for r in range(n)) + ", dim=0)"],
            "b": [f"b_{r}" for r in range(n)],
        },
        "expect_output_relation": {"y": [f"y_{r}" for r in range(n)]},
    }


def cols6():
    """x [4, 12] split by columns 6 ways: y = mean(softsign(x), [0])."""
    n, rows, cols = 6, 4, 12
    part = cols // n
    spec = {
        "inputs": [t("x", [rows, cols])],
        "nodes": [
            node("ss", "clsdemo.softsign.default", ["x"], "ss", [rows, cols]),
            node("mean", "aten.mean.dim", ["ss", [0]], "y", [cols]),
        ],
        "outputs": ["y"],
    }
    inputs, nodes = [], []
    for r in range(n):
        inputs.append(t(f"x_{r}", [rows, part], r))
        nodes += [
            node(f"ss_{r}", "clsdemo.softsign.default", [f"x_{r}"], f"ss_{r}", [rows, part], r),
            node(f"mean_{r}", "aten.mean.dim", [f"ss_{r}", [0]], f"m_{r}", [part], r),
        ]
    nodes.append({"name": "gather", "op": "comm.all_gather.default",
                  "args": [[f"m_{r}" for r in range(n)], 0],
                  "kwargs": {}, "outputs": [t(f"y_{r}", [cols], r) for r in range(n)]})
    return {
        "format": "shardcheck-bundle/1",
        "name": "class-elementwise-cols6",
        "description": "A custom elementwise kernel (clsdemo.softsign, no lemma of its own) "
                       "over a 6-way column split, then a mean over the rows, gathered; check "
                       "with --lemmas models/class-elementwise.  Hand-written (gen.py).",
        "symbols": {}, "assume": [],
        "spec": spec,
        "impl": {"inputs": inputs, "nodes": nodes, "outputs": [f"y_{r}" for r in range(n)]},
        "input_relation": {
            "x": ["cat(" + ", ".join(f"x_{r}" for r in range(n)) + ", dim=1)"],
        },
        "expect_output_relation": {"y": [f"y_{r}" for r in range(n)]},
    }


def main():
    for b in (rows3(), rows3(bug=True), cols6()):
        with open(os.path.join(HERE, b["name"] + ".json"), "w") as f:
            json.dump(b, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
