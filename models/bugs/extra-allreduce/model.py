"""BUG ON PURPOSE: Megatron MLP (models/mlp-megatron) with one all-reduce too
many: the output of g (already the full sum on every rank) is all-reduced
again, which multiplies it by the TP size.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/extra-allreduce/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (4, False)]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 32


def mlp(x, w1, b1, w2, b2):
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def mlp_tp(x, w1, b1, w2, b2):
    n = len(x)
    xs = comm.copy_to_tp(x)
    partial = [F.linear(F.gelu(F.linear(xs[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    y = comm.reduce_from_tp(partial)
    y = comm.all_reduce(y)                        # BUG: y is already reduced
    return {"y": [y[r] + b2[r] for r in range(n)]}


def export(degree):
    return Export(
        name=f"extra-allreduce-tp{degree}",
        description="Megatron MLP. BUG ON PURPOSE: the already-reduced output of fc2 "
                    "is all-reduced a second time (scaled by the TP size).",
        spec=mlp, impl=mlp_tp, degree=degree, expect_mismatch=True,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Replicate()),
            "w1": Param((FFN, HIDDEN), Shard(0)),
            "b1": Param((FFN,), Shard(0)),
            "w2": Param((HIDDEN, FFN), Shard(1)),
            "b2": Param((HIDDEN,), Replicate()),
        },
        outputs={"y": Replicate()},
    )
