"""GPT-J-style parallel block: attention and MLP read the same input and
their results are added to the residual, y = x + attn(x) + mlp(x).

Both branches are Megatron column- then row-parallel, so each rank holds a
partial sum of attn and of mlp.  The ranks may add them up in any order and
association, and the residual may join on one rank before the reduction:

  reduce-then-residual   y = x + all_reduce(attn_r + mlp_r)
  residual-on-rank0      y = all_reduce(x + attn_0 + mlp_0, attn_1 + mlp_1, ...)
  two-reduces            y = all_reduce(mlp_r) + (x + all_reduce(attn_r))
  spec-mlp-first         the spec adds mlp + (attn + x); impl as reduce-then-residual

Planted bugs (expect_mismatch):
  residual-every-rank    every rank adds x before the reduction (x counted n times)
  no-reduce              the partial sums are never reduced

Export: /usr/bin/python3 tools/shardcheck-export models/parallel-block/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Param, Replicate, Shard, comm

CORRECT = ["reduce-then-residual", "residual-on-rank0", "two-reduces", "spec-mlp-first"]
BUGS = ["residual-every-rank", "no-reduce"]
BUNDLES = ([(d, False, v) for d in (2, 4) for v in CORRECT] +
           [(2, True, "reduce-then-residual"), (2, True, "residual-on-rank0")] +
           [(2, False, v) for v in BUGS])

BATCH, SEQ, HIDDEN, FFN = 2, 4, 8, 16


def attn(x, wv, wo):
    """A single-head attention whose values and output are projected."""
    s = torch.softmax(x @ x.transpose(-1, -2), dim=-1)
    return (s @ (x @ wv)) @ wo


def mlp(x, w1, w2):
    return F.gelu(x @ w1) @ w2


def spec_of(variant):
    def spec(x, wv, wo, w1, w2):
        a, m = attn(x, wv, wo), mlp(x, w1, w2)
        if variant == "spec-mlp-first":
            return {"y": m + (a + x)}
        return {"y": x + a + m}
    return spec


def impl_of(variant):
    def impl(x, wv, wo, w1, w2):
        n = len(x)
        xs = comm.copy_to_tp(x)
        a = [attn(xs[r], wv[r], wo[r]) for r in range(n)]
        m = [mlp(xs[r], w1[r], w2[r]) for r in range(n)]
        if variant in ("reduce-then-residual", "spec-mlp-first"):
            s = comm.reduce_from_tp([a[r] + m[r] for r in range(n)])
            return {"y": [x[r] + s[r] for r in range(n)]}
        if variant == "residual-on-rank0":
            parts = [(x[r] + a[r] + m[r]) if r == 0 else (a[r] + m[r]) for r in range(n)]
            return {"y": comm.reduce_from_tp(parts)}
        if variant == "two-reduces":
            ra, rm = comm.reduce_from_tp(a), comm.reduce_from_tp(m)
            return {"y": [rm[r] + (x[r] + ra[r]) for r in range(n)]}
        if variant == "residual-every-rank":
            return {"y": comm.reduce_from_tp([x[r] + a[r] + m[r] for r in range(n)])}
        if variant == "no-reduce":
            return {"y": [x[r] + (a[r] + m[r]) for r in range(n)]}
        raise ValueError(variant)
    return impl


def export(degree, variant):
    return Export(
        name=f"parallel-block-{variant}-tp{degree}",
        description=(f"BUG ON PURPOSE ({variant}): " if variant in BUGS else "")
        + f"GPT-J parallel attention+MLP block, {variant}.",
        spec=spec_of(variant), impl=impl_of(variant), degree=degree,
        inputs={
            "x": Input((BATCH, SEQ, HIDDEN), Replicate()),
            "wv": Param((HIDDEN, FFN), Shard(1)),
            "wo": Param((FFN, HIDDEN), Shard(0)),
            "w1": Param((HIDDEN, FFN), Shard(1)),
            "w2": Param((FFN, HIDDEN), Shard(0)),
        },
        outputs={"y": Replicate()},
        expect_mismatch=variant in BUGS,
    )
