"""The Megatron MLP of models/mlp-megatron with a square fc1 weight
(HIDDEN = FFN = 8), and ONE planted bug: fc1's weight split along the wrong
dim, hidden by the square shape.

fc1's weight is stored as nn.Linear stores it, [out, in]; column
parallelism splits the OUT features: Shard(0), rank r computing
F.linear(x, w1_r) = x @ w1_r.T.  The buggy code treats the weight as a
Conv1D / [in, out] weight (as Hugging Face's GPT-2 stores it): it splits
dim 1 and computes x @ w1_r.  Because the weight is square, w1_r is [8, 4]
and x @ w1_r is [.., 4] as the correct F.linear(x, w1_r') would be: every
shape agrees, every rank computes x @ (column block of w1) = the wrong
half of w1 transposed.

Variants: bug (Shard(1), x @ w1_r), fixed (Shard(0), F.linear(x, w1_r)).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/wrong-dim-square/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 8


def mlp(x, w1, b1, w2, b2):
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def _mlp_tp(bug, x, w1, b1, w2, b2):
    n = len(x)
    xs = comm.copy_to_tp(x)
    if bug:   # BUG: an [out, in] weight used as an [in, out] one
        h = [F.gelu(xs[r] @ w1[r] + b1[r]) for r in range(n)]
    else:
        h = [F.gelu(F.linear(xs[r], w1[r], b1[r])) for r in range(n)]
    y = comm.reduce_from_tp([F.linear(h[r], w2[r]) for r in range(n)])
    return {"y": [y[r] + b2[r] for r in range(n)]}


def mlp_tp_bug(**kw):
    return _mlp_tp(True, **kw)


def mlp_tp_fixed(**kw):
    return _mlp_tp(False, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"wrong-dim-square-tp{degree}" + ("" if bug else "-fixed"),
        description="Megatron MLP with a square fc1 weight. " + (
            "BUG ON PURPOSE: fc1's [out, in] weight is split along dim 1 and applied "
            "as an [in, out] weight; the square shape hides it." if bug else
            "The fixed twin: split along dim 0, applied with F.linear."),
        spec=mlp, impl=mlp_tp_bug if bug else mlp_tp_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Replicate()),
            "w1": Param((FFN, HIDDEN), Shard(1) if bug else Shard(0)),   # BUG: Shard(1)
            "b1": Param((FFN,), Shard(0)),
            "w2": Param((HIDDEN, FFN), Shard(1)),
            "b2": Param((HIDDEN,), Replicate()),
        },
        outputs={"y": Replicate()},
    )
