#!/usr/bin/env python3
"""gen.py OUTDIR: write the bundles of tests/real/patterns.

Small synthetic twins of patterns of the Megatron-LM captures that the
relation inference must get past (each is named after the pattern; the
expected verdicts are in tests/real/meson.build):
  baddbmm-into-empty     attention scores baddbmm(empty, q, k, beta=0):
                         the buffer is never read;
  copy-into-empty        an all-reduced result copied into an empty()
                         buffer (functionalized copy_): aten.copy reads
                         only its src;
  broadcast-from-rank0   data loaded on rank 0 and broadcast: rank 1's own
                         copy is never read;
  max-over-shards        the row max of vocabulary-sharded logits (max per
                         shard, all_reduce max); the spec's argmax result
                         is never read, so it needs no relation;
  empty-then-missing-allreduce
                         BUG ON PURPOSE: a spec empty() that maps to no impl
                         tensor is absorbed by the copy that overwrites it,
                         so the failure is reported where the all-reduce
                         is missing (o), not at the empty().
The bundles are committed; rerun this script after changing it."""
import json, os, sys

OUT = sys.argv[1]

def t(n, s, d="f32"):
    return {"name": n, "shape": s, "dtype": d}

def node(name, op, args, outs, kwargs=None):
    n = {"name": name, "op": op, "args": args, "outputs": outs}
    if kwargs:
        n["kwargs"] = kwargs
    return n

def bundle(name, desc, spec, ranks, rel, **extra):
    b = {"format": "shardcheck-bundle/1", "name": name, "description": desc,
         "spec": spec, "impl": {"ranks": ranks, "groups": {"12": [0, 1]}},
         "input_relation": rel}
    b.update(extra)
    return b

def ar(x, shape, name, op="sum"):
    return [node(name, "_c10d_functional.all_reduce.default", [x, op, "12"], [t(name, shape)]),
            node("w_" + name, "_c10d_functional.wait_tensor.default", [name], [t("w_" + name, shape)])]

B = {}

# 1. a row-parallel matmul whose all-reduced result is copied into an
#    uninitialised buffer before it is used (functionalized copy_).
spec = {"inputs": [t("x", [4, 8]), t("w", [8, 6])],
        "nodes": [node("h", "aten.mm.default", ["x", "w"], [t("h", [4, 6])]),
                  node("y", "aten.relu.default", ["h"], [t("y", [4, 6])])],
        "outputs": ["y"]}
def r1(k):
    return {"inputs": [t("x", [4, 4]), t("w", [4, 6])],
            "nodes": [node("p", "aten.mm.default", ["x", "w"], [t("p", [4, 6])])]
            + ar("p", [4, 6], "s")
            + [node("buf", "aten.empty.memory_format", [[4, 6]], [t("buf", [4, 6])], {"dtype": "f32"}),
               node("c", "aten.copy.default", ["buf", "w_s"], [t("c", [4, 6])]),
               node("y", "aten.relu.default", ["c"], [t("y", [4, 6])])],
            "outputs": ["y"]}
B["copy-into-empty"] = bundle(
    "copy-into-empty",
    "row-parallel mm, all-reduce, copy into an empty() buffer, relu: the copy reads only its src",
    spec, [r1(0), r1(1)],
    {"x": ["cat(r0.x, r1.x, dim=1)"], "w": ["cat(r0.w, r1.w, dim=0)"]},
    expect_output_relation={"y": ["r0.y", "r1.y"]})

# 2. data loaded on rank 0 only and broadcast over the group.
spec = {"inputs": [t("ids", [4, 8])],
        "nodes": [node("y", "aten.mul.Scalar", ["ids", 2.0], [t("y", [4, 8])])],
        "outputs": ["y"]}
def r2(k):
    return {"inputs": [t("ids", [4, 8])],
            "nodes": [node("b", "_c10d_functional.broadcast.default", ["ids", 0, "12"], [t("b", [4, 8])]),
                      node("wb", "_c10d_functional.wait_tensor.default", ["b"], [t("wb", [4, 8])]),
                      node("y", "aten.mul.Scalar", ["wb", 2.0], [t("y", [4, 8])])],
            "outputs": ["y"]}
B["broadcast-from-rank0"] = bundle(
    "broadcast-from-rank0",
    "rank 0's data broadcast over the group; rank 1's own copy is never read",
    spec, [r2(0), r2(1)], {"ids": ["r0.ids"]},
    expect_output_relation={"y": ["r0.y", "r1.y"]})

# 3. the row maximum of vocabulary-sharded logits; the indices are unread.
spec = {"inputs": [t("z", [4, 16])],
        "nodes": [node("m", "aten.max.dim", ["z", -1], [t("v", [4]), t("i", [4], "i64")]),
                  node("u", "aten.unsqueeze.default", ["v", -1], [t("u", [4, 1])])],
        "outputs": ["u"]}
