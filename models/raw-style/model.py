"""Sequence-parallel RMSNorm and ALiBi attention written with raw tensor
ops, as Megatron-LM and the first style of models/gqa-tp write them; the
same layers as nn.Modules with einsum are models/module-style.

  variant "rmsnorm":  Megatron's sequence-major [S, B, H] activation split
                      along S (dim 0); RMSNorm as rsqrt of the sum of
                      squares over H, fp32 upcast and back (x.float() ... .type_as),
                      the weight's gradient all-reduced (copy_to_tp).
  variant "alibi":    ALiBi attention, heads split over the ranks; each
                      rank builds its heads' slopes in the graph from an
                      arange (2^(-8 (h+1) / NH) for h = r*nh .. r*nh+nh-1)
                      and the [S, S] distance from aranges, bias added to
                      q @ k^T before the causal mask (-inf above the
                      diagonal), matmul / transpose / view as in gqa-tp.
  variant "*-bug":    BUG ON PURPOSE (must fail):
                      rmsnorm-bug: the last rank divides the sum of squares by
                                   H - 1 (the mean written by hand, off by one);
                      alibi-bug:   the last rank's slopes start one head
                                   late (arange offset r*nh + 1).

Export: /usr/bin/python3 tools/shardcheck-export models/raw-style/model.py
"""

import torch

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

S, B, H = 12, 2, 16
EPS = 1e-5
NH, HD, T = 8, 4, 6
D = NH * HD

BUNDLES = [(2, False, "rmsnorm"), (3, False, "rmsnorm"), (4, False, "rmsnorm"), (2, True, "rmsnorm"),
           (3, False, "rmsnorm-bug"),
           (2, False, "alibi"), (4, False, "alibi"), (4, False, "alibi-bug")]


def rms_norm(x, w, bug=False):
    h = x.float()
    ms = h.pow(2).sum(-1, keepdim=True) / H if not bug else h.pow(2).sum(-1, keepdim=True) / (H - 1)
    r = torch.rsqrt(ms + EPS)
    return (h * r).type_as(x) * w


def slopes(start, count, bug=False):
    h = torch.arange(start + (1 if bug else 0), start + count + (1 if bug else 0), dtype=torch.float32)
    return torch.pow(2.0, -8.0 * (h + 1) / NH)


def alibi_attention(x, wq, wk, wv, wo, heads, first_head, bug=False):
    q = (x @ wq).view(B, T, heads, HD).transpose(1, 2)
    k = (x @ wk).view(B, T, heads, HD).transpose(1, 2)
    v = (x @ wv).view(B, T, heads, HD).transpose(1, 2)
    s = q @ k.transpose(-1, -2) / HD ** 0.5
    pos = torch.arange(T)
    dist = (pos.view(1, T) - pos.view(T, 1)).float()
    s = s + slopes(first_head, heads, bug).view(1, heads, 1, 1) * dist
    causal = pos.view(1, T) > pos.view(T, 1)
    s = s.masked_fill(causal, float("-inf"))
    o = torch.softmax(s, dim=-1) @ v
    return o.transpose(1, 2).reshape(B, T, heads * HD) @ wo


def export(degree, variant):
    kind = variant.split("-")[0]
    bug = variant.endswith("-bug")
    name = f"raw-style-{variant}-{degree}"
    what = {"rmsnorm": "the last rank divides the sum of squares by H - 1",
            "alibi": "the last rank's slopes start one head late"}
    desc = f" BUG ON PURPOSE: {what[kind]}." if bug else ""
    if kind == "rmsnorm":
        def impl(x, w):
            n = len(x)
            w = comm.copy_to_tp(w)
            return {"y": [rms_norm(x[r], w[r], bug and r == n - 1) for r in range(n)]}
        return Export(name=name, degree=degree, expect_mismatch=bug,
                      description=f"Sequence-parallel RMSNorm on [S, B, H] split along S over {degree} ranks, "
                                  "raw ops." + desc,
                      spec=lambda x, w: {"y": rms_norm(x, w)}, impl=impl,
                      inputs={"x": Param((S, B, H), Shard(0)), "w": Param((H,), Replicate())},
                      outputs={"y": Shard(0)})

    def impl(x, wq, wk, wv, wo):
        n = len(x)
        nh = NH // n
        parts = [alibi_attention(x[r], wq[r], wk[r], wv[r], wo[r], nh, r * nh, bug and r == n - 1)
                 for r in range(n)]
        return {"y": comm.reduce_from_tp(parts)}
    return Export(name=name, degree=degree, expect_mismatch=bug,
                  description=f"ALiBi attention ({NH} heads, slopes built per rank from an arange) "
                              f"at TP {degree}, raw ops." + desc,
                  spec=lambda x, wq, wk, wv, wo: {"y": alibi_attention(x, wq, wk, wv, wo, NH, 0)},
                  impl=impl,
                  inputs={"x": Input((B, T, D), Replicate()),
                          "wq": Param((D, D), Shard(1), scale=0.3),
                          "wk": Param((D, D), Shard(1), scale=0.3),
                          "wv": Param((D, D), Shard(1), scale=0.3),
                          "wo": Param((D, D), Shard(0), scale=0.3)},
                  outputs={"y": Replicate()})
