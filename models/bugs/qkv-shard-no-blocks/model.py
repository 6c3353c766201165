"""The GPT-2 block of models/gpt2-block, Megatron tensor parallel, and ONE
planted bug: the fused q|k|v weight of c_attn sharded as one matrix.

c_attn's weight [D, 3D] is the concatenation q|k|v.  Column parallelism must
give each rank its slice of q, of k and of v (Shard(1, blocks=3)), and the
rank's code splits its [D, 3D/n] slice into q, k, v of D/n columns each.
The buggy plan shards the fused weight as one matrix (Shard(1)): rank 0 gets
columns 0:3D/n, i.e. for n = 2 all of q's first half... in fact q[:, 0:D]
and k[:, 0:D/2]; the shapes are those of the correct plan, the code runs
unchanged, and the ranks' "q", "k", "v" are the wrong columns.  The same for
the bias c_attn.bias (Shard(0) where Shard(0, blocks=3) belongs).

Variants: bug (Shard without blocks), fixed (blocks=3).  The model code is
that of models/gpt2-block (variant tp); only the placements differ.

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/qkv-shard-no-blocks/model.py
"""

import math

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

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


def block(x, ln1_w, ln1_b, attn_w, attn_b, attn_proj_w, attn_proj_b,
          ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b):
    """The sequential GPT-2 block."""
    D = x.shape[-1]
    h = F.layer_norm(x, (D,), ln1_w, ln1_b, EPS)
    q, k, v = conv1d(h, attn_w, attn_b).split(D, dim=2)
    a = causal_attention(q, k, v, N_HEAD)
    x = x + conv1d(a, attn_proj_w, attn_proj_b)
    h = F.layer_norm(x, (D,), ln2_w, ln2_b, EPS)
    m = F.gelu(conv1d(h, fc_w, fc_b), approximate="tanh")
    return {"y": x + conv1d(m, mlp_proj_w, mlp_proj_b)}


def _matmul(x, w):
    return torch.mm(x.view(-1, x.size(-1)), w).view(x.size()[:-1] + (w.size(-1),))


def _block_tp(sp, sync, x, ln1_w, ln1_b, attn_w, attn_b, attn_proj_w, attn_proj_b,
              ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b):
    n = len(x)
    D = x[0].shape[-1]
    heads = N_HEAD // n
    if sp and sync:   # parameters used on T/n tokens: gradients all-reduced
        ln1_w, ln1_b, ln2_w, ln2_b = (comm.copy_to_tp(p) for p in (ln1_w, ln1_b, ln2_w, ln2_b))
        attn_proj_b, mlp_proj_b = comm.copy_to_tp(attn_proj_b), comm.copy_to_tp(mlp_proj_b)

    def enter(h):        # into column-parallel layers
        return comm.gather_from_sp(h, dim=1) if sp else comm.copy_to_tp(h)

    def leave(p):        # out of row-parallel layers
        return comm.reduce_scatter_to_sp(p, dim=1) if sp else comm.reduce_from_tp(p)

    h = enter([F.layer_norm(x[r], (D,), ln1_w[r], ln1_b[r], EPS) for r in range(n)])
    part = []
    for r in range(n):
        q, k, v = conv1d(h[r], attn_w[r], attn_b[r]).split(D // n, dim=2)
        part.append(_matmul(causal_attention(q, k, v, heads), attn_proj_w[r]))
    a = leave(part)
    x = [x[r] + a[r] + attn_proj_b[r] for r in range(n)]
    h = enter([F.layer_norm(x[r], (D,), ln2_w[r], ln2_b[r], EPS) for r in range(n)])
    part = [_matmul(F.gelu(conv1d(h[r], fc_w[r], fc_b[r]), approximate="tanh"),
                    mlp_proj_w[r]) for r in range(n)]
    m = leave(part)
    return {"y": [x[r] + m[r] + mlp_proj_b[r] for r in range(n)]}


def block_tp(**kw):
    return _block_tp(False, True, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    D = D_MODEL
    qkv_w = Shard(1) if bug else Shard(1, blocks=3)    # BUG: blocks=3 forgotten
    qkv_b = Shard(0) if bug else Shard(0, blocks=3)    # BUG: blocks=3 forgotten
    return Export(
        name=f"qkv-shard-no-blocks-tp{degree}" + ("" if bug else "-fixed"),
        description="GPT-2 block, Megatron tensor parallel. " + (
            "BUG ON PURPOSE: the fused q|k|v weight and bias are sharded as one "
            "matrix, not block by block." if bug else
            "The fixed twin: q, k and v sharded block by block."),
        spec=block, impl=block_tp, degree=degree, expect_mismatch=bug,
        inputs={
            "x": Input((BATCH, SEQ, D), Replicate()),
            "ln1_w": Param((D,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
            "ln1_b": Param((D,), Replicate(), scale=0.1),
            "attn_w": Param((D, 3 * D), qkv_w, scale=0.2),
            "attn_b": Param((3 * D,), qkv_b, scale=0.1),
            "attn_proj_w": Param((D, D), Shard(0), scale=0.2),
            "attn_proj_b": Param((D,), Replicate(), scale=0.1),
            "ln2_w": Param((D,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
            "ln2_b": Param((D,), Replicate(), scale=0.1),
            "fc_w": Param((D, 4 * D), Shard(1), scale=0.2),
            "fc_b": Param((4 * D,), Shard(0), scale=0.1),
            "mlp_proj_w": Param((4 * D, D), Shard(0), scale=0.2),
            "mlp_proj_b": Param((D,), Replicate(), scale=0.1),
        },
        outputs={"y": Replicate()},
    )
