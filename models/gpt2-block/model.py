"""A GPT-2 transformer block (pre-LN, causal self-attention, GELU MLP,
residuals), written as Hugging Face's GPT2Block computes it (Conv1D layers:
weight [in, out], y = addmm(bias, x.view(-1, in), weight)), and its
Megatron-LM tensor-parallel versions.

Variants:
  tp     tensor parallelism.  c_attn is column-parallel; its weight is one
         fused q|k|v matrix, so each rank holds its slice of q, of k and of
         v (Shard(1, blocks=3)) and runs heads/n heads.  attn c_proj and
         mlp c_proj are row-parallel (weights split along the input
         features), their biases added once after the all-reduce (g).
         Activations enter column-parallel layers through f.
  tp-sp  tensor + sequence parallelism.  Outside the attention and MLP
         the activations are split along the sequence (layer norms and
         residuals run on T/n tokens per rank); all-gather along the
         sequence before the column-parallel layers, reduce-scatter after
         the row-parallel ones.  Layer-norm weights and the row-parallel
         biases now see only T/n tokens per rank, so their gradients are
         all-reduced (Megatron's allreduce of sequence-parallel grads;
         here comm.copy_to_tp on the parameter, whose backward is that
         all-reduce).
  tp-sp-nogradsync
         tp-sp without that all-reduce: a bug on purpose.  The forward is
         right; the layer-norm and bias gradients are partial sums on each
         rank where the user (and the bundle's expectations) need the whole
         gradient on every rank.  Exported only forward+backward.

Sizes: hidden 16, 4 heads of dimension 4, MLP 64 at degrees 2 and 4; at
degree 8, where 4 heads do not split, 8 heads of dimension 2.  Variants
"tp-2layers" and "tp-4layers" stack that many tensor-parallel blocks (each
with its own weights, named l0_attn_w, l1_attn_w, ...), forward only, for
measuring how the check time grows with depth.

Export: /usr/bin/python3 tools/shardcheck-export models/gpt2-block/model.py
"""

import math

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(d, b, v) for v in ("tp", "tp-sp") for d in (2, 4) for b in (False, True)] + \
    [(2, True, "tp-sp-nogradsync"), (8, False, "tp"), (8, False, "tp-sp"),
     (2, False, "tp-2layers"), (2, False, "tp-4layers")]

BATCH, SEQ, D_MODEL = 2, 8, 16
EPS = 1e-5
# per layer, in this order: the names of its weights
WEIGHTS = ["ln1_w", "ln1_b", "attn_w", "attn_b", "attn_proj_w", "attn_proj_b",
           "ln2_w", "ln2_b", "fc_w", "fc_b", "mlp_proj_w", "mlp_proj_b"]


def n_heads(degree):
    """4 heads, or 8 at degree 8 (each rank runs at least one head)."""
    return 8 if degree == 8 else 4


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


def block_x(x, ln1_w, ln1_b, attn_w, attn_b, attn_proj_w, attn_proj_b,
            ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b, n_head=4):
    """The sequential GPT-2 block, as a tensor."""
    D = x.shape[-1]
    h = F.layer_norm(x, (D,), ln1_w, ln1_b, EPS)
    q, k, v = conv1d(h, attn_w, attn_b).split(D, dim=2)
    a = causal_attention(q, k, v, n_head)
    x = x + conv1d(a, attn_proj_w, attn_proj_b)
    h = F.layer_norm(x, (D,), ln2_w, ln2_b, EPS)
    m = F.gelu(conv1d(h, fc_w, fc_b), approximate="tanh")
    return x + conv1d(m, mlp_proj_w, mlp_proj_b)


def block(n_head=4, **kw):
    """The sequential GPT-2 block."""
    return {"y": block_x(n_head=n_head, **kw)}


def _matmul(x, w):
    return torch.mm(x.view(-1, x.size(-1)), w).view(x.size()[:-1] + (w.size(-1),))


def _block_tp(sp, sync, x, ln1_w, ln1_b, attn_w, attn_b, attn_proj_w, attn_proj_b,
              ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b, n_head=4):
    n = len(x)
    D = x[0].shape[-1]
    heads = n_head // n
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


def block_tp_sp(**kw):
    return _block_tp(True, True, **kw)


def block_tp_sp_nogradsync(**kw):
    return _block_tp(True, False, **kw)


def weight_names(layers):
    """Per layer, its weights' input names (unprefixed for one layer)."""
    if layers == 1:
        return [WEIGHTS]
    return [[f"l{i}_{w}" for w in WEIGHTS] for i in range(layers)]


def stacked(block_fn, layers, n_head):
    """LAYERS blocks applied in turn; block_fn returns {"y": ...}."""
    names = weight_names(layers)

    def model(x, **weights):
        for ws in names:
            x = block_fn(x=x, n_head=n_head, **{w: weights[nm] for nm, w in zip(ws, WEIGHTS)})["y"]
        return {"y": x}
    return model


def export(degree, variant="tp"):
    impls = {"tp": block_tp, "tp-sp": block_tp_sp,
             "tp-sp-nogradsync": block_tp_sp_nogradsync}
    base, _, depth = variant.rpartition("-") if variant.endswith("layers") else (variant, "", "")
    layers = {"": 1, "2layers": 2, "4layers": 4}.get(depth)
    if base not in impls or layers is None:
        raise ValueError(f"unknown variant {variant!r}")
    sp = base != "tp"
    suffix = {"tp": "", "tp-sp": "-sp", "tp-sp-nogradsync": "-sp-nogradsync"}[base]
    suffix += f"-{layers}layers" if layers > 1 else ""
    D, act = D_MODEL, Shard(1) if sp else Replicate()
    heads = n_heads(degree)
    weights = {
        "ln1_w": Param((D,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
        "ln1_b": Param((D,), Replicate(), scale=0.1),
        "attn_w": Param((D, 3 * D), Shard(1, blocks=3), scale=0.2),
        "attn_b": Param((3 * D,), Shard(0, blocks=3), scale=0.1),
        "attn_proj_w": Param((D, D), Shard(0), scale=0.2),
        "attn_proj_b": Param((D,), Replicate(), scale=0.1),
        "ln2_w": Param((D,), Replicate(), init=lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)),
        "ln2_b": Param((D,), Replicate(), scale=0.1),
        "fc_w": Param((D, 4 * D), Shard(1), scale=0.2),
        "fc_b": Param((4 * D,), Shard(0), scale=0.1),
        "mlp_proj_w": Param((4 * D, D), Shard(0), scale=0.2),
        "mlp_proj_b": Param((D,), Replicate(), scale=0.1),
    }
    inputs = {"x": Input((BATCH, SEQ, D), act)}
    for ws in weight_names(layers):
        inputs.update({nm: weights[w] for nm, w in zip(ws, WEIGHTS)})
    return Export(
        name=f"gpt2-block-tp{degree}{suffix}",
        description=("GPT-2 block" + (f"s x{layers}" if layers > 1 else "")
                     + " (layer norm, causal attention, GELU MLP, residual), "
                     + ("Megatron tensor + sequence parallel." if sp
                        else "Megatron tensor parallel.")
                     + (" BUG ON PURPOSE: the gradients of the layer norms and of the "
                        "row-parallel biases are not all-reduced." if base.endswith("sync")
                        else "")),
        spec=stacked(block, layers, heads), impl=stacked(impls[base], layers, heads),
        degree=degree, expect_mismatch=base == "tp-sp-nogradsync",
        inputs=inputs,
        outputs={"y": act},
    )
