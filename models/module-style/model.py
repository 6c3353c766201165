"""Attention, normalization and loss layers written as a second author
writes them: nn.Module classes, F.linear weights [out, in], einsum for the
attention products, the kv heads grouped (no repeat_kv), and the
parallel versions as modules that take their rank's shard.  The same
layers in the first style are models/gqa-tp, models/online-softmax and
models/raw-style.

  variant "gqa":      grouped-query attention, 8 query heads, 2 kv heads,
                      q viewed [B, KV, NH/KV, S, hd] and one einsum per kv
                      group (no repetition of k, v).  At TP 4 the rank
                      holds half the query heads of one kv group and that
                      group's kv head: wk, wv Shard(0, replicas=n/KV).
  variant "mqa":      one kv head, replicated on every rank.
  variant "alibi":    ALiBi attention, the per-head slopes a buffer
                      split with the heads (BLOOM-style), the bias
                      slope_h * (j - i) built from the positions.
  variant "rmsnorm":  sequence-parallel RMSNorm on [B, S, H] split along S
                      (T5 / Llama form: x * rsqrt(mean(x^2) + eps) * w).
  variant "vpce":     vocabulary-parallel cross entropy, the per-rank
                      maxima all-gathered (torch.max(dim) values), the
                      log-sum-exp as gmax + log(sum exp(x - gmax)), the
                      label masks with torch.where (in-range test, zeros_like).
  variant "*-bug":    BUG ON PURPOSE (must fail):
                      gqa-bug:     the last rank projects its keys with its
                                   value weight;
                      alibi-bug:   the last rank's slopes are rotated by one head;
                      rmsnorm-bug: the last rank normalizes with the mean
                                   over the sequence instead of the hidden dim;
                      vpce-bug:    the last rank's vocabulary offset is off
                                   by one.

Export: /usr/bin/python3 tools/shardcheck-export models/module-style/model.py
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

B, S, HD, NH = 2, 4, 4, 8
D = NH * HD
N, V = 16, 24   # 16 labels: a bug of one rank's vocabulary range shows on any draw
EPS = 1e-6

BUNDLES = [(2, False, "gqa"), (4, False, "gqa"), (4, False, "gqa-bug"),
           (2, False, "mqa"), (4, False, "mqa"),
           (2, False, "alibi"), (4, False, "alibi"), (4, False, "alibi-bug"),
           (2, False, "rmsnorm"), (3, False, "rmsnorm"), (4, True, "rmsnorm"), (3, False, "rmsnorm-bug"),
           (2, False, "vpce"), (4, False, "vpce"), (4, False, "vpce-bug")]


class GroupedAttention(nn.Module):
    """Causal attention of `heads` query heads over `groups` kv heads; the
    query heads of one group share its key and value."""

    def __init__(self, wq, wk, wv, wo, heads, groups, slopes=None, causal=True):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = wq, wk, wv, wo
        self.heads, self.groups, self.slopes, self.causal = heads, groups, slopes, causal

    def forward(self, x):
        b, s, _ = x.shape
        rep = self.heads // self.groups
        q = F.linear(x, self.wq).view(b, s, self.groups, rep, HD).permute(0, 2, 3, 1, 4)
        k = F.linear(x, self.wk).view(b, s, self.groups, HD).permute(0, 2, 1, 3)
        v = F.linear(x, self.wv).view(b, s, self.groups, HD).permute(0, 2, 1, 3)
        scores = torch.einsum("bgrqd,bgkd->bgrqk", q, k) * (1.0 / math.sqrt(HD))
        if self.slopes is not None:
            pos = torch.arange(s)
            dist = (pos[None, :] - pos[:, None]).to(scores.dtype)
            scores = scores + (self.slopes.view(self.groups, rep, 1, 1) * dist)
        if self.causal:
            mask = torch.ones(s, s, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        out = torch.einsum("bgrqk,bgkd->bgrqd", probs, v).permute(0, 3, 1, 2, 4).reshape(b, s, self.heads * HD)
        return F.linear(out, self.wo)


class RMSNorm(nn.Module):
    def __init__(self, weight, dim=-1):
        super().__init__()
        self.weight, self.dim = weight, dim

    def forward(self, x):
        var = x.pow(2).mean(self.dim, keepdim=True)
        return x * torch.rsqrt(var + EPS) * self.weight


class CrossEntropy(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


class VocabParallelCrossEntropy(nn.Module):
    """Megatron's loss with the maxima all-gathered (no max all-reduce)."""

    def __init__(self, rank, size, offset=0):
        super().__init__()
        self.lo, self.hi = rank * size + offset, (rank + 1) * size + offset

    def local(self, logits):
        return torch.max(logits, dim=-1).values

    def forward(self, logits, target, gmax):
        shifted = logits - gmax.unsqueeze(-1)
        inside = (target >= self.lo) & (target < self.hi)
        idx = torch.where(inside, target - self.lo, torch.zeros_like(target))
        picked = shifted.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
        return torch.where(inside, picked, torch.zeros_like(picked))


