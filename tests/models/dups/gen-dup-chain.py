#!/usr/bin/env python3
"""gen-dup-chain.py — writes dup-chain.json and dup-chain-bug.json here.

Autograd's backward of minimum / maximum computes where(eq(x, y), g / 2, g)
twice; each copy computes its own eq and division.  The second where reads
tensors that are duplicates of the first's, so it is a duplicate of the
first where through a chain (src/infer/dups.c).  Spec and impl (2 ranks,
every tensor replicated) compute o = w1 + neg(w2) with w1, w2 the two
copies; the spec's second copy is carried from the first by isomorphism,
its relation naming the first copy's impl tensors, so the impl neg of the
second copy is reached only through the duplicate.  The bug twin adds w1
to itself on every rank (fails at add)."""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bundlegen  # noqa: E402

S = [2, 3]


def T(n, r=None, dtype="f32"):
    return bundlegen.tensor(n, S, r, dtype)


def N(name, op, args, out):
    return bundlegen.node(name, op, args, [out])


def chain(sfx, r=None):
    x, y = "x" + sfx, "y" + sfx
    return [
        N("eq" + sfx, "aten.eq.Tensor", [x, y], T("e1" + sfx, r, "b8")),
        N("div" + sfx, "aten.div.Scalar", [x, 2], T("d1" + sfx, r)),
        N("where" + sfx, "aten.where.self", ["e1" + sfx, "d1" + sfx, x], T("w1" + sfx, r)),
        N("eq_b" + sfx, "aten.eq.Tensor", [x, y], T("e2" + sfx, r, "b8")),
        N("div_b" + sfx, "aten.div.Scalar", [x, 2], T("d2" + sfx, r)),
        N("where_b" + sfx, "aten.where.self", ["e2" + sfx, "d2" + sfx, x], T("w2" + sfx, r)),
        N("neg" + sfx, "aten.neg.default", ["w2" + sfx], T("n" + sfx, r)),
        N("add" + sfx, "aten.add.Tensor", ["w1" + sfx, "n" + sfx], T("o" + sfx, r)),
    ]


def main():
    b = bundlegen.bundle(
        "dup-chain", __doc__, bundlegen.graph([T("x"), T("y")], chain(""), ["o"]),
        bundlegen.graph([T(f"{v}_{r}", r) for r in (0, 1) for v in ("x", "y")],
                        chain("_0", 0) + chain("_1", 1), ["o_0", "o_1"]),
        {"x": ["x_0", "x_1"], "y": ["y_0", "y_1"]},
        {"o": ["o_0", "o_1"]})
    m = copy.deepcopy(b)
    m["name"] = "dup-chain-bug"
    m["description"] = "dup-chain with every rank adding w1 to itself: fails at add"
    for n in m["impl"]["nodes"]:
        if n["name"] in ("add_0", "add_1"):
            n["args"] = ["w1" + n["name"][3:], "w1" + n["name"][3:]]
    bundlegen.write(__file__, b, m)


if __name__ == "__main__":
    main()
