#!/usr/bin/env python3
"""gen.py — writes the hand-written SwitchMLP bundles of this directory
(python3 gen.py; deterministic, stdlib only).

A miniature of Megatron-LM's legacy SwitchMLP (megatron/legacy/model/
transformer.py, the layer of the reference case bug_missing_switchmlp_allreduce),
forward only: one expert, sequence parallelism over the tokens and expert
tensor parallelism, as a TorchDynamo capture gives it per rank.

  spec (S tokens, H hidden, F ffn):
    logits = mm(x, t(wr))                    [S, 1]   router
    g = max.dim(logits, 1).indices           [S]      one expert: all 0
    p = index(sigmoid(logits), [arange(S), g])
    nz = nonzero(eq(g, 0))                   [u0, 1]  data-dependent u0
    y = mm(relu(mm(view(index(x, [nz]), [u0, H]), t(w1))), t(w2))
    out = index_put(zeros_like(x), [nz], view(y, [u0, 1, H]))
    res = mul(out, unsqueeze(p, 1))          [S, H]
  rank k of N (tokens [k S/N, (k+1) S/N), w1 rows and w2 columns split):
    the router on its own tokens; all_gather of x and of g over the group;
    nonzero over the gathered mask (its own symbol u0); the expert on every
    token with its shards (a partial sum); index_put; reduce_scatter (sum)
    back to its tokens; mul by its probabilities.

Bundles (expected: res = cat(r0.res, ..., dim=0)):
  switchmlp-tp2.json            2 ranks: refines;
  switchmlp-tp4.json            4 ranks (generic in ranks): refines;
  switchmlp-tp2-no-reduce.json  BUG ON PURPOSE: each rank keeps its own
                                rows of its partial (a slice where the
                                reduce_scatter should sum): fails;
  switchmlp-2experts-tp2.json   two experts (softmax, top-1 by max.dim,
                                gelu experts), each with its own nonzero
                                size (u0, u1, counts that vary with the
                                data), writing one buffer in turn: refines;
  switchmlp-2experts-tp2-no-reduce.json
                                BUG ON PURPOSE, the same without the
                                reduce_scatter: fails.
The proof needs the data-dependent sizes (docs/adding-an-operator.md): the
spec's u0 and each rank's rk.u0 are proved equal (size learned), and
lemmas/real-moe.lemma.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "megatron/legacy/model/transformer.py"


def node(name, op, args, shape, dtype, kwargs=None, src=None, outputs=None):
    n = {"name": name, "op": op, "args": args, "kwargs": kwargs or {}}
    n["outputs"] = outputs or [{"name": name, "shape": shape, "dtype": dtype}]
    if src:
        n["src"] = src
    return n


def gather_tokens(nodes, s, h, rank, n):
    """The ranks' all-gather of the tokens x and their experts g (expert
    parallelism: every rank sees all s tokens), appended to NODES; returns
    the names of the gathered tensors (the local ones in the spec)."""
    if rank is None:
        return "x", "g"
    nodes += [
        node("ag_x", "_c10d_functional.all_gather_into_tensor.default", ["x", n, "ep"],
             [s, h], "f32", src="megatron/core/tensor_parallel/mappings.py:511"),
        node("X", "_c10d_functional.wait_tensor.default", ["ag_x"], [s, h], "f32"),
        node("ag_g", "_c10d_functional.all_gather_into_tensor.default", ["g", n, "ep"],
             [s], "i64", src=SRC + ":249"),
        node("G", "_c10d_functional.wait_tensor.default", ["ag_g"], [s], "i64"),
    ]
    return "X", "G"


def scatter_back(nodes, buf, s, h, rank, n, bug):
    """Each rank's rows of the scattered expert output BUF (reduce_scatter;
    with BUG the rank's slice, without the sum over ranks) times the router
    probability, appended to NODES as 'res'."""
    sl = s // n
    last = buf
    if rank is not None:
        if bug:
            nodes.append(node("mine", "aten.slice.Tensor", [buf, 0, rank * sl, (rank + 1) * sl],
                              [sl, h], "f32", src=SRC + ":302"))
            last = "mine"
        else:
            nodes += [
                node("rs", "_c10d_functional.reduce_scatter_tensor.default",
                     [buf, "sum", n, "ep"], [sl, h], "f32",
                     src="torch/distributed/_functional_collectives.py:278"),
                node("back", "_c10d_functional.wait_tensor.default", ["rs"], [sl, h], "f32"),
            ]
            last = "back"
    nodes.append(node("res", "aten.mul.Tensor", [last, "pu"], [sl, h], "f32", src=SRC + ":318"))


def layer(s, h, f, rank=None, n=1, bug=False):
    """Nodes of the spec (rank None) or of rank RANK of N; S is the global
    token count, F the global ffn width."""
    sl, fl = s // n, f // n
    nodes = [
        node("t_r", "aten.t.default", ["wr"], [h, 1], "f32", src=SRC + ":262"),
        node("logits", "aten.mm.default", ["x", "t_r"], [sl, 1], "f32", src=SRC + ":262"),
        node("mx", "aten.max.dim", ["logits", 1], None, None, src=SRC + ":271",
             outputs=[None, {"name": "g", "shape": [sl], "dtype": "i64"}]),
        node("probs", "aten.sigmoid.default", ["logits"], [sl, 1], "f32", src=SRC + ":272"),
        node("ar", "aten.arange.default", [sl], [sl], "i64", src=SRC + ":273"),
        node("p", "aten.index.Tensor", ["probs", ["ar", "g"]], [sl], "f32", src=SRC + ":273"),
        node("pu", "aten.unsqueeze.default", ["p", 1], [sl, 1], "f32", src=SRC + ":278"),
    ]
    xs, gs = gather_tokens(nodes, s, h, rank, n)
    nodes += [
        node("eq", "aten.eq.Scalar", [gs, 0], [s], "bool", src=SRC + ":298"),
        node("nz", "aten.nonzero.default", ["eq"], ["u0", 1], "i64", src=SRC + ":298"),
        node("xi", "aten.index.Tensor", [xs, ["nz"]], ["u0", 1, h], "f32", src=SRC + ":299"),
        node("xv", "aten.view.default", ["xi", ["u0", h]], ["u0", h], "f32"),
        node("t1", "aten.t.default", ["w1"], [h, fl], "f32"),
        node("hid", "aten.mm.default", ["xv", "t1"], ["u0", fl], "f32"),
        node("act", "aten.relu.default", ["hid"], ["u0", fl], "f32"),
        node("t2", "aten.t.default", ["w2"], [fl, h], "f32"),
        node("y", "aten.mm.default", ["act", "t2"], ["u0", h], "f32"),
        node("yv", "aten.view.default", ["y", ["u0", 1, h]], ["u0", 1, h], "f32"),
        node("z", "aten.zeros_like.default", [xs], [s, h], "f32", src=SRC + ":292"),
        node("out", "aten.index_put.default", ["z", ["nz"], "yv"], [s, h], "f32",
             src=SRC + ":301"),
    ]
    scatter_back(nodes, "out", s, h, rank, n, bug)
    return nodes


def layer2(s, h, f, rank=None, n=1, bug=False):
    """Two experts, top-1 routing with softmax (Megatron's non-sinkhorn
    path): every expert scatters into one buffer in turn."""
    sl, fl = s // n, f // n
    nodes = [
        node("t_r", "aten.t.default", ["wr"], [h, 2], "f32", src=SRC + ":262"),
        node("logits", "aten.mm.default", ["x", "t_r"], [sl, 2], "f32", src=SRC + ":262"),
        node("route", "aten._softmax.default", ["logits", 1, False], [sl, 2], "f32",
             src=SRC + ":268"),
        node("mx", "aten.max.dim", ["route", 1], None, None, src=SRC + ":269",
             outputs=[{"name": "pmax", "shape": [sl], "dtype": "f32"},
                      {"name": "g", "shape": [sl], "dtype": "i64"}]),
        node("pu", "aten.unsqueeze.default", ["pmax", 1], [sl, 1], "f32", src=SRC + ":278"),
    ]
    xs, gs = gather_tokens(nodes, s, h, rank, n)
    nodes.append(node("z", "aten.zeros_like.default", [xs], [s, h], "f32", src=SRC + ":292"))
    buf = "z"
    for e in range(2):
        u = "u%d" % e
        nodes += [
            node("eq%d" % e, "aten.eq.Scalar", [gs, e], [s], "bool", src=SRC + ":298"),
            node("nz%d" % e, "aten.nonzero.default", ["eq%d" % e], [u, 1], "i64", src=SRC + ":298"),
            node("xi%d" % e, "aten.index.Tensor", [xs, ["nz%d" % e]], [u, 1, h], "f32",
                 src=SRC + ":299"),
            node("xv%d" % e, "aten.view.default", ["xi%d" % e, [u, h]], [u, h], "f32"),
            node("t1_%d" % e, "aten.t.default", ["w1_%d" % e], [h, fl], "f32"),
            node("hid%d" % e, "aten.mm.default", ["xv%d" % e, "t1_%d" % e], [u, fl], "f32"),
            node("act%d" % e, "aten.gelu.default", ["hid%d" % e], [u, fl], "f32"),
            node("t2_%d" % e, "aten.t.default", ["w2_%d" % e], [fl, h], "f32"),
            node("y%d" % e, "aten.mm.default", ["act%d" % e, "t2_%d" % e], [u, h], "f32"),
            node("yv%d" % e, "aten.view.default", ["y%d" % e, [u, 1, h]], [u, 1, h], "f32"),
            node("out%d" % e, "aten.index_put.default", [buf, ["nz%d" % e], "yv%d" % e], [s, h],
                 "f32", src=SRC + ":301"),
        ]
        buf = "out%d" % e
    scatter_back(nodes, buf, s, h, rank, n, bug)
    return nodes


def graph2(s, h, f, rank=None, n=1, bug=False):
    sl, fl = s // n, f // n
    inputs = [{"name": "x", "shape": [sl, h], "dtype": "f32"},
              {"name": "wr", "shape": [2, h], "dtype": "f32"}]
    for e in range(2):
        inputs += [{"name": "w1_%d" % e, "shape": [fl, h], "dtype": "f32"},
                   {"name": "w2_%d" % e, "shape": [h, fl], "dtype": "f32"}]
    return {"inputs": inputs, "nodes": layer2(s, h, f, rank, n, bug), "outputs": ["res"],
            "symbols": {"u0": {"min": 0, "max": s}, "u1": {"min": 0, "max": s}},
            "assume": ["u0 >= 0", "u0 <= %d" % s, "u1 >= 0", "u1 <= %d" % s]}


def bundle2(name, n, description, bug=False, s=8, h=4, f=6):
    ranks = ["r%d" % k for k in range(n)]
    rel = {"x": ["cat(%s, dim=0)" % ", ".join(r + ".x" for r in ranks)],
           "wr": [r + ".wr" for r in ranks]}
    for e in range(2):
        rel["w1_%d" % e] = ["cat(%s, dim=0)" % ", ".join("%s.w1_%d" % (r, e) for r in ranks)]
        rel["w2_%d" % e] = ["cat(%s, dim=1)" % ", ".join("%s.w2_%d" % (r, e) for r in ranks)]
    return {
        "format": "shardcheck-bundle/1",
        "name": name,
        "description": description,
        "spec": graph2(s, h, f),
        "impl": {"ranks": [graph2(s, h, f, k, n, bug) for k in range(n)],
                 "groups": {"ep": list(range(n))}},
        "input_relation": rel,
        "expect_output_relation": {"res": ["cat(%s, dim=0)" % ", ".join(r + ".res" for r in ranks)]},
    }


def graph(s, h, f, rank=None, n=1, bug=False):
    sl, fl = s // n, f // n
    inputs = [
        {"name": "x", "shape": [sl, h], "dtype": "f32"},
        {"name": "wr", "shape": [1, h], "dtype": "f32"},
        {"name": "w1", "shape": [fl, h], "dtype": "f32"},
        {"name": "w2", "shape": [h, fl], "dtype": "f32"},
    ]
    return {"inputs": inputs, "nodes": layer(s, h, f, rank, n, bug), "outputs": ["res"],
            "symbols": {"u0": {"min": 0, "max": s}}, "assume": ["u0 >= 0", "u0 <= %d" % s]}


def bundle(name, n, description, bug=False, s=8, h=4, f=6):
    ranks = ["r%d" % k for k in range(n)]
    return {
        "format": "shardcheck-bundle/1",
        "name": name,
        "description": description,
        "spec": graph(s, h, f),
        "impl": {"ranks": [graph(s, h, f, k, n, bug) for k in range(n)],
                 "groups": {"ep": list(range(n))}},
        "input_relation": {
            "x": ["cat(%s, dim=0)" % ", ".join(r + ".x" for r in ranks)],
            "wr": [r + ".wr" for r in ranks],
            "w1": ["cat(%s, dim=0)" % ", ".join(r + ".w1" for r in ranks)],
            "w2": ["cat(%s, dim=1)" % ", ".join(r + ".w2" for r in ranks)],
        },
        "expect_output_relation": {"res": ["cat(%s, dim=0)" % ", ".join(r + ".res" for r in ranks)]},
    }


def main():
    out = {
        "switchmlp-tp2.json": bundle(
            "switchmlp-tp2", 2,
            "Megatron SwitchMLP miniature (one expert, nonzero dispatch with a data-dependent "
            "size, sequence parallel tokens, expert tensor parallelism), 2 ranks; refines."),
        "switchmlp-tp4.json": bundle(
            "switchmlp-tp4", 4,
            "Megatron SwitchMLP miniature, 4 ranks of 2 tokens and 2 ffn columns; refines.",
            s=8, h=4, f=8),
        "switchmlp-tp2-no-reduce.json": bundle(
            "switchmlp-tp2-no-reduce", 2,
            "Megatron SwitchMLP miniature, 2 ranks. BUG ON PURPOSE: each rank keeps its own "
            "rows of its partial expert output (a slice where reduce_scatter should sum).",
            bug=True),
        "switchmlp-2experts-tp2.json": bundle2(
            "switchmlp-2experts-tp2", 2,
            "Megatron SwitchMLP miniature with two experts (softmax top-1 routing, each "
            "expert's rows by nonzero with its own data-dependent size u0, u1, scattered into "
            "one buffer in turn), 2 ranks; refines."),
        "switchmlp-2experts-tp2-no-reduce.json": bundle2(
            "switchmlp-2experts-tp2-no-reduce", 2,
            "Megatron SwitchMLP miniature with two experts, 2 ranks. BUG ON PURPOSE: each rank "
            "keeps its own rows of its partial expert outputs (no reduce_scatter).", bug=True),
    }
    for name, b in out.items():
        with open(os.path.join(HERE, name), "w") as fh:
            json.dump(b, fh, indent=1)
            fh.write("\n")


if __name__ == "__main__":
    main()
