"""The Megatron MLP of models/mlp-megatron, and ONE planted bug: a plain
all-reduce where Megatron's g (reduce_from_tp) belongs.

Both all-reduce the partial sums of the row-parallel fc2 in the forward, so
the forward is right.  Their backwards differ: g passes the output gradient
through (identity), a plain all-reduce (torch.distributed.nn semantics)
all-reduces it, so every rank continues the backward with n * grad_y and
the gradients of fc2's and fc1's weights and biases are n times too large.
Caught only in forward+backward.

Variants: bug (comm.all_reduce), fixed (comm.reduce_from_tp).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/allreduce-for-g/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, True, "bug"), (2, True, "fixed")]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 32


def mlp(x, w1, b1, w2, b2):
    """The sequential model (weights stored as nn.Linear stores them)."""
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def _mlp_tp(bug, x, w1, b1, w2, b2):
    n = len(x)
    xs = comm.copy_to_tp(x)                                          # f
    partial = [F.linear(F.gelu(F.linear(xs[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    if bug:   # BUG: all_reduce's backward all-reduces the gradient again
        y = comm.all_reduce(partial)
    else:
        y = comm.reduce_from_tp(partial)                             # g
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
        name=f"allreduce-for-g-tp{degree}" + ("" if bug else "-fixed"),
        description="Two-layer GELU MLP, Megatron column- then row-parallel. " + (
            "BUG ON PURPOSE: comm.all_reduce where Megatron's g belongs (gradients "
            "n times too large)." if bug else "The fixed twin: Megatron's g."),
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