def r3(k):
    return {"inputs": [t("z", [4, 8])],
            "nodes": [node("m", "aten.max.dim", ["z", -1], [t("v", [4]), None])]
            + ar("v", [4], "g", "max")
            + [node("u", "aten.unsqueeze.default", ["w_g", -1], [t("u", [4, 1])])],
            "outputs": ["u"]}
B["max-over-shards"] = bundle(
    "max-over-shards",
    "row max over the vocabulary shards: max per shard, then all_reduce(max); the spec's argmax is never read",
    spec, [r3(0), r3(1)], {"z": ["cat(r0.z, r1.z, dim=1)"]},
    expect_output_relation={"u": ["r0.u", "r1.u"]})

# 4. an empty() buffer of the spec, then a later missing all-reduce: the
#    failure is at the node that misses it, not at the empty().
spec = {"inputs": [t("x", [4, 8]), t("w1", [8, 6]), t("w2", [6, 8])],
        "nodes": [node("buf", "aten.empty.memory_format", [[4, 6]], [t("buf", [4, 6])], {"dtype": "f32"}),
                  node("h", "aten.mm.default", ["x", "w1"], [t("h", [4, 6])]),
                  node("c", "aten.copy.default", ["buf", "h"], [t("c", [4, 6])]),
                  node("g", "aten.relu.default", ["c"], [t("g", [4, 6])]),
                  node("y", "aten.mm.default", ["g", "w2"], [t("y", [4, 8])]),
                  node("o", "aten.relu.default", ["y"], [t("o", [4, 8])])],
        "outputs": ["o"]}
def r4(k):
    # column-parallel fc1 (w1 split along dim 1), row-parallel fc2 (w2 split
    # along dim 0) whose partial sums y_k are never all-reduced before relu.
    return {"inputs": [t("x", [4, 8]), t("w1", [8, 3]), t("w2", [3, 8])],
            "nodes": [node("buf", "aten.empty.memory_format", [[4, 3]], [t("buf", [4, 3])], {"dtype": "f32"}),
                      node("h", "aten.mm.default", ["x", "w1"], [t("h", [4, 3])]),
                      node("c", "aten.copy.default", ["buf", "h"], [t("c", [4, 3])]),
                      node("g", "aten.relu.default", ["c"], [t("g", [4, 3])]),
                      node("y", "aten.mm.default", ["g", "w2"], [t("y", [4, 8])]),
                      node("o", "aten.relu.default", ["y"], [t("o", [4, 8])])],
            "outputs": ["o"]}
B["empty-then-missing-allreduce"] = bundle(
    "empty-then-missing-allreduce",
    "BUG ON PURPOSE: the spec writes fc1 into an empty() buffer (which maps to nothing: deferred, then absorbed by the copy); fc2's partial sums reach the relu un-reduced, so the check fails at o",
    spec, [r4(0), r4(1)],
    {"x": ["r0.x", "r1.x"], "w1": ["cat(r0.w1, r1.w1, dim=1)"], "w2": ["cat(r0.w2, r1.w2, dim=0)"]},
    expect_output_relation={"o": ["r0.o", "r1.o"]})

# 5. attention scores computed into an uninitialised buffer, batch split
#    over the ranks: baddbmm with beta=0 never reads its input.
spec = {"inputs": [t("q", [4, 2, 3]), t("k", [4, 3, 2])],
        "nodes": [node("buf", "aten.empty.memory_format", [[4, 2, 2]], [t("buf", [4, 2, 2])], {"dtype": "f32"}),
                  node("s", "aten.baddbmm.default", ["buf", "q", "k"], [t("s", [4, 2, 2])],
                       {"beta": 0.0, "alpha": 0.5})],
        "outputs": ["s"]}
def r5(k):
    return {"inputs": [t("q", [2, 2, 3]), t("k", [2, 3, 2])],
            "nodes": [node("buf", "aten.empty.memory_format", [[2, 2, 2]], [t("buf", [2, 2, 2])], {"dtype": "f32"}),
                      node("s", "aten.baddbmm.default", ["buf", "q", "k"], [t("s", [2, 2, 2])],
                           {"beta": 0.0, "alpha": 0.5})],
            "outputs": ["s"]}
B["baddbmm-into-empty"] = bundle(
    "baddbmm-into-empty",
    "attention scores baddbmm(empty, q, k, beta=0) with the batch split over the ranks: the buffer is never read",
    spec, [r5(0), r5(1)], {"q": ["cat(r0.q, r1.q, dim=0)"], "k": ["cat(r0.k, r1.k, dim=0)"]},
    expect_output_relation={"s": ["cat(r0.s, r1.s, dim=0)"]})

os.makedirs(OUT, exist_ok=True)
for k, b in B.items():
    with open(os.path.join(OUT, k + ".json"), "w") as f:
        json.dump(b, f, indent=1)
        f.write("\n")
print(" ".join(sorted(B)))
