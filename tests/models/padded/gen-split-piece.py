#!/usr/bin/env python3
"""gen-split-piece.py — writes split-piece.json and split-piece-bug.json here.

A split into pieces of one row, result 5 kept (torch.split(x, 1, 0)[5]),
of a tensor whose columns are cut over 3 ranks: each rank splits its own
columns and keeps the same piece.  split.Tensor's result k is a slice
(slice-cat.lemma, split_k: one lemma per result index, k < 8; shardsmith
seed 20019 keeps result 4).  The bug twin keeps result 4 on rank 1: fails
at split."""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bundlegen  # noqa: E402

R, C, N, K = 7, 6, 3, 5  # rows, columns, ranks, piece kept


T = bundlegen.tensor


def split_node(sfx, x, cols, r=None):
    outs = [T(f"p{sfx}_{k}", [1, cols], r) for k in range(R)]
    return bundlegen.node("split" + sfx, "aten.split.Tensor", [x, 1, 0], outs)


def main():
    c = C // N
    b = bundlegen.bundle(
        "split-piece", __doc__,
        bundlegen.graph([T("x", [R, C])], [split_node("", "x", C)], [f"p_{K}"]),
        bundlegen.graph([T(f"x_{r}", [R, c], r) for r in range(N)],
                        [split_node(f"_r{r}", f"x_{r}", c, r) for r in range(N)],
                        [f"p_r{r}_{K}" for r in range(N)]),
        {"x": ["cat(" + ", ".join(f"x_{r}" for r in range(N)) + ", dim=1)"]},
        {f"p_{K}": ["cat(" + ", ".join(f"p_r{r}_{K}" for r in range(N)) + ", dim=1)"]})
    m = copy.deepcopy(b)
    m["name"] = "split-piece-bug"
    m["description"] = "split-piece with rank 1 keeping piece 4 instead of 5: fails at split"
    m["impl"]["outputs"][1] = f"p_r1_{K - 1}"
    m["expect_output_relation"][f"p_{K}"] = [
        "cat(" + ", ".join(f"p_r{r}_{K - 1 if r == 1 else K}" for r in range(N)) + ", dim=1)"]
    bundlegen.write(__file__, b, m)


if __name__ == "__main__":
    main()
