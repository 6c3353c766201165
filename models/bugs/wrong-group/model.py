"""BUG ON PURPOSE: Megatron MLP (models/mlp-megatron) at TP 4 whose
row-parallel all-reduce runs over the subgroup {0, 1, 2}, omitting rank 3
(a process group built with range(n - 1)).  Ranks 0-2 get p0+p1+p2, rank 3
keeps its own partial sum.

The collectives module has no group argument: a collective on a list of k
per-rank tensors is a collective over k ranks, and its outputs are labelled
ranks 0..k-1.  A subgroup is therefore expressible only as a prefix of the
ranks, which is what this bug uses.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/wrong-group/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(4, False)]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 32


def mlp(x, w1, b1, w2, b2):
    h = F.gelu(F.linear(x, w1, b1))
    return {"y": F.linear(h, w2, b2)}


def mlp_tp(x, w1, b1, w2, b2):
    n = len(x)
    xs = comm.copy_to_tp(x)
    partial = [F.linear(F.gelu(F.linear(xs[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    y = comm.reduce_from_tp(partial[:n - 1]) + [partial[n - 1]]   # BUG: group omits rank n-1
    return {"y": [y[r] + b2[r] for r in range(n)]}


def export(degree):
    return Export(
        name=f"wrong-group-tp{degree}",
        description="Megatron MLP. BUG ON PURPOSE: the all-reduce of fc2's partial sums "
                    "runs over ranks 0..n-2 only; the last rank keeps its partial sum.",
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
