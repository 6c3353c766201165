"""Causal self-attention scores with a mask built from creation operators.

The spec and every rank build the causal mask themselves, from no graph
input at all: `tril(ones(S, S))` compared with 0, or a comparison of two
`arange`s.  Such a spec tensor is a constant: it is clean as the term that
recomputes it from creation operators (bundle-format.md, "Expressions").
The batch is split across the ranks (data parallel).

Variants:
  tril           mask = tril(ones(S, S)) == 0
  arange         mask = ~(arange(S)[None, :] <= arange(S)[:, None])
  tril-diagonal  bug: the ranks use tril(ones, diagonal=1), letting each
                 position see the next one
Export: /usr/bin/python3 tools/shardcheck-export models/causal-mask/model.py
"""
import torch

from shardcheck_export import Export, Input, Replicate, Shard

BUNDLES = [(2, False, "tril"), (4, False, "tril"), (2, False, "arange"), (4, False, "arange"),
           (2, False, "tril-diagonal")]
BATCH, S, D = 4, 6, 8


def mask(variant, rank_side):
    if variant == "arange":
        return ~(torch.arange(S).unsqueeze(0) <= torch.arange(S).unsqueeze(1))
    diag = 1 if (variant == "tril-diagonal" and rank_side) else 0
    return torch.tril(torch.ones(S, S), diagonal=diag) == 0


def scores(x, wq, wk, m):
    s = (x @ wq) @ (x @ wk).transpose(-1, -2)
    return torch.softmax(s.masked_fill(m, float("-inf")), dim=-1)


def spec_of(variant):
    def spec(x, wq, wk):
        return {"p": scores(x, wq, wk, mask(variant, False))}
    return spec


def impl_of(variant):
    def impl(x, wq, wk):
        return {"p": [scores(x[r], wq[r], wk[r], mask(variant, True)) for r in range(len(x))]}
    return impl


def export(degree, variant):
    return Export(
        name=f"causal-mask-{variant}-dp{degree}",
        description=("BUG ON PURPOSE: the ranks' mask lets each position see the next one. "
                     if variant == "tril-diagonal" else "")
        + f"Causal attention scores, mask from creation operators ({variant}).",
        spec=spec_of(variant), impl=impl_of(variant), degree=degree,
        inputs={"x": Input((BATCH, S, D), Shard(0)),
                "wq": Input((D, D), Replicate()),
                "wk": Input((D, D), Replicate())},
        outputs={"p": Shard(0)},
        expect_mismatch=variant == "tril-diagonal",
    )
