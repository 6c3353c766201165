"""Data parallelism as DDP does it, by hand: every rank holds the whole model
(initialised from one seed), takes its part of the batch, averages the
gradients with all_reduce and takes an SGD step.  The step returns the
loss averaged over the ranks (what a training loop logs).

    torchrun --nproc-per-node 2 ddp.py
    shardcheck-capture --nproc 2 -o ddp.json --check ddp.py

Planted bug (environment variable BUG):
    no-average     the gradients are all-reduced but not divided by the
                   number of ranks (summed, not averaged)
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from shardcheck.capture import capture_step

BUG = os.environ.get("BUG", "")


class MLP(torch.nn.Module):
    def __init__(self, d, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.fc1 = torch.nn.Linear(d, 2 * d)
        self.fc2 = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def train_step(model, opt, x, target):
    """x, target: the whole batch; each rank trains on its part of it."""
    r, n = dist.get_rank(), dist.get_world_size()
    b = x.shape[0] // n
    opt.zero_grad()
    y = model(x[r * b:(r + 1) * b])
    loss = F.mse_loss(y, target[r * b:(r + 1) * b])
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        if BUG != "no-average":
            p.grad /= n
    opt.step()
    logged = loss.detach().clone()
    dist.all_reduce(logged)
    return logged / n


def main():
    dist.init_process_group("gloo")
    model = MLP(8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 8, generator=gen)
    target = torch.randn(8, 8, generator=gen)
    loss = capture_step(train_step, model, opt, x, target)
    if dist.get_rank() == 0:
        print(f"loss {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
