#!/usr/bin/env python3
"""gen.py — writes the hand-written bundles of this directory (python3 gen.py;
deterministic, stdlib only): the operators added for unseen captures
(lemmas/aten-extra.lemma) in two small blocks, written from the structure
of GPT-NeoX / BERT-style code at tiny sizes, NOT from captured data.

mlp-tp2.json / mlp-tp4.json: an MLP with the erf form of GELU and clamps
  (Megatron column- then row-parallel, all_reduce), then row-wise heads on
  the replicated result:
    ln = layer_norm(x, [H], w, b)                       (pre-dispatch)
    a = mm(view(ln, [B*T, H]), t(w1))                   w1 rows split
    g = (a * 0.5) * (erf(a * 0.7071067811865476) + 1)
    c = clamp_max(clamp_min(g, -6.0), 6.0)
    y = view(mm(c, t(w2)), [B, T, H])                   w2 columns split, all_reduce
    out = addcmul(x, softmax.int(y, -1), sub(y, logsumexp(y, [-1], True)), value=0.5)
  expected: out = out_r on every rank.  mlp-tp2-clampbug.json: BUG ON
  PURPOSE, rank 1 clamps at 0.0 (not 6.0): fails at 'clamp_max'.

rows-sp2.json: row-wise operators on a sequence-parallel split (x [1, T, H]
  split along the tokens, dim 1; weights replicated):
    ln = layer_norm(x, [H], w, b)
    p = softmax.int(ln, -1); lp = log_softmax.int(ln, -1)
    out1 = addcmul(ln, p, lp, value=0.5)
    out2 = erf(logsumexp(ln, [-1], True))
    out3 = repeat_interleave(lerp(ln, p, 0.25), 2, dim=-1)
    out4 = var_mean(ln, [-1], correction=0, keepdim=True)[0]
  expected: outK = cat(outK_0, outK_1, dim=1).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = "megatron/model/transformer.py"


def node(name, op, args, shape, dtype="f32", kwargs=None, outputs=None):
    n = {"name": name, "op": op, "args": args, "kwargs": kwargs or {}}
    n["outputs"] = outputs or [{"name": name, "shape": shape, "dtype": dtype}]
    n["src"] = SRC
    return n


def ranked(nodes, r, names):
    """Rename every local name of NODES with _r and tag outputs with rank r."""
    out = []
    for n in nodes:
        n = json.loads(json.dumps(n))

        def rn(a):
            if isinstance(a, str):
                return a + "_%d" % r if a in names else a
            if isinstance(a, list):
                return [rn(b) for b in a]
            return a
        n["name"] += "_%d" % r
        n["args"] = [rn(a) for a in n["args"]]
        for o in n["outputs"]:
            if o is not None:
                o["name"] += "_%d" % r
                o["rank"] = r
        out.append(n)
    return out


def mlp(B, T, H, F, clamp_hi=6.0, partial=False):
    nodes = [
        node("ln", "aten.layer_norm.default", ["x", [H], "w", "b", 1e-05], [B, T, H]),
        node("h", "aten.view.default", ["ln", [B * T, H]], [B * T, H]),
        node("t1", "aten.t.default", ["w1"], [H, F]),
        node("a", "aten.mm.default", ["h", "t1"], [B * T, F]),
        node("a_s", "aten.mul.Scalar", ["a", 0.7071067811865476], [B * T, F]),
        node("e", "aten.erf.default", ["a_s"], [B * T, F]),
        node("e1", "aten.add.Scalar", ["e", 1], [B * T, F]),
        node("a_h", "aten.mul.Scalar", ["a", 0.5], [B * T, F]),
        node("g", "aten.mul.Tensor", ["a_h", "e1"], [B * T, F]),
        node("clamp_min", "aten.clamp_min.default", ["g", -6.0], [B * T, F]),
        node("clamp_max", "aten.clamp_max.default", ["clamp_min", clamp_hi], [B * T, F]),
        node("t2", "aten.t.default", ["w2"], [F, H]),
        node("o", "aten.mm.default", ["clamp_max", "t2"], [B * T, H]),
    ]
    return nodes


def heads(B, T, H, src):
    return [
        node("y", "aten.view.default", [src, [B, T, H]], [B, T, H]),
        node("p", "aten.softmax.int", ["y", -1], [B, T, H]),
        node("l", "aten.logsumexp.default", ["y", [-1], True], [B, T, 1]),
        node("ls", "aten.sub.Tensor", ["y", "l"], [B, T, H]),
        node("out", "aten.addcmul.default", ["x", "p", "ls"], [B, T, H], kwargs={"value": 0.5}),
    ]


def mlp_bundle(name, tp, bug=False):
    B, T, H, F = 2, 4, 8, 16
    fl = F // tp
    spec_nodes = mlp(B, T, H, F) + heads(B, T, H, "o")
    spec = {"inputs": [{"name": n, "shape": s, "dtype": "f32"} for n, s in (
        ("x", [B, T, H]), ("w", [H]), ("b", [H]), ("w1", [F, H]), ("w2", [H, F]))],
        "nodes": spec_nodes, "outputs": ["out"]}
    inputs, nodes = [], []
    for r in range(tp):
        inputs += [{"name": "%s_%d" % (n, r), "shape": s, "dtype": "f32", "rank": r} for n, s in (
            ("x", [B, T, H]), ("w", [H]), ("b", [H]), ("w1", [fl, H]), ("w2", [H, fl]))]
        loc = mlp(B, T, H, fl, clamp_hi=0.0 if bug and r == 1 else 6.0)
        names = {"x", "w", "b", "w1", "w2"} | {n["name"] for n in loc} | {"o_red", "y", "p", "l",
                                                                          "ls", "out"}
        nodes += ranked(loc, r, names)
    nodes.append({"name": "all_reduce", "op": "comm.all_reduce.default",
                  "args": [["o_%d" % r for r in range(tp)]], "kwargs": {},
                  "outputs": [{"name": "o_red_%d" % r, "shape": [B * T, H], "dtype": "f32",
                               "rank": r} for r in range(tp)], "src": SRC})
    for r in range(tp):
        names = {"x", "o_red", "y", "p", "l", "ls", "out"}
        nodes += ranked(heads(B, T, H, "o_red"), r, names)
    rel = {n: ["%s_%d" % (n, r) for r in range(tp)] for n in ("x", "w", "b")}
    rel["w1"] = ["cat(%s, dim=0)" % ", ".join("w1_%d" % r for r in range(tp))]
    rel["w2"] = ["cat(%s, dim=1)" % ", ".join("w2_%d" % r for r in range(tp))]
    desc = ("MLP with erf-GELU and clamps, Megatron tensor parallelism at TP=%d, then softmax.int, "
            "logsumexp and addcmul on the replicated result; hand-written by "
            "tests/models/captures/aten-extra/gen.py." % tp)
    if bug:
        desc += " BUG ON PURPOSE: rank 1 clamps at 0.0 where the spec clamps at 6.0."
    return {"format": "shardcheck-bundle/1", "name": name, "description": desc, "symbols": {},
            "assume": [], "input_relation": rel,
            "expect_output_relation": {"out": ["out_%d" % r for r in range(tp)]},
            "spec": spec, "impl": {"inputs": inputs, "nodes": nodes,
                                   "outputs": ["out_%d" % r for r in range(tp)]}}


def rows(T, H):
    return [
        node("ln", "aten.layer_norm.default", ["x", [H], "w", "b", 1e-05], [1, T, H]),
        node("p", "aten.softmax.int", ["ln", -1], [1, T, H]),
        node("lp", "aten.log_softmax.int", ["ln", -1], [1, T, H]),
        node("out1", "aten.addcmul.default", ["ln", "p", "lp"], [1, T, H], kwargs={"value": 0.5}),
        node("lse", "aten.logsumexp.default", ["ln", [-1], True], [1, T, 1]),
        node("out2", "aten.erf.default", ["lse"], [1, T, 1]),
        node("lr", "aten.lerp.Scalar", ["ln", "p", 0.25], [1, T, H]),
        node("out3", "aten.repeat_interleave.self_int", ["lr", 2], [1, T, 2 * H],
             kwargs={"dim": -1}),
        node("vm", "aten.var_mean.correction", ["ln", [-1]], None,
             kwargs={"correction": 0, "keepdim": True},
             outputs=[{"name": "out4", "shape": [1, T, 1], "dtype": "f32"},
                      {"name": "mean4", "shape": [1, T, 1], "dtype": "f32"}]),
    ]


def rows_bundle(name, sp):
    T, H = 8, 4
    tl = T // sp
    outs = ["out1", "out2", "out3", "out4"]
    spec = {"inputs": [{"name": n, "shape": s, "dtype": "f32"} for n, s in (
        ("x", [1, T, H]), ("w", [H]), ("b", [H]))], "nodes": rows(T, H), "outputs": outs}
    inputs, nodes = [], []
    for r in range(sp):
        inputs += [{"name": "%s_%d" % (n, r), "shape": s, "dtype": "f32", "rank": r} for n, s in (
            ("x", [1, tl, H]), ("w", [H]), ("b", [H]))]
        loc = rows(tl, H)
        names = {"x", "w", "b"} | {n["name"] for n in loc} | {"out4", "mean4"}
        nodes += ranked(loc, r, names)
    rel = {"x": ["cat(%s, dim=1)" % ", ".join("x_%d" % r for r in range(sp))]}
    rel.update({n: ["%s_%d" % (n, r) for r in range(sp)] for n in ("w", "b")})
    return {"format": "shardcheck-bundle/1", "name": name,
            "description": "Row-wise operators (layer_norm, softmax.int, log_softmax.int, "
            "addcmul, logsumexp, erf, lerp, repeat_interleave, var_mean) on a sequence-parallel "
            "split of the tokens at SP=%d; hand-written by "
            "tests/models/captures/aten-extra/gen.py." % sp,
            "symbols": {}, "assume": [], "input_relation": rel,
            "expect_output_relation": {o: ["cat(%s, dim=1)" % ", ".join(
                "%s_%d" % (o, r) for r in range(sp))] for o in outs},
            "spec": spec, "impl": {"inputs": inputs, "nodes": nodes,
                                   "outputs": ["%s_%d" % (o, r) for r in range(sp) for o in outs]}}


def main():
    for name, b in (("mlp-tp2", mlp_bundle("mlp-tp2", 2)), ("mlp-tp4", mlp_bundle("mlp-tp4", 4)),
                    ("mlp-tp2-clampbug", mlp_bundle("mlp-tp2-clampbug", 2, bug=True)),
                    ("rows-sp2", rows_bundle("rows-sp2", 2))):
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(b, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
