"""A Llama-3 decoder layer (hand-written RMSNorm and rotary embedding,
grouped-query causal attention, SwiGLU MLP, residuals) as Hugging Face's
LlamaDecoderLayer computes it, and its Megatron-LM tensor-parallel version.

Tensor parallelism: q_proj, k_proj, v_proj, gate_proj and up_proj are
column-parallel (nn.Linear weights [out, in] split along the output
features: each rank holds n_heads/n query heads and n_kv_heads/n key/value
heads, so the grouping of queries onto key/value heads stays on one rank);
o_proj and down_proj are row-parallel (split along the input features),
their partial sums combined by g (all-reduce forward).  The normalized
activations enter through f (all-reduce backward).  The rotary tables cos
and sin are inputs, as LlamaModel passes them to every layer.

Sizes: 8 query heads and 4 key/value heads of dimension 4 (hidden 32, MLP
64) at degrees 2 and 4; at degree 8, where 4 key/value heads do not split,
16 query heads and 8 key/value heads (hidden 64, MLP 128).  Variants
"2layers" and "4layers" stack that many decoder layers (each with its own
weights, named l0_wq, l1_wq, ...; the rotary tables are shared), for
measuring how the check time grows with depth.

Export: /usr/bin/python3 tools/shardcheck-export models/llama3-block/model.py
"""

import math

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (2, True), (4, False), (4, True), (8, False),
           (2, False, "2layers"), (2, False, "4layers")]

BATCH, SEQ, HEAD_DIM = 2, 8, 4
EPS, THETA = 1e-5, 500000.0
# per layer, in this order: the names of its weights
WEIGHTS = ["attn_norm_w", "wq", "wk", "wv", "wo", "mlp_norm_w", "w_gate", "w_up", "w_down"]


def config(degree):
    """(query heads, key/value heads, hidden, MLP) for a degree."""
    n_kv = 8 if degree == 8 else 4
    return 2 * n_kv, n_kv, 2 * n_kv * HEAD_DIM, 4 * n_kv * HEAD_DIM


def rms_norm(x, weight):
    """LlamaRMSNorm.forward."""
    var = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(var + EPS))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos, sin = cos.unsqueeze(0).unsqueeze(0), sin.unsqueeze(0).unsqueeze(0)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def repeat_kv(x, n_rep):
    b, kv, t, hd = x.shape
    if n_rep == 1:
        return x
    x = x[:, :, None, :, :].expand(b, kv, n_rep, t, hd)
    return x.reshape(b, kv * n_rep, t, hd)


def attention(x, wq, wk, wv, cos, sin, n_heads, n_kv):
    """Grouped-query causal attention before o_proj: [B, T, n_heads*hd]."""
    B, T, _ = x.shape
    q = F.linear(x, wq).view(B, T, n_heads, HEAD_DIM).transpose(1, 2)
    k = F.linear(x, wk).view(B, T, n_kv, HEAD_DIM).transpose(1, 2)
    v = F.linear(x, wv).view(B, T, n_kv, HEAD_DIM).transpose(1, 2)
    q, k = apply_rotary(q, k, cos, sin)
    k, v = repeat_kv(k, n_heads // n_kv), repeat_kv(v, n_heads // n_kv)
    scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HEAD_DIM)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    probs = F.softmax(scores, dim=-1)
    out = torch.matmul(probs, v).transpose(1, 2).contiguous()
    return out.reshape(B, T, n_heads * HEAD_DIM)


def decoder(x, cos, sin, attn_norm_w, wq, wk, wv, wo, mlp_norm_w, w_gate, w_up, w_down,
            n_heads, n_kv):
    """One sequential Llama-3 decoder layer."""
    h = rms_norm(x, attn_norm_w)
    x = x + F.linear(attention(h, wq, wk, wv, cos, sin, n_heads, n_kv), wo)
    h = rms_norm(x, mlp_norm_w)
    return x + F.linear(F.silu(F.linear(h, w_gate)) * F.linear(h, w_up), w_down)


