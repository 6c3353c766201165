"""Sequence (context) parallelism over a batch-first [B, S, H] activation:
the tokens are split along S (dim 1) and every rank runs a position-wise
MLP on its tokens.  The linear layers flatten [B, S_r, H] to [B*S_r, H]
(F.linear on a 3-d input, or an explicit view / reshape / flatten): the
ranks' rows are not contiguous rows of the spec's [B*S, H] view (B > 1
interleaves them), so the flattened product is no cat; it is one again
after the view back to [B, S, F].

  style "linear":  F.linear on [B, S_r, H] (ATen flattens inside)
  style "flatten": x.flatten(0, 1) @ w, then .unflatten(0, (B, S_r))
  style "reshape": x.reshape(-1, H) @ w, then .reshape(B, -1, F)
  style "*-bug":   BUG ON PURPOSE: the last rank views its [B*S_r, F]
                   product back as [S_r, B, F] transposed to [B, S_r, F]
                   (the rows read in the wrong order) -- must fail.

Export: /usr/bin/python3 tools/shardcheck-export models/seq-view/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard

B, S, H, FF = 2, 12, 8, 16

BUNDLES = [(2, False, "linear"), (3, False, "linear"), (4, False, "flatten"),
           (6, False, "reshape"), (3, False, "reshape-bug")]


def mlp(x, w1, w2, style):
    n = x.shape[1]
    if style == "linear":
        return F.linear(F.gelu(F.linear(x, w1)), w2)
    if style == "flatten":
        h = F.gelu(x.flatten(0, 1) @ w1.t())
        return (h @ w2.t()).unflatten(0, (B, n))
    h = F.gelu(x.reshape(-1, H) @ w1.t())
    return (h @ w2.t()).reshape(B, -1, H)


def spec(x, w1, w2):
    return {"y": mlp(x, w1, w2, "linear")}


def impl(x, w1, w2, style):
    n = len(x)
    out = []
    for r in range(n):
        if style.endswith("-bug") and r == n - 1:
            sr = x[r].shape[1]
            h = F.gelu(x[r].reshape(-1, H) @ w1[r].t()) @ w2[r].t()
            out.append(h.reshape(sr, B, H).transpose(0, 1))
        else:
            out.append(mlp(x[r], w1[r], w2[r], style))
    return {"y": out}


def export(degree, variant):
    bug = variant.endswith("-bug")
    return Export(
        name=f"seq-view-sp{degree}-{variant}", bundle_name=f"seq-view-sp{degree}-{variant}",
        filename=f"seq-view-sp{degree}-{variant}.json",
        description=f"Position-wise MLP on a [B, S, H] activation split along S at degree {degree}, "
                    f"flattened to rows ({variant})"
                    + (" BUG ON PURPOSE: the last rank reads its rows back in the wrong order." if bug else ""),
        spec=spec, impl=lambda x, w1, w2: impl(x, w1, w2, variant), degree=degree,
        expect_mismatch=bug,
        inputs={"x": Input((B, S, H), Shard(1)),
                "w1": Param((FF, H), Replicate(), scale=0.3),
                "w2": Param((H, FF), Replicate(), scale=0.3)},
        outputs={"y": Shard(1)})
