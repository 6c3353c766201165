"""A rotary query projection, q = rope(linear(x, wq)), run sequence-parallel
(the tokens split over the ranks, as Llama's layers see them under
sequence or context parallelism), and ONE planted bug: the rotary position
offset forgotten.

x is [T, D] (one sequence, tokens along dim 0).  The rotary tables cos, sin [T, hd] are inputs for positions 0..T-1, whole
on every rank (as LlamaModel passes them to every layer).  Rank r holds
tokens r*T/n .. (r+1)*T/n - 1 and must rotate them with rows r*T/n.. of the
tables.  The buggy code takes rows 0..T/n-1 on every rank (positions
restart at 0 on each rank): the shapes agree, the first rank is right, the
others rotate by the wrong angles.  (A Llama-3 block with SP is not
exported here: models/llama3-block does not refine yet, so this small
model isolates the rotary step.)

Variants: bug (cos[:t], sin[:t]), fixed (cos[r*t:(r+1)*t], ...).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/rope-sp-offset/model.py
"""


import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

SEQ, D_MODEL, HEAD_DIM = 8, 8, 8


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


def proj(x, cos, sin, wq):
    return {"q": rope(F.linear(x, wq), cos, sin)}


def _proj_sp(bug, x, cos, sin, wq):
    n = len(x)
    t = x[0].shape[0]
    out = []
    for r in range(n):
        lo = 0 if bug else r * t          # BUG: the rank's position offset r*t forgotten
        out.append(rope(F.linear(x[r], wq[r]), cos[r][lo:lo + t], sin[r][lo:lo + t]))
    return {"q": out}


def proj_sp_bug(**kw):
    return _proj_sp(True, **kw)


def proj_sp_fixed(**kw):
    return _proj_sp(False, **kw)


def rotary_table(shape, gen, fn):
    t, hd = shape
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.outer(torch.arange(t, dtype=torch.float32), inv)
    return fn(torch.cat((ang, ang), dim=-1))


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"rope-sp-offset-sp{degree}" + ("" if bug else "-fixed"),
        description="Rotary query projection, sequence parallel. " + (
            "BUG ON PURPOSE: every rank rotates its tokens with positions 0..T/n-1."
            if bug else "The fixed twin: rank r uses positions r*T/n.."),
        spec=proj, impl=proj_sp_bug if bug else proj_sp_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((SEQ, D_MODEL), Shard(0)),
            "cos": Input((SEQ, HEAD_DIM), Replicate(), init=lambda s, g: rotary_table(s, g, torch.cos)),
            "sin": Input((SEQ, HEAD_DIM), Replicate(), init=lambda s, g: rotary_table(s, g, torch.sin)),
            "wq": Param((HEAD_DIM, D_MODEL), Replicate(), scale=0.3),
        },
        outputs={"q": Shard(0)},
    )
