"""A Megatron-style tensor-parallel transformer MLP block, written as a user
writes it: nn.Modules, torch.distributed collectives inside autograd
Functions, weights initialised whole from a seed and split by rank.

    torchrun --nproc-per-node 2 tp_block.py          # runs as it is
    shardcheck-capture --nproc 2 -o tp.json --check tp_block.py

Planted bugs (environment variable BUG):
    no-allreduce   the row-parallel linear forgets its forward all_reduce
    shard-offset   the column-parallel weight takes rank (r+1)%n's rows
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from shardcheck.capture import capture_step

BUG = os.environ.get("BUG", "")


class CopyToTP(torch.autograd.Function):
    """Megatron's f: identity forward, all_reduce of the gradient backward."""
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g)
        return g


class ReduceFromTP(torch.autograd.Function):
    """Megatron's g: all_reduce forward, identity backward."""
    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        if BUG != "no-allreduce":
            dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def shard(whole, dim, rank, n):
    return whole.chunk(n, dim)[rank].clone()


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, d_in, d_out, gen):
        super().__init__()
        r, n = dist.get_rank(), dist.get_world_size()
        w = torch.randn(d_out, d_in, generator=gen) / d_in ** 0.5
        b = torch.randn(d_out, generator=gen) * 0.1
        rw = (r + 1) % n if BUG == "shard-offset" else r
        self.weight = torch.nn.Parameter(shard(w, 0, rw, n))
        self.bias = torch.nn.Parameter(shard(b, 0, r, n))

    def forward(self, x):
        return F.linear(CopyToTP.apply(x), self.weight, self.bias)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, d_in, d_out, gen):
        super().__init__()
        r, n = dist.get_rank(), dist.get_world_size()
        w = torch.randn(d_out, d_in, generator=gen) / d_in ** 0.5
        self.weight = torch.nn.Parameter(shard(w, 1, r, n))
        self.bias = torch.nn.Parameter(torch.randn(d_out, generator=gen) * 0.1)

    def forward(self, x):
        return ReduceFromTP.apply(F.linear(x, self.weight)) + self.bias


class Block(torch.nn.Module):
    def __init__(self, d, seed=0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.ln = torch.nn.LayerNorm(d)
        self.fc1 = ColumnParallelLinear(d, 4 * d, gen)
        self.fc2 = RowParallelLinear(4 * d, d, gen)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


def train_step(block, x):
    y = block(x)
    loss = (y * y).mean()
    loss.backward()
    return loss


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    block = Block(16)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
    loss = capture_step(train_step, block, x)
    if dist.get_rank() == 0:
        print(f"loss {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
