#!/usr/bin/env python3
"""gen-ln-weight-rows.py — writes ln-weight-rows.json and ln-weight-rows-bug.json here.

A layer norm whose weight alone needs a gradient (the input is a leaf, the
bias frozen): autograd's native_layer_norm_backward with output_mask
[False, True, False].  The rows are cut over 2 ranks (sequence
parallelism); each rank computes its rows' layer norm and the backward
with the same mask, and an all_reduce sums the weight gradient.  The
row-cut lemmas (norm.lemma) are stated for the mask [True, True, True]:
a result is the same under any mask that computes it (class-backward.lemma,
layer_norm_backward_mask_*; shardsmith seed 10014).  The bug twin returns
each rank's partial weight gradient without the all_reduce (fails: the
relation found for dw is the sum of the ranks' gradients, not each rank's
copy)."""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bundlegen  # noqa: E402

R, H = 4, 4  # rows, hidden


T = bundlegen.tensor
N = bundlegen.node


def layer(sfx, rows, r=None):
    x, g, w, b = "x" + sfx, "g" + sfx, "w" + sfx, "b" + sfx
    return [
        N("ln" + sfx, "aten.native_layer_norm.default", [x, [H], w, b, 1e-05],
          [T("y" + sfx, [rows, H], r), T("mean" + sfx, [rows, 1], r), T("rstd" + sfx, [rows, 1], r)]),
        N("lnb" + sfx, "aten.native_layer_norm_backward.default",
          [g, x, [H], "mean" + sfx, "rstd" + sfx, w, b, [False, True, False]],
          [None, T("dw" + sfx, [H], r), None]),
    ]


def main():
    spec_in = [T("x", [R, H]), T("g", [R, H]), T("w", [H]), T("b", [H])]
    impl_in = [T(f"{v}_{r}", [R // 2, H] if v in "xg" else [H], r)
               for r in (0, 1) for v in ("x", "g", "w", "b")]
    impl_nodes = layer("_0", R // 2, 0) + layer("_1", R // 2, 1) + [
        N("all_reduce", "comm.all_reduce.default", [["dw_0", "dw_1"]],
          [T("dws_0", [H], 0), T("dws_1", [H], 1)])]
    b = bundlegen.bundle(
        "ln-weight-rows", __doc__, bundlegen.graph(spec_in, layer("", R), ["y", "dw"]),
        bundlegen.graph(impl_in, impl_nodes, ["y_0", "y_1", "dws_0", "dws_1"]),
        {"x": ["cat(x_0, x_1, dim=0)"], "g": ["cat(g_0, g_1, dim=0)"],
         "w": ["w_0", "w_1"], "b": ["b_0", "b_1"]},
        {"y": ["cat(y_0, y_1, dim=0)"], "dw": ["dws_0", "dws_1"]})
    m = copy.deepcopy(b)
    m["name"] = "ln-weight-rows-bug"
    m["description"] = ("ln-weight-rows with each rank returning its own rows' weight "
                        "gradient, no all_reduce: fails, dw is found as sum(dw_0, dw_1)")
    m["impl"]["nodes"] = m["impl"]["nodes"][:-1]
    m["impl"]["outputs"] = ["y_0", "y_1", "dw_0", "dw_1"]
    m["expect_output_relation"]["dw"] = ["dw_0", "dw_1"]
    bundlegen.write(__file__, b, m)


if __name__ == "__main__":
    main()
