"""BUG ON PURPOSE: Megatron MLP (models/mlp-megatron) whose row-parallel
partial sums are combined with an all-reduce *average* (op="avg") where the
sum belongs: the output is divided by the TP size.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/avg-scaling/model.py
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
    y = comm.all_reduce(partial, op="avg")        # BUG: op="sum" (partial sums add up)
    return {"y": [y[r] + b2[r] for r in range(n)]}


def export(degree):
    return Export(
        name=f"avg-scaling-tp{degree}",
        description="Megatron MLP. BUG ON PURPOSE: the partial sums of fc2 are "
                    "averaged (divided by the TP size) instead of summed.",
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
