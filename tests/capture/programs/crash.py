"""Rank 1 raises in the middle of the step (an ordinary crash)."""
import torch
import torch.distributed as dist

from shardcheck.capture import capture_step


def step(x):
    y = x * 2
    if dist.get_rank() == 1:
        raise RuntimeError("planted crash on rank 1")
    dist.all_reduce(y)
    return y


dist.init_process_group("gloo")
capture_step(step, torch.ones(4))
