"""The tensor-parallel MLP block of models/capture-tp-block with sequence
parallelism (Megatron-LM's sequence_parallel): outside the linears the
activations are split along the sequence; the column-parallel linear
all-gathers them (backward: reduce-scatter), the row-parallel linear
reduce-scatters its partial sums (backward: all-gather), and the
gradients of the parameters that act in the sequence-parallel region (the
layer norm and the row-parallel bias), each computed on a part of the
sequence, are all-reduced after the backward.  Gloo has no reduce_scatter, so it is written as an
all_reduce followed by keeping the rank's chunk.

    torchrun --nproc-per-node 2 sp_block.py
    shardcheck-capture --nproc 2 -o sp.json --check sp_block.py

Planted bugs (environment variable BUG):
    no-ln-grad-allreduce  the layer-norm gradients are not all-reduced (the
                          row-parallel bias's still are)
    seq-offset            rank r takes the input's sequence chunk of rank
                          (r+1)%n (its targets' chunk stays right)
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from shardcheck.capture import capture_step

BUG = os.environ.get("BUG", "")


def _all_gather_seq(x):
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, 0)


def _reduce_scatter_seq(x):
    x = x.clone()
    dist.all_reduce(x)
    return x.chunk(dist.get_world_size(), 0)[dist.get_rank()].contiguous()


class GatherFromSP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _all_gather_seq(x)

    @staticmethod
    def backward(ctx, g):
        return _reduce_scatter_seq(g)


class ReduceScatterToSP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _reduce_scatter_seq(x)

    @staticmethod
    def backward(ctx, g):
        return _all_gather_seq(g)


def shard(whole, dim, rank, n):
    return whole.chunk(n, dim)[rank].clone()


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, d_in, d_out, gen):
        super().__init__()
        r, n = dist.get_rank(), dist.get_world_size()
        self.weight = torch.nn.Parameter(
            shard(torch.randn(d_out, d_in, generator=gen) / d_in ** 0.5, 0, r, n))
        self.bias = torch.nn.Parameter(shard(torch.randn(d_out, generator=gen) * 0.1, 0, r, n))

    def forward(self, x):
        return F.linear(GatherFromSP.apply(x), self.weight, self.bias)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, d_in, d_out, gen):
        super().__init__()
        r, n = dist.get_rank(), dist.get_world_size()
        self.weight = torch.nn.Parameter(
            shard(torch.randn(d_out, d_in, generator=gen) / d_in ** 0.5, 1, r, n))
        self.bias = torch.nn.Parameter(torch.randn(d_out, generator=gen) * 0.1)

    def forward(self, x):
        return ReduceScatterToSP.apply(F.linear(x, self.weight)) + self.bias


class Block(torch.nn.Module):
    def __init__(self, d, seed=0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.ln = torch.nn.LayerNorm(d)
        self.fc1 = ColumnParallelLinear(d, 4 * d, gen)
        self.fc2 = RowParallelLinear(4 * d, d, gen)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


def train_step(block, x, target):
    """x, target: the whole sequence [S, d] on every rank; each rank works on
    its part of the sequence."""
    r, n = dist.get_rank(), dist.get_world_size()
    k = (r + 1) % n if BUG == "seq-offset" else r
    s = x.shape[0] // n
    y = block(x[k * s:(k + 1) * s])
    loss = ((y - target[r * s:(r + 1) * s]) ** 2).sum() / x.numel()
    loss.backward()
    sp_params = [block.fc2.bias] + ([] if BUG == "no-ln-grad-allreduce"
                                    else list(block.ln.parameters()))
    for p in sp_params:
        dist.all_reduce(p.grad)
    total = loss.detach().clone()
    dist.all_reduce(total)
    return total


def main():
    dist.init_process_group("gloo")
    block = Block(16)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 16, generator=gen)
    target = torch.randn(8, 16, generator=gen)
    loss = capture_step(train_step, block, x, target)
    if dist.get_rank() == 0:
        print(f"loss {loss.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
