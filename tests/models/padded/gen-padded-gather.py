#!/usr/bin/env python3
"""gen-padded-gather.py — writes padded-gather.json and padded-gather-bug.json here.

An uneven cut: 5 rows over 4 ranks in padded pieces of 2 (rank 2 holds one
row, rank 3 none: its piece is all padding, named in the input relation as
the empty slice(x_3, 0, 0, 0)).  Each rank negates its padded piece, an
all_gather along the rows makes the 8 padded rows, the padding is cut off
(slice 0..5) and a replicated bias subtracted.  The gather reads rank 3's
piece, which is related only through its empty slice: f(x[s:s]) = f(x)[s:s]
(class-slice.lemma, ew1_slice on an empty slice, floating x) relates it, so
the gather is explored at neg (shardsmith seed 14045).  The bug twin cuts
rows 1..6 of the gather (one row of padding in, the first row out): fails
at sub."""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bundlegen  # noqa: E402

R, P, H, N = 5, 2, 3, 4  # rows, padded rows per rank, hidden, ranks


T = bundlegen.tensor
N_ = bundlegen.node


def main():
    spec_in = [T("x", [R, H]), T("b", [H])]
    spec_nodes = [N_("neg", "aten.neg.default", ["x"], [T("n", [R, H])]),
                  N_("sub", "aten.sub.Tensor", ["n", "b"], [T("y", [R, H])])]
    impl_in = [t for r in range(N) for t in (T(f"x_{r}", [P, H], r), T(f"b_{r}", [H], r))]
    impl_nodes = [N_(f"neg_{r}", "aten.neg.default", [f"x_{r}"], [T(f"n_{r}", [P, H], r)])
                  for r in range(N)]
    impl_nodes.append(N_("all_gather", "comm.all_gather.default",
                         [[f"n_{r}" for r in range(N)], 0],
                         [T(f"g_{r}", [N * P, H], r) for r in range(N)]))
    impl_nodes += [N_(f"slice_{r}", "aten.slice.Tensor", [f"g_{r}", 0, 0, R],
                      [T(f"s_{r}", [R, H], r)]) for r in range(N)]
    impl_nodes += [N_(f"sub_{r}", "aten.sub.Tensor", [f"s_{r}", f"b_{r}"],
                      [T(f"y_{r}", [R, H], r)]) for r in range(N)]
    pieces = ", ".join(f"slice(x_{r}, dim=0, start=0, end={max(0, min(P, R - r * P))})"
                       for r in range(N))
    b = bundlegen.bundle(
        "padded-gather", __doc__, bundlegen.graph(spec_in, spec_nodes, ["y"]),
        bundlegen.graph(impl_in, impl_nodes, [f"y_{r}" for r in range(N)]),
        {"x": [f"cat({pieces}, dim=0)"], "b": [f"b_{r}" for r in range(N)]},
        {"y": [f"y_{r}" for r in range(N)]})
    m = copy.deepcopy(b)
    m["name"] = "padded-gather-bug"
    m["description"] = ("padded-gather with the padding cut at the wrong place (rows 1..6 "
                        "of the gathered pieces): fails at sub")
    for nd in m["impl"]["nodes"]:
        if nd["op"] == "aten.slice.Tensor":
            nd["args"][2:4] = [1, R + 1]
    bundlegen.write(__file__, b, m)


if __name__ == "__main__":
    main()
