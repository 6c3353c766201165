"""Grouped-query and multi-query attention under tensor parallelism, the
query heads split over the ranks, written in two authors' ways.  When the
TP degree exceeds the number of key/value heads, every kv head is
replicated on n/KV ranks (vLLM's QKVParallelLinear: rank r holds kv head
r // (n/KV)).

  style "shard":     wk, wv placed Shard(1, replicas=n/KV) (the loader
                     hands each rank its kv head); repeat_kv as Llama
                     writes it (x[:, :, None].expand(...).reshape(...)).
                     At TP > KV the relation says wk = cat(wk_0, wk_2) =
                     cat(wk_1, wk_3): the ranks of one kv head are known
                     equal through cat injectivity (layout-repeat.lemma).
  style "slice":     wk, wv replicated; each rank slices the columns of its
                     kv head g = r * KV // n; repeat_kv as
                     k.unsqueeze(2).expand(-1, -1, r, -1, -1).flatten(1, 2).
  style "slice-llama": as "slice", with Llama's repeat_kv.
  style "index":     as "slice", repeat_kv by index_select of arange(nh) //
                     n_rep (repeat_interleave does not trace with fake
                     tensors in torch 1.13).  Does not prove yet: the
                     driver does not relate the index, a constant the
                     ranks build (arange), so the index_select never joins
                     (not in BUNDLES: --variant gqa-index writes it).
  style "slice-bug": BUG ON PURPOSE: GQA takes kv head g + 1 (mod KV), the
                     head of another group of query heads; MQA's rank 1
                     takes the value weight for its keys -- must fail.

MQA is KV = 1 (every rank holds the one kv head).

Export: /usr/bin/python3 tools/shardcheck-export models/gqa-tp/model.py
"""

import torch

from shardcheck_export import Export, Param, Input, Replicate, Shard, comm

B, S, HD = 2, 4, 4
NH = 8
D = NH * HD

BUNDLES = [(2, False, "gqa-shard"), (4, False, "gqa-shard"), (2, False, "gqa-slice"), (4, False, "gqa-slice"),
           (2, False, "gqa-slice-llama"), (4, False, "gqa-slice-llama"), (4, False, "gqa-slice-bug"),
           (2, False, "mqa-shard"), (4, False, "mqa-shard"), (4, False, "mqa-slice"),
           (4, False, "mqa-slice-llama"), (4, False, "mqa-slice-bug")]


def repeat_kv(x, n_rep):
    b, kv, s, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kv, n_rep, s, hd).reshape(b, kv * n_rep, s, hd)


def attention(x, wq, wk, wv, wo, kv):
    """The sequential model: causal GQA with `kv` key/value heads."""
    q = (x @ wq).view(B, S, NH, HD).transpose(1, 2)
    k = (x @ wk).view(B, S, kv, HD).transpose(1, 2)
    v = (x @ wv).view(B, S, kv, HD).transpose(1, 2)
    k, v = repeat_kv(k, NH // kv), repeat_kv(v, NH // kv)
    s = (q @ k.transpose(-1, -2)) / HD ** 0.5
    p = torch.softmax(s, dim=-1)
    o = (p @ v).transpose(1, 2).reshape(B, S, D)
    return {"y": o @ wo}


def attention_tp(x, wq, wk, wv, wo, kv, style):
    n = len(x)
    nh = NH // n
    parts = []
    for r in range(n):
        q = (x[r] @ wq[r]).view(B, S, nh, HD).transpose(1, 2)
        if style == "shard":
            wk_r, wv_r = wk[r], wv[r]
        else:
            kvl = max(1, kv // n)
            g = (r * kv // n + 1) % kv if style == "slice-bug" else r * kv // n
            wk_r = wk[r][:, g * HD:(g + kvl) * HD]
            wv_r = wv[r][:, g * HD:(g + kvl) * HD]
            if style == "slice-bug" and kv == 1 and r == 1:
                wk_r = wv_r
        kvl = wk_r.shape[1] // HD
        k = (x[r] @ wk_r).view(B, S, kvl, HD).transpose(1, 2)
        v = (x[r] @ wv_r).view(B, S, kvl, HD).transpose(1, 2)
        if style == "shard":
            k, v = repeat_kv(k, nh // kvl), repeat_kv(v, nh // kvl)
        elif style == "slice-llama":
            k, v = repeat_kv(k, nh // kvl), repeat_kv(v, nh // kvl)
        elif style == "index":
            heads = torch.arange(nh) // (nh // kvl)     # kv head of each query head
            k, v = k.index_select(1, heads), v.index_select(1, heads)
        else:
            k = k.unsqueeze(2).expand(-1, -1, nh // kvl, -1, -1).flatten(1, 2)
            v = v.unsqueeze(2).expand(-1, -1, nh // kvl, -1, -1).flatten(1, 2)
        s = (q @ k.transpose(-1, -2)) / HD ** 0.5
        p = torch.softmax(s, dim=-1)
        o = (p @ v).transpose(1, 2).reshape(B, S, nh * HD)
        parts.append(o @ wo[r])
    return {"y": comm.reduce_from_tp(parts)}


def export(degree, variant):
    kind, style = variant.split("-", 1)
    kv = 2 if kind == "gqa" else 1
    if style == "shard":
        kvp = Shard(1, replicas=degree // kv) if degree > kv else Shard(1)
        if kv == 1:
            kvp = Replicate()
    else:
        kvp = Replicate()
    bug = style.endswith("-bug")
    return Export(
        name=f"{kind}-tp{degree}-{style}",
        bundle_name=f"{kind}-tp{degree}-{style}",
        filename=f"{kind}-tp{degree}-{style}.json",
        description=f"{kind.upper()} attention ({NH} query heads, {kv} kv heads) at TP {degree}, "
                    f"kv heads {'loaded per rank' if style == 'shard' else 'sliced per rank'}"
                    + (" BUG ON PURPOSE: a rank uses the wrong kv head." if bug else ""),
        spec=lambda x, wq, wk, wv, wo: attention(x, wq, wk, wv, wo, kv),
        impl=lambda x, wq, wk, wv, wo: attention_tp(x, wq, wk, wv, wo, kv, style),
        degree=degree, expect_mismatch=bug,
        inputs={"x": Input((B, S, D), Replicate()),
                "wq": Param((D, D), Shard(1), scale=0.3),
                "wk": Param((D, kv * HD), kvp, scale=0.3),
                "wv": Param((D, kv * HD), kvp, scale=0.3),
                "wo": Param((D, D), Shard(0), scale=0.3)},
        outputs={"y": Replicate()})
