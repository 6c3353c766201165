"""The gradient-accumulation step of models/grad-accum (MSE linear
regression, data parallel, MICRO micro-batches per rank, gradients and loss
averaged over the ranks), and ONE planted bug: the micro-batches of inputs
and targets are paired in different orders.

The buggy loop walks the input micro-batches in order and the target
micro-batches in reverse (zip(x.chunk(m), reversed(target.chunk(m)))), as
a data loader that shuffles or reverses one stream but not the other does:
every sample is compared with another sample's target.  The shapes agree.

Variants: bug (reversed targets), fixed (the same order).

Export: /usr/bin/python3 tools/shardcheck-export models/bugs/microbatch-order/model.py
"""

import torch.nn.functional as F

from shardcheck_export import Export, Input, Replicate, Shard, comm

BUNDLES = [(2, False, "bug"), (2, False, "fixed")]

BATCH, D_IN, D_OUT, MICRO = 16, 8, 4, 2


def train_step(x, target, w, b):
    w = w.detach().requires_grad_(True)
    b = b.detach().requires_grad_(True)
    loss = F.mse_loss(F.linear(x, w, b), target)
    loss.backward()
    return {"loss": loss.detach(), "grad_w": w.grad, "grad_b": b.grad}


def _train_step_accum(bug, x, target, w, b):
    n = len(x)
    losses, gws, gbs = [], [], []
    for r in range(n):
        wr = w[r].detach().requires_grad_(True)
        br = b[r].detach().requires_grad_(True)
        targets = target[r].chunk(MICRO)
        if bug:   # BUG: the targets in the other order
            targets = tuple(reversed(targets))
        total = None
        for xm, tm in zip(x[r].chunk(MICRO), targets):
            loss = F.mse_loss(F.linear(xm, wr, br), tm) / MICRO
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        losses.append(total)
        gws.append(wr.grad)
        gbs.append(br.grad)
    return {"loss": comm.all_reduce(losses, op="avg"),
            "grad_w": comm.all_reduce(gws, op="avg"),
            "grad_b": comm.all_reduce(gbs, op="avg")}


def train_step_bug(**kw):
    return _train_step_accum(True, **kw)


def train_step_fixed(**kw):
    return _train_step_accum(False, **kw)


def export(degree, variant="bug"):
    if variant not in ("bug", "fixed"):
        raise ValueError(f"unknown variant {variant!r}")
    bug = variant == "bug"
    return Export(
        name=f"microbatch-order-dp{degree}" + ("" if bug else "-fixed"),
        description=f"MSE regression step, data parallel, {MICRO} accumulated micro-batches. " + (
            "BUG ON PURPOSE: input and target micro-batches paired in opposite orders."
            if bug else "The fixed twin: micro-batches paired in order."),
        spec=train_step, impl=train_step_bug if bug else train_step_fixed, degree=degree,
        expect_mismatch=bug,
        inputs={
            "x": Input((BATCH, D_IN), Shard(0)),
            "target": Input((BATCH, D_OUT), Shard(0)),
            "w": Input((D_OUT, D_IN), Replicate()),
            "b": Input((D_OUT,), Replicate()),
        },
        outputs={"loss": Replicate(), "grad_w": Replicate(), "grad_b": Replicate()},
    )
