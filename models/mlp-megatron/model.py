"""Two-layer GELU MLP with Megatron-LM tensor parallelism.

fc1 is column-parallel (w1 and b1 split along the output features), fc2 is
row-parallel (w2 split along the input features, b2 replicated and added
once after the reduction).  The activation enters through Megatron's f
(identity forward, all-reduce backward) and leaves through g (all-reduce
forward, identity backward).

Export: /usr/bin/python3 tools/shardcheck-export models/mlp-megatron/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (2, True), (4, False), (4, True)]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 32


def mlp(x, w1, b1, w2, b2):
    """The sequential model (weights stored as nn.Linear stores them)."""
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def mlp_tp(x, w1, b1, w2, b2):
    """Every argument is the list of per-rank tensors."""
    n = len(x)
    xs = comm.copy_to_tp(x)                                          # f
    partial = [F.linear(F.gelu(F.linear(xs[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    y = comm.reduce_from_tp(partial)                                 # g
    return {"y": [y[r] + b2[r] for r in range(n)]}


def export(degree):
    return Export(
        name=f"mlp-megatron-tp{degree}",
        description="Two-layer GELU MLP, Megatron column- then row-parallel.",
        spec=mlp, impl=mlp_tp, degree=degree,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Replicate()),
            "w1": Param((FFN, HIDDEN), Shard(0)),
            "b1": Param((FFN,), Shard(0)),
            "w2": Param((HIDDEN, FFN), Shard(1)),
            "b2": Param((HIDDEN,), Replicate()),
        },
        outputs={"y": Replicate()},
    )
