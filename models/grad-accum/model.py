"""One training step of a linear regression with mean-squared error, and its
data-parallel version with gradient accumulation.

Each rank holds B/n samples and processes them in MICRO micro-batches,
calling loss.backward() on each, scaled by 1/MICRO, so that param.grad
accumulates (autograd's in-place accumulation, functionalized by the
exporter).  The ranks then average their gradients (all-reduce avg, as
DistributedDataParallel does) and their losses.  The step's outputs are
the loss and the gradients; the step contains the backward pass, so there
is no separate forward+backward capture.

Export: /usr/bin/python3 tools/shardcheck-export models/grad-accum/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Replicate, Shard, comm

BUNDLES = [(2, False), (4, False)]

BATCH, D_IN, D_OUT, MICRO = 16, 8, 4, 2


def train_step(x, target, w, b):
    """The sequential step: one batch, one backward."""
    w = w.detach().requires_grad_(True)
    b = b.detach().requires_grad_(True)
    loss = F.mse_loss(F.linear(x, w, b), target)
    loss.backward()
    return {"loss": loss.detach(), "grad_w": w.grad, "grad_b": b.grad}


def train_step_accum(x, target, w, b):
    n = len(x)
    losses, gws, gbs = [], [], []
    for r in range(n):
        wr = w[r].detach().requires_grad_(True)
        br = b[r].detach().requires_grad_(True)
        total = None
        for xm, tm in zip(x[r].chunk(MICRO), target[r].chunk(MICRO)):
            loss = F.mse_loss(F.linear(xm, wr, br), tm) / MICRO
            loss.backward()                       # accumulates into wr.grad, br.grad
            total = loss.detach() if total is None else total + loss.detach()
        losses.append(total)
        gws.append(wr.grad)
        gbs.append(br.grad)
    return {"loss": comm.all_reduce(losses, op="avg"),
            "grad_w": comm.all_reduce(gws, op="avg"),
            "grad_b": comm.all_reduce(gbs, op="avg")}


def export(degree):
    if BATCH % (degree * MICRO):
        raise ValueError(f"batch {BATCH} does not split into {degree} ranks x {MICRO} micro-batches")
    return Export(
        name=f"grad-accum-dp{degree}",
        description=f"MSE linear regression training step; data parallel with "
                    f"{MICRO} accumulated micro-batches per rank and averaged gradients.",
        spec=train_step, impl=train_step_accum, degree=degree,
        inputs={
            "x": Input((BATCH, D_IN), Shard(0)),
            "target": Input((BATCH, D_OUT), Shard(0)),
            "w": Input((D_OUT, D_IN), Replicate()),
            "b": Input((D_OUT,), Replicate()),
        },
        outputs={"loss": Replicate(), "grad_w": Replicate(), "grad_b": Replicate()},
    )