def decoder_tp(x, cos, sin, attn_norm_w, wq, wk, wv, wo, mlp_norm_w, w_gate, w_up, w_down,
               n_heads, n_kv):
    """One decoder layer, Megatron tensor parallel (per-rank lists)."""
    n = len(x)
    h = comm.copy_to_tp([rms_norm(x[r], attn_norm_w[r]) for r in range(n)])
    part = [F.linear(attention(h[r], wq[r], wk[r], wv[r], cos[r], sin[r],
                               n_heads // n, n_kv // n), wo[r]) for r in range(n)]
    a = comm.reduce_from_tp(part)
    x = [x[r] + a[r] for r in range(n)]
    h = comm.copy_to_tp([rms_norm(x[r], mlp_norm_w[r]) for r in range(n)])
    part = [F.linear(F.silu(F.linear(h[r], w_gate[r])) * F.linear(h[r], w_up[r]), w_down[r])
            for r in range(n)]
    m = comm.reduce_from_tp(part)
    return [x[r] + m[r] for r in range(n)]


def weight_names(layers):
    """Per layer, its weights' input names (unprefixed for one layer)."""
    if layers == 1:
        return [WEIGHTS]
    return [[f"l{i}_{w}" for w in WEIGHTS] for i in range(layers)]


def stack(layer_fn, layers, n_heads, n_kv):
    """The model of LAYERS decoder layers applied in turn."""
    names = weight_names(layers)

    def model(x, cos, sin, **weights):
        for ws in names:
            x = layer_fn(x, cos, sin, *(weights[w] for w in ws), n_heads=n_heads, n_kv=n_kv)
        return {"y": x}
    return model


def rotary_table(shape, gen, fn):
    """cos or sin of LlamaRotaryEmbedding for positions 0..T-1."""
    T, hd = shape
    inv_freq = 1.0 / (THETA ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    return fn(torch.cat((freqs, freqs), dim=-1)).float()


def export(degree, variant="1layer"):
    layers = {"1layer": 1, "2layers": 2, "4layers": 4}.get(variant)
    if layers is None:
        raise ValueError(f"unknown variant {variant!r}")
    n_heads, n_kv, D, ffn = config(degree)
    if n_kv % degree:
        raise ValueError(f"{n_kv} key/value heads do not split over {degree} ranks")
    hd = HEAD_DIM
    norm_init = lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)  # noqa: E731
    shapes = {
        "attn_norm_w": Param((D,), Replicate(), init=norm_init),
        "wq": Param((n_heads * hd, D), Shard(0), scale=0.2),
        "wk": Param((n_kv * hd, D), Shard(0), scale=0.2),
        "wv": Param((n_kv * hd, D), Shard(0), scale=0.2),
        "wo": Param((D, n_heads * hd), Shard(1), scale=0.2),
        "mlp_norm_w": Param((D,), Replicate(), init=norm_init),
        "w_gate": Param((ffn, D), Shard(0), scale=0.2),
        "w_up": Param((ffn, D), Shard(0), scale=0.2),
        "w_down": Param((D, ffn), Shard(1), scale=0.2),
    }
    inputs = {
        "x": Input((BATCH, SEQ, D), Replicate()),
        "cos": Input((SEQ, hd), Replicate(), init=lambda s, g: rotary_table(s, g, torch.cos)),
        "sin": Input((SEQ, hd), Replicate(), init=lambda s, g: rotary_table(s, g, torch.sin)),
    }
    for ws in weight_names(layers):
        inputs.update({name: shapes[w] for name, w in zip(ws, WEIGHTS)})
    depth = "" if layers == 1 else f"-{layers}layers"
    return Export(
        name=f"llama3-block-tp{degree}{depth}",
        description=(f"Llama-3 decoder layer{'s x%d' % layers if layers > 1 else ''} "
                     f"(RMSNorm, RoPE, grouped-query attention, SwiGLU), Megatron tensor "
                     f"parallel."),
        spec=stack(decoder, layers, n_heads, n_kv),
        impl=stack(decoder_tp, layers, n_heads, n_kv), degree=degree,
        inputs=inputs,
        outputs={"y": Replicate()},
    )
