#!/usr/bin/python3
"""gen-chain.py — a synthetic bundle of N spec nodes, for the budget tests.

usage: gen-chain.py N OUT.json

A chain of N/2 layers h' = relu(h @ w_i) (N spec nodes) with the weights
split along dim 1 over two ranks: each rank computes its column block,
relu, and an all_gather along dim 1 gives the full h' back on both ranks.
It refines; what matters is that each node costs a saturation, so a check
of 1,000 nodes takes long enough for a budget to stop it.
"""
import json
import sys


def main():
    n = int(sys.argv[1])
    layers = max(1, n // 2)
    d = 8
    spec_in = [{"name": "x", "shape": [4, d], "dtype": "f32"}]
    impl_in = [{"name": "x_%d" % r, "shape": [4, d], "dtype": "f32", "rank": r} for r in (0, 1)]
    spec_nodes, impl_nodes, rel = [], [], {"x": ["x_0", "x_1"]}
    h, hr = "x", ["x_0", "x_1"]
    for i in range(layers):
        w = "w%d" % i
        spec_in.append({"name": w, "shape": [d, d], "dtype": "f32"})
        parts = []
        for r in (0, 1):
            impl_in.append({"name": "%s_%d" % (w, r), "shape": [d, d // 2], "dtype": "f32", "rank": r})
            parts.append("%s_%d" % (w, r))
        rel[w] = ["cat(%s, %s, dim=1)" % tuple(parts)]
        spec_nodes.append({"name": "mm%d" % i, "op": "aten.mm.default", "args": [h, w], "kwargs": {},
                           "outputs": [{"name": "m%d" % i, "shape": [4, d], "dtype": "f32"}]})
        spec_nodes.append({"name": "relu%d" % i, "op": "aten.relu.default", "args": ["m%d" % i],
                           "kwargs": {}, "outputs": [{"name": "h%d" % i, "shape": [4, d], "dtype": "f32"}]})
        outs = []
        for r in (0, 1):
            impl_nodes.append({"name": "mm%d_%d" % (i, r), "op": "aten.mm.default",
                               "args": [hr[r], "%s_%d" % (w, r)], "kwargs": {},
                               "outputs": [{"name": "m%d_%d" % (i, r), "shape": [4, d // 2],
                                            "dtype": "f32", "rank": r}]})
            impl_nodes.append({"name": "relu%d_%d" % (i, r), "op": "aten.relu.default",
                               "args": ["m%d_%d" % (i, r)], "kwargs": {},
                               "outputs": [{"name": "a%d_%d" % (i, r), "shape": [4, d // 2],
                                            "dtype": "f32", "rank": r}]})
            outs.append("a%d_%d" % (i, r))
        impl_nodes.append({"name": "ag%d" % i, "op": "comm.all_gather.default", "args": [outs, 1],
                           "kwargs": {},
                           "outputs": [{"name": "h%d_%d" % (i, r), "shape": [4, d], "dtype": "f32",
                                        "rank": r} for r in (0, 1)]})
        h, hr = "h%d" % i, ["h%d_0" % i, "h%d_1" % i]
    b = {"format": "shardcheck-bundle/1", "name": "chain-%d" % n, "symbols": {}, "assume": [],
         "spec": {"inputs": spec_in, "nodes": spec_nodes, "outputs": [h]},
         "impl": {"inputs": impl_in, "nodes": impl_nodes, "outputs": hr},
         "input_relation": rel}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(b, f)


if __name__ == "__main__":
    main()
