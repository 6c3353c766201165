"""A two-stage pipeline with micro-batches (GPipe schedule: every forward,
then every backward), written with torch.distributed.send/recv.  Rank 0
holds stage 0, rank 1 stage 1; the model is one nn.ModuleDict in which
each rank builds only its own stage (weights initialised whole from one
seed), so parameter names agree across ranks.  Run as one process, the
same program runs both stages itself.

    torchrun --nproc-per-node 2 pipeline.py
    shardcheck-capture --nproc 2 -o pipe.json --check pipeline.py

The number of micro-batches is the environment variable MICRO (default 2;
the batch of 8 rows splits into 2 or 4).

Planted bugs (environment variable BUG):
    stale-activation  stage 0 sends micro-batch 0's activation for every
                      micro-batch
    microbatch-order  stage 1 meets the activations with the targets in
                      reverse micro-batch order
    no-scale          stage 1 does not divide its micro-batch losses by the
                      number of micro-batches (gradients MICRO times too
                      large)
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from shardcheck.capture import capture_step

BUG = os.environ.get("BUG", "")
MICRO = int(os.environ.get("MICRO", "2"))


def build(d, seed=0):
    gen = torch.Generator().manual_seed(seed)
    whole = {"stage0": torch.nn.Linear(d, 2 * d), "stage1": torch.nn.Linear(2 * d, d)}
    for lin in whole.values():
        with torch.no_grad():
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) / lin.in_features ** 0.5)
            lin.bias.copy_(torch.randn(lin.bias.shape, generator=gen) * 0.1)
    n, r = dist.get_world_size(), dist.get_rank()
    mine = list(whole) if n == 1 else [f"stage{r}"]
    return torch.nn.ModuleDict({k: whole[k] for k in mine})


def train_step(model, x, target):
    n, r = dist.get_world_size(), dist.get_rank()
    xs, ts = x.chunk(MICRO), target.chunk(MICRO)
    if n == 1:                 # no pipelining: both stages, micro-batch by micro-batch
        total = None
        for xm, tm in zip(xs, ts):
            loss = F.mse_loss(model["stage1"](F.gelu(model["stage0"](xm))), tm) / MICRO
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        return total
    d_mid = 2 * x.shape[1]
    if r == 0:
        acts = []
        for m, xm in enumerate(xs):              # forward of every micro-batch
            a = F.gelu(model["stage0"](xm))
            acts.append(a)
            dist.send((acts[0] if BUG == "stale-activation" else a).detach(), dst=1)
        for a in acts:                           # backward of every micro-batch
            g = torch.empty_like(a)
            dist.recv(g, src=1)
            a.backward(g)
        return None
    total = None
    inputs = []
    for tm in (ts[::-1] if BUG == "microbatch-order" else ts):
        a = torch.empty(tm.shape[0], d_mid)
        dist.recv(a, src=0)
        a.requires_grad_(True)
        inputs.append(a)
        loss = F.mse_loss(model["stage1"](a), tm) / (1 if BUG == "no-scale" else MICRO)
        loss.backward()
        total = loss.detach() if total is None else total + loss.detach()
    for a in inputs:
        dist.send(a.grad, dst=0)
    return total


def main():
    dist.init_process_group("gloo")
    model = build(8)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 8, generator=gen)
    target = torch.randn(8, 8, generator=gen)
    loss = capture_step(train_step, model, x, target)
    if loss is not None:
        print(f"loss {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
