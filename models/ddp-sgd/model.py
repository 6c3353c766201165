"""DDP training step with SGD and momentum: a two-layer MLP regression.

The sequential step computes the mean MSE loss over the whole batch, its
gradients, and the SGD-momentum update (buf = mu * buf + grad; w = w - lr *
buf).  The data-parallel step gives each rank its share of the batch; each
rank's gradient is that of its local mean loss, the ranks average them
(all_reduce avg, as DDP does) and every rank applies the same update.  The
spec's gradient inside the backward is the ranks' sum divided by the
degree (a scaled intermediate) until the averaging all_reduce.

Variants:
  (none)        correct
  sum-not-avg   bug: the gradients are summed (all_reduce sum), not averaged
  no-sync       bug: no gradient all_reduce at all (each rank steps alone)

Export: /usr/bin/python3 tools/shardcheck-export models/ddp-sgd/model.py
"""

import torch
import torch.nn.functional as F

from shardcheck_export import Export, Input, Replicate, Shard, comm

BUGS = ["sum-not-avg", "no-sync"]
BUNDLES = [(2, False, None), (4, False, None), (2, False, "sum-not-avg"), (2, False, "no-sync")]

BATCH, D_IN, HIDDEN, D_OUT = 16, 8, 12, 4
LR, MU = 0.1, 0.9


def grads(x, target, w1, w2):
    w1 = w1.detach().requires_grad_(True)
    w2 = w2.detach().requires_grad_(True)
    loss = F.mse_loss(torch.tanh(x @ w1) @ w2, target)
    g1, g2 = torch.autograd.grad(loss, [w1, w2])
    return loss.detach(), g1, g2


def step(w, buf, g):
    nbuf = MU * buf + g
    return w - LR * nbuf, nbuf


def train_step(x, target, w1, w2, buf1, buf2):
    loss, g1, g2 = grads(x, target, w1, w2)
    nw1, nb1 = step(w1, buf1, g1)
    nw2, nb2 = step(w2, buf2, g2)
    return {"loss": loss, "new_w1": nw1, "new_w2": nw2, "new_buf1": nb1, "new_buf2": nb2}


def impl_of(variant):
    def train_step_ddp(x, target, w1, w2, buf1, buf2):
        n = len(x)
        loss, g1, g2 = zip(*[grads(x[r], target[r], w1[r], w2[r]) for r in range(n)])
        loss, g1, g2 = list(loss), list(g1), list(g2)

        def sync(gs):
            if variant == "no-sync":
                return gs
            if variant == "sum-not-avg":
                return comm.all_reduce(gs)
            return comm.all_reduce(gs, op="avg")

        loss, g1, g2 = comm.all_reduce(loss, op="avg"), sync(g1), sync(g2)
        out = {"loss": loss, "new_w1": [], "new_w2": [], "new_buf1": [], "new_buf2": []}
        for r in range(n):
            a, b = step(w1[r], buf1[r], g1[r])
            c, d = step(w2[r], buf2[r], g2[r])
            out["new_w1"].append(a)
            out["new_buf1"].append(b)
            out["new_w2"].append(c)
            out["new_buf2"].append(d)
        return out
    return train_step_ddp


def export(degree, variant=None):
    return Export(
        name=f"ddp-sgd-{variant}-dp{degree}" if variant else f"ddp-sgd-dp{degree}",
        description=(f"BUG ON PURPOSE ({variant}): the gradients are not averaged over the ranks. "
                     if variant in BUGS else "")
        + "DDP step with averaged gradients and SGD with momentum.",
        spec=train_step, impl=impl_of(variant), degree=degree,
        inputs={
            "x": Input((BATCH, D_IN), Shard(0)),
            "target": Input((BATCH, D_OUT), Shard(0)),
            "w1": Input((D_IN, HIDDEN), Replicate()),
            "w2": Input((HIDDEN, D_OUT), Replicate()),
            "buf1": Input((D_IN, HIDDEN), Replicate()),
            "buf2": Input((HIDDEN, D_OUT), Replicate()),
        },
        outputs={k: Replicate() for k in ("loss", "new_w1", "new_w2", "new_buf1", "new_buf2")},
        expect_mismatch=variant in BUGS,
    )
