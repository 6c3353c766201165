"""A pre-LN residual MLP block, y = x + fc2(gelu(fc1(layer_norm(x)))), with
Megatron tensor + sequence parallelism (as models/bugs/sp-ln-nogradsync,
fixed variant), and ONE planted bug: the wrong collective after the
row-parallel fc2.

Sequence parallelism needs a reduce-scatter there (sum the partial outputs
of fc2 and hand each rank its T/n tokens).  The buggy code all-gathers the
partial outputs along the sequence instead and, to get back the shape that
the residual needs, keeps "its" T/n tokens of the gathered tensor: rank r
ends up with tokens r*T/n.. of rank 0's partial sum, with nothing added.

Variants: bug (the all-gather), fixed (comm.reduce_scatter_to_sp).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/sp-allgather-for-reducescatter/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 16
EPS = 1e-5


def block(x, ln_w, ln_b, w1, b1, w2, b2):
    h = F.layer_norm(x, (HIDDEN,), ln_w, ln_b, EPS)
    return {"y": x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)}


def _block_sp(bug, x, ln_w, ln_b, w1, b1, w2, b2):
    n = len(x)
    t = x[0].shape[1]
    ln_w, ln_b, b2 = comm.copy_to_tp(ln_w), comm.copy_to_tp(ln_b), comm.copy_to_tp(b2)
    h = comm.gather_from_sp([F.layer_norm(x[r], (HIDDEN,), ln_w[r], ln_b[r], EPS)
                             for r in range(n)], dim=1)
    part = [F.linear(F.gelu(F.linear(h[r], w1[r], b1[r])), w2[r]) for r in range(n)]
    if bug:   # BUG: all-gather where the reduce-scatter belongs, then "my" tokens
        g = comm.gather_from_sp(part, dim=1)
        m = [g[r].narrow(1, r * t, t) for r in range(n)]
    else:
        m = comm.reduce_scatter_to_sp(part, dim=1)
    return {"y": [x[r] + m[r] + b2[r] for r in range(n)]}


def block_sp_bug(**kw):
    return _block_sp(True, **kw)


def block_sp_fixed(**kw):
    return _block_sp(False, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"sp-allgather-for-reducescatter-tp{degree}" + ("" if bug else "-fixed"),
        description="Pre-LN residual MLP, Megatron TP+SP. " + (
            "BUG ON PURPOSE: fc2's partial outputs are all-gathered along the sequence "
            "(and sliced) where a reduce-scatter belongs." if bug else
            "The fixed twin: reduce-scatter after fc2."),
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
