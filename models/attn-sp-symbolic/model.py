"""A pre-LN causal self-attention block, y = x + proj(attn(ln(x))), under
Megatron-LM's sequence parallelism, and two variants that hand-roll the
reduce-scatter: one right, one with an off-by-one slice on purpose.

The layers are written as Hugging Face's GPT-2 writes them (Conv1D:
y = addmm(bias, x.view(-1, in), weight); a fused q|k|v weight; the causal
mask by triu + masked_fill(-inf); softmax).  x is [B, S, D]; the ranks
split the sequence S.

Variants (degree n = 2 or 4):
  sp               layer norm on each rank's S/n tokens, all_gather along
                   the sequence, attention with the heads split over the
                   ranks (c_attn column-parallel: Shard(1, blocks=3)), the
                   row-parallel output projection's partial sums
                   reduce-scattered along the sequence, residual and bias on
                   the rank's tokens.
  sp-slice         the same, but the partial sums are all-reduced and each
                   rank slices its own tokens r*S/n : (r+1)*S/n out of the
                   (now whole) sequence: correct.
  sp-slice-offbyone
                   sp-slice with rank 1 slicing S/n - 1 : 2*S/n - 1, one
                   token early: shapes still agree, the values do not.
                   BUG ON PURPOSE.

The concrete bundles (B = 2, S = 8) are exported by shardcheck-export;
gen.py exports the same code at other B and S and makes both symbolic.

Export: /usr/bin/python3 tools/shardcheck-export models/attn-sp-symbolic/model.py
"""

import math

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

VARIANTS = ("sp", "sp-slice", "sp-slice-offbyone")
BUNDLES = [(d, False, v) for v in VARIANTS for d in (2, 4)]

BATCH, SEQ, D_MODEL, N_HEAD = 2, 8, 16, 4
EPS = 1e-5


def conv1d(x, weight, bias):
    """transformers.pytorch_utils.Conv1D.forward."""
    size_out = x.size()[:-1] + (weight.size(-1),)
    x = torch.addmm(bias, x.view(-1, x.size(-1)), weight)
    return x.view(size_out)


def causal_attention(q, k, v, n_head):
    """q, k, v: [B, T, n_head*hd] -> [B, T, n_head*hd]; GPT2Attention._attn."""
    B, T, C = q.shape
    hd = C // n_head

    def heads(t):
        return t.view(B, T, n_head, hd).permute(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    att = att.masked_fill(mask, float("-inf"))
    att = F.softmax(att, dim=-1)
    y = torch.matmul(att, v)
    return y.permute(0, 2, 1, 3).contiguous().view(B, T, C)


def block(x, ln_w, ln_b, attn_w, attn_b, proj_w, proj_b):
    """The sequential block."""
    D = x.shape[-1]
    h = F.layer_norm(x, (D,), ln_w, ln_b, EPS)
    q, k, v = conv1d(h, attn_w, attn_b).split(D, dim=2)
    return {"y": x + conv1d(causal_attention(q, k, v, N_HEAD), proj_w, proj_b)}


def _matmul(x, w):
    return torch.mm(x.view(-1, x.size(-1)), w).view(x.size()[:-1] + (w.size(-1),))


def _block_sp(variant, x, ln_w, ln_b, attn_w, attn_b, proj_w, proj_b):
    n = len(x)
    D = x[0].shape[-1]
    h = comm.gather_from_sp([F.layer_norm(x[r], (D,), ln_w[r], ln_b[r], EPS)
                             for r in range(n)], dim=1)
    part = []
    for r in range(n):
        q, k, v = conv1d(h[r], attn_w[r], attn_b[r]).split(D // n, dim=2)
        part.append(_matmul(causal_attention(q, k, v, N_HEAD // n), proj_w[r]))
    if variant == "sp":
        a = comm.reduce_scatter_to_sp(part, dim=1)
    else:
        whole = comm.all_reduce(part)
        chunk = whole[0].shape[1] // n
        a = []
        for r in range(n):
            start = r * chunk
            if variant == "sp-slice-offbyone" and r == 1:
                start -= 1                       # the bug: one token early
            a.append(whole[r][:, start:start + chunk])
    return {"y": [x[r] + a[r] + proj_b[r] for r in range(n)]}


def _impl(variant):
    def impl(**kw):
        return _block_sp(variant, **kw)
    return impl


def export(degree, variant="sp", batch=BATCH, seq=SEQ, name=None):
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")
    D = D_MODEL
    suffix = variant[2:]                         # "", "-slice", "-slice-offbyone"
    bug = variant == "sp-slice-offbyone"
    return Export(
        name=name or f"attn-sp{degree}{suffix}",
        description=("Pre-LN causal self-attention block (GPT-2 layers), Megatron sequence "
                     "parallelism: layer norm on S/n tokens per rank, all_gather along the "
                     "sequence, heads split over the ranks, "
                     + ("reduce_scatter after the output projection."
                        if variant == "sp" else
                        "all_reduce after the output projection and each rank slicing its "
                        "tokens out of the whole sequence.")
                     + (" BUG ON PURPOSE: rank 1 slices one token early (start S/n - 1)."
                        if bug else "")),
        spec=block, impl=_impl(variant), degree=degree, expect_mismatch=bug,
        inputs={
            "x": Input((batch, seq, D), Shard(1)),
            "ln_w": Param((D,), Replicate(),
                          init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
            "ln_b": Param((D,), Replicate(), scale=0.1),
            "attn_w": Param((D, 3 * D), Shard(1, blocks=3), scale=0.2),
            "attn_b": Param((3 * D,), Shard(0, blocks=3), scale=0.1),
            "proj_w": Param((D, D), Shard(0), scale=0.2),
            "proj_b": Param((D,), Replicate(), scale=0.1),
        },
        outputs={"y": Shard(1)},
    )
