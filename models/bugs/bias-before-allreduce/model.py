"""The Megatron MLP of models/mlp-megatron, and ONE planted bug: the bias of
the row-parallel fc2 added on every rank BEFORE the all-reduce.

A row-parallel layer's output is a sum of the ranks' partial products; its
bias must be added once, after the reduction (Megatron's RowParallelLinear
adds it after g).  The buggy code passes b2 to every rank's F.linear, so
the all-reduce sums n copies of it: y + (n - 1) * b2.

Variants: bug (bias inside the partial sums), fixed (bias after g).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/bias-before-allreduce/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 32


def mlp(x, w1, b1, w2, b2):
    """The sequential model (weights stored as nn.Linear stores them)."""
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def _mlp_tp(bug, x, w1, b1, w2, b2):
    n = len(x)
    xs = comm.copy_to_tp(x)                                          # f
    h = [F.gelu(F.linear(xs[r], w1[r], b1[r])) for r in range(n)]
    if bug:   # BUG: b2 inside every rank's partial sum
        return {"y": comm.reduce_from_tp([F.linear(h[r], w2[r], b2[r]) for r in range(n)])}
    y = comm.reduce_from_tp([F.linear(h[r], w2[r]) for r in range(n)])   # g
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
        name=f"bias-before-allreduce-tp{degree}" + ("" if bug else "-fixed"),
        description="Two-layer GELU MLP, Megatron column- then row-parallel. " + (
            "BUG ON PURPOSE: fc2's bias added on every rank before the all-reduce."
            if bug else "The fixed twin: the bias added once, after g."),
        spec=mlp, impl=mlp_tp_bug if bug else mlp_tp_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Replicate()),
            "w1": Param((FFN, HIDDEN), Shard(0)),
            "b1": Param((FFN,), Shard(0)),
            "w2": Param((HIDDEN, FFN), Shard(1)),
            "b2": Param((HIDDEN,), Replicate()),
        },
        outputs={"y": Replicate()},
    )
