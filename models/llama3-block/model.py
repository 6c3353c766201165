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

Export: /usr/bin/python3 tools/shardcheck-export models/llama3-block/model.py
"""

import math

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

BUNDLES = [(2, False), (2, True), (4, False), (4, True)]

BATCH, SEQ, D_MODEL, N_HEADS, N_KV_HEADS, FFN = 2, 8, 32, 8, 4, 64
HEAD_DIM = D_MODEL // N_HEADS
EPS, THETA = 1e-5, 500000.0


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


def layer(x, cos, sin, attn_norm_w, wq, wk, wv, wo, mlp_norm_w, w_gate, w_up, w_down):
    """The sequential Llama-3 decoder layer."""
    h = rms_norm(x, attn_norm_w)
    x = x + F.linear(attention(h, wq, wk, wv, cos, sin, N_HEADS, N_KV_HEADS), wo)
    h = rms_norm(x, mlp_norm_w)
    return {"y": x + F.linear(F.silu(F.linear(h, w_gate)) * F.linear(h, w_up), w_down)}


def layer_tp(x, cos, sin, attn_norm_w, wq, wk, wv, wo, mlp_norm_w, w_gate, w_up, w_down):
    n = len(x)
    h = comm.copy_to_tp([rms_norm(x[r], attn_norm_w[r]) for r in range(n)])
    part = [F.linear(attention(h[r], wq[r], wk[r], wv[r], cos[r], sin[r],
                               N_HEADS // n, N_KV_HEADS // n), wo[r]) for r in range(n)]
    a = comm.reduce_from_tp(part)
    x = [x[r] + a[r] for r in range(n)]
    h = comm.copy_to_tp([rms_norm(x[r], mlp_norm_w[r]) for r in range(n)])
    part = [F.linear(F.silu(F.linear(h[r], w_gate[r])) * F.linear(h[r], w_up[r]), w_down[r])
            for r in range(n)]
    m = comm.reduce_from_tp(part)
    return {"y": [x[r] + m[r] for r in range(n)]}


def rotary_table(shape, gen, fn):
    """cos or sin of LlamaRotaryEmbedding for positions 0..T-1."""
    T, hd = shape
    inv_freq = 1.0 / (THETA ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    return fn(torch.cat((freqs, freqs), dim=-1)).float()


def export(degree):
    if N_KV_HEADS % degree:
        raise ValueError(f"{N_KV_HEADS} key/value heads do not split over {degree} ranks")
    D, hd = D_MODEL, HEAD_DIM
    norm_init = lambda s, g: 1 + 0.1 * torch.randn(s, generator=g)  # noqa: E731
    return Export(
        name=f"llama3-block-tp{degree}",
        description="Llama-3 decoder layer (RMSNorm, RoPE, grouped-query attention, "
                    "SwiGLU), Megatron tensor parallel.",
        spec=layer, impl=layer_tp, degree=degree,
        inputs={
            "x": Input((BATCH, SEQ, D), Replicate()),
            "cos": Input((SEQ, hd), Replicate(), init=lambda s, g: rotary_table(s, g, torch.cos)),
            "sin": Input((SEQ, hd), Replicate(), init=lambda s, g: rotary_table(s, g, torch.sin)),
            "attn_norm_w": Param((D,), Replicate(), init=norm_init),
            "wq": Param((N_HEADS * hd, D), Shard(0), scale=0.2),
            "wk": Param((N_KV_HEADS * hd, D), Shard(0), scale=0.2),
            "wv": Param((N_KV_HEADS * hd, D), Shard(0), scale=0.2),
            "wo": Param((D, N_HEADS * hd), Shard(1), scale=0.2),
            "mlp_norm_w": Param((D,), Replicate(), init=norm_init),
            "w_gate": Param((FFN, D), Shard(0), scale=0.2),
            "w_up": Param((FFN, D), Shard(0), scale=0.2),
            "w_down": Param((D, FFN), Shard(1), scale=0.2),
        },
        outputs={"y": Replicate()},
    )
