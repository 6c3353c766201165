"""A pre-LN residual MLP block, y = x + fc2(gelu(fc1(layer_norm(x)))), with
Megatron tensor + sequence parallelism, and ONE planted bug.

Sequence parallelism: x is split along the sequence (dim 1); the layer norm
runs on T/n tokens per rank; gather_from_sp (all-gather along the sequence,
backward reduce-scatter) enters the column-parallel fc1, and
reduce_scatter_to_sp (backward all-gather) leaves the row-parallel fc2.  The
layer-norm weight and bias, and fc2's bias, see only T/n tokens on each
rank, so their gradients must be all-reduced (Megatron's all-reduce of
sequence-parallel gradients; here comm.copy_to_tp on the parameter).

Variants:
  bug    the BUG: that gradient all-reduce is missing (the forward is
         right; grad_ln_w, grad_ln_b, grad_b2 are partial sums per rank).
  fixed  the fix: copy_to_tp on ln_w, ln_b, b2.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/sp-ln-nogradsync/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, True, "bug"), (2, True, "fixed")]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 16
EPS = 1e-5


def block(x, ln_w, ln_b, w1, b1, w2, b2):
    h = F.layer_norm(x, (HIDDEN,), ln_w, ln_b, EPS)
    return {"y": x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)}


def _block_sp(sync, x, ln_w, ln_b, w1, b1, w2, b2):
    n = len(x)
    if sync:
        ln_w, ln_b, b2 = comm.copy_to_tp(ln_w), comm.copy_to_tp(ln_b), comm.copy_to_tp(b2)
    # BUG (variant "bug"): the three copy_to_tp above are missing
    h = comm.gather_from_sp([F.layer_norm(x[r], (HIDDEN,), ln_w[r], ln_b[r], EPS)
                             for r in range(n)], dim=1)
    part = [F.linear(F.gelu(F.linear(h[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    m = comm.reduce_scatter_to_sp(part, dim=1)
    return {"y": [x[r] + m[r] + b2[r] for r in range(n)]}


def block_sp_bug(**kw):
    return _block_sp(False, **kw)


def block_sp_fixed(**kw):
    return _block_sp(True, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"sp-ln-nogradsync-tp{degree}" + ("" if bug else "-fixed"),
        description="Pre-LN residual MLP, Megatron TP+SP. " + (
            "BUG ON PURPOSE: the gradients of the layer norm and of fc2's bias are "
            "not all-reduced over the sequence-parallel ranks." if bug else
            "The fixed twin of the bug: sequence-parallel gradients all-reduced."),
        spec=block, impl=block_sp_bug if bug else block_sp_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Shard(1)),
            "ln_w": Param((HIDDEN,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
            "ln_b": Param((HIDDEN,), Replicate(), scale=0.1),
            "w1": Param((FFN, HIDDEN), Shard(0), scale=0.3),
            "b1": Param((FFN,), Shard(0), scale=0.1),
            "w2": Param((HIDDEN, FFN), Shard(1), scale=0.3),
            "b2": Param((HIDDEN,), Replicate(), scale=0.1),
        },
        outputs={"y": Shard(1)},
    )