def gqa_spec(x, wq, wk, wv, wo, groups, slopes=None):
    return {"y": GroupedAttention(wq, wk, wv, wo, NH, groups, slopes)(x)}


def gqa_tp(x, wq, wk, wv, wo, groups, slopes=None, bug=None):
    n = len(x)
    heads = NH // n
    parts = []
    for r in range(n):
        wk_r, wv_r = wk[r], wv[r]
        g = max(1, groups // n)
        if bug == "gqa" and r == n - 1:
            wk_r = wv[r]
        sl = None
        if slopes is not None:
            sl = slopes[r]
            if bug == "alibi" and r == n - 1:
                sl = torch.cat([slopes[r][1:], slopes[r][:1]])
        parts.append(GroupedAttention(wq[r], wk_r, wv_r, wo[r], heads, g, sl)(x[r]))
    return {"y": comm.reduce_from_tp(parts)}


def alibi_slopes(heads):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])


def rmsnorm_sp(x, w, bug):
    n = len(x)
    w = comm.copy_to_tp(w)
    return {"y": [RMSNorm(w[r], 1 if bug and r == n - 1 else -1)(x[r]) for r in range(n)]}


def vpce(x, t, bug):
    n = len(x)
    size = x[0].shape[-1]
    mods = [VocabParallelCrossEntropy(r, size, 1 if bug and r == n - 1 else 0) for r in range(n)]
    gathered = comm.all_gather([mods[r].local(x[r].detach())[:, None] for r in range(n)], dim=1)
    gmax = [torch.max(g, dim=1).values for g in gathered]
    sumexp = comm.all_reduce([torch.exp(x[r] - gmax[r][:, None]).sum(-1) for r in range(n)])
    picked = comm.all_reduce([mods[r](x[r], t[r], gmax[r]) for r in range(n)])
    return {"loss": [(torch.log(sumexp[r]) - picked[r]).mean() for r in range(n)]}


def export(degree, variant):
    kind = variant.split("-")[0]
    bug = variant.endswith("-bug")
    name = f"module-style-{variant}-{degree}"
    common = dict(name=name, bundle_name=name, filename=name + ".json", degree=degree,
                  expect_mismatch=bug)
    what = {"gqa": "the last rank projects its keys with its value weight",
            "alibi": "the last rank's slopes are shifted by one head",
            "rmsnorm": "the last rank normalizes along the sequence",
            "vpce": "the last rank's vocabulary offset is off by one"}
    desc = f" BUG ON PURPOSE: {what[kind]}." if bug else ""
    if kind in ("gqa", "mqa", "alibi"):
        groups = {"gqa": 2, "mqa": 1, "alibi": NH}[kind]
        kvp = Replicate() if groups == 1 else \
            (Shard(0, replicas=degree // groups) if degree > groups else Shard(0))
        inputs = {"x": Input((B, S, D), Replicate()),
                  "wq": Param((D, D), Shard(0), scale=0.3),
                  "wk": Param((groups * HD, D), kvp, scale=0.3),
                  "wv": Param((groups * HD, D), kvp, scale=0.3),
                  "wo": Param((D, D), Shard(1), scale=0.3)}
        if kind == "alibi":
            inputs["slopes"] = Input((NH,), Shard(0), init=lambda shape, gen: alibi_slopes(NH))
            spec = lambda x, wq, wk, wv, wo, slopes: gqa_spec(x, wq, wk, wv, wo, groups, slopes)
            impl = lambda x, wq, wk, wv, wo, slopes: gqa_tp(x, wq, wk, wv, wo, groups, slopes,
                                                            "alibi" if bug else None)
        else:
            spec = lambda x, wq, wk, wv, wo: gqa_spec(x, wq, wk, wv, wo, groups)
            impl = lambda x, wq, wk, wv, wo: gqa_tp(x, wq, wk, wv, wo, groups,
                                                    None, "gqa" if bug else None)
        return Export(description=f"{kind.upper()} attention ({NH} query heads, {groups} kv heads), "
                                  f"nn.Module / einsum style, at TP {degree}." + desc,
                      spec=spec, impl=impl, inputs=inputs, outputs={"y": Replicate()}, **common)
    if kind == "rmsnorm":
        return Export(description=f"Sequence-parallel RMSNorm over {degree} ranks, nn.Module style." + desc,
                      spec=lambda x, w: {"y": RMSNorm(w)(x)},
                      impl=lambda x, w: rmsnorm_sp(x, w, bug),
                      inputs={"x": Param((B, 12, D), Shard(1)), "w": Param((D,), Replicate())},
                      outputs={"y": Shard(1)}, **common)
    return Export(description=f"Vocabulary-parallel cross entropy at TP {degree}, maxima all-gathered, "
                              "nn.Module style." + desc,
                  spec=lambda x, t: {"loss": CrossEntropy()(x, t)},
                  impl=lambda x, t: vpce(x, t, bug),
                  inputs={"x": Param((N, V), Shard(1)),
                          "t": Input((N,), Replicate(), dtype=torch.int64, values=(0, V - 1))},
                  outputs={"loss": Replicate()}, **common)
