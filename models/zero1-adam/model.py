"""ZeRO-1 training step with Adam: a two-layer MLP regression.

The sequential step computes the mean MSE loss of a two-layer tanh MLP over
the whole batch, its gradients, and one Adam update of both weights over
the flattened parameter vector (m = b1 m + (1 - b1) g, v = b2 v + (1 - b2)
g^2, w = w - lr m^ / (sqrt(v^) + eps), with the bias corrections of step
STEP).  The ZeRO-1 step (optimizer state sharding, as DeepSpeed's stage 1
and torch's ZeroRedundancyOptimizer with a flat buffer) gives each rank its
share of the batch and its partition of the flat optimizer state: every
rank flattens its gradients into one buffer, the ranks reduce-scatter it
(sum, then divide by the degree: the average), each rank updates its
partition of the flat parameters with its partition of m and v, and the
ranks all-gather the updated flat parameters, which every rank views back
as its weights.  The flat vector has 96 + 48 = 144 entries: at degree 2
the partition boundary (72) falls inside w1, at degree 4 the boundary 108
inside w2.

Variants:
  (none)        correct
  sum-not-avg   bug: the reduce-scattered gradient is not divided by the degree
  shard-offset  bug: each rank updates the flat parameters one partition
                further on (its m and v meet another rank's parameters)

Export: /usr/bin/python3 tools/shardcheck-export models/zero1-adam/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Replicate, Shard, comm

BUGS = ["sum-not-avg", "shard-offset"]
BUNDLES = [(2, False, None), (4, False, None), (2, False, "sum-not-avg"),
           (2, False, "shard-offset")]

BATCH, D_IN, HIDDEN, D_OUT = 16, 8, 12, 4
NUMEL = D_IN * HIDDEN + HIDDEN * D_OUT
LR, B1, B2, EPS, STEP = 1e-3, 0.9, 0.999, 1e-8, 3


def grads(x, target, w1, w2):
    w1 = w1.detach().requires_grad_(True)
    w2 = w2.detach().requires_grad_(True)
    loss = F.mse_loss(torch.tanh(x @ w1) @ w2, target)
    g1, g2 = torch.autograd.grad(loss, [w1, w2])
    return loss.detach(), g1, g2


def flat(a, b):
    return torch.cat([a.reshape(-1), b.reshape(-1)])


def unflat(p):
    n1 = D_IN * HIDDEN
    return p[:n1].view(D_IN, HIDDEN), p[n1:].view(HIDDEN, D_OUT)


def adam(p, m, v, g):
    """One Adam step of step number STEP on flat tensors (elementwise)."""
    m = B1 * m + (1 - B1) * g
    v = B2 * v + (1 - B2) * g * g
    mhat = m / (1 - B1 ** STEP)
    vhat = v / (1 - B2 ** STEP)
    return p - LR * mhat / (torch.sqrt(vhat) + EPS), m, v


def train_step(x, target, w1, w2, m, v):
    loss, g1, g2 = grads(x, target, w1, w2)
    p, m, v = adam(flat(w1, w2), m, v, flat(g1, g2))
    nw1, nw2 = unflat(p)
    return {"loss": loss, "new_w1": nw1, "new_w2": nw2, "new_m": m, "new_v": v}


def impl_of(variant):
    def train_step_zero1(x, target, w1, w2, m, v):
        n = len(x)
        part = NUMEL // n
        loss, g1, g2 = zip(*[grads(x[r], target[r], w1[r], w2[r]) for r in range(n)])
        gpart = comm.reduce_scatter([flat(g1[r], g2[r]) for r in range(n)], 0)
        if variant != "sum-not-avg":
            gpart = [g / n for g in gpart]
        ppart = []
        out = {"loss": comm.all_reduce(list(loss), op="avg"), "new_m": [], "new_v": []}
        for r in range(n):
            lo = ((r + 1) % n if variant == "shard-offset" else r) * part
            p, mr, vr = adam(flat(w1[r], w2[r])[lo:lo + part], m[r], v[r], gpart[r])
            ppart.append(p)
            out["new_m"].append(mr)
            out["new_v"].append(vr)
        full = comm.all_gather(ppart, 0)
        out["new_w1"], out["new_w2"] = map(list, zip(*[unflat(p) for p in full]))
        return out
    return train_step_zero1


def second_moment(shape, generator):
    """A running mean of squares is never negative."""
    return torch.rand(shape, generator=generator) * 0.01


def export(degree, variant=None):
    if NUMEL % degree:
        raise ValueError(f"{NUMEL} parameters do not split into {degree} partitions")
    return Export(
        name=f"zero1-adam-{variant}-dp{degree}" if variant else f"zero1-adam-dp{degree}",
        description=(f"BUG ON PURPOSE ({variant}). " if variant in BUGS else "")
        + "ZeRO-1 step: reduce-scattered flat gradient, Adam on each rank's partition, "
          "all-gathered flat parameters.",
        spec=train_step, impl=impl_of(variant), degree=degree,
        inputs={
            "x": Input((BATCH, D_IN), Shard(0)),
            "target": Input((BATCH, D_OUT), Shard(0)),
            "w1": Input((D_IN, HIDDEN), Replicate()),
            "w2": Input((HIDDEN, D_OUT), Replicate()),
            "m": Input((NUMEL,), Shard(0)),
            "v": Input((NUMEL,), Shard(0), init=second_moment),
        },
        outputs={"loss": Replicate(), "new_w1": Replicate(), "new_w2": Replicate(),
                 "new_m": Shard(0), "new_v": Shard(0)},
        expect_mismatch=variant in BUGS,
    )
