#!/usr/bin/env python3
"""gen.py — writes the hand-written vocabulary-parallel embedding bundles of
this directory (python3 gen.py; deterministic, stdlib only).

Megatron-LM's VocabParallelEmbedding exactly as a TorchDynamo capture gives
it (tensor_parallel/layers.py: the aten.index form of gpt-paral2_layer1),
over N ranks, each holding the rows [lo_k, lo_k + R) of a table of V = N R
rows:

  spec:    index(W, [x])  ->  view
  rank k:  m = bitwise_or(lt(x, lo_k), ge(x, hi_k))
           idx = index_put(sub(clone(x), lo_k), [m], full([], 0))
           e = index(W_k, [idx])
           e2 = slice_scatter(e, index_put(slice(e, 1, 0, MAX), [m], full([], 0.0)), 1, 0, MAX)
           y = view(copy(e2, wait_tensor(all_reduce(e2, sum))))

Bundles:
  megatron-index-tp4.json         4 ranks; refines, y = r0.y = ... = r3.y, with
                                  the assumption "x >= 0" reported (the ids
                                  have no declared range);
  megatron-index-tp4-values.json  the same with x declared in [0, V - 1]:
                                  refines with no assumption;
  megatron-index-tp3.json         3 ranks of 5 rows (odd counts: the lemmas
                                  are generic in ranks and sizes);
  megatron-index-tp4-wrong-offset.json
                                  BUG ON PURPOSE: rank 1 subtracts lo = 5
                                  instead of 4 (its mask still covers
                                  [5, 8)); fails at the spec node 'index'.
"""
import json
import os

MAX = 9223372036854775807
HERE = os.path.dirname(os.path.abspath(__file__))


def node(name, op, args, shape, dtype, kwargs=None, src=None):
    n = {"name": name, "op": op, "args": args, "kwargs": kwargs or {},
         "outputs": [{"name": name, "shape": shape, "dtype": dtype}]}
    if src:
        n["src"] = src
    return n


def rank_graph(k, rows, hidden, ids_shape, lo, hi, values):
    e_shape = ids_shape + [hidden]
    x = {"name": "x", "shape": ids_shape, "dtype": "i64"}
    if values:
        x["values"] = values
    layers = "megatron/core/tensor_parallel/layers.py"
    nodes = [
        node("lt", "aten.lt.Scalar", ["x", lo], ids_shape, "bool", src=layers + ":252"),
        node("ge", "aten.ge.Scalar", ["x", hi], ids_shape, "bool", src=layers + ":252"),
        node("bitwise_or", "aten.bitwise_or.Tensor", ["lt", "ge"], ids_shape, "bool",
             src=layers + ":252"),
        node("clone", "aten.clone.default", ["x"], ids_shape, "i64", src=layers + ":254"),
        node("sub", "aten.sub.Tensor", ["clone", lo], ids_shape, "i64", src=layers + ":254"),
        node("lift_fresh_copy", "aten.full.default", [[], 0], [], "i64", {"dtype": "i64"},
             src=layers + ":255"),
        node("index_put", "aten.index_put.default", ["sub", ["bitwise_or"], "lift_fresh_copy"],
             ids_shape, "i64", src=layers + ":255"),
        node("index", "aten.index.Tensor", ["W", ["index_put"]], e_shape, "f32",
             src=layers + ":260"),
        node("lift_fresh_copy_1", "aten.full.default", [[], 0.0], [], "f32", {"dtype": "f32"},
             src=layers + ":266"),
        node("slice_1", "aten.slice.Tensor", ["index", 1, 0, MAX], e_shape, "f32",
             src=layers + ":266"),
        node("index_put_1", "aten.index_put.default",
             ["slice_1", ["bitwise_or"], "lift_fresh_copy_1"], e_shape, "f32",
             src=layers + ":266"),
        node("slice_scatter", "aten.slice_scatter.default", ["index", "index_put_1", 1, 0, MAX],
             e_shape, "f32", src=layers + ":266"),
        node("all_reduce", "_c10d_functional.all_reduce.default", ["slice_scatter", "sum", "0"],
             e_shape, "f32", src="megatron/core/tensor_parallel/mappings.py:484"),
        node("wait_tensor", "_c10d_functional.wait_tensor.default", ["all_reduce"], e_shape,
             "f32", src="megatron/core/tensor_parallel/mappings.py:484"),
        node("copy", "aten.copy.default", ["slice_scatter", "wait_tensor"], e_shape, "f32",
             src="megatron/core/tensor_parallel/mappings.py:484"),
        node("y", "aten.view.default", ["copy", e_shape], e_shape, "f32"),
    ]
    return {"inputs": [{"name": "W", "shape": [rows, hidden], "dtype": "f32"}, x],
            "nodes": nodes, "outputs": ["y"]}


def bundle(name, description, n, rows, offsets=None, values=False):
    hidden, ids_shape = 8, [2, 5]
    vocab = n * rows
    vals = {"min": 0, "max": vocab - 1} if values else None
    x = {"name": "x", "shape": ids_shape, "dtype": "i64"}
    if vals:
        x["values"] = vals
    spec = {
        "inputs": [{"name": "W", "shape": [vocab, hidden], "dtype": "f32"}, x],
        "nodes": [
            node("index", "aten.index.Tensor", ["W", ["x"]], ids_shape + [hidden], "f32",
                 src="megatron/core/tensor_parallel/layers.py:260"),
            node("y", "aten.view.default", ["index", ids_shape + [hidden]],
                 ids_shape + [hidden], "f32"),
        ],
        "outputs": ["y"],
    }
    ranks = []
    for k in range(n):
        lo = (offsets[k] if offsets else k * rows)
        hi = (k + 1) * rows
        ranks.append(rank_graph(k, rows, hidden, ids_shape, lo, hi, vals))
    return {
        "format": "shardcheck-bundle/1",
        "name": name,
        "description": description,
        "spec": spec,
        "impl": {"ranks": ranks, "groups": {"0": list(range(n))}},
        "input_relation": {
            "W": ["cat(" + ", ".join(f"r{k}.W" for k in range(n)) + ", dim=0)"],
            "x": [f"r{k}.x" for k in range(n)],
        },
        "expect_output_relation": {"y": [f"r{k}.y" for k in range(n)]},
    }


def write(b):
    path = os.path.join(HERE, b["name"] + ".json")
    with open(path, "w") as f:
        json.dump(b, f, indent=1)
        f.write("\n")


def main():
    write(bundle("megatron-index-tp4",
                 "Megatron vocabulary-parallel embedding, aten.index form, 4 ranks of 4 rows; "
                 "the ids have no declared range (the proof assumes x >= 0).", 4, 4))
    write(bundle("megatron-index-tp4-values",
                 "Megatron vocabulary-parallel embedding, aten.index form, 4 ranks of 4 rows; "
                 "the ids are declared in [0, 15].", 4, 4, values=True))
    write(bundle("megatron-index-tp3",
                 "Megatron vocabulary-parallel embedding, aten.index form, 3 ranks of 5 rows.",
                 3, 5))
    write(bundle("megatron-index-tp4-wrong-offset",
                 "BUG ON PURPOSE: rank 1 subtracts lo = 5 instead of 4 (its mask covers "
                 "[5, 8)), so it reads row id - 5 for its ids; fails at 'index'.",
                 4, 4, offsets=[0, 5, 8, 12]))


if __name__ == "__main__":
    main()
