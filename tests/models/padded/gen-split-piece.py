#!/usr/bin/env python3
"""gen-split-piece.py — writes split-piece.json and split-piece-bug.json here.

A split into pieces of one row, result 5 kept (torch.split(x, 1, 0)[5]),
of a tensor whose columns are cut over 3 ranks: each rank splits its own
columns and keeps the same piece.  split.Tensor's result k is a slice
(slice-cat.lemma, split_k: one lemma per result index, k < 8; shardsmith
seed 20019 keeps result 4).  The bug twin keeps result 4 on rank 1: fails
at split."""
import copy
import json
import os

R, C, N, K = 7, 6, 3, 5  # rows, columns, ranks, piece kept


def T(n, shape, r=None, dtype="f64"):
    d = {"name": n, "shape": shape, "dtype": dtype}
    if r is not None:
        d["rank"] = r
    return d


def split_node(sfx, x, cols, r=None):
    outs = [T(f"p{sfx}_{k}", [1, cols], r) for k in range(R)]
    return {"name": "split" + sfx, "op": "aten.split.Tensor", "args": [x, 1, 0], "kwargs": {},
            "outputs": outs}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    c = C // N
    b = {"format": "shardcheck-bundle/1", "name": "split-piece",
         "description": __doc__.split("\n\n")[1].replace("\n", " "),
         "symbols": {}, "assume": [],
         "spec": {"inputs": [T("x", [R, C])], "nodes": [split_node("", "x", C)],
                  "outputs": [f"p_{K}"]},
         "impl": {"inputs": [T(f"x_{r}", [R, c], r) for r in range(N)],
                  "nodes": [split_node(f"_r{r}", f"x_{r}", c, r) for r in range(N)],
                  "outputs": [f"p_r{r}_{K}" for r in range(N)]},
         "input_relation": {"x": ["cat(" + ", ".join(f"x_{r}" for r in range(N)) + ", dim=1)"]},
         "expect_output_relation": {
             f"p_{K}": ["cat(" + ", ".join(f"p_r{r}_{K}" for r in range(N)) + ", dim=1)"]}}
    m = copy.deepcopy(b)
    m["name"] = "split-piece-bug"
    m["description"] = "split-piece with rank 1 keeping piece 4 instead of 5: fails at split"
    m["impl"]["outputs"][1] = f"p_r1_{K - 1}"
    m["expect_output_relation"][f"p_{K}"] = [
        "cat(" + ", ".join(f"p_r{r}_{K - 1 if r == 1 else K}" for r in range(N)) + ", dim=1)"]
    for name, bun in (("split-piece.json", b), ("split-piece-bug.json", m)):
        with open(os.path.join(here, name), "w") as f:
            json.dump(bun, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
