"""Online softmax: attention and cross entropy over a dim split across
ranks, the parts merged by log-sum-exp rescaling (lemmas/online-softmax.lemma).

Split-KV attention (flash-decoding; one step of ring attention): the keys
and values are split along the sequence (dim 2), the queries replicated.
Rank r computes its block's softmax(q k_r^T) v_r and the block's
log-sum-exp lse_r; the ranks merge with the global lse:
  o = sum_r exp(lse_r - lse) * o_r.
  style "lse":   lse = logsumexp(all_gather(lse_r, dim=-1), -1)
  style "max":   m = all_reduce(lse_r, max); lse = m + log(all_reduce(exp(lse_r - m)))
  style "ring":  two blocks, merged by the online update of ring attention
                 (running max and rescaled running sum), the peer's block
                 received by an all_gather of k and v (models/ring-attention
                 writes ring attention in full, the sequence of q, k and v
                 split, in two styles).
  The merges of any number of parts in any order, lse at 6 and max at 3,
  4 and 6, prove by lemmas/online-softmax-merge.lemma ("max" at 6 once
  class-elementwise.lemma's ew1_cat folds a cat of f's parts only where
  the cat of the arguments exists).
  style "*-bug": BUG ON PURPOSE (lse-bug, max-bug): each rank rescales by exp(lse - lse_r)
                 (inverted) -- must fail.

Vocabulary-parallel cross entropy with an all_gather of the per-rank
maxima (instead of Megatron's all_reduce(max)), then the local exp-sum
rescaled by the global max:
  style "ce":     m = amax(all_gather(amax(x_r, -1)[None]), 0), then
                  Megatron's shifted exp-sum and target pick
  style "ce-bug": BUG ON PURPOSE: each rank shifts its exponentials by
                  its own maximum, the pick by the global one -- must fail.

Export: /usr/bin/python3 tools/shardcheck-export models/online-softmax/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

B, H, SQ, SKV, HD = 1, 2, 3, 12, 4
N, V = 6, 24

BUNDLES = [(2, False, "lse"), (3, False, "lse"), (6, False, "lse"), (2, False, "max"), (3, False, "max"),
           (4, False, "max"), (6, False, "max"), (2, False, "ring"), (3, False, "lse-bug"),
           (4, False, "max-bug"), (6, False, "max-bug"),
           (2, False, "ce"), (3, False, "ce"), (4, False, "ce"), (6, False, "ce"), (4, False, "ce-bug")]


def attention(q, k, v):
    s = (q @ k.transpose(-1, -2)) / HD ** 0.5
    return {"o": torch.softmax(s, dim=-1) @ v}


def block(q, k, v):
    s = (q @ k.transpose(-1, -2)) / HD ** 0.5
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1, keepdim=True)


def attention_splitkv(q, k, v, style):
    n = len(q)
    parts = [block(q[r], k[r], v[r]) for r in range(n)]
    lses = [p[1] for p in parts]
    if style.startswith("lse"):
        allv = comm.all_gather(lses, dim=-1)
        lse = [torch.logsumexp(a, dim=-1, keepdim=True) for a in allv]
    else:
        m = comm.all_reduce(lses, op="max")
        s = comm.all_reduce([torch.exp(lses[r] - m[r]) for r in range(n)])
        lse = [m[r] + torch.log(s[r]) for r in range(n)]
    if style.endswith("-bug"):
        scaled = [parts[r][0] * torch.exp(lse[r] - lses[r]) for r in range(n)]
    else:
        scaled = [parts[r][0] * torch.exp(lses[r] - lse[r]) for r in range(n)]
    return {"o": comm.all_reduce(scaled)}


def attention_ring(q, k, v):
    """Two ranks; each starts with its own block and folds in the peer's."""
    n = len(q)
    ks, vs = comm.all_gather(k, dim=2), comm.all_gather(v, dim=2)
    out = []
    for r in range(n):
        blocks = [(ks[r][:, :, j * SKV // n:(j + 1) * SKV // n], vs[r][:, :, j * SKV // n:(j + 1) * SKV // n])
                  for j in [r] + [j for j in range(n) if j != r]]
        acc, m, l = None, None, None
        for kb, vb in blocks:
            s = (q[r] @ kb.transpose(-1, -2)) / HD ** 0.5
            mb = s.amax(dim=-1, keepdim=True)
            if m is None:
                p = torch.exp(s - mb)
                acc, m, l = p @ vb, mb, p.sum(dim=-1, keepdim=True)
            else:
                m_new = torch.maximum(m, mb)
                p = torch.exp(s - m_new)
                scale = torch.exp(m - m_new)
                acc = acc * scale + p @ vb
                l = l * scale + p.sum(dim=-1, keepdim=True)
                m = m_new
        out.append(acc / l)
    return {"o": out}


def cross_entropy(x, t):
    return {"loss": F.cross_entropy(x, t)}


def cross_entropy_vp(x, t, bug):
    n = len(x)
    size = x[0].shape[-1]
    local_max = [xr.detach().amax(dim=-1) for xr in x]
    gathered = comm.all_gather([m[None] for m in local_max], dim=0)
    gmax = [g.amax(dim=0) for g in gathered]
    shift = local_max if bug else gmax
    sum_exp = comm.all_reduce([torch.exp(x[r] - shift[r][:, None]).sum(dim=-1) for r in range(n)])
    shifted = [x[r] - gmax[r][:, None] for r in range(n)]
    picked = []
    for r in range(n):
        start, end = r * size, (r + 1) * size
        outside = (t[r] < start) | (t[r] >= end)
        local = (t[r] - start).masked_fill(outside, 0)
        p = torch.gather(shifted[r], -1, local.unsqueeze(-1)).squeeze(-1)
        picked.append(p.masked_fill(outside, 0.0))
    picked = comm.all_reduce(picked)
    return {"loss": [(torch.log(sum_exp[r]) - picked[r]).mean() for r in range(n)]}


def export(degree, variant):
    bug = variant.endswith("-bug")
    name = f"online-softmax-{variant}-{degree}"
    if variant.startswith("ce"):
        return Export(
            name=name, bundle_name=name, filename=name + ".json", degree=degree,
            description=f"Vocabulary-parallel cross entropy at TP {degree}, the maxima all-gathered"
                        + (" BUG ON PURPOSE: local shifts with the global max added." if bug else ""),
            spec=cross_entropy, impl=lambda x, t: cross_entropy_vp(x, t, bug), expect_mismatch=bug,
            inputs={"x": Param((N, V), Shard(1)),
                    "t": Input((N,), Replicate(), dtype=torch.int64, values=(0, V - 1))},
            outputs={"loss": Replicate()})
    impl = attention_ring if variant == "ring" else \
        (lambda q, k, v: attention_splitkv(q, k, v, variant))
    return Export(
        name=name, bundle_name=name, filename=name + ".json", degree=degree,
        description=f"Attention with keys and values split over {degree} ranks, merged by "
                    f"log-sum-exp ({variant})"
                    + (" BUG ON PURPOSE: inverted rescaling." if bug else ""),
        spec=attention, impl=impl, expect_mismatch=bug,
        inputs={"q": Input((B, H, SQ, HD), Replicate()),
                "k": Input((B, H, SKV, HD), Shard(2)),
                "v": Input((B, H, SKV, HD), Shard(2))},
        outputs={"o": Replicate()})
