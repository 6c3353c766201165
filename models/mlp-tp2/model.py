"""A two-layer MLP, y = gelu(x @ w1) @ w2, with Megatron-LM tensor
parallelism on two ranks: fc1 column-parallel (w1 split along its output
columns), fc2 row-parallel (w2 split along its input rows), the partial
products of fc2 summed by an all_reduce.  x is replicated.  Forward only.

This is the bundle the README runs first (models/mlp-tp2/bundle.json,
bundle name "mlp-tp2").  export() takes the batch size so that
models/mlp-tp2-symbolic/gen.py can export the same code at other sizes
and make the batch symbolic.

Export: /usr/bin/python3 tools/shardcheck-export models/mlp-tp2/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Param, Input, Replicate, Shard, comm

BUNDLES = [(2, False)]

BATCH, HIDDEN, FFN = 4, 8, 16


def mlp(x, w1, w2):
    """The sequential model."""
    h = x @ w1
    g = F.gelu(h)
    return {"y": g @ w2}


def mlp_tp(x, w1, w2):
    """Rank r holds x (whole), w1's column block r and w2's row block r."""
    n = len(x)
    p = [F.gelu(x[r] @ w1[r]) @ w2[r] for r in range(n)]   # partial products
    return {"y": comm.all_reduce(p)}                        # summed on every rank


def export(degree=2, batch=BATCH, name="mlp-tp2", filename="bundle.json"):
    return Export(
        name=name, bundle_name=name, filename=filename,
        description="Two-layer MLP y = gelu(x @ w1) @ w2, Megatron-style tensor parallelism "
                    "on 2 ranks: fc1 column-parallel (w1 split along dim 1), fc2 row-parallel "
                    "(w2 split along dim 0), partial sums combined by all_reduce.",
        spec=mlp, impl=mlp_tp, degree=degree,
        inputs={
            "x": Input((batch, HIDDEN), Replicate()),
            "w1": Param((HIDDEN, FFN), Shard(1)),
            "w2": Param((FFN, HIDDEN), Shard(0)),
        },
        outputs={"y": Replicate()},
    )
