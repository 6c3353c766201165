#!/usr/bin/env python3
"""gen.py — writes the hand-written cross-entropy backward bundles of this
directory (python3 gen.py; deterministic, stdlib only).

The start of Megatron-LM's _VocabParallelCrossEntropy.backward
(tensor_parallel/cross_entropy.py) exactly as a TorchDynamo joint capture
gives it (the form of bug_missing_allreduce_under_wrong_config and
bug_missing_switchmlp_allreduce): the softmax y over the rank's vocabulary
entries [lo_k, hi_k) minus 1 at each token's label when the label is in
the rank's range.  Over N ranks, each holding R entries of V = N R:

  m   = bitwise_or(lt(t, lo), ge(t, hi))
  mt  = index_put(sub(clone(t), lo), [m], full([], 0))
  x   = view(y, [-1, R])
  g   = index_put(x, [arange(0, n), view(mt, [-1])],
                  index(x, [arange(0, n), view(mt, [-1])]) - rsub(_to_copy(view(m, [-1]), f32), 1.0))
  out = view(g, shape(y))

The spec is the same code with lo = 0, hi = V (tensor parallelism 1).
Expected: out = cat(r0.out, ..., dim=2), proved by lemmas/vocab-pick.lemma
(vp_fold_onehot_sub, vp_onehot_sub_split) for any number of ranks.

Bundles:
  megatron-ce-backward-tp3.json    3 ranks of 5 entries; refines;
  megatron-ce-backward-tp4.json    4 ranks of 4 entries, labels declared in
                                   [0, V - 1]; refines;
  megatron-ce-backward-tp4-wrong-offset.json
                                   BUG ON PURPOSE: rank 2 shifts its labels
                                   by 9 instead of 8 (its mask still covers
                                   [8, 12)), so it subtracts 1 one entry to
                                   the left (label 8 wraps to its last
                                   entry); fails: the first unmapped node is
                                   the spec's label mask 'bitwise_or'
                                   (deferred, as in every correct run), and
                                   the walk stops at 'out' with rank 2's
                                   part shown as vp.onehot_sub(r2.view, t,
                                   lo=8), which rank 2 does not compute.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "megatron/core/tensor_parallel/cross_entropy.py"


def node(name, op, args, shape, dtype, kwargs=None, line=None):
    n = {"name": name, "op": op, "args": args, "kwargs": kwargs or {},
         "outputs": [{"name": name, "shape": shape, "dtype": dtype}]}
    if line:
        n["src"] = f"{SRC}:{line}"
    return n


def graph(lo, hi, shift, width, ids_shape, values):
    n = 1
    for d in ids_shape:
        n *= d
    y_shape = ids_shape + [width]
    t = {"name": "t", "shape": ids_shape, "dtype": "i64"}
    if values:
        t["values"] = values
    nodes = [
        node("lt", "aten.lt.Scalar", ["t", lo], ids_shape, "bool", line=235),
        node("ge", "aten.ge.Scalar", ["t", hi], ids_shape, "bool", line=235),
        node("bitwise_or", "aten.bitwise_or.Tensor", ["lt", "ge"], ids_shape, "bool", line=235),
        node("clone", "aten.clone.default", ["t"], ids_shape, "i64", line=236),
        node("sub", "aten.sub.Tensor", ["clone", shift], ids_shape, "i64", line=236),
        node("lift_fresh_copy", "aten.full.default", [[], 0], [], "i64", {"dtype": "i64"}, line=237),
        node("index_put", "aten.index_put.default", ["sub", ["bitwise_or"], "lift_fresh_copy"],
             ids_shape, "i64", line=237),
        node("arange", "aten.arange.start", [0, n], [n], "i64", line=250),
        node("view", "aten.view.default", ["y", [-1, width]], [n, width], "f32", line=251),
        node("view_1", "aten.view.default", ["index_put", [-1]], [n], "i64", line=252),
        node("view_2", "aten.view.default", ["bitwise_or", [-1]], [n], "bool", line=253),
        node("_to_copy", "aten._to_copy.default", ["view_2"], [n], "f32", {"dtype": "f32"}, line=253),
        node("rsub", "aten.rsub.Scalar", ["_to_copy", 1.0], [n], "f32", line=253),
        node("index", "aten.index.Tensor", ["view", ["arange", "view_1"]], [n], "f32", line=254),
        node("sub_1", "aten.sub.Tensor", ["index", "rsub"], [n], "f32", line=254),
        node("index_put_1", "aten.index_put.default", ["view", ["arange", "view_1"], "sub_1"],
             [n, width], "f32", line=254),
        node("out", "aten.view.default", ["index_put_1", y_shape], y_shape, "f32", line=256),
    ]
    return {"inputs": [{"name": "y", "shape": y_shape, "dtype": "f32"}, t],
            "nodes": nodes, "outputs": ["out"]}


def bundle(name, description, ranks, rows, shifts=None, values=False):
    ids_shape = [3, 2]
    vocab = ranks * rows
    vals = {"min": 0, "max": vocab - 1} if values else None
    impl = []
    for k in range(ranks):
        lo, hi = k * rows, (k + 1) * rows
        impl.append(graph(lo, hi, shifts[k] if shifts else lo, rows, ids_shape, vals))
    return {
        "format": "shardcheck-bundle/1",
        "name": name,
        "description": description,
        "spec": graph(0, vocab, 0, vocab, ids_shape, vals),
        "impl": {"ranks": impl},
        "input_relation": {
            "y": ["cat(" + ", ".join(f"r{k}.y" for k in range(ranks)) + ", dim=2)"],
            "t": [f"r{k}.t" for k in range(ranks)],
        },
        "expect_output_relation": {
            "out": ["cat(" + ", ".join(f"r{k}.out" for k in range(ranks)) + ", dim=2)"]},
    }


def write(b):
    with open(os.path.join(HERE, b["name"] + ".json"), "w") as f:
        json.dump(b, f, indent=1)
        f.write("\n")


def main():
    write(bundle("megatron-ce-backward-tp3",
                 "Megatron vocabulary-parallel cross-entropy backward (softmax minus the "
                 "in-range one-hot label), 3 ranks of 5 entries.", 3, 5))
    write(bundle("megatron-ce-backward-tp4",
                 "Megatron vocabulary-parallel cross-entropy backward, 4 ranks of 4 entries, "
                 "labels declared in [0, 15].", 4, 4, values=True))
    write(bundle("megatron-ce-backward-tp4-wrong-offset",
                 "BUG ON PURPOSE: rank 2 shifts its labels by 9 instead of 8 (its mask covers "
                 "[8, 12)), so it subtracts 1 one entry to the left; labels declared in [0, 15].",
                 4, 4, shifts=[0, 4, 9, 12], values=True))


if __name__ == "__main__":
    main()
